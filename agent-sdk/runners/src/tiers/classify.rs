//! Which tier each test file is in, and why. The first rule that matches wins:
//!
//! 1. an override: task metadata, then `huddle.toml` `[tiers]` (paths or globs);
//! 2. Playwright (`@playwright/test`, `playwright` in Python) → e2e;
//! 3. go: a build tag (`//go:build integration`, `e2e`, or the legacy `// +build`);
//! 4. a directory: `e2e/`, `end_to_end/` → e2e; `integration/`, `it/` → integration;
//!    `pbt/`, `property/`, `properties/` → pbt; `unit/` → unit;
//! 5. a marker or name: pytest `mark.integration`/`mark.e2e`, `*.int.test.*`,
//!    `*.integration.test.*`, `*.e2e.test.*`;
//! 6. a PBT library: hypothesis, fast-check, proptest, quickcheck, go's `testing/quick` or
//!    rapid → pbt;
//! 7. cargo's `tests/` targets → integration (cargo's own name for them);
//! 8. otherwise unit (cargo's doc tests too: the unit tier runs them with `cargo test --doc`).

use super::tier_patterns::TierPatterns;
use super::Tier;
use crate::conventions::test_files;
use crate::error::RunnerError;
use crate::framework::Framework;
use serde::Serialize;
use std::path::Path;

/// One test file and its tier.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Classified {
    /// The file, relative to the project.
    pub file: String,
    /// Its tier.
    pub tier: Tier,
    /// Why, in words (`--explain`).
    pub reason: String,
    /// The framework that runs it (Playwright for `@playwright/test` files).
    pub runner: Framework,
}

/// Overrides from outside the project's conventions.
#[derive(Debug, Clone, Default)]
pub struct TierOverrides<'a> {
    /// From the task's metadata (wins over the project file).
    pub task: Option<&'a TierPatterns>,
    /// From `huddle.toml` `[tiers]`.
    pub project: Option<&'a TierPatterns>,
}

/// Classifies every test file of `project` for `framework`, sorted by file.
pub fn classify_project(
    project: &Path,
    framework: Framework,
    overrides: &TierOverrides<'_>,
) -> Result<Vec<Classified>, RunnerError> {
    let files = match framework {
        Framework::Pytest
        | Framework::Jest
        | Framework::Vitest
        | Framework::Mocha
        | Framework::NodeTest => test_files(project, framework),
        Framework::Cargo => super::cargo_tier::test_files(project),
        Framework::Go => super::go_tier::test_files(project),
        Framework::Playwright | Framework::Cypress | Framework::Maestro => {
            return Err(RunnerError::Unsupported(format!(
                "test tiers start from the project's unit-test runner (pytest, jest, vitest, \
                 mocha, node:test, cargo or go); {framework} runs end-to-end tests"
            )))
        }
    };
    Ok(files
        .into_iter()
        .map(|file| {
            let text = read_head(&project.join(&file));
            classify_file(&file, &text, framework, overrides)
        })
        .collect())
}

/// Classifies one file from its path and its text.
pub fn classify_file(
    file: &str,
    text: &str,
    framework: Framework,
    overrides: &TierOverrides<'_>,
) -> Classified {
    let playwright_js = framework.is_node() && imports_playwright_test(text);
    let runner = if playwright_js {
        Framework::Playwright
    } else {
        framework
    };
    let made = |tier: Tier, reason: String| Classified {
        file: file.to_string(),
        tier,
        reason,
        runner,
    };
    for (source, paths) in [
        ("task metadata", overrides.task),
        ("huddle.toml", overrides.project),
    ] {
        if let Some(m) = paths.and_then(|p| p.tier_of(file)) {
            return made(m.tier, format!("{source} {}", m.describe()));
        }
    }
    if playwright_js {
        return made(Tier::E2e, "imports @playwright/test".into());
    }
    if framework == Framework::Pytest && uses_pytest_playwright(text) {
        return made(Tier::E2e, "uses Playwright (pytest-playwright)".into());
    }
    if framework == Framework::Go {
        if let Some((tier, tag)) = go_tag_tier(text) {
            return made(tier, format!("build tag {tag} (go test -tags {tag})"));
        }
    }
    if let Some((tier, dir)) = tier_of_directory(file) {
        return made(tier, format!("in the directory {dir}/"));
    }
    if let Some((tier, why)) = marker(file, text, framework) {
        return made(tier, why);
    }
    if let Some(lib) = pbt_library(text, framework) {
        return made(Tier::Pbt, format!("uses {lib}"));
    }
    if framework == Framework::Cargo && file.starts_with("tests/") {
        return made(
            Tier::Integration,
            "a cargo integration-test target (tests/)".into(),
        );
    }
    if framework == Framework::Cargo
        && !text.contains("#[test]")
        && super::cargo_tier::is_library_file(file)
        && super::cargo_tier::has_doc_tests(text)
    {
        return made(
            Tier::Unit,
            "doc test (cargo test --doc, beside the library's unit tests)".into(),
        );
    }
    made(Tier::Unit, "no integration, PBT or e2e sign: unit".into())
}

/// The PBT library a file uses, if any.
pub fn pbt_library(text: &str, framework: Framework) -> Option<&'static str> {
    let signs: &[(&str, &'static str)] = match framework {
        Framework::Pytest => &[
            ("from hypothesis", "hypothesis"),
            ("import hypothesis", "hypothesis"),
        ],
        Framework::Cargo => &[
            ("proptest!", "proptest"),
            ("use proptest", "proptest"),
            ("quickcheck", "quickcheck"),
        ],
        Framework::Go => &[
            ("\"pgregory.net/rapid\"", "rapid"),
            ("\"testing/quick\"", "testing/quick"),
        ],
        _ => &[
            ("'fast-check'", "fast-check"),
            ("\"fast-check\"", "fast-check"),
            ("@fast-check/", "fast-check"),
        ],
    };
    signs
        .iter()
        .find(|(s, _)| text.contains(s))
        .map(|(_, l)| *l)
}

/// The tier a go file's build tags name: `e2e` first, then `integration`.
fn go_tag_tier(text: &str) -> Option<(Tier, &'static str)> {
    let tags = super::go_tier::required_tags(text);
    [("e2e", Tier::E2e), ("integration", Tier::Integration)]
        .into_iter()
        .find(|(tag, _)| tags.iter().any(|t| t == tag))
        .map(|(tag, tier)| (tier, tag))
}

fn imports_playwright_test(text: &str) -> bool {
    text.contains("'@playwright/test'") || text.contains("\"@playwright/test\"")
}

fn uses_pytest_playwright(text: &str) -> bool {
    text.contains("from playwright") || text.contains("import playwright")
}

/// The tier a directory in `file`'s path names, with the directory.
fn tier_of_directory(file: &str) -> Option<(Tier, &str)> {
    let dirs: Vec<&str> = file.split('/').collect();
    dirs[..dirs.len() - 1].iter().find_map(|d| {
        let tier = match *d {
            "e2e" | "end_to_end" | "end-to-end" => Tier::E2e,
            "integration" | "integration_tests" | "it" => Tier::Integration,
            "pbt" | "property" | "properties" => Tier::Pbt,
            "unit" | "unit_tests" => Tier::Unit,
            _ => return None,
        };
        Some((tier, *d))
    })
}

fn marker(file: &str, text: &str, framework: Framework) -> Option<(Tier, String)> {
    if framework == Framework::Pytest {
        for (mark, tier) in [
            ("mark.e2e", Tier::E2e),
            ("mark.integration", Tier::Integration),
        ] {
            if text.contains(mark) {
                return Some((tier, format!("pytest marker {mark}")));
            }
        }
        return None;
    }
    let name = file.rsplit('/').next().unwrap_or(file);
    for (part, tier) in [
        (".e2e.", Tier::E2e),
        (".int.", Tier::Integration),
        (".integration.", Tier::Integration),
    ] {
        if name.contains(part) {
            return Some((tier, format!("file name has {part}")));
        }
    }
    None
}

/// The first 64 KiB of a file, lossily (enough for imports and markers).
pub(crate) fn read_head(path: &Path) -> String {
    use std::io::Read;
    let mut buf = Vec::new();
    if let Ok(f) = std::fs::File::open(path) {
        let _ = f.take(64 * 1024).read_to_end(&mut buf);
    }
    String::from_utf8_lossy(&buf).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tier(file: &str, text: &str, fw: Framework) -> (Tier, String) {
        let c = classify_file(file, text, fw, &TierOverrides::default());
        (c.tier, c.reason)
    }

    #[test]
    fn conventions_decide_in_order() {
        let py = Framework::Pytest;
        assert_eq!(tier("tests/unit/test_a.py", "", py).0, Tier::Unit);
        assert_eq!(
            tier("tests/pbt/test_p.py", "from hypothesis import given", py).0,
            Tier::Pbt
        );
        assert_eq!(
            tier("tests/test_p.py", "from hypothesis import given", py),
            (Tier::Pbt, "uses hypothesis".into())
        );
        assert_eq!(
            tier("tests/integration/test_api.py", "", py).0,
            Tier::Integration
        );
        assert_eq!(
            tier("tests/test_api.py", "@pytest.mark.integration", py).0,
            Tier::Integration
        );
        assert_eq!(
            tier(
                "tests/test_ui.py",
                "from playwright.sync_api import Page",
                py
            )
            .0,
            Tier::E2e
        );
        let js = Framework::Vitest;
        let e2e = classify_file(
            "e2e/home.spec.ts",
            "import { test } from '@playwright/test'",
            js,
            &TierOverrides::default(),
        );
        assert_eq!((e2e.tier, e2e.runner), (Tier::E2e, Framework::Playwright));
        assert_eq!(
            tier("test/sum.test.js", "import fc from 'fast-check'", js).0,
            Tier::Pbt
        );
        assert_eq!(tier("src/a.int.test.ts", "", js).0, Tier::Integration);
        assert_eq!(tier("test/unit/a.test.js", "", js).0, Tier::Unit);
        let rs = Framework::Cargo;
        assert_eq!(tier("tests/pbt.rs", "proptest! {", rs).0, Tier::Pbt);
        assert_eq!(tier("tests/api.rs", "#[test]", rs).0, Tier::Integration);
        assert_eq!(tier("src/lib.rs", "#[test]", rs).0, Tier::Unit);
        let doc = tier("src/text.rs", "/// ```\n/// assert!(true);\n/// ```\n", rs);
        assert_eq!(doc.0, Tier::Unit);
        assert!(doc.1.starts_with("doc test"), "{}", doc.1);
    }

    #[test]
    fn overrides_win_and_the_task_wins_over_the_project() {
        use crate::tiers::project_file::TierPaths;
        let project = TierPatterns::new(&TierPaths {
            integration: vec!["tests/unit/test_slow.py".into()],
            ..TierPaths::default()
        })
        .unwrap();
        let task = TierPatterns::new(&TierPaths {
            e2e: vec!["tests/unit".into()],
            ..TierPaths::default()
        })
        .unwrap();
        let only_project = TierOverrides {
            task: None,
            project: Some(&project),
        };
        let c = classify_file(
            "tests/unit/test_slow.py",
            "",
            Framework::Pytest,
            &only_project,
        );
        assert_eq!(c.tier, Tier::Integration);
        assert!(c.reason.contains("huddle.toml"), "{}", c.reason);
        let both = TierOverrides {
            task: Some(&task),
            project: Some(&project),
        };
        let c = classify_file("tests/unit/test_slow.py", "", Framework::Pytest, &both);
        assert_eq!(c.tier, Tier::E2e);
        assert!(c.reason.contains("task metadata"), "{}", c.reason);
    }

    #[test]
    fn go_files_go_by_build_tag_then_directory_then_pbt_import() {
        let go = Framework::Go;
        assert_eq!(
            tier("api_test.go", "//go:build integration\n\npackage api\n", go),
            (
                Tier::Integration,
                "build tag integration (go test -tags integration)".into()
            )
        );
        assert_eq!(
            tier("ui_test.go", "// +build e2e\n\npackage ui\n", go).0,
            Tier::E2e
        );
        assert_eq!(
            tier("integration/db_test.go", "package integration\n", go).0,
            Tier::Integration
        );
        assert_eq!(
            tier("calc/prop_test.go", "import \"testing/quick\"", go),
            (Tier::Pbt, "uses testing/quick".into())
        );
        assert_eq!(
            tier("calc/prop_test.go", "import \"pgregory.net/rapid\"", go).0,
            Tier::Pbt
        );
        assert_eq!(
            tier(
                "calc/calc_test.go",
                "//go:build !integration\npackage calc",
                go
            )
            .0,
            Tier::Unit
        );
    }
}

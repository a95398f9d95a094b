//! Diff-scoped tiers: from the files a git diff changed, the tests to run in each tier.
//! A changed test file runs itself, in its tier. A changed source file maps to its test
//! counterparts in every tier: by name (`app/text.py` → `test_text.py`, `src/sum.js` →
//! `sum.test.js`, `sum.spec.ts`), by the Python import graph, by imports in JavaScript test
//! files; in a cargo crate every tier tests the library, so all of them run. Shared code
//! (`lib/`, `utils/`, `core/`, `common/`, `shared/`) and configuration widen to the full
//! tiers. A source file no test maps to is "uncovered implementation".

use super::classify::Classified;
use super::Tier;
use crate::affected::{CONFIG_FILES, SHARED_DIRS};
use crate::framework::Framework;
use std::collections::BTreeMap;
use std::path::Path;

/// What a diff calls for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DiffScope {
    /// The files to run per tier (a tier not here runs nothing: `no_tests`).
    pub files: BTreeMap<Tier, Vec<String>>,
    /// Why, one line per changed file.
    pub reasons: Vec<String>,
    /// Changed source files no test in any tier maps to.
    pub uncovered: Vec<String>,
}

const SOURCE_EXTENSIONS: &[&str] = &[
    "py", "js", "jsx", "ts", "tsx", "mjs", "cjs", "mts", "cts", "vue", "svelte", "rs", "go",
];

fn ext(file: &str) -> &str {
    Path::new(file)
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
}

fn stem(file: &str) -> &str {
    let name = file.rsplit('/').next().unwrap_or(file);
    name.split('.').next().unwrap_or(name)
}

/// The scope of `changed` over the classified test files of `project`.
pub fn scope(
    project: &Path,
    framework: Framework,
    classified: &[Classified],
    changed: &[String],
) -> DiffScope {
    let mut out = DiffScope::default();
    let add = |out: &mut DiffScope, c: &Classified| {
        let files = out.files.entry(c.tier).or_default();
        if !files.contains(&c.file) {
            files.push(c.file.clone());
        }
    };
    let index = crate::conventions::TestIndex::new(project, framework);
    for file in changed {
        let name = file.rsplit('/').next().unwrap_or(file);
        if let Some(c) = classified.iter().find(|c| &c.file == file) {
            out.reasons
                .push(format!("{file}: a {} test file, run directly", c.tier));
            add(&mut out, c);
            continue;
        }
        let dirs: Vec<&str> = file.split('/').collect();
        let shared = dirs[..dirs.len() - 1]
            .iter()
            .find(|d| SHARED_DIRS.contains(d));
        let config = CONFIG_FILES.contains(&name);
        if shared.is_some() || config || (framework == Framework::Cargo && ext(file) == "rs") {
            let why = match shared {
                Some(d) => format!("shared code ({d}/)"),
                None if config => "configuration".to_string(),
                None => "the crate's code, which every tier tests".to_string(),
            };
            out.reasons
                .push(format!("{file}: {why}: every tier runs in full"));
            for c in classified {
                add(&mut out, c);
            }
            continue;
        }
        if !SOURCE_EXTENSIONS.contains(&ext(file)) {
            continue;
        }
        let counterparts = counterparts(project, framework, &index, classified, file);
        if counterparts.is_empty() {
            out.uncovered.push(file.clone());
            continue;
        }
        let mut by_tier: BTreeMap<Tier, Vec<&str>> = BTreeMap::new();
        for c in &counterparts {
            by_tier.entry(c.tier).or_default().push(&c.file);
            add(&mut out, c);
        }
        let listed: Vec<String> = by_tier
            .iter()
            .map(|(t, f)| format!("{t}: {}", f.join(", ")))
            .collect();
        out.reasons.push(format!("{file} → {}", listed.join("; ")));
    }
    for files in out.files.values_mut() {
        files.sort();
    }
    out
}

/// The classified tests that exercise the source file `file`.
fn counterparts<'a>(
    project: &Path,
    framework: Framework,
    index: &crate::conventions::TestIndex<'_>,
    classified: &'a [Classified],
    file: &str,
) -> Vec<&'a Classified> {
    let s = stem(file);
    let mut found: Vec<&Classified> = Vec::new();
    if framework == Framework::Pytest {
        if let Ok((tests, _)) = index.tests_for(file) {
            found.extend(classified.iter().filter(|c| tests.contains(&c.file)));
        }
    }
    for c in classified {
        if found.iter().any(|f| f.file == c.file) {
            continue;
        }
        let test_stem = stem(&c.file);
        let by_name = test_stem == s
            || test_stem.strip_prefix("test_") == Some(s)
            || test_stem.strip_suffix("_test") == Some(s);
        let by_import = framework.is_node()
            && std::fs::read_to_string(project.join(&c.file)).is_ok_and(|t| {
                [
                    format!("/{s}'"),
                    format!("/{s}\""),
                    format!("/{s}.js'"),
                    format!("/{s}.ts'"),
                ]
                .iter()
                .any(|p| t.contains(p.as_str()))
            });
        if by_name || by_import {
            found.push(c);
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(file: &str, tier: Tier) -> Classified {
        Classified {
            file: file.into(),
            tier,
            reason: String::new(),
            runner: Framework::Pytest,
        }
    }

    #[test]
    fn tests_run_directly_sources_map_by_name_shared_code_widens_and_the_rest_is_uncovered() {
        let dir = tempfile::tempdir().unwrap();
        let classified = vec![
            c("tests/unit/test_text.py", Tier::Unit),
            c("tests/pbt/test_text.py", Tier::Pbt),
            c("tests/integration/test_api.py", Tier::Integration),
        ];
        let changed = vec![
            "app/text.py".to_string(),
            "tests/integration/test_api.py".into(),
            "app/billing.py".into(),
            "README.md".into(),
        ];
        let s = scope(dir.path(), Framework::Pytest, &classified, &changed);
        assert_eq!(s.files[&Tier::Unit], ["tests/unit/test_text.py"]);
        assert_eq!(s.files[&Tier::Pbt], ["tests/pbt/test_text.py"]);
        assert_eq!(
            s.files[&Tier::Integration],
            ["tests/integration/test_api.py"]
        );
        assert_eq!(s.uncovered, ["app/billing.py"]);
        let wide = scope(
            dir.path(),
            Framework::Pytest,
            &classified,
            &["app/utils/strings.py".to_string()],
        );
        assert_eq!(wide.files.values().map(Vec::len).sum::<usize>(), 3);
        assert!(
            wide.reasons[0].contains("shared code (utils/)"),
            "{:?}",
            wide.reasons
        );
    }
}

//! Test configuration decides which tests run and how: a fix that deselects tests in
//! `pytest.ini` or narrows `testMatch` passes by shrinking the suite. Such files are protected
//! like lockfiles — whole files where they are nothing but test configuration, the test
//! sections where they hold more (`pyproject.toml`, `setup.cfg`, `package.json`,
//! `Cargo.toml`). A task may allow it (`allowTestConfigEdits`).

use serde_json::Value as Json;

/// Files that are test configuration as a whole, by name.
const WHOLE_FILES: &[&str] = &[
    "pytest.ini",
    // pytest 9 reads these first.
    "pytest.toml",
    ".pytest.toml",
    ".pytest.ini",
    "conftest.py",
    "tox.ini",
    ".mocharc",
    "karma.conf.js",
    // Module path, Go version and test-affecting toolchain settings; dependencies too.
    "go.mod",
];

/// Name prefixes of test configuration files (`jest.config.js`, `.mocharc.yml`, …).
const WHOLE_PREFIXES: &[&str] = &[
    "jest.config.",
    "vitest.config.",
    "vitest.workspace.",
    "vitest.projects.",
    // vitest reads vite's configuration when it has none of its own; babel transforms tests.
    "vite.config.",
    "babel.config.",
    ".babelrc",
    "karma.conf.",
    ".c8rc",
    ".nycrc",
    ".mocharc.",
    "jest.setup.",
    "vitest.setup.",
];

/// Why `rel` is test configuration as a whole, if it is.
pub fn whole_file(rel: &str) -> Option<&'static str> {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    if WHOLE_FILES.contains(&name) || WHOLE_PREFIXES.iter().any(|p| name.starts_with(p)) {
        return Some("it is test configuration");
    }
    None
}

/// Refuses a change to the test sections of a file that holds more than test configuration;
/// the reason names the section. A file that no longer parses is refused too.
pub fn check_sections(rel: &str, before: &str, after: &str) -> Result<(), String> {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    let (sections, parse): (&[&str], Parser) = match name {
        "pyproject.toml" => (&["/tool/pytest"], toml_json),
        "Cargo.toml" => (&["/test", "/bench", "/lib/test", "/lib/harness"], toml_json),
        "package.json" => (
            &[
                "/scripts/test",
                "/scripts/pretest",
                "/jest",
                "/mocha",
                "/vitest",
            ],
            json,
        ),
        "setup.cfg" => return ini_section(before, after, &["tool:pytest", "pytest"]),
        _ => return Ok(()),
    };
    let Some(old) = parse(before) else {
        return Ok(());
    };
    let Some(new) = parse(after) else {
        return Err(format!(
            "the edit leaves `{name}` unparsable, and it holds test configuration"
        ));
    };
    for s in sections {
        if old.pointer(s) != new.pointer(s) {
            let shown = s.trim_start_matches('/').replace('/', ".");
            return Err(format!(
                "the edit changes `{shown}`, which is test configuration"
            ));
        }
    }
    Ok(())
}

/// Reads a file's text into JSON, `None` when it does not parse.
type Parser = fn(&str) -> Option<Json>;

fn toml_json(text: &str) -> Option<Json> {
    let value: toml::Value = toml::from_str(text).ok()?;
    serde_json::to_value(value).ok()
}

fn json(text: &str) -> Option<Json> {
    serde_json::from_str(text).ok()
}

/// Compares the meaningful lines of INI sections `names` (comments and blank lines aside).
fn ini_section(before: &str, after: &str, names: &[&str]) -> Result<(), String> {
    for name in names {
        if section_lines(before, name) != section_lines(after, name) {
            return Err(format!(
                "the edit changes the `[{name}]` section, which is test configuration"
            ));
        }
    }
    Ok(())
}

fn section_lines<'a>(text: &'a str, name: &str) -> Vec<&'a str> {
    let mut inside = false;
    let mut out = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') && line.ends_with(']') {
            inside = line[1..line.len() - 1].trim() == name;
            continue;
        }
        if inside && !line.is_empty() && !line.starts_with('#') && !line.starts_with(';') {
            out.push(line);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_test_configuration_files_are_known_by_name() {
        for rel in [
            "pytest.ini",
            "tests/conftest.py",
            "jest.config.js",
            "web/vitest.config.ts",
            ".mocharc.yml",
            "go.mod",
        ] {
            assert!(whole_file(rel).is_some(), "{rel}");
        }
        for rel in ["pkg/config.py", "src/jest.js", "setup.py"] {
            assert!(whole_file(rel).is_none(), "{rel}");
        }
    }

    #[test]
    fn test_sections_are_protected_and_the_rest_is_not() {
        let py = "[project]\nname = \"x\"\n\n[tool.pytest.ini_options]\naddopts = \"-q\"\n";
        let deselect = py.replace("-q", "-q --deselect tests/test_a.py::test_x");
        let err = check_sections("pyproject.toml", py, &deselect).unwrap_err();
        assert!(err.contains("tool.pytest"), "{err}");
        let renamed = py.replace("name = \"x\"", "name = \"y\"");
        assert!(check_sections("pyproject.toml", py, &renamed).is_ok());

        let pkg = r#"{"name":"x","scripts":{"test":"jest","build":"tsc"},"jest":{"testMatch":["**/*.test.js"]}}"#;
        let narrowed = pkg.replace("**/*.test.js", "**/math.test.js");
        assert!(check_sections("package.json", pkg, &narrowed)
            .unwrap_err()
            .contains("jest"));
        let build = pkg.replace("tsc", "tsc -p .");
        assert!(check_sections("package.json", pkg, &build).is_ok());
        assert!(check_sections("package.json", pkg, "{oops")
            .unwrap_err()
            .contains("unparsable"));

        let cfg = "[metadata]\nname = x\n\n[tool:pytest]\ntestpaths = tests\n";
        let narrowed = cfg.replace("testpaths = tests", "testpaths = tests/unit");
        assert!(check_sections("setup.cfg", cfg, &narrowed).is_err());
        assert!(check_sections("setup.cfg", cfg, &cfg.replace("name = x", "name = y")).is_ok());

        let cargo = "[package]\nname = \"x\"\n\n[[test]]\nname = \"it\"\nharness = true\n";
        let off = cargo.replace("harness = true", "harness = false");
        assert!(check_sections("Cargo.toml", cargo, &off).is_err());
    }
}

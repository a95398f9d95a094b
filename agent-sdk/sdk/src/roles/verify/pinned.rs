//! Which files a verdict re-run takes as they were when the task began: what the task did not
//! allow the fix to change. The test files (unless `allowTestEdits`), the runner's
//! configuration (unless `allowTestConfigEdits`) and the interpreter's start-up files (always)
//! come from the start; everything else — the code under test — as it is now.

use crate::edits::{is_test_file, test_config, Policy};

/// Files that hold test configuration beside other settings: pinned whole, since the test
/// sections are what the runner reads and nothing else in them is a fix.
const MIXED_CONFIG: &[&str] = &[
    "pyproject.toml",
    "setup.cfg",
    "tox.ini",
    "package.json",
    "Cargo.toml",
];

/// Files every Python process runs before any test, wherever they are.
fn is_start_up(name: &str) -> bool {
    matches!(name, "sitecustomize.py" | "usercustomize.py") || name.ends_with(".pth")
}

/// Whether `rel` is taken from the start of the task under `policy`.
pub(crate) fn pinned(rel: &str, policy: &Policy) -> bool {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    if is_start_up(name) {
        return true;
    }
    let config = test_config::whole_file(rel).is_some() || MIXED_CONFIG.contains(&name);
    if config {
        return !policy.test_config_edits;
    }
    is_test_file(rel) && !policy.test_edits
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tester_pins_tests_and_configuration_and_the_executor_only_configuration() {
        let tester = Policy::tester();
        let executor = Policy::executor();
        for rel in [
            "tests/test_calc.py",
            "tests/__init__.py",
            "conftest.py",
            "pytest.toml",
            "src/calc.test.ts",
            "package.json",
            "vitest.config.ts",
            "lib/sitecustomize.py",
            "x.pth",
        ] {
            assert!(pinned(rel, &tester), "{rel} is pinned for the tester");
        }
        assert!(!pinned("calc.py", &tester));
        assert!(!pinned("src/calc.ts", &tester));
        assert!(!pinned("tests/test_calc.py", &executor));
        assert!(pinned("conftest.py", &executor));
        assert!(pinned("sitecustomize.py", &executor));
        let allowed = Policy {
            test_config_edits: true,
            test_edits: true,
            ..Policy::tester()
        };
        assert!(!pinned("pytest.ini", &allowed));
        assert!(!pinned("tests/test_calc.py", &allowed));
        assert!(pinned("usercustomize.py", &allowed));
    }
}

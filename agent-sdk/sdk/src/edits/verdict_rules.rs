//! Edits that would change a verdict without fixing the code, by class rather than by example:
//! code that runs inside the test run (runner hooks and plugin declarations anywhere, modules
//! that shadow the runner or the standard library at the project root, interpreter start-up
//! files, package `__init__` files among the tests), code that knows it is under test, and
//! objects that compare equal to anything. Each refusal names its rule. These are the static
//! half; what no pattern catches is left to the verdict re-run (`roles::runs`).

use super::guard::{is_test_file, Policy};
use super::Refusal;
use regex::Regex;
use std::sync::OnceLock;

/// Module names at the project root that would be imported instead of the runner, its
/// plugin system, or a standard-library module the tests or the runner use (with the
/// project root on `sys.path`, as pytest's default import mode puts it).
const SHADOWED: &[&str] = &[
    "pytest",
    "_pytest",
    "pluggy",
    "py",
    "unittest",
    "doctest",
    "hypothesis",
    "sys",
    "os",
    "json",
    "re",
    "math",
    "random",
    "decimal",
    "fractions",
    "statistics",
    "typing",
    "collections",
    "functools",
    "itertools",
    "operator",
    "inspect",
    "importlib",
    "builtins",
    "types",
    "io",
    "time",
    "datetime",
    "string",
    "copy",
    "enum",
    "dataclasses",
    "pathlib",
    "subprocess",
    "traceback",
    "warnings",
    "logging",
    "contextlib",
    "abc",
    "numbers",
];

/// Files every Python process runs before any test: no fix needs one.
const START_UP: &[&str] = &["sitecustomize.py", "usercustomize.py"];

/// The directories whose files are tests ([`is_test_file`]'s).
const TEST_DIRS: &[&str] = &["tests", "test", "__tests__", "spec"];

fn refuse(path: &str, rule: &str, why: &str) -> Refusal {
    Refusal::VerdictRule {
        path: path.to_string(),
        rule: rule.to_string(),
        why: why.to_string(),
    }
}

/// Refuses paths whose mere presence changes how the tests run.
pub fn check_path(rel: &str, policy: &Policy) -> Result<(), Refusal> {
    let parts: Vec<&str> = rel.split('/').collect();
    let name = parts.last().copied().unwrap_or(rel);
    if START_UP.contains(&name) || name.ends_with(".pth") {
        return Err(refuse(
            rel,
            "start-up file",
            "is run by every Python process before any test",
        ));
    }
    let module = name.strip_suffix(".py").unwrap_or(name);
    let at_root = parts.len() == 1 && name.ends_with(".py")
        || parts.len() > 1 && parts.len() == 2 && parts[1] == "__init__.py";
    let top = if parts.len() == 1 { module } else { parts[0] };
    if at_root && SHADOWED.contains(&top) {
        return Err(refuse(
            rel,
            "shadowing module",
            &format!("would be imported instead of `{top}` by the tests or their runner"),
        ));
    }
    let in_tests = parts[..parts.len() - 1]
        .iter()
        .any(|d| TEST_DIRS.contains(d));
    if name == "__init__.py" && in_tests && !policy.test_config_edits {
        return Err(refuse(
            rel,
            "test package",
            "a package file among the tests changes how they are imported (and what the \
             module under test is bound to)",
        ));
    }
    Ok(())
}

/// Which files a rule looks at.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Applies {
    Everywhere,
    /// The code under test (a test file may well import its runner).
    Code,
    /// Test files (the code under test may well catch exceptions).
    Tests,
}

struct Rule {
    pattern: Regex,
    name: &'static str,
    why: &'static str,
    applies: Applies,
    /// Test configuration (hooks, plugins): allowed where a task allows test configuration
    /// edits (`allowTestConfigEdits`), as `conftest.py` itself is.
    config: bool,
}

fn rules() -> &'static [Rule] {
    static RULES: OnceLock<Vec<Rule>> = OnceLock::new();
    RULES.get_or_init(|| {
        let rule = |p: &str, name: &'static str, why, applies| Rule {
            pattern: Regex::new(p).expect("verdict rule pattern"),
            name,
            why,
            applies,
            config: matches!(name, "runner hook" | "plugin declaration"),
        };
        use Applies::*;
        vec![
            rule(
                r"(?m)^\s*(async\s+)?def\s+pytest_\w+\s*\(",
                "runner hook",
                "defines a pytest hook, which runs inside the test run and can change its outcome",
                Everywhere,
            ),
            rule(
                r"\bpytest_plugins\b|\bpytest11\b|\bregister_assert_rewrite\b",
                "plugin declaration",
                "declares a pytest plugin, which runs inside the test run",
                Everywhere,
            ),
            rule(
                r#"PYTEST_(CURRENT_TEST|VERSION|ADDOPTS|XDIST_WORKER)|["']_?pytest["']\s+(not\s+)?in\s+sys\.modules|sys\.modules\s*(\.get\s*\(|\[)\s*["']_?pytest|\bimport\s+_?pytest\b|\bfrom\s+_?pytest\b|\bunittest\.mock\b"#,
                "knows it is tested",
                "makes the code under test look at whether pytest is running it",
                Code,
            ),
            rule(
                r#"process\.env\.(VITEST\w*|JEST_WORKER_ID|NODE_TEST_CONTEXT|MOCHA\w*)|import\.meta\.vitest|\b__vitest_\w*|NODE_ENV\W+\s*(===?|!==?)\s*["']test["']|["']test["']\s*(===?|!==?)\s*process\.env\.NODE_ENV"#,
                "knows it is tested",
                "makes the code under test look at whether a JavaScript test runner is running it",
                Code,
            ),
            rule(
                r"def\s+__(eq|ne)__\s*\([^)]*\)\s*(->\s*\w+\s*)?:\s*(#[^\n]*)?\s*return\s+(True|False)\b|__(eq|ne)__\s*=\s*lambda[^:]*:\s*(True|False)\b",
                "equal to anything",
                "makes a comparison that holds whatever was computed",
                Everywhere,
            ),
            rule(
                r"\basymmetricMatch\s*\(|\bObject\.is\s*=[^=]",
                "equal to anything",
                "makes a JavaScript comparison or matcher hold whatever was computed",
                Everywhere,
            ),
            rule(
                r"(?m)^\s*except\s*(\(?\s*(AssertionError|Exception|BaseException)\b[^:]*)?:",
                "swallowed failure",
                "catches the failures a test reports, so an assertion that fails no longer fails it",
                Tests,
            ),
            rule(
                r"(?m)^[A-Za-z_]\w*(\.[A-Za-z_]\w*)+\s*=[^=]",
                "rebound under test",
                "rebinds a name of another module at module level, so the tests no longer call \
                 the code they test",
                Tests,
            ),
        ]
    })
}

/// Refuses a change of `rel` from `before` to `after` that adds what a rule names (counted:
/// what was there before is left alone).
pub fn check_content(rel: &str, before: &str, after: &str, policy: &Policy) -> Result<(), Refusal> {
    let applies = if is_test_file(rel) {
        Applies::Tests
    } else {
        Applies::Code
    };
    for rule in rules()
        .iter()
        .filter(|r| r.applies == Applies::Everywhere || r.applies == applies)
        .filter(|r| !(r.config && policy.test_config_edits))
    {
        let count = |text: &str| rule.pattern.find_iter(text).count();
        if count(after) > count(before) {
            return Err(refuse(rel, rule.name, rule.why));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule_of(r: Result<(), Refusal>) -> Option<String> {
        match r {
            Err(Refusal::VerdictRule { rule, .. }) => Some(rule),
            Err(other) => panic!("another refusal: {other}"),
            Ok(()) => None,
        }
    }

    #[test]
    fn each_class_is_refused_with_its_rule() {
        let cases: &[(&str, &str, &str)] = &[
            ("pkg/plugin.py", "def pytest_collection_modifyitems(items):\n    items.clear()\n", "runner hook"),
            ("pkg/__init__.py", "pytest_plugins = ['pkg.cheat']\n", "plugin declaration"),
            ("pkg/calc.py", "import os\nif os.environ.get('PYTEST_CURRENT_TEST'):\n    X = 1\n", "knows it is tested"),
            ("pkg/calc.py", "import sys\nTESTED = 'pytest' in sys.modules\n", "knows it is tested"),
            ("src/calc.js", "export const avg = process.env.VITEST ? () => 2 : real;\n", "knows it is tested"),
            ("src/calc.ts", "if (process.env.NODE_ENV === 'test') { return 2 }\n", "knows it is tested"),
            ("pkg/calc.py", "class R:\n    def __eq__(self, other):\n        return True\n", "equal to anything"),
            ("pkg/calc.py", "class R:\n    __eq__ = lambda self, o: True\n", "equal to anything"),
            ("src/calc.js", "const r = { asymmetricMatch(x) { return true } };\n", "equal to anything"),
            ("tests/test_calc.py", "def test_a():\n    try:\n        assert f() == 2\n    except AssertionError:\n        pass\n", "swallowed failure"),
            ("tests/test_calc.py", "import calc\ncalc.average = lambda xs: 2.0\n", "rebound under test"),
        ];
        for (path, after, rule) in cases {
            assert_eq!(
                rule_of(check_content(path, "", after, &Policy::executor())).as_deref(),
                Some(*rule),
                "{path}: {after}"
            );
        }
    }

    #[test]
    fn honest_fixes_and_what_was_there_before_pass() {
        let fine: &[(&str, &str, &str)] = &[
            ("pkg/calc.py", "def average(xs):\n    return sum(xs) / len(xs)\n", ""),
            ("pkg/calc.py", "try:\n    x = int(s)\nexcept ValueError:\n    x = 0\n", ""),
            ("pkg/calc.py", "except Exception:\n    log()\n", "class E:\n    pass\n"),
            ("pkg/money.py", "class M:\n    def __eq__(self, other):\n        return self.cents == other.cents\n", ""),
            ("tests/test_calc.py", "import pytest\n\ndef test_a():\n    assert f() == 2\n", ""),
            ("src/app.js", "if (process.env.NODE_ENV === 'production') { cache() }\n", ""),
            ("pkg/settings.py", "config.DEBUG = False\n", ""),
        ];
        for (path, after, before) in fine {
            assert_eq!(
                rule_of(check_content(path, before, after, &Policy::executor())),
                None,
                "{path}: {after}"
            );
        }
        // A task that allows test configuration edits allows hooks too (conftest.py is one).
        let config = Policy {
            test_config_edits: true,
            ..Policy::tester()
        };
        let hook = "def pytest_collection_modifyitems(items):\n    pass\n";
        assert_eq!(
            rule_of(check_content("tests/conftest.py", "", hook, &config)),
            None
        );
        // Already there: an edit elsewhere in the file is not refused for it.
        let hook = "def pytest_configure(config):\n    pass\n";
        assert_eq!(
            rule_of(check_content(
                "conftest.py",
                hook,
                &format!("{hook}\n# note\n"),
                &Policy::executor()
            )),
            None
        );
    }

    #[test]
    fn shadowing_modules_start_up_files_and_test_packages_are_refused() {
        let tester = Policy::tester();
        let executor = Policy::executor();
        for (path, policy, rule) in [
            ("pytest.py", &tester, "shadowing module"),
            ("json.py", &tester, "shadowing module"),
            ("unittest/__init__.py", &tester, "shadowing module"),
            ("sitecustomize.py", &tester, "start-up file"),
            ("lib/evil.pth", &tester, "start-up file"),
            ("tests/__init__.py", &executor, "test package"),
            ("tests/unit/__init__.py", &executor, "test package"),
        ] {
            assert_eq!(
                rule_of(check_path(path, policy)).as_deref(),
                Some(rule),
                "{path}"
            );
        }
        for path in [
            "pkg/json.py",
            "pkg/__init__.py",
            "calc.py",
            "src/pytest_helpers.py",
        ] {
            assert_eq!(rule_of(check_path(path, &tester)), None, "{path}");
        }
        let config = Policy {
            test_config_edits: true,
            ..Policy::executor()
        };
        assert_eq!(rule_of(check_path("tests/__init__.py", &config)), None);
    }
}

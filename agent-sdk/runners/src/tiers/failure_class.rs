//! The class of a failing test, for the fix cycle and the tier reports:
//! `implementation` (an assertion about the code's behaviour failed: the code or the test's
//! expectation is to be fixed) or `infrastructure` (the test could not run as meant: a
//! missing module or program, a service that is not there, a broken fixture, a runner that
//! crashed or timed out). Convergence stagnation, the third class, is decided across
//! attempts by the tester's cycle (`huddle-sdk`'s `cycles`), not from one failure.

use crate::report::TestResult;
use serde::{Deserialize, Serialize};

/// The class of one failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureClass {
    /// The code (or the test's expectation) is wrong: what a fix cycle repairs.
    Implementation,
    /// The environment, a service, a fixture or the runner is broken: no code fix helps.
    Infrastructure,
    /// The same test failed with the same assertion after repeated fixes.
    Stagnation,
}

impl FailureClass {
    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            FailureClass::Implementation => "implementation",
            FailureClass::Infrastructure => "infrastructure",
            FailureClass::Stagnation => "stagnation",
        }
    }
}

/// Signs, in failure texts, of something no code change fixes.
pub const INFRASTRUCTURE_SIGNS: &[&str] = &[
    "ModuleNotFoundError: No module named",
    "ImportError: No module named",
    "command not found",
    "ECONNREFUSED",
    "Connection refused",
    "ConnectionRefusedError",
    "getaddrinfo ENOTFOUND",
    "EADDRINUSE",
    "No space left on device",
    "fixture '",
    "browserType.launch: Executable doesn't exist",
    "net::ERR_CONNECTION_REFUSED",
];

/// The failure's class and, for infrastructure, the line that says so.
pub fn classify_failure(test: &TestResult) -> (FailureClass, Option<String>) {
    let text = test.longrepr.as_deref().unwrap_or("");
    if let Some(line) = infrastructure_line(text) {
        return (FailureClass::Infrastructure, Some(line));
    }
    if matches!(test.nodeid.as_str(), "[TIMEOUT]" | "[runner]" | "[crash]") {
        let first = text
            .lines()
            .next()
            .unwrap_or(&test.nodeid)
            .trim()
            .to_string();
        return (FailureClass::Infrastructure, Some(first));
    }
    (FailureClass::Implementation, None)
}

/// The line of `text` showing an infrastructure failure, if any: a sign from
/// [`INFRASTRUCTURE_SIGNS`], or `Cannot find module 'pkg'` for a package (not a relative path).
pub fn infrastructure_line(text: &str) -> Option<String> {
    let sign = INFRASTRUCTURE_SIGNS
        .iter()
        .find(|s| text.contains(*s))
        .map(|s| s.to_string())
        .or_else(|| {
            let rest = text.split("Cannot find module '").nth(1)?;
            (!rest.starts_with('.') && !rest.starts_with('/'))
                .then(|| "Cannot find module".to_string())
        })?;
    let line = text
        .lines()
        .find(|l| l.contains(&sign))
        .unwrap_or(&sign)
        .trim()
        .to_string();
    Some(crate::scrub::scrub(&line).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Outcome;

    fn failing(id: &str, text: &str) -> TestResult {
        let mut t = TestResult::new(id, Outcome::Failed);
        t.longrepr = Some(text.into());
        t
    }

    #[test]
    fn assertion_failures_are_implementation_and_broken_setups_infrastructure() {
        assert_eq!(
            classify_failure(&failing("t::a", "assert add(1, 2) == 4\nAssertionError")).0,
            FailureClass::Implementation
        );
        let (class, line) = classify_failure(&failing(
            "t::b",
            "E   urllib.error.URLError: <urlopen error [Errno 111] Connection refused>",
        ));
        assert_eq!(class, FailureClass::Infrastructure);
        assert!(line.unwrap().contains("Connection refused"));
        assert_eq!(
            classify_failure(&failing("t::c", "E       fixture 'db' not found")).0,
            FailureClass::Infrastructure
        );
        assert_eq!(
            classify_failure(&failing("t::d", "Error: Cannot find module 'left-pad'")).0,
            FailureClass::Infrastructure
        );
        assert_eq!(
            classify_failure(&failing("t::e", "Error: Cannot find module './sum'")).0,
            FailureClass::Implementation
        );
        assert_eq!(
            classify_failure(&failing("[TIMEOUT]", "[TIMEOUT] the run exceeded 5s")).0,
            FailureClass::Infrastructure
        );
    }
}

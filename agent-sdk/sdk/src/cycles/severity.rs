//! How bad a remaining failure is, from the test's name: critical (auth, security, permission,
//! login, password), high (core, main, primary, data, state), low (edge, flaky, timeout, env),
//! medium otherwise. The first group that matches wins.

use serde::Serialize;
use std::fmt;

/// Severity of a failing test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Authentication, security, permissions, login, passwords.
    Critical,
    /// Core, main or primary paths; data and state.
    High,
    /// Anything not named by another group.
    Medium,
    /// Edge cases, known-flaky tests, timeouts, environment.
    Low,
}

const CRITICAL: &[&str] = &["auth", "security", "permission", "login", "password"];
const HIGH: &[&str] = &["core", "main", "primary", "data", "state"];
const LOW: &[&str] = &["edge", "flaky", "timeout", "env"];

impl Severity {
    /// All severities, most severe first.
    pub const ALL: [Severity; 4] = [
        Severity::Critical,
        Severity::High,
        Severity::Medium,
        Severity::Low,
    ];

    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Critical => "critical",
            Severity::High => "high",
            Severity::Medium => "medium",
            Severity::Low => "low",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Classifies a failing test by its id (file, suite and name).
pub fn classify(test_id: &str) -> Severity {
    let name = test_id.to_ascii_lowercase();
    let has = |words: &[&str]| words.iter().any(|w| name.contains(w));
    if has(CRITICAL) {
        Severity::Critical
    } else if has(HIGH) {
        Severity::High
    } else if has(LOW) {
        Severity::Low
    } else {
        Severity::Medium
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_decide_the_severity() {
        assert_eq!(
            classify("tests/test_auth.py::test_login_rejects"),
            Severity::Critical
        );
        assert_eq!(
            classify("src/user.test.js::resets the PASSWORD"),
            Severity::Critical
        );
        assert_eq!(classify("tests/test_core.py::test_sum"), Severity::High);
        assert_eq!(classify("tests/test_x.py::test_edge_case"), Severity::Low);
        assert_eq!(
            classify("tests/test_strings.py::test_shout"),
            Severity::Medium
        );
    }
}

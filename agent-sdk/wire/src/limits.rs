//! The protocol's fixed bounds, defined once: the daemon validates with them, the OpenAPI
//! document states them, and clients can check input before sending it. Bounds an operator may
//! change (text lengths, page and batch sizes, JSON depth…) are settings of the daemon
//! (`[limits]`), not constants.

/// Longest team or agent name, in bytes.
pub const NAME_MAX_LEN: usize = 63;
/// Team and agent names.
pub const NAME_PATTERN: &str = "^[a-z0-9][a-z0-9_-]{0,62}$";
/// Longest task id prefix (`TEST`, `QARUN`), in bytes.
pub const PREFIX_MAX_LEN: usize = 32;
/// A task id prefix, optionally with its dash (`TEST`, `TEST-`).
pub const PREFIX_PATTERN: &str = "^[A-Z][A-Z0-9_]{0,31}-?$";
/// Most digits in a task number (`TEST-123456789`).
pub const TASK_NUMBER_MAX_DIGITS: usize = 9;
/// A task id, `PREFIX-NNN`.
pub const TASK_ID_PATTERN: &str = "^[A-Z][A-Z0-9_]{0,31}-[0-9]{1,9}$";
/// Longest message type, in bytes.
pub const MESSAGE_TYPE_MAX_LEN: usize = 64;
/// Message types: `test_result`, `impl_progress`, or any of this shape.
pub const MESSAGE_TYPE_PATTERN: &str = "^[a-z][a-z0-9_]{0,63}$";
/// Most id prefixes one claim may name.
pub const MAX_CLAIM_PREFIXES: usize = 32;
/// Most tasks one claim may take (`max`).
pub const MAX_CLAIM_BATCH: u32 = 100;
/// Longest project name a claim may filter by (characters), as the test history keeps them.
pub const MAX_PROJECT_CHARS: usize = 200;
/// Largest `maxAttempts` a task may have.
pub const MAX_ATTEMPTS_CEILING: i64 = 1000;

#[cfg(test)]
mod tests {
    use super::*;

    /// The patterns spell the lengths above, so the two forms cannot disagree.
    #[test]
    fn patterns_agree_with_the_lengths() {
        assert!(NAME_PATTERN.contains(&format!("{{0,{}}}", NAME_MAX_LEN - 1)));
        assert!(PREFIX_PATTERN.contains(&format!("{{0,{}}}", PREFIX_MAX_LEN - 1)));
        assert!(TASK_ID_PATTERN.contains(&format!("{{0,{}}}", PREFIX_MAX_LEN - 1)));
        assert!(TASK_ID_PATTERN.contains(&format!("{{1,{TASK_NUMBER_MAX_DIGITS}}}")));
        assert!(MESSAGE_TYPE_PATTERN.contains(&format!("{{0,{}}}", MESSAGE_TYPE_MAX_LEN - 1)));
    }
}

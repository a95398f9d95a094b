//! Guards for values that reach a runner's argv. Arguments never pass through a shell, so the
//! remaining risks are option injection (a value read as a flag), path traversal and terminal
//! or log corruption; each check refuses with a message that names the value's role.

use std::fmt;

/// The longest name filter accepted.
pub const MAX_FILTER_LEN: usize = 200;
/// The longest path, node id, revision or runner argument accepted.
pub const MAX_ARG_LEN: usize = 4096;
/// The most arguments `huddle test -- …` may hand to a runner.
pub const MAX_RUNNER_ARGS: usize = 64;

/// A refused argument: which argument and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuardError {
    /// The role of the value (`filter`, `path`, `base revision`, …).
    pub what: String,
    /// Why it was refused.
    pub reason: String,
}

impl fmt::Display for GuardError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "refused {}: {}", self.what, self.reason)
    }
}

impl std::error::Error for GuardError {}

fn refuse(what: &str, reason: impl Into<String>) -> GuardError {
    GuardError {
        what: what.to_string(),
        reason: reason.into(),
    }
}

fn bounded(what: &str, value: &str, max: usize) -> Result<(), GuardError> {
    if value.is_empty() {
        return Err(refuse(what, "it is empty"));
    }
    let len = value.chars().count();
    if len > max {
        return Err(refuse(
            what,
            format!("it is {len} characters long; the limit is {max}"),
        ));
    }
    if let Some(c) = value.chars().find(|c| c.is_control()) {
        return Err(refuse(
            what,
            format!("it contains the control character U+{:04X}", c as u32),
        ));
    }
    Ok(())
}

fn common(what: &str, value: &str, max: usize) -> Result<(), GuardError> {
    bounded(what, value, max)?;
    if value.starts_with('-') {
        return Err(refuse(
            what,
            format!("{value:?} starts with '-', which the runner would read as an option"),
        ));
    }
    Ok(())
}

/// Checks a test-name filter (`-k`, `-t`, `--grep`, `-run`, cargo's filter): not empty, at
/// most [`MAX_FILTER_LEN`] characters, no leading `-`, no `..`, no control characters.
pub fn check_filter(value: &str) -> Result<&str, GuardError> {
    common("filter", value, MAX_FILTER_LEN)?;
    if value.contains("..") {
        return Err(refuse("filter", format!("{value:?} contains '..'")));
    }
    Ok(value)
}

/// Checks a relative path handed to a runner (a test file, a package directory): no leading
/// `-`, no control characters, no `..` component, not absolute.
pub fn check_path(value: &str) -> Result<&str, GuardError> {
    common("path", value, MAX_ARG_LEN)?;
    if value.split(['/', '\\']).any(|part| part == "..") {
        return Err(refuse(
            "path",
            format!("{value:?} leaves the project ('..')"),
        ));
    }
    if value.starts_with('/') {
        return Err(refuse("path", format!("{value:?} is absolute")));
    }
    Ok(value)
}

/// Checks a test id from a previous report before it is re-run: ids may contain `..` inside
/// parameters (`test_range[1..3]`), so only option injection and control characters matter.
pub fn check_test_id(value: &str) -> Result<&str, GuardError> {
    common("test id", value, MAX_ARG_LEN)?;
    Ok(value)
}

/// Checks a git revision for `--affected --base`: a single revision, not a range.
pub fn check_revision(value: &str) -> Result<&str, GuardError> {
    common("base revision", value, MAX_FILTER_LEN)?;
    if value.contains("..") {
        return Err(refuse(
            "base revision",
            format!("{value:?} is a range; give a single revision"),
        ));
    }
    if value.chars().any(char::is_whitespace) {
        return Err(refuse(
            "base revision",
            format!("{value:?} contains whitespace"),
        ));
    }
    Ok(value)
}

/// Checks the caller's own runner arguments (`huddle test -- …`). They are options by design,
/// so a leading `-` is fine; each must be non-empty, at most [`MAX_ARG_LEN`] characters and
/// free of control characters, and there may be at most [`MAX_RUNNER_ARGS`]. Which options a
/// runner refuses (its reporter and output flags, watch mode) is each adapter's to say.
pub fn check_runner_args(args: &[String]) -> Result<(), GuardError> {
    if args.len() > MAX_RUNNER_ARGS {
        return Err(refuse(
            "runner arguments",
            format!("there are {}; the limit is {MAX_RUNNER_ARGS}", args.len()),
        ));
    }
    for arg in args {
        bounded("runner argument", arg, MAX_ARG_LEN)?;
    }
    Ok(())
}

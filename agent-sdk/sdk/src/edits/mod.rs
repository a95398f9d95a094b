//! Search/replace edits proposed by the code-developer model, and everything that stands
//! between them and the project:
//! - [`guard`]: where an edit may go (inside the project root; never `.git/`, lockfiles, CI
//!   configuration or files outside the role's allowlist; test files only when the role or the
//!   task allows) and what it may not do (add skip or ignore markers, `@ts-ignore`, `as any`;
//!   delete assertions; change what a test expects, outside the executor's mode).
//! - [`test_config`]: test configuration (`pytest.ini`, `conftest.py`, jest/vitest/mocha
//!   config, the test sections of `pyproject.toml`, `package.json`…) is protected like lockfiles.
//! - [`diff`]: the unified diff of a fix, for the bus and the task result.
//! - [`apply`]: every edit of a reply applied atomically — all or none — after each `search`
//!   matched exactly once.
//! - [`snapshot`]: the touched files as they were, so a fix that regressed can be rolled back.
//!
//! Nothing a model says is ever executed: edits only ever become file contents.
//!
//! [`guard`]: crate::edits::guard
//! [`apply`]: mod@crate::edits::apply
//! [`snapshot`]: crate::edits::snapshot
//! [`test_config`]: crate::edits::test_config
//! [`diff`]: crate::edits::diff

pub mod apply;
pub mod diff;
pub mod guard;
pub mod snapshot;
pub mod test_config;
pub mod verdict_rules;

pub use apply::{apply, Applied};
pub use guard::{is_test_file, Policy};
pub use snapshot::Snapshot;

use serde::{Deserialize, Serialize};

/// Replace the one occurrence of `search` in `path` with `replace`. An empty `search` creates
/// `path`, which must not exist yet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Edit {
    /// The file, relative to the project root, with `/` separators.
    pub path: String,
    /// Text that occurs exactly once in the file.
    pub search: String,
    /// What it becomes.
    pub replace: String,
}

/// Why an edit (and so the whole reply) was refused. The text goes back to the model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// The reply had no edits.
    #[error("the reply contained no edits")]
    Empty,
    /// The path leaves the project root (absolute, `..`, or through a symlink).
    #[error("`{path}` is outside the project; every path must stay inside the project root")]
    Outside {
        /// The path as given.
        path: String,
    },
    /// A path no edit may touch.
    #[error("`{path}` may not be edited: {why}")]
    Forbidden {
        /// The path as given.
        path: String,
        /// `.git/`, a lockfile, CI configuration…
        why: String,
    },
    /// A path outside what this role may change.
    #[error("`{path}` is not a test file; {role} may change test files only")]
    NotAllowed {
        /// The path as given.
        path: String,
        /// Who was refused (`an executor`).
        role: String,
    },
    /// A path outside the task's scope.
    #[error("`{path}` is outside this task's scope ({scope})")]
    OutOfScope {
        /// The path as given.
        path: String,
        /// The allowed prefixes.
        scope: String,
    },
    /// The search text is not in the file.
    #[error("the search text for `{path}` was not found; copy it exactly from the file as shown")]
    NoMatch {
        /// The file.
        path: String,
    },
    /// The search text occurs more than once.
    #[error("the search text for `{path}` matches {count} times; it must match exactly once (include more surrounding lines)")]
    Ambiguous {
        /// The file.
        path: String,
        /// How often it matched.
        count: usize,
    },
    /// An empty search for a file that exists, or a new file that does.
    #[error("`{path}` does not exist{hint}")]
    Missing {
        /// The file.
        path: String,
        /// What to do instead.
        hint: String,
    },
    /// The edit adds a skip, ignore or type-escape marker.
    #[error(
        "the edit to `{path}` adds `{marker}`; tests must not be skipped, ignored or silenced"
    )]
    Marker {
        /// The file.
        path: String,
        /// The marker, as written.
        marker: String,
    },
    /// Test configuration (which tests run, and how).
    #[error("`{path}` may not be edited: {why}; test configuration decides which tests run (a task may allow it with metadata `allowTestConfigEdits: true`)")]
    TestConfig {
        /// The path as given.
        path: String,
        /// What is protected.
        why: String,
    },
    /// A test file, for a role that repairs code.
    #[error("`{path}` is a test file; the tester fixes the code under test, not its tests (a task may allow test edits with metadata `allowTestEdits: true`)")]
    TestEdit {
        /// The path as given.
        path: String,
    },
    /// The edit changes what a test expects.
    #[error("the edit to `{path}` changes what a test expects (`{line}`); fix the code under test instead")]
    ExpectationChanged {
        /// The file.
        path: String,
        /// The expectation as it was.
        line: String,
    },
    /// The edit removes assertions.
    #[error("the edit to `{path}` deletes assertions ({before} before, {after} after); fix the code or the expectation instead")]
    AssertionsDeleted {
        /// The file.
        path: String,
        /// Assertions before the edit.
        before: usize,
        /// Assertions after.
        after: usize,
    },
    /// The edit adds what changes a verdict without fixing the code (a runner hook, a
    /// shadowing module, code that knows it is tested, an object equal to anything…).
    #[error("the edit to `{path}` {why} ({rule}); a fix changes the code under test, never how its tests run or are judged")]
    VerdictRule {
        /// The file.
        path: String,
        /// The rule's name.
        rule: String,
        /// What it would do.
        why: String,
    },
    /// Reading or writing a file failed.
    #[error("`{path}`: {message}")]
    Io {
        /// The file.
        path: String,
        /// The error.
        message: String,
    },
}

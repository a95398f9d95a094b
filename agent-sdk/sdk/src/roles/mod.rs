//! The built-in tester and executor roles: the I/O glue that runs the real test runner, asks
//! the code-developer model for fixes, applies them under the guardrails and posts what
//! happened, driven by the pure cycles of [`crate::cycles`].
//!
//! - [`TesterRole`] (`TEST-*`) and [`ExecutorRole`] (`QARUN-*`) are [`crate::Handler`]s for a
//!   [`crate::Worker`]; `huddle worker --role tester|executor --project DIR` runs them.
//! - [`RoleSettings`]: the project, the cycle limits and the model (or why there is none).
//! - [`report`]: the messages (`impl_progress`, `test_result`, `fix_required`, `error`);
//!   [`summary`]: the `test_result` data and its markdown.
//!
//! A task completes when the quality gate holds on a full run and fails otherwise, with the
//! reason; the coordinator decides what follows.
//!
//! [`TesterRole`]: crate::roles::TesterRole
//! [`ExecutorRole`]: crate::roles::ExecutorRole
//! [`RoleSettings`]: crate::roles::RoleSettings
//! [`report`]: crate::roles::report
//! [`summary`]: crate::roles::summary

mod ask_person;
mod changes;
pub(crate) mod checkout;
mod decisions;
mod drive;
mod evidence;
pub mod executor;
pub mod history;
mod patience;
mod repair;
pub mod report;
mod runs;
mod scope;
pub mod settings;
pub(crate) mod setup;
pub mod summary;
pub mod tester;
mod tiered;
mod tree_watch;
mod verify;

pub use executor::ExecutorRole;
pub use history::checkout_project;
pub use report::{CycleSummary, Reporter};
pub use scope::scope_of_tests;
pub use settings::{RoleSettings, WorkerFile};
pub use tester::TesterRole;

use crate::runners::RunnerError;

/// Why a role could not run a task's cycle at all (as opposed to tests that failed).
#[derive(Debug, thiserror::Error)]
pub enum RoleError {
    /// The runner could not run (not installed, bad project, …).
    #[error("{source}")]
    Runner {
        /// The framework.
        tool: String,
        /// What the runner layer said.
        source: RunnerError,
    },
    /// The first run hit the timeout.
    #[error("{tool} timed out after {secs}s; its process group was killed")]
    Timeout {
        /// The framework.
        tool: String,
        /// The timeout.
        secs: u64,
    },
    /// The runner crashed or exited without reporting any test.
    #[error("{tool} crashed or exited without reporting tests: {output}")]
    Crashed {
        /// The framework.
        tool: String,
        /// The end of its output, scrubbed.
        output: String,
    },
    /// Settings that cannot work (a config file, `cycle_config`, task metadata).
    #[error("{0}")]
    Config(String),
    /// A full run changed project files: its verdict would rest on a tree no one reviewed.
    #[error("the {tool} run wrote project files, so its verdict does not stand: {}", files.join(", "))]
    TreeWritten {
        /// The framework.
        tool: String,
        /// The files added, removed or changed (outside caches), at most 20.
        files: Vec<String>,
    },
}

impl RoleError {
    /// The `error` message's `code` and `tool`.
    pub fn code_and_tool(&self) -> (&'static str, &str) {
        match self {
            RoleError::Runner {
                tool,
                source: RunnerError::MissingTool { .. },
            } => ("runner_missing", tool),
            RoleError::Runner {
                source: RunnerError::NotDetected { .. },
                ..
            } => ("framework_not_detected", ""),
            RoleError::Runner { tool, .. } => ("runner_failed", tool),
            RoleError::Timeout { tool, .. } => ("runner_timeout", tool),
            RoleError::Crashed { tool, .. } => ("runner_crashed", tool),
            RoleError::Config(_) => ("bad_config", ""),
            RoleError::TreeWritten { tool, .. } => ("tree_written", tool),
        }
    }
}

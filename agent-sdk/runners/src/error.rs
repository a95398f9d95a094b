//! The runner layer's one error type. Each variant says what went wrong in words a person can
//! act on; [`RunnerError::exit_code`] maps it to the `huddle test` exit status.

use crate::guard::GuardError;
use std::io;
use std::path::PathBuf;

/// Why a test run could not be made (as opposed to tests that ran and failed).
#[derive(Debug, thiserror::Error)]
pub enum RunnerError {
    /// The runner's program is not installed; `hint` says how to install it.
    #[error("{tool} not found: {hint}")]
    MissingTool {
        /// The program that is missing (`npx/node`, `pytest`, `go`, …).
        tool: String,
        /// How to install it.
        hint: String,
    },
    /// A user-supplied argument was refused before reaching any process.
    #[error(transparent)]
    Guard(#[from] GuardError),
    /// No framework was chosen and none could be detected.
    #[error("no test framework detected in {dir}; looked for: {looked_for}")]
    NotDetected {
        /// The project directory.
        dir: PathBuf,
        /// What detection checked, in order.
        looked_for: String,
    },
    /// An explicit framework name that is not one of ours.
    #[error(transparent)]
    UnknownFramework(#[from] crate::framework::UnknownFramework),
    /// The framework cannot do what was asked (e.g. coverage for cargo).
    #[error("{0}")]
    Unsupported(String),
    /// `--failed` without a previous run to take the failures from.
    #[error("no previous run in {0}: run the tests once before using --failed")]
    NoPreviousRun(PathBuf),
    /// The project directory does not exist or is not a directory.
    #[error("project directory {0} does not exist")]
    NoProject(PathBuf),
    /// Reading changed files from git failed.
    #[error("git: {0}")]
    Git(String),
    /// `--sandbox required` without a working bubblewrap, or the services' sandbox failed.
    #[error("{0}")]
    Sandbox(String),
    /// A file or process operation failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
}

impl RunnerError {
    /// Wraps an I/O error with what was being done.
    pub fn io(context: impl Into<String>, source: io::Error) -> Self {
        RunnerError::Io {
            context: context.into(),
            source,
        }
    }

    /// The `huddle test` exit status for this error: 127 for a missing tool (as a shell says
    /// "command not found"), 2 for anything the caller can fix in the invocation, 1 otherwise.
    pub fn exit_code(&self) -> i32 {
        match self {
            RunnerError::MissingTool { .. } => 127,
            RunnerError::Guard(_)
            | RunnerError::NotDetected { .. }
            | RunnerError::UnknownFramework(_)
            | RunnerError::Unsupported(_)
            | RunnerError::NoPreviousRun(_)
            | RunnerError::NoProject(_)
            | RunnerError::Sandbox(_) => 2,
            RunnerError::Git(_) | RunnerError::Io { .. } => 1,
        }
    }
}

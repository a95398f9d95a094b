//! What a caller asks of a run: which tests, with which limits.

use std::path::PathBuf;
use std::time::Duration;

/// Which tests to run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Selection {
    /// The whole suite.
    #[default]
    All,
    /// These test files or packages (relative to the project): `tests/test_x.py`,
    /// `src/x.test.js`, `./calc` for go, `tests/x.rs` or a member crate's directory for cargo.
    Paths(Vec<String>),
    /// The tests related to these changed source files, by the runner's own dependency
    /// tracking (jest `--findRelatedTests`, vitest `related`).
    Related(Vec<String>),
    /// These tests, by the node ids of an earlier report (`--failed`).
    Tests(Vec<String>),
}

/// Which reporter a runner runs with. pytest: `Auto` is huddle's own reporter plugin (shipped
/// in the crate, nothing to install; the cheapest on large suites), `Never` pytest's JUnit
/// XML, `Require` pytest-json-report (failing, naming it, when it is missing). cargo: `Auto`
/// uses cargo-nextest when installed, `Never` libtest's lines, `Require` nextest or an error.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum PluginPolicy {
    /// pytest: huddle's own reporter; cargo: cargo-nextest when it is installed.
    #[default]
    Auto,
    /// pytest: its JUnit XML; cargo: libtest's output.
    Never,
    /// pytest-json-report or cargo-nextest, failing, naming it, when it is missing.
    Require,
}

/// Everything about a run but the project and framework.
#[derive(Debug, Clone, PartialEq)]
pub struct RunOptions {
    /// A test-name filter, mapped to `-k`, `-t`, `--grep`, `-run` or cargo's filter.
    pub filter: Option<String>,
    /// Which tests to run.
    pub selection: Selection,
    /// The runner is stopped (whole process group) after this long.
    pub timeout: Duration,
    /// Time between SIGTERM and SIGKILL at the timeout.
    pub kill_grace: Duration,
    /// Measure line coverage.
    pub coverage: bool,
    /// Extra environment for the runner; a `PATH` here is also where programs are looked up.
    /// `{run_dir}` in a value becomes the run's directory ([`crate::adapters::RUN_DIR`]).
    pub env: Vec<(String, String)>,
    /// Plugin use.
    pub plugins: PluginPolicy,
    /// Where run directories go; default `<project>/.huddle/runs`.
    pub runs_dir: Option<PathBuf>,
    /// Arguments for the runner itself (`huddle test -- …`): jest, vitest and mocha only.
    /// They go after the options taken from the project's test script (replacing any the
    /// script sets) and before huddle's reporter flags; [`crate::guard::check_runner_args`]
    /// and each adapter's refusals (reporter and output options, watch mode) apply.
    pub runner_args: Vec<String>,
    /// How much of the run huddle keeps (failure texts, output, run directories).
    pub output: crate::limits::OutputLimits,
    /// go build tags (`go test -tags=…`), for tests behind `//go:build integration`; go only.
    pub build_tags: Vec<String>,
    /// Keep the project's own files out of the runner's start-up, for a verdict re-run in a
    /// clean copy: pytest runs with `PYTHONSAFEPATH` (the project root is not put first on
    /// `sys.path`, so a module there cannot stand in for pytest or the standard library; it is
    /// appended after them instead) and without its cache.
    pub isolated: bool,
    /// Whether the runner (and every process it starts) runs in a bubblewrap sandbox
    /// ([`crate::sandbox`]); default [`crate::Sandbox::process_default`].
    pub sandbox: crate::sandbox::Sandbox,
    /// The network namespace the sandboxed run joins (its tier's services' loopback); set by
    /// the tiers pipeline. `None`: a namespace of its own.
    pub sandbox_net: Option<crate::sandbox::NetNs>,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            filter: None,
            selection: Selection::All,
            timeout: Duration::from_secs(15 * 60),
            kill_grace: Duration::from_secs(5),
            coverage: false,
            env: Vec::new(),
            plugins: PluginPolicy::Auto,
            runs_dir: None,
            runner_args: Vec::new(),
            output: crate::limits::OutputLimits::default(),
            build_tags: Vec::new(),
            isolated: false,
            sandbox: crate::sandbox::Sandbox::process_default(),
            sandbox_net: None,
        }
    }
}

/// Tests a runner would run, without running them.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Listing {
    /// Test ids in the report's node id form, as a run of the same selection would report
    /// them (skipped tests included; files that fail to load are in `errors` instead).
    pub tests: Vec<String>,
    /// Files or packages that failed to load while listing, with their messages.
    pub errors: Vec<String>,
}

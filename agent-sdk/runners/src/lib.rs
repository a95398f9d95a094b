//! huddle's test runners: detect a project's framework, run its real suite through the
//! framework's own CLI with a machine-readable reporter, and turn the result into one
//! runner-agnostic [`Report`] (the shape of pytest-json-report) plus JUnit XML, in a run
//! directory. Needs no daemon and no client: a library for anything that runs tests.
//!
//! A tour:
//! - [`detect`]: which framework, and why ([`detect::detect`], `huddle test --explain`).
//! - [`adapters`]: one per framework (pytest, jest, vitest, mocha, go, cargo): the command
//!   line and the parser of its output.
//! - [`run`]: [`run_tests`] and [`list_tests`], the entry points; `--failed` support.
//! - [`process`]: spawning with argv only, in a process group, with a timeout that kills the
//!   group (exit 124, `[TIMEOUT]`).
//! - [`report`], [`junit`], [`rundir`]: the report, JUnit XML in and out, `.huddle/runs/`.
//! - [`affected`], [`conventions`]: `--affected` from git changes; [`go_importers`],
//!   [`python_imports`], [`cargo_dependents`]: the dependency graphs it follows.
//! - [`limits`]: caps on failure texts, output and runner files; pruning old runs.
//! - [`live`]: tests finished and failed so far while a run goes (`huddle test`'s live line).
//! - [`guard`]: checks on every user value that reaches a runner's argv.
//! - [`scrub`]: secret removal and truncation for anything sent to a model or the bus.
//! - [`text`]: runner output made parseable whatever bytes a test wrote (U+FFFD, never a lost
//!   run).
//! - [`sandbox`]: runs in bubblewrap (read-only host, no network, hidden homes).
//! - [`coverage`]: istanbul, coverage.py and go profiles → one line percentage.
//!
//! The `huddle test` command built on these lives in the `huddle-cli` crate. Feature `clap`
//! derives `clap::ValueEnum` on the option types for command lines.

#![forbid(unsafe_code)]

pub mod adapters;
pub mod affected;
pub mod artifacts;
pub mod cargo_dependents;
pub mod conventions;
pub mod coverage;
pub mod detect;
mod detect_node;
pub mod doctests;
pub mod error;
pub mod framework;
pub mod go_importers;
pub mod guard;
pub mod human;
pub mod junit;
pub mod limits;
pub mod live;
pub mod options;
pub mod process;
pub mod pytest_config;
pub mod python_imports;
pub mod report;
pub mod run;
pub mod rundir;
pub mod sandbox;
pub mod scrub;
pub mod text;
pub mod tiers;
pub mod tools;

pub use detect::{Detection, Overrides};
pub use error::RunnerError;
pub use framework::Framework;
pub use limits::OutputLimits;
pub use options::{Listing, PluginPolicy, RunOptions, Selection};
pub use report::{Coverage, Outcome, Report, Summary, TestResult};
pub use run::{list_tests, run_tests, RunOutcome};
pub use sandbox::Sandbox;

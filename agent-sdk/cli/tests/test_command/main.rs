//! `huddle test` as a command, driven in process through `huddle_cli::test_command`: the
//! summary, `--json`, exit codes, detection and the guard on user values, on real fixtures.

// The runner tests' helpers: private fixture copies and loud failures for missing tools.
#[allow(dead_code)]
#[path = "../../../runners/tests/adapters/common.rs"]
mod common;

// The runner tests' corpus of fake secrets and the leaking test projects made from it.
#[allow(dead_code)]
#[path = "../../../runners/tests/adapters/secrets.rs"]
mod secrets;

mod cli;
mod detect;
mod guard;
mod live_line;
mod process;
mod sandbox;
mod scrub;
mod tiers;
mod tiers_go_node;
mod tiers_patterns;

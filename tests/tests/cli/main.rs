//! The `huddle` command line as a real process against a real daemon, its `--json` output
//! parsed and checked.
//! One test binary per area; a module per concern.

mod admin;
mod claims;
mod demo;
mod errors;
mod history;
mod memory;
mod messages;
mod people;
mod project_claims;
mod scope_claims;
mod scope_from_tests;
mod spend;
mod task_merge;
mod tasks;
mod team_transfer;
mod worker;

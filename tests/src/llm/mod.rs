//! Shared by the `fixcycle` and `cli` tests: an OpenAI-compatible stub of the
//! code-developer model ([`stub`]), private copies of fixture projects with bugs ([`projects`]),
//! and a team with tester and executor workers on a test daemon ([`team`]).
pub mod projects;
pub mod stub;
pub mod team;

pub use stub::LlmStub;

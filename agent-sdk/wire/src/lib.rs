//! Wire types: the JSON bodies of huddle's HTTP API, shared by the daemon and every client.
//!
//! Field names are camelCase on the wire (`blockedBy`, `activeForm`, `passRate`) because agents
//! already know them from shared task lists. Request types refuse unknown fields so that a typo
//! such as `blocked_by` is an error rather than a silently ignored dependency.

#![forbid(unsafe_code)]

mod agents;
pub mod codes;
mod errors;
mod gates;
pub mod history;
pub mod limits;
mod memory;
mod messages;
mod readiness;
mod spend;
mod tasks;
mod team_settings;
mod test_history;
mod webhooks;
pub mod whole;

pub use agents::*;
pub use errors::*;
pub use gates::*;
pub use memory::*;
pub use messages::*;
pub use readiness::*;
pub use spend::*;
pub use tasks::*;
pub use team_settings::*;
pub use test_history::*;
pub use webhooks::*;

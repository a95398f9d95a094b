//! The library half of the `huddle` command line: commands whose logic tests drive in
//! process (the binary in `main.rs` parses arguments and prints).
//!
//! - [`test_command`]: `huddle test`, the runner layer as a command; needs no daemon.
//! - [`tiers_command`]: `huddle test --tiers`, the tiers pipeline and its `--explain`.
//! - [`live_line`]: its live line on a terminal (tests done, failures so far, elapsed).

#![forbid(unsafe_code)]

pub mod live_line;
pub mod test_command;
pub mod tiers_command;

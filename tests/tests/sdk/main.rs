//! The typed client (`huddle_sdk::Client`) against a real daemon: every endpoint, retries and
//! reconnecting streams.
//! One test binary per area; a module per concern.

mod claims;
mod failover;
mod history;
mod messages;
mod retries;
mod streams;
mod tasks;

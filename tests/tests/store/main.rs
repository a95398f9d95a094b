//! The store contract, pinned against the `Store` trait rather than one backend.
//! One test binary per area; a module per concern.

mod attempts;
mod batch_edges;
mod batched_writes;
mod bus;
mod contract;
mod counts;
mod counts_replicas;
mod cycles;
mod dependencies;
mod empty_claims;
mod failures;
mod history;
mod message_with_memory;
mod prefix_claims;
mod progress;
mod project_claims;
mod published;
mod quotas;
mod retention;
mod search;
mod spend;
mod statistics;
mod task_event_layout;
mod team_admin;
mod team_populate;
mod transfer_columns;
mod wide_graphs;

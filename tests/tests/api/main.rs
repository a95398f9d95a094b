//! The HTTP API against a real `huddled` on port 0: tasks, claims, messages, memory, streams.
//! One test binary per area; a module per concern.

mod claim_wakes;
mod claims;
mod evidence;
mod gate_deadlines;
mod gate_decisions;
mod gate_support;
mod gates;
mod history;
mod holder_questions;
mod import_checks;
mod memory;
mod messages;
mod page_bytes;
mod person_gates;
mod presence;
mod progress;
mod project_claims;
mod quotas;
mod retention;
mod scope_claims;
mod search;
mod spend;
mod stream_lag;
mod streams;
mod task_create_batch;
mod task_events;
mod tasks;
mod team_admin;
mod team_purge;
mod webhooks;

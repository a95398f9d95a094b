//! Operators' interfaces: `/metrics` in the Prometheus text format, read with Prometheus's own
//! Python parser (`metrics.rs`), and `huddled`'s JSON logs with a request id per request, read
//! from a real `huddled` process (`logs.rs`). One test binary per area; a module per concern.

mod credentials;
mod logs;
mod metrics;
mod team_metrics;

//! Leases for LLM turns. An agent on MCP works in model steps of minutes (one `Bash` call can
//! run a suite for several), so its claims default to `[tasks] mcp_default_lease_ms` and any
//! tool call it makes renews the leases of the tasks it holds — at most once a third of that
//! lease per agent, so the renewal costs a read and a heartbeat per held task every few
//! minutes, not per call. An agent that stops calling loses its tasks when the lease runs out.

use crate::http::authz::{self, Action};
use crate::http::AppState;
use crate::store::{Caller, TaskFilter};
use huddle_wire::TaskStatus;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Past this many agents remembered, entries older than a lease are dropped.
const PRUNE_AT: usize = 10_000;

/// The default lease of an MCP claim: the setting, within the daemon's lease bounds.
pub fn mcp_lease_ms(state: &AppState) -> u64 {
    let t = &state.settings.tasks;
    t.mcp_default_lease_ms.clamp(t.min_lease_ms, t.max_lease_ms)
}

/// When each agent's leases were last renewed, per (team, agent): grows with the agents that
/// call tools, which admins and coordinators create.
#[derive(Default)]
pub struct Renewals(Mutex<HashMap<(i64, String), Instant>>);

impl Renewals {
    /// Renews `caller`'s held tasks to the MCP lease from now when due. Failures are logged:
    /// the call itself goes on, and a heartbeat still renews explicitly.
    pub async fn touch(&self, state: &AppState, caller: &Caller) {
        if authz::permit(caller, Action::ActOnClaims).is_err() {
            return;
        }
        let lease_ms = mcp_lease_ms(state);
        if !self.due(caller, Duration::from_millis(lease_ms / 3)) {
            return;
        }
        let filter = TaskFilter {
            status: Some(TaskStatus::InProgress),
            claimed_by: Some(caller.agent.clone()),
            limit: 100,
            ..TaskFilter::default()
        };
        let held = match state.store.list_tasks(caller.team_id, filter).await {
            Ok(page) => page.items,
            Err(e) => {
                tracing::warn!(agent = %caller.agent, error = %e, "cannot renew MCP leases");
                return;
            }
        };
        for task in held {
            if let Err(e) = state.store.heartbeat(caller, &task.id, lease_ms).await {
                // Lost meanwhile (completed, expired): nothing to renew.
                tracing::debug!(agent = %caller.agent, task = %task.id, error = %e, "not renewed");
            }
        }
    }

    /// Whether `caller`'s last renewal is older than `every`; marks it renewed now if so.
    fn due(&self, caller: &Caller, every: Duration) -> bool {
        let now = Instant::now();
        let mut last = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let key = (caller.team_id, caller.agent.clone());
        if last
            .get(&key)
            .is_some_and(|at| now.duration_since(*at) < every)
        {
            return false;
        }
        if last.len() >= PRUNE_AT {
            last.retain(|_, at| now.duration_since(*at) < every * 3);
        }
        last.insert(key, now);
        true
    }
}

//! Presence: "last seen" moves on every authenticated request, and stays current while an agent
//! waits in a long poll or follows a stream — not only when it writes.
//!
//! Requests mark the agent in memory ([`Presence::seen`], [`Presence::waiting`]); once a second
//! [`flush`] writes what moved by more than a second to the store in one batch, so presence is
//! shared by every replica and costs no write per request. The map holds only agents seen since
//! the last flush or waiting now: an idle agent's entry is dropped once written.

use crate::store::{Caller, Store};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Writes closer together than this are not worth a write.
const RESOLUTION_MS: i64 = 1_000;

#[derive(Default)]
pub struct Presence {
    agents: Mutex<HashMap<(i64, String), Seen>>,
}

#[derive(Default)]
struct Seen {
    last_ms: i64,
    /// Long polls and streams open now: while any is, the agent is seen at every flush.
    waiting: u32,
    written_ms: i64,
}

impl Presence {
    /// The agent made a request now.
    pub fn seen(&self, caller: &Caller) {
        let mut agents = self.lock();
        let seen = agents.entry(key(caller)).or_default();
        seen.last_ms = seen.last_ms.max(now_ms());
    }

    /// The agent waits (long poll, stream) until the guard is dropped.
    pub fn waiting(self: &Arc<Self>, caller: &Caller) -> Waiting {
        let mut agents = self.lock();
        let seen = agents.entry(key(caller)).or_default();
        seen.waiting += 1;
        seen.last_ms = seen.last_ms.max(now_ms());
        Waiting {
            presence: self.clone(),
            key: key(caller),
        }
    }

    /// What to write now: (team, agent, seen at ms) for each agent seen a second or more past
    /// its last write; forgets idle agents once written.
    pub fn due(&self, now_ms: i64) -> Vec<(i64, String, i64)> {
        let mut agents = self.lock();
        let mut due = Vec::new();
        agents.retain(|(team, agent), seen| {
            let at = if seen.waiting > 0 {
                now_ms
            } else {
                seen.last_ms
            };
            if at >= seen.written_ms + RESOLUTION_MS {
                due.push((*team, agent.clone(), at));
                seen.written_ms = at;
            }
            seen.waiting > 0 || seen.last_ms > seen.written_ms
        });
        due
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(i64, String), Seen>> {
        self.agents.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn key(caller: &Caller) -> (i64, String) {
    (caller.team_id, caller.agent.clone())
}

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// An agent's open wait; see [`Presence::waiting`].
pub struct Waiting {
    presence: Arc<Presence>,
    key: (i64, String),
}

impl Drop for Waiting {
    fn drop(&mut self) {
        let mut agents = self.presence.lock();
        let seen = agents.entry(self.key.clone()).or_default();
        seen.waiting = seen.waiting.saturating_sub(1);
        seen.last_ms = seen.last_ms.max(now_ms());
    }
}

/// Once a second, writes the agents seen since the last write (and those waiting now).
pub async fn flush(presence: Arc<Presence>, store: Arc<dyn Store>, shutdown: CancellationToken) {
    let mut tick = tokio::time::interval(Duration::from_millis(RESOLUTION_MS as u64));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            _ = shutdown.cancelled() => return,
        }
        let due = presence.due(now_ms());
        if due.is_empty() {
            continue;
        }
        if let Err(e) = store.record_presence(due).await {
            // Presence is a hint: the next request or flush writes it again.
            tracing::debug!(error = %e, "could not record agents' presence");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use huddle_wire::Role;

    fn agent(name: &str) -> Caller {
        Caller {
            team_id: 1,
            team: "qa".into(),
            agent: name.into(),
            role: Role::Tester,
        }
    }

    #[test]
    fn a_request_is_written_once_and_an_idle_agent_is_forgotten() {
        let presence = Presence::default();
        presence.seen(&agent("a"));
        let first = presence.due(now_ms());
        assert_eq!(first.len(), 1);
        assert!(presence.due(now_ms() + 5_000).is_empty());
        assert!(presence.lock().is_empty(), "written and idle: forgotten");
    }

    #[test]
    fn a_waiting_agent_is_seen_at_every_flush_until_it_stops_waiting() {
        let presence = Arc::new(Presence::default());
        let wait = presence.waiting(&agent("w"));
        let t = now_ms();
        assert_eq!(presence.due(t).len(), 1);
        assert_eq!(presence.due(t + 2_000)[0].2, t + 2_000);
        assert_eq!(presence.due(t + 4_000)[0].2, t + 4_000);
        drop(wait);
        assert_eq!(
            presence.lock().len(),
            1,
            "the end of the wait is still to be written"
        );
    }
}

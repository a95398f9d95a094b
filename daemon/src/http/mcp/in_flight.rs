//! MCP tool calls in flight, so a client that leaves ends what it asked for.
//!
//! The transport is stateless: a `notifications/cancelled` arrives as a POST of its own, which
//! the transport acknowledges and drops. This registry maps each running `tools/call` — keyed by
//! the calling agent and its JSON-RPC id, so one agent can never cancel another's call — to the
//! [`Departed`] token the tool watches. The same token fires when the call's HTTP request is
//! dropped (the client disconnected or timed out) before it was answered.
//!
//! Two clients sharing one agent's token both number their requests from 1, so two running
//! calls can have the same key. A cancel names no client, so for such a key it cancels neither
//! (the other client's call must not end); each still ends when its own request is dropped.
//!
//! Bounded by construction: an entry lives exactly as long as its request, and requests are
//! bounded by the connection cap.

use crate::store::Caller;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio_util::sync::CancellationToken;

/// Fires when the client of a tool call is gone: cancelled, disconnected or timed out.
#[derive(Clone, Debug, Default)]
pub struct Departed(pub CancellationToken);

/// (team, agent, JSON-RPC id as JSON text).
type Key = (i64, String, String);

#[derive(Default)]
pub struct InFlight {
    /// The running calls with each key: each call's token, with a serial that tells it from
    /// another call with the same id.
    calls: Mutex<HashMap<Key, Vec<(u64, CancellationToken)>>>,
    serial: AtomicU64,
}

impl InFlight {
    /// Registers a call; the returned guard unregisters it when the request ends, and fires its
    /// token unless [`CallGuard::answered`] was called first.
    pub fn register(self: &Arc<Self>, caller: &Caller, id: &serde_json::Value) -> CallGuard {
        let key = key(caller, id);
        let token = CancellationToken::new();
        let serial = self.serial.fetch_add(1, Ordering::Relaxed);
        self.lock()
            .entry(key.clone())
            .or_default()
            .push((serial, token.clone()));
        CallGuard {
            registry: self.clone(),
            key,
            serial,
            token,
            answered: false,
        }
    }

    /// Cancels the caller's call with this id, if exactly one is running; whether it did.
    pub fn cancel(&self, caller: &Caller, id: &serde_json::Value) -> bool {
        match self.lock().get(&key(caller, id)).map(Vec::as_slice) {
            Some([(_, token)]) => {
                token.cancel();
                true
            }
            Some([_, _, ..]) => {
                tracing::debug!(agent = %caller.agent, %id, "cancel names several running calls; none cancelled");
                false
            }
            _ => false,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Key, Vec<(u64, CancellationToken)>>> {
        // A panic while holding this lock leaves the map consistent (single inserts/removes).
        self.calls.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn key(caller: &Caller, id: &serde_json::Value) -> Key {
    (caller.team_id, caller.agent.clone(), id.to_string())
}

/// One registered call; see [`InFlight::register`].
pub struct CallGuard {
    registry: Arc<InFlight>,
    key: Key,
    serial: u64,
    token: CancellationToken,
    answered: bool,
}

impl CallGuard {
    pub fn departed(&self) -> Departed {
        Departed(self.token.clone())
    }

    /// The answer is on its way: dropping the guard no longer means the client left.
    pub fn answered(mut self) {
        self.answered = true;
    }
}

impl Drop for CallGuard {
    fn drop(&mut self) {
        if !self.answered {
            self.token.cancel();
        }
        let mut calls = self.registry.lock();
        if let Some(running) = calls.get_mut(&self.key) {
            running.retain(|(s, _)| *s != self.serial);
            if running.is_empty() {
                calls.remove(&self.key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::InFlight;
    use crate::store::Caller;
    use huddle_wire::Role;
    use serde_json::json;
    use std::sync::Arc;

    fn caller() -> Caller {
        Caller {
            team_id: 1,
            team: "qa".into(),
            agent: "tester".into(),
            role: Role::Tester,
        }
    }

    /// Two clients of one token, both with call id 1: a cancel cannot tell whose it is, so
    /// neither ends; once one has been answered, the cancel reaches the other.
    #[test]
    fn a_cancel_ends_only_an_unambiguous_call() {
        let registry = Arc::new(InFlight::default());
        let first = registry.register(&caller(), &json!(1));
        let second = registry.register(&caller(), &json!(1));
        assert!(!registry.cancel(&caller(), &json!(1)));
        assert!(!first.departed().0.is_cancelled());
        assert!(!second.departed().0.is_cancelled());
        let second_departed = second.departed();
        first.answered();
        assert!(registry.cancel(&caller(), &json!(1)));
        assert!(second_departed.0.is_cancelled());
        drop(second);
        assert!(
            registry.lock().is_empty(),
            "every entry removed with its request"
        );
    }
}

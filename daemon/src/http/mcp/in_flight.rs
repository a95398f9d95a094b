//! MCP tool calls in flight, so a client that leaves ends what it asked for.
//!
//! The transport is stateless: a `notifications/cancelled` arrives as a POST of its own, which
//! the transport acknowledges and drops. This registry maps each running `tools/call` — keyed by
//! the calling agent and its JSON-RPC id, so one agent can never cancel another's call — to the
//! [`Departed`] token the tool watches. The same token fires when the call's HTTP request is
//! dropped (the client disconnected or timed out) before it was answered.
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
    /// Each call's token, with a serial that tells a call from a later one reusing its id.
    calls: Mutex<HashMap<Key, (u64, CancellationToken)>>,
    serial: AtomicU64,
}

impl InFlight {
    /// Registers a call; the returned guard unregisters it when the request ends, and fires its
    /// token unless [`CallGuard::answered`] was called first.
    pub fn register(self: &Arc<Self>, caller: &Caller, id: &serde_json::Value) -> CallGuard {
        let key = key(caller, id);
        let token = CancellationToken::new();
        let serial = self.serial.fetch_add(1, Ordering::Relaxed);
        self.lock().insert(key.clone(), (serial, token.clone()));
        CallGuard {
            registry: self.clone(),
            key,
            serial,
            token,
            answered: false,
        }
    }

    /// Cancels the caller's call with this id, if it is running; whether one was.
    pub fn cancel(&self, caller: &Caller, id: &serde_json::Value) -> bool {
        match self.lock().get(&key(caller, id)) {
            Some((_, token)) => {
                token.cancel();
                true
            }
            None => false,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Key, (u64, CancellationToken)>> {
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
        // A later call that reused the id owns the entry now: leave it.
        if calls.get(&self.key).is_some_and(|(s, _)| *s == self.serial) {
            calls.remove(&self.key);
        }
    }
}

//! Token → caller cache. Resolving a bearer token is on every request's path; a database read
//! per request would cost a thread hop and a query, so resolved identities stay in memory.
//! Agents are never renamed or moved between teams, so an entry can only go stale by the token
//! being revoked, and revocation must call [`AuthCache::forget`].

use crate::store::Caller;
use std::collections::HashMap;
use std::sync::RwLock;

/// Bounded: past `capacity` entries the cache starts over rather than grow without limit.
pub struct AuthCache {
    entries: RwLock<HashMap<String, Caller>>,
    capacity: usize,
}

impl AuthCache {
    pub fn new(capacity: usize) -> Self {
        AuthCache {
            entries: RwLock::new(HashMap::new()),
            capacity: capacity.max(1),
        }
    }

    pub fn get(&self, token_hash: &str) -> Option<Caller> {
        self.entries
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(token_hash)
            .cloned()
    }

    pub fn insert(&self, token_hash: String, caller: Caller) {
        let mut entries = self.entries.write().unwrap_or_else(|p| p.into_inner());
        if entries.len() >= self.capacity {
            entries.clear();
        }
        entries.insert(token_hash, caller);
    }

    /// Drops every token of an agent: its token was revoked or rotated, possibly by another
    /// replica (the store's listener reports those through the hub).
    pub fn forget_agent(&self, team_id: i64, agent: &str) {
        self.entries
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|_, c| !(c.team_id == team_id && c.agent == agent));
    }

    /// Drops everything (revocations may have been missed).
    pub fn clear(&self) {
        self.entries
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
    }

    /// Drops a token (revoked or rotated) so the next request re-checks the store.
    pub fn forget(&self, token_hash: &str) {
        self.entries
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .remove(token_hash);
    }
}

//! Token → caller cache, and the revocations that end what a token started.
//!
//! Resolving a bearer token is on every request's path; a database read per request would cost
//! a thread hop and a query, so resolved identities stay in memory. Agents are never renamed or
//! moved between teams, so an entry can only go stale by the token being revoked, and
//! revocation must call [`AuthCache::revoke`] after its write has committed.
//!
//! A first use (cache miss) can overlap a revocation: the lookup reads the token as valid, the
//! revocation commits and evicts, then the lookup inserts what it read. To rule that out every
//! revocation bumps an epoch under the cache's lock, a lookup notes the epoch *before* reading
//! the store, and inserts only if no revocation happened since. The same epochs let long polls
//! and streams end when their agent is revoked after they authenticated, whatever their backlog:
//! they check [`AuthCache::revoked_since`] when the epoch moves and before every item they send.

use crate::store::Caller;
use std::collections::HashMap;
use std::sync::RwLock;
use tokio::sync::watch;

/// Bounded: past `capacity` entries the cache starts over rather than grow without limit.
pub struct AuthCache {
    inner: RwLock<Inner>,
    /// Counts revocations; a watch never lags, so a stalled stream still sees the latest.
    epoch_changed: watch::Sender<u64>,
    capacity: usize,
}

struct Inner {
    entries: HashMap<String, Caller>,
    /// Number of revocations so far.
    epoch: u64,
    /// `(team_id, agent)` → the epoch of its latest revocation and, for a revocation
    /// reported by another replica, the agent's token that was still valid after it (a
    /// rotation's new token: what it started is not ended by the notice of its own rotation).
    /// One entry per agent revoked while this process runs; past the cache's capacity (a
    /// coordinator can add and revoke agents under new names without end) it is replaced by
    /// `everyone_at`, see [`AuthCache::bump`].
    revoked: HashMap<(i64, String), (u64, Option<TokenId>)>,
    /// The epoch of the latest [`AuthCache::clear`]: everyone counts as revoked then.
    everyone_at: u64,
    /// Deleted teams → the epoch of their deletion: every agent of the team counts as revoked
    /// then. One entry per team deleted while this process runs.
    deleted_teams: HashMap<i64, u64>,
}

/// The revocation epoch at which a request's identity was established, and by which token,
/// kept in the request's extensions by the identity extractor so long polls and streams can
/// tell whether their token was revoked after they were let in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AuthEpoch {
    pub at: u64,
    pub token: TokenId,
}

/// A token, named by the first 64 bits of its SHA-256 (the cache's key).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TokenId(pub u64);

impl TokenId {
    pub fn of(token_hash: &str) -> TokenId {
        let prefix = token_hash.get(..16).unwrap_or(token_hash);
        TokenId(u64::from_str_radix(prefix, 16).unwrap_or(0))
    }
}

impl AuthEpoch {
    /// The same epoch, established by the token with this hash.
    pub fn by(self, token_hash: &str) -> AuthEpoch {
        AuthEpoch {
            at: self.at,
            token: TokenId::of(token_hash),
        }
    }
}

impl AuthCache {
    pub fn new(capacity: usize) -> Self {
        AuthCache {
            inner: RwLock::new(Inner {
                entries: HashMap::new(),
                epoch: 0,
                revoked: HashMap::new(),
                everyone_at: 0,
                deleted_teams: HashMap::new(),
            }),
            epoch_changed: watch::channel(0).0,
            capacity: capacity.max(1),
        }
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Inner> {
        self.inner.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Inner> {
        self.inner.write().unwrap_or_else(|p| p.into_inner())
    }

    /// The cached caller and the epoch at which it was known valid.
    pub fn get(&self, token_hash: &str) -> Option<(Caller, AuthEpoch)> {
        let inner = self.read();
        let caller = inner.entries.get(token_hash)?.clone();
        Some((
            caller,
            AuthEpoch {
                at: inner.epoch,
                token: TokenId::of(token_hash),
            },
        ))
    }

    /// The current epoch; read it before asking the store, and pass it to [`Self::insert`].
    pub fn epoch(&self) -> AuthEpoch {
        AuthEpoch {
            at: self.read().epoch,
            token: TokenId::default(),
        }
    }

    /// Caches what the store said at `seen` unless a revocation happened since (then the
    /// answer may be stale and the next request asks the store again).
    pub fn insert(&self, token_hash: String, caller: Caller, seen: AuthEpoch) {
        let mut inner = self.write();
        if inner.epoch != seen.at {
            return;
        }
        if inner.entries.len() >= self.capacity {
            inner.entries.clear();
        }
        inner.entries.insert(token_hash, caller);
    }

    /// A token of `agent` was revoked or rotated (the store has committed): drops it from the
    /// cache and ends whatever the agent started before now.
    pub fn revoke(&self, token_hash: &str, team_id: i64, agent: &str) {
        self.bump(|inner, epoch| {
            inner.entries.remove(token_hash);
            inner
                .entries
                .retain(|_, c| !(c.team_id == team_id && c.agent == agent));
            inner
                .revoked
                .insert((team_id, agent.to_string()), (epoch, None));
        });
    }

    /// Like [`Self::revoke`] without the token: a revocation made by another replica (the
    /// store's listener reports those through the hub, with the agent's token that is valid
    /// now, if any). Every other token of the agent is dropped and what it started ends.
    pub fn forget_agent(&self, team_id: i64, agent: &str, still_valid: Option<&str>) {
        let valid = still_valid.map(TokenId::of);
        self.bump(|inner, epoch| {
            inner.entries.retain(|hash, c| {
                !(c.team_id == team_id && c.agent == agent) || Some(TokenId::of(hash)) == valid
            });
            inner
                .revoked
                .insert((team_id, agent.to_string()), (epoch, valid));
        });
    }

    /// The team was deleted (the store has committed): drops its agents' tokens and ends
    /// whatever they started. Safe to call more than once.
    pub fn forget_team(&self, team_id: i64) {
        self.bump(|inner, epoch| {
            inner.entries.retain(|_, c| c.team_id != team_id);
            inner.deleted_teams.insert(team_id, epoch);
        });
    }

    /// Revocations may have been missed: drops everything and ends every long poll and stream
    /// (their clients reconnect and authenticate again).
    pub fn clear(&self) {
        self.bump(|inner, epoch| {
            inner.entries.clear();
            inner.everyone_at = epoch;
        });
    }

    /// Applies `change` under the lock with the next epoch, then announces the epoch. When the
    /// remembered revocations outgrow the capacity they are forgotten and everything started
    /// before now ends instead (clients reconnect and authenticate again): bounded memory for
    /// one round of reconnections.
    fn bump(&self, change: impl FnOnce(&mut Inner, u64)) {
        let epoch = {
            let mut inner = self.write();
            inner.epoch += 1;
            let epoch = inner.epoch;
            change(&mut inner, epoch);
            if inner.revoked.len() + inner.deleted_teams.len() > self.capacity {
                inner.revoked.clear();
                inner.deleted_teams.clear();
                inner.everyone_at = epoch;
            }
            epoch
        };
        self.epoch_changed.send_replace(epoch);
    }

    /// Whether `agent` was revoked after a request authenticated at `since`.
    pub fn revoked_since(&self, team_id: i64, agent: &str, since: AuthEpoch) -> bool {
        let inner = self.read();
        inner.epoch > since.at
            && (inner.everyone_at > since.at
                || inner
                    .deleted_teams
                    .get(&team_id)
                    .is_some_and(|at| *at > since.at)
                || inner
                    .revoked
                    .get(&(team_id, agent.to_string()))
                    .is_some_and(|(at, valid)| *at > since.at && *valid != Some(since.token)))
    }

    /// A watch on the epoch, for [`Revocation`].
    pub fn watch(&self) -> watch::Receiver<u64> {
        self.epoch_changed.subscribe()
    }
}

/// One long poll's or stream's view of whether its agent has been revoked since it started.
pub struct Revocation {
    epochs: watch::Receiver<u64>,
    team_id: i64,
    agent: String,
    since: AuthEpoch,
    revoked: bool,
}

impl Revocation {
    pub fn new(cache: &AuthCache, caller: &Caller, since: AuthEpoch) -> Self {
        // Subscribed before the first check, so no revocation slips between the two.
        let mut epochs = cache.watch();
        epochs.mark_changed();
        Revocation {
            epochs,
            team_id: caller.team_id,
            agent: caller.agent.clone(),
            since,
            revoked: false,
        }
    }

    /// Cheap unless some revocation happened since the last call (an atomic read).
    pub fn is_revoked(&mut self, cache: &AuthCache) -> bool {
        if !self.revoked && self.epochs.has_changed().unwrap_or(false) {
            self.epochs.borrow_and_update();
            self.revoked = cache.revoked_since(self.team_id, &self.agent, self.since);
        }
        self.revoked
    }

    /// Completes once the agent has been revoked; pending forever otherwise.
    pub async fn revoked(&mut self, cache: &AuthCache) {
        loop {
            if self.is_revoked(cache) {
                return;
            }
            if self.epochs.changed().await.is_err() {
                std::future::pending::<()>().await;
            }
            // `changed` marked the value seen; look at the map again.
            self.epochs.mark_changed();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use huddle_wire::Role;

    fn caller() -> Caller {
        Caller {
            team_id: 1,
            team: "qa".into(),
            agent: "tester".into(),
            role: Role::Tester,
        }
    }

    /// Agents added and revoked under new names without end: the remembered revocations stay
    /// within the capacity, and what started before they were forgotten still ends.
    #[test]
    fn remembered_revocations_stay_bounded() {
        let cache = AuthCache::new(4);
        let before = cache.epoch();
        for i in 0..10 {
            cache.revoke(&format!("{i:064x}"), 1, &format!("agent-{i}"));
            assert!(cache.read().revoked.len() <= 4);
        }
        assert!(
            cache.revoked_since(1, "agent-0", before),
            "a stream of a forgotten revocation still ends"
        );
        let after = cache.epoch();
        assert!(!cache.revoked_since(1, "agent-9", after));
        cache.revoke(&format!("{:064x}", 99), 1, "agent-99");
        assert!(cache.revoked_since(1, "agent-99", after));
        assert!(!cache.revoked_since(1, "tester", after), "only agent-99");
    }

    /// The interleaving that kept a revoked token alive: the store is read, the revocation
    /// commits and evicts, then the stale answer is inserted.
    #[test]
    fn a_lookup_that_overlapped_a_revocation_is_not_cached() {
        let cache = AuthCache::new(10);
        let seen = cache.epoch();
        cache.revoke("h", 1, "tester");
        cache.insert("h".into(), caller(), seen);
        assert!(cache.get("h").is_none());
        assert!(cache.revoked_since(1, "tester", seen));
        let now = cache.epoch();
        cache.insert("h2".into(), caller(), now);
        assert!(cache.get("h2").is_some());
        assert!(!cache.revoked_since(1, "tester", now));
        assert!(!cache.revoked_since(1, "other", seen));
    }

    /// A rotation reported by another replica ends what the old token started, not what the
    /// new one started (possibly before the notice arrived), and keeps the new one cached.
    #[test]
    fn a_remote_rotation_spares_the_new_token() {
        let old = "aaaaaaaaaaaaaaaa11";
        let new = "bbbbbbbbbbbbbbbb22";
        let cache = AuthCache::new(10);
        cache.insert(old.into(), caller(), cache.epoch());
        let by_old = cache.get(old).unwrap().1;
        cache.insert(new.into(), caller(), cache.epoch());
        let by_new = cache.get(new).unwrap().1;
        cache.forget_agent(1, "tester", Some(new));
        assert!(cache.get(old).is_none());
        assert!(cache.get(new).is_some());
        assert!(cache.revoked_since(1, "tester", by_old));
        assert!(!cache.revoked_since(1, "tester", by_new));
        // A revocation (no token left) ends both.
        cache.forget_agent(1, "tester", None);
        assert!(cache.revoked_since(1, "tester", by_new));
        assert!(cache.get(new).is_none());
    }
}

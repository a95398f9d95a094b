//! Limits that need state: a request rate per token (token bucket, 429 with `Retry-After`), a
//! count of open streams, and failed authentications per client address.
//!
//! The rate and the per-token and per-team stream caps are the deployment's: with N replicas
//! live ([`Replicas`]), a request costs N of its bucket's cells and a replica allows its share
//! of each stream cap. The per-address caps stay per replica.

use super::error::ApiError;
use crate::config::LimitSettings;
use crate::replicas::Replicas;
use axum::http::StatusCode;
use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota};
use huddle_wire::codes;
use std::collections::HashMap;
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex};
use std::time::Instant;

pub struct RequestRate {
    limiter: DefaultKeyedRateLimiter<String>,
    clock: DefaultClock,
    burst: NonZeroU32,
    replicas: Arc<Replicas>,
}

impl RequestRate {
    pub fn new(limits: &LimitSettings, replicas: Arc<Replicas>) -> Self {
        let per_minute =
            NonZeroU32::new(limits.requests_per_minute.clamp(1, u32::MAX as u64) as u32)
                .expect("clamped");
        let burst =
            NonZeroU32::new(limits.burst.clamp(1, u32::MAX as u64) as u32).expect("clamped");
        RequestRate {
            limiter: governor::RateLimiter::keyed(Quota::per_minute(per_minute).allow_burst(burst)),
            clock: DefaultClock::default(),
            burst,
            replicas,
        }
    }

    /// Takes one request from `key`'s bucket, or answers 429 saying when to retry. With N
    /// replicas live a request costs N cells, so each replica lets through 1/N of the rate and
    /// of the burst, and all of them together the configured rate (the burst at least N).
    pub fn check(&self, key: &str) -> Result<(), ApiError> {
        let cost = u32::try_from(self.replicas.live())
            .ok()
            .and_then(NonZeroU32::new)
            .unwrap_or(NonZeroU32::MIN)
            .min(self.burst);
        match self
            .limiter
            .check_key_n(&key.to_string(), cost)
            .unwrap_or(Ok(()))
        {
            Ok(()) => Ok(()),
            Err(not_until) => {
                let wait = not_until.wait_time_from(self.clock.now());
                let secs = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
                Err(ApiError::new(
                    StatusCode::TOO_MANY_REQUESTS,
                    codes::RATE_LIMITED,
                    format!("too many requests for this token; retry in {secs} s"),
                )
                .with_retry_after(secs.max(1)))
            }
        }
    }

    /// Tokens with a bucket (for tests that the map tracks valid tokens only).
    pub fn tracked(&self) -> usize {
        self.limiter.len()
    }

    /// Forgets idle buckets so the map stays small.
    pub fn shrink(&self) {
        self.limiter.retain_recent();
        self.limiter.shrink_to_fit();
    }
}

/// Open streams, counted per agent (one token per agent), per team and per client address, so
/// neither one team nor one address can take every connection with streams.
pub struct StreamSlots {
    per_agent: usize,
    per_team: usize,
    per_address: usize,
    open: Arc<Mutex<HashMap<SlotKey, usize>>>,
    /// The per-agent and per-team caps are shared among the live replicas.
    replicas: Arc<Replicas>,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum SlotKey {
    Agent(i64, String),
    Team(i64),
    Address(IpAddr),
}

/// Held for a stream's lifetime; frees its counts on drop.
pub struct StreamSlot {
    keys: Vec<SlotKey>,
    open: Arc<Mutex<HashMap<SlotKey, usize>>>,
}

impl StreamSlots {
    pub fn new(limits: &LimitSettings, replicas: Arc<Replicas>) -> Self {
        StreamSlots {
            per_agent: limits.max_streams_per_token.max(1),
            per_team: limits.max_streams_per_team.max(1),
            per_address: limits.max_streams_per_address.max(1),
            open: Arc::default(),
            replicas,
        }
    }

    /// What this replica allows of a shared cap, and how the refusal says so.
    fn shared(&self, cap: usize) -> (usize, String) {
        let live = self.replicas.live();
        let share = self.replicas.share(cap);
        let told = if live > 1 {
            format!(" here (this replica's share of {cap} across {live} replicas)")
        } else {
            String::new()
        };
        (share, told)
    }

    /// A slot for one more stream of `agent` in `team_id` from `client` (unknown in
    /// in-process tests), or 429 naming the count that is full.
    pub fn acquire(
        &self,
        team_id: i64,
        agent: &str,
        client: Option<IpAddr>,
    ) -> Result<StreamSlot, ApiError> {
        let (per_agent, agent_told) = self.shared(self.per_agent);
        let (per_team, team_told) = self.shared(self.per_team);
        let mut keys = vec![
            (
                SlotKey::Agent(team_id, agent.to_string()),
                per_agent,
                format!("{agent} already has {per_agent} open streams{agent_told}; close one first"),
            ),
            (
                SlotKey::Team(team_id),
                per_team,
                format!(
                    "the team already has {per_team} open streams{team_told} ([limits] max_streams_per_team); close one first"
                ),
            ),
        ];
        if let Some(ip) = client {
            keys.push((
                SlotKey::Address(ip),
                self.per_address,
                format!(
                    "{ip} already has {} open streams ([limits] max_streams_per_address); close one first",
                    self.per_address
                ),
            ));
        }
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        for (key, max, message) in &keys {
            if open.get(key).copied().unwrap_or(0) >= *max {
                return Err(ApiError::new(
                    StatusCode::TOO_MANY_REQUESTS,
                    codes::TOO_MANY_STREAMS,
                    message.clone(),
                )
                .with_retry_after(1));
            }
        }
        let keys: Vec<SlotKey> = keys.into_iter().map(|(key, _, _)| key).collect();
        for key in &keys {
            *open.entry(key.clone()).or_default() += 1;
        }
        crate::metrics::stream_opened(1.0);
        Ok(StreamSlot {
            keys,
            open: self.open.clone(),
        })
    }
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        crate::metrics::stream_opened(-1.0);
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        for key in &self.keys {
            if let Some(count) = open.get_mut(key) {
                *count -= 1;
                if *count == 0 {
                    open.remove(key);
                }
            }
        }
    }
}

/// Failed authentications per client address: a token bucket per address, so guessing tokens
/// (or flooding with junk ones) gets 429 once the bucket is empty. Every uncached token is still
/// looked up (one indexed read), so a valid token behind a busy address is never refused for
/// others' failures; only failures are counted. Requests with a cached, valid token never
/// touch it. The map is bounded: at `max_clients` addresses, idle
/// buckets (full again, so forgetting them loses nothing) are dropped, and if every bucket is
/// busy, new addresses share one overflow bucket.
pub struct FailedAuth {
    per_sec: f64,
    burst: f64,
    max_clients: usize,
    buckets: Mutex<FailedAuthBuckets>,
}

#[derive(Default)]
struct FailedAuthBuckets {
    by_addr: HashMap<IpAddr, Bucket>,
    overflow: Option<Bucket>,
}

#[derive(Clone, Copy)]
struct Bucket {
    tokens: f64,
    updated: Instant,
}

impl Bucket {
    fn refill(&mut self, now: Instant, per_sec: f64, burst: f64) {
        let elapsed = now.saturating_duration_since(self.updated).as_secs_f64();
        self.tokens = (self.tokens + elapsed * per_sec).min(burst);
        self.updated = now;
    }
}

impl FailedAuth {
    pub fn new(limits: &LimitSettings) -> Self {
        FailedAuth {
            per_sec: limits.failed_auth_per_minute.max(1) as f64 / 60.0,
            burst: limits.failed_auth_burst.max(1) as f64,
            max_clients: limits.max_tracked_clients.max(1),
            buckets: Mutex::default(),
        }
    }

    /// 429 if `addr` has used up its failed attempts; called for a token that failed.
    pub fn check(&self, addr: IpAddr) -> Result<(), ApiError> {
        let now = Instant::now();
        let mut buckets = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        let FailedAuthBuckets { by_addr, overflow } = &mut *buckets;
        let full = by_addr.len() >= self.max_clients;
        let bucket = match by_addr.get_mut(&addr) {
            Some(bucket) => bucket,
            None if full => match overflow.as_mut() {
                Some(bucket) => bucket,
                None => return Ok(()),
            },
            None => return Ok(()),
        };
        bucket.refill(now, self.per_sec, self.burst);
        if bucket.tokens >= 1.0 {
            return Ok(());
        }
        let secs = ((1.0 - bucket.tokens) / self.per_sec).ceil().max(1.0) as u64;
        Err(ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            codes::RATE_LIMITED,
            format!("too many failed authentications from this address; retry in {secs} s"),
        )
        .with_retry_after(secs))
    }

    /// Counts one failed authentication against `addr`.
    pub fn failed(&self, addr: IpAddr) {
        let now = Instant::now();
        let (per_sec, burst) = (self.per_sec, self.burst);
        let mut buckets = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        let FailedAuthBuckets { by_addr, overflow } = &mut *buckets;
        if !by_addr.contains_key(&addr) && by_addr.len() >= self.max_clients {
            by_addr.retain(|_, b| {
                b.refill(now, per_sec, burst);
                b.tokens < burst
            });
        }
        let fresh = Bucket {
            tokens: burst,
            updated: now,
        };
        let bucket = if by_addr.contains_key(&addr) || by_addr.len() < self.max_clients {
            by_addr.entry(addr).or_insert(fresh)
        } else {
            overflow.get_or_insert(fresh)
        };
        bucket.refill(now, per_sec, burst);
        bucket.tokens = (bucket.tokens - 1.0).max(0.0);
    }

    /// Addresses with a bucket of their own (for tests of the bound).
    pub fn tracked(&self) -> usize {
        self.buckets
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .by_addr
            .len()
    }
}

/// The client's address when served over TCP (`None` for in-process `oneshot` tests).
pub struct ClientAddr(pub Option<IpAddr>);

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for ClientAddr {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        _state: &S,
    ) -> Result<Self, Self::Rejection> {
        Ok(ClientAddr(
            parts
                .extensions
                .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
                .map(|c| c.0.ip()),
        ))
    }
}

//! Per-token limits that need state: a request rate (token bucket, 429 with `Retry-After`) and a
//! count of open streams.

use super::error::ApiError;
use crate::config::LimitSettings;
use axum::http::StatusCode;
use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota};
use huddle_wire::codes;
use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::{Arc, Mutex};

pub struct RequestRate {
    limiter: DefaultKeyedRateLimiter<String>,
    clock: DefaultClock,
}

impl RequestRate {
    pub fn new(limits: &LimitSettings) -> Self {
        let per_minute =
            NonZeroU32::new(limits.requests_per_minute.clamp(1, u32::MAX as u64) as u32)
                .expect("clamped");
        let burst =
            NonZeroU32::new(limits.burst.clamp(1, u32::MAX as u64) as u32).expect("clamped");
        RequestRate {
            limiter: governor::RateLimiter::keyed(Quota::per_minute(per_minute).allow_burst(burst)),
            clock: DefaultClock::default(),
        }
    }

    /// Takes one request from `key`'s bucket, or answers 429 saying when to retry.
    pub fn check(&self, key: &str) -> Result<(), ApiError> {
        match self.limiter.check_key(&key.to_string()) {
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

    /// Forgets idle buckets so the map stays small.
    pub fn shrink(&self) {
        self.limiter.retain_recent();
        self.limiter.shrink_to_fit();
    }
}

/// Open streams per agent (one token per agent).
pub struct StreamSlots {
    max: usize,
    open: Arc<Mutex<HashMap<(i64, String), usize>>>,
}

/// Held for a stream's lifetime; frees the slot on drop.
pub struct StreamSlot {
    key: (i64, String),
    open: Arc<Mutex<HashMap<(i64, String), usize>>>,
}

impl StreamSlots {
    pub fn new(max: usize) -> Self {
        StreamSlots {
            max: max.max(1),
            open: Arc::default(),
        }
    }

    pub fn acquire(&self, team_id: i64, agent: &str) -> Result<StreamSlot, ApiError> {
        let key = (team_id, agent.to_string());
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        let count = open.entry(key.clone()).or_default();
        if *count >= self.max {
            return Err(ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                codes::TOO_MANY_STREAMS,
                format!(
                    "{agent} already has {} open streams; close one first",
                    self.max
                ),
            )
            .with_retry_after(1));
        }
        *count += 1;
        crate::metrics::stream_opened(1.0);
        Ok(StreamSlot {
            key,
            open: self.open.clone(),
        })
    }
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        crate::metrics::stream_opened(-1.0);
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(count) = open.get_mut(&self.key) {
            *count -= 1;
            if *count == 0 {
                open.remove(&self.key);
            }
        }
    }
}

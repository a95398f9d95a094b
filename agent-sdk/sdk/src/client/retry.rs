//! Exponential backoff with jitter, for calls that are safe to repeat and for reconnecting.

use rand::Rng;
use std::time::Duration;

/// How a [`crate::Client`] retries calls that are safe to repeat (reads, claims, heartbeats,
/// posts with an idempotency key) when the daemon is unreachable or answers 429/502/503/504.
///
/// Calls that are not safe to repeat (creating tasks, completing, patching…) are sent once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Tries in all, the first included; `1` disables retries.
    pub max_attempts: u32,
    /// The pause before the first retry; it doubles after each.
    pub initial_delay: Duration,
    /// The longest pause between two tries.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    /// Four tries over about a second: quick enough that a stopped daemon gives a clear error
    /// rather than a hang, long enough to ride out a restart's blip.
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 4,
            initial_delay: Duration::from_millis(100),
            max_delay: Duration::from_secs(2),
        }
    }
}

impl RetryPolicy {
    /// No retries: every call is tried once.
    pub fn never() -> Self {
        RetryPolicy {
            max_attempts: 1,
            ..RetryPolicy::default()
        }
    }

    /// A fresh backoff sequence following this policy's delays.
    pub fn backoff(&self) -> Backoff {
        Backoff::new(self.initial_delay, self.max_delay)
    }
}

/// A sequence of growing pauses: each is the previous doubled (up to a cap), with "equal
/// jitter" (half fixed, half random) so that many clients that failed together do not all come
/// back at the same instant.
#[derive(Debug, Clone)]
pub struct Backoff {
    initial: Duration,
    max: Duration,
    current: Duration,
}

impl Backoff {
    /// Pauses starting near `initial` and never above `max`.
    pub fn new(initial: Duration, max: Duration) -> Backoff {
        let initial = initial.max(Duration::from_millis(1));
        Backoff {
            initial,
            max: max.max(initial),
            current: initial,
        }
    }

    /// The next pause to take, and grows the following one.
    pub fn next_delay(&mut self) -> Duration {
        let base = self.current;
        self.current = (self.current * 2).min(self.max);
        let half = base / 2;
        let jitter_ms = rand::thread_rng().gen_range(0..=half.as_millis() as u64);
        half + Duration::from_millis(jitter_ms)
    }

    /// Back to the first, shortest pause (after a success).
    pub fn reset(&mut self) {
        self.current = self.initial;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_grow_to_the_cap_and_stay_within_jitter_bounds() {
        let mut b = Backoff::new(Duration::from_millis(100), Duration::from_millis(800));
        let bases = [100, 200, 400, 800, 800];
        for base in bases {
            let d = b.next_delay().as_millis() as u64;
            assert!(
                d >= base / 2 && d <= base,
                "{d} outside [{}, {base}]",
                base / 2
            );
        }
        b.reset();
        assert!(b.next_delay() <= Duration::from_millis(100));
    }
}

//! Team writes that arrived but are not in the writer's queue yet.
//!
//! A lease sweep is judged as of when it was sent, and it runs after every job sent before it,
//! so a heartbeat sent before the sweep is applied before the lease is judged. A team's job
//! may first wait for a slot in its team's queue (`fair_queue::Admission`) behind that team's
//! own backlog; a sweep sent meanwhile would overtake it. So every team job is registered here
//! from its arrival until it is sent, and a sweep judges as of the oldest arrival still
//! registered (a flooding team delays expiry by its own queue's wait, never expires a lease
//! early).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

#[derive(Clone, Default)]
pub struct Unsent {
    /// Arrival (ms since the epoch) → how many registered jobs arrived then.
    arrivals: Arc<Mutex<BTreeMap<i64, usize>>>,
}

/// One registered job; dropping it (once the job is sent, or given up) unregisters it.
pub struct Arrival {
    at_ms: i64,
    arrivals: Arc<Mutex<BTreeMap<i64, usize>>>,
}

impl Unsent {
    /// Registers a job arriving now. The clock is read under the lock, so a sweep's cutoff
    /// taken before it never postdates an arrival the sweep did not see.
    pub fn arrive(&self) -> Arrival {
        let mut arrivals = self.arrivals.lock().unwrap_or_else(|p| p.into_inner());
        let at_ms = chrono::Utc::now().timestamp_millis();
        *arrivals.entry(at_ms).or_default() += 1;
        crate::metrics::writer_unsent(1.0);
        Arrival {
            at_ms,
            arrivals: self.arrivals.clone(),
        }
    }

    /// Now, or the oldest arrival still unsent if earlier: the time a sweep may judge as of.
    pub fn cutoff_ms(&self) -> i64 {
        let arrivals = self.arrivals.lock().unwrap_or_else(|p| p.into_inner());
        let now = chrono::Utc::now().timestamp_millis();
        arrivals
            .keys()
            .next()
            .map_or(now, |oldest| now.min(*oldest))
    }
}

impl Drop for Arrival {
    fn drop(&mut self) {
        let mut arrivals = self.arrivals.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = arrivals.get_mut(&self.at_ms) {
            *n -= 1;
            if *n == 0 {
                arrivals.remove(&self.at_ms);
            }
        }
        crate::metrics::writer_unsent(-1.0);
    }
}

#[cfg(test)]
mod tests {
    use super::Unsent;

    #[test]
    fn the_cutoff_is_the_oldest_unsent_arrival_until_it_is_sent() {
        let unsent = Unsent::default();
        let first = unsent.arrive();
        let second = unsent.arrive();
        let held = first.at_ms;
        assert_eq!(unsent.cutoff_ms(), held);
        drop(first);
        assert_eq!(unsent.cutoff_ms(), second.at_ms);
        drop(second);
        std::thread::sleep(std::time::Duration::from_millis(5)); // the clock moves on
        assert!(unsent.cutoff_ms() > held, "nothing unsent: now");
    }
}

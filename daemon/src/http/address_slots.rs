//! Open connections per client address, so one address cannot hold the whole connection cap: a
//! client that reconnects as fast as its connections are closed would otherwise keep taking the
//! slots other clients free, and they would get 503 instead (95 of 119 new connections refused
//! in the attack this answers).
//!
//! An IPv6 client is counted by its /64 (one host usually has the whole prefix), an IPv4 client
//! (or IPv4-mapped IPv6) by its address. The map holds only addresses with a connection open,
//! so it is bounded by the connection cap.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

/// Counts per address; `limit` 0 counts nothing and refuses nothing.
pub struct AddressSlots {
    limit: usize,
    open: Mutex<HashMap<IpAddr, usize>>,
}

/// One open connection of an address (of none when nothing is counted); dropping it frees
/// the slot.
pub struct AddressSlot {
    slots: Arc<AddressSlots>,
    key: Option<IpAddr>,
}

impl AddressSlots {
    pub fn new(limit: usize) -> Arc<Self> {
        Arc::new(AddressSlots {
            limit,
            open: Mutex::new(HashMap::new()),
        })
    }

    /// A slot for a connection from `peer`, or `None` when its address already holds `limit`.
    pub fn try_acquire(self: &Arc<Self>, peer: IpAddr) -> Option<AddressSlot> {
        if self.limit == 0 {
            return Some(AddressSlot {
                slots: self.clone(),
                key: None,
            });
        }
        let key = address_key(peer);
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        let count = open.entry(key).or_insert(0);
        if *count >= self.limit {
            return None;
        }
        *count += 1;
        Some(AddressSlot {
            slots: self.clone(),
            key: Some(key),
        })
    }

    #[cfg(test)]
    fn addresses(&self) -> usize {
        self.open.lock().unwrap().len()
    }
}

impl Drop for AddressSlot {
    fn drop(&mut self) {
        let Some(key) = self.key else { return };
        let mut open = self.slots.open.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(count) = open.get_mut(&key) {
            *count -= 1;
            if *count == 0 {
                open.remove(&key);
            }
        }
    }
}

/// The address a connection is counted under: IPv4 as is, IPv6 by its /64.
fn address_key(peer: IpAddr) -> IpAddr {
    match peer {
        IpAddr::V4(v4) => IpAddr::V4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let prefix = u128::from(v6) & !((1u128 << 64) - 1);
                IpAddr::V6(prefix.into())
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn an_address_holds_at_most_the_limit_and_frees_on_drop() {
        let slots = AddressSlots::new(2);
        let a = slots.try_acquire(ip("10.0.0.1")).unwrap();
        let b = slots.try_acquire(ip("10.0.0.1")).unwrap();
        assert!(slots.try_acquire(ip("10.0.0.1")).is_none());
        assert!(slots.try_acquire(ip("10.0.0.2")).is_some());
        drop(a);
        let c = slots.try_acquire(ip("10.0.0.1"));
        assert!(c.is_some());
        drop((b, c));
        assert_eq!(
            slots.addresses(),
            0,
            "addresses without connections are forgotten"
        );
    }

    #[test]
    fn ipv6_counts_by_its_64_and_mapped_ipv4_as_ipv4() {
        let slots = AddressSlots::new(1);
        let _a = slots.try_acquire(ip("2001:db8:1:2::1")).unwrap();
        assert!(slots.try_acquire(ip("2001:db8:1:2:ffff::9")).is_none());
        assert!(slots.try_acquire(ip("2001:db8:1:3::1")).is_some());
        let _b = slots.try_acquire(ip("192.0.2.7")).unwrap();
        assert!(slots.try_acquire(ip("::ffff:192.0.2.7")).is_none());
    }

    #[test]
    fn a_limit_of_zero_counts_nothing() {
        let slots = AddressSlots::new(0);
        let held: Vec<_> = (0..10).map(|_| slots.try_acquire(ip("10.0.0.1"))).collect();
        assert!(held.iter().all(Option::is_some));
        assert_eq!(slots.addresses(), 0);
    }
}

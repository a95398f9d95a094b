//! Whether an address is on the public internet, from tables that follow IANA's special-purpose
//! address registries (RFC 6890 and its updates). An IPv6 address that carries an IPv4 one
//! (IPv4-mapped, NAT64, 6to4) is judged by the IPv4 address inside it, so `64:ff9b::7f00:1`
//! is loopback like `127.0.0.1`.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::LazyLock;

/// What a range of the registry means for a webhook.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verdict {
    Public,
    NotPublic,
    /// The IPv4 address at this bit offset decides.
    CarriesIpv4At(u32),
}
use Verdict::{CarriesIpv4At, NotPublic, Public};

/// IPv4 ranges that are not globally reachable; anything else is public. Multicast and the
/// reserved 240/4 are in IANA's address-space registry rather than the special-purpose one.
const IPV4: &[(&str, u8, &str)] = &[
    ("0.0.0.0", 8, "\"this network\""),
    ("10.0.0.0", 8, "private use"),
    ("100.64.0.0", 10, "shared address space (carrier-grade NAT)"),
    ("127.0.0.0", 8, "loopback"),
    ("169.254.0.0", 16, "link local"),
    ("172.16.0.0", 12, "private use"),
    ("192.0.0.0", 24, "IETF protocol assignments"),
    ("192.0.2.0", 24, "documentation (TEST-NET-1)"),
    ("192.88.99.0", 24, "6to4 relay anycast (deprecated)"),
    ("192.168.0.0", 16, "private use"),
    ("198.18.0.0", 15, "benchmarking"),
    ("198.51.100.0", 24, "documentation (TEST-NET-2)"),
    ("203.0.113.0", 24, "documentation (TEST-NET-3)"),
    ("224.0.0.0", 4, "multicast"),
    ("240.0.0.0", 4, "reserved"),
    ("255.255.255.255", 32, "limited broadcast"),
];

/// IPv6 ranges; the longest prefix that holds an address decides, and an address in none of
/// them (outside 2000::/3, the global unicast space) is not public.
const IPV6: &[(&str, u8, Verdict, &str)] = &[
    ("::", 128, NotPublic, "unspecified"),
    ("::1", 128, NotPublic, "loopback"),
    (
        "::",
        96,
        NotPublic,
        "IPv4-compatible (deprecated, never routed)",
    ),
    ("::ffff:0:0", 96, CarriesIpv4At(96), "IPv4-mapped"),
    (
        "64:ff9b::",
        96,
        CarriesIpv4At(96),
        "NAT64, well-known prefix",
    ),
    ("64:ff9b:1::", 48, NotPublic, "NAT64, local use"),
    ("100::", 64, NotPublic, "discard only"),
    ("2000::", 3, Public, "global unicast"),
    // Teredo (2001::/32), benchmarking, ORCHID and a few anycast services: none a webhook
    // needs, and Teredo obfuscates its client's IPv4 address, so the whole block is refused.
    ("2001::", 23, NotPublic, "IETF protocol assignments"),
    ("2001:db8::", 32, NotPublic, "documentation"),
    ("2002::", 16, CarriesIpv4At(16), "6to4"),
    ("3fff::", 20, NotPublic, "documentation"),
    ("5f00::", 16, NotPublic, "segment routing SIDs"),
    ("fc00::", 7, NotPublic, "unique local"),
    ("fe80::", 10, NotPublic, "link local"),
    ("fec0::", 10, NotPublic, "site local (deprecated)"),
    ("ff00::", 8, NotPublic, "multicast"),
];

/// The tables as numbers, parsed once.
static IPV4_RANGES: LazyLock<Vec<(u32, u8)>> = LazyLock::new(|| {
    IPV4.iter()
        .map(|&(net, len, _)| {
            (
                u32::from(net.parse::<Ipv4Addr>().expect("an IPv4 network")),
                len,
            )
        })
        .collect()
});
static IPV6_RANGES: LazyLock<Vec<(u128, u8, Verdict)>> = LazyLock::new(|| {
    IPV6.iter()
        .map(|&(net, len, verdict, _)| {
            let net = net.parse::<Ipv6Addr>().expect("an IPv6 network");
            (u128::from(net), len, verdict)
        })
        .collect()
});

/// Whether an address is on the public internet.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let bits = u32::from(v4);
            !IPV4_RANGES
                .iter()
                .any(|&(net, len)| prefix_u32(bits, len) == net)
        }
        IpAddr::V6(v6) => match verdict_v6(v6) {
            Public => true,
            NotPublic => false,
            CarriesIpv4At(offset) => {
                let v4 = (u128::from(v6) >> (96 - offset)) as u32;
                is_public(IpAddr::V4(Ipv4Addr::from(v4)))
            }
        },
    }
}

fn verdict_v6(v6: Ipv6Addr) -> Verdict {
    let bits = u128::from(v6);
    IPV6_RANGES
        .iter()
        .filter(|&&(net, len, _)| prefix_u128(bits, len) == net)
        .max_by_key(|&&(_, len, _)| len)
        .map_or(NotPublic, |&(_, _, verdict)| verdict)
}

fn prefix_u32(bits: u32, len: u8) -> u32 {
    bits & u32::MAX.checked_shl(32 - u32::from(len)).unwrap_or(0)
}

fn prefix_u128(bits: u128, len: u8) -> u128 {
    bits & u128::MAX.checked_shl(128 - u32::from(len)).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table_entry_is_a_network_address() {
        for &(net, len, what) in IPV4 {
            let bits = u32::from(net.parse::<Ipv4Addr>().unwrap());
            assert_eq!(prefix_u32(bits, len), bits, "{net}/{len} ({what})");
        }
        for &(net, len, _, what) in IPV6 {
            let bits = u128::from(net.parse::<Ipv6Addr>().unwrap());
            assert_eq!(prefix_u128(bits, len), bits, "{net}/{len} ({what})");
        }
    }

    /// Each range from just inside to just outside, where that is cheap to name.
    const VERDICTS: &[(&str, bool)] = &[
        // The five addresses the review found accepted.
        ("64:ff9b::7f00:1", false),
        ("2002:7f00:1::1", false),
        ("::127.0.0.1", false),
        ("fec0::1", false),
        ("192.0.0.192", false),
        // IPv4.
        ("0.0.0.0", false),
        ("0.255.255.255", false),
        ("1.0.0.0", true),
        ("9.255.255.255", true),
        ("10.0.0.0", false),
        ("10.255.255.255", false),
        ("11.0.0.0", true),
        ("100.63.255.255", true),
        ("100.64.0.0", false),
        ("100.127.255.255", false),
        ("100.128.0.0", true),
        ("126.255.255.255", true),
        ("127.0.0.1", false),
        ("127.255.255.255", false),
        ("128.0.0.0", true),
        ("169.253.255.255", true),
        ("169.254.169.254", false),
        ("169.255.0.0", true),
        ("172.15.255.255", true),
        ("172.16.0.0", false),
        ("172.31.255.255", false),
        ("172.32.0.0", true),
        ("191.255.255.255", true),
        ("192.0.0.0", false),
        ("192.0.0.255", false),
        ("192.0.1.0", true),
        ("192.0.2.1", false),
        ("192.0.3.0", true),
        ("192.88.98.255", true),
        ("192.88.99.1", false),
        ("192.88.100.0", true),
        ("192.167.255.255", true),
        ("192.168.1.1", false),
        ("192.169.0.0", true),
        ("198.17.255.255", true),
        ("198.18.0.0", false),
        ("198.19.255.255", false),
        ("198.20.0.0", true),
        ("198.51.99.255", true),
        ("198.51.100.1", false),
        ("198.51.101.0", true),
        ("203.0.112.255", true),
        ("203.0.113.1", false),
        ("203.0.114.0", true),
        ("223.255.255.255", true),
        ("224.0.0.1", false),
        ("239.255.255.255", false),
        ("240.0.0.1", false),
        ("255.255.255.254", false),
        ("255.255.255.255", false),
        ("8.8.8.8", true),
        ("93.184.215.14", true),
        // IPv6 without an IPv4 address inside.
        ("::", false),
        ("::1", false),
        ("::2", false),
        ("100::", false),
        ("100::ffff:ffff:ffff:ffff", false),
        ("100:0:0:1::", false),
        ("1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", false),
        ("2000::1", true),
        ("2001::1", false),
        ("2001:0:4136:e378:8000:63bf:3fff:fdd2", false),
        ("2001:1ff:ffff::1", false),
        ("2001:200::1", true),
        ("2001:db7:ffff::1", true),
        ("2001:db8::1", false),
        ("2001:db9::1", true),
        ("2003::1", true),
        ("2606:4700:4700::1111", true),
        ("3ffe:ffff::1", true),
        ("3fff::1", false),
        ("3fff:fff::1", false),
        ("3fff:1000::1", true),
        ("4000::1", false),
        ("5f00::1", false),
        ("fbff::1", false),
        ("fc00::1", false),
        ("fd12:3456::1", false),
        ("fe80::1", false),
        ("febf::1", false),
        ("fec0::1", false),
        ("feff::1", false),
        ("ff02::1", false),
        // IPv6 with an IPv4 address inside: judged by it.
        ("::ffff:127.0.0.1", false),
        ("::ffff:10.0.0.1", false),
        ("::ffff:8.8.8.8", true),
        ("::8.8.8.8", false),
        ("::fffe:808:808", false),
        ("64:ff9b::127.0.0.1", false),
        ("64:ff9b::169.254.169.254", false),
        ("64:ff9b::192.168.0.1", false),
        ("64:ff9b::8.8.8.8", true),
        ("64:ff9b::1:808:808", false),
        ("64:ff9b:1::8.8.8.8", false),
        ("64:ff9b:1:ffff::1", false),
        ("64:ff9b:2::8.8.8.8", false),
        ("2002:a00:1::1", false),
        ("2002:c0a8:101::1", false),
        ("2002:a9fe:a9fe::1", false),
        ("2002:808:808::1", true),
        ("2002:5db8:d70e:1::1", true),
    ];

    #[test]
    fn each_special_range_is_refused_on_both_sides_of_its_edges() {
        let wrong: Vec<String> = VERDICTS
            .iter()
            .filter(|&&(ip, public)| is_public(ip.parse().unwrap()) != public)
            .map(|&(ip, public)| format!("{ip}: expected public={public}"))
            .collect();
        assert!(wrong.is_empty(), "{wrong:#?}");
    }
}

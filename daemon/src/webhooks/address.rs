//! Where a webhook may send: `http`/`https` URLs whose host resolves only to public addresses
//! (`public_ip.rs`; unless `[webhooks] allow_private`). The addresses checked are the ones
//! connected to, so a name that resolves differently the second time (DNS rebinding) cannot
//! slip through. A refusal does not say which address a name resolved to: only the daemon's log
//! does, so registering webhooks is no way to map the network the daemon sits in.

use super::public_ip::is_public;
use std::net::{IpAddr, SocketAddr};

/// Checks a URL's form: scheme, host, no credentials. The error says what is wrong.
pub fn check_form(raw: &str) -> Result<reqwest::Url, String> {
    let url = reqwest::Url::parse(raw).map_err(|e| format!("not a URL: {e}"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!(
            "the scheme must be http or https, not {}",
            url.scheme()
        ));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err("the URL has no host".into());
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err("put no credentials in the URL; check the signature instead".into());
    }
    if raw.len() > 2048 {
        return Err("the URL is longer than 2,048 bytes".into());
    }
    Ok(url)
}

/// The addresses to connect to for `url`, refused if any is not public (unless allowed).
pub async fn resolve(url: &reqwest::Url, allow_private: bool) -> Result<Vec<SocketAddr>, String> {
    let host = url.host_str().unwrap_or_default();
    let port = url.port_or_known_default().unwrap_or(80);
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host, port))
        .await
        .map_err(|e| format!("cannot resolve {host}: {e}"))?
        .collect();
    if addrs.is_empty() {
        return Err(format!("{host} resolves to no address"));
    }
    if !allow_private {
        if let Some(a) = addrs.iter().find(|a| !is_public(a.ip())) {
            // The address goes to the daemon's log only: a caller who may register webhooks
            // must not learn what names resolve to inside the network.
            tracing::warn!(host, address = %a.ip(), "webhook host refused: not a public address");
            let what = if host.parse::<IpAddr>().is_ok() {
                "is not a public address"
            } else {
                "resolves to a non-public address"
            };
            return Err(format!("{host} {what} ([webhooks] allow_private is off)"));
        }
    }
    Ok(addrs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_http_urls_with_a_host_and_no_credentials() {
        assert!(check_form("https://hooks.slack.com/services/T/B/X").is_ok());
        for bad in [
            "ftp://x.example/",
            "file:///etc/passwd",
            "http://u:p@x.example/",
            "nope",
        ] {
            assert!(check_form(bad).is_err(), "{bad}");
        }
    }

    #[tokio::test]
    async fn a_loopback_host_is_refused_unless_allowed() {
        let url = check_form("http://127.0.0.1:9/hook").unwrap();
        assert!(resolve(&url, false)
            .await
            .unwrap_err()
            .contains("not a public address"));
        assert_eq!(resolve(&url, true).await.unwrap().len(), 1);
    }

    #[tokio::test]
    async fn a_name_that_resolves_inside_is_refused_without_saying_to_what() {
        for raw in ["http://localhost:9/hook", "http://[64:ff9b::7f00:1]/hook"] {
            let url = check_form(raw).unwrap();
            let e = resolve(&url, false).await.unwrap_err();
            assert!(
                e.contains("non-public") || e.contains("not a public"),
                "{e}"
            );
            if raw.contains("localhost") {
                assert!(!e.contains("127.0.0.1") && !e.contains("::1"), "{e}");
            }
        }
    }
}

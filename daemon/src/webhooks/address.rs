//! Where a webhook may send: `http`/`https` URLs whose host resolves only to public addresses
//! (`public_ip.rs`; unless `[webhooks] allow_private`). The addresses checked are the ones
//! connected to, so a name that resolves differently the second time (DNS rebinding) cannot
//! slip through.

use super::public_ip::is_public;
use std::net::SocketAddr;

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
            return Err(format!(
                "{host} resolves to {}, which is not a public address ([webhooks] allow_private \
                 is off)",
                a.ip()
            ));
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
}

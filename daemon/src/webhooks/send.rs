//! One notification sent: signed with the webhook's secret, retried with a doubling wait,
//! never following a redirect, connecting only to the addresses that were checked.

use super::address;
use super::WebhookSettings;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::time::Duration;

/// How sending ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub delivered: bool,
    pub attempts: u32,
    pub http_status: Option<u16>,
    pub error: Option<String>,
}

/// `sha256=<hex>` of HMAC-SHA256 over `"{timestamp}.{body}"`: a receiver recomputes it with
/// the secret it was given, and refuses old timestamps to stop replays.
pub fn signature(secret: &str, timestamp: i64, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("any key length");
    mac.update(format!("{timestamp}.").as_bytes());
    mac.update(body);
    format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
}

/// Sends `body` to `url`, up to `settings.attempts` times.
pub async fn deliver(
    settings: &WebhookSettings,
    url: &str,
    secret: &str,
    delivery_id: &str,
    trigger: &str,
    body: &serde_json::Value,
    stop: &tokio_util::sync::CancellationToken,
) -> Outcome {
    let body = serde_json::to_vec(body).unwrap_or_default();
    let mut outcome = Outcome {
        delivered: false,
        attempts: 0,
        http_status: None,
        error: None,
    };
    let mut wait = Duration::from_millis(settings.retry_base_ms);
    while outcome.attempts < settings.attempts.max(1) {
        if outcome.attempts > 0 {
            tokio::select! {
                _ = tokio::time::sleep(wait) => {}
                _ = stop.cancelled() => break,
            }
            wait = wait.saturating_mul(2);
        }
        outcome.attempts += 1;
        match attempt(settings, url, secret, delivery_id, trigger, &body).await {
            Ok(status) if (200..300).contains(&status) => {
                outcome.delivered = true;
                outcome.http_status = Some(status);
                outcome.error = None;
                break;
            }
            Ok(status) => {
                outcome.http_status = Some(status);
                outcome.error = Some(format!("answered {status}"));
            }
            Err(e) => {
                outcome.http_status = None;
                outcome.error = Some(e);
            }
        }
    }
    outcome
}

async fn attempt(
    settings: &WebhookSettings,
    raw_url: &str,
    secret: &str,
    delivery_id: &str,
    trigger: &str,
    body: &[u8],
) -> Result<u16, String> {
    let url = address::check_form(raw_url)?;
    let addrs = address::resolve(&url, settings.allow_private).await?;
    let host = url.host_str().unwrap_or_default().to_string();
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(Duration::from_millis(settings.timeout_ms))
        .resolve_to_addrs(&host, &addrs)
        .no_proxy()
        .build()
        .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
    let timestamp = chrono::Utc::now().timestamp();
    let answer = client
        .post(url)
        .header("content-type", "application/json")
        .header(
            "user-agent",
            concat!("huddle-webhooks/", env!("CARGO_PKG_VERSION")),
        )
        .header("x-huddle-event", trigger)
        .header("x-huddle-delivery", delivery_id)
        .header("x-huddle-timestamp", timestamp.to_string())
        .header("x-huddle-signature", signature(secret, timestamp, body))
        .body(body.to_vec())
        .send()
        .await
        .map_err(|e| format!("no answer: {e}"))?;
    Ok(answer.status().as_u16())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signature_is_hmac_sha256_of_timestamp_dot_body() {
        // `printf '1.{}' | openssl dgst -sha256 -hmac key`
        let sig = signature("key", 1, b"{}");
        assert_eq!(
            sig,
            "sha256=1ba6b8171186efc613e8bcc0cbdab2748f24984d7c5a84faa2637afa0e40d224"
        );
        assert_ne!(sig, signature("other", 1, b"{}"));
        assert_ne!(sig, signature("key", 2, b"{}"));
    }
}

//! Sending one call: building the request, retrying when the call allows it, and turning the
//! answer into a typed value or an [`Error`].

use super::error::{is_transient_status, root_cause, ApiError, Error};
use super::Client;
use crate::wire::ErrorBody;
use reqwest::header::{HeaderName, HeaderValue};
use reqwest::{Method, Response, Url};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::time::Duration;

/// One HTTP call as the endpoint methods describe it.
pub(crate) struct Call {
    method: Method,
    url: Url,
    body: Option<(Vec<u8>, &'static str)>,
    headers: Vec<(HeaderName, HeaderValue)>,
    query: Vec<(&'static str, String)>,
    /// Safe to send again after a failure (reads, claims, heartbeats, keyed posts).
    retry: bool,
    /// Extra time on top of the client's timeout, for long polls that wait on purpose.
    extra_timeout: Duration,
}

impl Call {
    pub fn new(method: Method, url: Url) -> Call {
        Call {
            method,
            url,
            body: None,
            headers: Vec::new(),
            query: Vec::new(),
            retry: false,
            extra_timeout: Duration::ZERO,
        }
    }

    pub fn get(url: Url) -> Call {
        Call::new(Method::GET, url).retry()
    }

    pub fn post(url: Url) -> Call {
        Call::new(Method::POST, url)
    }

    /// Marks the call as safe to repeat.
    pub fn retry(mut self) -> Call {
        self.retry = true;
        self
    }

    pub fn json(self, body: &impl Serialize) -> Result<Call, Error> {
        self.json_as(body, "application/json")
    }

    pub fn json_as(
        mut self,
        body: &impl Serialize,
        content_type: &'static str,
    ) -> Result<Call, Error> {
        let bytes = serde_json::to_vec(body)
            .map_err(|e| Error::Config(format!("cannot encode the request body: {e}")))?;
        self.body = Some((bytes, content_type));
        Ok(self)
    }

    pub fn header(mut self, name: &'static str, value: &str) -> Result<Call, Error> {
        let value = HeaderValue::from_str(value)
            .map_err(|_| Error::Config(format!("invalid value for header {name}: {value:?}")))?;
        self.headers.push((HeaderName::from_static(name), value));
        Ok(self)
    }

    /// Adds `name=value` to the query string when `value` is present.
    pub fn query(mut self, name: &'static str, value: Option<impl ToString>) -> Call {
        if let Some(v) = value {
            self.query.push((name, v.to_string()));
        }
        self
    }

    pub fn wait(mut self, extra: Duration) -> Call {
        self.extra_timeout = extra;
        self
    }

    /// `GET /v1/teams/qa/tasks`, for error messages.
    pub fn describe(&self) -> String {
        format!("{} {}", self.method, self.url.path())
    }
}

impl Client {
    /// Sends `call`, retrying per the client's [`super::RetryPolicy`] when the call is safe to
    /// repeat, and returns the successful response or the daemon's error.
    pub(crate) async fn send(&self, call: Call) -> Result<Response, Error> {
        let policy = self.retry_policy();
        let attempts_allowed = if call.retry {
            policy.max_attempts.max(1)
        } else {
            1
        };
        let mut backoff = policy.backoff();
        let mut attempt = 0;
        // Daemons tried in a row after failing to connect, without an attempt counted.
        let mut failovers = 0;
        loop {
            attempt += 1;
            let last = attempt >= attempts_allowed;
            let base = self.base_url().clone();
            match self.send_once(&call).await {
                Ok(res) if res.status().is_success() => return Ok(res),
                Ok(res) => {
                    let status = res.status().as_u16();
                    if !last && is_transient_status(status) {
                        let pause = retry_after(&res).unwrap_or_else(|| backoff.next_delay());
                        tracing::debug!(call = %call.describe(), status, "retrying after {pause:?}");
                        tokio::time::sleep(pause.min(policy.max_delay)).await;
                        continue;
                    }
                    return Err(Error::Api(read_error(res).await));
                }
                // Not sent at all: any call may go to the next daemon, at once.
                Err(e)
                    if e.is_connect()
                        && failovers + 1 < self.base_urls().len()
                        && self.fail_over(&base) =>
                {
                    failovers += 1;
                    attempt -= 1;
                    continue;
                }
                Err(e) => {
                    failovers = 0;
                    if !last {
                        let pause = backoff.next_delay();
                        tracing::debug!(call = %call.describe(), error = %root_cause(&e), "retrying after {pause:?}");
                        tokio::time::sleep(pause).await;
                        continue;
                    }
                    return Err(Error::Unreachable {
                        url: self.urls_for_errors(),
                        reason: if e.is_timeout() {
                            "timed out".to_string()
                        } else {
                            root_cause(&e)
                        },
                        attempts: attempt,
                    });
                }
            }
        }
    }

    async fn send_once(&self, call: &Call) -> Result<Response, reqwest::Error> {
        let mut req = self
            .http()
            .request(call.method.clone(), self.on_current(&call.url))
            .timeout(self.timeout() + call.extra_timeout);
        if let Some(token) = self.token() {
            req = req.bearer_auth(token);
        }
        if !call.query.is_empty() {
            req = req.query(&call.query);
        }
        // Inside a task attempt, the daemon's spans for this request join the attempt's trace.
        if let Some(attempt) = huddle_telemetry::current() {
            req = req.header("traceparent", attempt.header());
        }
        for (name, value) in &call.headers {
            req = req.header(name, value);
        }
        if let Some((body, content_type)) = &call.body {
            req = req
                .header(reqwest::header::CONTENT_TYPE, *content_type)
                .body(body.clone());
        }
        req.send().await
    }

    /// Sends `call` and decodes its JSON answer.
    pub(crate) async fn json<T: DeserializeOwned>(&self, call: Call) -> Result<T, Error> {
        let what = call.describe();
        let res = self.send(call).await?;
        decode(res, &what).await
    }
}

impl Client {
    /// The daemon URLs, comma-separated, for an [`Error::Unreachable`].
    pub(crate) fn urls_for_errors(&self) -> String {
        self.base_urls()
            .iter()
            .map(|u| u.as_str().trim_end_matches('/'))
            .collect::<Vec<_>>()
            .join(",")
    }
}

/// Decodes a successful answer's JSON body.
pub(crate) async fn decode<T: DeserializeOwned>(res: Response, what: &str) -> Result<T, Error> {
    let bytes = res.bytes().await.map_err(|e| Error::Protocol {
        what: what.to_string(),
        reason: format!("the answer was cut short: {}", root_cause(&e)),
    })?;
    serde_json::from_slice(&bytes).map_err(|e| Error::Protocol {
        what: what.to_string(),
        reason: e.to_string(),
    })
}

/// The daemon's error body, or a stand-in naming the status when the body is not one.
pub(crate) async fn read_error(res: Response) -> ApiError {
    let status = res.status();
    let bytes = res.bytes().await.unwrap_or_default();
    match serde_json::from_slice::<ErrorBody>(&bytes) {
        Ok(body) => ApiError {
            status: status.as_u16(),
            code: body.error.code,
            message: body.error.message,
            details: body.error.details,
        },
        Err(_) => {
            let text = String::from_utf8_lossy(&bytes);
            let text = text.trim();
            ApiError {
                status: status.as_u16(),
                code: format!("http_{}", status.as_u16()),
                message: if text.is_empty() {
                    status.canonical_reason().unwrap_or("error").to_string()
                } else {
                    text.chars().take(300).collect()
                },
                details: serde_json::Value::Null,
            }
        }
    }
}

/// A `Retry-After: <seconds>` header, capped so a confused server cannot park us for long.
fn retry_after(res: &Response) -> Option<Duration> {
    let secs: u64 = res
        .headers()
        .get(reqwest::header::RETRY_AFTER)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()?;
    Some(Duration::from_secs(secs.min(10)))
}

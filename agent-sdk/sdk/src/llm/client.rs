//! One chat completion per call against `{base_url}/chat/completions`. 429 and 5xx answers are
//! retried with exponential backoff (honouring a short `Retry-After`); anything else — a 4xx, a
//! timeout, an unreachable endpoint, an answer that is not a completion — ends the attempt with
//! an [`LlmError`] that says why. The API key goes only into the `Authorization` header.

use super::budget::{estimate_tokens, Budget};
use super::config::LlmConfig;
use super::parse::{parse_completion, ChatReply};
use super::prompt;
use super::LlmError;
use reqwest::StatusCode;
use serde_json::{json, Value};
use std::time::Duration;

/// Longest wait a `Retry-After` header may ask for.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(30);

/// A client for one configured endpoint and model.
#[derive(Debug, Clone)]
pub struct LlmClient {
    http: reqwest::Client,
    config: LlmConfig,
    endpoint: reqwest::Url,
}

impl LlmClient {
    /// A client for `config`; fails on a base URL that is not http(s).
    pub fn new(config: LlmConfig) -> Result<LlmClient, LlmError> {
        let base = config.base_url.trim().trim_end_matches('/');
        let endpoint = reqwest::Url::parse(&format!("{base}/chat/completions"))
            .map_err(|e| LlmError::Config(format!("base URL {:?}: {e}", config.base_url)))?;
        if !matches!(endpoint.scheme(), "http" | "https") {
            return Err(LlmError::Config(format!(
                "base URL {:?}: expected http:// or https://",
                config.base_url
            )));
        }
        let http = reqwest::Client::builder()
            .timeout(config.timeout)
            .connect_timeout(config.timeout.min(Duration::from_secs(10)))
            .build()
            .map_err(|e| LlmError::Config(format!("cannot set up HTTP: {e}")))?;
        Ok(LlmClient {
            http,
            config,
            endpoint,
        })
    }

    /// The settings in use.
    pub fn config(&self) -> &LlmConfig {
        &self.config
    }

    /// A budget for one task, from the configured limits.
    pub fn budget(&self) -> Budget {
        Budget::new(
            self.config.max_calls_per_task,
            self.config.max_tokens_per_task,
        )
    }

    /// Sends `messages` and returns the reply, charging `budget` one call and the tokens used.
    pub async fn complete(
        &self,
        messages: &[Value],
        budget: &mut Budget,
    ) -> Result<ChatReply, LlmError> {
        let started = std::time::SystemTime::now();
        let answer = self.complete_untraced(messages, budget).await;
        if huddle_telemetry::enabled() {
            use huddle_telemetry::KeyValue;
            let mut attributes = vec![KeyValue::new(
                "gen_ai.request.model",
                self.config.model.clone(),
            )];
            match &answer {
                Ok(reply) => {
                    if let Some(u) = reply.usage {
                        attributes.push(KeyValue::new(
                            "gen_ai.usage.input_tokens",
                            u.prompt_tokens as i64,
                        ));
                        attributes.push(KeyValue::new(
                            "gen_ai.usage.output_tokens",
                            u.completion_tokens as i64,
                        ));
                    }
                }
                Err(e) => attributes.push(KeyValue::new("error.type", e.to_string())),
            }
            huddle_telemetry::record_in_attempt("model_call", started, attributes);
        }
        answer
    }

    async fn complete_untraced(
        &self,
        messages: &[Value],
        budget: &mut Budget,
    ) -> Result<ChatReply, LlmError> {
        budget.check()?;
        let mut body = json!({
            "model": self.config.model,
            "messages": messages,
            "max_tokens": self.config.max_tokens,
            "temperature": self.config.temperature,
        });
        if self.config.json_schema {
            body["response_format"] = prompt::response_format();
        }
        let prompt_chars: usize = messages
            .iter()
            .filter_map(|m| m.get("content").and_then(Value::as_str))
            .map(str::len)
            .sum();
        let mut tries = 0u32;
        let mut delay = self.config.retry_backoff;
        let reply = loop {
            tries += 1;
            match self.send(&body).await {
                Ok(v) => break v,
                Err(Failure::Status {
                    status,
                    message,
                    retry_after,
                }) => {
                    let retryable =
                        status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error();
                    if status == StatusCode::BAD_REQUEST
                        && body.get("response_format").is_some()
                        && message.contains("response_format")
                    {
                        // The server does not do structured output: ask again in plain text.
                        tracing::info!(
                            "the model endpoint refused response_format; asking without it"
                        );
                        body.as_object_mut().map(|o| o.remove("response_format"));
                        continue;
                    }
                    if !retryable || tries > self.config.retries {
                        budget.charge(estimate_tokens(prompt_chars));
                        return Err(LlmError::Status {
                            status: status.as_u16(),
                            message,
                            tries,
                        });
                    }
                    let wait = retry_after
                        .filter(|d| *d <= MAX_RETRY_AFTER)
                        .unwrap_or(delay);
                    tracing::warn!(
                        status = status.as_u16(),
                        "the model endpoint is busy or failing; retrying in {wait:?}"
                    );
                    tokio::time::sleep(wait).await;
                    delay = delay.saturating_mul(2);
                }
                Err(Failure::Other(e)) => {
                    budget.charge(estimate_tokens(prompt_chars));
                    return Err(e);
                }
            }
        };
        let parsed = parse_completion(&reply);
        let used = match &parsed {
            Ok(r) => r.usage.map(|u| u.total_tokens).unwrap_or_else(|| {
                let answer = r.content.as_deref().map_or(0, str::len)
                    + r.tool_arguments.iter().map(String::len).sum::<usize>();
                estimate_tokens(prompt_chars + answer)
            }),
            Err(_) => estimate_tokens(prompt_chars),
        };
        budget.charge(used);
        parsed
    }

    async fn send(&self, body: &Value) -> Result<Value, Failure> {
        let mut request = self.http.post(self.endpoint.clone()).json(body);
        if let Some(key) = &self.config.api_key {
            let mut value =
                reqwest::header::HeaderValue::from_str(&format!("Bearer {}", key.expose()))
                    .map_err(|_| {
                        Failure::Other(LlmError::Config(
                            "the API key has characters a header cannot carry".into(),
                        ))
                    })?;
            value.set_sensitive(true);
            request = request.header(reqwest::header::AUTHORIZATION, value);
        }
        let response = request
            .send()
            .await
            .map_err(|e| Failure::Other(self.transport(e)))?;
        let status = response.status();
        let retry_after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        let text = response
            .text()
            .await
            .map_err(|e| Failure::Other(self.transport(e)))?;
        if !status.is_success() {
            return Err(Failure::Status {
                status,
                message: error_message(&text),
                retry_after,
            });
        }
        serde_json::from_str(&text)
            .map_err(|e| Failure::Other(LlmError::Malformed(format!("not JSON ({e})"))))
    }

    fn transport(&self, e: reqwest::Error) -> LlmError {
        if e.is_timeout() {
            return LlmError::Timeout {
                secs: self.config.timeout.as_secs(),
            };
        }
        // The innermost cause, without the URL (which could carry credentials).
        let mut cause: &dyn std::error::Error = &e;
        while let Some(next) = cause.source() {
            cause = next;
        }
        LlmError::Transport(cause.to_string())
    }
}

enum Failure {
    Status {
        status: StatusCode,
        message: String,
        retry_after: Option<Duration>,
    },
    Other(LlmError),
}

/// `error.message` of an OpenAI-style error body, else the start of the body.
fn error_message(body: &str) -> String {
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    let message = parsed.as_ref().and_then(|v| {
        v.pointer("/error/message")
            .or_else(|| v.get("error"))
            .or_else(|| v.get("message"))
            .and_then(Value::as_str)
            .map(str::to_string)
    });
    let text = message.unwrap_or_else(|| body.chars().take(300).collect());
    crate::runners::scrub::scrub(text.trim()).into_owned()
}

//! Model settings: a config file's `[llm]` table, then `HUDDLE_LLM_*` variables (which win).
//! Base URL and model are required; the API key is optional (local servers need none) and is
//! never printed: [`ApiKey`]'s `Debug` and `Display` show `[REDACTED]`.

use super::LlmError;
use serde::Deserialize;
use std::fmt;
use std::time::Duration;

/// An API key that never shows itself in logs or errors.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// Wraps a key.
    pub fn new(key: impl Into<String>) -> ApiKey {
        ApiKey(key.into())
    }

    /// The key itself, for the `Authorization` header only.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[REDACTED]")
    }
}

impl fmt::Display for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[REDACTED]")
    }
}

/// The `[llm]` table as written; every key optional.
#[derive(Clone, Default, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LlmSettings {
    /// `https://api.openai.com/v1`, `http://localhost:11434/v1`… (`HUDDLE_LLM_BASE_URL`).
    pub base_url: Option<String>,
    /// The model name (`HUDDLE_LLM_MODEL`).
    pub model: Option<String>,
    /// The API key (`HUDDLE_LLM_API_KEY`; better kept in the environment than in a file).
    pub api_key: Option<String>,
    /// Seconds one call may take (`HUDDLE_LLM_TIMEOUT_SECS`, default 120).
    pub timeout_secs: Option<u64>,
    /// Most tokens in one answer (`HUDDLE_LLM_MAX_TOKENS`, default 4096).
    pub max_tokens: Option<u32>,
    /// Sampling temperature (`HUDDLE_LLM_TEMPERATURE`, default 0).
    pub temperature: Option<f32>,
    /// Most calls one task may make (`HUDDLE_LLM_MAX_CALLS`, default 20).
    pub max_calls_per_task: Option<u32>,
    /// Most tokens one task may use (`HUDDLE_LLM_MAX_TASK_TOKENS`, default 400000).
    pub max_tokens_per_task: Option<u64>,
    /// Retries of a 429 or 5xx answer (`HUDDLE_LLM_RETRIES`, default 3).
    pub retries: Option<u32>,
    /// First retry delay in milliseconds, doubled each time (`HUDDLE_LLM_RETRY_BACKOFF_MS`,
    /// default 1000).
    pub retry_backoff_ms: Option<u64>,
    /// Ask for JSON through `response_format` (`HUDDLE_LLM_JSON_SCHEMA`, default true).
    pub json_schema: Option<bool>,
}

impl fmt::Debug for LlmSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LlmSettings")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "[REDACTED]"))
            .finish_non_exhaustive()
    }
}

fn parse_env<T: std::str::FromStr>(
    name: &str,
    value: Option<String>,
) -> Result<Option<T>, LlmError> {
    match value.filter(|v| !v.trim().is_empty()) {
        None => Ok(None),
        Some(v) => v
            .trim()
            .parse()
            .map(Some)
            .map_err(|_| LlmError::Config(format!("{name}={v:?} is not a valid value"))),
    }
}

impl LlmSettings {
    /// Reads `HUDDLE_LLM_*` through `env` (a lookup such as `|k| std::env::var(k).ok()`).
    pub fn from_env(env: impl Fn(&str) -> Option<String>) -> Result<LlmSettings, LlmError> {
        let text = |k: &str| env(k).filter(|v| !v.trim().is_empty());
        Ok(LlmSettings {
            base_url: text("HUDDLE_LLM_BASE_URL"),
            model: text("HUDDLE_LLM_MODEL"),
            api_key: text("HUDDLE_LLM_API_KEY"),
            timeout_secs: parse_env("HUDDLE_LLM_TIMEOUT_SECS", env("HUDDLE_LLM_TIMEOUT_SECS"))?,
            max_tokens: parse_env("HUDDLE_LLM_MAX_TOKENS", env("HUDDLE_LLM_MAX_TOKENS"))?,
            temperature: parse_env("HUDDLE_LLM_TEMPERATURE", env("HUDDLE_LLM_TEMPERATURE"))?,
            max_calls_per_task: parse_env("HUDDLE_LLM_MAX_CALLS", env("HUDDLE_LLM_MAX_CALLS"))?,
            max_tokens_per_task: parse_env(
                "HUDDLE_LLM_MAX_TASK_TOKENS",
                env("HUDDLE_LLM_MAX_TASK_TOKENS"),
            )?,
            retries: parse_env("HUDDLE_LLM_RETRIES", env("HUDDLE_LLM_RETRIES"))?,
            retry_backoff_ms: parse_env(
                "HUDDLE_LLM_RETRY_BACKOFF_MS",
                env("HUDDLE_LLM_RETRY_BACKOFF_MS"),
            )?,
            json_schema: parse_env("HUDDLE_LLM_JSON_SCHEMA", env("HUDDLE_LLM_JSON_SCHEMA"))?,
        })
    }

    /// `self` with every key `over` sets replaced.
    pub fn overlay(self, over: LlmSettings) -> LlmSettings {
        LlmSettings {
            base_url: over.base_url.or(self.base_url),
            model: over.model.or(self.model),
            api_key: over.api_key.or(self.api_key),
            timeout_secs: over.timeout_secs.or(self.timeout_secs),
            max_tokens: over.max_tokens.or(self.max_tokens),
            temperature: over.temperature.or(self.temperature),
            max_calls_per_task: over.max_calls_per_task.or(self.max_calls_per_task),
            max_tokens_per_task: over.max_tokens_per_task.or(self.max_tokens_per_task),
            retries: over.retries.or(self.retries),
            retry_backoff_ms: over.retry_backoff_ms.or(self.retry_backoff_ms),
            json_schema: over.json_schema.or(self.json_schema),
        }
    }

    /// The settings to call with, or [`LlmError::NotConfigured`] naming what is missing.
    pub fn resolve(self) -> Result<LlmConfig, LlmError> {
        let missing: Vec<&str> = [
            (
                self.base_url.is_none(),
                "HUDDLE_LLM_BASE_URL ([llm] base_url)",
            ),
            (self.model.is_none(), "HUDDLE_LLM_MODEL ([llm] model)"),
        ]
        .into_iter()
        .filter_map(|(m, name)| m.then_some(name))
        .collect();
        if !missing.is_empty() {
            return Err(LlmError::NotConfigured(format!(
                "set {}",
                missing.join(" and ")
            )));
        }
        Ok(LlmConfig {
            base_url: self.base_url.unwrap_or_default(),
            model: self.model.unwrap_or_default(),
            api_key: self.api_key.map(ApiKey),
            timeout: Duration::from_secs(self.timeout_secs.unwrap_or(120).max(1)),
            max_tokens: self.max_tokens.unwrap_or(4096),
            temperature: self.temperature.unwrap_or(0.0),
            max_calls_per_task: self.max_calls_per_task.unwrap_or(20),
            max_tokens_per_task: self.max_tokens_per_task.unwrap_or(400_000),
            retries: self.retries.unwrap_or(3),
            retry_backoff: Duration::from_millis(self.retry_backoff_ms.unwrap_or(1000)),
            json_schema: self.json_schema.unwrap_or(true),
        })
    }
}

/// Everything a call needs.
#[derive(Debug, Clone, PartialEq)]
pub struct LlmConfig {
    /// The API root; `/chat/completions` is appended.
    pub base_url: String,
    /// The model name.
    pub model: String,
    /// Sent as `Authorization: Bearer …` when set.
    pub api_key: Option<ApiKey>,
    /// One call's time limit.
    pub timeout: Duration,
    /// `max_tokens` of each request.
    pub max_tokens: u32,
    /// `temperature` of each request.
    pub temperature: f32,
    /// Calls one task may make.
    pub max_calls_per_task: u32,
    /// Tokens one task may use.
    pub max_tokens_per_task: u64,
    /// Retries of 429 and 5xx answers.
    pub retries: u32,
    /// First retry delay; doubled each time.
    pub retry_backoff: Duration,
    /// Ask for `response_format: json_schema`.
    pub json_schema: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_environment_wins_and_missing_settings_are_named() {
        let file: LlmSettings =
            toml::from_str("base_url = \"http://file/v1\"\nmodel = \"m\"").unwrap();
        let env =
            LlmSettings::from_env(|k| (k == "HUDDLE_LLM_MODEL").then(|| "env-model".to_string()))
                .unwrap();
        let c = file.overlay(env).resolve().unwrap();
        assert_eq!(
            (c.base_url.as_str(), c.model.as_str()),
            ("http://file/v1", "env-model")
        );
        let e = LlmSettings::default().resolve().unwrap_err().to_string();
        assert!(
            e.contains("HUDDLE_LLM_BASE_URL") && e.contains("HUDDLE_LLM_MODEL"),
            "{e}"
        );
    }

    #[test]
    fn the_key_never_shows() {
        let s = LlmSettings {
            api_key: Some("sk-very-secret".into()),
            ..Default::default()
        };
        assert!(!format!("{s:?}").contains("very-secret"));
        let c = LlmSettings {
            base_url: Some("u".into()),
            model: Some("m".into()),
            ..s
        }
        .resolve()
        .unwrap();
        assert!(!format!("{c:?}").contains("very-secret"));
    }
}

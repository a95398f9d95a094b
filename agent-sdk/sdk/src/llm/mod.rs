//! The code-developer model: any OpenAI-compatible chat-completions endpoint (OpenAI, Ollama,
//! vLLM, llama.cpp server…).
//!
//! - [`config`]: base URL, model, API key (never logged), timeout, max tokens, temperature,
//!   per-task budget — from a config file's `[llm]` table and `HUDDLE_LLM_*` variables.
//! - [`client`]: [`LlmClient`], one chat completion per call, retrying 429 and 5xx answers with
//!   backoff; any other failure ends the attempt with a clear reason.
//! - [`prompt`]: what the model is asked — goal, scrubbed failure output, files in scope, rules —
//!   and the JSON schema its answer should follow.
//! - [`parse`]: lenient reading of the answer (tool calls with `finish_reason` "stop", arguments
//!   as a string or an object, missing `usage`) into search/replace edits, with a fallback parser
//!   for SEARCH/REPLACE text blocks.
//! - [`budget`]: calls and tokens one task may spend.
//!
//! [`config`]: crate::llm::config
//! [`client`]: crate::llm::client
//! [`LlmClient`]: crate::llm::LlmClient
//! [`prompt`]: crate::llm::prompt
//! [`parse`]: crate::llm::parse
//! [`budget`]: crate::llm::budget

pub mod budget;
pub mod client;
pub mod config;
pub mod parse;
pub mod prompt;

pub use budget::Budget;
pub use client::LlmClient;
pub use config::{ApiKey, LlmConfig, LlmSettings};
pub use parse::{ChatReply, ProposedFix, Usage};
pub use prompt::{FixRequest, ScopeFile};

/// Why a call to the model gave no answer to use.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LlmError {
    /// A required setting is missing; the text names it.
    #[error("no code-developer model configured: {0}")]
    NotConfigured(String),
    /// A setting has a value that cannot work.
    #[error("bad model setting: {0}")]
    Config(String),
    /// The task's budget of calls or tokens is spent.
    #[error("the model budget for this task is spent: {0}")]
    Budget(String),
    /// No answer within the timeout.
    #[error("the model did not answer within {secs}s")]
    Timeout {
        /// The timeout.
        secs: u64,
    },
    /// The endpoint answered an error status.
    #[error("the model endpoint answered {status} after {tries} {}: {message}", if *tries == 1 { "try" } else { "tries" })]
    Status {
        /// The HTTP status.
        status: u16,
        /// The endpoint's `error.message`, or the start of its body.
        message: String,
        /// How many times the request was sent.
        tries: u32,
    },
    /// The endpoint could not be reached.
    #[error("cannot reach the model endpoint: {0}")]
    Transport(String),
    /// The endpoint answered something that is not a chat completion.
    #[error("the model endpoint's answer is not a chat completion: {0}")]
    Malformed(String),
}

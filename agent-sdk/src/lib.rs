//! huddle SDK: the wire types of the huddle HTTP API (always), and — with the default `client`
//! feature — the typed client, the worker runtime and the `huddle` command line.
//!
//! A tour of the layout:
//! - [`wire`]: the JSON bodies of the API, shared with the daemon, so the protocol has exactly
//!   one definition (the daemon depends on this crate with `default-features = false`).
//! - [`history`]: the shape of `GET …/memory-history` entries.
//! - `client` (feature `client`): [`Client`], one async method per endpoint, typed errors
//!   ([`Error`]), retries with backoff for calls that are safe to repeat, and reconnecting
//!   Server-Sent Events streams ([`Subscription`]).
//! - `worker` (feature `client`): [`Worker`] runs any [`Handler`] in a claim → heartbeat →
//!   complete/fail loop with graceful shutdown.
//! - `exec` (feature `client`): [`ExecHandler`], a handler that runs a program per task.
//!
//! The `huddle` binary (`src/bin/huddle/`) is the command line for humans and scripts.

#![forbid(unsafe_code)]

pub mod history;
pub mod wire;

#[cfg(feature = "client")]
pub mod client;
#[cfg(feature = "client")]
pub mod exec;
#[cfg(feature = "client")]
pub mod worker;

#[cfg(feature = "client")]
pub use client::{
    ApiError, Client, ClientBuilder, Error, MessageQuery, Posted, RetryPolicy, StreamOptions,
    Subscription, TaskQuery,
};
#[cfg(feature = "client")]
pub use exec::ExecHandler;
#[cfg(feature = "client")]
pub use worker::{Handler, HandlerError, HandlerResult, TaskContext, Worker, WorkerStats};

#[cfg(feature = "runners")]
pub mod runners;

/// The README's examples, compiled as doctests so they cannot drift from the API.
#[cfg(all(doctest, feature = "client"))]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

/// Fix cycles as pure state machines (tester, executor, strategies, severities, limits).
#[cfg(feature = "client")]
pub mod cycles;
/// Search/replace edits proposed by a model: guardrails, atomic application, snapshots.
#[cfg(feature = "client")]
pub mod edits;
/// The code-developer model: an OpenAI-compatible chat-completions client, prompts, parsing.
#[cfg(feature = "client")]
pub mod llm;
/// The built-in tester and executor roles: runners + model + messages, as worker handlers.
#[cfg(feature = "client")]
pub mod roles;

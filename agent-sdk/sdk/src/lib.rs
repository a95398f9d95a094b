//! huddle SDK: the typed client, the worker runtime, the fix cycles and the model delegation
//! that tester and executor workers are built from.
//!
//! A tour of the layout:
//! - [`wire`] (re-exported `huddle-wire`): the JSON bodies of the API, shared with the daemon,
//!   so the protocol has exactly one definition; [`history`] is its memory-history shape.
//! - [`runners`] (re-exported `huddle-runners`): the projects' real test runners behind one
//!   report; usable alone, without a daemon.
//! - [`client`]: [`Client`], one async method per endpoint, typed errors ([`Error`]), retries
//!   with backoff for calls that are safe to repeat, and reconnecting Server-Sent Events streams
//!   ([`Subscription`]).
//! - [`worker`]: [`Worker`] runs any [`Handler`] in a claim → heartbeat → complete/fail loop
//!   with graceful shutdown.
//! - [`exec`]: [`ExecHandler`], a handler that runs a program per task.
//! - [`cycles`], [`edits`], [`llm`], [`roles`]: the built-in tester and executor.
//!
//! The `huddle` command line is the `huddle-cli` crate.

#![forbid(unsafe_code)]

pub use huddle_runners as runners;
pub use huddle_wire as wire;
pub use huddle_wire::history;

pub mod client;
pub mod exec;
pub mod worker;

pub use client::{
    ApiError, Client, ClientBuilder, Error, MessageQuery, MessageSearch, Posted, RetryPolicy,
    StreamOptions, Subscription, TaskQuery,
};
pub use exec::ExecHandler;
pub use worker::{
    FinalFailure, Handler, HandlerError, HandlerResult, ReleaseTask, TaskContext, Worker,
    WorkerStats,
};

/// The README's examples, compiled as doctests so they cannot drift from the API.
#[cfg(doctest)]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;

/// Fix cycles as pure state machines (tester, executor, strategies, severities, limits).
pub mod cycles;
/// Search/replace edits proposed by a model: guardrails, atomic application, snapshots.
pub mod edits;
/// The code-developer model: an OpenAI-compatible chat-completions client, prompts, parsing.
pub mod llm;
/// The built-in tester and executor roles: runners + model + messages, as worker handlers.
pub mod roles;
/// Where a task works: a git worktree per claim from a pool, fixes delivered as branches.
pub mod workspace;

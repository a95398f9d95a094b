//! huddle SDK: the wire types of the huddle HTTP API (always), and — with the default `client`
//! feature — the typed client and worker runtime.
//!
//! The daemon depends on this crate with `default-features = false`, so the protocol has exactly
//! one definition: [`wire`].

pub mod wire;

//! The web dashboard: its files and headers over HTTP (`headers.rs`), and the page itself in a
//! real browser — Debian's Chromium driven by playwright-core — against a real daemon
//! (`browser.rs`), a coordinator acting from it (`actions.rs`), two people editing one task
//! (`conflict.rs`), what needs a person first (`attention.rs`), what makes it readable —
//! contrast, wrapping, a steady log (`readable.rs`) — and large histories (`large.rs`).
//! One test binary per area; a module per concern (`script.rs` runs a browser script).

mod actions;
mod attention;
mod browser;
mod conflict;
mod gates;
mod headers;
mod large;
mod readable;
mod script;

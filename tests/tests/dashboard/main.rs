//! The web dashboard: its files and headers over HTTP (`headers.rs`), and the page itself in a
//! real browser — Debian's Chromium driven by playwright-core — against a real daemon
//! (`browser.rs`). One test binary per area; a module per concern.

mod browser;
mod headers;

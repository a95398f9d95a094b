//! Real Claude Code (npm `@anthropic-ai/claude-code`, pinned in tests/claude-code), run headless
//! against a scripted model (`model_stub.py`, the one fake) with `huddle hook` in its project's
//! `.claude/settings.json`, against a real daemon: the hook bridge as a user installs it.

mod bridge;
mod recorded;
mod seed_flow;
mod session;

//! The tester and executor fix cycles on real projects, with the code-developer model served by
//! an OpenAI-compatible stub over real HTTP.
//! One test binary per area; a module per concern.

mod budget;
mod checkout;
mod cli;
mod environment;
mod guardrails;
mod history;
mod jest;
mod known_bad;
mod limits;
mod llm_client;
mod proven;
mod pytest;
mod tiers;
mod tiers_go;
mod traces;
mod useless_replies;
mod verdict_rules;
mod verdicts;
mod visibility;
mod worktrees;

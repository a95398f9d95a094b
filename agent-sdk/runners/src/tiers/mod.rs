//! Test tiers: a project's tests split into unit, property-based (PBT), integration and
//! end-to-end (e2e) tiers, run in that order, each as its own run with its own report, with
//! the services the integration and e2e tiers need started and health-checked first.
//!
//! - [`project_file`]: `huddle.toml` (`[tiers]` overrides, `[services.NAME]`, `[e2e]`).
//! - [`classify`]: which tier each test file is in, and why (`huddle test --tiers --explain`);
//!   [`tier_patterns`] the `[tiers]` paths and globs it matches first.
//! - [`services`]: starting a service, polling its health, stopping its process group;
//!   [`service_plan`] which services a run starts; [`service_pool`] services kept up across
//!   the runs of one task (the tester's).
//! - [`pipeline`]: the tiers run serially; skips always carry a reason; [`report`] its
//!   outcome and the failures' traces and screenshots; [`e2e_capture`] what pytest-playwright
//!   records, merged with the project's own options; [`pbt`] whether the PBT library is there.
//! - [`failure_class`]: implementation or infrastructure, for every failing test.
//! - [`diff_scope`]: a git diff mapped to the tests of each tier.
//! - [`go_tier`]: a go tier's files, build tags and test names (go runs packages, not files).

pub mod cargo_tier;
pub mod classify;
pub mod diff_scope;
pub mod e2e_capture;
pub mod failure_class;
pub mod go_tier;
pub mod pbt;
pub mod pipeline;
pub mod project_file;
pub mod report;
mod service_health;
pub mod service_plan;
pub mod service_pool;
mod service_signals;
pub mod services;
pub mod tier_patterns;
pub mod tier_runs;

use serde::{Deserialize, Serialize};
use std::fmt;

/// A test tier, in run order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    /// Fast tests of one unit, no service.
    Unit,
    /// Property-based tests (hypothesis, fast-check, proptest, go's testing/quick, rapid).
    Pbt,
    /// Tests that talk to a running service or several components.
    Integration,
    /// Browser tests (Playwright).
    E2e,
}

impl Tier {
    /// Every tier, in run order.
    pub const ALL: [Tier; 4] = [Tier::Unit, Tier::Pbt, Tier::Integration, Tier::E2e];

    /// The lowercase name, as in `huddle.toml` and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Unit => "unit",
            Tier::Pbt => "pbt",
            Tier::Integration => "integration",
            Tier::E2e => "e2e",
        }
    }

    /// Whether the tier needs the project's services running.
    pub fn needs_services(self) -> bool {
        matches!(self, Tier::Integration | Tier::E2e)
    }

    /// The tier named `name` (`unit`, `pbt`, `integration`, `e2e`).
    pub fn parse(name: &str) -> Option<Tier> {
        Tier::ALL.into_iter().find(|t| t.as_str() == name)
    }
}

impl fmt::Display for Tier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a tier did not run. Never silent: the summary and the tier's entry carry it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SkipReason {
    /// No test file is in the tier.
    NoTests,
    /// A service the tier needs did not become healthy.
    ServiceUnhealthy,
    /// The pipeline's time budget was used up by earlier tiers.
    BudgetExhausted,
    /// Property-based tests exist but no PBT library is installed for them.
    NoPbtLibrary,
}

impl SkipReason {
    /// The snake_case name, as in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            SkipReason::NoTests => "no_tests",
            SkipReason::ServiceUnhealthy => "service_unhealthy",
            SkipReason::BudgetExhausted => "budget_exhausted",
            SkipReason::NoPbtLibrary => "no_pbt_library",
        }
    }
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

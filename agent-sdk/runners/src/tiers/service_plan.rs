//! Which services a tiers run starts: the project file's `[services]`, else one detected when
//! a tier needs it (and Playwright's own `webServer` does not start it); a compose file is
//! named as not started.

use super::classify::Classified;
use super::project_file::{self, ProjectFile};
use super::services;
use std::collections::BTreeMap;
use std::path::Path;

/// The services to start: `huddle.toml`'s, else a detected one when a tier needs it.
pub(super) fn service_specs(
    project: &Path,
    file: &ProjectFile,
    classified: &[Classified],
    notes: &mut Vec<String>,
) -> BTreeMap<String, project_file::ServiceSpec> {
    if let Some(compose) = services::compose_file(project) {
        notes.push(format!(
            "{compose} is not started: huddle runs no container engine; declare the services \
             integration tests need in huddle.toml [services.NAME]"
        ));
    }
    if !file.services.is_empty() {
        return file.services.clone();
    }
    let needed = classified.iter().any(|c| c.tier.needs_services())
        // Playwright's own `webServer` starts what its tests need.
        && !playwright_starts_its_server(project);
    match services::detect(project).filter(|_| needed) {
        Some((name, spec)) => {
            notes.push(format!(
                "no [services] in huddle.toml: starting `{}` (detected) before integration and e2e",
                spec.command
            ));
            BTreeMap::from([(name, spec)])
        }
        None => BTreeMap::new(),
    }
}

fn playwright_starts_its_server(project: &Path) -> bool {
    [
        "playwright.config.ts",
        "playwright.config.js",
        "playwright.config.mjs",
    ]
    .iter()
    .any(|f| std::fs::read_to_string(project.join(f)).is_ok_and(|t| t.contains("webServer")))
}

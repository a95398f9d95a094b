//! `huddle.toml`, the project file: tier overrides, the services integration and e2e tests
//! need, and the browser for e2e. Every section is optional; a project without the file
//! gets the conventions alone.
//!
//! ```toml
//! [tiers]                      # paths (files or directories) or globs that are in a tier
//! unit = ["tests/unit"]
//! integration = ["tests/api", "tests/**/test_*_slow.py"]
//!
//! [services.api]
//! command = "python3 -m app.server --port {port}"   # argv split as a POSIX shell would
//! health = "http://127.0.0.1:{port}/health"          # or: port = 8080 (a TCP check)
//! timeout_secs = 60                                   # how long it may take to get healthy
//! interval_secs = 2                                   # between health checks
//!
//! [e2e]
//! chromium = "/usr/bin/chromium"   # the browser Playwright launches (never downloaded)
//! browser_channel = "chromium"     # pytest-playwright's --browser-channel
//! capture = "on"                   # every screenshot and trace (default "failures")
//! ```
//!
//! `{port}` in a service's command, health URL or environment is replaced by a free port
//! huddle picks, so two runs never collide.

use super::Tier;
use crate::error::RunnerError;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

/// The file's name in the project root.
pub const PROJECT_FILE: &str = "huddle.toml";

/// The whole file.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProjectFile {
    /// Paths per tier, winning over every convention.
    #[serde(default)]
    pub tiers: TierPaths,
    /// Services by name, started before the integration and e2e tiers.
    #[serde(default)]
    pub services: BTreeMap<String, ServiceSpec>,
    /// The browser for e2e tests.
    #[serde(default)]
    pub e2e: E2eSettings,
}

/// Paths (files or directories, relative to the project) or globs that belong to each tier,
/// matched by [`super::tier_patterns::TierPatterns`]. Task metadata (`tiers` in the task's
/// metadata) takes the same shape.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct TierPaths {
    /// Unit tests.
    #[serde(default)]
    pub unit: Vec<String>,
    /// Property-based tests.
    #[serde(default)]
    pub pbt: Vec<String>,
    /// Integration tests.
    #[serde(default)]
    pub integration: Vec<String>,
    /// End-to-end tests.
    #[serde(default)]
    pub e2e: Vec<String>,
}

impl TierPaths {
    /// The entries of `tier`.
    pub fn of(&self, tier: Tier) -> &[String] {
        match tier {
            Tier::Unit => &self.unit,
            Tier::Pbt => &self.pbt,
            Tier::Integration => &self.integration,
            Tier::E2e => &self.e2e,
        }
    }

    /// Whether no tier names a path.
    pub fn is_empty(&self) -> bool {
        self.unit.is_empty()
            && self.pbt.is_empty()
            && self.integration.is_empty()
            && self.e2e.is_empty()
    }
}

/// One service to start.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServiceSpec {
    /// The command line, split into argv as a POSIX shell would (never run by a shell).
    pub command: String,
    /// An HTTP URL that answers 2xx or 3xx once the service is ready.
    #[serde(default)]
    pub health: Option<String>,
    /// A TCP port that accepts connections once the service is ready (when no `health`).
    #[serde(default)]
    pub port: Option<u16>,
    /// Seconds the service may take to become healthy (default 60).
    #[serde(default)]
    pub timeout_secs: Option<u64>,
    /// Seconds between health checks (default 2).
    #[serde(default)]
    pub interval_secs: Option<u64>,
    /// The working directory, relative to the project (default: the project).
    #[serde(default)]
    pub cwd: Option<String>,
    /// Extra environment for the service and for the tests.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
}

/// How e2e tests get their browser.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct E2eSettings {
    /// The Chromium executable (given to the tests as `HUDDLE_CHROMIUM`).
    #[serde(default)]
    pub chromium: Option<String>,
    /// A browser channel for pytest-playwright's `--browser-channel`.
    #[serde(default)]
    pub browser_channel: Option<String>,
    /// What pytest-playwright records (screenshots, traces, videos); default: failures.
    #[serde(default)]
    pub capture: Option<super::e2e_capture::Capture>,
}

/// Reads `<project>/huddle.toml`; `None` when there is none. A file that does not parse is
/// an error naming the line, never ignored.
pub fn read(project: &Path) -> Result<Option<ProjectFile>, RunnerError> {
    let path = project.join(PROJECT_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(RunnerError::io(format!("reading {}", path.display()), e)),
    };
    parse(&text)
        .map(Some)
        .map_err(|e| RunnerError::Unsupported(format!("{}: {e}", path.display())))
}

/// Parses the file's text.
pub fn parse(text: &str) -> Result<ProjectFile, String> {
    let file: ProjectFile = toml::from_str(text).map_err(|e| e.to_string())?;
    super::tier_patterns::TierPatterns::new(&file.tiers)?;
    for (name, s) in &file.services {
        if s.command.trim().is_empty() {
            return Err(format!("[services.{name}] has an empty command"));
        }
        if s.health.is_none() && s.port.is_none() {
            return Err(format!(
                "[services.{name}] needs `health` (an http:// URL) or `port` to know when it is ready"
            ));
        }
        if let Some(h) = &s.health {
            if !h.starts_with("http://") && !h.starts_with("https://") {
                return Err(format!(
                    "[services.{name}] health must be an http:// or https:// URL, not {h:?}"
                ));
            }
        }
    }
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_file_parses() {
        let f = parse(
            r#"
[tiers]
unit = ["tests/unit"]
e2e = ["./e2e/"]

[services.api]
command = "python3 -m app.server --port {port}"
health = "http://127.0.0.1:{port}/health"
timeout_secs = 5

[e2e]
chromium = "/usr/bin/chromium"
"#,
        )
        .unwrap();
        assert_eq!(f.tiers.unit, ["tests/unit"]);
        assert_eq!(f.tiers.of(Tier::E2e), ["./e2e/"]);
        assert_eq!(f.services["api"].timeout_secs, Some(5));
        assert_eq!(f.e2e.chromium.as_deref(), Some("/usr/bin/chromium"));
    }

    #[test]
    fn bad_files_are_refused_with_the_reason() {
        let unknown = parse("[tiers]\nsmoke = [\"x\"]\n").unwrap_err();
        assert!(unknown.contains("smoke"), "{unknown}");
        let no_health = parse("[services.db]\ncommand = \"x\"\n").unwrap_err();
        assert!(no_health.contains("health"), "{no_health}");
        let not_url =
            parse("[services.db]\ncommand = \"x\"\nhealth = \"localhost\"\n").unwrap_err();
        assert!(not_url.contains("http://"), "{not_url}");
        let bad_glob = parse("[tiers]\nunit = [\"tests/{a\"]\n").unwrap_err();
        assert!(bad_glob.contains("tests/{a"), "{bad_glob}");
        assert!(parse("[tiers\n").is_err());
        assert_eq!(parse("").unwrap(), ProjectFile::default());
    }
}

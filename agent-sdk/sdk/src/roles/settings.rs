//! What a role needs besides the task: the project, the cycle limits, and the model — read from
//! a worker config file (`[llm]`, `[cycles.tester]`, `[cycles.executor]`; other tables are
//! ignored, so the file may be shared) and `HUDDLE_LLM_*` variables.

use super::RoleError;
use crate::cycles::CycleConfig;
use crate::llm::{LlmClient, LlmError, LlmSettings};
use crate::workspace::WorkspaceSettings;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// A worker config file's tables that concern the roles.
#[derive(Debug, Clone, Default)]
pub struct WorkerFile {
    /// `[llm]`.
    pub llm: LlmSettings,
    /// `[cycles]`, as JSON.
    pub cycles: Option<Value>,
    /// `[telemetry] otlp_endpoint`: where the worker's traces go (docs/telemetry.md).
    pub otlp_endpoint: Option<String>,
}

/// `[telemetry]` as written.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct TelemetryTable {
    otlp_endpoint: Option<String>,
}

impl WorkerFile {
    /// Reads `path`; unknown keys inside `[llm]` and `[cycles]` are errors naming them.
    pub fn load(path: &Path) -> Result<WorkerFile, RoleError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| RoleError::Config(format!("cannot read {}: {e}", path.display())))?;
        let table: toml::Table = text
            .parse()
            .map_err(|e| RoleError::Config(format!("{}: {e}", path.display())))?;
        let llm = match table.get("llm") {
            Some(v) => v
                .clone()
                .try_into()
                .map_err(|e| RoleError::Config(format!("{} [llm]: {e}", path.display())))?,
            None => LlmSettings::default(),
        };
        let cycles = table
            .get("cycles")
            .map(serde_json::to_value)
            .transpose()
            .map_err(|e| RoleError::Config(format!("{} [cycles]: {e}", path.display())))?;
        let telemetry: TelemetryTable = match table.get("telemetry") {
            Some(v) => v
                .clone()
                .try_into()
                .map_err(|e| RoleError::Config(format!("{} [telemetry]: {e}", path.display())))?,
            None => TelemetryTable::default(),
        };
        Ok(WorkerFile {
            llm,
            cycles,
            otlp_endpoint: telemetry.otlp_endpoint,
        })
    }
}

/// The project, the limits and the model for the built-in roles.
#[derive(Debug, Clone)]
pub struct RoleSettings {
    /// The project the tests run in and fixes go to.
    pub project: PathBuf,
    /// Cycle limits before team and task overrides.
    pub cycles: CycleConfig,
    /// The code-developer model, when one is configured.
    pub llm: Option<LlmClient>,
    /// Why there is no model (names the missing setting); empty when there is one.
    pub llm_missing: String,
    /// Who gets the messages (default `coordinator`).
    pub report_to: String,
    /// The config file's `[telemetry] otlp_endpoint` (the `OTEL_EXPORTER_OTLP_*` variables
    /// apply without it).
    pub otlp_endpoint: Option<String>,
    /// Where each task works (a worktree per claim by default).
    pub workspace: WorkspaceSettings,
}

impl RoleSettings {
    /// Settings for `project` with default limits and no model.
    pub fn new(project: impl Into<PathBuf>) -> RoleSettings {
        RoleSettings {
            project: project.into(),
            cycles: CycleConfig::default(),
            llm: None,
            llm_missing: LlmError::NotConfigured(
                "set HUDDLE_LLM_BASE_URL ([llm] base_url) and HUDDLE_LLM_MODEL ([llm] model)"
                    .into(),
            )
            .to_string(),
            report_to: "coordinator".into(),
            otlp_endpoint: None,
            workspace: WorkspaceSettings::default(),
        }
    }

    /// Uses `settings` for the model: a client when they are complete, else the reason (naming
    /// the missing setting) is kept for `fix_required`. Bad values are errors.
    pub fn with_llm(mut self, settings: LlmSettings) -> Result<RoleSettings, RoleError> {
        match settings.resolve().and_then(LlmClient::new) {
            Ok(client) => {
                self.llm = Some(client);
                self.llm_missing.clear();
            }
            Err(e @ LlmError::NotConfigured(_)) => self.llm_missing = e.to_string(),
            Err(e) => return Err(RoleError::Config(e.to_string())),
        }
        Ok(self)
    }

    /// Settings for `project` from an optional config file and the environment (`env` looks a
    /// variable up).
    pub fn load(
        project: impl Into<PathBuf>,
        file: Option<&Path>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<RoleSettings, RoleError> {
        let file = match file {
            Some(path) => WorkerFile::load(path)?,
            None => WorkerFile::default(),
        };
        let mut settings = RoleSettings::new(project);
        settings.otlp_endpoint = file.otlp_endpoint.clone();
        if let Some(cycles) = &file.cycles {
            settings
                .cycles
                .apply(cycles, "[cycles]")
                .map_err(|e| RoleError::Config(e.to_string()))?;
        }
        let from_env = LlmSettings::from_env(env).map_err(|e| RoleError::Config(e.to_string()))?;
        settings.with_llm(file.llm.overlay(from_env))
    }
}

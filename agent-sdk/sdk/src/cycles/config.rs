//! Every threshold and cap of the fix cycles. Defaults are the seeds' numbers; a worker's config
//! file (`[cycles.tester]`, `[cycles.executor]`), the team's shared memory (`cycle_config.tester`,
//! `cycle_config.executor`) and a task's metadata (`cycle`) override them, in that order. Keys
//! are accepted in camelCase or snake_case; an unknown key or a bad value is an error naming it.

use serde::{de::DeserializeOwned, Deserialize, Serialize};
use serde_json::{Map, Value};

/// Why overrides could not be applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cycle settings from {source_name}: {message}")]
pub struct CycleConfigError {
    /// Where the bad value came from (`task metadata "cycle"`, …).
    pub source_name: String,
    /// What was wrong, naming the key.
    pub message: String,
}

/// The tester's cycle (`TEST-*`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TesterLimits {
    /// Most iterations (default 10).
    pub max_iterations: u32,
    /// Pass rate, 0–100, a full run must reach (default 95).
    pub quality_gate: f64,
    /// Iterations that always use the conservative strategy (default 2).
    pub conservative_iterations: u32,
    /// Aggressive needs a pass rate above this (default 80).
    pub aggressive_pass_rate: f64,
    /// Share of the current failures that must also have failed in the previous iteration for
    /// them to "mostly repeat" (default 0.5).
    pub repeat_ratio: f64,
    /// A pass-rate drop of more than this many points makes the next fix surgical (default 10).
    pub surgical_drop: f64,
    /// Fix attempts after which a test failing with the same assertion stops the cycle
    /// (default 2).
    pub stagnation_attempts: u32,
    /// Most tests in one aggressive batch (default 5).
    pub batch_size: usize,
    /// Re-run a failing test once before spending a repair on it (default true).
    pub recheck_flaky: bool,
    /// Seconds one test run may take before its process group is killed (default 600).
    pub run_timeout_secs: u64,
}

impl Default for TesterLimits {
    fn default() -> Self {
        TesterLimits {
            max_iterations: 10,
            quality_gate: 95.0,
            conservative_iterations: 2,
            aggressive_pass_rate: 80.0,
            repeat_ratio: 0.5,
            surgical_drop: 10.0,
            stagnation_attempts: 2,
            batch_size: 5,
            recheck_flaky: true,
            run_timeout_secs: 600,
        }
    }
}

/// The executor's cycle (`QARUN-*`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ExecutorLimits {
    /// Most iterations (default 5).
    pub max_iterations: u32,
    /// Pass rate, 0–100, that ends the cycle early (default 95).
    pub quality_gate: f64,
    /// Iterations before the gate may end the cycle while failures remain (default 2).
    pub min_iterations: u32,
    /// Re-run a failing test once before spending a repair on it (default true).
    pub recheck_flaky: bool,
    /// Seconds one test run may take before its process group is killed (default 600).
    pub run_timeout_secs: u64,
    /// Measure coverage when the framework can (default true).
    pub coverage: bool,
}

impl Default for ExecutorLimits {
    fn default() -> Self {
        ExecutorLimits {
            max_iterations: 5,
            quality_gate: 95.0,
            min_iterations: 2,
            recheck_flaky: true,
            run_timeout_secs: 600,
            coverage: true,
        }
    }
}

/// Both cycles' settings.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CycleConfig {
    /// `TEST-*` tasks.
    pub tester: TesterLimits,
    /// `QARUN-*` tasks.
    pub executor: ExecutorLimits,
}

impl CycleConfig {
    /// Applies `{tester: {...}, executor: {...}}` (a config file's `[cycles]` table or shared
    /// memory's `cycle_config`) from `source_name`.
    pub fn apply(&mut self, overrides: &Value, source_name: &str) -> Result<(), CycleConfigError> {
        let err = |message: String| CycleConfigError {
            source_name: source_name.to_string(),
            message,
        };
        let Some(map) = overrides.as_object() else {
            return Err(err(
                "expected an object with `tester` and/or `executor`".into()
            ));
        };
        for (key, value) in map {
            match key.as_str() {
                "tester" => self.tester = merged(&self.tester, value).map_err(err)?,
                "executor" => self.executor = merged(&self.executor, value).map_err(err)?,
                other => {
                    return Err(err(format!(
                        "unknown section `{other}` (expected tester or executor)"
                    )))
                }
            }
        }
        self.tester.check().map_err(err)?;
        self.executor.check().map_err(err)
    }
}

impl TesterLimits {
    /// Applies one task's `cycle` metadata.
    pub fn with_task(&self, overrides: &Value) -> Result<TesterLimits, CycleConfigError> {
        let out: TesterLimits = merged(self, overrides).map_err(task_err)?;
        out.check().map_err(task_err)?;
        Ok(out)
    }

    fn check(&self) -> Result<(), String> {
        check_common(self.max_iterations, self.quality_gate)?;
        if !(0.0..=1.0).contains(&self.repeat_ratio) {
            return Err("`repeatRatio` must be between 0 and 1".into());
        }
        if self.batch_size == 0 {
            return Err("`batchSize` must be at least 1".into());
        }
        if self.stagnation_attempts == 0 {
            return Err("`stagnationAttempts` must be at least 1".into());
        }
        Ok(())
    }
}

impl ExecutorLimits {
    /// Applies one task's `cycle` metadata.
    pub fn with_task(&self, overrides: &Value) -> Result<ExecutorLimits, CycleConfigError> {
        let out: ExecutorLimits = merged(self, overrides).map_err(task_err)?;
        out.check().map_err(task_err)?;
        Ok(out)
    }

    fn check(&self) -> Result<(), String> {
        check_common(self.max_iterations, self.quality_gate)
    }
}

fn task_err(message: String) -> CycleConfigError {
    CycleConfigError {
        source_name: "task metadata `cycle`".into(),
        message,
    }
}

fn check_common(max_iterations: u32, gate: f64) -> Result<(), String> {
    if max_iterations == 0 {
        return Err("`maxIterations` must be at least 1".into());
    }
    if !(0.0..=100.0).contains(&gate) {
        return Err("`qualityGate` must be a percentage between 0 and 100".into());
    }
    Ok(())
}

/// `snake_case` → `camelCase`.
fn camel(key: &str) -> String {
    let mut out = String::with_capacity(key.len());
    let mut upper = false;
    for c in key.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// `base` with the keys of `overrides` replaced; unknown keys and wrong types are errors.
fn merged<T: Serialize + DeserializeOwned>(base: &T, overrides: &Value) -> Result<T, String> {
    if overrides.is_null() {
        return serde_json::from_value(serde_json::to_value(base).map_err(|e| e.to_string())?)
            .map_err(|e| e.to_string());
    }
    let Some(patch) = overrides.as_object() else {
        return Err(format!("expected an object of settings, got {overrides}"));
    };
    let mut doc: Map<String, Value> = match serde_json::to_value(base) {
        Ok(Value::Object(m)) => m,
        _ => return Err("settings are not an object".into()),
    };
    for (key, value) in patch {
        let key = camel(key);
        if !doc.contains_key(&key) {
            let known: Vec<&str> = doc.keys().map(String::as_str).collect();
            return Err(format!(
                "unknown setting `{key}` (known: {})",
                known.join(", ")
            ));
        }
        doc.insert(key, value.clone());
    }
    serde_json::from_value(Value::Object(doc)).map_err(|e| format!("bad value: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_are_the_seeds_numbers() {
        let c = CycleConfig::default();
        assert_eq!((c.tester.max_iterations, c.tester.quality_gate), (10, 95.0));
        assert_eq!(
            (c.executor.max_iterations, c.executor.min_iterations),
            (5, 2)
        );
    }

    #[test]
    fn team_then_task_overrides_apply_in_either_case() {
        let mut c = CycleConfig::default();
        c.apply(&json!({"tester": {"max_iterations": 4}}), "memory")
            .unwrap();
        let t = c.tester.with_task(&json!({"qualityGate": 90})).unwrap();
        assert_eq!((t.max_iterations, t.quality_gate), (4, 90.0));
    }

    #[test]
    fn unknown_keys_and_bad_values_are_named() {
        let e = TesterLimits::default()
            .with_task(&json!({"maxIteration": 3}))
            .unwrap_err();
        assert!(e.to_string().contains("`maxIteration`"), "{e}");
        let e = TesterLimits::default()
            .with_task(&json!({"qualityGate": 120}))
            .unwrap_err();
        assert!(e.to_string().contains("qualityGate"), "{e}");
    }
}

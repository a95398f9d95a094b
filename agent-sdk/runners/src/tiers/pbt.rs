//! Whether a project can run its property-based tests: the PBT library its framework uses
//! is installed (hypothesis importable, fast-check in node_modules, proptest or quickcheck in
//! Cargo.toml).

use crate::error::RunnerError;
use crate::framework::Framework;
use crate::options::RunOptions;
use std::path::Path;

/// Why the PBT tier cannot run, when its library is not installed.
pub async fn missing_pbt_library(
    project: &Path,
    framework: Framework,
    opts: &RunOptions,
) -> Result<Option<String>, RunnerError> {
    let found = match framework {
        Framework::Pytest => {
            crate::adapters::python_probe::can_import(project, opts, "hypothesis").await?
        }
        Framework::Cargo => {
            let manifest = std::fs::read_to_string(project.join("Cargo.toml")).unwrap_or_default();
            ["proptest", "quickcheck"]
                .iter()
                .any(|l| manifest.contains(l))
        }
        fw if fw.is_node() => ["fast-check", "@fast-check/vitest", "@fast-check/jest"]
            .iter()
            .any(|p| crate::adapters::node_entry::package_dir(project, p).is_some()),
        _ => true,
    };
    let library = match framework {
        Framework::Pytest => "hypothesis (pip install hypothesis)",
        Framework::Cargo => "proptest or quickcheck in Cargo.toml's [dev-dependencies]",
        _ => "fast-check (npm install --save-dev fast-check)",
    };
    Ok((!found).then(|| format!("property-based tests need {library}; it is not installed")))
}

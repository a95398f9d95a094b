//! Whether a project can run its property-based tests: the PBT library its framework uses
//! is installed (hypothesis importable, fast-check in node_modules, proptest or quickcheck in
//! Cargo.toml; for go, rapid vendored or in the module cache — `testing/quick` is go's own).

use super::classify::pbt_library;
use crate::error::RunnerError;
use crate::framework::Framework;
use crate::options::RunOptions;
use std::path::Path;

/// rapid's module path: go would download it, and huddle never lets a run download.
const RAPID: &str = "pgregory.net/rapid";

/// Why the PBT tier cannot run, when its library is not installed. `files` are the tier's
/// (go decides by what they import: `testing/quick` needs nothing).
pub async fn missing_pbt_library(
    project: &Path,
    framework: Framework,
    files: &[String],
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
        Framework::Go => {
            !uses_rapid(project, files)
                || crate::adapters::go::has_module(project, opts, RAPID).await?
        }
        fw if fw.is_node() => ["fast-check", "@fast-check/vitest", "@fast-check/jest"]
            .iter()
            .any(|p| crate::adapters::node_entry::package_dir(project, p).is_some()),
        _ => true,
    };
    let library = match framework {
        Framework::Pytest => "hypothesis (pip install hypothesis)",
        Framework::Cargo => "proptest or quickcheck in Cargo.toml's [dev-dependencies]",
        Framework::Go => {
            "pgregory.net/rapid (imported by the tests; go mod download pgregory.net/rapid, or \
             vendor it); it is not in the module cache"
        }
        _ => "fast-check (npm install --save-dev fast-check)",
    };
    Ok((!found).then(|| {
        if framework == Framework::Go {
            format!("property-based tests need {library}")
        } else {
            format!("property-based tests need {library}; it is not installed")
        }
    }))
}

fn uses_rapid(project: &Path, files: &[String]) -> bool {
    files.iter().any(|f| {
        let text = std::fs::read_to_string(project.join(f)).unwrap_or_default();
        pbt_library(&text, Framework::Go) == Some("rapid")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn go_project(test_file: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("go.mod"),
            "module example.com/p\n\ngo 1.19\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("p_test.go"), test_file).unwrap();
        dir
    }

    /// An empty module cache of its own, so the machine's cache cannot answer.
    fn empty_cache_opts(cache: &Path) -> RunOptions {
        RunOptions {
            env: vec![("GOMODCACHE".into(), cache.display().to_string())],
            ..RunOptions::default()
        }
    }

    #[tokio::test]
    async fn go_rapid_missing_from_the_module_cache_is_named() {
        let project = go_project("package p\n\nimport \"pgregory.net/rapid\"\n");
        let cache = tempfile::tempdir().unwrap();
        let opts = empty_cache_opts(cache.path());
        let files = vec!["p_test.go".to_string()];
        let why = missing_pbt_library(project.path(), Framework::Go, &files, &opts)
            .await
            .unwrap()
            .expect("rapid is missing");
        assert!(why.contains("pgregory.net/rapid"), "{why}");
        assert!(why.contains("module cache"), "{why}");

        // The same cache with a version of rapid in it.
        std::fs::create_dir_all(cache.path().join("pgregory.net/rapid@v1.1.0")).unwrap();
        let found = missing_pbt_library(project.path(), Framework::Go, &files, &opts)
            .await
            .unwrap();
        assert_eq!(found, None);
    }

    #[tokio::test]
    async fn go_testing_quick_needs_nothing_installed() {
        let project = go_project("package p\n\nimport \"testing/quick\"\n");
        let cache = tempfile::tempdir().unwrap();
        let files = vec!["p_test.go".to_string()];
        let found = missing_pbt_library(
            project.path(),
            Framework::Go,
            &files,
            &empty_cache_opts(cache.path()),
        )
        .await
        .unwrap();
        assert_eq!(found, None);
    }
}

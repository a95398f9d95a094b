//! Go's build cache inside the sandbox. Go keeps compiled packages in `$GOCACHE`, by default
//! under the home the sandbox hides behind an empty tmpfs, so every sandboxed `go test` or
//! `go run` compiled the project and its dependencies again: a fix cycle's narrowed re-run of
//! the tiers-go fixture took 15 s rather than 6 (BENCHMARKS.md, "Go's build cache"). A Go
//! project's sandbox keeps the cache in `<project>/.huddle/go-build`, which a verdict's clean
//! copy leaves out with the rest of `.huddle`: the clean copy starts from an empty cache, so
//! nothing a run wrote there reaches the verdict.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

const VAR: &str = "GOCACHE";

/// The cache directory for `project` when it is a Go module or workspace; `None` otherwise.
/// Creates `.huddle/.gitignore` so the cache never shows in `git status`.
pub(super) fn for_project(project: &Path) -> Option<PathBuf> {
    if !["go.mod", "go.work"]
        .iter()
        .any(|f| project.join(f).is_file())
    {
        return None;
    }
    let huddle = project.join(".huddle");
    crate::rundir::ignore_huddle_dir(&huddle);
    Some(huddle.join("go-build"))
}

/// Sets `GOCACHE` to `cache` unless the run's own environment sets it.
pub(super) fn apply(cache: &Path, env: &mut Vec<(OsString, OsString)>) {
    if !env.iter().any(|(k, _)| k == VAR) {
        env.push((VAR.into(), cache.into()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_go_project_gets_a_cache_and_a_run_that_sets_one_keeps_it() {
        let node = tempfile::tempdir().unwrap();
        std::fs::write(node.path().join("package.json"), "{}").unwrap();
        assert_eq!(for_project(node.path()), None);
        assert!(!node.path().join(".huddle").exists(), "nothing written");

        let go = tempfile::tempdir().unwrap();
        std::fs::write(go.path().join("go.mod"), "module example.com/m\n").unwrap();
        let cache = for_project(go.path()).expect("a go module");
        assert_eq!(cache, go.path().join(".huddle").join("go-build"));
        assert!(go.path().join(".huddle").join(".gitignore").is_file());

        let mut env = Vec::new();
        apply(&cache, &mut env);
        assert_eq!(env, vec![(OsString::from(VAR), cache.clone().into())]);
        let mut own = vec![(OsString::from(VAR), OsString::from("/srv/cache"))];
        apply(&cache, &mut own);
        assert_eq!(
            own,
            vec![(OsString::from(VAR), OsString::from("/srv/cache"))]
        );
    }
}

//! The runs a tier's files make: one per runner (the e2e tier of a JavaScript project runs
//! Playwright beside its unit runner), each with the selection its runner takes. cargo runs
//! unit tests by target (and the library's doc tests in the unit tier), go by package, tag and test name ([`super::go_tier`]), the others by
//! file.

use super::classify::Classified;
use super::{cargo_tier, go_tier, Tier};
use crate::adapters::cargo_doc::DOC_TESTS_PATH;
use crate::framework::Framework;
use crate::options::Selection;
use std::collections::BTreeMap;
use std::path::Path;

/// One run of a tier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TierRun {
    /// The runner.
    pub framework: Framework,
    /// Which tests it runs.
    pub selection: Selection,
    /// go's `-tags` (empty for the other runners).
    pub build_tags: Vec<String>,
}

/// The runs of `files` (all in `tier`), in runner-name order.
pub fn tier_runs(project: &Path, tier: Tier, files: &[&Classified]) -> Vec<TierRun> {
    let mut groups: BTreeMap<&'static str, (Framework, Vec<&Classified>)> = BTreeMap::new();
    for c in files {
        groups
            .entry(c.runner.name())
            .or_insert_with(|| (c.runner, Vec::new()))
            .1
            .push(c);
    }
    let mut runs = Vec::new();
    for (_, (framework, group)) in groups {
        if framework == Framework::Go {
            runs.extend(go_tier::runs(project, &group).into_iter().map(|g| TierRun {
                framework,
                selection: g.selection,
                build_tags: g.tags,
            }));
            continue;
        }
        let paths: Vec<String> = group.iter().map(|c| c.file.clone()).collect();
        let mut selection = selection_paths(framework, &paths);
        if framework == Framework::Cargo && tier == Tier::Unit && has_doc_tests(project, &paths) {
            selection.push(DOC_TESTS_PATH.to_string());
        }
        runs.push(TierRun {
            framework,
            selection: Selection::Paths(selection),
            build_tags: Vec::new(),
        });
    }
    runs
}

/// Whether the library files among `files` hold doc tests: then the unit tier runs the
/// library's doc tests too.
fn has_doc_tests(project: &Path, files: &[String]) -> bool {
    files.iter().any(|f| {
        cargo_tier::is_library_file(f)
            && cargo_tier::has_doc_tests(
                &std::fs::read_to_string(project.join(f)).unwrap_or_default(),
            )
    })
}

/// What a runner's selection takes for these files: cargo runs unit tests by target
/// (`src/lib.rs` is the library's, `src/main.rs` and `src/bin/` the binaries'), the others
/// take the files.
fn selection_paths(fw: Framework, files: &[String]) -> Vec<String> {
    if fw != Framework::Cargo {
        return files.to_vec();
    }
    let mut out: Vec<String> = Vec::new();
    for f in files {
        let target = if f.starts_with("tests/") {
            f.clone()
        } else if f == "src/main.rs" || f.starts_with("src/bin/") {
            "src/main.rs".into()
        } else {
            "src/lib.rs".into()
        };
        if !out.contains(&target) {
            out.push(target);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cargo_unit_tests_run_by_target() {
        let files = vec![
            "src/lib.rs".to_string(),
            "src/text.rs".into(),
            "tests/pbt.rs".into(),
        ];
        assert_eq!(
            selection_paths(Framework::Cargo, &files),
            ["src/lib.rs", "tests/pbt.rs"]
        );
        assert_eq!(selection_paths(Framework::Pytest, &files), files);
    }

    fn go_file(project: &Path, file: &str, text: &str) -> Classified {
        let path = project.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
        Classified {
            file: file.into(),
            tier: Tier::Unit,
            reason: String::new(),
            runner: Framework::Go,
        }
    }

    #[test]
    fn a_go_tier_is_one_run_of_its_tests_with_their_tags() {
        let dir = tempfile::tempdir().unwrap();
        let a = go_file(
            dir.path(),
            "calc/api_test.go",
            "//go:build integration\n\npackage calc\nfunc TestAPI(t *testing.T) {}\n",
        );
        let b = go_file(
            dir.path(),
            "api_test.go",
            "//go:build integration\npackage main\nfunc TestRoot(t *testing.T) {}\n",
        );
        go_file(
            dir.path(),
            "calc/calc_test.go",
            "package calc\nfunc TestAdd(t *testing.T) {}\n",
        );
        let runs = tier_runs(dir.path(), Tier::Unit, &[&a, &b]);
        assert_eq!(
            runs,
            [TierRun {
                framework: Framework::Go,
                selection: Selection::Tests(vec![".::TestRoot".into(), "./calc::TestAPI".into()]),
                build_tags: vec!["integration".into()],
            }]
        );
    }

    #[test]
    fn a_go_test_name_in_two_tiers_splits_the_run_by_package() {
        let dir = tempfile::tempdir().unwrap();
        let a = go_file(
            dir.path(),
            "a/prop_test.go",
            "package a\nfunc TestProp(t *testing.T) {}\n",
        );
        let b = go_file(
            dir.path(),
            "b/b_test.go",
            "package b\nfunc TestSum(t *testing.T) {}\n",
        );
        // Another tier's TestSum in package a: one pattern for both packages would run it.
        go_file(
            dir.path(),
            "a/a_test.go",
            "package a\nfunc TestSum(t *testing.T) {}\n",
        );
        let runs = tier_runs(dir.path(), Tier::Unit, &[&a, &b]);
        let selections: Vec<&Selection> = runs.iter().map(|r| &r.selection).collect();
        assert_eq!(
            selections,
            [
                &Selection::Tests(vec!["./a::TestProp".into()]),
                &Selection::Tests(vec!["./b::TestSum".into()]),
            ]
        );
    }
}

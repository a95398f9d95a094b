//! What a go project's tiers need beyond the shared conventions: its `_test.go` files, the
//! build tags each file needs (`//go:build integration`, or the legacy `// +build`), and the
//! top-level tests each file declares. go runs packages, not files, so a tier's run is
//! `go test -tags=<its files' tags> -run '^(its tests)$' <its packages>`: a unit run never
//! compiles tagged files, and a tagged run runs only the tagged files' tests.

use super::classify::Classified;
use crate::options::Selection;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// GOOS, GOARCH and toolchain names a build constraint may use: conditions on the platform,
/// never tags to ask for.
const PLATFORM_WORDS: &[&str] = &[
    "aix",
    "android",
    "darwin",
    "dragonfly",
    "freebsd",
    "illumos",
    "ios",
    "js",
    "linux",
    "netbsd",
    "openbsd",
    "plan9",
    "solaris",
    "wasip1",
    "windows",
    "unix",
    "386",
    "amd64",
    "arm",
    "arm64",
    "loong64",
    "mips",
    "mipsle",
    "mips64",
    "mips64le",
    "ppc64",
    "ppc64le",
    "riscv64",
    "s390x",
    "wasm",
    "cgo",
    "gc",
    "gccgo",
    "ignore",
];

/// The project's go test files, as go sees them: `testdata/`, `_*` and `.*` directories are
/// not packages.
pub fn test_files(project: &Path) -> Vec<String> {
    let mut files = crate::conventions::test_files(project, crate::framework::Framework::Go);
    files.retain(|f| {
        f.split('/')
            .rev()
            .skip(1)
            .all(|d| d != "testdata" && !d.starts_with('_') && !d.starts_with('.'))
    });
    files
}

/// The tags a file's build constraint asks for (`//go:build integration && !race` →
/// `integration`), platform conditions and negated tags left out. Only lines before the
/// `package` clause are constraints.
pub fn required_tags(text: &str) -> Vec<String> {
    let mut tags: Vec<String> = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with("package ") {
            break;
        }
        let expr = line
            .strip_prefix("//go:build ")
            .or_else(|| line.strip_prefix("// +build "));
        let Some(expr) = expr else { continue };
        let mut word = String::new();
        let mut negated = false;
        for c in expr.chars().chain(std::iter::once(' ')) {
            if c.is_ascii_alphanumeric() || c == '_' || c == '.' {
                word.push(c);
                continue;
            }
            let is_tag = !word.is_empty()
                && !negated
                && !PLATFORM_WORDS.contains(&word.as_str())
                && !word.starts_with("go1.");
            if is_tag && !tags.contains(&word) {
                tags.push(word.clone());
            }
            if !word.is_empty() || c != '!' {
                negated = false;
            }
            if c == '!' {
                negated = true;
            }
            word.clear();
        }
    }
    tags
}

/// The top-level tests, examples and fuzz targets a test file declares (`TestMain` is the
/// package's setup, not a test).
pub fn test_names(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("func ") else {
            continue;
        };
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        // go's rule: after the prefix, anything but a lowercase letter.
        let is_test = ["Test", "Example", "Fuzz"].iter().any(|p| {
            name.strip_prefix(p)
                .is_some_and(|tail| !tail.starts_with(|c: char| c.is_lowercase()))
        });
        if is_test && name != "TestMain" && rest[name.len()..].starts_with('(') {
            names.push(name);
        }
    }
    names
}

/// One `go test` of a tier: its tests by id (`./pkg::TestName`) and the tags it needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoRun {
    /// The selection (`Selection::Tests`).
    pub selection: Selection,
    /// `-tags`.
    pub tags: Vec<String>,
}

/// The runs of a tier's files. One run when one `-run` pattern picks exactly the tier's
/// tests in every package; otherwise (a tier's test name also names a test of another tier
/// in a package of the run) one run per package, since `-run` cannot name a package.
pub fn runs(project: &Path, files: &[&Classified]) -> Vec<GoRun> {
    let mut by_package: BTreeMap<String, PackageTests> = BTreeMap::new();
    for c in files {
        let text = std::fs::read_to_string(project.join(&c.file)).unwrap_or_default();
        let entry = by_package.entry(package_of(&c.file)).or_default();
        entry.names.extend(test_names(&text));
        entry.tags.extend(required_tags(&text));
    }
    by_package.retain(|_, p| !p.names.is_empty());
    let all_names: BTreeSet<&String> = by_package.values().flat_map(|p| &p.names).collect();
    let clash = by_package.iter().any(|(pkg, p)| {
        names_in_package(project, pkg)
            .iter()
            .any(|n| all_names.contains(n) && !p.names.contains(n))
    });
    let run_of = |packages: &[(&String, &PackageTests)]| {
        let mut ids = Vec::new();
        let mut tags = BTreeSet::new();
        for (pkg, p) in packages {
            ids.extend(p.names.iter().map(|n| format!("{pkg}::{n}")));
            tags.extend(p.tags.iter().cloned());
        }
        GoRun {
            selection: Selection::Tests(ids),
            tags: tags.into_iter().collect(),
        }
    };
    let packages: Vec<(&String, &PackageTests)> = by_package.iter().collect();
    if packages.is_empty() {
        Vec::new()
    } else if clash {
        packages.iter().map(|p| run_of(&[*p])).collect()
    } else {
        vec![run_of(&packages)]
    }
}

/// A package's tests in one tier, and the tags their files need.
#[derive(Debug, Default)]
struct PackageTests {
    names: BTreeSet<String>,
    tags: BTreeSet<String>,
}

/// The test files that declare the tests of go report ids (`example.com/m/calc::TestAdd/sub`):
/// the files of the id's package (its import path under go.mod's module) declaring its
/// top-level test. A narrowed run of the tiers then runs those files in their tiers.
pub fn files_of_ids(project: &Path, classified: &[Classified], ids: &[String]) -> Vec<String> {
    let module = std::fs::read_to_string(project.join("go.mod"))
        .ok()
        .and_then(|m| {
            m.lines().find_map(|l| {
                l.trim()
                    .strip_prefix("module ")
                    .map(|s| s.trim().trim_matches('"').to_string())
            })
        })
        .unwrap_or_default();
    let mut files: Vec<String> = Vec::new();
    for id in ids {
        let (pkg, test) = id.split_once("::").unwrap_or((id, ""));
        let top = test.split('/').next().unwrap_or(test);
        let dir = match pkg.strip_prefix(module.as_str()) {
            Some("") => ".".to_string(),
            Some(rest) => format!(".{rest}"),
            None => continue,
        };
        for c in classified {
            let in_package = package_of(&c.file) == dir;
            if in_package && !files.contains(&c.file) {
                let text = std::fs::read_to_string(project.join(&c.file)).unwrap_or_default();
                if test_names(&text).iter().any(|n| n == top) {
                    files.push(c.file.clone());
                }
            }
        }
    }
    files
}

/// A test file's package as `go test` takes it: `./calc`, or `.` at the module root.
fn package_of(file: &str) -> String {
    file.rsplit_once('/')
        .map_or(".".to_string(), |(dir, _)| format!("./{dir}"))
}

/// Every top-level test name of a package's test files, whatever their tier.
fn names_in_package(project: &Path, package: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(project.join(package)) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with("_test.go"))
        .flat_map(|e| test_names(&std::fs::read_to_string(e.path()).unwrap_or_default()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn build_constraints_give_their_tags_without_platforms_or_negations() {
        assert_eq!(
            required_tags("//go:build integration\n\npackage x\n"),
            ["integration"]
        );
        assert_eq!(required_tags("// +build e2e\n\npackage x\n"), ["e2e"]);
        assert_eq!(
            required_tags(
                "//go:build linux && (integration || slow) && !race && go1.18\npackage x"
            ),
            ["integration", "slow"]
        );
        assert!(required_tags("//go:build !integration\npackage x").is_empty());
        assert!(
            required_tags("package x\n//go:build integration\n").is_empty(),
            "after the package clause it is a comment"
        );
    }

    #[test]
    fn report_ids_map_to_the_files_declaring_their_tests() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        std::fs::create_dir_all(p.join("calc")).unwrap();
        std::fs::write(p.join("go.mod"), "module example.com/m\n\ngo 1.19\n").unwrap();
        let files = [
            (
                "calc/a_test.go",
                "package calc\nfunc TestAdd(t *testing.T) {}\n",
            ),
            (
                "calc/b_test.go",
                "package calc\nfunc TestSub(t *testing.T) {}\n",
            ),
            ("root_test.go", "package m\nfunc TestAdd(t *testing.T) {}\n"),
        ];
        let classified: Vec<Classified> = files
            .iter()
            .map(|(f, text)| {
                std::fs::write(p.join(f), text).unwrap();
                Classified {
                    file: f.to_string(),
                    tier: super::super::Tier::Unit,
                    reason: String::new(),
                    runner: crate::framework::Framework::Go,
                }
            })
            .collect();
        let ids = vec![
            "example.com/m/calc::TestAdd/one_case".to_string(),
            "example.com/m::TestAdd".to_string(),
            "other.org/x::TestAdd".to_string(),
        ];
        assert_eq!(
            files_of_ids(p, &classified, &ids),
            ["calc/a_test.go", "root_test.go"]
        );
    }

    #[test]
    fn test_names_follow_gos_rules() {
        let text = "func TestAdd(t *testing.T) {}\nfunc TestMain(m *testing.M) {}\n\
                    func Testify(t *testing.T) {}\nfunc Test_under(t *testing.T) {}\n\
                    func ExampleAdd() {}\nfunc FuzzAdd(f *testing.F) {}\n\
                    func helper() {}\n\tfunc TestIndented() {}\n";
        assert_eq!(
            test_names(text),
            ["TestAdd", "Test_under", "ExampleAdd", "FuzzAdd"]
        );
    }
}

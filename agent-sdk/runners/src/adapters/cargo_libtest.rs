//! Reading `cargo test` output: libtest prints one `test NAME ... RESULT` line per test on
//! stdout, and cargo announces each test binary with a `Running …` line on stderr. Cargo runs
//! binaries one after another, so the k-th `running N tests` block on stdout belongs to the
//! k-th `Running` line on stderr — except that an edition 2024 crate's doc tests print two
//! blocks (its merged doctests, then the standalone ones) under one `Doc-tests` line (see
//! `block_owners`).

use crate::report::{Outcome, TestResult};
use std::collections::HashMap;

/// Where a workspace member's test binaries' sources are: (target name with `_` for `-`,
/// source path relative to the member, as cargo's `Running` line gives it) → source path
/// relative to the project. Empty for a single package, whose paths already are.
pub type MemberSources = HashMap<(String, String), String>;

/// The source path (or doc-test label) of each test binary, in run order; a workspace
/// member's paths made relative to the project through `members`.
pub(crate) fn binaries(stderr: &str, members: &MemberSources) -> Vec<String> {
    stderr
        .lines()
        .filter_map(|l| {
            let l = l.trim_start();
            if let Some(rest) = l.strip_prefix("Running ") {
                let rest = rest.strip_prefix("unittests ").unwrap_or(rest);
                let (label, binary) = rest.split_once(" (").unwrap_or((rest, ""));
                let label = label.trim().to_string();
                // `target/debug/deps/app-21ddc0deb5b05c85)` → `app`.
                let stem = binary
                    .trim_end_matches(')')
                    .rsplit('/')
                    .next()
                    .and_then(|f| f.rsplit_once('-'))
                    .map_or("", |(name, _)| name);
                Some(
                    members
                        .get(&(stem.to_string(), label.clone()))
                        .cloned()
                        .unwrap_or(label),
                )
            } else {
                l.strip_prefix("Doc-tests ")
                    .map(|c| format!("doc-tests/{}", c.trim()))
            }
        })
        .collect()
}

/// `panicked at src/lib.rs:38:9` → (`src/lib.rs`, 38).
pub(crate) fn panic_location(text: &str) -> Option<(String, u32)> {
    let at = text.find("panicked at ")? + "panicked at ".len();
    let mut parts = text[at..].split(':');
    let file = parts.next()?.trim().to_string();
    let line = parts.next()?.trim().parse().ok()?;
    Some((file, line))
}

/// The file and line a doc test's name gives (`src/lib.rs - add (line 5)`).
fn doc_test_location(name: &str) -> Option<(String, u32)> {
    let (file, rest) = name.split_once(" - ")?;
    let line = rest
        .rsplit_once("(line ")?
        .1
        .split(')')
        .next()?
        .parse()
        .ok()?;
    Some((file.to_string(), line))
}

/// The directory of the crate a doc test's name points into (`itoa/src/lib.rs - f (line 3)`
/// → `itoa/`), to tell one crate's blocks from the next one's.
fn crate_dir(test_name: &str) -> &str {
    let path = test_name.split(" - ").next().unwrap_or(test_name);
    path.rfind("src/").map_or("", |at| &path[..at])
}

/// The binary each output block belongs to, given the first test name of each block. There
/// are more blocks than binaries only when edition 2024 doc-test binaries printed a second
/// block; such a block follows its crate's first block and names files of the same crate.
fn block_owners(bins: &[String], first_names: &[Option<String>]) -> Vec<usize> {
    let mut extra = first_names.len().saturating_sub(bins.len());
    let mut owners = Vec::with_capacity(first_names.len());
    let mut bin = 0;
    for (k, name) in first_names.iter().enumerate() {
        if k > 0 {
            let previous = first_names[k - 1].as_deref();
            let same_crate = extra > 0
                && bins.get(bin).is_some_and(|b| b.starts_with("doc-tests/"))
                && matches!((previous, name.as_deref()), (Some(p), Some(n)) if crate_dir(p) == crate_dir(n));
            if same_crate {
                extra -= 1;
            } else {
                bin += 1;
            }
        }
        owners.push(bin);
    }
    owners
}

/// The first test name of each `running N tests` block.
fn first_names_of_blocks(stdout: &str) -> Vec<Option<String>> {
    let mut firsts: Vec<Option<String>> = Vec::new();
    for line in stdout.lines() {
        if line.starts_with("running ") && line.ends_with(" tests") || line == "running 1 test" {
            firsts.push(None);
        } else if let Some(last) = firsts.last_mut().filter(|l| l.is_none()) {
            *last = line
                .strip_prefix("test ")
                .and_then(|r| r.rsplit_once(" ... "))
                .map(|(n, _)| n.to_string());
        }
    }
    firsts
}

/// Parses libtest's per-test lines and failure sections.
pub fn parse_libtest(stdout: &str, stderr: &str) -> Vec<TestResult> {
    parse_libtest_in(stdout, stderr, &MemberSources::new())
}

/// [`parse_libtest`] in a workspace, whose members' paths `members` maps.
pub fn parse_libtest_in(stdout: &str, stderr: &str, members: &MemberSources) -> Vec<TestResult> {
    let bins = binaries(stderr, members);
    let owners = block_owners(&bins, &first_names_of_blocks(stdout));
    let mut results: Vec<(usize, TestResult)> = Vec::new();
    let mut details: HashMap<(usize, String), String> = HashMap::new();
    let mut block: Option<usize> = None;
    let mut section: Option<String> = None;
    for line in stdout.lines() {
        if line.starts_with("running ") && line.ends_with(" tests") || line == "running 1 test" {
            block = Some(block.map_or(0, |b| b + 1));
            section = None;
            continue;
        }
        let Some(k) = block else { continue };
        if let Some(name) = line.strip_prefix("---- ").and_then(|l| {
            l.strip_suffix(" stdout ----")
                .or_else(|| l.strip_suffix(" stderr ----"))
        }) {
            section = Some(name.to_string());
            continue;
        }
        if line == "failures:" || line.starts_with("test result: ") {
            section = None;
        }
        if let Some(name) = &section {
            let d = details.entry((k, name.clone())).or_default();
            d.push_str(line);
            d.push('\n');
            continue;
        }
        let Some(rest) = line.strip_prefix("test ") else {
            continue;
        };
        let Some((name, verdict)) = rest.rsplit_once(" ... ") else {
            continue;
        };
        let outcome = match verdict {
            "ok" => Outcome::Passed,
            "FAILED" => Outcome::Failed,
            v if v.starts_with("ignored") => Outcome::Skipped,
            _ => continue,
        };
        let owner = owners.get(k).copied().unwrap_or(k);
        let target = bins
            .get(owner)
            .cloned()
            .unwrap_or_else(|| format!("binary-{k}"));
        let name = without_test_mode(name, target.starts_with("doc-tests/"));
        let mut t = TestResult::new(format!("{target}::{name}"), outcome);
        if target.starts_with("doc-tests/") {
            // `src/lib.rs - add (line 5)`: the example's file and first line.
            if let Some((file, line)) = doc_test_location(name) {
                t.file = Some(file);
                t.lineno = Some(line);
            }
        } else {
            t.file = Some(target);
        }
        results.push((k, t));
    }
    results
        .into_iter()
        .map(|(k, mut t)| {
            if t.outcome == Outcome::Failed {
                let name = t.nodeid.split_once("::").map_or("", |(_, n)| n).to_string();
                let text = details.remove(&(k, name)).unwrap_or_default();
                // A doc test panics at a line of the generated program, not of the file.
                let location = if t.lineno.is_none() {
                    panic_location(&text)
                } else {
                    None
                };
                if let Some((file, line)) = location {
                    t.file = Some(file);
                    t.lineno = Some(line);
                }
                t.longrepr = Some(text.trim().to_string());
            }
            t
        })
        .chain(crashes(stderr))
        .collect()
}

/// A test's name without the mode libtest prints after it in a run (`- should panic`; for a
/// doc test also `- compile fail` and `- compile`, a `no_run` example): its `--list` line and
/// the ids of a re-run carry none.
fn without_test_mode(name: &str, doc: bool) -> &str {
    let modes: &[&str] = if doc {
        &[" - should panic", " - compile fail", " - compile"]
    } else {
        &[" - should panic"]
    };
    modes
        .iter()
        .find_map(|m| name.strip_suffix(m))
        .unwrap_or(name)
}

/// Test binaries that died from a signal (abort, segfault): their running test never printed
/// a result line.
fn crashes(stderr: &str) -> Vec<TestResult> {
    stderr
        .lines()
        .filter(|l| l.contains("process didn't exit successfully") && l.contains("signal:"))
        .map(|l| {
            let mut t = TestResult::new("[crash]", Outcome::Error);
            t.longrepr = Some(l.trim().to_string());
            t
        })
        .collect()
}

/// Parses `cargo test -- --list`: `name: test` lines, each binary's list closed by an
/// `N tests, M benchmarks` line.
pub fn parse_list(stdout: &str, stderr: &str, members: &MemberSources) -> Vec<String> {
    let bins = binaries(stderr, members);
    // The first test name of each binary's list (`None` for an empty one).
    let mut firsts: Vec<Option<String>> = vec![None];
    for line in stdout.lines() {
        if let Some(name) = line.strip_suffix(": test") {
            let last = firsts.last_mut().expect("one list at least");
            if last.is_none() {
                *last = Some(name.to_string());
            }
        } else if line.ends_with(" benchmarks") || line.ends_with(" benchmark") {
            firsts.push(None);
        }
    }
    firsts.pop();
    let owners = block_owners(&bins, &firsts);
    let mut k = 0;
    let mut tests = Vec::new();
    for line in stdout.lines() {
        if let Some(name) = line.strip_suffix(": test") {
            let owner = owners.get(k).copied().unwrap_or(k);
            let target = bins.get(owner).map_or("", String::as_str);
            tests.push(format!("{target}::{name}"));
        } else if line.ends_with(" benchmarks") || line.ends_with(" benchmark") {
            k += 1;
        }
    }
    tests
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `cargo test` on a workspace whose crate `a` is edition 2024 (two doc-test blocks:
    /// merged, then standalone) and whose crate `b` is edition 2021 (one block).
    const STDERR: &str = "     Running unittests src/lib.rs (target/debug/deps/a-1)\n   Doc-tests a\n   Doc-tests b\n";
    const STDOUT: &str = "running 1 test\ntest tests::t ... ok\n\ntest result: ok.\n\n\
running 2 tests\ntest a/src/lib.rs - f (line 3) ... ok\ntest a/src/lib.rs - g (line 9) ... ok\n\ntest result: ok.\n\n\
running 1 test\ntest a/src/lib.rs - h (line 20) ... ok\n\ntest result: ok.\n\n\
all doctests ran in 1.0s; merged doctests compilation took 0.5s\n\n\
running 1 test\ntest b/src/lib.rs - k (line 2) ... ok\n\ntest result: ok.\n";

    #[test]
    fn an_edition_2024_crates_two_doc_blocks_belong_to_it() {
        let ids: Vec<String> = parse_libtest(STDOUT, STDERR)
            .into_iter()
            .map(|t| t.nodeid)
            .collect();
        assert_eq!(
            ids,
            [
                "src/lib.rs::tests::t",
                "doc-tests/a::a/src/lib.rs - f (line 3)",
                "doc-tests/a::a/src/lib.rs - g (line 9)",
                "doc-tests/a::a/src/lib.rs - h (line 20)",
                "doc-tests/b::b/src/lib.rs - k (line 2)",
            ]
        );
    }

    #[test]
    fn listing_an_edition_2024_crate_keeps_both_doc_lists() {
        let stdout = "tests::t: test\n\n1 test, 0 benchmarks\n\
a/src/lib.rs - f (line 3): test\n\n1 test, 0 benchmarks\n\
a/src/lib.rs - h (line 20): test\n\n1 test, 0 benchmarks\n\
b/src/lib.rs - k (line 2): test\n\n1 test, 0 benchmarks\n";
        let ids = parse_list(stdout, STDERR, &MemberSources::new());
        assert_eq!(
            ids,
            [
                "src/lib.rs::tests::t",
                "doc-tests/a::a/src/lib.rs - f (line 3)",
                "doc-tests/a::a/src/lib.rs - h (line 20)",
                "doc-tests/b::b/src/lib.rs - k (line 2)",
            ]
        );
    }
}

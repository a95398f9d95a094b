//! Reading `cargo test` output: libtest prints one `test NAME ... RESULT` line per test on
//! stdout, and cargo announces each test binary with a `Running …` line on stderr. Cargo runs
//! binaries one after another, so the k-th `running N tests` block on stdout belongs to the
//! k-th `Running` line on stderr.

use crate::report::{Outcome, TestResult};
use std::collections::HashMap;

/// Where a workspace member's test binaries' sources are: (target name with `_` for `-`,
/// source path relative to the member, as cargo's `Running` line gives it) → source path
/// relative to the project. Empty for a single package, whose paths already are.
pub type MemberSources = HashMap<(String, String), String>;

/// The source path (or doc-test label) of each test binary, in run order; a workspace
/// member's paths made relative to the project through `members`.
fn binaries(stderr: &str, members: &MemberSources) -> Vec<String> {
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

/// Parses libtest's per-test lines and failure sections.
pub fn parse_libtest(stdout: &str, stderr: &str) -> Vec<TestResult> {
    parse_libtest_in(stdout, stderr, &MemberSources::new())
}

/// [`parse_libtest`] in a workspace, whose members' paths `members` maps.
pub fn parse_libtest_in(stdout: &str, stderr: &str, members: &MemberSources) -> Vec<TestResult> {
    let bins = binaries(stderr, members);
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
        let name = name.strip_suffix(" - should panic").unwrap_or(name);
        let target = bins
            .get(k)
            .cloned()
            .unwrap_or_else(|| format!("binary-{k}"));
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
    let mut k = 0;
    let mut tests = Vec::new();
    for line in stdout.lines() {
        if let Some(name) = line.strip_suffix(": test") {
            let target = bins.get(k).map_or("", String::as_str);
            tests.push(format!("{target}::{name}"));
        } else if line.ends_with(" benchmarks") || line.ends_with(" benchmark") {
            k += 1;
        }
    }
    tests
}

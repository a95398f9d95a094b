//! Reading `go test -json` (test2json events, one JSON object per line) into report entries.
//! Lines that are not JSON (go before 1.24 prints `FAIL pkg [build failed]` and `[setup
//! failed]` as plain text) and the compiler's `# pkg` blocks on stderr become error entries.

use crate::report::{Outcome, TestResult};
use serde::Deserialize;
use std::collections::HashMap;

#[derive(Deserialize)]
struct Event {
    #[serde(rename = "Action")]
    action: String,
    #[serde(rename = "Package", default)]
    package: String,
    #[serde(rename = "ImportPath", default)]
    import_path: String,
    #[serde(rename = "Test", default)]
    test: Option<String>,
    #[serde(rename = "Elapsed", default)]
    elapsed: Option<f64>,
    #[serde(rename = "Output", default)]
    output: Option<String>,
}

#[derive(Default)]
struct TestState {
    outcome: Option<Outcome>,
    elapsed: f64,
    output: String,
}

#[derive(Default)]
struct Package {
    /// Tests in the order they started.
    order: Vec<String>,
    tests: HashMap<String, TestState>,
    outcome: Option<Outcome>,
    output: String,
    build_failed: bool,
}

/// Parses go's JSON event stream. `module` is the module path from go.mod (to turn import
/// paths into file paths); `stderr` holds compiler output for build failures. Every test event
/// counts, as `go test -json` and gotestsum count them: a parent of subtests is a test of its
/// own (it fails when a subtest fails, and its failure text names the failing subtests).
pub fn parse_go_events(stdout: &str, stderr: &str, module: &str) -> Vec<TestResult> {
    let mut packages: Vec<(String, Package)> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut pkg = |name: &str| -> usize {
        *index.entry(name.to_string()).or_insert_with(|| {
            packages.push((name.to_string(), Package::default()));
            packages.len() - 1
        })
    };
    let mut build_output: HashMap<String, String> = HashMap::new();
    let mut updates: Vec<(usize, Event)> = Vec::new();
    for line in stdout.lines() {
        match serde_json::from_str::<Event>(&crate::text::json_escapes_fixed(line)) {
            Ok(ev) if ev.action == "build-output" => build_output
                .entry(ev.import_path.clone())
                .or_default()
                .push_str(ev.output.as_deref().unwrap_or("")),
            Ok(ev) if ev.action == "build-fail" => {}
            Ok(ev) => updates.push((pkg(&ev.package), ev)),
            Err(_) => {
                // `FAIL\tpkg [build failed]` / `[setup failed]`
                if let Some(rest) = line.strip_prefix("FAIL\t") {
                    if let Some((name, why)) = rest.split_once(' ') {
                        if why.contains("failed]") {
                            let i = pkg(name);
                            updates.push((i, synthetic_build_failure(name)));
                        }
                    }
                }
            }
        }
    }
    for (i, ev) in updates {
        apply(&mut packages[i].1, ev);
    }
    let compiler = compiler_blocks(stderr);
    let mut results = Vec::new();
    for (name, p) in &packages {
        report_package(name, p, module, &compiler, &build_output, &mut results);
    }
    results
}

/// The tests that had started and not ended when the run was stopped (a parent with a hung
/// subtest is one of them), as `package::Test/sub` ids, in start order. go's events come as
/// the tests run, so everything else already is in [`parse_go_events`]'s results.
pub fn unfinished_go_tests(stdout: &str) -> Vec<String> {
    let mut started: Vec<String> = Vec::new();
    let mut ended: std::collections::HashSet<String> = std::collections::HashSet::new();
    for line in stdout.lines() {
        let Ok(ev) = serde_json::from_str::<Event>(&crate::text::json_escapes_fixed(line)) else {
            continue;
        };
        let Some(test) = ev.test else { continue };
        let id = format!("{}::{test}", ev.package);
        match ev.action.as_str() {
            "run" => started.push(id),
            "pass" | "fail" | "skip" => {
                ended.insert(id);
            }
            _ => {}
        }
    }
    started.retain(|id| !ended.contains(id));
    started
}

fn synthetic_build_failure(pkg: &str) -> Event {
    Event {
        action: "build-failed".into(),
        package: pkg.into(),
        import_path: String::new(),
        test: None,
        elapsed: None,
        output: None,
    }
}

fn apply(p: &mut Package, ev: Event) {
    let outcome = match ev.action.as_str() {
        "pass" => Some(Outcome::Passed),
        "fail" => Some(Outcome::Failed),
        "skip" => Some(Outcome::Skipped),
        "build-failed" => {
            p.build_failed = true;
            p.outcome = Some(Outcome::Error);
            return;
        }
        _ => None,
    };
    match ev.test {
        Some(test) => {
            if !p.tests.contains_key(&test) {
                p.order.push(test.clone());
            }
            let t = p.tests.entry(test).or_default();
            if let Some(o) = outcome {
                t.outcome = Some(o);
                t.elapsed = ev.elapsed.unwrap_or(0.0);
            }
            if let Some(out) = ev.output {
                t.output.push_str(&out);
            }
        }
        None => {
            if let Some(o) = outcome {
                if !p.build_failed {
                    p.outcome = Some(o);
                }
            }
            if let Some(out) = ev.output {
                p.output.push_str(&out);
            }
        }
    }
}

/// `# import/path` headed blocks of compiler output on stderr, by import path.
fn compiler_blocks(stderr: &str) -> HashMap<String, String> {
    let mut blocks: HashMap<String, String> = HashMap::new();
    let mut current: Option<String> = None;
    for line in stderr.lines() {
        if let Some(name) = line.strip_prefix("# ") {
            let name = name.split_whitespace().next().unwrap_or(name).to_string();
            current = Some(name);
            continue;
        }
        if let Some(name) = &current {
            let block = blocks.entry(name.clone()).or_default();
            block.push_str(line);
            block.push('\n');
        }
    }
    blocks
}

fn report_package(
    name: &str,
    p: &Package,
    module: &str,
    compiler: &HashMap<String, String>,
    build_output: &HashMap<String, String>,
    results: &mut Vec<TestResult>,
) {
    let dir = name
        .strip_prefix(module)
        .map(|d| d.trim_start_matches('/'))
        .unwrap_or(name);
    if p.build_failed || (p.tests.is_empty() && p.outcome == Some(Outcome::Failed)) {
        let text = compiler
            .get(name)
            .or_else(|| build_output.get(name))
            .cloned()
            .unwrap_or_else(|| p.output.clone());
        let mut t = TestResult::new(name, Outcome::Error);
        t.longrepr = Some(text.trim_end().to_string());
        results.push(t);
        return;
    }
    let package_failed = p.outcome == Some(Outcome::Failed);
    let outcomes: HashMap<&str, Outcome> = p
        .order
        .iter()
        .filter_map(|test| Some((test.as_str(), verdict(&p.tests[test], package_failed)?)))
        .collect();
    let failed_leaves = failed_leaves(&p.order, &outcomes);
    let first = results.len();
    for test in &p.order {
        let Some(&outcome) = outcomes.get(test.as_str()) else {
            continue;
        };
        let state = &p.tests[test];
        let mut t = TestResult::new(format!("{name}::{test}"), outcome);
        t.duration = state.elapsed;
        if outcome == Outcome::Failed {
            let mut text = own_output(state);
            if state.outcome.is_none() {
                text.push('\n');
                text.push_str(&p.output);
            }
            let leaves = failed_leaves.get(test.as_str());
            if let Some(leaves) = leaves {
                text.push_str("\nfailed subtests: ");
                text.push_str(&leaves.join(", "));
            }
            // A parent that failed through its subtests points at the first failing one.
            let location = first_location(&text).or_else(|| {
                leaves
                    .and_then(|l| l.first())
                    .and_then(|leaf| first_location(&own_output(&p.tests[*leaf])))
            });
            if let Some((file, line)) = location {
                t.file = Some(if dir.is_empty() {
                    file
                } else {
                    format!("{dir}/{file}")
                });
                t.lineno = Some(line);
            }
            t.longrepr = Some(text.trim_start_matches('\n').trim_end().to_string());
        }
        results.push(t);
    }
    // A failed package whose tests all passed failed elsewhere (TestMain, init, a vet check).
    let any_failure = results[first..].iter().any(|r| r.outcome.is_failure());
    if package_failed && !any_failure {
        let mut t = TestResult::new(name, Outcome::Error);
        t.longrepr = Some(p.output.trim_end().to_string());
        results.push(t);
    }
}

/// A test's verdict: its own terminal event; one that started but never finished failed when
/// its package did (the binary died: a panic, os.Exit, its own timeout), and is left out
/// otherwise (as gotestsum does).
fn verdict(state: &TestState, package_failed: bool) -> Option<Outcome> {
    match state.outcome {
        Some(o) => Some(o),
        None if package_failed => Some(Outcome::Failed),
        None => None,
    }
}

/// A test's output without go's `=== RUN`/`=== PAUSE`/`=== CONT` markers.
fn own_output(state: &TestState) -> String {
    state
        .output
        .lines()
        .filter(|l| !l.starts_with("=== "))
        .collect::<Vec<_>>()
        .join("\n")
}

/// For each test with failing subtests, its failing leaves (failed subtests with no failed
/// subtest of their own), in run order: each failure is walked up its `/`-separated
/// ancestors once, so deep trees cost the depth, not the size of the package.
fn failed_leaves<'a>(
    order: &'a [String],
    outcomes: &HashMap<&str, Outcome>,
) -> HashMap<&'a str, Vec<&'a str>> {
    let failed: Vec<&str> = order
        .iter()
        .map(String::as_str)
        .filter(|t| outcomes.get(t) == Some(&Outcome::Failed))
        .collect();
    let ancestors = |test: &'a str| {
        test.match_indices('/')
            .map(move |(i, _)| &test[..i])
            .filter(|a| outcomes.contains_key(a))
    };
    let parents: std::collections::HashSet<&str> =
        failed.iter().flat_map(|t| ancestors(t)).collect();
    let mut leaves: HashMap<&str, Vec<&str>> = HashMap::new();
    for leaf in failed.iter().filter(|t| !parents.contains(*t)) {
        for ancestor in ancestors(leaf) {
            leaves.entry(ancestor).or_default().push(leaf);
        }
    }
    leaves
}

/// The first `file.go:NN:` in a test's output (where `t.Error`/`t.Fatal` was called).
fn first_location(text: &str) -> Option<(String, u32)> {
    text.lines().find_map(|l| {
        let l = l.trim_start();
        let (file, rest) = l.split_once(".go:")?;
        let line: u32 = rest.split(':').next()?.parse().ok()?;
        (!file.contains(' ')).then(|| (format!("{file}.go"), line))
    })
}

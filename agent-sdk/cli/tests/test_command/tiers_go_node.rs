//! `huddle test --tiers` on the go and node:test tier fixtures (`tests/fixtures/tiers-go`,
//! `tests/fixtures/tiers-node`): each tier's counts checked against the framework's own run
//! of the same files, and each tier's run holding only that tier's tests.

use crate::common::*;
use crate::tiers::{counts, processes_in, run_json, tier, tiers_args};
use huddle_cli::test_command::{execute, TestArgs};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;

/// The test ids a tier's runs reported (from each run's report.json).
fn tier_test_ids(report: &Value, name: &str) -> BTreeSet<String> {
    let mut ids = BTreeSet::new();
    for run in tier(report, name)["runs"].as_array().expect("runs") {
        let dir = Path::new(run["run_dir"].as_str().expect("run_dir"));
        let text = std::fs::read_to_string(dir.join("report.json")).expect("report.json");
        let r: Value = serde_json::from_str(&text).expect("a report");
        for t in r["tests"].as_array().expect("tests") {
            ids.insert(t["nodeid"].as_str().expect("nodeid").to_string());
        }
    }
    ids
}

/// (passed, failed, skipped) per top-level test, as `go test -json ./...` itself reports
/// them, for the tests `wanted` names (subtests count, as in huddle's reports).
fn go_own_counts(project: &Path, wanted: &[&str]) -> (u64, u64, u64) {
    let out = std::process::Command::new("go")
        .args(["test", "-json", "./..."])
        .current_dir(project)
        .output()
        .expect("go test runs");
    let (mut passed, mut failed, mut skipped) = (0, 0, 0);
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Ok(ev) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let Some(test) = ev["Test"].as_str() else {
            continue;
        };
        if !wanted.contains(&test.split('/').next().unwrap_or(test)) {
            continue;
        }
        match ev["Action"].as_str() {
            Some("pass") => passed += 1,
            Some("fail") => failed += 1,
            Some("skip") => skipped += 1,
            _ => {}
        }
    }
    (passed, failed, skipped)
}

const GO_UNIT: &[&str] = &[
    "TestShoutAddsOneMark",
    "TestWordsCountsFields",
    "TestReverseAWord",
    "TestClampAtTheLimit",
];
const GO_PBT: &[&str] = &[
    "TestReverseTwiceIsTheSame",
    "TestShoutIsIdempotent",
    "TestWordsIsNeverNegative",
    "TestClampStaysInRange",
];
const GO_INTEGRATION: &[&str] = &[
    "TestServiceIsHealthy",
    "TestWordsEndpointCounts",
    "TestWordsEndpointIgnoresPunctuation",
];

fn with_counts((p, f, s): (u64, u64, u64)) -> (u64, u64, u64, u64, u64) {
    (p, f, 0, s, p + f + s)
}

fn go_ids(names: &[&str]) -> BTreeSet<String> {
    names
        .iter()
        .map(|n| format!("example.com/tiersgo/text::{n}"))
        .collect()
}

#[tokio::test]
async fn go_tiers_run_by_tag_and_name_and_match_gos_own_counts() {
    require_tool("go");
    let project = fixture("tiers-go");
    let out = execute(&tiers_args(project.path())).await;
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    let report = run_json(&out);
    let unit = counts(tier(&report, "unit"));
    let pbt = counts(tier(&report, "pbt"));
    assert_eq!(unit, with_counts(go_own_counts(project.path(), GO_UNIT)));
    assert_eq!(pbt, with_counts(go_own_counts(project.path(), GO_PBT)));
    // go's counts, written out: a subtest table in the unit tier, a failure in each tier.
    assert_eq!(unit, (5, 1, 0, 0, 6));
    assert_eq!(pbt, (3, 1, 0, 0, 4));
    // Only `-tags integration` compiles these; the service answers them over HTTP.
    assert_eq!(
        counts(tier(&report, "integration")),
        (2, 1, 0, 0, 3),
        "{report:#}"
    );
    assert_eq!(tier(&report, "e2e")["skipped"], "no_tests");

    // Each tier's run held its own tests and no other tier's.
    let top_level = |name: &str| -> BTreeSet<String> {
        tier_test_ids(&report, name)
            .into_iter()
            .map(|id| {
                let (pkg, test) = id.split_once("::").expect("a go test id");
                format!("{pkg}::{}", test.split('/').next().unwrap_or(test))
            })
            .collect()
    };
    assert_eq!(top_level("unit"), go_ids(GO_UNIT));
    assert_eq!(top_level("pbt"), go_ids(GO_PBT));
    assert_eq!(top_level("integration"), go_ids(GO_INTEGRATION));

    let integration = tier(&report, "integration");
    assert_eq!(integration["services"][0]["name"], "wordsvc");
    assert_eq!(integration["services"][0]["healthy"], true);
    assert_eq!(
        integration["failures"][0]["test"],
        "example.com/tiersgo/text::TestWordsEndpointIgnoresPunctuation"
    );
    assert_eq!(
        processes_in(project.path()),
        Vec::<String>::new(),
        "the service is stopped"
    );
}

#[tokio::test]
async fn go_explain_names_the_build_tag_and_the_pbt_import() {
    let project = fixture("tiers-go");
    let out = execute(&TestArgs {
        json: false,
        explain: true,
        ..tiers_args(project.path())
    })
    .await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    for line in [
        "  text/api_test.go — build tag integration (go test -tags integration)",
        "  text/props_test.go — uses testing/quick",
        "  text/text_test.go — no integration, PBT or e2e sign: unit",
    ] {
        assert!(out.stdout.contains(line), "{line:?} in:\n{}", out.stdout);
    }
}

/// (passed, failed, skipped) as node's own TAP reporter counts them for `files`.
fn node_own_counts(project: &Path, files: &[&str]) -> (u64, u64, u64) {
    let out = std::process::Command::new("node")
        .args(["--test", "--test-reporter=tap"])
        .args(files)
        .current_dir(project)
        .output()
        .expect("node --test runs");
    let tap = String::from_utf8_lossy(&out.stdout);
    let count = |key: &str| -> u64 {
        tap.lines()
            .find_map(|l| l.strip_prefix(&format!("# {key} ")))
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or_else(|| panic!("no `# {key}` line in node's TAP:\n{tap}"))
    };
    (count("pass"), count("fail"), count("skipped"))
}

#[tokio::test]
async fn node_test_tiers_run_each_tiers_files_and_match_nodes_own_counts() {
    require_tool("node");
    let project = fixture("tiers-node");
    let out = execute(&tiers_args(project.path())).await;
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    let report = run_json(&out);
    let unit = counts(tier(&report, "unit"));
    let pbt = counts(tier(&report, "pbt"));
    assert_eq!(
        unit,
        with_counts(node_own_counts(project.path(), &["test/unit/text.test.js"]))
    );
    assert_eq!(
        pbt,
        with_counts(node_own_counts(project.path(), &["test/props.test.js"]))
    );
    assert_eq!(unit, (4, 1, 0, 0, 5));
    assert_eq!(pbt, (3, 1, 0, 0, 4));
    assert_eq!(
        counts(tier(&report, "integration")),
        (2, 1, 0, 0, 3),
        "{report:#}"
    );
    assert_eq!(tier(&report, "e2e")["skipped"], "no_tests");
    for (name, file) in [
        ("unit", "test/unit/text.test.js"),
        ("pbt", "test/props.test.js"),
        ("integration", "test/api.int.test.js"),
    ] {
        assert_eq!(tier(&report, name)["files"], serde_json::json!([file]));
        assert_eq!(tier(&report, name)["runs"][0]["framework"], "node-test");
        let ids = tier_test_ids(&report, name);
        assert!(
            ids.iter().all(|id| id.starts_with(&format!("{file}::"))),
            "{name} ran only {file}: {ids:?}"
        );
    }
    let integration = tier(&report, "integration");
    assert_eq!(integration["services"][0]["healthy"], true);
    assert_eq!(
        integration["failures"][0]["test"],
        "test/api.int.test.js::the words endpoint ignores punctuation"
    );
    assert_eq!(
        processes_in(project.path()),
        Vec::<String>::new(),
        "the service is stopped"
    );
}

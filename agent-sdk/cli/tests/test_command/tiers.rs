//! `huddle test --tiers` on the tier fixtures (`tests/fixtures/tiers-*`): each tier's counts
//! as the framework itself reports them (tests/fixtures/README.md), services started and
//! stopped, a service that never gets healthy, the budget, and `--explain`.

use crate::cli::args;
use crate::common::*;
use huddle_cli::test_command::{execute, TestArgs};
use serde_json::Value;
use std::path::Path;

pub(crate) fn tiers_args(project: &Path) -> TestArgs {
    let mut a = args(project);
    a.json = true;
    a.tiers.enabled = true;
    a
}

/// (passed, failed, error, skipped, total) of one tier, or its skip reason.
pub(crate) fn tier<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["tiers"]
        .as_array()
        .expect("tiers")
        .iter()
        .find(|t| t["tier"] == name)
        .unwrap_or_else(|| panic!("no tier {name} in {report:#}"))
}

/// Asserts tier `name`'s counts. A mismatch names the tier as reported and each of its runs'
/// `report.json` (their error entries say what a count alone hides: a build or a sandbox that
/// failed), so a failure on a busy CI machine can be read after the fact.
pub(crate) fn assert_counts(report: &Value, name: &str, expected: (u64, u64, u64, u64, u64)) {
    let t = tier(report, name);
    let got = counts(t);
    if got == expected {
        return;
    }
    let mut runs = String::new();
    for run in t["runs"].as_array().into_iter().flatten() {
        if let Some(dir) = run["run_dir"].as_str() {
            let report = std::fs::read_to_string(Path::new(dir).join("report.json"))
                .unwrap_or_else(|e| format!("(unreadable: {e})"));
            runs.push_str(&format!("\n{dir}/report.json:\n{report}"));
        }
    }
    panic!("tier {name}: got {got:?}, expected {expected:?}\n{t:#}{runs}");
}

pub(crate) fn counts(t: &Value) -> (u64, u64, u64, u64, u64) {
    let s = &t["summary"];
    let n = |k: &str| s[k].as_u64().expect("count");
    (
        n("passed"),
        n("failed"),
        n("error"),
        n("skipped"),
        n("total"),
    )
}

/// The tier fixtures run on their `.venv` (`scripts/install-test-deps` makes it), which has
/// the plugins the other fixtures' interpreter does not.
fn require_python_modules(modules: &str) {
    require_pytest();
    let python = fixture_source("tiers-python").join(".venv/bin/python");
    let ok = std::process::Command::new(&python)
        .args(["-c", &format!("import {modules}")])
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        ok,
        "{} cannot import {modules}: run scripts/install-test-deps",
        python.display()
    );
}

fn require_chromium() {
    assert!(
        Path::new("/usr/bin/chromium").exists() || std::env::var_os("HUDDLE_CHROMIUM").is_some(),
        "Chromium is required by the e2e tier (/usr/bin/chromium or $HUDDLE_CHROMIUM): run \
         scripts/install-test-deps"
    );
}

/// Processes whose working directory is inside `dir` (a service left running would be one).
pub(crate) fn processes_in(dir: &Path) -> Vec<String> {
    let dir = dir.canonicalize().expect("project dir");
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let Ok(cwd) = std::fs::read_link(e.path().join("cwd")) else {
            continue;
        };
        if cwd.starts_with(&dir) {
            let cmd = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
            found.push(String::from_utf8_lossy(&cmd).replace('\0', " "));
        }
    }
    found
}

pub(crate) fn run_json(out: &huddle_cli::test_command::CommandOutput) -> Value {
    serde_json::from_str(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is the tiers report ({e}): {}{}",
            out.stdout, out.stderr
        )
    })
}

#[tokio::test]
async fn python_tiers_match_pytest_counts_and_the_service_is_started_and_stopped() {
    require_python_modules("hypothesis, pytest_playwright");
    require_chromium();
    let project = fixture("tiers-python");
    let out = execute(&tiers_args(project.path())).await;
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    let report = run_json(&out);
    assert_eq!(report["verdict"], "failed");
    assert_counts(&report, "unit", (4, 1, 0, 0, 5));
    assert_counts(&report, "pbt", (3, 1, 0, 0, 4));
    assert_counts(&report, "integration", (3, 1, 0, 0, 4));
    assert_counts(&report, "e2e", (1, 0, 0, 0, 1));
    let pbt = tier(&report, "pbt");
    assert_eq!(
        pbt["timeout_secs"].as_u64(),
        Some(2 * tier(&report, "unit")["timeout_secs"].as_u64().unwrap()),
        "PBT gets twice the unit timeout"
    );
    let integration = tier(&report, "integration");
    assert_eq!(integration["services"][0]["name"], "api");
    assert_eq!(integration["services"][0]["healthy"], true);
    assert_eq!(
        integration["failures"][0]["test"],
        "tests/integration/test_api.py::test_words_endpoint_counts_punctuation"
    );
    assert_eq!(integration["failures"][0]["class"], "implementation");
    // Each tier is its own run with its own report.
    for name in ["unit", "pbt", "integration", "e2e"] {
        let run_dir = tier(&report, name)["runs"][0]["run_dir"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(
            Path::new(&run_dir).join("report.json").is_file(),
            "{name}: {run_dir}"
        );
    }
    let dir = report["dir"].as_str().unwrap();
    assert!(Path::new(dir).join("tiers.json").is_file());
    assert!(Path::new(dir)
        .join("integration/services/api.log")
        .is_file());
    assert_eq!(
        processes_in(project.path()),
        Vec::<String>::new(),
        "services stopped"
    );
}

#[tokio::test]
async fn a_service_that_never_gets_healthy_skips_integration_with_its_log_tail() {
    require_pytest();
    let project = fixture("tiers-python-unhealthy");
    let out = execute(&tiers_args(project.path())).await;
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    let report = run_json(&out);
    assert_eq!(
        counts(tier(&report, "unit")),
        (2, 0, 0, 0, 2),
        "unit still runs"
    );
    let integration = tier(&report, "integration");
    assert_eq!(integration["skipped"], "service_unhealthy");
    let detail = integration["skip_detail"].as_str().unwrap();
    assert!(
        detail.contains("api: waiting for database at postgres://127.0.0.1:1/app"),
        "the log tail: {detail}"
    );
    assert!(detail.contains("not healthy after 20s"), "{detail}");
    assert!(integration["runs"].as_array().unwrap().is_empty());
    assert_eq!(tier(&report, "pbt")["skipped"], "no_tests");
    assert_eq!(report["verdict"], "failed");
    assert_eq!(
        processes_in(project.path()),
        Vec::<String>::new(),
        "the group is stopped"
    );
    let human = execute(&TestArgs {
        json: false,
        ..tiers_args(project.path())
    })
    .await;
    assert!(
        human
            .stdout
            .contains("integration  skipped: service_unhealthy")
            && human
                .stdout
                .contains("not run: integration (service_unhealthy)"),
        "{}",
        human.stdout
    );
}

#[tokio::test]
async fn js_tiers_run_vitest_then_playwright_and_keep_the_failures_artifacts() {
    require_tool("node");
    require_chromium();
    let project = fixture("tiers-js");
    let out = execute(&tiers_args(project.path())).await;
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    let report = run_json(&out);
    assert_counts(&report, "unit", (4, 1, 0, 0, 5));
    assert_counts(&report, "pbt", (3, 1, 0, 0, 4));
    assert_eq!(tier(&report, "integration")["skipped"], "no_tests");
    let e2e = tier(&report, "e2e");
    assert_eq!(counts(e2e), (1, 1, 0, 0, 2));
    assert_eq!(e2e["runs"][0]["framework"], "playwright");
    assert_eq!(tier(&report, "unit")["runs"][0]["framework"], "vitest");
    let artifacts: Vec<&str> = e2e["artifacts"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let dir = Path::new(report["dir"].as_str().unwrap());
    assert!(
        artifacts.iter().any(|a| a.ends_with("trace.zip")),
        "{artifacts:?}"
    );
    assert!(
        artifacts.iter().any(|a| a.ends_with(".png")),
        "{artifacts:?}"
    );
    for a in &artifacts {
        assert!(dir.join(a).is_file(), "{a} is in the run directory");
    }
    assert_eq!(
        processes_in(project.path()),
        Vec::<String>::new(),
        "services stopped"
    );
}

#[tokio::test]
async fn rust_tiers_run_the_library_then_proptest_then_the_integration_target() {
    require_tool("cargo");
    let project = fixture("tiers-rust");
    let out = execute(&tiers_args(project.path())).await;
    assert_eq!(out.code, 1, "{}{}", out.stdout, out.stderr);
    let report = run_json(&out);
    // `cargo test --lib` (4 passed, 1 failed) and `cargo test --doc` (1 passed).
    assert_counts(&report, "unit", (5, 1, 0, 0, 6));
    let unit_run = Path::new(
        tier(&report, "unit")["runs"][0]["run_dir"]
            .as_str()
            .unwrap(),
    );
    let unit_report = std::fs::read_to_string(unit_run.join("report.json")).unwrap();
    assert!(
        unit_report.contains("doc-tests/huddle_fixture_tiers_rust::src/lib.rs - encode"),
        "the doc test runs in the unit tier: {unit_report}"
    );
    assert_counts(&report, "pbt", (3, 1, 0, 0, 4));
    assert_counts(&report, "integration", (2, 0, 0, 0, 2));
    assert_eq!(tier(&report, "e2e")["skipped"], "no_tests");
    assert_eq!(
        tier(&report, "pbt")["failures"][0]["test"],
        "tests/pbt.rs::clamp_is_below_100"
    );
}

#[tokio::test]
async fn explain_says_why_each_file_is_in_its_tier() {
    let project = fixture("tiers-python");
    let out = execute(&TestArgs {
        json: false,
        explain: true,
        ..tiers_args(project.path())
    })
    .await;
    assert_eq!(out.code, 0, "{}", out.stderr);
    for line in [
        "  tests/unit/test_text.py — huddle.toml [tiers] unit lists tests/unit",
        "  tests/pbt/test_properties.py — in the directory pbt/",
        "  tests/integration/test_api.py — in the directory integration/",
        "  tests/e2e/test_page.py — uses Playwright (pytest-playwright)",
        "service api: `python3 -m app.server --port {port}`",
    ] {
        assert!(out.stdout.contains(line), "{line:?} in:\n{}", out.stdout);
    }
    assert!(
        !project.path().join(".huddle").exists(),
        "--explain runs nothing"
    );
}

#[tokio::test]
async fn a_spent_budget_skips_tiers_and_a_missing_pbt_library_is_named() {
    let project = fixture("tiers-python-unhealthy");
    let out = execute(&TestArgs {
        tiers: huddle_cli::tiers_command::TiersArgs {
            budget: Some(0),
            ..tiers_args(project.path()).tiers
        },
        ..tiers_args(project.path())
    })
    .await;
    let report = run_json(&out);
    assert_eq!(tier(&report, "unit")["skipped"], "budget_exhausted");
    assert_eq!(tier(&report, "integration")["skipped"], "budget_exhausted");
    assert_eq!(out.code, 1);

    // A crate whose huddle.toml puts a test in the PBT tier without a PBT library.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("Cargo.toml"),
        "[package]\nname = \"p\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .unwrap();
    std::fs::create_dir_all(dir.path().join("tests")).unwrap();
    std::fs::write(dir.path().join("tests/props.rs"), "#[test]\nfn t() {}\n").unwrap();
    std::fs::write(
        dir.path().join("huddle.toml"),
        "[tiers]\npbt = [\"tests/props.rs\"]\n",
    )
    .unwrap();
    let out = execute(&TestArgs {
        framework: Some("cargo".into()),
        ..tiers_args(dir.path())
    })
    .await;
    let report = run_json(&out);
    let pbt = tier(&report, "pbt");
    assert_eq!(pbt["skipped"], "no_pbt_library", "{report:#}");
    assert!(pbt["skip_detail"].as_str().unwrap().contains("proptest"));
}

#[tokio::test]
async fn a_broken_project_file_is_a_clear_error() {
    let project = fixture("tiers-python");
    std::fs::write(
        project.path().join("huddle.toml"),
        "[services.api]\ncommand = \"x\"\n",
    )
    .unwrap();
    let out = execute(&tiers_args(project.path())).await;
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("huddle.toml") && out.stderr.contains("health"),
        "{}",
        out.stderr
    );
}

#[tokio::test]
async fn affected_tiers_run_the_changed_codes_tests_and_name_uncovered_implementation() {
    require_python_modules("hypothesis");
    let project = fixture("tiers-python");
    git_commit_all(project.path());
    let text = project.path().join("app/text.py");
    let mut code = std::fs::read_to_string(&text).unwrap();
    code.push_str("\n# touched\n");
    std::fs::write(&text, code).unwrap();
    std::fs::write(
        project.path().join("app/billing.py"),
        "def total(x):\n    return x\n",
    )
    .unwrap();
    let out = execute(&TestArgs {
        affected: true,
        ..tiers_args(project.path())
    })
    .await;
    let report = run_json(&out);
    assert!(
        out.stderr
            .contains("uncovered implementation: app/billing.py"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("app/text.py → unit: tests/unit/test_text.py"),
        "{}",
        out.stderr
    );
    assert_eq!(
        tier(&report, "unit")["files"],
        serde_json::json!(["tests/unit/test_text.py"])
    );
    assert_counts(&report, "unit", (4, 1, 0, 0, 5));
    assert_eq!(
        counts(tier(&report, "pbt")),
        (3, 1, 0, 0, 4),
        "it imports app.text"
    );
    // The integration tests talk HTTP: no import maps them to app/text.py.
    assert_eq!(tier(&report, "integration")["skipped"], "no_tests");
    assert_eq!(tier(&report, "e2e")["skipped"], "no_tests");
}

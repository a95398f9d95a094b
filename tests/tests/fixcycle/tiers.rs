//! The tester on a project with test tiers (`huddle.toml` declares a service): every run is the
//! tiers pipeline, `test_result` carries each tier's counts, skips and failure classes, and a
//! tier that could not run (its service never got healthy) is infrastructure: set aside and
//! escalated with `fix_required`, never sent to the model.

use huddle_sdk::roles::history::project_name;
use huddle_sdk::wire::TaskStatus;
use huddle_tests::llm::projects::{require_tool, tier_fixture};
use huddle_tests::llm::team::{settings, team};
use serde_json::{json, Value};

fn tier<'a>(data: &'a Value, name: &str) -> &'a Value {
    data["tiers"]["tiers"]
        .as_array()
        .unwrap_or_else(|| panic!("no tiers in {data:#}"))
        .iter()
        .find(|t| t["tier"] == name)
        .unwrap()
}

fn counts(t: &Value) -> (u64, u64, u64) {
    let s = &t["summary"];
    (
        s["passed"].as_u64().unwrap(),
        s["failed"].as_u64().unwrap(),
        s["total"].as_u64().unwrap(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unhealthy_service_is_escalated_as_infrastructure_and_the_unit_tier_still_runs() {
    require_tool("python3");
    let project = tier_fixture("tiers-python-unhealthy");
    let t = team().await;
    t.task("TEST-001", json!({})).await;
    t.start_tester(settings(&project.root, None));
    let task = t.closed("TEST-001").await;
    assert_eq!(task.status, TaskStatus::Failed, "{:?}", task.failure_reason);

    let required = t.one("fix_required").await.data;
    assert_eq!(required["category"], "environment", "{required:#}");
    assert_eq!(required["tests"], json!(["[tier:integration]"]));
    let d = t.one("test_result").await.data;
    assert_eq!(counts(tier(&d, "unit")), (2, 0, 2));
    let integration = tier(&d, "integration");
    assert_eq!(integration["skipped"], "service_unhealthy");
    assert!(
        integration["skipDetail"]
            .as_str()
            .unwrap()
            .contains("waiting for database"),
        "{integration:#}"
    );
    assert_eq!(d["environmentFailures"], json!(["[tier:integration]"]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_testers_verdict_run_reports_every_tier_with_failure_classes() {
    require_tool("python3");
    require_tool("chromium");
    let project = tier_fixture("tiers-python");
    let t = team().await;
    t.task("TEST-001", json!({"tiers": true})).await;
    // No model: the three failures stay, and the verdict is the tiers' full run.
    t.start_tester(settings(&project.root, None));
    let task = t.closed("TEST-001").await;
    assert_eq!(task.status, TaskStatus::Failed);
    let d = t.one("test_result").await.data;
    assert_eq!(d["tiers"]["verdict"], "failed");
    assert_eq!(counts(tier(&d, "unit")), (4, 1, 5));
    assert_eq!(counts(tier(&d, "pbt")), (3, 1, 4));
    assert_eq!(counts(tier(&d, "integration")), (3, 1, 4));
    assert_eq!(counts(tier(&d, "e2e")), (1, 0, 1));
    assert_eq!(
        tier(&d, "integration")["failures"][0]["class"],
        "implementation"
    );
    assert_eq!(
        (d["total"].as_u64(), d["failed"].as_u64()),
        (Some(14), Some(3)),
        "{d:#}"
    );

    // Each tier of the verdict run is in the test history as its own run.
    let name = project_name(&project.root);
    for (tier, passed, failed) in [
        ("unit", 4, 1),
        ("pbt", 3, 1),
        ("integration", 3, 1),
        ("e2e", 1, 0),
    ] {
        let h = t.coord.tier_history(Some(&name), tier).await.unwrap();
        let last = h
            .runs
            .last()
            .unwrap_or_else(|| panic!("no {tier} run: {h:?}"));
        assert_eq!(last.tier.as_deref(), Some(tier));
        assert_eq!((last.passed, last.failed), (passed, failed), "{tier}");
    }
    let r = t
        .coord
        .tier_regressions(Some(&name), "integration")
        .await
        .unwrap();
    assert_eq!(r.tests, [], "one run per tier: nothing passed before");
    // The service was kept up across the task's runs and its tiers; the task's end stops it.
    assert_eq!(
        processes_in(&project.root),
        Vec::<String>::new(),
        "the tester stopped the services when the task closed"
    );
}

/// Processes whose working directory is inside `dir` (a service left running would be one).
fn processes_in(dir: &std::path::Path) -> Vec<String> {
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

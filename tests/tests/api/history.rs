//! The test history over real HTTP: workers post runs, anyone in the team reads the trend,
//! flaky tests and regressions; observers may not post; bad runs answer 400 naming the field.

use huddle_tests::TestDaemon;
use serde_json::{json, Value};

fn run(tree: &str, outcomes: &[(&str, &str)]) -> Value {
    json!({
        "project": "calc",
        "tree": tree,
        "outcomes": outcomes.iter().map(|(n, o)| json!({"nodeid": n, "outcome": o})).collect::<Vec<_>>(),
    })
}

#[tokio::test]
async fn runs_posted_by_workers_answer_the_trend_flaky_tests_and_regressions() {
    let d = TestDaemon::start().await;
    let c = d.team("qa").await;
    let t = d.agent("qa", "tester", "tester").await;
    let x = d.agent("qa", "executor", "executor").await;
    let o = d.agent("qa", "watcher", "observer").await;

    let empty = o.get(&o.t("/history")).await.expect_status(200);
    assert_eq!(empty.body["project"], Value::Null);
    assert_eq!(empty.body["runs"], json!([]));

    let first = t
        .post(
            &t.t("/history/runs"),
            run("t1", &[("t.py::coin", "passed"), ("t.py::old", "passed")]),
        )
        .await
        .expect_status(201);
    assert_eq!(first.body["passRate"], 100.0);
    assert_eq!(first.body["agent"], "tester");
    x.post(
        &x.t("/history/runs"),
        run("t1", &[("t.py::coin", "failed"), ("t.py::old", "passed")]),
    )
    .await
    .expect_status(201);
    c.post(
        &c.t("/history/runs"),
        run("t2", &[("t.py::coin", "passed"), ("t.py::old", "failed")]),
    )
    .await
    .expect_status(201);
    o.post(&o.t("/history/runs"), run("t3", &[]))
        .await
        .expect_error(403, "forbidden");

    let h = o.get(&o.t("/history")).await.expect_status(200);
    assert_eq!(h.body["project"], "calc");
    assert_eq!(h.body["projects"], json!(["calc"]));
    let rates: Vec<f64> = h.body["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["passRate"].as_f64().unwrap())
        .collect();
    assert_eq!(rates, [100.0, 50.0, 50.0]);
    assert_eq!(h.body["passRateChange"], -50.0);

    let f = t
        .get(&t.t("/history/flaky?project=calc&tree=t1"))
        .await
        .expect_status(200);
    assert_eq!(f.body["tree"], "t1");
    assert_eq!(f.body["tests"][0]["nodeid"], "t.py::coin");
    assert_eq!(f.body["tests"][0]["passes"], 1);
    assert_eq!(f.body["tests"][0]["failures"], 1);
    assert_eq!(f.body["tests"].as_array().unwrap().len(), 1);

    let r = t.get(&t.t("/history/regressions")).await.expect_status(200);
    assert_eq!(r.body["tests"].as_array().unwrap().len(), 1, "{}", r.body);
    assert_eq!(r.body["tests"][0]["nodeid"], "t.py::old");
    assert_eq!(r.body["tests"][0]["lastPassingRun"]["tree"], "t1");
    assert_eq!(r.body["tests"][0]["failingRun"]["tree"], "t2");

    t.get(&t.t("/history?project=nope"))
        .await
        .expect_error(404, "not_found");
}

#[tokio::test]
async fn bad_runs_answer_400_naming_the_field() {
    let d = TestDaemon::start_with(|s| s.limits.max_test_outcomes = 2).await;
    d.team("qa").await;
    let t = d.agent("qa", "tester", "tester").await;
    let cases = [
        (run("", &[]), "tree"),
        (
            json!({"project": " ", "tree": "t", "outcomes": []}),
            "project",
        ),
        (
            run("t", &[("a", "passed"), ("b", "passed"), ("c", "passed")]),
            "outcomes",
        ),
        (
            run("t", &[("a", "passed"), ("a", "failed")]),
            "outcomes[1].nodeid",
        ),
        (
            json!({"project": "p", "tree": "t", "startedAt": "soon", "outcomes": []}),
            "startedAt",
        ),
    ];
    for (body, field) in cases {
        let reply = t
            .post(&t.t("/history/runs"), body)
            .await
            .expect_error(400, "invalid_field");
        assert_eq!(
            reply.body["error"]["details"]["field"], field,
            "{}",
            reply.body
        );
    }
    let reply = t
        .post(&t.t("/history/runs"), run("t", &[("a", "flaky")]))
        .await;
    assert_eq!(reply.status.as_u16(), 400, "{}", reply.body);
}

#[tokio::test]
async fn a_tiers_runs_have_their_own_trend_and_regressions() {
    let d = TestDaemon::start().await;
    d.team("qa").await;
    let t = d.agent("qa", "tester", "tester").await;
    let tiered = |tree: &str, tier: &str, outcomes: &[(&str, &str)]| {
        let mut body = run(tree, outcomes);
        body["tier"] = json!(tier);
        body
    };
    for body in [
        tiered("t1", "unit", &[("u::a", "passed"), ("u::b", "passed")]),
        tiered("t1", "integration", &[("i::api", "passed")]),
        tiered("t2", "unit", &[("u::a", "passed"), ("u::b", "passed")]),
        tiered("t2", "integration", &[("i::api", "failed")]),
    ] {
        let stored = t
            .post(&t.t("/history/runs"), body.clone())
            .await
            .expect_status(201);
        assert_eq!(stored.body["tier"], body["tier"]);
    }
    let unit = t.get(&t.t("/history?tier=unit")).await.expect_status(200);
    let tiers: Vec<&str> = unit.body["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["tier"].as_str().unwrap())
        .collect();
    assert_eq!(tiers, ["unit", "unit"]);
    assert_eq!(unit.body["passRateChange"], 0.0);
    let integration = t
        .get(&t.t("/history?project=calc&tier=integration"))
        .await
        .expect_status(200);
    assert_eq!(
        integration.body["passRateChange"], -100.0,
        "{}",
        integration.body
    );
    let r = t
        .get(&t.t("/history/regressions?tier=integration"))
        .await
        .expect_status(200);
    assert_eq!(r.body["tests"][0]["nodeid"], "i::api", "{}", r.body);
    let none = t
        .get(&t.t("/history/regressions?tier=unit"))
        .await
        .expect_status(200);
    assert_eq!(none.body["tests"], json!([]));
    t.post(&t.t("/history/runs"), tiered("t3", &"x".repeat(33), &[]))
        .await
        .expect_error(400, "invalid_field");
}

/// A run lists the files it kept (screenshots, traces, videos, the raw report) and the history
/// shows them with the run; a list the daemon cannot take is refused naming the field.
#[tokio::test]
async fn a_runs_kept_files_are_listed_with_it_in_the_history() {
    let d = TestDaemon::start().await;
    d.team("qa").await;
    let t = d.agent("qa", "tester", "tester").await;
    let mut posted = run("t1", &[("e2e/test_login.py::test_login", "failed")]);
    posted["artifacts"] = json!({"runDir": "/work/app/.huddle/runs/20261129-1",
        "files": [{"path": "playwright-output/test-login/trace.zip", "kind": "trace", "bytes": 48213},
                  {"path": "playwright-output/test-login/video.webm", "kind": "video", "bytes": 912000, "removed": true}]});
    let stored = t
        .post(&t.t("/history/runs"), posted.clone())
        .await
        .expect_status(201);
    assert_eq!(stored.body["artifacts"], posted["artifacts"]);
    let h = t.get(&t.t("/history")).await.expect_status(200);
    assert_eq!(h.body["runs"][0]["artifacts"], posted["artifacts"]);

    let mut bad = posted.clone();
    bad["artifacts"]["files"][0]["kind"] = json!("core_dump");
    let refused = t
        .post(&t.t("/history/runs"), bad)
        .await
        .expect_error(400, "invalid_field");
    assert_eq!(
        refused.body["error"]["details"]["field"],
        "artifacts.files[0].kind"
    );
}

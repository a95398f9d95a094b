//! `huddle history [--flaky|--regressions]`: tables for people, `--json` for scripts.

use huddle_tests::cli::Huddle;
use huddle_tests::TestDaemon;
use serde_json::json;

#[tokio::test]
async fn history_shows_runs_flaky_tests_and_regressions() {
    let d = TestDaemon::start().await;
    d.team("qa").await;
    let tester = d.agent("qa", "tester", "tester").await;
    let h = Huddle::new(&d.url, &tester.token, "qa");

    assert_eq!(
        h.ok(&["history"]).await.trim(),
        "no test history yet: testers post each full run of their suite"
    );
    for (tree, coin, old) in [
        ("aaaa", "passed", "passed"),
        ("aaaa", "failed", "passed"),
        ("bbbb", "passed", "failed"),
    ] {
        tester
            .post(
                &tester.t("/history/runs"),
                json!({"project": "calc", "tree": tree, "outcomes": [
                    {"nodeid": "t.py::coin", "outcome": coin},
                    {"nodeid": "t.py::old", "outcome": old},
                ]}),
            )
            .await
            .expect_status(201);
    }

    let table = h.ok(&["history", "--project", "calc"]).await;
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(
        lines[0], "project calc · 3 run(s) · -50.0 points since the first",
        "{table}"
    );
    assert!(
        lines[2].starts_with("RUN") && lines[2].contains("PASS RATE"),
        "{table}"
    );
    assert_eq!(lines.len(), 6, "{table}");
    assert!(
        lines[5].contains("bbbb") && lines[5].ends_with("50.0%"),
        "{table}"
    );
    let runs = h.json(&["history"]).await;
    assert_eq!(runs["runs"].as_array().unwrap().len(), 3);

    let flaky = h.ok(&["history", "--flaky"]).await;
    assert!(flaky.starts_with("1 flaky test(s) in 3 run(s)"), "{flaky}");
    let row = flaky.lines().last().unwrap();
    assert!(
        row.starts_with("1.00") && row.ends_with("t.py::coin"),
        "{flaky}"
    );
    let on_b = h.json(&["history", "--flaky", "--tree", "bbbb"]).await;
    assert_eq!(on_b["tests"], json!([]));

    let regressions = h.ok(&["history", "--regressions"]).await;
    assert!(regressions.starts_with("1 regression(s)"), "{regressions}");
    let row = regressions.lines().last().unwrap();
    assert!(
        row.starts_with("failed")
            && row.contains("(aaaa)")
            && row.contains("(bbbb)")
            && row.ends_with("t.py::old"),
        "{regressions}"
    );
    let json = h.json(&["history", "--regressions"]).await;
    assert_eq!(json["tests"][0]["nodeid"], "t.py::old");

    let (code, err) = h.fails(&["history", "--project", "nope"]).await;
    assert_eq!(code, 1);
    assert!(
        err.contains("no test history for project \"nope\""),
        "{err}"
    );
    let (code, _) = h.fails(&["history", "--flaky", "--regressions"]).await;
    assert_eq!(code, 2);
}

#[tokio::test]
async fn history_reads_one_tiers_runs() {
    let d = TestDaemon::start().await;
    d.team("qa").await;
    let tester = d.agent("qa", "tester", "tester").await;
    let h = Huddle::new(&d.url, &tester.token, "qa");
    for (tier, outcome) in [
        ("unit", "passed"),
        ("integration", "passed"),
        ("integration", "failed"),
    ] {
        tester
            .post(
                &tester.t("/history/runs"),
                json!({"project": "calc", "tree": "aaaa", "tier": tier, "outcomes": [
                    {"nodeid": format!("{tier}::t"), "outcome": outcome},
                ]}),
            )
            .await
            .expect_status(201);
    }
    let unit = h.json(&["history", "--tier", "unit"]).await;
    assert_eq!(unit["runs"].as_array().unwrap().len(), 1, "{unit}");
    assert_eq!(unit["runs"][0]["tier"], "unit");
    let table = h.ok(&["history", "--tier", "integration"]).await;
    assert!(
        table.starts_with("project calc · 2 run(s) · -100.0 points since the first"),
        "{table}"
    );
    let r = h
        .json(&["history", "--regressions", "--tier", "integration"])
        .await;
    assert_eq!(r["tests"][0]["nodeid"], "integration::t", "{r}");
    let r = h
        .json(&["history", "--regressions", "--tier", "unit"])
        .await;
    assert_eq!(r["tests"], json!([]));
}

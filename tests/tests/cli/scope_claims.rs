//! `huddle task why-not-ready`: what holds a task back, from a terminal, as a real process.

use huddle_tests::cli::Huddle;
use huddle_tests::TestDaemon;

#[tokio::test]
async fn why_not_ready_names_the_task_whose_scope_overlaps_and_its_holder() {
    let d = TestDaemon::start().await;
    let coord = d.team("qa").await;
    let tester = d.agent("qa", "tester-1", "tester").await;
    let as_coord = Huddle::new(&d.url, &coord.token, "qa");
    let as_tester = Huddle::new(&d.url, &tester.token, "qa");
    for (id, scope) in [
        ("TEST-001", "src/parser/**"),
        ("TEST-002", "src/parser/lex.rs"),
    ] {
        let metadata = format!(r#"{{"scope": ["{scope}"]}}"#);
        as_coord
            .ok(&["task", "add", id, "parser", "--metadata", &metadata])
            .await;
    }
    let claimed = as_tester.json(&["task", "claim"]).await;
    assert_eq!(claimed["id"], "TEST-001");
    let none = as_tester.json(&["task", "claim"]).await;
    assert!(none.is_null(), "TEST-002 is held back: {none}");

    let why = as_coord.json(&["task", "why-not-ready", "TEST-002"]).await;
    assert_eq!(why["reasons"][0]["kind"], "scope", "{why}");
    assert_eq!(why["reasons"][0]["tasks"][0], "TEST-001");
    let said = as_coord.ok(&["task", "why-not-ready", "TEST-002"]).await;
    assert!(
        said.contains("TEST-001") && said.contains("tester-1") && said.contains("src/parser/**"),
        "{said}"
    );
    as_tester.ok(&["task", "release", "TEST-001"]).await;
    let said = as_coord.ok(&["task", "why-not-ready", "TEST-002"]).await;
    assert!(said.contains("claimable now"), "{said}");
}

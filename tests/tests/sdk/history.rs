//! The typed client against the test history: one test tier's trend, flaky tests and
//! regressions (`tier_history`, `tier_flaky_tests`, `tier_regressions`).

use huddle_sdk::wire::{NewTestRun, Role, TestOutcome, TestResultRecord};
use huddle_tests::clients;
use huddle_tests::TestDaemon;

fn run(tree: &str, tier: &str, nodeid: &str, outcome: TestOutcome) -> NewTestRun {
    NewTestRun {
        project: "calc".into(),
        tree: tree.into(),
        started_at: None,
        outcomes: vec![TestResultRecord {
            nodeid: nodeid.into(),
            outcome,
        }],
        tier: Some(tier.into()),
        task: None,
        artifacts: None,
    }
}

#[tokio::test]
async fn one_tiers_trend_flaky_tests_and_regressions_leave_the_other_tiers_out() {
    let d = TestDaemon::start().await;
    let coord = clients::team(&d, "qa").await;
    let tester = clients::agent(&d, "qa", "tester-1", Role::Tester).await;
    // unit passes throughout; integration fails then passes on t1 (flaky there), then fails
    // on t2 (a regression).
    for r in [
        run("t1", "unit", "u::a", TestOutcome::Passed),
        run("t1", "integration", "i::api", TestOutcome::Failed),
        run("t1", "integration", "i::api", TestOutcome::Passed),
        run("t2", "unit", "u::a", TestOutcome::Passed),
        run("t2", "integration", "i::api", TestOutcome::Failed),
    ] {
        tester.post_test_run(&r).await.expect("posted");
    }
    // Without a tier, only the whole-suite runs (a tier's run repeats their executions).
    tester
        .post_test_run(&NewTestRun {
            tier: None,
            task: None,
            artifacts: None,
            ..run("t2", "unit", "u::a", TestOutcome::Passed)
        })
        .await
        .expect("posted");
    let whole = coord.test_history(Some("calc")).await.unwrap();
    let tiers: Vec<Option<&str>> = whole.runs.iter().map(|r| r.tier.as_deref()).collect();
    assert_eq!(tiers, [None]);
    let unit = coord.tier_history(Some("calc"), "unit").await.unwrap();
    let tiers: Vec<Option<&str>> = unit.runs.iter().map(|r| r.tier.as_deref()).collect();
    assert_eq!(tiers, [Some("unit"), Some("unit")]);

    let flaky = coord
        .tier_flaky_tests(Some("calc"), Some("t1"), "integration")
        .await
        .unwrap();
    let names: Vec<&str> = flaky.tests.iter().map(|t| t.nodeid.as_str()).collect();
    assert_eq!(names, ["i::api"]);
    assert_eq!(flaky.runs, 2, "only t1's integration runs count");
    let unit_flaky = coord
        .tier_flaky_tests(Some("calc"), None, "unit")
        .await
        .unwrap();
    assert!(unit_flaky.tests.is_empty(), "{unit_flaky:?}");

    let regressions = coord
        .tier_regressions(Some("calc"), "integration")
        .await
        .unwrap();
    assert_eq!(regressions.tests.len(), 1, "{regressions:?}");
    let none = coord.tier_regressions(Some("calc"), "unit").await.unwrap();
    assert!(none.tests.is_empty(), "{none:?}");
}

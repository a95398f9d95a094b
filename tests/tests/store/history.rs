//! The test history on every backend: runs are counted and kept per project (and tier) up to
//! `[history] runs_per_project` (4 in the test stores), a team's projects are bounded
//! (`max_projects`, 3 here), and flaky tests and regressions come out the same on both.

use huddle_daemon::store::test_history::{flaky, history, regressions};
use huddle_daemon::store::StoreError;
use huddle_sdk::wire::{NewTestRun, TestOutcome, TestResultRecord};
use huddle_tests::store::{backends, team};

fn run(project: &str, tree: &str, outcomes: &[(&str, TestOutcome)]) -> NewTestRun {
    NewTestRun {
        project: project.into(),
        tree: tree.into(),
        started_at: None,
        tier: None,
        task: None,
        artifacts: None,
        outcomes: outcomes
            .iter()
            .map(|(nodeid, outcome)| TestResultRecord {
                nodeid: nodeid.to_string(),
                outcome: *outcome,
            })
            .collect(),
    }
}

use TestOutcome::{Error, Failed, Passed, Skipped};

#[tokio::test]
async fn a_run_is_counted_and_only_the_newest_runs_per_project_are_kept() {
    for (store, _dir) in backends().await {
        let (_, tester, _) = team(&*store, "qa").await;
        let first = store
            .record_test_run(
                &tester,
                run(
                    "calc",
                    "t1",
                    &[("a", Passed), ("b", Failed), ("c", Skipped), ("d", Error)],
                ),
            )
            .await
            .unwrap();
        assert_eq!(
            (first.passed, first.failed, first.skipped, first.errors),
            (1, 1, 1, 1)
        );
        assert_eq!(first.agent, "tester");
        assert!((first.pass_rate - 100.0 / 3.0).abs() < 1e-9);
        for tree in ["t2", "t3", "t4", "t5"] {
            store
                .record_test_run(&tester, run("calc", tree, &[("a", Passed)]))
                .await
                .unwrap();
        }
        store
            .record_test_run(&tester, run("other", "x", &[("a", Passed)]))
            .await
            .unwrap();

        let runs = store.test_runs(tester.team_id, "calc", true).await.unwrap();
        let trees: Vec<&str> = runs.iter().map(|r| r.summary.tree.as_str()).collect();
        assert_eq!(
            trees,
            ["t2", "t3", "t4", "t5"],
            "the oldest run was deleted"
        );
        assert!(runs
            .iter()
            .all(|r| r.outcomes == [("a".to_string(), Passed)]));
        assert_eq!(
            store.test_projects(tester.team_id).await.unwrap(),
            ["other", "calc"],
            "the last posted to first"
        );
        let h = history(Some("calc".into()), vec![], runs);
        assert_eq!(h.runs.len(), 4);
        assert_eq!(h.pass_rate_change, Some(0.0));
    }
}

#[tokio::test]
async fn a_team_has_a_bounded_number_of_projects_and_bad_runs_name_the_field() {
    for (store, _dir) in backends().await {
        let (_, tester, _) = team(&*store, "qa").await;
        for p in ["p1", "p2", "p3"] {
            store
                .record_test_run(&tester, run(p, "t", &[]))
                .await
                .unwrap();
        }
        let err = store
            .record_test_run(&tester, run("p4", "t", &[]))
            .await
            .unwrap_err();
        assert!(
            matches!(&err, StoreError::Invalid { field, message, .. } if field == "project" && message.contains("max_projects")),
            "{err:?}"
        );
        // A known project still takes runs.
        store
            .record_test_run(&tester, run("p1", "t", &[]))
            .await
            .unwrap();

        let twice = run("p1", "t", &[("a", Passed), ("a", Failed)]);
        let err = store.record_test_run(&tester, twice).await.unwrap_err();
        assert!(
            matches!(&err, StoreError::Invalid { field, .. } if field == "outcomes[1].nodeid"),
            "{err:?}"
        );
        let long = "x".repeat(1001);
        let err = store
            .record_test_run(&tester, run("p1", "t", &[(&long, Passed)]))
            .await
            .unwrap_err();
        assert!(
            matches!(&err, StoreError::Invalid { field, .. } if field == "outcomes[0].nodeid"),
            "{err:?}"
        );
        let mut bad_time = run("p1", "t", &[]);
        bad_time.started_at = Some("yesterday".into());
        let err = store.record_test_run(&tester, bad_time).await.unwrap_err();
        assert!(
            matches!(&err, StoreError::Invalid { field, .. } if field == "startedAt"),
            "{err:?}"
        );
        // Nothing refused was stored.
        assert_eq!(
            store
                .test_runs(tester.team_id, "p1", false)
                .await
                .unwrap()
                .len(),
            2
        );
    }
}

#[tokio::test]
async fn flaky_tests_passed_and_failed_on_one_tree_and_regressions_passed_before() {
    for (store, _dir) in backends().await {
        let (_, tester, executor) = team(&*store, "qa").await;
        let posts = [
            // On tree t1 `coin` passes twice and fails once: flaky. `steady` always passes.
            (
                "t1",
                [("coin", Passed), ("steady", Passed), ("broke", Passed)],
            ),
            (
                "t1",
                [("coin", Failed), ("steady", Passed), ("broke", Passed)],
            ),
            (
                "t1",
                [("coin", Passed), ("steady", Passed), ("broke", Skipped)],
            ),
            // A new tree: `broke` fails after its last (non-skipped) pass; `coin` fails too.
            (
                "t2",
                [("coin", Error), ("steady", Passed), ("broke", Failed)],
            ),
        ];
        for (i, (tree, outcomes)) in posts.iter().enumerate() {
            let who = if i % 2 == 0 { &tester } else { &executor };
            store
                .record_test_run(who, run("calc", tree, outcomes))
                .await
                .unwrap();
        }
        let runs = store.test_runs(tester.team_id, "calc", true).await.unwrap();

        let f = flaky(Some("calc".into()), None, &runs);
        assert_eq!(f.runs, 4);
        assert_eq!(f.tests.len(), 1, "{f:?}");
        let coin = &f.tests[0];
        assert_eq!(
            (coin.nodeid.as_str(), coin.passes, coin.failures, coin.trees),
            ("coin", 2, 1, 1)
        );
        assert!(coin.score > 0.0 && coin.score <= 1.0);
        assert!(flaky(None, Some("t2".into()), &runs).tests.is_empty());

        let r = regressions(Some("calc".into()), &runs);
        let found: Vec<(&str, TestOutcome, &str, bool)> = r
            .tests
            .iter()
            .map(|t| {
                (
                    t.nodeid.as_str(),
                    t.outcome,
                    t.last_passing_run.tree.as_str(),
                    t.flaky,
                )
            })
            .collect();
        assert_eq!(
            found,
            [("broke", Failed, "t1", false), ("coin", Error, "t1", true)]
        );
        assert_eq!(r.tests[0].failing_run.id, runs[3].summary.id);
        assert_eq!(r.tests[0].last_passing_run.id, runs[1].summary.id);
    }
}

#[tokio::test]
async fn a_runs_tier_is_stored_and_read_back_on_every_backend() {
    for (store, _dir) in backends().await {
        let (_, tester, _) = team(&*store, "qa").await;
        let unit = store
            .record_test_run(
                &tester,
                NewTestRun {
                    tier: Some("unit".into()),
                    task: None,
                    artifacts: None,
                    ..run("calc", "t1", &[("a", Passed)])
                },
            )
            .await
            .unwrap();
        assert_eq!(unit.tier.as_deref(), Some("unit"));
        store
            .record_test_run(&tester, run("calc", "t1", &[("a", Passed), ("b", Failed)]))
            .await
            .unwrap();
        let runs = store
            .test_runs(tester.team_id, "calc", false)
            .await
            .unwrap();
        let tiers: Vec<Option<&str>> = runs.iter().map(|r| r.summary.tier.as_deref()).collect();
        assert_eq!(tiers, [Some("unit"), None]);
        let long = store
            .record_test_run(
                &tester,
                NewTestRun {
                    tier: Some("x".repeat(33)),
                    task: None,
                    artifacts: None,
                    ..run("calc", "t1", &[("a", Passed)])
                },
            )
            .await
            .unwrap_err();
        assert!(matches!(long, StoreError::Invalid { .. }), "{long:?}");
        let unknown = store
            .record_test_run(
                &tester,
                NewTestRun {
                    tier: Some("smoke".into()),
                    task: None,
                    artifacts: None,
                    ..run("calc", "t1", &[("a", Passed)])
                },
            )
            .await
            .unwrap_err();
        assert!(
            unknown.to_string().contains("unit, pbt, integration, e2e"),
            "{unknown}"
        );
    }
}

#[tokio::test]
async fn each_tier_keeps_its_own_newest_runs_beside_the_whole_suites() {
    for (store, _dir) in backends().await {
        let (_, tester, _) = team(&*store, "qa").await;
        let post = |tier: Option<&str>, tree: String| {
            let store = store.clone();
            let tester = tester.clone();
            let tier = tier.map(str::to_string);
            async move {
                store
                    .record_test_run(
                        &tester,
                        NewTestRun {
                            tier,
                            task: None,
                            artifacts: None,
                            ..run("calc", &tree, &[("a", Passed)])
                        },
                    )
                    .await
                    .unwrap();
            }
        };
        // 4 runs kept per project and tier (the test stores' runs_per_project): the unit
        // tier's 5 runs keep their newest 4, and 6 whole-suite runs after them keep theirs
        // without pushing the unit runs out.
        for i in 1..=5 {
            post(Some("unit"), format!("u{i}")).await;
        }
        for i in 1..=6 {
            post(None, format!("w{i}")).await;
        }
        post(Some("e2e"), "e1".into()).await;
        let runs = store
            .test_runs(tester.team_id, "calc", false)
            .await
            .unwrap();
        let kept: Vec<(Option<&str>, &str)> = runs
            .iter()
            .map(|r| (r.summary.tier.as_deref(), r.summary.tree.as_str()))
            .collect();
        assert_eq!(
            kept,
            [
                (Some("unit"), "u2"),
                (Some("unit"), "u3"),
                (Some("unit"), "u4"),
                (Some("unit"), "u5"),
                (None, "w3"),
                (None, "w4"),
                (None, "w5"),
                (None, "w6"),
                (Some("e2e"), "e1"),
            ]
        );
    }
}

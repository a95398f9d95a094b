//! The typed client against the claim endpoints: long-poll claims, heartbeats, completions,
//! failures and releases under the lease rules, and batched claims and completions.

use huddle_sdk::wire::{ClaimRequest, CompleteItem, Role, TaskStatus};
use huddle_tests::clients;
use huddle_tests::TestDaemon;
use serde_json::json;
use std::time::Duration;

#[tokio::test]
async fn claims_heartbeats_and_completions_follow_the_lease_rules() {
    let d = TestDaemon::start().await;
    let coord = clients::team(&d, "qa").await;
    let tester = clients::agent(&d, "qa", "tester-1", Role::Tester).await;
    let other = clients::agent(&d, "qa", "tester-2", Role::Tester).await;
    coord
        .create_tasks(&[
            clients::task("TEST-001", "a"),
            clients::task("TEST-002", "b"),
            clients::task("TEST-003", "c"),
        ])
        .await
        .unwrap();

    let claimed = tester
        .claim(&ClaimRequest::default())
        .await
        .expect("claim")
        .expect("a task");
    assert_eq!(
        (claimed.id.as_str(), claimed.claimed_by.as_deref()),
        ("TEST-001", Some("tester-1"))
    );
    let beat = tester
        .heartbeat("TEST-001", Some(Duration::from_secs(60)))
        .await
        .expect("heartbeat");
    assert!(beat.lease_expires_at.is_some());
    let not_holder = other.heartbeat("TEST-001", None).await.unwrap_err();
    assert_eq!(
        (not_holder.status(), not_holder.code()),
        (Some(409), Some("not_holder"))
    );
    let done = tester
        .complete("TEST-001", Some(json!({"passed": 3})))
        .await
        .expect("complete");
    assert_eq!(
        (done.status, done.result.clone()),
        (TaskStatus::Completed, Some(json!({"passed": 3})))
    );
    let again = tester.complete("TEST-001", None).await.unwrap_err();
    assert_eq!(again.code(), Some("task_closed"));

    let second = tester
        .claim(&ClaimRequest::default())
        .await
        .unwrap()
        .expect("TEST-002");
    let released = tester.release(&second.id).await.expect("release");
    assert_eq!(
        (released.status, released.claimed_by),
        (TaskStatus::Pending, None)
    );
    let second = other
        .claim(&ClaimRequest::default())
        .await
        .unwrap()
        .expect("TEST-002 again");
    // `fail` fails this attempt: the task is back in the queue; `fail_final` ends it.
    let retried = other
        .fail(&second.id, "the runner crashed")
        .await
        .expect("fail");
    assert_eq!(
        (retried.status, retried.attempts, retried.claimed_by),
        (TaskStatus::Pending, 1, None)
    );
    let second = other
        .claim(&ClaimRequest::default())
        .await
        .unwrap()
        .expect("TEST-002 once more");
    let failed = other
        .fail_final(&second.id, "no tests found")
        .await
        .expect("fail_final");
    assert_eq!(
        (failed.status, failed.failure_reason.as_deref()),
        (TaskStatus::Failed, Some("no tests found"))
    );

    let third = tester
        .claim(&ClaimRequest {
            prefixes: Some(vec!["TEST".into()]),
            ..ClaimRequest::default()
        })
        .await
        .unwrap();
    assert_eq!(third.map(|t| t.id).as_deref(), Some("TEST-003"));
    assert!(
        tester
            .claim(&ClaimRequest::default())
            .await
            .unwrap()
            .is_none(),
        "nothing left: 204"
    );

    // A long poll is woken by a new task rather than timing out.
    let waiting = tokio::spawn({
        let tester = tester.clone();
        async move {
            tester
                .claim(&ClaimRequest {
                    wait_ms: Some(30_000),
                    ..ClaimRequest::default()
                })
                .await
        }
    });
    coord
        .create_task(&clients::task("TEST-004", "late"))
        .await
        .unwrap();
    let woken = tokio::time::timeout(Duration::from_secs(25), waiting)
        .await
        .expect("woken")
        .unwrap()
        .unwrap();
    assert_eq!(woken.map(|t| t.id).as_deref(), Some("TEST-004"));

    let coordinator_claims = coord.claim(&ClaimRequest::default()).await.unwrap_err();
    assert_eq!(
        coordinator_claims.status(),
        Some(400),
        "a coordinator names its prefixes"
    );
}

#[tokio::test]
async fn several_tasks_are_claimed_and_completed_in_one_request() {
    let d = TestDaemon::start().await;
    let coord = clients::team(&d, "qa").await;
    let tester = clients::agent(&d, "qa", "tester-1", Role::Tester).await;
    let ids = ["TEST-001", "TEST-002", "TEST-003"];
    coord
        .create_tasks(&ids.map(|id| clients::task(id, "batch")))
        .await
        .unwrap();

    let claimed = tester
        .claim_many(&ClaimRequest::default(), 2)
        .await
        .expect("claim_many");
    assert_eq!(
        claimed.iter().map(|t| t.id.as_str()).collect::<Vec<_>>(),
        ["TEST-001", "TEST-002"]
    );
    let items: Vec<_> = claimed
        .iter()
        .map(|t| CompleteItem {
            id: t.id.clone(),
            result: Some(json!({ "ok": t.id })),
        })
        .collect();
    let done = tester.complete_many(&items).await.expect("complete_many");
    assert!(done.iter().all(|t| t.status == TaskStatus::Completed));
    assert_eq!(done[1].result, Some(json!({ "ok": "TEST-002" })));

    let rest = tester
        .claim_many(&ClaimRequest::default(), 10)
        .await
        .unwrap();
    assert_eq!(rest.len(), 1);
    assert!(
        tester
            .claim_many(&ClaimRequest::default(), 10)
            .await
            .unwrap()
            .is_empty(),
        "204: none"
    );
    let too_many = tester
        .claim_many(&ClaimRequest::default(), 1000)
        .await
        .unwrap_err();
    assert_eq!(too_many.status(), Some(400));
    let not_held = tester.complete_many(&items).await.unwrap_err();
    assert_eq!(not_held.status(), Some(409), "{not_held}");
}

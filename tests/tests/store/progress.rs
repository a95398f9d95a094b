//! Each task's newest pass-rate report (`Store::task_progress`), the same on every backend: one
//! per task of the team however old, only `test_result`/`impl_progress` whose `passRate` is a
//! number, in either order by rate or by recency, paged by offset; another team's reports and
//! a report about a task the team does not have are left out.

use huddle_daemon::store::{ProgressOrder, ProgressQuery, Store};
use huddle_sdk::wire::PostMessage;
use huddle_tests::store::{backends, task, team};
use serde_json::{json, Value};

fn report(kind: &str, task: &str, rate: Value) -> PostMessage {
    PostMessage {
        to: "coordinator".into(),
        kind: kind.into(),
        summary: format!("{task}: {rate}"),
        data: json!({"taskId": task, "passRate": rate}),
    }
}

async fn page(
    store: &dyn Store,
    team_id: i64,
    order: ProgressOrder,
    ascending: bool,
    offset: usize,
    limit: usize,
) -> (Vec<(String, f64)>, i64) {
    let q = ProgressQuery {
        order,
        ascending,
        offset,
        limit,
    };
    let (messages, total) = store.task_progress(team_id, q).await.unwrap();
    let rows = messages
        .iter()
        .map(|m| {
            (
                m.data["taskId"].as_str().unwrap().to_string(),
                m.data["passRate"].as_f64().unwrap(),
            )
        })
        .collect();
    (rows, total)
}

#[tokio::test]
async fn each_tasks_newest_report_on_every_backend() {
    for (store, _keep) in backends().await {
        let (coord, tester, _) = team(&*store, "qa").await;
        let (other_coord, other_tester, _) = team(&*store, "other").await;
        let tasks = ["TEST-001", "TEST-002", "TEST-003", "TEST-004"];
        store
            .create_tasks(&coord, tasks.iter().map(|id| task(id, &[])).collect())
            .await
            .unwrap();
        store
            .create_tasks(&other_coord, vec![task("TEST-001", &[])])
            .await
            .unwrap();
        let posts = vec![
            report("impl_progress", "TEST-001", json!(50)),
            report("test_result", "TEST-001", json!(72.5)),
            report("test_result", "TEST-002", json!(90)),
            report("impl_progress", "TEST-003", json!(80)),
            report("test_result", "TEST-003", json!("100")),
            report("note", "TEST-004", json!(1)),
            report("test_result", "TEST-999", json!(5)),
            report("test_result", "TEST-002", json!(99)),
        ];
        store
            .post_messages(&tester, posts.into_iter().map(|p| (p, None)).collect())
            .await
            .unwrap();
        store
            .post_message(
                &other_tester,
                report("test_result", "TEST-001", json!(1)),
                None,
            )
            .await
            .unwrap();

        let t = coord.team_id;
        let (worst, total) = page(&*store, t, ProgressOrder::Rate, true, 0, 100).await;
        assert_eq!(total, 3);
        assert_eq!(
            worst,
            [
                ("TEST-001".to_string(), 72.5),
                ("TEST-003".to_string(), 80.0),
                ("TEST-002".to_string(), 99.0)
            ]
        );
        let (best, _) = page(&*store, t, ProgressOrder::Rate, false, 0, 1).await;
        assert_eq!(best, [("TEST-002".to_string(), 99.0)]);
        let (oldest, _) = page(&*store, t, ProgressOrder::Recent, true, 1, 2).await;
        assert_eq!(
            oldest,
            [
                ("TEST-003".to_string(), 80.0),
                ("TEST-002".to_string(), 99.0)
            ],
            "by seq, the first skipped"
        );
        let (theirs, total) = page(
            &*store,
            other_coord.team_id,
            ProgressOrder::Rate,
            true,
            0,
            10,
        )
        .await;
        assert_eq!((theirs, total), (vec![("TEST-001".to_string(), 1.0)], 1));
    }
}

//! `huddle msg post|ls|search|tail` and `huddle inbox`, with `--json` output parsed and checked.

use huddle_tests::cli::Huddle;
use huddle_tests::TestDaemon;
use serde_json::Value;

fn seqs(list: &Value) -> Vec<i64> {
    list["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|m| m["seq"].as_i64().unwrap())
        .collect()
}

#[tokio::test]
async fn messages_are_posted_listed_and_read_from_the_inbox() {
    let d = TestDaemon::start().await;
    let coord_api = d.team("qa").await;
    let tester_api = d.agent("qa", "tester-1", "tester").await;
    let coord = Huddle::new(&d.url, &coord_api.token, "qa");
    let tester = Huddle::new(&d.url, &tester_api.token, "qa");

    let posted = coord
        .json(&[
            "msg",
            "post",
            "--to",
            "tester",
            "--type",
            "fix_required",
            "fix the login test",
            "--data",
            r#"{"test":"login"}"#,
        ])
        .await;
    assert_eq!(
        (
            posted["seq"].as_i64(),
            posted["from"].as_str(),
            posted["to"].as_str()
        ),
        (Some(1), Some("coordinator"), Some("tester"))
    );
    assert_eq!(
        (posted["type"].as_str(), posted["data"]["test"].as_str()),
        (Some("fix_required"), Some("login"))
    );
    let keyed = [
        "msg",
        "post",
        "--to",
        "coordinator",
        "--type",
        "test_result",
        "12/12",
        "--idempotency-key",
        "run-7",
    ];
    let once = tester.json(&keyed).await;
    let again = tester.json(&keyed).await;
    assert_eq!(once, again, "the same key answers the same message");
    assert_eq!(
        coord
            .ok(&["msg", "post", "--type", "note", "hello all"])
            .await
            .trim(),
        "posted #3 to *"
    );

    assert_eq!(seqs(&coord.json(&["msg", "ls"]).await), [1, 2, 3]);
    assert_eq!(
        seqs(&coord.json(&["msg", "ls", "--type", "test_result"]).await),
        [2]
    );
    assert_eq!(
        seqs(&coord.json(&["msg", "ls", "--from", "tester-1"]).await),
        [2]
    );
    assert_eq!(
        seqs(
            &coord
                .json(&["msg", "ls", "--to", "tester", "--after", "0"])
                .await
        ),
        [1]
    );
    assert_eq!(
        seqs(&coord.json(&["msg", "ls", "--limit", "2"]).await),
        [1, 2]
    );
    // Search: words as word starts, filters, newest first, the total of all matches.
    let found = coord.json(&["msg", "search", "LOGIN te"]).await;
    assert_eq!((seqs(&found), found["total"].as_i64()), (vec![1], Some(1)));
    let page = coord.json(&["msg", "search", "--limit", "2"]).await;
    assert_eq!(
        (seqs(&page), page["total"].as_i64(), page["next"].as_i64()),
        (vec![3, 2], Some(3), Some(2))
    );
    let rest = coord.json(&["msg", "search", "--before", "2"]).await;
    assert_eq!(seqs(&rest), [1]);
    let typed = coord
        .json(&["msg", "search", "--type", "test_result", "12"])
        .await;
    assert_eq!(seqs(&typed), [2]);
    let table = coord.ok(&["msg", "search", "hello"]).await;
    assert!(table.contains("hello all"), "{table}");
    let table = coord.ok(&["msg", "ls"]).await;
    assert!(
        table.starts_with("SEQ") && table.contains("fix_required  fix the login test"),
        "{table}"
    );

    let inbox = tester.json(&["inbox"]).await;
    assert_eq!(seqs(&inbox), [1, 3], "to my role and to everyone");
    let acked = tester.json(&["inbox", "--ack"]).await;
    assert_eq!(acked["cursor"], 3);
    assert_eq!(
        seqs(&tester.json(&["inbox", "--wait", "50ms"]).await),
        Vec::<i64>::new()
    );

    let (code, err) = coord
        .fails(&["msg", "post", "--type", "Not Valid", "x"])
        .await;
    assert_eq!(code, 1);
    assert!(err.contains("400"), "{err}");
    let (code, _) = coord
        .fails(&["msg", "post", "--type", "note", "x", "--data", "{not json"])
        .await;
    assert_eq!(code, 2, "bad JSON is a usage error");
}

#[tokio::test]
async fn tail_follows_the_live_stream_with_filters_one_line_per_message() {
    let d = TestDaemon::start().await;
    let coord_api = d.team("qa").await;
    let coord = Huddle::new(&d.url, &coord_api.token, "qa");
    coord
        .ok(&["msg", "post", "--type", "note", "before the tail"])
        .await;

    let mut everything = coord.spawn(&["msg", "tail", "--json"]);
    let mut results = coord.spawn(&[
        "msg",
        "tail",
        "--type",
        "test_result",
        "--from",
        "coordinator",
        "--to",
        "*",
    ]);
    let mut coloured = coord.spawn(&["msg", "tail", "--after", "1", "--color", "always"]);
    assert_eq!(
        everything.stdout.next_json().await["summary"],
        "before the tail"
    );

    coord
        .ok(&[
            "msg",
            "post",
            "--type",
            "test_result",
            "--data",
            r#"{"passRate":97.5}"#,
            "41/42 passed",
        ])
        .await;
    coord
        .ok(&[
            "msg",
            "post",
            "--type",
            "error",
            "--to",
            "coordinator",
            "runner missing",
        ])
        .await;
    let live = everything.stdout.next_json().await;
    assert_eq!(
        (live["seq"].as_i64(), live["data"]["passRate"].as_f64()),
        (Some(2), Some(97.5))
    );
    assert_eq!(everything.stdout.next_json().await["type"], "error");

    let line = results.stdout.next().await.unwrap();
    assert!(
        line.starts_with("#2 ") && line.ends_with("coordinator → * test_result: 41/42 passed"),
        "{line}"
    );
    coord
        .ok(&["msg", "post", "--type", "test_result", "second run"])
        .await;
    assert!(
        results.stdout.next().await.unwrap().contains("#4 "),
        "filtered: the error is skipped"
    );

    let line = coloured.stdout.next().await.unwrap();
    assert!(
        line.contains("\x1b[32mtest_result: 41/42 passed\x1b[0m"),
        "green for test results: {line:?}"
    );
    assert!(
        coloured
            .stdout
            .next()
            .await
            .unwrap()
            .contains("\x1b[31merror: runner missing"),
        "red for errors"
    );

    for tail in [&mut everything, &mut results, &mut coloured] {
        tail.child.start_kill().unwrap();
    }
}

#[tokio::test]
async fn post_batch_posts_a_json_lines_file_all_or_none() {
    let d = TestDaemon::start().await;
    let coord_api = d.team("qa").await;
    let coord = Huddle::new(&d.url, &coord_api.token, "qa");
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("results.jsonl");
    std::fs::write(
        &file,
        concat!(
            r#"{"to": "*", "type": "test_result", "summary": "login passes", "data": {"test": "login"}}"#,
            "\n\n",
            r#"{"to": "tester", "type": "fix_required", "summary": "fix logout", "idempotencyKey": "run-3/logout"}"#,
            "\n"
        ),
    )
    .unwrap();
    let path = file.to_str().unwrap();
    assert_eq!(
        coord.ok(&["msg", "post-batch", path]).await.trim(),
        "posted 2 messages (#1–#2)"
    );
    let again = coord.json(&["msg", "post-batch", path]).await;
    assert_eq!(seqs(&again), [3, 2], "the keyed line is stored once");
    assert_eq!(again["replayed"], serde_json::json!([1]));

    std::fs::write(
        &file,
        "{\"to\": \"*\", \"type\": \"note\", \"summary\": \"ok\"}\n{\"to\": \"*\"\n",
    )
    .unwrap();
    let (code, err) = coord.fails(&["msg", "post-batch", path]).await;
    assert_eq!(code, 1);
    assert!(err.contains("results.jsonl:2"), "names the bad line: {err}");
    std::fs::write(&file, "{\"to\": \"*\", \"type\": \"note\", \"summary\": \"ok\"}\n{\"to\": \"ghost\", \"type\": \"note\", \"summary\": \"no\"}\n").unwrap();
    let (_, err) = coord.fails(&["msg", "post-batch", path]).await;
    assert!(err.contains("messages[1]"), "{err}");
    assert_eq!(seqs(&coord.json(&["msg", "ls"]).await), [1, 2, 3]);
}

//! `huddle memory get|set|patch|history`, with `--json` output parsed and checked.

use huddle_tests::cli::Huddle;
use huddle_tests::TestDaemon;
use serde_json::json;
use std::process::Stdio;
use tokio::io::AsyncWriteExt;

#[tokio::test]
async fn shared_memory_is_set_patched_from_files_and_stdin_and_read_back() {
    let d = TestDaemon::start().await;
    let coord = d.team("qa").await;
    let h = Huddle::new(&d.url, &coord.token, "qa");

    let set = h
        .json(&[
            "memory",
            "set",
            "/test_strategy",
            r#"{"test_framework": "pytest"}"#,
        ])
        .await;
    assert_eq!(
        set["doc"],
        json!({"test_strategy": {"test_framework": "pytest"}})
    );
    let v1 = set["version"].as_i64().unwrap();
    let number = h
        .json(&[
            "memory",
            "set",
            "/execution_results",
            r#"{"unit": {"passRate": 97.5}}"#,
        ])
        .await;
    assert_eq!(number["doc"]["execution_results"]["unit"]["passRate"], 97.5);
    let string = h.json(&["memory", "set", "/build", "42", "--string"]).await;
    assert_eq!(string["doc"]["build"], "42");
    assert_eq!(
        h.ok(&["memory", "set", "/flags", r#"{"fast":true}"#])
            .await
            .trim(),
        format!("memory is now at version {}", v1 + 3)
    );

    assert_eq!(
        h.json(&["memory", "get", "/test_strategy/test_framework"])
            .await,
        json!("pytest")
    );
    let whole = h.json(&["memory", "get"]).await;
    assert_eq!(
        (
            whole["version"].as_i64(),
            whole["doc"]["flags"]["fast"].as_bool()
        ),
        (Some(v1 + 3), Some(true))
    );
    let pretty = h.ok(&["memory", "get"]).await;
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&pretty).unwrap(),
        whole["doc"],
        "humans get the document itself"
    );

    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("patch.json");
    std::fs::write(
        &file,
        r#"{"flags": null, "generated_tests": ["test_login.py"]}"#,
    )
    .unwrap();
    let patched = h.json(&["memory", "patch", file.to_str().unwrap()]).await;
    assert!(patched["doc"].get("flags").is_none(), "null deletes");
    assert_eq!(patched["doc"]["generated_tests"], json!(["test_login.py"]));

    let mut child = h
        .command(&["memory", "patch", "--json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(br#"{"from_stdin": 1}"#)
        .await
        .unwrap();
    let out = child.wait_with_output().await.unwrap();
    assert!(out.status.success());
    let from_stdin: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(from_stdin["doc"]["from_stdin"], 1);

    let replaced = h.json(&["memory", "set", "/", r#"{"fresh": true}"#]).await;
    assert_eq!(replaced["doc"], json!({"fresh": true}));

    let history = h.json(&["memory", "history", "--limit", "3"]).await;
    let changes = history["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 3);
    assert_eq!(
        (changes[0]["kind"].as_str(), changes[0]["agent"].as_str()),
        (Some("replace"), Some("coordinator"))
    );
    assert_eq!(changes[1]["patch"], json!({"from_stdin": 1}));

    let (code, err) = h
        .fails(&["memory", "set", "/x", "1", "--if-match", &v1.to_string()])
        .await;
    assert_eq!(code, 1);
    assert!(err.contains("stale_version"), "{err}");
    let (_, err) = h.fails(&["memory", "get", "/nothing/here"]).await;
    assert!(
        err.contains("/nothing/here") && err.contains("404"),
        "{err}"
    );
    let (_, err) = h
        .fails(&[
            "memory",
            "patch",
            dir.path().join("missing.json").to_str().unwrap(),
        ])
        .await;
    assert!(
        err.contains("cannot read") && err.contains("missing.json"),
        "{err}"
    );
}

/// `set` is an RFC 6902 `replace` or `add` at the pointer: an array element is replaced in
/// place, `null` is stored, a missing parent or a non-container is refused with the reason,
/// and `delete` removes exactly one value.
#[tokio::test]
async fn set_and_delete_follow_json_patch_at_the_pointer() {
    let d = TestDaemon::start().await;
    let coord = d.team("qa").await;
    let h = Huddle::new(&d.url, &coord.token, "qa");
    h.ok(&[
        "memory",
        "set",
        "/",
        r#"{"arr": [1, 2, 3], "name": "cart", "x": 1}"#,
    ])
    .await;

    let doc = h.json(&["memory", "set", "/arr/1", "9"]).await["doc"].clone();
    assert_eq!(
        doc["arr"],
        json!([1, 9, 3]),
        "the element is replaced in place"
    );
    let doc = h.json(&["memory", "set", "/arr/-", "4"]).await["doc"].clone();
    assert_eq!(doc["arr"], json!([1, 9, 3, 4]), "`-` appends");
    let doc = h.json(&["memory", "set", "/x", "null"]).await["doc"].clone();
    assert!(
        doc.get("x").is_some_and(|v| v.is_null()),
        "null is stored: {doc}"
    );

    let version_before = h.json(&["memory", "get"]).await["version"].clone();
    let (code, err) = h.fails(&["memory", "set", "/name/first", "1"]).await;
    assert_eq!(code, 1);
    assert!(
        err.contains("/name is a string, not an object or array"),
        "{err}"
    );
    let (_, err) = h.fails(&["memory", "set", "/missing/key", "1"]).await;
    assert!(err.contains("/missing does not exist"), "{err}");
    let (_, err) = h.fails(&["memory", "set", "/arr/10", "1"]).await;
    assert!(err.contains("/arr/10"), "{err}");
    assert_eq!(
        h.json(&["memory", "get"]).await["version"],
        version_before,
        "refused changes store nothing"
    );

    let doc = h.json(&["memory", "delete", "/arr/0"]).await["doc"].clone();
    assert_eq!(doc["arr"], json!([9, 3, 4]));
    let doc = h.json(&["memory", "delete", "/x"]).await["doc"].clone();
    assert!(doc.get("x").is_none(), "{doc}");
    let (_, err) = h.fails(&["memory", "delete", "/nothing"]).await;
    assert!(err.contains("/nothing"), "{err}");
    let history = h.json(&["memory", "history", "--limit", "1"]).await;
    assert_eq!(history["changes"][0]["kind"], "json-patch");
    assert_eq!(
        history["changes"][0]["patch"],
        json!([{"op": "remove", "path": "/x"}])
    );
}

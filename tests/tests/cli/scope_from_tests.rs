//! `huddle task add --scope-from-tests`: the task's `scope` derived from the test files in its
//! `paths` — those files and the code files named after them — so the daemon keeps tasks on
//! other files running beside it and overlapping ones apart.

use huddle_tests::cli::Huddle;
use huddle_tests::TestDaemon;
use serde_json::json;

#[tokio::test]
async fn the_scope_is_the_tests_and_the_code_named_after_them() {
    let checkout = tempfile::tempdir().unwrap();
    for (rel, text) in [
        ("tests/test_cart.py", "from shop.cart import total\n"),
        ("shop/cart.py", "def total(): ...\n"),
        ("shop/other.py", "x = 1\n"),
    ] {
        let path = checkout.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let d = TestDaemon::start().await;
    let coord = d.team("qa").await;
    let huddle = Huddle::new(&d.url, &coord.token, "qa");
    let dir = checkout.path().to_str().unwrap();
    let task = huddle
        .json(&[
            "task",
            "add",
            "TEST-001",
            "fix the cart",
            "--metadata",
            r#"{"paths": ["tests/test_cart.py"]}"#,
            "--scope-from-tests",
            dir,
        ])
        .await;
    assert_eq!(
        task["metadata"]["scope"],
        json!(["tests/test_cart.py", "shop/cart.py"]),
        "{task}"
    );

    let (_, err) = huddle
        .fails(&["task", "add", "TEST-002", "x", "--scope-from-tests", dir])
        .await;
    assert!(err.contains("metadata `paths`"), "{err}");
    let (_, err) = huddle
        .fails(&[
            "task",
            "add",
            "TEST-003",
            "x",
            "--metadata",
            r#"{"paths": ["tests/test_cart.py"], "scope": ["shop"]}"#,
            "--scope-from-tests",
            dir,
        ])
        .await;
    assert!(err.contains("not both"), "{err}");
}

//! Nothing `huddle test` prints holds a secret: a generated pytest project fails with every
//! kind of secret (in its messages, output and a test id), and the JSON report, the human
//! summary and the listings show markers instead, while the JSON stays valid.

use crate::cli::args;
use crate::common::require_pytest;
use crate::secrets::{leaks, leaks_in_dir, write_leaky_pytest_project};
use huddle_cli::test_command::{execute, TestArgs};
use huddle_runners::scrub::{marker, REDACTED_PREFIX};
use huddle_runners::{Listing, Report};

#[tokio::test]
async fn json_and_human_output_and_the_run_directory_hold_no_secret() {
    require_pytest();
    let project = tempfile::tempdir().unwrap();
    write_leaky_pytest_project(project.path());

    let out = execute(&TestArgs {
        json: true,
        ..args(project.path())
    })
    .await;
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_eq!(leaks(&out.stdout), Vec::<&str>::new(), "--json stdout");
    assert_eq!(leaks(&out.stderr), Vec::<&str>::new(), "--json stderr");
    let report: Report = serde_json::from_str(&out.stdout).expect("stdout is the report");
    assert_eq!(report.summary.total, 3);
    assert!(report
        .tests
        .iter()
        .any(|t| t.nodeid == format!("tests/test_leak.py::test_id[{}]", marker("api-key"))));
    assert!(out.stdout.contains(&marker("private-key")));

    let human = execute(&args(project.path())).await;
    assert_eq!(human.code, 1);
    assert_eq!(leaks(&human.stdout), Vec::<&str>::new(), "{}", human.stdout);
    assert!(human.stdout.contains(REDACTED_PREFIX), "{}", human.stdout);

    let runs = project.path().join(".huddle/runs");
    assert_eq!(leaks_in_dir(&runs), Vec::new());
}

#[tokio::test]
async fn listings_show_redacted_test_ids() {
    require_pytest();
    let project = tempfile::tempdir().unwrap();
    write_leaky_pytest_project(project.path());
    let list = TestArgs {
        list: true,
        ..args(project.path())
    };
    let out = execute(&list).await;
    assert_eq!(leaks(&out.stdout), Vec::<&str>::new(), "{}", out.stdout);
    assert!(
        out.stdout.lines().any(|l| l
            == format!(
                "tests/test_leak.py::test_passes[{}]",
                marker("aws-access-key-id")
            )),
        "{}",
        out.stdout
    );
    let out = execute(&TestArgs { json: true, ..list }).await;
    assert_eq!(leaks(&out.stdout), Vec::<&str>::new(), "{}", out.stdout);
    let listing: Listing = serde_json::from_str(&out.stdout).expect("JSON listing");
    assert_eq!(listing.tests.len(), 3, "{:?}", listing.tests);
}

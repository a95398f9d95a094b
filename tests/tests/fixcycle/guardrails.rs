//! Adversarial model replies, each refused with the right message — which goes back to the
//! model at the next attempt — and nothing outside the allowed files changed: malformed JSON,
//! an edit to `../../outside`, to a lockfile, to source from the executor, to a test from the
//! tester, a skip marker, a search that matches twice or never, a timeout, a 500.

use huddle_sdk::roles::RoleSettings;
use huddle_sdk::wire::{NewTask, TaskStatus};
use huddle_tests::llm::projects::{pytest_project, Project, SHOUT_BUG, SHOUT_OK};
use huddle_tests::llm::stub::{content, error, fix, Scripted};
use huddle_tests::llm::team::{llm, team};
use huddle_tests::llm::LlmStub;
use std::time::Duration;

pub(crate) const GOOD: (&str, &str, &str) = ("pkg/strings.py", SHOUT_BUG, SHOUT_OK);

/// Runs a tester (or executor) whose model first answers `bad`, then `good`; checks the
/// refusal reached the model and that only `good`'s file changed. Returns the project.
pub(crate) async fn refused_then_fixed(
    bad: Vec<Scripted>,
    expected: &str,
    executor: bool,
    good: (&str, &str, &str),
) -> Project {
    let project = pytest_project(true, false);
    if executor {
        // The test expects the bug: the executor must fix the test, not the code.
        project.write(
            "pkg/strings.py",
            &project.read("pkg/strings.py").replace(SHOUT_BUG, SHOUT_OK),
        );
        project.write(
            "tests/test_strings.py",
            &project
                .read("tests/test_strings.py")
                .replace("\"HI!\"", "\"HI?\""),
        );
    }
    project.write("Pipfile.lock", "{\"locked\": true}\n");
    let before = project.tree();
    let stub_script: Vec<Scripted> = bad.into_iter().chain([fix(&[good])]).collect();
    let tries = stub_script.len();
    let stub = LlmStub::start("sk-stub", stub_script).await;
    let t = team().await;
    let settings = RoleSettings::new(&project.root)
        .with_llm(llm(&stub, 2))
        .unwrap();
    let id = if executor { "QARUN-001" } else { "TEST-001" };
    t.coord
        .create_task(&NewTask {
            id: Some(id.into()),
            subject: "fix".into(),
            ..NewTask::default()
        })
        .await
        .unwrap();
    if executor {
        t.start_executor(settings);
    } else {
        t.start_tester(settings);
    }
    let task = t.closed(id).await;
    assert_eq!(
        task.status,
        TaskStatus::Completed,
        "{:?}",
        task.failure_reason
    );
    assert_eq!(stub.remaining(), 0, "every scripted reply was used");
    let requests = stub.requests();
    assert!(requests.len() >= tries.min(2));
    let last = stub.user_message(requests.len() - 1);
    let progress = t.fix_progress().await;
    let first_note = progress[0].data["note"].as_str().unwrap().to_string();
    assert!(
        first_note.contains(expected),
        "impl_progress note {first_note:?} lacks {expected:?}"
    );
    if !expected.contains("did not answer") && !expected.contains("answered 500") {
        assert!(
            last.contains(expected),
            "the model was not told {expected:?}:\n{last}"
        );
    }
    let after = project.tree();
    for (path, text) in &before {
        if path != good.0 {
            assert_eq!(after.get(path), Some(text), "{path} changed");
        }
    }
    assert_eq!(
        after.keys().collect::<Vec<_>>(),
        before.keys().collect::<Vec<_>>(),
        "files were added or removed"
    );
    assert_eq!(
        std::fs::read_to_string(&project.outside).unwrap(),
        "outside the project\n"
    );
    project
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_json_is_refused() {
    refused_then_fixed(
        vec![content(
            r#"{"edits": [{"path": "pkg/strings.py", "search": "#,
        )],
        "the reply was not valid JSON",
        false,
        GOOD,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_outside_the_project_is_refused() {
    let bad = fix(&[GOOD, ("../../outside", "outside the project", "pwned")]);
    refused_then_fixed(
        vec![bad],
        "`../../outside` is outside the project",
        false,
        GOOD,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_to_a_lockfile_is_refused() {
    let bad = fix(&[("Pipfile.lock", "true", "false")]);
    refused_then_fixed(
        vec![bad],
        "`Pipfile.lock` may not be edited: it is a lockfile",
        false,
        GOOD,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_executor_may_not_change_source() {
    let bad = fix(&[("pkg/strings.py", SHOUT_OK, SHOUT_BUG)]);
    let good = ("tests/test_strings.py", "\"HI?\"", "\"HI!\"");
    refused_then_fixed(
        vec![bad],
        "`pkg/strings.py` is not a test file; an executor may change test files only",
        true,
        good,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_skip_marker_is_refused() {
    // The executor may edit tests, but not skip them.
    let bad = fix(&[(
        "tests/test_strings.py",
        "def test_shout():",
        "@pytest.mark.skip\ndef test_shout():",
    )]);
    let good = ("tests/test_strings.py", "\"HI?\"", "\"HI!\"");
    refused_then_fixed(vec![bad], "adds `@pytest.mark.skip`", true, good).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tester_may_not_edit_a_test_file() {
    let bad = fix(&[(
        "tests/test_strings.py",
        "assert shout(\"hi\") == \"HI!\"",
        "assert shout(\"hi\") == \"HI?\"",
    )]);
    refused_then_fixed(
        vec![bad],
        "`tests/test_strings.py` is a test file; the tester fixes the code under test",
        false,
        GOOD,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_search_matching_twice_is_refused() {
    let bad = fix(&[("pkg/strings.py", "return text", "return str(text)")]);
    refused_then_fixed(
        vec![bad],
        "the search text for `pkg/strings.py` matches 2 times",
        false,
        GOOD,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_search_matching_nothing_is_refused() {
    let bad = fix(&[("pkg/strings.py", "return text.title()", "return text")]);
    refused_then_fixed(
        vec![bad],
        "the search text for `pkg/strings.py` was not found",
        false,
        GOOD,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_that_does_not_answer_in_time_ends_the_attempt() {
    let slow = Scripted::Delay(Duration::from_secs(120), Box::new(fix(&[GOOD])));
    refused_then_fixed(
        vec![slow],
        "the model did not answer within 2s",
        false,
        GOOD,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_failing_with_500_ends_the_attempt_after_retries() {
    let bad = vec![error(500, "stub overloaded"); 4];
    refused_then_fixed(
        bad,
        "the model endpoint answered 500 after 4 tries: stub overloaded",
        false,
        GOOD,
    )
    .await;
}

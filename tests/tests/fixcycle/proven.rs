//! A pass proven, not reported (`roles::verify`): the verdict that meets the gate is a re-run
//! of the original tests, with acceptance tests the model never saw, in a clean copy.
//! - A hard-coded answer makes the visible tests pass and fails the hidden acceptance test:
//!   the task fails, on pytest, jest and go. The honest fix completes, with the acceptance
//!   results in the result, and the daemon takes the re-run as evidence.
//! - A task that names its target does not complete while the target fails, whatever the
//!   suite's pass rate.
//! - Code that writes a test file while the suite runs is caught in the copy.

use huddle_sdk::wire::{Task, TaskStatus};
use huddle_tests::llm::projects::{
    go_project, jest_project, pytest_project, Project, GO_SHOUT_BUG, GO_SHOUT_OK, JS_SHOUT_BUG,
    JS_SHOUT_OK, SHOUT_BUG, SHOUT_OK, WHISPER_BUG, WHISPER_OK,
};
use huddle_tests::llm::stub::{fix, Scripted};
use huddle_tests::llm::team::{settings, team};
use huddle_tests::llm::LlmStub;
use serde_json::{json, Value};

/// Makes the project a git repository and stores `files` on branch `acceptance` only: the
/// working tree never holds them.
fn hide_acceptance_tests(project: &Project, files: &[(&str, &str)]) {
    let root = &project.root;
    project.git(&["init", "-q", "-b", "main"]);
    std::fs::write(
        root.join(".gitignore"),
        ".huddle/\nnode_modules\n__pycache__/\n",
    )
    .unwrap();
    project.git(&["add", "-A"]);
    project.git(&["commit", "-q", "-m", "start"]);
    project.git(&["checkout", "-q", "-b", "acceptance"]);
    for (rel, text) in files {
        project.write(rel, text);
    }
    project.git(&["add", "-A"]);
    project.git(&["commit", "-q", "-m", "acceptance tests"]);
    project.git(&["checkout", "-q", "main"]);
    for (rel, _) in files {
        assert!(!root.join(rel).exists(), "{rel} is not in the working tree");
    }
}

/// Runs a tester with `replies` on `project` for a task with `metadata`; answers the closed
/// task and its `test_result` data.
async fn tester_run(
    project: &Project,
    replies: Vec<Scripted>,
    metadata: Value,
) -> (Task, Value, LlmStub) {
    let stub = LlmStub::start("sk-stub", replies).await;
    let t = team().await;
    t.task("TEST-001", metadata).await;
    t.start_tester(settings(&project.root, Some(&stub)));
    let task = t.closed("TEST-001").await;
    let result = t.one("test_result").await.data;
    (task, result, stub)
}

fn acceptance(paths: &[&str]) -> Value {
    json!({"requireEvidence": true, "acceptance": {"ref": "acceptance", "paths": paths}})
}

const PY_HIDDEN: (&str, &str) = (
    "tests/acceptance/test_shout_more.py",
    "from pkg.strings import shout\n\n\ndef test_shout_other_words():\n    assert shout(\"hey\") == \"HEY!\"\n",
);

/// A special case for the visible test's input.
const PY_HARD_CODED: &str =
    "    if text == \"hi\":\n        return \"HI!\"\n    return text.upper() + \"?\"\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pytest_a_hard_coded_answer_fails_the_hidden_acceptance_test() {
    let project = pytest_project(true, false);
    hide_acceptance_tests(&project, &[PY_HIDDEN]);
    let (task, result, stub) = tester_run(
        &project,
        vec![fix(&[("pkg/strings.py", SHOUT_BUG, PY_HARD_CODED)])],
        acceptance(&["tests/acceptance"]),
    )
    .await;
    assert_eq!(task.status, TaskStatus::Failed, "{result:#}");
    let reason = task.failure_reason.unwrap_or_default();
    assert!(reason.contains("acceptance test(s) fail"), "{reason}");
    assert_eq!(result["qualityGatePassed"], false);
    assert_eq!(result["stopReason"]["kind"], "notVerified");
    let v = &result["verification"];
    assert_eq!(v["acceptance"]["failed"], 1, "{v:#}");
    assert_eq!(
        v["acceptance"]["ids"][0],
        "tests/acceptance/test_shout_more.py::test_shout_other_words"
    );
    // The model never saw the hidden test, nor was it ever in the checkout.
    for i in 0..stub.requests().len() {
        assert!(!stub.user_message(i).contains("test_shout_other_words"));
    }
    assert!(!project.root.join("tests/acceptance").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pytest_the_honest_fix_completes_on_the_re_run_as_evidence() {
    let project = pytest_project(true, false);
    hide_acceptance_tests(&project, &[PY_HIDDEN]);
    let (task, result, stub) = tester_run(
        &project,
        vec![fix(&[("pkg/strings.py", SHOUT_BUG, SHOUT_OK)])],
        acceptance(&["tests/acceptance"]),
    )
    .await;
    assert_eq!(
        task.status,
        TaskStatus::Completed,
        "{:?}",
        task.failure_reason
    );
    assert_eq!(stub.requests().len(), 1);
    assert_eq!(
        result["iterations"], 2,
        "one fix, then the verdict: as before"
    );
    let v = &result["verification"];
    assert_eq!(
        v["acceptance"],
        json!({"files": 1, "passed": 1, "failed": 0, "ids": []}),
        "{v:#}"
    );
    assert_eq!(v["passToPass"]["broken"], 0);
    assert_eq!(
        v["counts"]["total"], 8,
        "7 original tests and 1 acceptance test"
    );
    let stored = task.result.expect("a result");
    // The daemon checked the evidence: the run named is the clean copy's.
    assert_eq!(stored["evidence"]["checked"]["by"], "huddled", "{stored:#}");
    assert_eq!(stored["evidence"]["runId"], result["evidence"]["runId"]);
    // The fix is on the task's branch; the checkout keeps the bug until it is merged.
    assert_eq!(stored["branch"], "huddle/TEST-001", "{stored:#}");
    assert!(project.read("pkg/strings.py").contains(SHOUT_BUG));
    project.git(&["merge", "-q", "huddle/TEST-001"]);
    assert!(project.read("pkg/strings.py").contains(SHOUT_OK));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_named_target_that_still_fails_keeps_the_task_open_whatever_the_pass_rate() {
    let project = pytest_project(true, true);
    let (task, result, _stub) = tester_run(
        &project,
        // Fixes whisper only: 6 of 7 pass, above an 80 % gate, but the target is shout.
        vec![fix(&[("pkg/strings.py", WHISPER_BUG, WHISPER_OK)])],
        json!({"targets": ["tests/test_strings.py::test_shout"], "cycle": {"qualityGate": 80, "maxIterations": 2}}),
    )
    .await;
    assert_eq!(task.status, TaskStatus::Failed, "{result:#}");
    let reason = task.failure_reason.unwrap_or_default();
    assert!(reason.contains("targets do not pass"), "{reason}");
    assert!(
        reason.contains("tests/test_strings.py::test_shout"),
        "{reason}"
    );
}

/// On a fresh `make()` each: a reply that hard-codes the visible test's input in `file` fails
/// the hidden acceptance test and the task; the honest one completes with it passing.
async fn hard_coded_then_honest(
    make: impl Fn() -> Project,
    hidden: (&str, &str),
    edit: (&str, &str),
    hard_coded: &str,
    honest: &str,
) {
    let (file, bug) = edit;
    for (reply, status, counted) in [
        (hard_coded, TaskStatus::Failed, "failed"),
        (honest, TaskStatus::Completed, "passed"),
    ] {
        let project = make();
        hide_acceptance_tests(&project, &[hidden]);
        let (task, result, _stub) = tester_run(
            &project,
            vec![fix(&[(file, bug, reply)])],
            acceptance(&[hidden.0]),
        )
        .await;
        assert_eq!(task.status, status, "{result:#}");
        assert_eq!(
            result["verification"]["acceptance"][counted], 1,
            "{result:#}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jest_a_hard_coded_answer_fails_the_hidden_acceptance_test() {
    // Only shout is broken here.
    let shout_only = || {
        let project = jest_project();
        let text = project.read("src/strings.js");
        project.write(
            "src/strings.js",
            &text.replace("return text.toUpperCase();", "return text.toLowerCase();"),
        );
        project
    };
    let hidden = (
        "src/strings.hidden.test.js",
        "const { shout } = require(\"./strings\");\n\ntest(\"shout works on other words\", () => {\n  expect(shout(\"hey\")).toBe(\"HEY!\");\n});\n",
    );
    let hard_coded = "if (text === \"hi\") return \"HI!\";\n  return `${text.toUpperCase()}?`;";
    hard_coded_then_honest(
        shout_only,
        hidden,
        ("src/strings.js", JS_SHOUT_BUG),
        hard_coded,
        JS_SHOUT_OK,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn go_a_hard_coded_answer_fails_the_hidden_acceptance_test() {
    let hidden = (
        "shout_more_test.go",
        "package shout\n\nimport \"testing\"\n\nfunc TestShoutOtherWords(t *testing.T) {\n\tif got := Shout(\"hey\"); got != \"HEY!\" {\n\t\tt.Fatalf(\"got %q\", got)\n\t}\n}\n",
    );
    let hard_coded =
        "if text == \"hi\" {\n\t\treturn \"HI!\"\n\t}\n\treturn strings.ToUpper(text) + \"?\"";
    hard_coded_then_honest(
        go_project,
        hidden,
        ("shout.go", GO_SHOUT_BUG),
        hard_coded,
        GO_SHOUT_OK,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn code_that_writes_a_test_hook_while_the_suite_runs_is_caught_in_the_clean_copy() {
    let project = pytest_project(true, false);
    // The fix keeps the bug and, when imported, writes a root conftest that rebinds the
    // function under test: every later run in the checkout loads it before the tests import
    // `shout`. It travels hex-encoded, so no rule that reads the edit sees it.
    let hook = "import pkg.strings\n\npkg.strings.shout = lambda text: text.upper() + \"!\"\n";
    let hex: String = hook.bytes().map(|b| format!("{b:02x}")).collect();
    let writer = [
        "    return text.upper() + \"?\"\n\n",
        "import os as _os",
        "_hook = _os.path.join(_os.path.dirname(__file__), \"..\", \"conftest.py\")",
        "if not _os.path.exists(_hook):",
        "    with open(_hook, \"w\") as _f:",
        &format!("        _f.write(bytes.fromhex(\"{hex}\").decode())\n"),
    ]
    .join("\n");
    let (task, result, _stub) = tester_run(
        &project,
        vec![
            fix(&[("pkg/strings.py", SHOUT_BUG, &writer)]),
            fix(&[(
                "pkg/strings.py",
                "def whisper(text):\n",
                "def whisper(text):\n    # unchanged\n",
            )]),
        ],
        // A wide surgical drop keeps the first fix from being rolled back before its hook acts.
        json!({"cycle": {"maxIterations": 3, "surgicalDrop": 50}}),
    )
    .await;
    assert_eq!(task.status, TaskStatus::Failed, "{result:#}");
    assert_eq!(result["qualityGatePassed"], false, "{result:#}");
    // Not refused, not stuck: the gate held in the checkout and only the clean copy saw it.
    assert_eq!(result["stopReason"]["kind"], "notVerified", "{result:#}");
    let problems = result["verification"]["problems"].to_string();
    assert!(problems.contains("conftest.py"), "{problems}");
}

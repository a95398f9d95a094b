//! The tester on tests/fixtures/tiers-go: the tiers pipeline on a go module (build-tagged
//! integration tests, testing/quick properties), repaired by a scripted model in two fixes.
//! The re-runs after each fix are narrowed to the files declaring the failed tests (go's ids
//! name a package), and the service the integration tier talks to is kept up across runs but
//! started again once a fix changed the code it serves: the second fix is in that code, so a
//! stale service would fail its test again.

use huddle_sdk::wire::TaskStatus;
use huddle_tests::llm::projects::{require_tool, tier_fixture};
use huddle_tests::llm::stub::fix;
use huddle_tests::llm::team::{settings, team};
use huddle_tests::llm::LlmStub;
use serde_json::{json, Value};

const CLAMP_BUG: &str = "\t\treturn 101\n";
const CLAMP_OK: &str = "\t\treturn 100\n";
const WORDS_BUG: &str = "\treturn len(strings.Fields(s))\n";
const WORDS_OK: &str = "\tn := 0\n\tfor _, f := range strings.Fields(s) {\n\t\tif strings.Trim(f, \"-.,;:!?\") != \"\" {\n\t\t\tn++\n\t\t}\n\t}\n\treturn n\n";

fn tier<'a>(data: &'a Value, name: &str) -> &'a Value {
    data["tiers"]["tiers"]
        .as_array()
        .unwrap_or_else(|| panic!("no tiers in {data:#}"))
        .iter()
        .find(|t| t["tier"] == name)
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_go_project_is_repaired_tier_by_tier_against_a_service_running_the_fixed_code() {
    require_tool("go");
    let project = tier_fixture("tiers-go");
    let stub = LlmStub::start(
        "sk-stub",
        vec![
            fix(&[("text/text.go", CLAMP_BUG, CLAMP_OK)]),
            fix(&[("text/text.go", WORDS_BUG, WORDS_OK)]),
        ],
    )
    .await;
    let t = team().await;
    t.task("TEST-001", json!({"tiers": true})).await;
    t.start_tester(settings(&project.root, Some(&stub)));
    let task = t.closed("TEST-001").await;
    assert_eq!(
        task.status,
        TaskStatus::Completed,
        "{:?}",
        task.failure_reason
    );
    assert_eq!(stub.requests().len(), 2, "two fixes asked for");
    // One targeted fix per request: a Clamp test first (the fix mends both), then the
    // integration test, which the narrowed re-run still found failing.
    let first = stub.user_message(0);
    assert!(
        first.contains("example.com/tiersgo/text::TestClamp"),
        "{first}"
    );
    let second = stub.user_message(1);
    assert!(
        second.contains("example.com/tiersgo/text::TestWordsEndpointIgnoresPunctuation")
            && !second.contains("TestClamp"),
        "{second}"
    );
    let d = t.one("test_result").await.data;
    assert_eq!(d["tiers"]["verdict"], "passed", "{d:#}");
    for (name, total) in [("unit", 6), ("pbt", 4), ("integration", 3)] {
        let s = &tier(&d, name)["summary"];
        assert_eq!(
            (s["passed"].as_u64(), s["failed"].as_u64()),
            (Some(total), Some(0)),
            "{name}: {d:#}"
        );
    }
}

//! Malformed test-history runs and queries.

use super::{case, Case};
use reqwest::Method;

pub fn cases() -> Vec<Case> {
    let run = |what, body: &'static str| {
        case(
            what,
            Method::POST,
            "/history/runs",
            body,
            400,
            "invalid_field",
        )
    };
    vec![
        run("run without a tree", r#"{"project": "p", "outcomes": []}"#),
        run(
            "empty project",
            r#"{"project": "", "tree": "t", "outcomes": []}"#,
        ),
        run(
            "unknown outcome",
            r#"{"project": "p", "tree": "t", "outcomes": [{"nodeid": "a", "outcome": "flaky"}]}"#,
        ),
        run(
            "a node id twice",
            r#"{"project": "p", "tree": "t", "outcomes": [{"nodeid": "a", "outcome": "passed"}, {"nodeid": "a", "outcome": "failed"}]}"#,
        ),
        run(
            "startedAt not a time",
            r#"{"project": "p", "tree": "t", "startedAt": "monday", "outcomes": []}"#,
        ),
        run(
            "unknown field in a run",
            r#"{"project": "p", "tree": "t", "outcomes": [], "branch": "main"}"#,
        ),
        case(
            "unknown history query",
            Method::GET,
            "/history/flaky?since=3",
            "",
            400,
            "invalid_query",
        ),
        case(
            "history of an unknown project",
            Method::GET,
            "/history/regressions?project=nope",
            "",
            404,
            "not_found",
        ),
    ]
}

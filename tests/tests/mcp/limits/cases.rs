//! The documented limits as cases for `limits.rs`: each input just past a limit (with the
//! status and code both surfaces must answer) and each exactly at one, as an HTTP request and
//! as the tool call, built from the daemon's settings.

use huddle_tests::{Api, TestDaemon};
use serde_json::{json, Value};

/// The same input as an HTTP request and as a tool call.
pub(super) struct Case {
    /// The limit and how the input passes it, for failure messages.
    pub what: String,
    pub http: Http,
    pub tool: &'static str,
    pub args: Value,
}

pub(super) enum Http {
    Get(String),
    Post(String, Value),
    Patch(String, Value),
    /// A message post with an `Idempotency-Key` header (MCP: the `idempotencyKey` argument).
    PostKeyed(String, Value, String),
}

fn case(what: impl Into<String>, http: Http, tool: &'static str, args: Value) -> Case {
    Case {
        what: what.into(),
        http,
        tool,
        args,
    }
}

/// A JSON object nested exactly `depth` levels: depth 1 is `{}`, 2 is `{"a":{}}`.
fn nested(depth: usize) -> Value {
    (1..depth).fold(json!({}), |inner, _| json!({ "a": inner }))
}

pub(super) fn ids(prefix: &str, from: usize, to: usize) -> Vec<String> {
    (from..=to).map(|i| format!("{prefix}-{i:03}")).collect()
}

/// `count` tasks blocked by `per_task` of the DEP tasks, and one more blocked by `extra`.
fn tasks_with_edges(count: usize, per_task: usize, extra: usize) -> Value {
    let mut tasks: Vec<Value> = (0..count)
        .map(|i| json!({"prefix": "EDGE", "subject": format!("e{i}"), "blockedBy": ids("DEP", 1, per_task)}))
        .collect();
    if extra > 0 {
        tasks
            .push(json!({"prefix": "EDGE", "subject": "extra", "blockedBy": ids("DEP", 1, extra)}));
    }
    Value::Array(tasks)
}

fn tasks(n: usize) -> Value {
    (0..n)
        .map(|i| json!({"prefix": "BATCH", "subject": format!("b{i}")}))
        .collect()
}

fn message(summary: String, data: Value) -> Value {
    json!({"to": "*", "type": "impl_progress", "summary": summary, "data": data})
}

/// `{"p": "x…x"}` serialised to exactly `bytes` bytes (`{"p":""}` is 8).
fn data_of(bytes: usize) -> Value {
    json!({ "p": "x".repeat(bytes - 8) })
}

/// The limits with an input just past each (and, in [`at_the_limit`], at each).
pub(super) fn past_the_limit(d: &TestDaemon, c: &Api) -> Vec<(Case, u16, &'static str)> {
    let l = &d.settings.limits;
    let t = &d.settings.tasks;
    let task = |fields: Value| {
        let mut task = json!({"prefix": "LIMIT", "subject": "s"});
        task.as_object_mut()
            .unwrap()
            .extend(fields.as_object().unwrap().clone());
        task
    };
    let create = |what: String, tasks: Value| {
        case(
            what,
            Http::Post(c.t("/tasks"), tasks.clone()),
            "task_create",
            json!({ "tasks": tasks }),
        )
    };
    let update = |what: String, patch: Value| {
        case(
            what,
            Http::Patch(c.t("/tasks/LIM-001"), patch.clone()),
            "task_update",
            json!({"id": "LIM-001", "patch": patch}),
        )
    };
    // Checked before the store looks for the task, so no task need be held.
    let on_claim = |what: String, action: &str, tool: &'static str, body: Value| {
        let mut args = body.clone();
        args["id"] = json!("TEST-999");
        case(
            what,
            Http::Post(c.t(&format!("/tasks/TEST-999/{action}")), body),
            tool,
            args,
        )
    };
    let claim = |what: String, body: Value| {
        case(
            what,
            Http::Post(c.t("/tasks/claim"), body.clone()),
            "task_claim",
            body,
        )
    };
    let list = |what: String, path: &str, tool: &'static str, args: Value| {
        let query: Vec<String> = args
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| {
                format!(
                    "{k}={}",
                    v.as_str().map_or_else(|| v.to_string(), str::to_string)
                )
            })
            .collect();
        let path = c.t(&format!("{path}?{}", query.join("&")));
        case(what, Http::Get(path), tool, args)
    };
    let post = |what: String, body: Value| {
        case(
            what,
            Http::Post(c.t("/messages"), body.clone()),
            "msg_post",
            body,
        )
    };
    let patch_memory = |what: String, patch: Value| {
        case(
            what,
            Http::Patch(c.t("/memory"), patch.clone()),
            "memory_patch",
            json!({ "patch": patch }),
        )
    };
    let post_run = |what: String, run: Value| {
        case(
            what,
            Http::Post(c.t("/history/runs"), run.clone()),
            "history_post",
            run,
        )
    };
    let per_request = l.max_blocked_by_per_request;
    let per_task = l.max_blocked_by;
    let (whole, rest) = (per_request / per_task, per_request % per_task);
    let longest_wait = t.max_wait_ms.max(t.mcp_max_wait_ms);
    let outcomes = |n: usize| {
        (0..n)
            .map(|i| json!({"nodeid": format!("t{i}"), "outcome": "passed"}))
            .collect::<Vec<_>>()
    };
    vec![
        (
            create(
                format!("max_blocked_by_per_request: {} edges", per_request + 1),
                tasks_with_edges(whole, per_task, rest + 1),
            ),
            413,
            "too_large",
        ),
        (
            update(
                format!(
                    "max_blocked_by_per_request: addBlockedBy {}",
                    per_request + 1
                ),
                json!({ "addBlockedBy": ids("DEP", 1, per_request + 1) }),
            ),
            413,
            "too_large",
        ),
        (
            create(
                format!("max_batch: {} tasks", l.max_batch + 1),
                tasks(l.max_batch + 1),
            ),
            400,
            "invalid_field",
        ),
        (
            create(
                format!("max_blocked_by: {} blockers", per_task + 1),
                task(json!({ "blockedBy": ids("DEP", 1, per_task + 1) })),
            ),
            400,
            "invalid_field",
        ),
        (
            update(
                format!("max_blocked_by: addBlockedBy {}", per_task + 1),
                json!({ "addBlockedBy": ids("DEP", 1, per_task + 1) }),
            ),
            400,
            "invalid_field",
        ),
        (
            create(
                "max_subject_chars: subject".into(),
                task(json!({ "subject": "s".repeat(l.max_subject_chars + 1) })),
            ),
            400,
            "invalid_field",
        ),
        (
            create(
                "max_subject_chars: activeForm".into(),
                task(json!({ "activeForm": "a".repeat(l.max_subject_chars + 1) })),
            ),
            400,
            "invalid_field",
        ),
        (
            update(
                "max_subject_chars: patched subject".into(),
                json!({ "subject": "s".repeat(l.max_subject_chars + 1) }),
            ),
            400,
            "invalid_field",
        ),
        (
            create(
                "max_text_chars: description".into(),
                task(json!({ "description": "d".repeat(l.max_text_chars + 1) })),
            ),
            400,
            "invalid_field",
        ),
        (
            create(
                "max_json_depth: metadata".into(),
                task(json!({ "metadata": nested(l.max_json_depth + 1) })),
            ),
            400,
            "invalid_field",
        ),
        (
            update(
                "max_json_depth: patched metadata".into(),
                json!({ "metadata": nested(l.max_json_depth + 1) }),
            ),
            400,
            "invalid_field",
        ),
        (
            create(
                "maxAttempts ceiling".into(),
                task(json!({ "maxAttempts": 1001 })),
            ),
            400,
            "invalid_field",
        ),
        (
            create(
                "task id: a ten-digit number".into(),
                json!({"id": "TEST-1234567890", "subject": "s"}),
            ),
            400,
            "invalid_field",
        ),
        (
            create(
                "task id prefix: 33 characters".into(),
                json!({"prefix": "P".repeat(33), "subject": "s"}),
            ),
            400,
            "invalid_field",
        ),
        (
            on_claim(
                "max_json_depth: completion result".into(),
                "complete",
                "task_complete",
                json!({ "result": nested(l.max_json_depth + 1) }),
            ),
            400,
            "invalid_field",
        ),
        (
            on_claim(
                "max_text_chars: failure reason".into(),
                "fail",
                "task_fail",
                json!({ "reason": "r".repeat(l.max_text_chars + 1) }),
            ),
            400,
            "invalid_field",
        ),
        (
            on_claim(
                "max_text_chars: release note".into(),
                "release",
                "task_release",
                json!({ "note": "n".repeat(l.max_text_chars + 1) }),
            ),
            400,
            "invalid_field",
        ),
        (
            on_claim(
                "max_lease_ms: heartbeat".into(),
                "heartbeat",
                "task_heartbeat",
                json!({ "leaseMs": t.max_lease_ms + 1 }),
            ),
            400,
            "invalid_field",
        ),
        (
            on_claim(
                "min_lease_ms: heartbeat".into(),
                "heartbeat",
                "task_heartbeat",
                json!({ "leaseMs": t.min_lease_ms - 1 }),
            ),
            400,
            "invalid_field",
        ),
        (
            claim(
                "MAX_CLAIM_BATCH: max".into(),
                json!({"prefixes": ["LIMIT"], "max": 101}),
            ),
            400,
            "invalid_field",
        ),
        (
            claim(
                "MAX_CLAIM_PREFIXES: 33 prefixes".into(),
                json!({ "prefixes": vec!["LIMIT"; 33] }),
            ),
            400,
            "invalid_field",
        ),
        (
            claim(
                "MAX_PROJECT_CHARS: project".into(),
                json!({"prefixes": ["LIMIT"], "project": "p".repeat(201)}),
            ),
            400,
            "invalid_field",
        ),
        (
            claim(
                "max_lease_ms: claim".into(),
                json!({"prefixes": ["LIMIT"], "leaseMs": t.max_lease_ms + 1}),
            ),
            400,
            "invalid_field",
        ),
        (
            claim(
                "max_wait_ms: claim".into(),
                json!({"prefixes": ["LIMIT"], "waitMs": longest_wait + 1}),
            ),
            400,
            "invalid_field",
        ),
        (
            list(
                "max_page_size: tasks".into(),
                "/tasks",
                "task_list",
                json!({ "limit": l.max_page_size + 1 }),
            ),
            400,
            "invalid_field",
        ),
        (
            list(
                "task id pattern: after".into(),
                "/tasks",
                "task_list",
                json!({"after": "TEST-1234567890"}),
            ),
            400,
            "invalid_field",
        ),
        (
            list(
                "prefix pattern: task list".into(),
                "/tasks",
                "task_list",
                json!({"prefix": "lower"}),
            ),
            400,
            "invalid_field",
        ),
        (
            list(
                "max_page_size: messages".into(),
                "/messages",
                "msg_list",
                json!({ "limit": l.max_page_size + 1 }),
            ),
            400,
            "invalid_field",
        ),
        (
            list(
                "max_page_size: inbox".into(),
                "/inbox",
                "inbox_read",
                json!({ "limit": l.max_page_size + 1 }),
            ),
            400,
            "invalid_field",
        ),
        (
            list(
                "max_wait_ms: inbox".into(),
                "/inbox",
                "inbox_read",
                json!({ "waitMs": longest_wait + 1 }),
            ),
            400,
            "invalid_field",
        ),
        (
            list(
                "max_page_size: search".into(),
                "/messages/search",
                "msg_search",
                json!({ "limit": l.max_page_size + 1 }),
            ),
            400,
            "invalid_field",
        ),
        (
            list(
                "search text: 513 characters".into(),
                "/messages/search",
                "msg_search",
                json!({ "q": "q".repeat(513) }),
            ),
            400,
            "invalid_field",
        ),
        (
            list(
                "search words: 17".into(),
                "/messages/search",
                "msg_search",
                json!({ "q": vec!["w"; 17].join("-") }),
            ),
            400,
            "invalid_field",
        ),
        (
            list(
                "search word: 65 characters".into(),
                "/messages/search",
                "msg_search",
                json!({ "q": "w".repeat(65) }),
            ),
            400,
            "invalid_field",
        ),
        (
            post(
                "max_summary_chars".into(),
                message("s".repeat(l.max_summary_chars + 1), json!({})),
            ),
            400,
            "invalid_field",
        ),
        (
            post(
                "max_message_bytes".into(),
                message("s".into(), data_of(l.max_message_bytes + 1)),
            ),
            413,
            "too_large",
        ),
        (
            post(
                "max_json_depth: message data".into(),
                message("s".into(), nested(l.max_json_depth + 1)),
            ),
            400,
            "invalid_field",
        ),
        (
            post(
                "message type: 65 characters".into(),
                json!({"to": "*", "type": "t".repeat(65), "summary": "s"}),
            ),
            400,
            "invalid_field",
        ),
        (
            {
                let key = "k".repeat(256);
                let mut args = message("s".into(), json!({}));
                args["idempotencyKey"] = json!(key);
                let http = Http::PostKeyed(c.t("/messages"), message("s".into(), json!({})), key);
                case("idempotency key: 256 characters", http, "msg_post", args)
            },
            400,
            "invalid_field",
        ),
        (
            patch_memory(
                "max_json_depth: memory".into(),
                nested(l.max_json_depth + 1),
            ),
            400,
            "invalid_field",
        ),
        (
            // The document already holds `big` (see the test): this would pass max_bytes.
            patch_memory(
                "[memory] max_bytes".into(),
                json!({ "more": "x".repeat(d.settings.memory.max_bytes / 2) }),
            ),
            413,
            "too_large",
        ),
        (
            post_run(
                "max_test_outcomes".into(),
                json!({"project": "calc", "tree": "t", "outcomes": outcomes(l.max_test_outcomes + 1)}),
            ),
            400,
            "invalid_field",
        ),
        (
            post_run(
                "max_nodeid_chars".into(),
                json!({"project": "calc", "tree": "t", "outcomes": [
                    {"nodeid": "n".repeat(l.max_nodeid_chars + 1), "outcome": "passed"},
                ]}),
            ),
            400,
            "invalid_field",
        ),
        (
            case(
                "gate question: 4,001 characters",
                Http::Post(
                    c.t("/tasks/LIM-003/gate"),
                    json!({ "question": "q".repeat(4001) }),
                ),
                "task_gate",
                json!({"id": "LIM-003", "question": "q".repeat(4001)}),
            ),
            400,
            "invalid_field",
        ),
        (
            case(
                "gate answer: 4,001 characters",
                Http::Post(
                    c.t("/tasks/HUMAN-001/answer"),
                    json!({ "answer": "a".repeat(4001) }),
                ),
                "task_answer",
                json!({"id": "HUMAN-001", "answer": "a".repeat(4001)}),
            ),
            400,
            "invalid_field",
        ),
    ]
}

/// Inputs exactly at a limit, which both surfaces accept.
pub(super) fn at_the_limit(d: &TestDaemon, c: &Api) -> Vec<Case> {
    let l = &d.settings.limits;
    let per_request = l.max_blocked_by_per_request;
    let per_task = l.max_blocked_by;
    let create = |what: &str, tasks: Value| {
        case(
            what,
            Http::Post(c.t("/tasks"), tasks.clone()),
            "task_create",
            json!({ "tasks": tasks }),
        )
    };
    let list = |what: &str, path: &str, tool: &'static str| {
        let max = l.max_page_size;
        let http = Http::Get(c.t(&format!("{path}?limit={max}")));
        case(what, http, tool, json!({ "limit": max }))
    };
    let post = |what: &str, body: Value| {
        case(
            what,
            Http::Post(c.t("/messages"), body.clone()),
            "msg_post",
            body,
        )
    };
    vec![
        create(
            "max_blocked_by_per_request",
            tasks_with_edges(per_request / per_task, per_task, per_request % per_task),
        ),
        create("max_batch", tasks(l.max_batch)),
        create(
            "max_subject_chars, max_text_chars, max_json_depth",
            json!({
                "prefix": "LIMIT",
                "subject": "s".repeat(l.max_subject_chars),
                "description": "d".repeat(l.max_text_chars),
                "metadata": nested(l.max_json_depth),
                "maxAttempts": 1000,
            }),
        ),
        list("max_page_size: tasks", "/tasks", "task_list"),
        list("max_page_size: messages", "/messages", "msg_list"),
        list("max_page_size: search", "/messages/search", "msg_search"),
        post(
            "max_summary_chars, max_message_bytes",
            message(
                "s".repeat(l.max_summary_chars),
                data_of(l.max_message_bytes),
            ),
        ),
        post(
            "max_json_depth: message data",
            message("s".into(), nested(l.max_json_depth)),
        ),
        case(
            "max_json_depth: memory",
            Http::Patch(c.t("/memory"), nested(l.max_json_depth)),
            "memory_patch",
            json!({ "patch": nested(l.max_json_depth) }),
        ),
    ]
}

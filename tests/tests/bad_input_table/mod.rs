//! The bad-input table: each malformed request, the status and error code it must get, and a
//! snapshot of the SQLite file to prove it changed nothing.

use reqwest::Method;

/// Row counts and sequence/version sums of every table: any change shows up here.
pub fn snapshot(db: &std::path::Path) -> Vec<(String, i64)> {
    let conn =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let queries = [
        ("teams", "select count(*) + sum(msg_seq) * 1000 + sum(event_seq) * 100000 + sum(memory_version) * 10000000 from teams"),
        ("agents", "select count(*) + coalesce(sum(inbox_cursor), 0) * 1000 from agents"),
        ("tasks", "select count(*) + coalesce(sum(version), 0) * 1000 + coalesce(sum(unmet_blockers), 0) * 100000 from tasks"),
        ("task_deps", "select count(*) from task_deps"),
        ("task_counters", "select count(*) + coalesce(sum(next_number), 0) * 1000 from task_counters"),
        ("messages", "select count(*) from messages"),
        ("idempotency_keys", "select count(*) from idempotency_keys"),
        ("events", "select count(*) from events"),
        ("memory_history", "select count(*) from memory_history"),
    ];
    queries
        .iter()
        .map(|(name, q)| {
            (
                name.to_string(),
                conn.query_row(q, [], |r| r.get::<_, Option<i64>>(0))
                    .unwrap()
                    .unwrap_or(0),
            )
        })
        .collect()
}

pub struct Case {
    pub what: &'static str,
    pub method: Method,
    pub path: &'static str,
    pub headers: Vec<(&'static str, &'static str)>,
    pub body: Option<Vec<u8>>,
    pub status: u16,
    pub code: &'static str,
}

pub fn case(
    what: &'static str,
    method: Method,
    path: &'static str,
    body: &str,
    status: u16,
    code: &'static str,
) -> Case {
    Case {
        what,
        method,
        path,
        headers: vec![],
        body: Some(body.as_bytes().to_vec()),
        status,
        code,
    }
}

/// Every malformed request of the table (`huge` is past the body limit, `deep` past serde's
/// nesting limit).
pub fn cases(huge: &str, deep: &str) -> Vec<Case> {
    vec![
        case(
            "malformed JSON",
            Method::POST,
            "/tasks",
            "{\"subject\": ",
            400,
            "invalid_json",
        ),
        case(
            "wrong type",
            Method::POST,
            "/tasks",
            r#"{"prefix": "TEST", "subject": 5}"#,
            400,
            "invalid_field",
        ),
        case(
            "unknown field",
            Method::POST,
            "/tasks",
            r#"{"prefix": "TEST", "subject": "s", "blocked_by": []}"#,
            400,
            "invalid_field",
        ),
        case(
            "neither id nor prefix",
            Method::POST,
            "/tasks",
            r#"{"subject": "s"}"#,
            400,
            "invalid_field",
        ),
        case(
            "bad id",
            Method::POST,
            "/tasks",
            r#"{"id": "test 1", "subject": "s"}"#,
            400,
            "invalid_field",
        ),
        case(
            "bad prefix",
            Method::POST,
            "/tasks",
            r#"{"prefix": "te-st", "subject": "s"}"#,
            400,
            "invalid_field",
        ),
        case(
            "empty subject",
            Method::POST,
            "/tasks",
            r#"{"prefix": "TEST", "subject": "  "}"#,
            400,
            "invalid_field",
        ),
        case(
            "metadata not an object",
            Method::POST,
            "/tasks",
            r#"{"prefix": "TEST", "subject": "s", "metadata": [1]}"#,
            400,
            "invalid_field",
        ),
        case(
            "bad owner",
            Method::POST,
            "/tasks",
            r#"{"prefix": "TEST", "subject": "s", "owner": "Not A Name"}"#,
            400,
            "invalid_field",
        ),
        case(
            "maxAttempts out of range",
            Method::POST,
            "/tasks",
            r#"{"prefix": "TEST", "subject": "s", "maxAttempts": 0}"#,
            400,
            "invalid_field",
        ),
        case(
            "duplicate id",
            Method::POST,
            "/tasks",
            r#"{"id": "TEST-001", "subject": "again"}"#,
            409,
            "duplicate_id",
        ),
        case(
            "duplicate id in batch",
            Method::POST,
            "/tasks",
            r#"[{"id": "TEST-009", "subject": "x"}, {"id": "TEST-9", "subject": "y"}]"#,
            409,
            "duplicate_id",
        ),
        case(
            "batch with one bad task",
            Method::POST,
            "/tasks",
            r#"[{"id": "TEST-010", "subject": "ok"}, {"id": "TEST-011", "subject": ""}]"#,
            400,
            "invalid_field",
        ),
        case(
            "empty batch",
            Method::POST,
            "/tasks",
            "[]",
            400,
            "invalid_field",
        ),
        case(
            "body not a task",
            Method::POST,
            "/tasks",
            "42",
            400,
            "invalid_field",
        ),
        case(
            "unknown blocker",
            Method::POST,
            "/tasks",
            r#"{"id": "TEST-020", "subject": "s", "blockedBy": ["TEST-404"]}"#,
            400,
            "invalid_field",
        ),
        case(
            "self blocker",
            Method::PATCH,
            "/tasks/TEST-003",
            r#"{"addBlockedBy": ["TEST-003"]}"#,
            400,
            "invalid_field",
        ),
        case(
            "cycle",
            Method::PATCH,
            "/tasks/TEST-001",
            r#"{"addBlockedBy": ["TEST-002"]}"#,
            409,
            "dependency_cycle",
        ),
        case(
            "unknown status",
            Method::PATCH,
            "/tasks/TEST-003",
            r#"{"status": "done"}"#,
            400,
            "invalid_field",
        ),
        case(
            "patch unknown task",
            Method::PATCH,
            "/tasks/TEST-404",
            r#"{"subject": "x"}"#,
            404,
            "not_found",
        ),
        Case {
            headers: vec![("If-Match", "\"99\"")],
            ..case(
                "stale If-Match",
                Method::PATCH,
                "/tasks/TEST-003",
                r#"{"subject": "x"}"#,
                412,
                "stale_version",
            )
        },
        Case {
            headers: vec![("If-Match", "soon")],
            ..case(
                "garbage If-Match",
                Method::PATCH,
                "/tasks/TEST-003",
                r#"{"subject": "x"}"#,
                400,
                "invalid_field",
            )
        },
        case(
            "empty fail reason",
            Method::POST,
            "/tasks/TEST-003/fail",
            r#"{"reason": ""}"#,
            400,
            "invalid_field",
        ),
        case(
            "lease too long",
            Method::POST,
            "/tasks/claim",
            r#"{"prefixes": ["TEST"], "leaseMs": 999999999}"#,
            400,
            "invalid_field",
        ),
        case(
            "wait too long",
            Method::POST,
            "/tasks/claim",
            r#"{"prefixes": ["TEST"], "waitMs": 999999999}"#,
            400,
            "invalid_field",
        ),
        case(
            "negative wait",
            Method::POST,
            "/tasks/claim",
            r#"{"prefixes": ["TEST"], "waitMs": -1}"#,
            400,
            "invalid_field",
        ),
        case(
            "bad claim prefix",
            Method::POST,
            "/tasks/claim",
            r#"{"prefixes": ["../etc"]}"#,
            400,
            "invalid_field",
        ),
        case(
            "message to nobody",
            Method::POST,
            "/messages",
            r#"{"to": "ghost", "type": "error", "summary": "s"}"#,
            400,
            "invalid_field",
        ),
        case(
            "bad message type",
            Method::POST,
            "/messages",
            r#"{"to": "*", "type": "9lives", "summary": "s"}"#,
            400,
            "invalid_field",
        ),
        case(
            "missing summary",
            Method::POST,
            "/messages",
            r#"{"to": "*", "type": "error"}"#,
            400,
            "invalid_field",
        ),
        case(
            "data not an object",
            Method::POST,
            "/messages",
            r#"{"to": "*", "type": "error", "summary": "s", "data": "x"}"#,
            400,
            "invalid_field",
        ),
        Case {
            headers: vec![("Idempotency-Key", "")],
            ..case(
                "empty idempotency key",
                Method::POST,
                "/messages",
                r#"{"to": "*", "type": "error", "summary": "s"}"#,
                400,
                "invalid_field",
            )
        },
        case(
            "ack past the end",
            Method::POST,
            "/inbox/ack",
            r#"{"seq": 1000}"#,
            400,
            "invalid_field",
        ),
        case(
            "ack wrong type",
            Method::POST,
            "/inbox/ack",
            r#"{"seq": "1"}"#,
            400,
            "invalid_field",
        ),
        case(
            "memory not JSON",
            Method::PATCH,
            "/memory",
            "{nope",
            400,
            "invalid_json",
        ),
        case(
            "memory made a non-object",
            Method::PATCH,
            "/memory",
            "[1]",
            400,
            "invalid_field",
        ),
        case(
            "memory put without doc",
            Method::PUT,
            "/memory",
            r#"{"a": 1}"#,
            400,
            "invalid_field",
        ),
        Case {
            headers: vec![("If-Match", "7")],
            ..case(
                "memory stale",
                Method::PATCH,
                "/memory",
                r#"{"b": 2}"#,
                412,
                "stale_version",
            )
        },
        case("too large", Method::POST, "/tasks", huge, 413, "too_large"),
        case(
            "deeply nested",
            Method::POST,
            "/tasks",
            deep,
            400,
            "invalid_json",
        ),
        case(
            "bad list filter",
            Method::GET,
            "/tasks?status=done",
            "",
            400,
            "invalid_field",
        ),
        case(
            "bad list limit",
            Method::GET,
            "/tasks?limit=0",
            "",
            400,
            "invalid_field",
        ),
        case(
            "bad list cursor",
            Method::GET,
            "/tasks?after=nope",
            "",
            400,
            "invalid_field",
        ),
        case(
            "non-numeric query",
            Method::GET,
            "/messages?after=abc",
            "",
            400,
            "invalid_query",
        ),
        case(
            "unknown query parameter",
            Method::GET,
            "/tasks?stauts=pending",
            "",
            400,
            "invalid_query",
        ),
        case(
            "unknown route",
            Method::GET,
            "/nothing-here",
            "",
            404,
            "not_found",
        ),
        case(
            "wrong method",
            Method::DELETE,
            "/tasks",
            "",
            405,
            "method_not_allowed",
        ),
        Case {
            headers: vec![("Last-Event-ID", "x")],
            ..case(
                "bad Last-Event-ID",
                Method::GET,
                "/events",
                "",
                400,
                "invalid_field",
            )
        },
    ]
}

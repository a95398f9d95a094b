//! Malformed message, inbox, memory, query, size and routing requests.

use super::{case, Case};
use reqwest::Method;

pub fn cases(huge: &str, deep: &str) -> Vec<Case> {
    vec![
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

//! Helpers the gate tests share: times ahead, a task to gate, a task read, a question's id.

use huddle_tests::http::Api;
use serde_json::{json, Value};

/// `secs` from now, as RFC 3339 (a deadline).
pub fn in_secs(secs: i64) -> String {
    (chrono::Utc::now() + chrono::Duration::seconds(secs))
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// Creates pending task `id` as coordinator `c`.
pub async fn task(c: &Api, id: &str) {
    c.post(
        &c.t("/tasks"),
        json!({"id": id, "subject": format!("change {id}")}),
    )
    .await
    .expect_status(201);
}

/// Task `id` as `c` reads it.
pub async fn get(c: &Api, id: &str) -> Value {
    c.get(&c.t(&format!("/tasks/{id}")))
        .await
        .expect_status(200)
        .body
}

/// The `id` of a task in an answer.
pub fn id_of(v: &Value) -> String {
    v["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{v}"))
        .to_string()
}

//! How a `task.*` event's data is kept in the SQLite event log: the task's fields as a JSON
//! array in `Task`'s field order, without the 18 names every event would otherwise repeat.
//! Events are most of the pages a batch of claims writes, and the names were about half of
//! each one's bytes (BENCHMARKS.md, "Task events without their field names").
//!
//! Readers expand a stored array back to the object the API has always shown, byte for byte
//! what serialising the task gives. Rows written before keep the object and read as stored.

use huddle_wire::{Task, TaskStatus};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::borrow::Cow;

/// The first element of a stored array: the layout, so that a later one can be told apart.
const LAYOUT: u8 = 1;

/// `Task` borrowed in stored order. `gates` and `traceparent` are not in the layout: a task
/// that carries them is stored as an object (events never do today).
#[derive(Serialize)]
struct Packed<'a>(
    u8,
    &'a str,
    &'a str,
    &'a str,
    &'a Option<String>,
    TaskStatus,
    &'a Option<String>,
    &'a Option<String>,
    &'a Option<String>,
    i64,
    i64,
    &'a [String],
    &'a [String],
    &'a Value,
    &'a Option<Value>,
    &'a Option<String>,
    i64,
    &'a str,
    &'a str,
);

#[derive(Deserialize)]
struct Unpacked(
    u8,
    String,
    String,
    String,
    Option<String>,
    TaskStatus,
    Option<String>,
    Option<String>,
    Option<String>,
    i64,
    i64,
    Vec<String>,
    Vec<String>,
    Value,
    Option<Value>,
    Option<String>,
    i64,
    String,
    String,
);

/// The stored text of a task event's data.
pub fn pack(task: &Task) -> String {
    let text = if task.gates.is_empty() && task.traceparent.is_none() {
        serde_json::to_string(&Packed(
            LAYOUT,
            &task.id,
            &task.subject,
            &task.description,
            &task.active_form,
            task.status,
            &task.owner,
            &task.claimed_by,
            &task.lease_expires_at,
            task.attempts,
            task.max_attempts,
            &task.blocked_by,
            &task.blocks,
            &task.metadata,
            &task.result,
            &task.failure_reason,
            task.version,
            &task.created_at,
            &task.updated_at,
        ))
    } else {
        serde_json::to_string(task)
    };
    // Strings, numbers and JSON values only: writing them to a `String` cannot fail.
    text.unwrap_or_default()
}

/// The task a stored array holds; `None` for data stored as an object (or not a task).
fn unpack(stored: &str) -> Option<Task> {
    if !stored.starts_with('[') {
        return None;
    }
    let Unpacked(
        layout,
        id,
        subject,
        description,
        active_form,
        status,
        owner,
        claimed_by,
        lease_expires_at,
        attempts,
        max_attempts,
        blocked_by,
        blocks,
        metadata,
        result,
        failure_reason,
        version,
        created_at,
        updated_at,
    ) = serde_json::from_str(stored).ok()?;
    (layout == LAYOUT).then(|| Task {
        id,
        subject,
        description,
        active_form,
        status,
        owner,
        claimed_by,
        lease_expires_at,
        attempts,
        max_attempts,
        blocked_by,
        blocks,
        metadata,
        result,
        failure_reason,
        version,
        created_at,
        updated_at,
        gates: Vec::new(),
        traceparent: None,
    })
}

/// An event's data as JSON text, as the API shows it: a task event's stored array expanded;
/// anything else as stored.
pub fn expanded<'a>(kind: &str, stored: &'a str) -> Cow<'a, str> {
    match kind.starts_with("task.").then(|| unpack(stored)).flatten() {
        Some(task) => Cow::Owned(serde_json::to_string(&task).unwrap_or_default()),
        None => Cow::Borrowed(stored),
    }
}

/// An event's data as a value, as the API shows it (see [`expanded`]); stored text that is not
/// JSON reads as null.
pub fn value(kind: &str, stored: &str) -> Value {
    match kind.starts_with("task.").then(|| unpack(stored)).flatten() {
        Some(task) => serde_json::to_value(&task).unwrap_or(Value::Null),
        None => super::parse_json(stored),
    }
}

/// The SQL for a stored task event's id, whichever way its data is stored.
pub const STORED_TASK_ID: &str =
    "(case when data like '[%' then json_extract(data, '$[1]') else json_extract(data, '$.id') end)";

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn task() -> Task {
        serde_json::from_value(json!({
            "id": "TEST-7", "subject": "Run \"the\" suite", "description": "line one\nline two ✓",
            "activeForm": null, "status": "in_progress", "owner": "tester",
            "claimedBy": "w1", "leaseExpiresAt": "2026-12-01T10:00:00.000Z",
            "attempts": 2, "maxAttempts": 3, "blockedBy": ["TEST-1", "TEST-2"], "blocks": [],
            "metadata": {"project": "api", "n": 1.5, "nested": {"z": [1, null, true]}},
            "result": null, "failureReason": null, "version": 4,
            "createdAt": "2026-12-01T09:00:00.000Z", "updatedAt": "2026-12-01T09:30:00.123Z"
        }))
        .unwrap()
    }

    #[test]
    fn a_packed_task_expands_to_the_text_the_task_serialises_to() {
        let mut t = task();
        for result in [None, Some(json!({"passed": 3, "why": "ok"}))] {
            t.result = result;
            let stored = pack(&t);
            assert!(stored.starts_with("[1,\"TEST-7\""), "{stored}");
            assert!(!stored.contains("claimedBy"), "no field names: {stored}");
            let object = serde_json::to_string(&t).unwrap();
            assert!(stored.len() < object.len() * 2 / 3, "{stored}");
            assert_eq!(expanded("task.claimed", &stored), object);
            assert_eq!(
                value("task.claimed", &stored),
                serde_json::to_value(&t).unwrap()
            );
        }
    }

    #[test]
    fn objects_and_other_events_read_as_stored() {
        let object = serde_json::to_string(&task()).unwrap();
        assert_eq!(expanded("task.created", &object), object);
        assert_eq!(value("task.created", &object)["id"], "TEST-7");
        // Another event's array is its own data, never a task.
        let packed = pack(&task());
        assert_eq!(expanded("memory.updated", &packed), packed);
        assert!(value("memory.updated", &packed).is_array());
        // An array in a layout this version does not know is left as stored.
        let later = packed.replacen("[1,", "[2,", 1);
        assert_eq!(expanded("task.created", &later), later);
        assert_eq!(value("task.created", "not json"), Value::Null);
    }

    #[test]
    fn a_task_with_fields_outside_the_layout_is_stored_as_an_object() {
        let mut t = task();
        t.traceparent = Some("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01".into());
        let stored = pack(&t);
        assert!(stored.starts_with('{'));
        assert_eq!(expanded("task.claimed", &stored), stored);
    }
}

//! A team as JSON Lines, for export and import (backup, audit, moving between backends).
//!
//! Each line is one record, `{"kind":"…","version":1,…}`, in this order: the `team`, its
//! `agent`s, `counter`s, `task`s (dependencies inline), `message`s, `idempotency_key`s,
//! `event`s, `memory_change`s, `test_run`s (outcomes inline), `webhook`s, the admin's
//! `settings` (quota and retention overrides, when the team has any), and last an `end`
//! naming how many records came before it, so a file cut at a line boundary is refused too.
//! Every backend writes the same bytes for the same team: rows in a fixed order, JSON the
//! store kept as text copied as is. Times are milliseconds since the epoch, as stored.
//! A task in progress is written as `pending` without its holder and lease (its worker does
//! not move with it); webhooks without their lease. The delivery log of webhooks is not exported
//! (it records what was sent from this daemon, not state the team needs).
//!
//! Which table and columns each kind is read from and written to is listed once, in
//! `tables.rs`; both backends build their statements from those lists (`sql.rs`) and convert
//! rows and records the same way (`rows.rs`).

use super::error::{StoreError, StoreResult};
use huddle_wire::{Role, TaskStatus};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;
use std::collections::BTreeMap;

pub mod rows;
mod shape;
pub mod sql;
pub mod tables;
pub use shape::Shape;

/// The format's version; a file of another version is refused.
pub const FORMAT_VERSION: u64 = 1;

/// JSON the store keeps as text, copied into the line as JSON (not as a string).
pub type Json = Box<RawValue>;

/// Stored JSON text as a line's JSON: as is, unless it holds a line break (only possible as
/// whitespace between tokens), which would split the line; then compacted.
pub fn json_of(text: &str) -> Result<Json, StoreError> {
    let raw = if text.contains(['\n', '\r']) {
        serde_json::from_str::<Value>(text).and_then(|v| serde_json::value::to_raw_value(&v))
    } else {
        RawValue::from_string(text.to_string())
    };
    raw.map_err(|e| StoreError::Internal(format!("stored JSON is not JSON: {e}")))
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TeamRecord {
    pub name: String,
    pub created_at: i64,
    /// The last message and event `seq` handed out (retention may have removed their rows).
    pub msg_seq: i64,
    pub event_seq: i64,
    pub memory: Json,
    pub memory_version: i64,
}

/// An agent with its token's hash, so its token keeps working after an import.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AgentRecord {
    pub name: String,
    pub role: Role,
    pub token_hash: String,
    pub created_at: i64,
    pub last_seen_at: Option<i64>,
    pub inbox_cursor: i64,
    pub revoked_at: Option<i64>,
}

/// The next number handed out for an id prefix.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CounterRecord {
    pub prefix: String,
    pub next_number: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TaskRecord {
    pub id: String,
    pub prefix: String,
    pub number: i64,
    pub subject: String,
    pub description: String,
    pub active_form: Option<String>,
    pub status: TaskStatus,
    pub owner: Option<String>,
    /// The holder of a finished task (a task in progress is exported released: no holder).
    pub claimed_by: Option<String>,
    pub attempts: i64,
    pub max_attempts: i64,
    pub metadata: Json,
    pub result: Option<Json>,
    pub failure_reason: Option<String>,
    /// The task's version (`If-Match`); not the line's format `version`.
    #[serde(rename = "taskVersion")]
    pub version: i64,
    pub created_at: i64,
    pub updated_at: i64,
    /// Its blockers' ids, in id order.
    pub blocked_by: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MessageRecord {
    pub seq: i64,
    pub id: String,
    pub from: String,
    pub to: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub summary: String,
    pub data: Json,
    pub created_at: i64,
}

/// A key a post was made with, so a retry after the move is still answered, not stored twice.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct KeyRecord {
    pub agent: String,
    pub key: String,
    pub seq: i64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EventRecord {
    pub seq: i64,
    #[serde(rename = "type")]
    pub kind: String,
    pub data: Json,
    pub created_at: i64,
}

/// One entry of the shared memory's history.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MemoryChangeRecord {
    /// The memory's version this change made; not the line's format `version`.
    #[serde(rename = "memoryVersion")]
    pub version: i64,
    pub agent: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub patch: Json,
    pub created_at: i64,
}

/// A test-history run with its outcomes (`[nodeid, outcome]`, 0 passed, 1 failed, 2 skipped,
/// 3 error), in nodeid order.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TestRunRecord {
    pub project: String,
    pub tree: String,
    pub agent: String,
    pub started_at: i64,
    pub created_at: i64,
    pub passed: i64,
    pub failed: i64,
    pub skipped: i64,
    pub errors: i64,
    pub outcomes: Vec<(String, i64)>,
    /// The test tier the run covered; absent for whole-suite runs (and in older exports).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tier: Option<String>,
    /// The task the run verified; absent when it was posted for none (and in older exports).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<String>,
    /// The files the run kept (`TestRunArtifacts` as JSON text), when listed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifacts: Option<String>,
}

/// A webhook with its secret (receivers keep verifying signatures after a move) and cursors.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WebhookRecord {
    pub url: String,
    pub secret: String,
    pub events: Json,
    pub created_by: String,
    pub created_at: i64,
    pub message_cursor: i64,
    pub event_cursor: i64,
}

/// The admin's overrides of the configured quotas and retention (absent: the defaults), so a
/// restored or moved team keeps its limits. Retention is the stored JSON, as is.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SettingsRecord {
    pub max_tasks: Option<i64>,
    pub max_edges: Option<i64>,
    pub max_messages: Option<i64>,
    pub max_storage_bytes: Option<i64>,
    pub retention: Json,
    /// The question settings (stored JSON, as is); absent from exports made before them.
    #[serde(default = "no_questions")]
    pub questions: Json,
}

fn no_questions() -> Json {
    RawValue::from_string("{}".into()).expect("{} is JSON")
}

/// The last line: how many records precede it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct EndRecord {
    pub records: u64,
}

/// One line of an export.
#[derive(Debug, Clone)]
pub enum Record {
    Team(TeamRecord),
    Agent(AgentRecord),
    Counter(CounterRecord),
    Task(TaskRecord),
    Message(MessageRecord),
    IdempotencyKey(KeyRecord),
    Event(EventRecord),
    MemoryChange(MemoryChangeRecord),
    TestRun(TestRunRecord),
    Webhook(WebhookRecord),
    Settings(SettingsRecord),
    End(EndRecord),
}

/// Every kind, in the order a file holds them.
pub const KINDS: [&str; 12] = [
    "team",
    "agent",
    "counter",
    "task",
    "message",
    "idempotency_key",
    "event",
    "memory_change",
    "test_run",
    "webhook",
    "settings",
    "end",
];

/// `kind` and `version` first, then the record's own fields.
#[derive(Serialize)]
struct Line<'a, T> {
    kind: &'static str,
    version: u64,
    #[serde(flatten)]
    record: &'a T,
}

impl Record {
    pub fn kind(&self) -> &'static str {
        KINDS[self.rank()]
    }

    /// Where the kind comes in a file.
    fn rank(&self) -> usize {
        match self {
            Record::Team(_) => 0,
            Record::Agent(_) => 1,
            Record::Counter(_) => 2,
            Record::Task(_) => 3,
            Record::Message(_) => 4,
            Record::IdempotencyKey(_) => 5,
            Record::Event(_) => 6,
            Record::MemoryChange(_) => 7,
            Record::TestRun(_) => 8,
            Record::Webhook(_) => 9,
            Record::Settings(_) => 10,
            Record::End(_) => 11,
        }
    }

    /// The record as one line, with its newline.
    pub fn to_line(&self) -> Result<String, StoreError> {
        fn line<T: Serialize>(kind: &'static str, record: &T) -> serde_json::Result<String> {
            serde_json::to_string(&Line {
                kind,
                version: FORMAT_VERSION,
                record,
            })
        }
        let kind = self.kind();
        let text = match self {
            Record::Team(r) => line(kind, r),
            Record::Agent(r) => line(kind, r),
            Record::Counter(r) => line(kind, r),
            Record::Task(r) => line(kind, r),
            Record::Message(r) => line(kind, r),
            Record::IdempotencyKey(r) => line(kind, r),
            Record::Event(r) => line(kind, r),
            Record::MemoryChange(r) => line(kind, r),
            Record::TestRun(r) => line(kind, r),
            Record::Webhook(r) => line(kind, r),
            Record::Settings(r) => line(kind, r),
            Record::End(r) => line(kind, r),
        };
        let mut text = text.map_err(|e| StoreError::Internal(e.to_string()))?;
        text.push('\n');
        Ok(text)
    }

    /// Parses one line; the error says what is wrong with it (the caller adds the line number).
    pub fn parse(line: &str) -> Result<Record, String> {
        // Values kept as their text, so JSON copied from the store stays byte for byte.
        let mut fields: BTreeMap<String, &RawValue> = match serde_json::from_str(line) {
            Ok(fields) => fields,
            Err(e) if e.is_syntax() || e.is_eof() => {
                return Err(format!("not JSON ({e}); is the file cut short?"))
            }
            Err(_) => return Err("a record is a JSON object".into()),
        };
        let kind = match fields.remove("kind").map(|k| serde_json::from_str(k.get())) {
            Some(Ok(Value::String(kind))) => kind,
            _ => return Err("no \"kind\" (a string)".into()),
        };
        match fields
            .remove("version")
            .map(|v| serde_json::from_str::<Value>(v.get()))
        {
            Some(Ok(v)) if v.as_u64() == Some(FORMAT_VERSION) => {}
            Some(Ok(v)) => {
                return Err(format!(
                    "format version {v} is not {FORMAT_VERSION}, the one this release reads"
                ))
            }
            _ => return Err("no \"version\" (a number)".into()),
        }
        let mut rest = String::with_capacity(line.len());
        rest.push('{');
        for (i, (key, value)) in fields.iter().enumerate() {
            if i > 0 {
                rest.push(',');
            }
            rest.push_str(&Value::String(key.clone()).to_string());
            rest.push(':');
            rest.push_str(value.get());
        }
        rest.push('}');
        fn of<T: serde::de::DeserializeOwned>(kind: &str, rest: &str) -> Result<T, String> {
            serde_json::from_str(rest).map_err(|e| format!("a {kind} record: {e}"))
        }
        Ok(match kind.as_str() {
            "team" => Record::Team(of(&kind, &rest)?),
            "agent" => Record::Agent(of(&kind, &rest)?),
            "counter" => Record::Counter(of(&kind, &rest)?),
            "task" => Record::Task(of(&kind, &rest)?),
            "message" => Record::Message(of(&kind, &rest)?),
            "idempotency_key" => Record::IdempotencyKey(of(&kind, &rest)?),
            "event" => Record::Event(of(&kind, &rest)?),
            "memory_change" => Record::MemoryChange(of(&kind, &rest)?),
            "test_run" => Record::TestRun(of(&kind, &rest)?),
            "webhook" => Record::Webhook(of(&kind, &rest)?),
            "settings" => Record::Settings(of(&kind, &rest)?),
            "end" => Record::End(of(&kind, &rest)?),
            other => {
                return Err(format!(
                    "unknown kind {other:?} (known: {})",
                    KINDS.join(", ")
                ))
            }
        })
    }
}

/// A task's status and holder as exported: one in progress is released (back to `pending`,
/// without holder or lease, its attempts kept), since its worker does not move with it.
pub fn exported_claim(
    stored: &str,
    claimed_by: Option<String>,
) -> StoreResult<(TaskStatus, Option<String>)> {
    match TaskStatus::parse(stored) {
        Some(TaskStatus::InProgress) => Ok((TaskStatus::Pending, None)),
        Some(status) => Ok((status, claimed_by)),
        None => Err(StoreError::Internal(format!("stored task status {stored}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_round_trips_with_kind_and_version_first() {
        let line = Record::Event(EventRecord {
            seq: 3,
            kind: "task.created".into(),
            data: json_of(r#"{"b":1,"a":[2]}"#).unwrap(),
            created_at: 7,
        })
        .to_line()
        .unwrap();
        assert_eq!(
            line,
            "{\"kind\":\"event\",\"version\":1,\"seq\":3,\"type\":\"task.created\",\
             \"data\":{\"b\":1,\"a\":[2]},\"createdAt\":7}\n"
        );
        let again = Record::parse(line.trim_end()).unwrap().to_line().unwrap();
        assert_eq!(again, line);
    }

    #[test]
    fn bad_lines_say_what_is_wrong() {
        let err = |l: &str| Record::parse(l).unwrap_err();
        assert!(err(r#"{"kind":"team","version":1,"na"#).contains("not JSON"));
        assert!(err(r#"{"kind":"tusk","version":1}"#).contains("unknown kind"));
        assert!(err(r#"{"kind":"end","version":2,"records":0}"#).contains("version 2"));
        assert!(err(r#"{"kind":"end","version":1,"records":0,"x":1}"#).contains("unknown field"));
    }
}

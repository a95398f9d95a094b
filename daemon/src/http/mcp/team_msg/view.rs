//! How `team_msg` shows huddle's messages: `MSG-<n>` ids from each message's per-team `seq`
//! (so they are unique under any concurrency: the store numbers messages under the team's
//! lock), upstream's message shape, what `delete` and `clear` hid, and the memory change a
//! `state_update` makes.

use huddle_wire::{Memory, Message};
use serde_json::{json, Map, Value};

/// The top-level keys a `state_update` also writes at the root of the shared memory, as the
/// upstream tool promotes them into its team metadata.
pub const TEAM_KEYS: [&str; 5] = [
    "pipeline_mode",
    "pipeline_stages",
    "team_name",
    "task_description",
    "roles",
];

/// Where `team_msg` keeps what `delete` and `clear` hid from its own views (the messages stay
/// in the history, the dashboard and the API).
pub const HIDDEN_KEY: &str = "team_msg";

/// The id of the message with this `seq`: `MSG-001`, `MSG-1234`.
pub fn msg_id(seq: i64) -> String {
    format!("MSG-{seq:03}")
}

/// The `seq` an id names (`MSG-7` and `MSG-007` alike), if it is one.
pub fn seq_of(id: &str) -> Option<i64> {
    let digits = id.trim().strip_prefix("MSG-")?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok().filter(|&n| n > 0)
}

/// Upstream's recipient of everyone is `all`; huddle's is `*`.
pub fn recipient_in(to: &str) -> String {
    if to == "all" {
        "*".into()
    } else {
        to.into()
    }
}

fn recipient_out(to: &str) -> &str {
    if to == "*" {
        "all"
    } else {
        to
    }
}

/// A message as upstream shows it: `{id, ts, from, to, type, summary, data?}`.
pub fn view(m: &Message) -> Value {
    let mut v = json!({
        "id": msg_id(m.seq),
        "ts": m.created_at,
        "from": m.from,
        "to": recipient_out(&m.to),
        "type": m.kind,
        "summary": m.summary,
    });
    if !(m.data.is_null() || m.data.as_object().is_some_and(Map::is_empty)) {
        v["data"] = m.data.clone();
    }
    v
}

/// Upstream's one-line form of a message, as its `list` formats it.
pub fn line(m: &Message) -> String {
    let time = m.created_at.get(11..19).unwrap_or(&m.created_at);
    format!(
        "{} [{time}] {} → {} ({}) {}",
        msg_id(m.seq),
        m.from,
        recipient_out(&m.to),
        m.kind,
        m.summary
    )
}

/// What `delete` and `clear` hid from `team_msg`: every message up to `cleared_through`, and
/// the deleted ids.
#[derive(Debug, Default)]
pub struct Hidden {
    pub cleared_through: i64,
    pub deleted: Vec<i64>,
}

impl Hidden {
    pub fn of(memory: &Memory) -> Hidden {
        let at = &memory.doc[HIDDEN_KEY];
        Hidden {
            cleared_through: at["cleared_through"].as_i64().unwrap_or(0),
            deleted: at["deleted"]
                .as_object()
                .map(|d| d.keys().filter_map(|id| seq_of(id)).collect())
                .unwrap_or_default(),
        }
    }

    pub fn hides(&self, seq: i64) -> bool {
        seq <= self.cleared_through || self.deleted.contains(&seq)
    }
}

/// The RFC 6902 patch a `state_update` from `role` makes, given the document as it is: the
/// role's state at `/role_state/<role>` becomes `{...old, ...data, _updated_at}` (upstream's
/// shallow merge: a key of `data` replaces the old value whole) and each team-level key of
/// `data` is set at the root.
pub fn state_update_ops(doc: &Value, role: &str, data: &Map<String, Value>, now: &str) -> Value {
    let role_path = format!("/role_state/{}", escape(role));
    let mut ops = Vec::new();
    if !doc["role_state"].is_object() {
        ops.push(json!({"op": "add", "path": "/role_state", "value": {}}));
    }
    if !doc["role_state"][role].is_object() {
        ops.push(json!({"op": "add", "path": role_path, "value": {}}));
    }
    for (key, value) in data {
        let path = format!("{role_path}/{}", escape(key));
        ops.push(json!({"op": "add", "path": path, "value": value}));
    }
    let path = format!("{role_path}/_updated_at");
    ops.push(json!({"op": "add", "path": path, "value": now}));
    for key in TEAM_KEYS {
        if let Some(value) = data.get(key) {
            ops.push(json!({"op": "add", "path": format!("/{key}"), "value": value}));
        }
    }
    Value::Array(ops)
}

/// A key as one JSON Pointer token (RFC 6901).
fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_through_seq() {
        assert_eq!(msg_id(7), "MSG-007");
        assert_eq!(msg_id(12345), "MSG-12345");
        assert_eq!(seq_of("MSG-007"), Some(7));
        assert_eq!(seq_of("MSG-7"), Some(7));
        assert_eq!(seq_of("MSG-0"), None);
        assert_eq!(seq_of("MSG-x1"), None);
        assert_eq!(seq_of("7"), None);
    }

    #[test]
    /// As upstream: every key lands in the role's state; team keys also at the root.
    fn a_state_update_replaces_keys_whole_and_promotes_team_keys() {
        let doc = json!({"role_state": {"tester": {"a": {"x": 1, "y": 2}, "b": 1}}});
        let data = json!({"a": {"x": 3}, "pipeline_mode": "full"});
        let ops = state_update_ops(&doc, "tester", data.as_object().unwrap(), "T");
        let mut patched = doc.clone();
        let ops: json_patch::Patch = serde_json::from_value(ops).unwrap();
        json_patch::patch(&mut patched, &ops).unwrap();
        assert_eq!(
            patched,
            json!({"role_state": {"tester": {"a": {"x": 3}, "b": 1, "_updated_at": "T",
                                             "pipeline_mode": "full"}},
                   "pipeline_mode": "full"})
        );
    }

    #[test]
    fn a_first_state_update_creates_the_role_state() {
        let data = json!({"k/1": true});
        let ops = state_update_ops(&json!({}), "a~b", data.as_object().unwrap(), "T");
        let mut patched = json!({});
        let ops: json_patch::Patch = serde_json::from_value(ops).unwrap();
        json_patch::patch(&mut patched, &ops).unwrap();
        assert_eq!(
            patched,
            json!({"role_state": {"a~b": {"k/1": true, "_updated_at": "T"}}})
        );
    }
}

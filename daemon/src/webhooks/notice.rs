//! What a webhook is sent for, and what it says: a payload that Slack's and Discord's incoming
//! webhooks accept as it is (`text`, `content`), with the details under `huddle`.

use huddle_wire::{Event, Message, WebhookTrigger};
use serde_json::{json, Value};

/// Longest `text`/`content` sent (Discord takes 2,000 characters).
const MAX_TEXT_CHARS: usize = 1_900;

/// One thing worth telling a person.
#[derive(Debug, Clone)]
pub struct Notice {
    pub trigger: WebhookTrigger,
    /// `message` or `event`: which stream `seq` is of.
    pub stream: &'static str,
    pub seq: i64,
    pub task_id: Option<String>,
    pub from: Option<String>,
    pub headline: String,
    pub at: String,
}

/// A message is a notice when it asks for a fix, reports a missed quality gate, or says a
/// person rejected a gated task (the daemon's `gate_rejected`, whose summary has the reason).
pub fn from_message(m: &Message) -> Option<Notice> {
    let trigger = match m.kind.as_str() {
        "fix_required" => WebhookTrigger::FixRequired,
        "gate_rejected" => WebhookTrigger::GateRejected,
        "test_result" if m.data["qualityGatePassed"] == json!(false) => WebhookTrigger::GateMissed,
        _ => return None,
    };
    let task_id = m.data["taskId"].as_str().or(m.data["task"].as_str());
    Some(Notice {
        trigger,
        stream: "message",
        seq: m.seq,
        task_id: task_id.map(str::to_string),
        from: Some(m.from.clone()),
        headline: m.summary.clone(),
        at: m.created_at.clone(),
    })
}

/// An event is a notice when a task ended `failed` (its last attempt failed, or its lease
/// expired on the last attempt) — a coordinator setting `failed` by hand is not announced — or
/// when a question for a person was asked (a human gate).
pub fn from_event(e: &Event) -> Option<Notice> {
    if e.kind == "task.created" && e.data["owner"] == json!(crate::store::gates::HUMAN) {
        let id = e.data["id"].as_str().unwrap_or_default();
        let question = e.data["description"]
            .as_str()
            .or(e.data["subject"].as_str());
        let gated = e.data["metadata"]["gate"]["for"]
            .as_str()
            .unwrap_or_default();
        return Some(Notice {
            trigger: WebhookTrigger::NeedsHuman,
            stream: "event",
            seq: e.seq,
            task_id: (!id.is_empty()).then(|| id.to_string()),
            from: e.data["metadata"]["gate"]["askedBy"]
                .as_str()
                .map(str::to_string),
            headline: format!(
                "{id} holds {gated} until {}: {}",
                match e.data["metadata"]["gate"]["kind"].as_str() {
                    Some("approval") => "approved or rejected",
                    _ => "answered",
                },
                question.unwrap_or_default()
            ),
            at: e.created_at.clone(),
        });
    }
    if !matches!(e.kind.as_str(), "task.failed" | "task.expired")
        || e.data["status"] != json!("failed")
    {
        return None;
    }
    let id = e.data["id"].as_str().unwrap_or_default();
    let subject = e.data["subject"].as_str().unwrap_or_default();
    let reason = e.data["failureReason"].as_str().unwrap_or_default();
    let mut headline = format!("{id} failed: {subject}");
    if !reason.is_empty() {
        headline.push_str(&format!(" ({reason})"));
    }
    Some(Notice {
        trigger: WebhookTrigger::TaskFailed,
        stream: "event",
        seq: e.seq,
        task_id: (!id.is_empty()).then(|| id.to_string()),
        from: e.data["owner"].as_str().map(str::to_string),
        headline,
        at: e.created_at.clone(),
    })
}

/// The JSON body sent for a notice.
pub fn payload(team: &str, n: &Notice) -> Value {
    let mut text = format!("[huddle · {team}] {}: {}", n.trigger.as_str(), n.headline);
    if text.chars().count() > MAX_TEXT_CHARS {
        text = text.chars().take(MAX_TEXT_CHARS).collect::<String>() + "…";
    }
    json!({
        "text": text,
        "content": text,
        "huddle": {
            "team": team,
            "trigger": n.trigger,
            "stream": n.stream,
            "seq": n.seq,
            "taskId": n.task_id,
            "from": n.from,
            "summary": n.headline.chars().take(MAX_TEXT_CHARS * 4).collect::<String>(),
            "at": n.at,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(kind: &str, data: Value) -> Message {
        serde_json::from_value(json!({
            "seq": 7, "id": "m", "from": "tester-1", "to": "*", "type": kind,
            "summary": "TEST-001: it broke", "data": data, "createdAt": "2026-01-01T00:00:00Z"
        }))
        .unwrap()
    }

    #[test]
    fn fix_required_and_missed_gates_are_notices_other_messages_are_not() {
        let fix = from_message(&message("fix_required", json!({"taskId": "TEST-001"}))).unwrap();
        assert_eq!(
            (fix.trigger, fix.task_id.as_deref()),
            (WebhookTrigger::FixRequired, Some("TEST-001"))
        );
        let missed = message(
            "test_result",
            json!({"taskId": "TEST-002", "qualityGatePassed": false}),
        );
        assert_eq!(
            from_message(&missed).unwrap().trigger,
            WebhookTrigger::GateMissed
        );
        assert!(
            from_message(&message("test_result", json!({"qualityGatePassed": true}))).is_none()
        );
        assert!(from_message(&message("impl_progress", json!({}))).is_none());
    }

    #[test]
    fn long_text_is_cut_for_chat_services() {
        let n = from_message(&message("fix_required", json!({}))).unwrap();
        let long = Notice {
            headline: "x".repeat(10_000),
            ..n
        };
        let body = payload("alpha", &long);
        assert!(body["content"].as_str().unwrap().chars().count() <= MAX_TEXT_CHARS + 1);
        assert_eq!(body["text"], body["content"]);
    }
}

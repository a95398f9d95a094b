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
    /// For a question: the command that answers it.
    pub answer_with: Option<String>,
}

/// A message is a notice when it asks for a fix, reports a missed quality gate, says a
/// person rejected a gated task (the daemon's `gate_rejected`, whose summary has the reason),
/// or says the team's model budget is nearly or wholly spent (`budget_warning`,
/// `budget_exceeded`, posted by the daemon).
pub fn from_message(m: &Message) -> Option<Notice> {
    let trigger = match m.kind.as_str() {
        "fix_required" => WebhookTrigger::FixRequired,
        "gate_rejected" => WebhookTrigger::GateRejected,
        "budget_warning" => WebhookTrigger::BudgetWarning,
        "budget_exceeded" => WebhookTrigger::BudgetExceeded,
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
        answer_with: None,
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
        let gate = &e.data["metadata"]["gate"];
        let approval = gate["kind"].as_str() == Some("approval");
        let until = if approval {
            "approved or rejected"
        } else {
            "answered"
        };
        let mut headline = match gate["asker"].as_str() {
            Some(holder) => format!("{holder} waits on {id} about {gated} until {until}"),
            None => format!("{id} holds {gated} until {until}"),
        };
        if gate["personOnly"] == json!(true) {
            headline.push_str(" by a lead");
        }
        if let Some(deadline) = gate["deadline"].as_str() {
            let default = gate["onDeadline"].as_str().unwrap_or("reject");
            headline.push_str(&format!(" (at {deadline}: {default} by default)"));
        }
        headline.push_str(&format!(": {}", question.unwrap_or_default()));
        let answer_with = if approval {
            format!("huddle answer {id} --approve (or --reject \"why\")")
        } else {
            format!("huddle answer {id} \"…\"")
        };
        return Some(Notice {
            trigger: WebhookTrigger::NeedsHuman,
            stream: "event",
            seq: e.seq,
            task_id: (!id.is_empty()).then(|| id.to_string()),
            from: gate["askedBy"].as_str().map(str::to_string),
            headline,
            at: e.created_at.clone(),
            answer_with: Some(answer_with),
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
        answer_with: None,
    })
}

/// The JSON body sent for a notice; `public_url` (empty: none) is where the dashboard is, for
/// a link to the task. The command and the link are kept whole when the headline is cut.
pub fn payload(team: &str, n: &Notice, public_url: &str) -> Value {
    let link = dashboard_link(public_url, n.task_id.as_deref());
    let mut tail = String::new();
    if let Some(command) = &n.answer_with {
        tail.push_str(&format!(" · answer: {command}"));
    }
    if let Some(link) = &link {
        tail.push_str(&format!(" · {link}"));
    }
    let mut text = format!("[huddle · {team}] {}: {}", n.trigger.as_str(), n.headline);
    let room = MAX_TEXT_CHARS.saturating_sub(tail.chars().count());
    if text.chars().count() > room {
        text = text.chars().take(room).collect::<String>() + "…";
    }
    text.push_str(&tail);
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
            "answerWith": n.answer_with,
            "link": link,
        }
    })
}

/// The dashboard's page of `task_id` under `public_url`, when both are given and the URL is
/// http(s) (anything else is left out rather than sent as a link).
fn dashboard_link(public_url: &str, task_id: Option<&str>) -> Option<String> {
    let base = public_url.trim().trim_end_matches('/');
    let id = task_id?;
    if !(base.starts_with("https://") || base.starts_with("http://")) {
        return None;
    }
    Some(format!("{base}/#/tasks/{id}"))
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
        let body = payload("alpha", &long, "");
        assert!(body["content"].as_str().unwrap().chars().count() <= MAX_TEXT_CHARS + 1);
        assert_eq!(body["text"], body["content"]);
    }

    fn asked(gate: Value, question: &str) -> Event {
        serde_json::from_value(json!({
            "seq": 3, "type": "task.created", "createdAt": "2026-01-01T00:00:00Z",
            "data": {"id": "HUMAN-001", "owner": "human", "subject": "q", "description": question,
                     "metadata": {"gate": gate}}
        }))
        .unwrap()
    }

    #[test]
    fn a_question_names_its_task_the_command_that_answers_it_and_links_to_it() {
        let gate = json!({"for": "TEST-001", "askedBy": "coord", "kind": "approval",
                          "personOnly": true, "deadline": "2026-12-01T17:00:00.000Z",
                          "onDeadline": "reject"});
        let n = from_event(&asked(gate.clone(), "May the tester change calc.py?")).unwrap();
        let body = payload("qa", &n, "https://huddle.example.com/");
        let text = body["text"].as_str().unwrap();
        assert_eq!(
            text,
            "[huddle · qa] needs_human: HUMAN-001 holds TEST-001 until approved or rejected by a \
             lead (at 2026-12-01T17:00:00.000Z: reject by default): May the tester change \
             calc.py? · answer: huddle answer HUMAN-001 --approve (or --reject \"why\") · \
             https://huddle.example.com/#/tasks/HUMAN-001"
        );
        assert_eq!(
            body["huddle"]["link"],
            "https://huddle.example.com/#/tasks/HUMAN-001"
        );

        // A question too long for a chat message is cut; the command and the link are not.
        let n = from_event(&asked(gate, &"why ".repeat(1_000))).unwrap();
        let body = payload("qa", &n, "https://huddle.example.com");
        let text = body["text"].as_str().unwrap();
        assert!(text.chars().count() <= MAX_TEXT_CHARS + 1, "{}", text.len());
        assert!(
            text.ends_with("--reject \"why\") · https://huddle.example.com/#/tasks/HUMAN-001"),
            "{text}"
        );
        // Without a public address, or with one that is not http(s), no link.
        assert_eq!(payload("qa", &n, "")["huddle"]["link"], Value::Null);
        assert_eq!(payload("qa", &n, "ftp://x")["huddle"]["link"], Value::Null);

        // A holder's question names the holder that waits on it.
        let gate = json!({"for": "TEST-002", "askedBy": "tester-1", "asker": "tester-1",
                          "kind": "question"});
        let n = from_event(&asked(gate, "Drop the legacy table?")).unwrap();
        let text = payload("qa", &n, "")["text"].as_str().unwrap().to_string();
        assert!(
            text.starts_with(
                "[huddle · qa] needs_human: tester-1 waits on HUMAN-001 about TEST-002 until \
                 answered"
            ),
            "{text}"
        );
    }
}

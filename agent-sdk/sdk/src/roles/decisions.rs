//! The decisions a person took before the task was handed out (its `gates`), in words: for the
//! model's prompt, the worker's log and the final report, so the work follows what was decided
//! and the report says what it followed.

use crate::wire::{GateRecord, GateStatus};
use std::fmt::Write as _;

/// One line per answered gate: `HUMAN-001 (approval) "May …?" → approve by dana: "Yes, …"`.
/// Open or withdrawn gates held nothing the worker must follow, so they are left out.
pub fn lines(gates: &[GateRecord]) -> Vec<String> {
    gates
        .iter()
        .filter(|g| g.status == GateStatus::Answered)
        .map(|g| {
            let mut line = format!(
                "{} ({}) \"{}\"",
                g.id,
                g.kind.as_str(),
                one_line(&g.question)
            );
            let _ = write!(
                line,
                " → {} by {}",
                g.decision.map_or("answered", |d| d.as_str()),
                g.answered_by.as_deref().unwrap_or("a person")
            );
            if let Some(answer) = &g.answer {
                let _ = write!(line, ": \"{}\"", one_line(answer));
            }
            line
        })
        .collect()
}

/// The paragraph the task's text gains for the model: what was decided, to be followed.
pub fn for_prompt(gates: &[GateRecord]) -> Option<String> {
    let lines = lines(gates);
    if lines.is_empty() {
        return None;
    }
    let mut out = String::from(
        "A person decided before this task began; follow what they said (their words bind \
         this work):",
    );
    for line in lines {
        let _ = write!(out, "\n- {line}");
    }
    Some(out)
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{Decision, GateKind};

    fn gate(status: GateStatus, decision: Option<Decision>, answer: Option<&str>) -> GateRecord {
        GateRecord {
            id: "HUMAN-001".into(),
            question: "May the tester\nchange calc.py?".into(),
            kind: GateKind::Approval,
            person_only: true,
            deadline: None,
            on_deadline: None,
            status,
            asked_by_holder: None,
            decision,
            answer: answer.map(str::to_string),
            answered_by: Some("dana".into()),
            answered_at: Some("2026-11-29T10:00:00Z".into()),
        }
    }

    #[test]
    fn an_answered_gate_is_one_line_with_the_decision_and_the_words() {
        let text = for_prompt(&[gate(
            GateStatus::Answered,
            Some(Decision::Approve),
            Some("Yes, but leave\nrounding alone."),
        )])
        .unwrap();
        assert!(text.starts_with("A person decided before this task began"));
        assert!(
            text.ends_with(
                "- HUMAN-001 (approval) \"May the tester change calc.py?\" → approve by dana: \
                 \"Yes, but leave rounding alone.\""
            ),
            "{text}"
        );
    }

    #[test]
    fn open_and_withdrawn_gates_add_nothing() {
        assert_eq!(for_prompt(&[]), None);
        assert_eq!(
            for_prompt(&[
                gate(GateStatus::Open, None, None),
                gate(GateStatus::Withdrawn, None, None)
            ]),
            None
        );
    }
}

//! Human gates (coordinator): hold a pending task until a person answers, and answer.

use super::transport::Call;
use super::{Client, Error};
use crate::wire::{AnswerRequest, GateKind, GateRequest, Gated, Task};

impl Client {
    /// `POST …/tasks/{id}/gate`: holds pending task `id` until a person answers `question`
    /// (a `HUMAN-NNN` task owned by `human`, added to its blockers).
    pub async fn gate_task(&self, id: &str, question: &str) -> Result<Gated, Error> {
        let body = GateRequest {
            question: question.to_string(),
            kind: GateKind::Question,
            person_only: false,
            deadline: None,
            on_deadline: None,
        };
        self.gate_task_with(id, &body).await
    }

    /// `POST …/tasks/{id}/gate` with a kind: `approval` asks for approve or reject.
    pub async fn gate_task_with(&self, id: &str, gate: &GateRequest) -> Result<Gated, Error> {
        self.json(Call::post(self.team_url(&["tasks", id, "gate"])?).json(gate)?)
            .await
    }

    /// `POST …/tasks/{id}/answer`: answers question `id`, which releases the task it held.
    pub async fn answer_question(&self, id: &str, answer: &str) -> Result<Task, Error> {
        let body = AnswerRequest {
            answer: Some(answer.to_string()),
            decision: None,
        };
        self.decide(id, &body).await
    }

    /// `POST …/tasks/{id}/answer` with a decision (approve releases, reject cancels the task)
    /// and/or an answer.
    pub async fn decide(&self, id: &str, answer: &AnswerRequest) -> Result<Task, Error> {
        self.json(Call::post(self.team_url(&["tasks", id, "answer"])?).json(answer)?)
            .await
    }
}

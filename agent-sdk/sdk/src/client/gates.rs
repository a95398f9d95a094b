//! Human gates (coordinator): hold a pending task until a person answers, and answer; and a
//! holder's question mid-task (worker): ask, and wait for the decision.

use super::transport::Call;
use super::{Client, Error};
use crate::wire::{AnswerRequest, AskRequest, GateKind, GateRecord, GateRequest, Gated, Me, Task};
use std::time::Duration;

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

    /// `POST …/tasks/{id}/ask`: the holder of task `id` asks a person and keeps the task while
    /// it waits (its lease lasts until the question's deadline).
    pub async fn ask(&self, id: &str, ask: &AskRequest) -> Result<Gated, Error> {
        self.json(Call::post(self.team_url(&["tasks", id, "ask"])?).json(ask)?)
            .await
    }

    /// `GET …/tasks/{question}/decision?waitMs=`: where the question stands, waiting up to
    /// `wait` (at most the daemon's long-poll bound) while it is open.
    pub async fn decision(&self, question: &str, wait: Duration) -> Result<GateRecord, Error> {
        let wait_ms = Some(wait.as_millis() as u64).filter(|ms| *ms > 0);
        let call = Call::get(self.team_url(&["tasks", question, "decision"])?)
            .query("waitMs", wait_ms)
            .retry();
        self.json(call).await
    }

    /// `GET …/me`: who the token is, and the team's question settings in force.
    pub async fn me(&self) -> Result<Me, Error> {
        self.json(Call::get(self.team_url(&["me"])?).retry()).await
    }
}

//! Human gates (coordinator): hold a pending task until a person answers, and answer.

use super::transport::Call;
use super::{Client, Error};
use crate::wire::{AnswerRequest, GateRequest, Gated, Task};

impl Client {
    /// `POST …/tasks/{id}/gate`: holds pending task `id` until a person answers `question`
    /// (a `HUMAN-NNN` task owned by `human`, added to its blockers).
    pub async fn gate_task(&self, id: &str, question: &str) -> Result<Gated, Error> {
        let body = GateRequest {
            question: question.to_string(),
        };
        self.json(Call::post(self.team_url(&["tasks", id, "gate"])?).json(&body)?)
            .await
    }

    /// `POST …/tasks/{id}/answer`: answers question `id`, which releases the task it held.
    pub async fn answer_question(&self, id: &str, answer: &str) -> Result<Task, Error> {
        let body = AnswerRequest {
            answer: answer.to_string(),
        };
        self.json(Call::post(self.team_url(&["tasks", id, "answer"])?).json(&body)?)
            .await
    }
}

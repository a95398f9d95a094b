//! `task_gate` and `task_answer`: human gates as tools, so a coordinating agent can hold a task
//! for a person's answer and relay one, exactly as `POST …/tasks/{id}/gate` and `…/answer` do.

use super::args::Args;
use super::tools::{run, Huddle};
use crate::http::authz::Action;
use crate::http::gates::{answer_question, gate_task};
use axum::http::request::Parts;
use rmcp::handler::server::tool::Extension;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{tool, tool_router, ErrorData};
use schemars::JsonSchema;
use serde::Deserialize;

/// `task_gate`: a pending task and what a person must answer first.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GateArgs {
    /// The id of a pending task to hold, e.g. `TEST-007`.
    pub id: String,
    /// What the person must answer before a worker may claim the task (1–4,000 characters;
    /// its first line becomes the question's subject).
    #[schemars(length(min = 1, max = 4000))]
    pub question: String,
}

/// `task_answer`: a question for a person and its answer.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AnswerArgs {
    /// The question's id, `HUMAN-NNN` (from task_gate, or task_list with `owner: human`).
    pub id: String,
    /// The person's answer (1–4,000 characters); kept as the question's `result.answer`.
    #[schemars(length(min = 1, max = 4000))]
    pub answer: String,
}

#[tool_router(router = gate_router, vis = "pub(super)")]
impl Huddle {
    #[tool(
        description = "Hold a pending task until a person answers `question`: creates the \
        question as task HUMAN-NNN (owned by `human`, which no agent claims) and adds it to the \
        task's blockers, all or nothing. No worker can claim the task until the question is \
        answered (task_answer, the dashboard or the CLI). Answers {\"question\": …, \"task\": …}.",
        annotations(
            title = "Ask a person before a task",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn task_gate(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(args): Parameters<Args<GateArgs>>,
    ) -> Result<CallToolResult, ErrorData> {
        run(
            &parts,
            Action::EditTasks,
            args,
            |caller, args: GateArgs| async move {
                gate_task(&self.state, &caller, &args.id, &args.question).await
            },
        )
        .await
    }

    #[tool(
        description = "Answer a question for a person (HUMAN-NNN) on their behalf: completes \
        it with {\"answer\", \"answeredBy\"} as its result, which releases the task it held \
        (ready once its other blockers are done). Anything but an open question is refused.",
        annotations(
            title = "Answer a person's question",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn task_answer(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(args): Parameters<Args<AnswerArgs>>,
    ) -> Result<CallToolResult, ErrorData> {
        run(
            &parts,
            Action::EditTasks,
            args,
            |caller, args: AnswerArgs| async move {
                answer_question(&self.state, &caller, &args.id, &args.answer).await
            },
        )
        .await
    }
}

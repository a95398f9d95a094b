//! `task_gate` and `task_answer`: human gates as tools, so a coordinating agent can hold a task
//! for a person's answer or decision and relay one, exactly as `POST …/tasks/{id}/gate` and
//! `…/answer` do (the same functions, so the same checks); `task_ask` and `task_decision`: a
//! holder asks a person mid-task and waits, as `POST …/tasks/{id}/ask` and `GET
//! …/tasks/{question}/decision` do.

use super::args::Args;
use super::tools::{run, Huddle};
use crate::http::authz::Action;
use crate::http::error::ApiResult;
use crate::http::gates::{answer_question, gate_task};
use crate::http::holder_questions::{ask_question, wait_decision};
use crate::store::StoreError;
use axum::http::request::Parts;
use huddle_wire::{AnswerRequest, AskRequest, Decision, GateKind, GateRequest};
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
    /// `question` (default: any answer releases the task) or `approval` (the person must
    /// approve, which releases it, or reject, which cancels it).
    #[serde(default)]
    pub kind: GateKind,
    /// Only a person may decide it: a `lead` token. A coordinator — and this session, unless
    /// its token is a lead's — is refused with `person_required`.
    #[serde(default, rename = "personOnly")]
    pub person_only: bool,
    /// When the decision is taken if no one has decided (RFC 3339, in the future, at most a
    /// year ahead): `onDeadline` applies.
    #[serde(default)]
    pub deadline: Option<String>,
    /// The decision the deadline takes: `reject` (the default) or `approve` (not on a
    /// person-only gate).
    #[serde(default, rename = "onDeadline")]
    pub on_deadline: Option<Decision>,
}

/// `task_answer`: a question for a person and its answer.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AnswerArgs {
    /// The question's id, `HUMAN-NNN` (from task_gate, or task_list with `owner: human`).
    pub id: String,
    /// The person's words (1–4,000 characters); kept as the question's `result.answer`, and a
    /// rejected task's failure reason. Alone, it answers a `question` gate.
    #[schemars(length(min = 1, max = 4000))]
    #[serde(default)]
    pub answer: Option<String>,
    /// `approve` releases the task, `reject` cancels it for good; required by an `approval`
    /// gate.
    #[serde(default)]
    pub decision: Option<Decision>,
}

/// `task_ask`: a task the caller holds and what a person must answer before it goes on.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AskArgs {
    /// The id of a task this agent holds (in progress), e.g. `TEST-007`.
    pub id: String,
    /// What the person must answer (1–4,000 characters; its first line becomes the subject).
    #[schemars(length(min = 1, max = 4000))]
    pub question: String,
    /// `question` (default: any answer) or `approval` (approve or reject).
    #[serde(default)]
    pub kind: GateKind,
    /// Only a person (a `lead` token) may decide it.
    #[serde(default, rename = "personOnly")]
    pub person_only: bool,
    /// When `onDeadline` is taken if no one decided (RFC 3339; at most the team's wait ahead,
    /// which is also the default: see whoami's `questions.maxWaitMinutes`).
    #[serde(default)]
    pub deadline: Option<String>,
    /// The decision the deadline takes: `reject` (default) or `approve` (not person-only).
    #[serde(default, rename = "onDeadline")]
    pub on_deadline: Option<Decision>,
    /// The lease (ms) the task gets back once decided; default: the daemon's default lease.
    #[serde(default, rename = "leaseMs")]
    pub lease_ms: Option<u64>,
}

/// `task_decision`: a question and how long to wait for its decision.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DecisionArgs {
    /// The question's id, `HUMAN-NNN` (from task_ask).
    pub id: String,
    /// How long to wait while it is open (ms; at most whoami's `maxWaitMs`; default 0).
    #[serde(default, rename = "waitMs")]
    pub wait_ms: Option<u64>,
}

/// `waitMs` within the MCP long-poll bound, as `task_claim` checks it.
fn mcp_wait(wait_ms: Option<u64>, max: u64) -> ApiResult<u64> {
    let wait = wait_ms.unwrap_or(0);
    if wait > max {
        return Err(StoreError::invalid(
            "waitMs",
            format!("`waitMs` must be at most {max}, got {wait}"),
        )
        .into());
    }
    Ok(wait)
}

#[tool_router(router = gate_router, vis = "pub(super)")]
impl Huddle {
    #[tool(
        description = "Hold a pending task until a person answers `question` (kind \
        `question`, the default) or approves/rejects it (kind `approval`): creates the \
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
                let gate = GateRequest {
                    question: args.question,
                    kind: args.kind,
                    person_only: args.person_only,
                    deadline: args.deadline,
                    on_deadline: args.on_deadline,
                };
                gate_task(&self.state, &caller, &args.id, &gate).await
            },
        )
        .await
    }

    #[tool(
        description = "Answer a question for a person (HUMAN-NNN) on their behalf with a \
        `decision` (approve|reject) and/or an `answer`: completes it with {\"answer\", \
        \"answeredBy\", \"decision\"} as its result. approve (or an answer alone, on a \
        `question` gate) releases the task it held; reject cancels that task for good, with the \
        answer as its reason, and tells the coordinators. An approval gate needs `decision`. \
        Refused: anything but an open question, a withdrawn one, a task edited since asked.",
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
                let answer = AnswerRequest {
                    answer: args.answer,
                    decision: args.decision,
                };
                answer_question(&self.state, &caller, &args.id, &answer).await
            },
        )
        .await
    }

    #[tool(
        description = "Ask a person about a task you hold (in progress) and keep it while you \
        wait: creates the question as task HUMAN-NNN, blocking the task, and keeps your lease \
        until the question's deadline (default: the team's wait, then `onDeadline`, `reject` by \
        default). Your heartbeats meanwhile never shorten it and no one else can claim the task. The \
        decision neither releases nor cancels the task: read it with task_decision (or the \
        `question_answered` message in your inbox) and go on. One open question per task. \
        Answers {\"question\": …, \"task\": …}.",
        annotations(
            title = "Ask a person and wait",
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn task_ask(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(args): Parameters<Args<AskArgs>>,
    ) -> Result<CallToolResult, ErrorData> {
        run(
            &parts,
            Action::ActOnClaims,
            args,
            |caller, args: AskArgs| async move {
                let ask = AskRequest {
                    question: args.question,
                    kind: args.kind,
                    person_only: args.person_only,
                    deadline: args.deadline,
                    on_deadline: args.on_deadline,
                    lease_ms: args.lease_ms,
                };
                ask_question(&self.state, &caller, &args.id, &ask).await
            },
        )
        .await
    }

    #[tool(
        description = "Where a question for a person (HUMAN-NNN) stands: `status` open, \
        answered (with `decision`, `answer`, `answeredBy`, `answeredAt`) or withdrawn. With \
        `waitMs`, waits while it is open (call again until it is not).",
        annotations(
            title = "Wait for a person's decision",
            read_only_hint = true,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn task_decision(
        &self,
        Extension(parts): Extension<Parts>,
        Parameters(args): Parameters<Args<DecisionArgs>>,
    ) -> Result<CallToolResult, ErrorData> {
        run(
            &parts,
            Action::ReadTasks,
            args,
            |caller, args: DecisionArgs| async move {
                let wait = mcp_wait(args.wait_ms, self.state.settings.tasks.mcp_max_wait_ms)?;
                wait_decision(&self.state, &caller, &args.id, wait).await
            },
        )
        .await
    }
}

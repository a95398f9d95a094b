//! The model-spending ledger over HTTP (issue 51): a worker *reserves* each model call before
//! making it (`POST …/spend/reserve`, refused with 409 `budget_exceeded` once the budget is
//! spent) and *settles* it with the tokens it used (`POST …/spend/{id}/settle`); `GET …/spend`
//! adds the ledger up by task, agent, model and day. A reservation or settlement that takes
//! the team past the budget's warning threshold, or to its limit, posts `budget_warning` or
//! `budget_exceeded` to the coordinators (which fires the webhooks of those triggers).

use super::authz::{act, Action, Can};
use super::error::{ApiError, ApiResult};
use super::extract::{ApiJson, ApiQuery};
use super::identity::Principal;
use super::openapi_types::*;
use super::teams::team_for;
use super::AppState;
use crate::store::rules::spend::{BudgetNotice, NoticeKind, Reserved};
use crate::store::{Caller, StoreError};
use axum::extract::{Path, RawPathParams, State};
use axum::http::StatusCode;
use axum::Json;
use huddle_wire::{PostMessage, ReserveSpend, Role, SettleSpend, SpendCall, SpendReport};
use serde::Deserialize;
use utoipa::IntoParams;

/// `{team}` and a spend call's `{id}`.
#[derive(IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)] // described in the document, never built
pub struct SpendCallPath {
    /// The team's name.
    #[param(pattern = "^[a-z0-9][a-z0-9_-]{0,62}$", example = "qa")]
    team: String,
    /// The reservation's id.
    #[param(example = 7)]
    id: i64,
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct SpendQuery {
    /// Only this task's calls (`TEST-001`).
    #[param(pattern = "^[A-Z][A-Z0-9_]{0,31}-[0-9]{1,9}$")]
    task: Option<String>,
}

/// Reserves one model call for the caller (before it is made).
#[utoipa::path(
    post,
    path = "/v1/teams/{team}/spend/reserve",
    operation_id = "reserveSpend",
    tag = "spend",
    params(TeamPath),
    request_body = ReserveSpend,
    responses(
        (status = 201, description = "The reservation: make the call, then settle it", body = SpendCall),
        (status = 409, response = Conflict),
        (status = 400, response = BadRequest),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 404, response = NotFound),
        (status = 413, response = TooLarge),
        (status = 429, response = TooManyRequests),
        (status = 500, response = Internal),
        (status = 503, response = Unavailable),
    )
)]
pub async fn reserve(
    State(state): State<AppState>,
    Can(caller, _): Can<act::RecordSpend>,
    ApiJson(body): ApiJson<ReserveSpend>,
) -> ApiResult<(StatusCode, Json<SpendCall>)> {
    let call = reserve_call(&state, &caller, body).await?;
    Ok((StatusCode::CREATED, Json(call)))
}

/// Reserves a call as `caller` (HTTP and the `spend_reserve` MCP tool).
pub async fn reserve_call(
    state: &AppState,
    caller: &Caller,
    call: ReserveSpend,
) -> ApiResult<SpendCall> {
    match state.store.reserve_spend(caller, call).await? {
        Reserved::Granted(call) => {
            crate::metrics::spend_reserved(true);
            Ok(call)
        }
        Reserved::Refused(refusal, notice) => {
            crate::metrics::spend_reserved(false);
            if let Some(n) = notice {
                tell_coordinators(state, caller, &n).await;
            }
            Err(refusal.into())
        }
    }
}

/// Records the tokens the caller's reserved call used.
#[utoipa::path(
    post,
    path = "/v1/teams/{team}/spend/{id}/settle",
    operation_id = "settleSpend",
    tag = "spend",
    params(SpendCallPath),
    request_body = SettleSpend,
    responses(
        (status = 200, description = "The settled call, priced", body = SpendCall),
        (status = 409, response = Conflict),
        (status = 400, response = BadRequest),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 404, response = NotFound),
        (status = 413, response = TooLarge),
        (status = 429, response = TooManyRequests),
        (status = 500, response = Internal),
        (status = 503, response = Unavailable),
    )
)]
pub async fn settle(
    State(state): State<AppState>,
    Can(caller, _): Can<act::RecordSpend>,
    Path((_, id)): Path<(String, String)>,
    ApiJson(body): ApiJson<SettleSpend>,
) -> ApiResult<Json<SpendCall>> {
    // Any id that is no number names no call: 404, as an unknown one.
    let id: i64 = id
        .parse()
        .map_err(|_| ApiError::from(StoreError::not_found(format!("spend call {id}"))))?;
    Ok(Json(settle_call(&state, &caller, id, body).await?))
}

/// Settles a call as `caller` (HTTP and the `spend_settle` MCP tool).
pub async fn settle_call(
    state: &AppState,
    caller: &Caller,
    id: i64,
    tokens: SettleSpend,
) -> ApiResult<SpendCall> {
    let settled = state.store.settle_spend(caller, id, tokens).await?;
    crate::metrics::spend_settled(&settled.call);
    if let Some(n) = &settled.notice {
        tell_coordinators(state, caller, n).await;
    }
    Ok(settled.call)
}

/// The team's spending: totals, and by task, agent, model and day.
#[utoipa::path(
    get,
    path = "/v1/teams/{team}/spend",
    operation_id = "spendReport",
    tag = "spend",
    params(TeamPath, SpendQuery),
    responses(
        (status = 200, description = "The totals", body = SpendReport),
        QueryErrors,
    )
)]
pub async fn report(
    State(state): State<AppState>,
    params: RawPathParams,
    principal: Principal,
    ApiQuery(q): ApiQuery<SpendQuery>,
) -> ApiResult<Json<SpendReport>> {
    let team_id = team_for(&state, &principal, &params, Action::ReadSpend).await?;
    Ok(Json(spend_report(&state, team_id, q.task).await?))
}

/// The report (HTTP and the `spend_report` MCP tool).
pub async fn spend_report(
    state: &AppState,
    team_id: i64,
    task: Option<String>,
) -> ApiResult<SpendReport> {
    Ok(state.store.spend_report(team_id, task).await?)
}

/// Posts the notice to the coordinators as `caller` (whose call crossed the line). The call
/// stands whether or not the message is stored (a full message quota, say): it is logged.
async fn tell_coordinators(state: &AppState, caller: &Caller, n: &BudgetNotice) {
    let limits = [
        n.budget
            .max_tokens
            .map(|m| format!("{} of {m} tokens", n.spent.tokens)),
        n.budget
            .max_cost_micros
            .map(|m| format!("{} of {m} cost micro-units", n.spent.cost_micros)),
    ];
    let used = limits.into_iter().flatten().collect::<Vec<_>>().join(", ");
    let summary = match n.kind {
        NoticeKind::Warning => format!(
            "model budget nearly spent ({used}, period {}): calls are refused at the limit",
            n.period
        ),
        NoticeKind::Exhausted => format!(
            "model budget spent ({used}, period {}): model calls and model-calling claims are \
             refused until it is raised",
            n.period
        ),
    };
    let post = PostMessage {
        to: Role::Coordinator.as_str().to_string(),
        kind: n.kind.message_type().to_string(),
        summary,
        data: serde_json::json!({
            "task": n.task, "period": n.period, "spent": n.spent,
            "maxTokens": n.budget.max_tokens, "maxCostMicros": n.budget.max_cost_micros,
        }),
    };
    match state.store.post_message(caller, post, None).await {
        Ok(_) => crate::metrics::messages_posted(1),
        Err(e) => tracing::warn!(error = %e, "the budget notice could not be posted"),
    }
}

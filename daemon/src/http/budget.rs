//! `GET`/`PUT /v1/teams/{team}/budget`: the team's model budget (issue 51). A coordinator, a
//! lead or the admin sets it, replaced whole and versioned (`If-Match`); every agent of the
//! team may read it. Also the claim's budget check: a claim that declares a model does not
//! take model-calling tasks while the budget is spent.

use super::authz::Action;
use super::error::{ApiError, ApiResult};
use super::extract::{ApiJson, IfMatch};
use super::identity::Principal;
use super::openapi_types::*;
use super::teams::team_for;
use super::AppState;
use crate::store::Caller;
use axum::extract::{RawPathParams, State};
use axum::http::{header, HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use axum::Json;
use huddle_wire::{codes, BudgetSettings, BudgetView};

/// The id prefixes whose tasks call a model when their worker declares one.
pub const MODEL_PREFIXES: [&str; 2] = ["TEST", "QARUN"];

fn budget_response(view: BudgetView) -> Response {
    let mut headers = HeaderMap::new();
    if let Ok(v) = HeaderValue::from_str(&format!("\"{}\"", view.version)) {
        headers.insert(header::ETAG, v);
    }
    (headers, Json(view)).into_response()
}

/// The budget, what the team spent in its period and whether model calls are refused now.
#[utoipa::path(
    get,
    path = "/v1/teams/{team}/budget",
    operation_id = "getBudget",
    tag = "spend",
    params(TeamPath),
    responses(
        (status = 200, description = "The budget and the period's spending", body = BudgetView,
            headers(("ETag" = String, description = "The budget's version, for `If-Match`"))),
        ReadErrors,
    )
)]
pub async fn get(
    State(state): State<AppState>,
    params: RawPathParams,
    principal: Principal,
) -> ApiResult<Response> {
    let team_id = team_for(&state, &principal, &params, Action::ReadSpend).await?;
    Ok(budget_response(budget_of(&state, team_id).await?))
}

/// The budget's view (HTTP and the `budget_get` MCP tool).
pub async fn budget_of(state: &AppState, team_id: i64) -> ApiResult<BudgetView> {
    Ok(state.store.budget(team_id).await?)
}

/// Replaces the budget (limits absent or `null`: none). A raised budget applies to the next
/// reservation and claim: work that was refused resumes.
#[utoipa::path(
    put,
    path = "/v1/teams/{team}/budget",
    operation_id = "putBudget",
    tag = "spend",
    params(TeamPath, IfMatchHeader),
    request_body = BudgetSettings,
    responses(
        (status = 200, description = "The new budget and the period's spending", body = BudgetView,
            headers(("ETag" = String, description = "The budget's new version"))),
        (status = 400, response = BadRequest),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 404, response = NotFound),
        (status = 412, response = StaleVersion),
        (status = 413, response = TooLarge),
        (status = 429, response = TooManyRequests),
        (status = 500, response = Internal),
        (status = 503, response = Unavailable),
    )
)]
pub async fn put(
    State(state): State<AppState>,
    params: RawPathParams,
    principal: Principal,
    IfMatch(if_match): IfMatch,
    ApiJson(body): ApiJson<BudgetSettings>,
) -> ApiResult<Response> {
    let team_id = team_for(&state, &principal, &params, Action::ManageBudget).await?;
    let by = match &principal {
        Principal::Admin => "admin".to_string(),
        Principal::Agent(c) => c.agent.clone(),
    };
    Ok(budget_response(
        set_budget(&state, team_id, &by, if_match, body).await?,
    ))
}

/// Sets the budget as `by` (HTTP and the `budget_set` MCP tool).
pub async fn set_budget(
    state: &AppState,
    team_id: i64,
    by: &str,
    if_match: Option<i64>,
    budget: BudgetSettings,
) -> ApiResult<BudgetView> {
    Ok(state
        .store
        .set_budget(team_id, by, if_match, budget)
        .await?)
}

/// The prefixes a claim may take under the budget. Only a claim that declares a model (and
/// asks for a model-calling prefix) reads the budget, so other claims cost nothing more;
/// while it is spent the model-calling prefixes are dropped, and a claim left with none is
/// refused with `budget_exceeded` (its tasks stay ready).
pub async fn claim_prefixes(
    state: &AppState,
    caller: &Caller,
    model: Option<&str>,
    prefixes: Vec<String>,
) -> ApiResult<Vec<String>> {
    let calls_model = |p: &String| MODEL_PREFIXES.contains(&p.as_str());
    if model.is_none() || !prefixes.iter().any(calls_model) {
        return Ok(prefixes);
    }
    if !state.store.budget_exhausted(caller.team_id).await? {
        return Ok(prefixes);
    }
    let left: Vec<String> = prefixes.into_iter().filter(|p| !calls_model(p)).collect();
    if left.is_empty() {
        return Err(ApiError::new(
            axum::http::StatusCode::CONFLICT,
            codes::BUDGET_EXCEEDED,
            "the team's model budget is spent: model-calling tasks are not claimed until it \
             is raised (PUT /v1/teams/{team}/budget) or the next period begins",
        ));
    }
    Ok(left)
}

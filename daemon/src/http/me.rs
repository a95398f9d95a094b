//! `GET …/me`: the caller's own name and role, so a client such as the dashboard offers only
//! the actions the role may take (the server still decides every request).

use super::authz::{act, Can};
use super::error::ApiResult;
use super::openapi_types::*;
use super::AppState;
use crate::store::Caller;
use axum::extract::State;
use axum::Json;
use huddle_wire::{Me, TeamQuestions};

/// Who the token belongs to, and how the team's workers ask a person mid-task (the wait in
/// force and the built-in tester's setting). Any agent of the team may ask (as it may list
/// the agents).
#[utoipa::path(
    get,
    path = "/v1/teams/{team}/me",
    operation_id = "whoAmI",
    tag = "teams",
    params(TeamPath),
    responses(
        (status = 200, description = "The caller's name and role", body = Me),
        ReadErrors,
    )
)]
pub async fn me(
    State(state): State<AppState>,
    Can(caller, _): Can<act::ListAgents>,
) -> ApiResult<Json<Me>> {
    Ok(Json(who_am_i(&state, &caller).await?))
}

/// The caller's name and role, and the team's question settings in force (HTTP, and the core
/// of MCP's `whoami`).
pub async fn who_am_i(state: &AppState, caller: &Caller) -> ApiResult<Me> {
    let (settings, _) = state.store.team_settings(caller.team_id).await?;
    let max_wait = (settings.questions.max_wait_minutes)
        .unwrap_or(state.settings.tasks.max_question_wait_minutes);
    Ok(Me {
        name: caller.agent.clone(),
        role: caller.role,
        questions: TeamQuestions {
            max_wait_minutes: Some(max_wait),
            ask_below_gate: settings.questions.ask_below_gate,
        },
    })
}

//! `GET`/`PUT /v1/teams/{team}/settings` (admin token): a team's quota and retention
//! overrides, the quotas in force, and what the team stores now (the maintained counters).

use super::authz::Action;
use super::error::ApiResult;
use super::extract::ApiJson;
use super::identity::Principal;
use super::openapi_types::*;
use super::teams::team_for;
use super::AppState;
use crate::store::quotas::effective;
use axum::extract::{RawPathParams, State};
use axum::Json;
use huddle_wire::{TeamSettings, TeamSettingsView};

/// The team's overrides, the quotas in force and its current use.
#[utoipa::path(
    get,
    path = "/v1/teams/{team}/settings",
    operation_id = "getTeamSettings",
    tag = "teams",
    params(TeamPath),
    responses(
        (status = 200, description = "The team's settings and use", body = TeamSettingsView),
        ReadErrors,
    )
)]
pub async fn get(
    State(state): State<AppState>,
    params: RawPathParams,
    principal: Principal,
) -> ApiResult<Json<TeamSettingsView>> {
    let team_id = team_for(&state, &principal, &params, Action::TeamSettings).await?;
    Ok(Json(view(&state, team_id).await?))
}

/// Replaces the team's overrides (absent or `null`: the configured default; `0`: none / keep
/// all). Quotas apply to the next write; retention to the next sweep round.
#[utoipa::path(
    put,
    path = "/v1/teams/{team}/settings",
    operation_id = "putTeamSettings",
    tag = "teams",
    params(TeamPath),
    request_body = TeamSettings,
    responses(
        (status = 200, description = "The team's settings and use", body = TeamSettingsView),
        WriteErrors,
    )
)]
pub async fn put(
    State(state): State<AppState>,
    params: RawPathParams,
    principal: Principal,
    ApiJson(body): ApiJson<TeamSettings>,
) -> ApiResult<Json<TeamSettingsView>> {
    let team_id = team_for(&state, &principal, &params, Action::TeamSettings).await?;
    state.store.set_team_settings(team_id, body).await?;
    Ok(Json(view(&state, team_id).await?))
}

async fn view(state: &AppState, team_id: i64) -> ApiResult<TeamSettingsView> {
    let (settings, usage) = state.store.team_settings(team_id).await?;
    let quotas = effective(&state.settings.limits, &settings).to_wire();
    Ok(TeamSettingsView {
        quotas: settings.quotas,
        retention: settings.retention,
        questions: settings.questions,
        effective_quotas: quotas,
        usage,
    })
}

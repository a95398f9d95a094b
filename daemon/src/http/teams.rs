//! Teams and agents: the admin creates teams; the admin or a team's coordinator adds agents.

use super::error::{ApiError, ApiResult};
use super::extract::{path_team, ApiJson, Principal};
use super::AppState;
use crate::identity::{hash_token, new_token};
use axum::extract::{RawPathParams, State};
use axum::http::StatusCode;
use axum::Json;
use huddle_sdk::wire::{AgentList, CreateAgent, CreateTeam, CreatedAgent, Role, Team};

#[tracing::instrument(skip_all)]
pub async fn create_team(
    State(state): State<AppState>,
    principal: Principal,
    ApiJson(body): ApiJson<CreateTeam>,
) -> ApiResult<(StatusCode, Json<Team>)> {
    if !matches!(principal, Principal::Admin) {
        return Err(ApiError::forbidden("only the admin token may create teams"));
    }
    Ok((
        StatusCode::CREATED,
        Json(state.store.create_team(&body.name).await?),
    ))
}

/// Resolves the path's team for the admin, or checks an agent belongs to it (404 otherwise).
async fn team_for(
    state: &AppState,
    principal: &Principal,
    params: &RawPathParams,
) -> ApiResult<i64> {
    let team = path_team(params).unwrap_or_default();
    match principal {
        Principal::Admin => Ok(state.store.team_id(team).await?),
        Principal::Agent(c) if c.team == team => Ok(c.team_id),
        Principal::Agent(_) => Err(ApiError::not_found(format!("team {team} not found"))),
    }
}

#[tracing::instrument(skip_all)]
pub async fn create_agent(
    State(state): State<AppState>,
    params: RawPathParams,
    principal: Principal,
    ApiJson(body): ApiJson<CreateAgent>,
) -> ApiResult<(StatusCode, Json<CreatedAgent>)> {
    let team_id = team_for(&state, &principal, &params).await?;
    if let Principal::Agent(c) = &principal {
        if c.role != Role::Coordinator {
            return Err(ApiError::forbidden(
                "only the admin or a coordinator may add agents",
            ));
        }
    }
    let token = new_token();
    let agent = state
        .store
        .create_agent(team_id, &body.name, body.role, &hash_token(&token))
        .await?;
    Ok((
        StatusCode::CREATED,
        Json(CreatedAgent {
            name: agent.name,
            role: agent.role,
            token,
        }),
    ))
}

pub async fn list_agents(
    State(state): State<AppState>,
    params: RawPathParams,
    principal: Principal,
) -> ApiResult<Json<AgentList>> {
    let team_id = team_for(&state, &principal, &params).await?;
    Ok(Json(AgentList {
        agents: state.store.list_agents(team_id).await?,
    }))
}

//! Teams and agents: the admin creates teams; the admin or a team's coordinator adds, revokes
//! and rotates agents.

use super::authz::{allowed, refuse, Action};
use super::error::{ApiError, ApiResult};
use super::extract::{path_team, ApiJson};
use super::identity::Principal;
use super::AppState;
use crate::identity::{hash_token, new_token};
use axum::extract::{Path, RawPathParams, State};
use axum::http::StatusCode;
use axum::Json;
use huddle_sdk::wire::{Agent, AgentList, CreateAgent, CreateTeam, CreatedAgent, Team};

#[tracing::instrument(skip_all)]
pub async fn create_team(
    State(state): State<AppState>,
    principal: Principal,
    ApiJson(body): ApiJson<CreateTeam>,
) -> ApiResult<(StatusCode, Json<Team>)> {
    check(&principal, Action::CreateTeam)?;
    Ok((
        StatusCode::CREATED,
        Json(state.store.create_team(&body.name).await?),
    ))
}

fn check(principal: &Principal, action: Action) -> ApiResult<()> {
    let role = match principal {
        Principal::Admin => None,
        Principal::Agent(c) => Some(c.role),
    };
    if allowed(role, action) {
        Ok(())
    } else {
        Err(refuse(role, action))
    }
}

/// Resolves the path's team for the admin, or checks an agent belongs to it (404 otherwise),
/// then checks the action is allowed.
async fn team_for(
    state: &AppState,
    principal: &Principal,
    params: &RawPathParams,
    action: Action,
) -> ApiResult<i64> {
    let team = path_team(params).unwrap_or_default();
    let team_id = match principal {
        Principal::Admin => state.store.team_id(team).await?,
        Principal::Agent(c) if c.team == team => c.team_id,
        Principal::Agent(_) => return Err(ApiError::not_found(format!("team {team} not found"))),
    };
    check(principal, action)?;
    Ok(team_id)
}

#[tracing::instrument(skip_all)]
pub async fn create_agent(
    State(state): State<AppState>,
    params: RawPathParams,
    principal: Principal,
    ApiJson(body): ApiJson<CreateAgent>,
) -> ApiResult<(StatusCode, Json<CreatedAgent>)> {
    let team_id = team_for(&state, &principal, &params, Action::ManageAgents).await?;
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
    let team_id = team_for(&state, &principal, &params, Action::ListAgents).await?;
    Ok(Json(AgentList {
        agents: state.store.list_agents(team_id).await?,
    }))
}

/// Revokes the agent's token at once: later requests get 401 and its open streams end.
#[tracing::instrument(skip_all, fields(agent = %name))]
pub async fn revoke_agent(
    State(state): State<AppState>,
    params: RawPathParams,
    principal: Principal,
    Path((_, name)): Path<(String, String)>,
) -> ApiResult<Json<Agent>> {
    let team_id = team_for(&state, &principal, &params, Action::ManageAgents).await?;
    let (agent, old_hash) = state.store.set_agent_token(team_id, &name, None).await?;
    state.auth.forget(&old_hash);
    state.hub.revoke(team_id, &name);
    Ok(Json(agent))
}

/// Replaces the agent's token: the old one stops working at once; the new one is shown once.
#[tracing::instrument(skip_all, fields(agent = %name))]
pub async fn rotate_agent(
    State(state): State<AppState>,
    params: RawPathParams,
    principal: Principal,
    Path((_, name)): Path<(String, String)>,
) -> ApiResult<Json<CreatedAgent>> {
    let team_id = team_for(&state, &principal, &params, Action::ManageAgents).await?;
    let token = new_token();
    let (agent, old_hash) = state
        .store
        .set_agent_token(team_id, &name, Some(&hash_token(&token)))
        .await?;
    state.auth.forget(&old_hash);
    state.hub.revoke(team_id, &name);
    Ok(Json(CreatedAgent {
        name: agent.name,
        role: agent.role,
        token,
    }))
}

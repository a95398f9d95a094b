//! Teams and agents: the admin creates teams; the admin or a team's coordinator adds, revokes
//! and rotates agents.

use super::authz::{permit_principal, Action};
use super::error::{ApiError, ApiResult};
use super::extract::{path_team, ApiJson};
use super::identity::Principal;
use super::openapi_types::*;
use super::AppState;
use crate::identity::{hash_token, new_token};
use axum::extract::{FromRequestParts, Path, RawPathParams, State};
use axum::http::request::Parts;
use axum::http::StatusCode;
use axum::Json;
use huddle_wire::{Agent, AgentList, CreateAgent, CreateTeam, CreatedAgent, Role, Team, TeamList};

/// Creates a team (admin token only).
#[utoipa::path(
    post,
    path = "/v1/teams",
    operation_id = "createTeam",
    tag = "teams",
    request_body = CreateTeam,
    responses(
        (status = 201, description = "The team", body = Team),
        (status = 400, response = BadRequest),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 409, response = Conflict),
        (status = 413, response = TooLarge),
        (status = 429, response = TooManyRequests),
        (status = 500, response = Internal),
        (status = 503, response = Unavailable),
    )
)]
pub async fn create_team(
    State(state): State<AppState>,
    principal: Principal,
    ApiJson(body): ApiJson<CreateTeam>,
) -> ApiResult<(StatusCode, Json<Team>)> {
    permit_principal(&principal, Action::CreateTeam)?;
    Ok((
        StatusCode::CREATED,
        Json(state.store.create_team(&body.name).await?),
    ))
}

/// Every team, by name (admin token only: an agent sees its own team and nothing else).
#[utoipa::path(
    get,
    path = "/v1/teams",
    operation_id = "listTeams",
    tag = "teams",
    responses(
        (status = 200, description = "Every team", body = TeamList),
        (status = 401, response = Unauthorized),
        (status = 403, response = Forbidden),
        (status = 429, response = TooManyRequests),
        (status = 500, response = Internal),
        (status = 503, response = Unavailable),
    )
)]
pub async fn list_teams(
    State(state): State<AppState>,
    principal: Principal,
) -> ApiResult<Json<TeamList>> {
    permit_principal(&principal, Action::ListTeams)?;
    Ok(Json(TeamList {
        teams: state.store.list_teams().await?,
    }))
}

/// Resolves the path's team for the admin, or checks an agent belongs to it (404 otherwise),
/// then checks the action is allowed.
pub(super) async fn team_for(
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
    permit_principal(principal, action)?;
    Ok(team_id)
}

/// The path's team, which the caller may manage agents of, and the caller's role (`None`: the
/// admin token). An extractor, so another team's token gets 404 before the body is read.
pub struct ManagedTeam(i64, Option<Role>);

impl FromRequestParts<AppState> for ManagedTeam {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let params = RawPathParams::from_request_parts(parts, state)
            .await
            .map_err(|_| ApiError::not_found("no such route"))?;
        let principal = Principal::from_request_parts(parts, state).await?;
        let team_id = team_for(state, &principal, &params, Action::ManageAgents).await?;
        Ok(ManagedTeam(team_id, role_of(&principal)))
    }
}

fn role_of(principal: &Principal) -> Option<Role> {
    match principal {
        Principal::Admin => None,
        Principal::Agent(c) => Some(c.role),
    }
}

/// A lead's token is a person's: it decides person-only gates. So only the admin token or
/// another lead adds, rotates or revokes one; a coordinator (an AI, perhaps) that could would
/// mint itself a person's token.
fn check_manages(by: Option<Role>, target: Role) -> ApiResult<()> {
    if target != Role::Lead || matches!(by, None | Some(Role::Lead)) {
        return Ok(());
    }
    Err(ApiError::forbidden(
        "only the admin token or a lead adds, rotates or revokes a lead: a lead's token is a \
         person's",
    ))
}

/// Refuses to rotate or revoke agent `name` when it is a lead and the caller may not manage
/// leads; an unknown name is left to the store's 404.
async fn check_manages_agent(
    state: &AppState,
    team_id: i64,
    by: Option<Role>,
    name: &str,
) -> ApiResult<()> {
    if matches!(by, None | Some(Role::Lead)) {
        return Ok(());
    }
    let agents = state.store.list_agents(team_id).await?;
    match agents.iter().find(|a| a.name == name) {
        Some(agent) => check_manages(by, agent.role),
        None => Ok(()),
    }
}

/// Adds an agent; the answer is the only time its token is shown.
#[utoipa::path(
    post,
    path = "/v1/teams/{team}/agents",
    operation_id = "createAgent",
    tag = "teams",
    params(TeamPath),
    request_body = CreateAgent,
    responses(
        (status = 201, description = "The agent with its token", body = CreatedAgent),
        WriteErrors,
    )
)]
pub async fn create_agent(
    State(state): State<AppState>,
    ManagedTeam(team_id, by): ManagedTeam,
    ApiJson(body): ApiJson<CreateAgent>,
) -> ApiResult<(StatusCode, Json<CreatedAgent>)> {
    check_manages(by, body.role)?;
    if body.name == crate::store::gates::HUMAN {
        return Err(ApiError::bad_request(
            "name",
            "the name \"human\" is reserved: questions for a person are owned by it",
        ));
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

/// The team's agents (never their tokens).
#[utoipa::path(
    get,
    path = "/v1/teams/{team}/agents",
    operation_id = "listAgents",
    tag = "teams",
    params(TeamPath),
    responses(
        (status = 200, description = "The agents", body = AgentList),
        (status = 401, response = Unauthorized),
        (status = 404, response = NotFound),
        (status = 429, response = TooManyRequests),
        (status = 500, response = Internal),
        (status = 503, response = Unavailable),
    )
)]
pub async fn list_agents(
    State(state): State<AppState>,
    params: RawPathParams,
    principal: Principal,
) -> ApiResult<Json<AgentList>> {
    let team_id = team_for(&state, &principal, &params, Action::ListAgents).await?;
    agents_of(&state, team_id).await.map(Json)
}

/// A team's agents, never their tokens (HTTP and MCP).
pub async fn agents_of(state: &AppState, team_id: i64) -> ApiResult<AgentList> {
    Ok(AgentList {
        agents: state.store.list_agents(team_id).await?,
    })
}

/// Revokes the agent's token at once: later requests get 401 and its open streams end.
#[utoipa::path(
    post,
    path = "/v1/teams/{team}/agents/{name}/revoke",
    operation_id = "revokeAgent",
    tag = "teams",
    params(AgentPath),
    responses(
        (status = 200, description = "The agent, now without a token", body = Agent),
        ReadErrors,
    )
)]
#[tracing::instrument(skip_all, fields(agent = %name))]
pub async fn revoke_agent(
    State(state): State<AppState>,
    params: RawPathParams,
    principal: Principal,
    Path((_, name)): Path<(String, String)>,
) -> ApiResult<Json<Agent>> {
    let team_id = team_for(&state, &principal, &params, Action::ManageAgents).await?;
    check_manages_agent(&state, team_id, role_of(&principal), &name).await?;
    let (agent, old_hash) = state.store.set_agent_token(team_id, &name, None).await?;
    state.auth.revoke(&old_hash, team_id, &name);
    Ok(Json(agent))
}

/// Replaces the agent's token: the old one stops working at once; the new one is shown once.
/// A revoked agent is brought back by it, taking a place under `max_agents_per_team` as a new
/// agent would (409 `team_limit` when the team is full).
#[utoipa::path(
    post,
    path = "/v1/teams/{team}/agents/{name}/rotate",
    operation_id = "rotateAgent",
    tag = "teams",
    params(AgentPath),
    responses(
        (status = 200, description = "The agent with its new token", body = CreatedAgent),
        (status = 409, response = Conflict),
        ReadErrors,
    )
)]
#[tracing::instrument(skip_all, fields(agent = %name))]
pub async fn rotate_agent(
    State(state): State<AppState>,
    params: RawPathParams,
    principal: Principal,
    Path((_, name)): Path<(String, String)>,
) -> ApiResult<Json<CreatedAgent>> {
    let team_id = team_for(&state, &principal, &params, Action::ManageAgents).await?;
    check_manages_agent(&state, team_id, role_of(&principal), &name).await?;
    let token = new_token();
    let (agent, old_hash) = state
        .store
        .set_agent_token(team_id, &name, Some(&hash_token(&token)))
        .await?;
    state.auth.revoke(&old_hash, team_id, &name);
    Ok(Json(CreatedAgent {
        name: agent.name,
        role: agent.role,
        token,
    }))
}

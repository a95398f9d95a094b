//! `GET …/me`: the caller's own name and role, so a client such as the dashboard offers only
//! the actions the role may take (the server still decides every request).

use super::authz::{act, Can};
use super::error::ApiResult;
use super::openapi_types::*;
use crate::store::Caller;
use axum::Json;
use huddle_wire::Me;

/// Who the token belongs to. Any agent of the team may ask (as it may list the agents).
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
pub async fn me(Can(caller, _): Can<act::ListAgents>) -> ApiResult<Json<Me>> {
    Ok(Json(who_am_i(&caller)))
}

/// The caller's name and role (HTTP, and the core of MCP's `whoami`).
pub fn who_am_i(caller: &Caller) -> Me {
    Me {
        name: caller.agent.clone(),
        role: caller.role,
    }
}

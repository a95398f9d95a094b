//! `GET …/cursors`: where the streams are now, so a client loads a snapshot and follows the
//! streams from there instead of replaying the team's whole history (the dashboard does).

use super::authz::{act, Can};
use super::error::ApiResult;
use super::openapi_types::*;
use super::AppState;
use axum::extract::State;
use axum::Json;
use huddle_wire::Cursors;

/// The newest event and message `seq` of the team. Read them before the snapshot (tasks, a page
/// of messages), then follow `/events` and `/messages/stream` after them: an item newer than
/// the snapshot may come again (a task's `version` tells which is newer), none is missed.
#[utoipa::path(
    get,
    path = "/v1/teams/{team}/cursors",
    operation_id = "streamCursors",
    tag = "streams",
    params(TeamPath),
    responses(
        (status = 200, description = "The newest event and message seq", body = Cursors),
        ReadErrors,
    )
)]
pub async fn cursors(
    State(state): State<AppState>,
    Can(caller, _): Can<act::ReadStreams>,
) -> ApiResult<Json<Cursors>> {
    let now = state.store.cursors(caller.team_id).await?;
    Ok(Json(Cursors {
        events: now.events,
        messages: now.messages,
    }))
}

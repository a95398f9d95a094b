//! A whole team at once, for the admin token: delete it, export it as JSON Lines, import such
//! a file as a new team (`store::transfer` is the format; docs/operations.md the how-to).

use super::authz::{permit_principal, Action};
use super::error::{ApiError, ApiResult};
use super::identity::Principal;
use super::openapi_types::*;
use super::{team_import, AppState};
use crate::store::rules::validate;
use crate::store::team_admin::EXPORT_BUFFER;
use crate::store::StoreError;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::Response;
use axum::Json;
use huddle_wire::Team;
use tokio::sync::mpsc;

/// Deletes the team and everything of it — agents, tasks, messages, events, memory, test
/// history, webhooks — in one transaction. Its tokens are refused at once (on every replica)
/// and its open streams and long polls end. Export it first to keep a copy.
#[utoipa::path(
    delete,
    path = "/v1/teams/{team}",
    operation_id = "deleteTeam",
    tag = "teams",
    params(TeamPath),
    responses(
        (status = 204, description = "Deleted"),
        ReadErrors,
    )
)]
#[tracing::instrument(skip_all, fields(team = %team))]
pub async fn delete_team(
    State(state): State<AppState>,
    principal: Principal,
    Path(team): Path<String>,
) -> ApiResult<StatusCode> {
    permit_principal(&principal, Action::DeleteTeams)?;
    let team_id = state.store.team_id(&team).await?;
    state.store.delete_team(team_id).await?;
    // Here at once; other replicas hear it from the database.
    state.auth.forget_team(team_id);
    state.hub.delete_team(team_id);
    tracing::info!(team = %team, "team deleted");
    Ok(StatusCode::NO_CONTENT)
}

/// The team as JSON Lines (`application/x-ndjson`), read from one snapshot and streamed:
/// the team, agents (with their tokens' hashes), counters, tasks (a task in progress as
/// `pending`, without its lease), messages, idempotency keys, events, memory history, test
/// runs, webhooks (with their secrets), then an `end` record with the count. Every line has
/// a `kind` and the format `version`. The file holds secrets: keep it as one.
#[utoipa::path(
    get,
    path = "/v1/teams/{team}/export",
    operation_id = "exportTeam",
    tag = "teams",
    params(TeamPath),
    responses(
        (status = 200, description = "One JSON record per line",
            content_type = "application/x-ndjson", body = String),
        ReadErrors,
    )
)]
#[tracing::instrument(skip_all, fields(team = %team))]
pub async fn export_team(
    State(state): State<AppState>,
    principal: Principal,
    Path(team): Path<String>,
) -> ApiResult<Response> {
    permit_principal(&principal, Action::TransferTeams)?;
    let team_id = state.store.team_id(&team).await?;
    // Spooled first: the snapshot ends before the client reads a byte (`team_export`).
    let (file, bytes) = super::team_export::spool(&state, team_id).await?;
    let lines = tokio_util::io::ReaderStream::new(file);
    let mut response = Response::new(Body::from_stream(lines));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/x-ndjson"),
    );
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(bytes));
    if let Ok(disposition) =
        HeaderValue::from_str(&format!("attachment; filename=\"{team}.jsonl\""))
    {
        headers.insert(header::CONTENT_DISPOSITION, disposition);
    }
    Ok(response)
}

/// Creates team `{team}` from an export (JSON Lines, as `exportTeam` writes it; the file's
/// team name is replaced by the path's), all or nothing. Agents keep their tokens. Every line
/// is checked before anything is written: a bad line (not JSON, an unknown kind, another
/// format version, fields out of order, a missing `end`) is a 400 naming it. Then every
/// record is checked as the API checks the same write (names, task fields, `blockedBy`
/// without unknown blockers or cycles, message, run, webhook and memory limits): any problem
/// is one 400 `invalid_body` whose `details.problems` lists them (at most 50; `details.total`
/// counts all), with nothing written. A lead comes in revoked (its token is not restored:
/// rotate it). A team of that name: 409 `duplicate_team`; an agent token already used by
/// another team: 409.
#[utoipa::path(
    post,
    path = "/v1/teams/{team}/import",
    operation_id = "importTeam",
    tag = "teams",
    params(TeamPath),
    request_body(content = String, content_type = "application/x-ndjson",
        description = "An export's lines"),
    responses(
        (status = 201, description = "The new team", body = Team),
        WriteErrors,
    )
)]
#[tracing::instrument(skip_all, fields(team = %team))]
pub async fn import_team(
    State(state): State<AppState>,
    principal: Principal,
    Path(team): Path<String>,
    body: Body,
) -> ApiResult<(StatusCode, Json<Team>)> {
    permit_principal(&principal, Action::TransferTeams)?;
    validate::name("team", &team)?;
    // Refused before the body is read; the store refuses it again if one appears meanwhile.
    match state.store.team_id(&team).await {
        Ok(_) => return Err(crate::store::team_admin::duplicate_team(&team).into()),
        Err(StoreError::NotFound { .. }) => {}
        Err(e) => return Err(e.into()),
    }
    let settings = &state.settings;
    // A record is never longer than the body that stored it, or the memory document.
    let max_line = 2 * settings.server.max_body_bytes + settings.memory.max_bytes;
    let mut spooled =
        team_import::spool(body, &settings.server.data_dir, max_line, settings).await?;
    let revoked_leads = std::mem::take(&mut spooled.revoked_leads);
    spooled.team.name = team;
    let record = spooled.team.clone();
    let (to, from) = mpsc::channel(EXPORT_BUFFER);
    let feeder = tokio::task::spawn_blocking(move || spooled.feed(to));
    let imported = state.store.import_team(record, from).await;
    let _ = feeder.await;
    let imported = imported.map_err(ApiError::from)?;
    tracing::info!(team = %imported.name, ?revoked_leads, "team imported (leads revoked: rotate them to hand out tokens)");
    Ok((StatusCode::CREATED, Json(imported)))
}

//! `GET …/messages/search`: every message of the team reachable by text, type, sender,
//! recipient, task and time, newest first, a page at a time, with the exact number of matches.
//! The store does the searching (`store::rules::search` says what matches).

use super::authz::{act, Can};
use super::error::{ApiError, ApiResult};
use super::extract::ApiQuery;
use super::messages::page_size;
use super::openapi_types::*;
use super::AppState;
use crate::store::rules::search_words;
use crate::store::{Caller, MessageSearch};
use axum::extract::State;
use axum::Json;
use huddle_wire::MessageSearchPage;
use serde::Deserialize;
use utoipa::IntoParams;

/// Characters of the search text at most.
const MAX_QUERY_CHARS: usize = 512;

/// The filters of a message search: the query string of `GET /messages/search` and the MCP
/// `msg_search` input. Every filter given must match.
#[derive(Debug, Default, Deserialize, IntoParams, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct SearchQuery {
    /// Words the summary or `data` contains, each as the start of a word, in any order
    /// (`TEST-00 average` finds "TEST-001: average([5]) returned 2.5").
    pub q: Option<String>,
    /// Only messages from this agent.
    pub from: Option<String>,
    /// Only messages to this agent, role or `*`.
    pub to: Option<String>,
    /// Only messages of this type.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// Only messages about this task (`data.taskId` or `data.task`).
    pub task: Option<String>,
    /// Only messages created at or after this time (RFC 3339).
    pub since: Option<String>,
    /// Only messages created before this time (RFC 3339).
    pub until: Option<String>,
    /// Only messages older than this `seq` (the `next` of the previous page).
    pub before: Option<i64>,
    /// Page size (100 by default).
    pub limit: Option<usize>,
}

/// Messages matching every filter given, newest first; `total` counts all matches, `next` is
/// the `before` of the following page. A page also stops before `[limits] max_page_bytes`.
#[utoipa::path(
    get,
    path = "/v1/teams/{team}/messages/search",
    operation_id = "searchMessages",
    tag = "messages",
    params(TeamPath, SearchQuery),
    responses(
        (status = 200, description = "A page of matches and their number", body = MessageSearchPage),
        QueryErrors,
    )
)]
pub async fn search(
    State(state): State<AppState>,
    Can(caller, _): Can<act::ReadMessages>,
    ApiQuery(q): ApiQuery<SearchQuery>,
) -> ApiResult<Json<MessageSearchPage>> {
    search_messages(&state, &caller, q).await.map(Json)
}

/// A page of the caller's team's messages matching `q` (HTTP and MCP).
pub async fn search_messages(
    state: &AppState,
    caller: &Caller,
    q: SearchQuery,
) -> ApiResult<MessageSearchPage> {
    let limit = page_size(state, q.limit)?;
    let text = q.q.unwrap_or_default();
    if text.chars().count() > MAX_QUERY_CHARS {
        return Err(ApiError::bad_request(
            "q",
            format!("`q` is longer than {MAX_QUERY_CHARS} characters"),
        ));
    }
    let given = |v: Option<String>| v.filter(|s| !s.is_empty());
    let search = MessageSearch {
        words: search_words(&text)?,
        from: given(q.from),
        to: given(q.to),
        kind: given(q.kind),
        task: given(q.task),
        since_ms: time("since", q.since)?,
        until_ms: time("until", q.until)?,
        before: q.before,
        limit,
        max_bytes: Some(state.settings.limits.max_page_bytes),
    };
    let (page, total) = state.store.search_messages(caller.team_id, search).await?;
    let next = (page.cut || page.items.len() == limit)
        .then(|| page.items.last().map(|m| m.seq))
        .flatten();
    Ok(MessageSearchPage {
        messages: page.items,
        total,
        next,
    })
}

/// An RFC 3339 time as milliseconds since the epoch.
fn time(field: &str, value: Option<String>) -> ApiResult<Option<i64>> {
    let Some(value) = value else {
        return Ok(None);
    };
    chrono::DateTime::parse_from_rfc3339(&value)
        .map(|t| Some(t.timestamp_millis()))
        .map_err(|e| {
            ApiError::bad_request(
                field,
                format!("`{field}` {value:?} is not an RFC 3339 time: {e}"),
            )
        })
}

//! `GET …/progress`: each task's newest pass-rate report over the whole history, worst (or
//! best, or most recent) first, a page at a time — what the dashboard's Pass-rate table sorts,
//! so a task that stopped at 72 % long ago is still among the worst. One report per task of the
//! team, found along the per-task index (`Store::task_progress`).

use super::authz::{act, Can};
use super::error::{ApiError, ApiResult};
use super::extract::ApiQuery;
use super::messages::page_size;
use super::openapi_types::*;
use super::AppState;
use crate::store::{ProgressOrder, ProgressQuery};
use axum::extract::State;
use axum::Json;
use huddle_wire::TaskProgressPage;
use serde::Deserialize;
use utoipa::IntoParams;

/// How far a page may start (also in the `offset` parameter's documented maximum): past the
/// tasks of any team the dashboard pages through, so a larger one is a mistake, not a page.
const MAX_OFFSET: usize = 100_000;

/// The order and page of `GET …/progress`.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ProgressParams {
    /// `rate` (the report's pass rate, the default) or `recent` (when it was posted).
    #[param(pattern = "^(rate|recent)$")]
    pub sort: Option<String>,
    /// `asc` (the default: the worst, or the oldest, first) or `desc`.
    #[param(pattern = "^(asc|desc)$")]
    pub dir: Option<String>,
    /// Reports skipped: the `next` of the previous page (at most 100,000, `MAX_OFFSET`).
    #[param(minimum = 0, maximum = 100_000)]
    pub offset: Option<usize>,
    /// Page size (100 by default).
    pub limit: Option<usize>,
}

/// Each task's newest `test_result` or `impl_progress` whose `data.passRate` is a number, one
/// per task, in the order asked for; `total` counts the tasks that have one.
#[utoipa::path(
    get,
    path = "/v1/teams/{team}/progress",
    operation_id = "taskProgress",
    tag = "messages",
    params(TeamPath, ProgressParams),
    responses(
        (status = 200, description = "A page of each task's newest report", body = TaskProgressPage),
        QueryErrors,
    )
)]
pub async fn progress(
    State(state): State<AppState>,
    Can(caller, _): Can<act::ReadMessages>,
    ApiQuery(p): ApiQuery<ProgressParams>,
) -> ApiResult<Json<TaskProgressPage>> {
    let limit = page_size(&state, p.limit)?;
    let order = match p.sort.as_deref() {
        None | Some("rate") => ProgressOrder::Rate,
        Some("recent") => ProgressOrder::Recent,
        Some(other) => {
            return Err(ApiError::bad_request(
                "sort",
                format!("`sort` is `rate` or `recent`, not {other:?}"),
            ))
        }
    };
    let ascending = match p.dir.as_deref() {
        None | Some("asc") => true,
        Some("desc") => false,
        Some(other) => {
            return Err(ApiError::bad_request(
                "dir",
                format!("`dir` is `asc` or `desc`, not {other:?}"),
            ))
        }
    };
    let offset = p.offset.unwrap_or(0);
    if offset > MAX_OFFSET {
        return Err(ApiError::bad_request(
            "offset",
            format!("`offset` must be at most {MAX_OFFSET}, got {offset}"),
        ));
    }
    let q = ProgressQuery {
        order,
        ascending,
        offset,
        limit,
    };
    let (messages, total) = state.store.task_progress(caller.team_id, q).await?;
    let end = (offset + messages.len()) as i64;
    let next = (messages.len() == limit && end < total).then_some(end);
    Ok(Json(TaskProgressPage {
        messages,
        total,
        next,
    }))
}

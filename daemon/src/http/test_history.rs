//! The test history over HTTP: workers post each run's outcomes; anyone in the team reads the
//! runs (the pass-rate trend), flaky tests and regressions of a project.

use super::authz::{act, Can};
use super::error::{ApiError, ApiResult};
use super::extract::{ApiJson, ApiQuery};
use super::openapi_types::*;
use super::AppState;
use crate::store::test_history::{self, StoredRun};
use crate::store::Caller;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use huddle_wire::{FlakyTests, NewTestRun, Regressions, TestHistory, TestRunSummary};
use serde::Deserialize;
use utoipa::IntoParams;

/// Stores one run of a project's suite: every test's node id and outcome. The daemon keeps the
/// last `[history] runs_per_project` runs of each project (and of each of its tiers apart),
/// deleting older ones as it stores.
#[utoipa::path(
    post,
    path = "/v1/teams/{team}/history/runs",
    operation_id = "postTestRun",
    tag = "history",
    params(TeamPath),
    request_body = NewTestRun,
    responses(
        (status = 201, description = "The stored run, counted", body = TestRunSummary),
        WriteErrors,
    )
)]
#[tracing::instrument(skip_all, fields(project = %run.project))]
pub async fn post_run(
    State(state): State<AppState>,
    Can(caller, _): Can<act::PostTestRuns>,
    ApiJson(run): ApiJson<NewTestRun>,
) -> ApiResult<Response> {
    let stored = record_run(&state, &caller, run).await?;
    Ok((StatusCode::CREATED, Json(stored)).into_response())
}

/// Stores one run; the store holds it to the outcome and node id limits (HTTP and MCP).
pub async fn record_run(
    state: &AppState,
    caller: &Caller,
    run: NewTestRun,
) -> ApiResult<TestRunSummary> {
    Ok(state.store.record_test_run(caller, run).await?)
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ProjectQuery {
    /// The project; the one posted to last when absent.
    project: Option<String>,
    /// Only the runs of this test tier (`unit`, `pbt`, `integration`, `e2e`): one tier's
    /// trend and regressions. Absent: the whole-suite runs only.
    tier: Option<String>,
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct FlakyQuery {
    /// The project; the one posted to last when absent.
    project: Option<String>,
    /// Only count runs on this tree (a git tree or commit hash, or the worker's content hash).
    tree: Option<String>,
    /// Only the runs of this test tier. Absent: the whole-suite runs only.
    tier: Option<String>,
}

/// The project asked for (404 when it has no runs) or the one posted to last, and every
/// project of the team, the last posted to first.
async fn project(
    state: &AppState,
    caller: &Caller,
    asked: Option<String>,
) -> ApiResult<(Option<String>, Vec<String>)> {
    let projects = state.store.test_projects(caller.team_id).await?;
    match asked {
        None => Ok((projects.first().cloned(), projects)),
        Some(p) if projects.contains(&p) => Ok((Some(p), projects)),
        Some(p) => Err(ApiError::not_found(if projects.is_empty() {
            format!("no test history for project {p:?}: the team has none yet")
        } else {
            format!(
                "no test history for project {p:?}; the team has {}",
                projects.join(", ")
            )
        })),
    }
}

async fn runs(
    state: &AppState,
    caller: &Caller,
    project: Option<&str>,
    with_outcomes: bool,
    tier: Option<&str>,
) -> ApiResult<Vec<StoredRun>> {
    let mut runs = match project {
        None => vec![],
        Some(p) => {
            state
                .store
                .test_runs(caller.team_id, p, with_outcomes)
                .await?
        }
    };
    // A tester running tiers posts each tier's run beside the whole one (the same executions):
    // without `tier`, the reads see the whole-suite runs only, so nothing is counted twice and
    // "the latest run" is the latest whole one.
    runs.retain(|r| r.summary.tier.as_deref() == tier);
    Ok(runs)
}

/// A project's kept runs, oldest first, each with its counts and pass rate: the trend.
#[utoipa::path(
    get,
    path = "/v1/teams/{team}/history",
    operation_id = "testHistory",
    tag = "history",
    params(TeamPath, ProjectQuery),
    responses(
        (status = 200, description = "The runs, oldest first", body = TestHistory),
        QueryErrors,
    )
)]
pub async fn history(
    State(state): State<AppState>,
    Can(caller, _): Can<act::ReadTestHistory>,
    ApiQuery(q): ApiQuery<ProjectQuery>,
) -> ApiResult<Json<TestHistory>> {
    history_of(&state, &caller, q.project, q.tier)
        .await
        .map(Json)
}

/// `GET …/history`'s answer (also the MCP tool's).
pub async fn history_of(
    state: &AppState,
    caller: &Caller,
    asked: Option<String>,
    tier: Option<String>,
) -> ApiResult<TestHistory> {
    let (project, mut projects) = project(state, caller, asked).await?;
    let runs = runs(state, caller, project.as_deref(), false, tier.as_deref()).await?;
    projects.sort();
    Ok(test_history::history(project, projects, runs))
}

/// Tests that passed and failed on the same tree in the kept runs, most flaky first.
#[utoipa::path(
    get,
    path = "/v1/teams/{team}/history/flaky",
    operation_id = "flakyTests",
    tag = "history",
    params(TeamPath, FlakyQuery),
    responses(
        (status = 200, description = "The flaky tests", body = FlakyTests),
        QueryErrors,
    )
)]
pub async fn flaky(
    State(state): State<AppState>,
    Can(caller, _): Can<act::ReadTestHistory>,
    ApiQuery(q): ApiQuery<FlakyQuery>,
) -> ApiResult<Json<FlakyTests>> {
    flaky_of(&state, &caller, q.project, q.tree, q.tier)
        .await
        .map(Json)
}

/// `GET …/history/flaky`'s answer (also the MCP tool's).
pub async fn flaky_of(
    state: &AppState,
    caller: &Caller,
    asked: Option<String>,
    tree: Option<String>,
    tier: Option<String>,
) -> ApiResult<FlakyTests> {
    let (project, _) = project(state, caller, asked).await?;
    let runs = runs(state, caller, project.as_deref(), true, tier.as_deref()).await?;
    let mut answer = test_history::flaky(project, tree, &runs);
    answer.omitted =
        test_history::cut_to_bytes(&mut answer.tests, state.settings.limits.max_page_bytes);
    Ok(answer)
}

/// Tests failing in the latest run that passed the last time they ran before it.
#[utoipa::path(
    get,
    path = "/v1/teams/{team}/history/regressions",
    operation_id = "testRegressions",
    tag = "history",
    params(TeamPath, ProjectQuery),
    responses(
        (status = 200, description = "The regressions, by node id", body = Regressions),
        QueryErrors,
    )
)]
pub async fn regressions(
    State(state): State<AppState>,
    Can(caller, _): Can<act::ReadTestHistory>,
    ApiQuery(q): ApiQuery<ProjectQuery>,
) -> ApiResult<Json<Regressions>> {
    regressions_of(&state, &caller, q.project, q.tier)
        .await
        .map(Json)
}

/// `GET …/history/regressions`' answer (also the MCP tool's).
pub async fn regressions_of(
    state: &AppState,
    caller: &Caller,
    asked: Option<String>,
    tier: Option<String>,
) -> ApiResult<Regressions> {
    let (project, _) = project(state, caller, asked).await?;
    let runs = runs(state, caller, project.as_deref(), true, tier.as_deref()).await?;
    let mut answer = test_history::regressions(project, &runs);
    answer.omitted =
        test_history::cut_to_bytes(&mut answer.tests, state.settings.limits.max_page_bytes);
    Ok(answer)
}

//! `GET /metrics`: the Prometheus text format (see `crate::metrics`). On the API's address it
//! is the admin token's; on the `[metrics] listen` address it needs no token.

use super::error::{ApiError, ApiResult};
use super::identity::Principal;
use super::AppState;
use crate::gate_deadlines::QuestionGauges;
use crate::store::quotas::TeamCounters;
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::Router;
use huddle_wire::{SpendTotals, TaskStatus};

const TEXT_FORMAT: &str = "text/plain; version=0.0.4; charset=utf-8";

/// On the API's address: the admin token only (an agent token is 403).
pub async fn for_admin(State(state): State<AppState>, who: Principal) -> ApiResult<Response> {
    match who {
        Principal::Admin => Ok(exposition(&state).await),
        Principal::Agent(_) => Err(ApiError::forbidden(
            "/metrics is for the admin token (or set [metrics] listen to serve it apart)",
        )),
    }
}

async fn exposition(state: &AppState) -> Response {
    let text = render(state).await;
    ([(header::CONTENT_TYPE, TEXT_FORMAT)], text).into_response()
}

/// The text exposition: the process's metrics, then each team's gauges from the store's
/// maintained counters (one row per team, kept by the database in every write's transaction:
/// right after restarts, on every replica, after retention; a deleted team has no row, so
/// its series go with it — they are written here, not registered with the recorder).
async fn render(state: &AppState) -> String {
    let mut text = crate::metrics::handle().render();
    state.workspaces.render(&mut text);
    match state.store.team_counters().await {
        Ok(teams) => {
            team_gauges(&mut text, &teams);
            question_gauges(&mut text, &teams, &state.question_gauges);
        }
        Err(e) => tracing::warn!(error = %e, "team counters for /metrics"),
    }
    match state.store.spend_by_team().await {
        Ok(teams) => spend_gauges(&mut text, &teams),
        Err(e) => tracing::warn!(error = %e, "team spending for /metrics"),
    }
    text
}

/// Reads one figure of a team's spending.
type SpentOf = fn(&SpendTotals) -> u64;

/// What each team's model calls used in all (the spend ledger's daily totals, summed).
fn spend_gauges(out: &mut String, teams: &[(String, SpendTotals)]) {
    use std::fmt::Write;
    let gauges: [(&str, &str, SpentOf); 4] = [
        (
            "huddle_team_model_calls",
            "model calls reserved per team",
            |t| t.calls,
        ),
        (
            "huddle_team_model_prompt_tokens",
            "prompt tokens of settled model calls per team",
            |t| t.prompt_tokens,
        ),
        (
            "huddle_team_model_completion_tokens",
            "completion tokens of settled model calls per team",
            |t| t.completion_tokens,
        ),
        (
            "huddle_team_model_cost_micros",
            "cost of settled model calls per team, in micro-units",
            |t| t.cost_micros,
        ),
    ];
    for (metric, help, value) in gauges {
        let _ = writeln!(out, "# HELP {metric} {help}");
        let _ = writeln!(out, "# TYPE {metric} gauge");
        for (team, totals) in teams {
            let _ = writeln!(
                out,
                "{metric}{{team=\"{}\"}} {}",
                label(team),
                value(totals)
            );
        }
    }
}

/// Questions waiting for a person, per team: how many, and how long the oldest has waited
/// (0 with none), so an alert can fire on a decision nobody takes. From the deadline sweep's
/// last look (at most a second old), so a scrape reads no task.
fn question_gauges(out: &mut String, teams: &[TeamCounters], open: &QuestionGauges) {
    use std::fmt::Write;
    let now_ms = chrono::Utc::now().timestamp_millis();
    let _ = writeln!(
        out,
        "# HELP huddle_open_questions questions waiting for a person, per team"
    );
    let _ = writeln!(out, "# TYPE huddle_open_questions gauge");
    for team in teams {
        let (n, _) = open.of(&team.team).unwrap_or((0, now_ms));
        let _ = writeln!(
            out,
            "huddle_open_questions{{team=\"{}\"}} {n}",
            label(&team.team)
        );
    }
    let _ = writeln!(
        out,
        "# HELP huddle_oldest_open_question_seconds how long the oldest open question has waited, per team"
    );
    let _ = writeln!(out, "# TYPE huddle_oldest_open_question_seconds gauge");
    for team in teams {
        let (_, oldest) = open.of(&team.team).unwrap_or((0, now_ms));
        let age = (now_ms - oldest).max(0) as f64 / 1000.0;
        let _ = writeln!(
            out,
            "huddle_oldest_open_question_seconds{{team=\"{}\"}} {age:.3}",
            label(&team.team)
        );
    }
}

/// Reads one use of a team's counters.
type UsageOf = fn(&TeamCounters) -> u64;

/// The per-team gauges in the text format.
fn team_gauges(out: &mut String, teams: &[TeamCounters]) {
    use std::fmt::Write;
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    let _ = writeln!(out, "# HELP huddle_tasks tasks stored per team and status");
    let _ = writeln!(out, "# TYPE huddle_tasks gauge");
    for team in teams {
        let name = label(&team.team);
        for status in TaskStatus::ALL {
            let n = team.tasks_with(status);
            let _ = writeln!(
                out,
                "huddle_tasks{{team=\"{name}\",status=\"{status}\"}} {n}"
            );
        }
    }
    let usage: [(&str, &str, UsageOf); 3] = [
        (
            "huddle_team_edges",
            "dependency edges stored per team",
            |t| t.usage.edges,
        ),
        ("huddle_team_messages", "messages stored per team", |t| {
            t.usage.messages
        }),
        (
            "huddle_team_storage_bytes",
            "approximate bytes of a team's tasks, messages and shared memory",
            |t| t.usage.storage_bytes,
        ),
    ];
    for (metric, help, value) in usage {
        let _ = writeln!(out, "# HELP {metric} {help}");
        let _ = writeln!(out, "# TYPE {metric} gauge");
        for team in teams {
            let _ = writeln!(
                out,
                "{metric}{{team=\"{}\"}} {}",
                label(&team.team),
                value(team)
            );
        }
    }
}

/// A label value escaped as the text format requires.
fn label(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// The router for the `[metrics] listen` address: `/metrics` only, no token.
pub fn separate(state: AppState) -> Router {
    Router::new()
        .route(
            "/metrics",
            axum::routing::get(
                |State(state): State<AppState>| async move { exposition(&state).await },
            ),
        )
        .with_state(state)
}

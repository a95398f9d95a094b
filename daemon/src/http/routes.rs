//! Every documented route, registered once: `utoipa-axum` builds the axum router and the
//! OpenAPI paths from the same `routes!` list, so the two cannot drift. Handlers on one path
//! share a `routes!` call. The only route added by hand is the memory pointer's catch-all (see
//! [`api`]).

use super::{
    budget, cursors, gates, health, holder_questions, me, memory, message_search, messages,
    openapi, spend, streams, task_claims, task_events, task_progress, task_readiness, tasks,
    team_admin, team_settings, teams, test_history, webhooks, AppState,
};
use axum::routing::get;
use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// The API's routes with their OpenAPI description (paths from the handlers' `#[utoipa::path]`,
/// the rest from [`openapi::ApiDoc`]).
pub fn api() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(openapi::ApiDoc::openapi())
        .routes(routes!(teams::create_team, teams::list_teams))
        .routes(routes!(teams::create_agent, teams::list_agents))
        .routes(routes!(teams::revoke_agent))
        .routes(routes!(teams::rotate_agent))
        .routes(routes!(team_settings::get, team_settings::put))
        .routes(routes!(team_admin::delete_team))
        .routes(routes!(team_admin::export_team))
        .routes(routes!(team_admin::import_team))
        .routes(routes!(me::me))
        .routes(routes!(tasks::create, tasks::list))
        .routes(routes!(task_claims::claim))
        .routes(routes!(task_claims::complete_many))
        .routes(routes!(tasks::get, tasks::update))
        .routes(routes!(task_claims::heartbeat))
        .routes(routes!(task_claims::complete))
        .routes(routes!(task_claims::fail))
        .routes(routes!(task_claims::release))
        .routes(routes!(gates::gate))
        .routes(routes!(gates::answer))
        .routes(routes!(holder_questions::ask))
        .routes(routes!(holder_questions::decision))
        .routes(routes!(task_events::task_events))
        .routes(routes!(task_readiness::why_not_ready))
        .routes(routes!(messages::post, messages::list))
        .routes(routes!(messages::post_many))
        .routes(routes!(message_search::search))
        .routes(routes!(task_progress::progress))
        .routes(routes!(streams::messages))
        .routes(routes!(cursors::cursors))
        .routes(routes!(messages::inbox))
        .routes(routes!(messages::ack))
        .routes(routes!(memory::get, memory::patch, memory::replace))
        .routes(routes!(memory::history))
        .routes(routes!(streams::events))
        .routes(routes!(test_history::post_run))
        .routes(routes!(test_history::history))
        .routes(routes!(test_history::flaky))
        .routes(routes!(test_history::regressions))
        .routes(routes!(budget::get, budget::put))
        .routes(routes!(spend::reserve))
        .routes(routes!(spend::settle))
        .routes(routes!(spend::report))
        .routes(routes!(webhooks::create, webhooks::list))
        .routes(routes!(webhooks::delete))
        .routes(routes!(webhooks::deliveries))
        .routes(routes!(health::healthz))
        .routes(routes!(health::readyz))
        .routes(routes!(openapi::openapi_json))
        // A JSON Pointer spans segments (`/a/b/0`): axum needs a catch-all, which an OpenAPI
        // path cannot express, so this one is routed here and documented in `ApiDoc`.
        .route(
            "/v1/teams/{team}/memory/{*pointer}",
            get(memory::get_pointer),
        )
}

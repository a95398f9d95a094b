//! Handlers driven in process with `oneshot`: no socket, the real router and store.

use axum::body::Body;
use axum::http::{Request, StatusCode};
use axum::Router;
use http_body_util::BodyExt;
use huddle_daemon::config::Settings;
use serde_json::{json, Value};
use tower::ServiceExt;

const ADMIN: &str = "admin-secret-0123456789abcdef-0123";

async fn app() -> (Router, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let mut settings = Settings::default();
    settings.server.data_dir = dir.path().to_path_buf();
    settings.server.admin_token = ADMIN.into();
    let built = huddle_daemon::build(settings).await.unwrap();
    (huddle_daemon::http::app(built.state), dir)
}

async fn call(
    app: &Router,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<Value>,
) -> (StatusCode, Value) {
    let mut req = Request::builder().method(method).uri(path);
    if let Some(token) = token {
        req = req.header("authorization", format!("Bearer {token}"));
    }
    let body = body
        .map(|b| Body::from(b.to_string()))
        .unwrap_or_else(Body::empty);
    let res = app.clone().oneshot(req.body(body).unwrap()).await.unwrap();
    let status = res.status();
    let bytes = res.into_body().collect().await.unwrap().to_bytes();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

#[tokio::test]
async fn health_and_readiness_need_no_token() {
    let (app, _dir) = app().await;
    assert_eq!(
        call(&app, "GET", "/healthz", None, None).await,
        (StatusCode::OK, json!({"status": "ok"}))
    );
    assert_eq!(
        call(&app, "GET", "/readyz", None, None).await,
        (StatusCode::OK, json!({"status": "ready"}))
    );
}

#[tokio::test]
async fn missing_and_wrong_tokens_get_401_in_the_error_shape() {
    let (app, _dir) = app().await;
    let (status, body) = call(&app, "POST", "/v1/teams", None, Some(json!({"name": "qa"}))).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(body["error"]["code"], "unauthorized");
    let (status, _) = call(
        &app,
        "POST",
        "/v1/teams",
        Some("guess"),
        Some(json!({"name": "qa"})),
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn the_admin_creates_a_team_and_an_agent_whose_token_works_once_shown() {
    let (app, _dir) = app().await;
    let (status, team) = call(
        &app,
        "POST",
        "/v1/teams",
        Some(ADMIN),
        Some(json!({"name": "qa"})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(team["name"], "qa");
    let (status, agent) = call(
        &app,
        "POST",
        "/v1/teams/qa/agents",
        Some(ADMIN),
        Some(json!({"name": "coordinator", "role": "coordinator"})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);
    let token = agent["token"].as_str().unwrap();
    assert_eq!(token.len(), 4 + 64, "hud_ and 256 bits in hex");
    let (status, list) = call(&app, "GET", "/v1/teams/qa/agents", Some(token), None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(list["agents"][0]["name"], "coordinator");
    assert!(list["agents"][0].get("token").is_none());
    let (status, task) = call(
        &app,
        "POST",
        "/v1/teams/qa/tasks",
        Some(token),
        Some(json!({"prefix": "TEST", "subject": "s"})),
    )
    .await;
    assert_eq!(
        (status, task["id"].as_str()),
        (StatusCode::CREATED, Some("TEST-001"))
    );
}

#[tokio::test]
async fn unknown_routes_and_methods_answer_in_the_error_shape() {
    let (app, _dir) = app().await;
    let (status, body) = call(&app, "GET", "/v2/whatever", None, None).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("not_found"))
    );
    let (status, body) = call(&app, "DELETE", "/v1/teams", Some(ADMIN), None).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (StatusCode::METHOD_NOT_ALLOWED, Some("method_not_allowed"))
    );
}

#[tokio::test]
async fn oversized_bodies_get_413_before_parsing() {
    let (app, _dir) = app().await;
    let big = json!({ "name": "x".repeat(2 * 1024 * 1024) });
    let (status, body) = call(&app, "POST", "/v1/teams", Some(ADMIN), Some(big)).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (StatusCode::PAYLOAD_TOO_LARGE, Some("too_large"))
    );
}

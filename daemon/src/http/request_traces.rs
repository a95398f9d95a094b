//! An OpenTelemetry span per API request, when traces are exported (`huddle_telemetry`):
//! named by method and route template, a child of the caller's `traceparent` (a worker sends
//! its task attempt's), else the root of a trace of its own. Not installed when traces are off.

use axum::extract::{MatchedPath, Request};
use axum::middleware::Next;
use axum::response::Response;
use huddle_telemetry::{KeyValue, TraceParent};
use std::time::SystemTime;

pub async fn record(request: Request, next: Next) -> Response {
    let started = SystemTime::now();
    let parent = request
        .headers()
        .get("traceparent")
        .and_then(|v| v.to_str().ok())
        .and_then(TraceParent::parse);
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_string(), |p| p.as_str().to_string());
    let method = request.method().as_str().to_string();
    let response = next.run(request).await;
    let attributes = vec![
        KeyValue::new("http.request.method", method.clone()),
        KeyValue::new("http.route", route.clone()),
        KeyValue::new(
            "http.response.status_code",
            i64::from(response.status().as_u16()),
        ),
    ];
    huddle_telemetry::record(
        parent.as_ref(),
        format!("{method} {route}"),
        started,
        attributes,
    );
    response
}

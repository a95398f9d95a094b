//! `huddle_http_requests_total{method,route,status}` and
//! `huddle_http_request_duration_seconds{method,route}` for every request, a layer on the router.
//!
//! The handles are made once per label set and kept: the facade's macros build the labels'
//! strings, hash them and search the registry on every call, a few microseconds on every
//! request. The kept set is bounded by what the daemon chooses, not by what a client sends:
//! the router's route templates (`unmatched` for anything else), eight method labels and the
//! statuses the handlers answer.

use axum::extract::{MatchedPath, Request};
use axum::http::Method;
use axum::middleware::Next;
use axum::response::Response;
use metrics::{counter, histogram, Counter, Histogram};
use std::collections::HashMap;
use std::sync::{OnceLock, RwLock};
use std::time::Instant;

/// Counts and times every request by method, route template and status.
pub async fn track(request: Request, next: Next) -> Response {
    let template = request.extensions().get::<MatchedPath>().cloned();
    let method = MethodLabel::of(request.method());
    let started = Instant::now();
    let response = next.run(request).await;
    let route = template.as_ref().map_or(UNMATCHED, MatchedPath::as_str);
    let handles = Handles::of(route, method, response.status().as_u16());
    handles.duration.record(started.elapsed());
    handles.count.increment(1);
    response
}

const UNMATCHED: &str = "unmatched";

/// The standard methods by name, anything else as `other` (a client chooses the method).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct MethodLabel(&'static str);

impl MethodLabel {
    fn of(method: &Method) -> MethodLabel {
        const KNOWN: [(Method, &str); 7] = [
            (Method::GET, "GET"),
            (Method::POST, "POST"),
            (Method::PUT, "PUT"),
            (Method::PATCH, "PATCH"),
            (Method::DELETE, "DELETE"),
            (Method::HEAD, "HEAD"),
            (Method::OPTIONS, "OPTIONS"),
        ];
        let known = KNOWN.iter().find(|(m, _)| m == method);
        MethodLabel(known.map_or("other", |(_, label)| label))
    }
}

/// One label set's handles.
#[derive(Clone)]
struct Handles {
    duration: Histogram,
    count: Counter,
}

/// By route template, then by method and status.
type Kept = HashMap<Box<str>, HashMap<(MethodLabel, u16), Handles>>;

impl Handles {
    fn of(template: &str, method: MethodLabel, status: u16) -> Handles {
        static KEPT: OnceLock<RwLock<Kept>> = OnceLock::new();
        let kept = KEPT.get_or_init(|| {
            // The handles belong to the recorder installed when they are made: ours first.
            crate::metrics::handle();
            RwLock::default()
        });
        let found = kept
            .read()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .get(template)
            .and_then(|by_label| by_label.get(&(method, status)).cloned());
        if let Some(handles) = found {
            return handles;
        }
        let handles = Handles::make(template, method, status);
        kept.write()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .entry(template.into())
            .or_default()
            .insert((method, status), handles.clone());
        handles
    }

    fn make(template: &str, method: MethodLabel, status: u16) -> Handles {
        let labels = [
            ("method", method.0.to_string()),
            ("route", route_label(template)),
        ];
        let duration = histogram!("huddle_http_request_duration_seconds", &labels);
        let [method, route] = labels;
        let count = counter!(
            "huddle_http_requests_total",
            &[method, route, ("status", status.to_string())]
        );
        Handles { duration, count }
    }
}

/// A nested service's template ends in axum's private tail parameter; the mount point is the
/// route.
fn route_label(template: &str) -> String {
    match template.find("/{*__private__axum") {
        Some(at) => template[..at].to_string(),
        None => template.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_nested_services_route_is_its_mount_point() {
        assert_eq!(
            route_label("/mcp/{*__private__axum_nest_tail_param}"),
            "/mcp"
        );
        assert_eq!(
            route_label("/v1/teams/{team}/tasks"),
            "/v1/teams/{team}/tasks"
        );
    }

    #[test]
    fn a_method_outside_the_standard_ones_is_other() {
        assert_eq!(MethodLabel::of(&Method::POST).0, "POST");
        let custom = Method::from_bytes(b"PURGE").unwrap();
        assert_eq!(MethodLabel::of(&custom).0, "other");
    }
}

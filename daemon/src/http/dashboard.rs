//! The web dashboard for people: `GET /` and `GET /dashboard/{asset}`.
//!
//! Plain HTML, CSS and JavaScript from `daemon/dashboard/`, embedded in the binary (no build
//! step, no CDN, works offline). The page signs in with an agent token it keeps in
//! `sessionStorage` and calls the same API as every agent, so it needs no route of its own
//! beyond its files. Every file is served with a strict Content-Security-Policy (scripts and
//! connections to this origin only, no inline code, no framing), `nosniff` and no referrer.
//! The API's CORS stays closed: nothing here sets `Access-Control-*`.

use super::error::ApiError;
use axum::extract::Path;
use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Response};

/// What every dashboard file is served with.
const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; \
                   img-src 'self'; connect-src 'self'; font-src 'self'; object-src 'none'; \
                   base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/// `(name, content type, bytes)`; the page is `index.html`, the rest live under `/dashboard/`.
const ASSETS: &[(&str, &str, &[u8])] = &[
    (
        "index.html",
        "text/html; charset=utf-8",
        include_bytes!("../../dashboard/index.html"),
    ),
    (
        "app.css",
        "text/css; charset=utf-8",
        include_bytes!("../../dashboard/app.css"),
    ),
    (
        "favicon.svg",
        "image/svg+xml",
        include_bytes!("../../dashboard/favicon.svg"),
    ),
    js("app.js", include_bytes!("../../dashboard/app.js")),
    js("api.js", include_bytes!("../../dashboard/api.js")),
    js("sse.js", include_bytes!("../../dashboard/sse.js")),
    js("dom.js", include_bytes!("../../dashboard/dom.js")),
    js("state.js", include_bytes!("../../dashboard/state.js")),
    js("signin.js", include_bytes!("../../dashboard/signin.js")),
    js("messages.js", include_bytes!("../../dashboard/messages.js")),
    js("tasks.js", include_bytes!("../../dashboard/tasks.js")),
    js("deps.js", include_bytes!("../../dashboard/deps.js")),
    js("graph.js", include_bytes!("../../dashboard/graph.js")),
    js("agents.js", include_bytes!("../../dashboard/agents.js")),
    js("memory.js", include_bytes!("../../dashboard/memory.js")),
    js("chart.js", include_bytes!("../../dashboard/chart.js")),
    js("keys.js", include_bytes!("../../dashboard/keys.js")),
    js("cards.js", include_bytes!("../../dashboard/cards.js")),
    js("progress.js", include_bytes!("../../dashboard/progress.js")),
    js("route.js", include_bytes!("../../dashboard/route.js")),
    js("markdown.js", include_bytes!("../../dashboard/markdown.js")),
    js("fix.js", include_bytes!("../../dashboard/fix.js")),
    js("verdict.js", include_bytes!("../../dashboard/verdict.js")),
    js(
        "task-detail.js",
        include_bytes!("../../dashboard/task-detail.js"),
    ),
    js(
        "task-actions.js",
        include_bytes!("../../dashboard/task-actions.js"),
    ),
    js(
        "task-conflict.js",
        include_bytes!("../../dashboard/task-conflict.js"),
    ),
    js("gates.js", include_bytes!("../../dashboard/gates.js")),
    js(
        "attention.js",
        include_bytes!("../../dashboard/attention.js"),
    ),
    js("title.js", include_bytes!("../../dashboard/title.js")),
    js("needs.js", include_bytes!("../../dashboard/needs.js")),
    js("need-row.js", include_bytes!("../../dashboard/need-row.js")),
    js("webhooks.js", include_bytes!("../../dashboard/webhooks.js")),
];

const fn js(
    name: &'static str,
    bytes: &'static [u8],
) -> (&'static str, &'static str, &'static [u8]) {
    (name, "text/javascript; charset=utf-8", bytes)
}

/// `GET /`: the page.
pub async fn index() -> Response {
    serve("index.html")
}

/// `GET /dashboard/{asset}`: a script, the stylesheet or the icon.
pub async fn asset(Path(name): Path<String>) -> Response {
    serve(&name)
}

fn serve(name: &str) -> Response {
    let Some((_, content_type, bytes)) = ASSETS.iter().find(|(n, _, _)| *n == name) else {
        return ApiError::not_found("no such dashboard file").into_response();
    };
    let mut res = (*bytes).into_response();
    let h = res.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    // The files change with the binary: revalidate rather than keep an old page after an upgrade.
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    res
}

#[cfg(test)]
mod tests {
    use super::ASSETS;

    /// A file added to `dashboard/` but not to `ASSETS` is a 404 and, for a module, a blank page.
    #[test]
    fn every_file_of_the_dashboard_is_served() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("dashboard");
        let mut missing = Vec::new();
        for entry in std::fs::read_dir(&dir).expect("the dashboard directory") {
            let name = entry.expect("an entry").file_name();
            let name = name.to_string_lossy();
            if !ASSETS.iter().any(|(served, _, _)| *served == name) {
                missing.push(name.into_owned());
            }
        }
        assert!(missing.is_empty(), "not in ASSETS: {missing:?}");
    }
}

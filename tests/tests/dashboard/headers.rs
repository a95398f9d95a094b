//! `GET /` and `/dashboard/<file>` over real HTTP: content types, the Content-Security-Policy
//! and the other security headers, no CORS anywhere, no token needed, unknown files 404.

use huddle_tests::TestDaemon;
use reqwest::header::HeaderMap;
use serde_json::json;

fn header<'a>(headers: &'a HeaderMap, name: &str) -> &'a str {
    headers
        .get(name)
        .unwrap_or_else(|| panic!("missing {name}"))
        .to_str()
        .expect("ASCII header")
}

/// The CSP's directives as `(name, sources)`.
fn directives(csp: &str) -> Vec<(String, Vec<String>)> {
    csp.split(';')
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(|d| {
            let mut words = d.split_whitespace().map(String::from);
            (words.next().expect("a directive name"), words.collect())
        })
        .collect()
}

fn assert_dashboard_headers(path: &str, headers: &HeaderMap) {
    let csp = header(headers, "content-security-policy");
    let d = directives(csp);
    let get = |name: &str| {
        d.iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
            .unwrap_or_else(|| panic!("{path}: CSP without {name}: {csp}"))
    };
    assert_eq!(get("default-src"), ["'self'"], "{path}: {csp}");
    assert_eq!(
        get("script-src"),
        ["'self'"],
        "{path}: no inline scripts: {csp}"
    );
    assert_eq!(get("connect-src"), ["'self'"], "{path}: {csp}");
    assert_eq!(get("frame-ancestors"), ["'none'"], "{path}: {csp}");
    assert!(
        !csp.contains("unsafe-"),
        "{path}: nothing unsafe allowed: {csp}"
    );
    assert_eq!(
        header(headers, "x-content-type-options"),
        "nosniff",
        "{path}"
    );
    assert_eq!(header(headers, "referrer-policy"), "no-referrer", "{path}");
}

fn assert_no_cors(what: &str, headers: &HeaderMap) {
    for name in headers.keys() {
        assert!(
            !name.as_str().starts_with("access-control-"),
            "{what} sets {name}: the API's CORS stays closed"
        );
    }
}

#[tokio::test]
async fn the_page_and_its_files_carry_the_csp_and_no_cors() {
    let d = TestDaemon::start().await;
    let http = reqwest::Client::new();
    let files = [
        ("/", "text/html"),
        ("/dashboard/app.js", "text/javascript"),
        ("/dashboard/sse.js", "text/javascript"),
        ("/dashboard/app.css", "text/css"),
        ("/dashboard/favicon.svg", "image/svg+xml"),
    ];
    for (path, content_type) in files {
        // A cross-origin page asking: still no CORS header, and no token is needed for the files.
        let res = http
            .get(format!("{}{path}", d.url))
            .header("Origin", "https://evil.example")
            .send()
            .await
            .expect("GET");
        assert_eq!(res.status(), 200, "{path}");
        assert!(
            header(res.headers(), "content-type").starts_with(content_type),
            "{path}: {:?}",
            res.headers().get("content-type")
        );
        assert_dashboard_headers(path, res.headers());
        assert_no_cors(path, res.headers());
        let body = res.text().await.expect("body");
        assert!(!body.is_empty(), "{path} is empty");
    }

    let page = http.get(&d.url).send().await.expect("GET /");
    let html = page.text().await.expect("page");
    assert!(
        html.contains(r#"<script type="module" src="/dashboard/app.js"></script>"#),
        "the page loads its script from a file"
    );
    // No inline script or handler the CSP would refuse, and nothing from another origin.
    assert_eq!(html.matches("<script").count(), 1, "one script tag: {html}");
    let handler = html.match_indices(" on").any(|(i, _)| {
        let rest = &html[i + 3..];
        let name_len = rest.chars().take_while(char::is_ascii_lowercase).count();
        name_len > 0 && rest[name_len..].starts_with('=')
    });
    assert!(!handler, "no inline event handler attribute: {html}");
    assert!(
        !html.contains("http://") && !html.contains("https://"),
        "no other origin"
    );
}

#[tokio::test]
async fn unknown_files_are_404_and_the_api_sets_no_cors_header() {
    let d = TestDaemon::start().await;
    let coord = d.team("qa").await;
    let http = reqwest::Client::new();
    for path in [
        "/dashboard/nope.js",
        "/dashboard/..%2Fsrc%2Fmain.rs",
        "/dashboard/",
    ] {
        let res = http
            .get(format!("{}{path}", d.url))
            .send()
            .await
            .expect("GET");
        assert_eq!(res.status(), 404, "{path}");
    }

    // The API, with and without an Origin, preflight included: never an Access-Control header.
    let preflight = http
        .request(
            reqwest::Method::OPTIONS,
            format!("{}/v1/teams/qa/tasks", d.url),
        )
        .header("Origin", "https://evil.example")
        .header("Access-Control-Request-Method", "GET")
        .header("Access-Control-Request-Headers", "authorization")
        .send()
        .await
        .expect("OPTIONS");
    assert!(
        !preflight.status().is_success(),
        "a preflight is not accepted"
    );
    assert_no_cors("a preflight", preflight.headers());
    let created = coord
        .send(
            reqwest::Method::POST,
            &coord.t("/tasks"),
            Some(
                json!({"subject": "s", "prefix": "TEST"})
                    .to_string()
                    .into_bytes(),
            ),
            &[("Origin", "https://evil.example")],
        )
        .await
        .expect_status(201);
    assert_no_cors("POST /tasks", &created.headers);
    for path in [coord.t("/tasks"), coord.t("/messages"), "/healthz".into()] {
        let r = coord
            .send(
                reqwest::Method::GET,
                &path,
                None,
                &[("Origin", "https://evil.example")],
            )
            .await
            .expect_status(200);
        assert_no_cors(&path, &r.headers);
    }
}

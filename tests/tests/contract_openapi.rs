//! The OpenAPI document at `/openapi.json` against the real router and handlers.
//!
//! The router and the document come from one list (`daemon/src/http/routes.rs`), so they
//! cannot name different routes; these tests check what that list cannot promise. The fast
//! tests read the document from an in-process daemon: it is OpenAPI 3.1, every documented
//! operation reaches its handler, no documented path takes a method the document does not name,
//! every operation documents the statuses its extractors can produce in the one error shape,
//! and the bounds follow the settings. `schemathesis_finds_no_server_error_and_no_drift` (in
//! `contract_openapi/fuzz.rs`) runs schemathesis against a real `huddled` process.

#[path = "contract_openapi/fuzz.rs"]
mod fuzz;

use huddle_tests::TestDaemon;
use reqwest::Method;
use serde_json::Value;
use std::collections::BTreeSet;

async fn fetch_document(d: &TestDaemon) -> Value {
    let reply = reqwest::get(format!("{}/openapi.json", d.url))
        .await
        .expect("GET /openapi.json");
    assert_eq!(reply.status(), 200);
    reply.json().await.expect("the document is JSON")
}

fn operations(doc: &Value) -> Vec<(String, String, &Value)> {
    let mut ops = Vec::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for (method, op) in item.as_object().expect("path item") {
            ops.push((method.clone(), path.clone(), op));
        }
    }
    ops
}

/// Follows a `$ref` within the document.
fn resolve<'a>(doc: &'a Value, v: &'a Value) -> &'a Value {
    match v["$ref"].as_str() {
        Some(r) => doc
            .pointer(r.trim_start_matches('#'))
            .unwrap_or_else(|| panic!("dangling $ref {r}")),
        None => v,
    }
}

#[tokio::test]
async fn the_document_is_openapi_3_1_with_unique_operation_ids() {
    let d = TestDaemon::start().await;
    let doc = fetch_document(&d).await;
    assert!(
        doc["openapi"]
            .as_str()
            .is_some_and(|v| v.starts_with("3.1")),
        "not OpenAPI 3.1: {}",
        doc["openapi"]
    );
    let ids: Vec<&str> = operations(&doc)
        .iter()
        .map(|(m, p, op)| {
            op["operationId"]
                .as_str()
                .unwrap_or_else(|| panic!("{m} {p} has no operationId"))
        })
        .collect();
    let unique: BTreeSet<&str> = ids.iter().copied().collect();
    assert_eq!(unique.len(), ids.len(), "duplicate operationIds: {ids:?}");
}

/// Without a token every documented operation reaches its handler: 401 where the document asks
/// for the bearer token, 200 where it does not. Never the fallback's 404 or a 405.
#[tokio::test]
async fn every_documented_operation_is_routed_and_secured_as_documented() {
    let d = TestDaemon::start().await;
    let doc = fetch_document(&d).await;
    assert_eq!(
        doc["components"]["securitySchemes"]["bearer"]["scheme"],
        "bearer"
    );
    let client = reqwest::Client::new();
    for (method, path, op) in operations(&doc) {
        let public = op["security"] == serde_json::json!([{}]);
        let url = path
            .replace("{team}", "qa")
            .replace("{id}", "TEST-001")
            .replace("{name}", "coordinator")
            .replace("{pointer}", "a/b");
        let method = Method::from_bytes(method.to_uppercase().as_bytes()).expect("method");
        let reply = client
            .request(method.clone(), format!("{}{url}", d.url))
            .send()
            .await
            .expect("request sent");
        let expected = if public { 200 } else { 401 };
        assert_eq!(
            reply.status().as_u16(),
            expected,
            "{method} {path} without a token (public: {public})"
        );
        if !public {
            let body: Value = reply.json().await.expect("JSON error body");
            assert_eq!(
                body["error"]["code"], "unauthorized",
                "{method} {path}: {body}"
            );
        }
    }
}

/// On every documented path, a method the document does not name is refused with 405: nothing
/// is routed there beyond what the document says.
#[tokio::test]
async fn documented_paths_take_only_their_documented_methods() {
    let d = TestDaemon::start().await;
    let doc = fetch_document(&d).await;
    let client = reqwest::Client::new();
    let mut checked = 0;
    for (path, item) in doc["paths"].as_object().expect("paths") {
        let url = path
            .replace("{team}", "qa")
            .replace("{id}", "TEST-001")
            .replace("{name}", "coordinator")
            .replace("{pointer}", "a/b");
        for method in ["get", "post", "put", "patch", "delete"] {
            if item.get(method).is_some() {
                continue;
            }
            let verb = Method::from_bytes(method.to_uppercase().as_bytes()).unwrap();
            let reply = client
                .request(verb, format!("{}{url}", d.url))
                .send()
                .await
                .expect("request sent");
            assert_eq!(
                reply.status().as_u16(),
                405,
                "{method} {path} is routed but not documented"
            );
            checked += 1;
        }
    }
    assert!(checked > 50, "only {checked} method/path pairs checked");
}

/// The statuses the shared extractors can produce, operation by operation, each in the error
/// shape (`ErrorBody`).
#[tokio::test]
async fn every_operation_documents_its_error_statuses_in_the_one_error_shape() {
    let d = TestDaemon::start().await;
    let doc = fetch_document(&d).await;
    let error_body = serde_json::json!({ "$ref": "#/components/schemas/ErrorBody" });
    for (method, path, op) in operations(&doc) {
        let responses = op["responses"].as_object().expect("responses");
        let public = op["security"] == serde_json::json!([{}]);
        let mut wanted: Vec<&str> = Vec::new();
        if !public {
            // Identity (401), rate limit (429), store errors (500, 503).
            wanted.extend(["401", "429", "500", "503"]);
        }
        if path.contains("{team}") && path != "/v1/teams/{team}/agents" {
            wanted.push("404");
        }
        let has_input = op.get("requestBody").is_some()
            || op["parameters"]
                .as_array()
                .is_some_and(|ps| ps.iter().any(|p| p["in"] != "path"));
        if has_input {
            wanted.push("400");
        }
        if op.get("requestBody").is_some() {
            wanted.push("413");
        }
        if op["parameters"]
            .as_array()
            .is_some_and(|ps| ps.iter().any(|p| p["name"] == "If-Match"))
        {
            wanted.push("412");
        }
        for status in wanted {
            assert!(
                responses.contains_key(status),
                "{method} {path} does not document {status}"
            );
        }
        for (status, response) in responses {
            if status.starts_with('2') || path == "/readyz" {
                continue;
            }
            let response = resolve(&doc, response);
            assert_eq!(
                response["content"]["application/json"]["schema"], error_body,
                "{method} {path} {status} is not the error shape"
            );
        }
        if responses.contains_key("401") {
            let r = resolve(&doc, &responses["401"]);
            assert!(
                r["headers"].get("WWW-Authenticate").is_some(),
                "{method} {path}"
            );
        }
        if responses.contains_key("429") {
            let r = resolve(&doc, &responses["429"]);
            assert!(r["headers"].get("Retry-After").is_some(), "{method} {path}");
        }
    }
    let info = &doc["components"]["schemas"]["ErrorInfo"];
    assert_eq!(info["required"], serde_json::json!(["code", "message"]));
}

#[tokio::test]
async fn documented_bounds_follow_the_daemons_settings() {
    let d = TestDaemon::start_with(|s| {
        s.limits.max_page_size = 7;
        s.tasks.max_wait_ms = 1234;
        s.limits.max_batch = 9;
    })
    .await;
    let doc = fetch_document(&d).await;
    let limit = |path: &str| {
        doc["paths"][path]["get"]["parameters"]
            .as_array()
            .and_then(|ps| ps.iter().find(|p| p["name"] == "limit"))
            .map(|p| p["schema"]["maximum"].clone())
    };
    for path in [
        "/v1/teams/{team}/tasks",
        "/v1/teams/{team}/messages",
        "/v1/teams/{team}/inbox",
        "/v1/teams/{team}/memory-history",
    ] {
        assert_eq!(limit(path), Some(7.into()), "{path}");
    }
    let schemas = &doc["components"]["schemas"];
    assert_eq!(
        schemas["ClaimRequest"]["properties"]["waitMs"]["maximum"],
        1234
    );
    assert_eq!(
        schemas["CompleteTasks"]["properties"]["tasks"]["maxItems"],
        9
    );
    // A test run's bounds: the fixed text lengths and the configured outcome limits.
    let run = &schemas["NewTestRun"]["properties"];
    assert_eq!(run["project"]["maxLength"], 200);
    assert_eq!(run["tree"]["maxLength"], 200);
    assert_eq!(run["outcomes"]["maxItems"], 10_000);
    assert_eq!(
        schemas["TestResultRecord"]["properties"]["nodeid"]["maxLength"],
        1_000
    );
    // test_settings: leases from 50 ms; the default maximum.
    assert_eq!(schemas["Heartbeat"]["properties"]["leaseMs"]["minimum"], 50);
    assert_eq!(
        schemas["ClaimRequest"]["properties"]["leaseMs"]["maximum"],
        3_600_000
    );
    let inbox_wait = doc["paths"]["/v1/teams/{team}/inbox"]["get"]["parameters"]
        .as_array()
        .and_then(|ps| ps.iter().find(|p| p["name"] == "waitMs"))
        .map(|p| p["schema"]["maximum"].clone());
    assert_eq!(inbox_wait, Some(1234.into()));
    // What the document adds to utoipa's output: item patterns, SSE payload schemas.
    for (schema, field) in [
        ("ClaimRequest", "prefixes"),
        ("NewTask", "blockedBy"),
        ("TaskPatch", "addBlockedBy"),
    ] {
        let pattern = &schemas[schema]["properties"][field]["items"]["pattern"];
        assert!(
            pattern.is_string(),
            "{schema}.{field} items have no pattern"
        );
    }
    for (event, payload) in [("SseMessage", "Message"), ("SseChange", "Event")] {
        assert_eq!(
            schemas[event]["properties"]["data"]["contentSchema"]["$ref"],
            format!("#/components/schemas/{payload}")
        );
    }
    // And the daemon enforces what the document says.
    let api = d.team("qa").await;
    api.get(&api.t("/memory-history?limit=8"))
        .await
        .expect_error(400, "invalid_field");
    api.get(&api.t("/memory-history?limit=7"))
        .await
        .expect_status(200);
}

/// Found by schemathesis: serde reads a struct from a JSON array, field by field, so
/// `["qa"]` created a team. The document says objects; the daemon now agrees.
#[tokio::test]
async fn request_bodies_are_objects_never_positional_arrays() {
    let d = TestDaemon::start().await;
    d.admin()
        .post("/v1/teams", serde_json::json!(["qa"]))
        .await
        .expect_error(400, "invalid_field");
    let api = d.team("qa").await;
    api.post(
        &api.t("/tasks"),
        serde_json::json!([["TEST-001", null, "s"]]),
    )
    .await
    .expect_error(400, "invalid_field");
    api.post(&api.t("/tasks/claim"), serde_json::json!([null, null]))
        .await
        .expect_error(400, "invalid_field");
    api.post(
        &api.t("/tasks/complete"),
        serde_json::json!({ "tasks": [["TEST-001"]] }),
    )
    .await
    .expect_error(400, "invalid_field");
    // Objects, and empty bodies where every field is optional, still work.
    api.post(
        &api.t("/tasks"),
        serde_json::json!([{ "id": "TEST-001", "subject": "s" }]),
    )
    .await
    .expect_status(201);
    let tester = d.agent("qa", "tester-1", "tester").await;
    tester
        .send(Method::POST, &tester.t("/tasks/claim"), None, &[])
        .await
        .expect_status(200);
}

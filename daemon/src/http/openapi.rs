//! The OpenAPI 3.1 document served at `GET /openapi.json`.
//!
//! It is generated, not written: `#[utoipa::path]` on every handler names its parameters, body
//! and statuses, `routes.rs` registers each handler once for both the router and the document,
//! the wire types in `huddle_wire` derive `ToSchema` (feature `openapi`), and [`ApiDoc`] adds
//! the info, shared components and security. [`document`] then fills in the bounds that come from the daemon's
//! settings (page sizes, long-poll waits, leases, batch sizes), so the document describes this
//! daemon as configured. `tests/tests/contract_openapi.rs` checks it against the router and runs
//! schemathesis against a live daemon with it.

use super::openapi_types::*;
use super::{memory, AppState};
use crate::config::Settings;
use crate::store::test_history::{MAX_PROJECT_CHARS, MAX_TREE_CHARS};
use axum::extract::State;
use axum::Json;
use huddle_wire::{ErrorBody, Event, Message};
use serde_json::{json, Value};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::OpenApi;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "huddle",
        description = "Coordination daemon for AI agent teams: tasks with leases and dependencies, \
                       a message bus, shared memory and change streams. Every error answers \
                       `{\"error\": {\"code\", \"message\", \"details\"}}`."
    ),
    // Every other path comes from `routes.rs`, which registers and documents each route once.
    paths(memory::get_pointer),
    components(
        schemas(ErrorBody, Event, Message),
        responses(
            BadRequest,
            Unauthorized,
            Forbidden,
            NotFound,
            Conflict,
            StaleVersion,
            TooLarge,
            TooManyRequests,
            Internal,
            Unavailable
        )
    ),
    modifiers(&BearerAuth),
    security(("bearer" = [])),
    tags(
        (name = "teams", description = "Teams and their agents"),
        (name = "tasks", description = "Tasks, claims and leases"),
        (name = "messages", description = "The message bus and inboxes"),
        (name = "memory", description = "The team's shared JSON document"),
        (name = "streams", description = "Server-Sent Events"),
        (name = "history", description = "Test runs, flaky tests and regressions"),
        (name = "webhooks", description = "Outbound notices to people: signed, retried, logged"),
        (name = "spend", description = "The model budget, and the ledger of model calls checked against it"),
        (name = "health", description = "Liveness, readiness and this document"),
    )
)]
pub struct ApiDoc;

/// Every operation but the health checks and this document takes `Authorization: Bearer`.
struct BearerAuth;

impl utoipa::Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some(
                        "The admin token (teams and agents) or an agent's token (its team)",
                    ))
                    .build(),
            ),
        );
    }
}

use huddle_wire::limits::{NAME_PATTERN, PREFIX_PATTERN as PREFIX, TASK_ID_PATTERN as TASK_ID};

/// The document as the routes describe it, before this daemon's bounds are filled in; built
/// once, since it never changes while the daemon runs.
fn described() -> &'static Value {
    static DESCRIBED: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
    DESCRIBED.get_or_init(|| {
        let (_, doc) = super::routes::api().split_for_parts();
        serde_json::to_value(doc).unwrap_or_else(|_| json!({}))
    })
}

/// The document with this daemon's configured bounds filled in, as JSON.
pub fn document(settings: &Settings) -> Value {
    let mut doc = described().clone();
    not_null(&mut doc);
    // Patterns of array items, which utoipa cannot put on a `Vec<String>` field.
    for (schema, field, pattern) in [
        ("ClaimRequest", "prefixes", PREFIX),
        ("NewTask", "blockedBy", TASK_ID),
        ("TaskPatch", "addBlockedBy", TASK_ID),
    ] {
        let items = property(&mut doc, schema, field).and_then(|p| p.get_mut("items"));
        extend_schema(items, &json!({ "pattern": pattern }));
    }
    // A budget's prices, by model (utoipa cannot bound a map's size).
    extend_schema(
        property(&mut doc, "BudgetSettings", "prices"),
        &json!({ "maxProperties": huddle_wire::MAX_PRICED_MODELS }),
    );
    // An event's `data` is JSON text; say which schema it holds (utoipa cannot).
    for (event, payload) in [("SseMessage", "Message"), ("SseChange", "Event")] {
        let schema = json!({ "$ref": format!("#/components/schemas/{payload}") });
        extend_schema(
            property(&mut doc, event, "data"),
            &json!({ "contentSchema": schema }),
        );
    }
    let (t, l) = (&settings.tasks, &settings.limits);
    let page = json!({ "minimum": 1, "maximum": l.max_page_size });
    let wait = json!({ "minimum": 0, "maximum": t.max_wait_ms });
    let lease = json!({ "minimum": t.min_lease_ms, "maximum": t.max_lease_ms });
    for path in [
        "/v1/teams/{team}/tasks",
        "/v1/teams/{team}/messages",
        "/v1/teams/{team}/messages/search",
        "/v1/teams/{team}/progress",
        "/v1/teams/{team}/inbox",
        "/v1/teams/{team}/memory-history",
        "/v1/teams/{team}/tasks/{id}/events",
    ] {
        extend_schema(query_param(&mut doc, path, "limit"), &page);
    }
    extend_schema(
        query_param(&mut doc, "/v1/teams/{team}/inbox", "waitMs"),
        &wait,
    );
    extend_schema(property(&mut doc, "ClaimRequest", "waitMs"), &wait);
    extend_schema(property(&mut doc, "ClaimRequest", "leaseMs"), &lease);
    extend_schema(property(&mut doc, "Heartbeat", "leaseMs"), &lease);
    extend_schema(
        property(&mut doc, "CompleteTasks", "tasks"),
        &json!({ "minItems": 1, "maxItems": l.max_batch }),
    );
    extend_schema(
        property(&mut doc, "PostMessages", "messages"),
        &json!({ "minItems": 1, "maxItems": l.max_batch }),
    );
    // A test run's bounds (`store/test_history.rs`): text is counted in characters, as
    // JSON Schema's `maxLength` counts.
    for (field, max) in [("project", MAX_PROJECT_CHARS), ("tree", MAX_TREE_CHARS)] {
        extend_schema(
            property(&mut doc, "NewTestRun", field),
            &json!({ "minLength": 1, "maxLength": max }),
        );
    }
    extend_schema(
        property(&mut doc, "NewTestRun", "outcomes"),
        &json!({ "maxItems": l.max_test_outcomes }),
    );
    extend_schema(
        property(&mut doc, "TestResultRecord", "nodeid"),
        &json!({ "minLength": 1, "maxLength": l.max_nodeid_chars }),
    );
    as_strict_as_the_server(&mut doc, l.max_text_chars);
    doc
}

/// Rules the handlers check that the wire types cannot carry into the document, so that a
/// request the document calls valid is never refused as malformed (schemathesis's
/// `positive_data_acceptance` check holds the two together).
fn as_strict_as_the_server(doc: &mut Value, max_text_chars: usize) {
    // Headers, wherever an operation takes them (`http/messages.rs`, `http/streams.rs`).
    let headers = [
        ("Idempotency-Key", json!({ "pattern": "^[!-~]{1,255}$" })),
        ("Last-Event-ID", json!({ "pattern": "^[0-9]{1,18}$" })),
    ];
    if let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) {
        let operations = paths.values_mut().filter_map(Value::as_object_mut);
        for op in operations.flat_map(|item| item.values_mut()) {
            let Some(params) = op.get_mut("parameters").and_then(Value::as_array_mut) else {
                continue;
            };
            for param in params.iter_mut().filter(|p| p["in"] == "header") {
                if let Some((_, rule)) = headers.iter().find(|(name, _)| param["name"] == *name) {
                    extend_schema(param.get_mut("schema"), rule);
                }
            }
        }
    }
    // A note is text: not blank (`store::rules::validate::text`), bounded.
    extend_schema(
        property(doc, "ReleaseTask", "note"),
        &json!({ "minLength": 1, "maxLength": max_text_chars, "pattern": "\\S" }),
    );
    extend_schema(
        property(doc, "NewTestRun", "startedAt"),
        &json!({ "format": "date-time" }),
    );
    // A task names its id or the prefix to number it from.
    extend_schema(
        doc.pointer_mut("/components/schemas/NewTask"),
        &json!({ "anyOf": [{ "required": ["id"] }, { "required": ["prefix"] }] }),
    );
    // An answer says something: words, a decision, or both (`store::gate_decisions::decide`).
    // Not `min_properties` on the type: utoipa-gen 5.5 writes it as `maxProperties`.
    extend_schema(
        doc.pointer_mut("/components/schemas/AnswerRequest"),
        &json!({ "anyOf": [{ "required": ["answer"] }, { "required": ["decision"] }] }),
    );
    // A merge patch of the memory document must leave it an object, so it is one itself.
    extend_schema(
        doc.pointer_mut(
            "/paths/~1v1~1teams~1{team}~1memory/patch/requestBody/content/application~1merge-patch+json/schema",
        ),
        &json!({ "type": "object" }),
    );
    // RFC 6902 operations (utoipa sees a list of any JSON).
    let pointer = json!({ "type": "string", "pattern": "^(/[^/]*)*$" });
    extend_schema(
        doc.pointer_mut(
            "/paths/~1v1~1teams~1{team}~1memory/patch/requestBody/content/application~1json-patch+json/schema/items",
        ),
        &json!({
            "type": "object",
            "required": ["op", "path"],
            "properties": {
                "op": { "enum": ["add", "remove", "replace", "move", "copy", "test"] },
                "path": pointer,
                "from": pointer,
                "value": {},
            },
        }),
    );
    let search = "/v1/teams/{team}/messages/search";
    for field in ["since", "until"] {
        extend_schema(
            query_param(doc, search, field),
            &json!({ "format": "date-time" }),
        );
    }
    extend_schema(query_param(doc, search, "q"), &json!({ "maxLength": 512 }));
    // A stream's `?to=` names an agent, a role or `*` (empty: no filter).
    let to = json!({ "pattern": format!("^$|{NAME_PATTERN}|^\\*$") });
    extend_schema(
        query_param(doc, "/v1/teams/{team}/messages/stream", "to"),
        &to,
    );
}

/// Parameters are strings on the wire and an empty body reads as `{}`, so neither can be JSON
/// `null`; utoipa writes `Option<T>` as "T or null", which would invite clients to send it.
fn not_null(doc: &mut Value) {
    let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) else {
        return;
    };
    for operation in paths.values_mut().filter_map(Value::as_object_mut) {
        for op in operation.values_mut() {
            if let Some(params) = op.get_mut("parameters").and_then(Value::as_array_mut) {
                for schema in params.iter_mut().filter_map(|p| p.get_mut("schema")) {
                    drop_null(schema);
                }
            }
            if let Some(content) = op
                .pointer_mut("/requestBody/content")
                .and_then(Value::as_object_mut)
            {
                for schema in content.values_mut().filter_map(|m| m.get_mut("schema")) {
                    drop_null(schema);
                }
            }
        }
    }
}

/// `{"type": ["string", "null"]}` → `{"type": "string"}`; `{"oneOf": [{"type": "null"}, X]}` → X.
fn drop_null(schema: &mut Value) {
    if let Some(Value::Array(types)) = schema.get_mut("type") {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            schema["type"] = types[0].clone();
        }
    }
    let inner = match schema.get("oneOf").and_then(Value::as_array) {
        Some(one_of) if one_of.len() == 2 && one_of[0] == json!({ "type": "null" }) => {
            one_of[1].clone()
        }
        _ => return,
    };
    *schema = inner;
}

/// Adds the keys of `extra` to a schema (or does nothing when the schema is missing).
fn extend_schema(schema: Option<&mut Value>, extra: &Value) {
    if let (Some(Value::Object(schema)), Value::Object(extra)) = (schema, extra) {
        for (k, v) in extra {
            schema.insert(k.clone(), v.clone());
        }
    }
}

fn query_param<'a>(doc: &'a mut Value, path: &str, name: &str) -> Option<&'a mut Value> {
    doc.pointer_mut(&format!(
        "/paths/{}/get/parameters",
        path.replace('/', "~1")
    ))?
    .as_array_mut()?
    .iter_mut()
    .find(|p| p["name"] == name && p["in"] == "query")?
    .get_mut("schema")
}

fn property<'a>(doc: &'a mut Value, schema: &str, name: &str) -> Option<&'a mut Value> {
    doc.pointer_mut(&format!("/components/schemas/{schema}/properties/{name}"))
}

/// This document, with this daemon's bounds.
#[utoipa::path(
    get,
    path = "/openapi.json",
    operation_id = "openapi",
    tag = "health",
    security(()),
    responses((status = 200, description = "The OpenAPI 3.1 document", body = Object))
)]
pub async fn openapi_json(State(state): State<AppState>) -> Json<Value> {
    Json(document(&state.settings))
}

#[cfg(test)]
mod tests {
    use super::*;
    use huddle_wire::limits::{MESSAGE_TYPE_PATTERN, NAME_PATTERN, TASK_ID_PATTERN};

    /// utoipa takes patterns only as literals on the wire types; this pins those literals to
    /// the constants validation uses, so the document cannot promise other rules.
    #[test]
    fn documented_patterns_are_the_validated_ones() {
        let doc = document(&Settings::default());
        let pattern = |schema: &str, field: &str| {
            doc.pointer(&format!(
                "/components/schemas/{schema}/properties/{field}/pattern"
            ))
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| panic!("no pattern on {schema}.{field}"))
        };
        assert_eq!(pattern("CreateTeam", "name"), NAME_PATTERN);
        assert_eq!(pattern("CreateAgent", "name"), NAME_PATTERN);
        assert_eq!(pattern("NewTask", "id"), TASK_ID_PATTERN);
        assert_eq!(pattern("NewTask", "prefix"), PREFIX);
        assert_eq!(pattern("PostMessage", "type"), MESSAGE_TYPE_PATTERN);
    }
}

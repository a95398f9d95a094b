//! Every tool's `outputSchema`, taken from the OpenAPI document's component schemas — the same
//! text that describes the HTTP answers, so the two cannot drift. MCP clients validate a tool's
//! structured content against it (the Python SDK does), so the tool tests check each answer too.

use serde_json::{json, Map, Value};
use std::collections::BTreeSet;
use std::sync::Arc;

/// What a tool answers, in terms of the document's components.
pub enum Output {
    /// One component, e.g. `Task`.
    Component(&'static str),
    /// A schema written here, whose `$ref`s name components (`#/components/schemas/X`).
    Inline(Value),
}

/// The output schema: an object that is the answer or the error shape (`anyOf`), with every
/// component either reaches under `$defs`. A tool error carries `{"error": …}` as its structured
/// content; the TypeScript SDK 1.x validates an error result against the output schema too, and
/// would otherwise turn every refusal into `-32602 Structured content does not match`.
pub fn schema(doc: &Value, output: Output) -> Arc<Map<String, Value>> {
    let answer = match output {
        Output::Component(name) => component(doc, name).clone(),
        Output::Inline(value) => value,
    };
    let mut root = json!({
        "type": "object",
        "anyOf": [answer, { "$ref": format!("{PREFIX}ErrorBody") }],
    });
    let mut wanted = BTreeSet::new();
    collect_refs(&root, &mut wanted);
    let mut defs = Map::new();
    while let Some(name) = wanted.pop_first() {
        if defs.contains_key(&name) {
            continue;
        }
        let mut def = component(doc, &name).clone();
        collect_refs(&def, &mut wanted);
        rewrite_refs(&mut def);
        defs.insert(name, def);
    }
    rewrite_refs(&mut root);
    let mut root = match root {
        Value::Object(map) => map,
        other => Map::from_iter([("allOf".to_string(), json!([other]))]),
    };
    root.entry("type").or_insert_with(|| json!("object"));
    if !defs.is_empty() {
        root.insert("$defs".into(), Value::Object(defs));
    }
    Arc::new(root)
}

fn component<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc.pointer(&format!("/components/schemas/{name}"))
        .unwrap_or_else(|| panic!("the OpenAPI document has no component schema {name}"))
}

const PREFIX: &str = "#/components/schemas/";

fn collect_refs(value: &Value, into: &mut BTreeSet<String>) {
    match value {
        Value::Object(map) => {
            if let Some(name) = map.get("$ref").and_then(Value::as_str) {
                if let Some(name) = name.strip_prefix(PREFIX) {
                    into.insert(name.to_string());
                }
            }
            map.values().for_each(|v| collect_refs(v, into));
        }
        Value::Array(items) => items.iter().for_each(|v| collect_refs(v, into)),
        _ => {}
    }
}

fn rewrite_refs(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if let Some(Value::String(r)) = map.get_mut("$ref") {
                if let Some(name) = r.strip_prefix(PREFIX) {
                    *r = format!("#/$defs/{name}");
                }
            }
            map.values_mut().for_each(rewrite_refs);
        }
        Value::Array(items) => items.iter_mut().for_each(rewrite_refs),
        _ => {}
    }
}

/// `{"$ref": …}` to a component, for inline schemas.
pub fn of(name: &str) -> Value {
    json!({ "$ref": format!("{PREFIX}{name}") })
}

/// Which component (or inline schema) each tool answers with.
pub fn output_of(tool: &str) -> Output {
    let tasks = json!({
        "type": "object",
        "properties": { "tasks": { "type": "array", "items": of("Task") } },
        "required": ["tasks"],
    });
    match tool {
        "task_create" => Output::Inline(tasks),
        "task_claim" => {
            let mut claimed = tasks;
            claimed["properties"]["lease"] = json!({
                "type": "object",
                "description": "Present when a task was claimed: how long it is held and how to keep it",
                "properties": {
                    "leaseMs": { "type": "integer" },
                    "expiresAt": { "type": "string" },
                    "renew": { "type": "string" },
                },
                "required": ["leaseMs", "expiresAt", "renew"],
            });
            Output::Inline(claimed)
        }
        "task_list" => Output::Inline(super::compact_tasks::schema()),
        "task_get" | "task_update" | "task_heartbeat" | "task_release" | "task_complete"
        | "task_fail" | "task_answer" => Output::Component("Task"),
        "task_gate" | "task_ask" => Output::Component("Gated"),
        "task_decision" => Output::Component("GateRecord"),
        "task_why_not_ready" => Output::Component("WhyNotReady"),
        "agent_list" => Output::Component("AgentList"),
        "whoami" => Output::Inline(json!({
            "type": "object",
            "properties": {
                "team": { "type": "string" },
                "agent": { "type": "string" },
                "role": of("Role"),
                "claimPrefixes": { "type": "array", "items": { "type": "string" } },
                "maxWaitMs": { "type": "integer" },
                "defaultLeaseMs": { "type": "integer" },
                "minLeaseMs": { "type": "integer" },
                "maxLeaseMs": { "type": "integer" },
                "questions": of("TeamQuestions"),
            },
            "required": ["team", "agent", "role", "claimPrefixes", "maxWaitMs",
                "defaultLeaseMs", "minLeaseMs", "maxLeaseMs"],
        })),
        "msg_post" => Output::Inline(json!({
            "type": "object",
            "properties": { "message": of("Message"), "replayed": { "type": "boolean" } },
            "required": ["message", "replayed"],
        })),
        "msg_list" | "inbox_read" => Output::Component("MessageList"),
        "msg_search" => Output::Component("MessageSearchPage"),
        "inbox_ack" => Output::Component("InboxCursor"),
        "history_post" => Output::Component("TestRunSummary"),
        "history_get" => Output::Inline(json!({
            "type": "object",
            "anyOf": [of("TestHistory"), of("FlakyTests"), of("Regressions")],
        })),
        "memory_get" => Output::Inline(json!({
            "type": "object",
            "anyOf": [
                of("Memory"),
                { "type": "object", "properties": { "value": {} }, "required": ["value"] },
            ],
        })),
        "memory_patch" => Output::Component("Memory"),
        "spend_reserve" | "spend_settle" => Output::Component("SpendCall"),
        "spend_report" => Output::Component("SpendReport"),
        "budget_get" | "budget_set" => Output::Component("BudgetView"),
        // Upstream's result shapes differ per operation (docs/mcp.md lists them).
        "team_msg" => Output::Inline(json!({ "type": "object" })),
        other => panic!("tool {other} has no output schema"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_component_brings_every_component_it_reaches_and_nothing_else() {
        let doc = json!({"components": {"schemas": {
            "A": {"type": "object", "properties": {"b": {"$ref": "#/components/schemas/B"}}},
            "B": {"type": "array", "items": {"$ref": "#/components/schemas/C"}},
            "C": {"type": "string"},
            "D": {"type": "integer"},
            "ErrorBody": {"type": "object", "properties": {
                "error": {"$ref": "#/components/schemas/ErrorInfo"}}},
            "ErrorInfo": {"type": "object"},
        }}});
        let out = schema(&doc, Output::Component("A"));
        assert_eq!(out["type"], "object");
        assert_eq!(out["anyOf"][0]["properties"]["b"]["$ref"], "#/$defs/B");
        assert_eq!(out["anyOf"][1]["$ref"], "#/$defs/ErrorBody");
        let defs = out["$defs"].as_object().unwrap();
        assert_eq!(
            defs.keys().collect::<Vec<_>>(),
            ["B", "C", "ErrorBody", "ErrorInfo"]
        );
        assert_eq!(defs["B"]["items"]["$ref"], "#/$defs/C");
    }
}

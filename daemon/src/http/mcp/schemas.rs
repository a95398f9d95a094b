//! The tools' schemas completed with this daemon's settings: input bounds equal to what the
//! server accepts (waits, leases, page and batch sizes), and every tool's `outputSchema`.

use super::outputs;
use super::outputs::output_of;
use super::tools::Huddle;
use crate::config::Settings;
use huddle_wire::limits::MAX_CLAIM_BATCH;
use rmcp::handler::server::router::tool::ToolRouter;
use serde_json::{json, Map, Value};
use std::sync::Arc;

pub fn complete(router: &mut ToolRouter<Huddle>, settings: &Settings) {
    let doc = crate::http::openapi::document(settings);
    let t = &settings.tasks;
    let bounds = [
        ("waitMs", 0, t.mcp_max_wait_ms),
        ("leaseMs", t.min_lease_ms, t.max_lease_ms),
        ("limit", 1, settings.limits.max_page_size as u64),
        ("max", 1, u64::from(MAX_CLAIM_BATCH)),
    ];
    for (name, route) in router.map.iter_mut() {
        let mut input = (*route.attr.input_schema).clone();
        if let Some(Value::Object(properties)) = input.get_mut("properties") {
            for (field, min, max) in bounds {
                if let Some(Value::Object(p)) = properties.get_mut(field) {
                    bound(p, min, max);
                }
            }
        }
        route.attr.input_schema = Arc::new(input);
        route.attr.output_schema = Some(outputs::schema(&doc, output_of(name)));
    }
}

/// `minimum`/`maximum` on an integer property (schemars writes `["integer", "null"]` for an
/// optional one and a `format` with its own range, which the bounds replace).
fn bound(property: &mut Map<String, Value>, min: u64, max: u64) {
    property.insert("minimum".into(), json!(min));
    property.insert("maximum".into(), json!(max));
    if let Some(Value::String(d)) = property.get_mut("description") {
        d.push_str(&format!(" Between {min} and {max}."));
    }
}

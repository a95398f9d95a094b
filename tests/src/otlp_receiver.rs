//! An OTLP/HTTP trace receiver on port 0 for tests: decodes what an exporter posts to
//! `/v1/traces` with the protocol's own definitions (`opentelemetry-proto`) and keeps every
//! span, with its service's name.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::post;
use axum::Router;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::any_value::Value;
use opentelemetry_proto::tonic::common::v1::KeyValue;
use prost::Message;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// One span as received; ids in hex, attributes as text.
#[derive(Debug, Clone)]
pub struct Span {
    pub service: String,
    pub trace_id: String,
    pub span_id: String,
    /// Empty for a trace's root.
    pub parent_span_id: String,
    pub name: String,
    pub attributes: BTreeMap<String, String>,
}

pub struct Receiver {
    /// The base URL an exporter is given (`OTEL_EXPORTER_OTLP_ENDPOINT`).
    pub base_url: String,
    spans: Arc<Mutex<Vec<Span>>>,
    _server: tokio::task::JoinHandle<()>,
}

impl Receiver {
    pub async fn start() -> Receiver {
        let spans = Arc::new(Mutex::new(Vec::new()));
        let app = Router::new()
            .route("/v1/traces", post(take))
            .with_state(spans.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base_url = format!("http://{}", listener.local_addr().unwrap());
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Receiver {
            base_url,
            spans,
            _server: server,
        }
    }

    /// Every span so far.
    pub fn spans(&self) -> Vec<Span> {
        self.spans.lock().unwrap().clone()
    }
}

fn text(kv: &KeyValue) -> String {
    match kv.value.as_ref().and_then(|v| v.value.as_ref()) {
        Some(Value::StringValue(s)) => s.clone(),
        Some(Value::IntValue(i)) => i.to_string(),
        Some(Value::DoubleValue(d)) => d.to_string(),
        Some(Value::BoolValue(b)) => b.to_string(),
        other => format!("{other:?}"),
    }
}

async fn take(State(spans): State<Arc<Mutex<Vec<Span>>>>, body: Bytes) -> (StatusCode, Vec<u8>) {
    let Ok(request) = ExportTraceServiceRequest::decode(body) else {
        return (StatusCode::BAD_REQUEST, Vec::new());
    };
    let mut got = spans.lock().unwrap();
    for resource_spans in request.resource_spans {
        let service = resource_spans
            .resource
            .iter()
            .flat_map(|r| &r.attributes)
            .find(|kv| kv.key == "service.name")
            .map(text)
            .unwrap_or_default();
        for scope in resource_spans.scope_spans {
            for span in scope.spans {
                got.push(Span {
                    service: service.clone(),
                    trace_id: hex::encode(&span.trace_id),
                    span_id: hex::encode(&span.span_id),
                    parent_span_id: hex::encode(&span.parent_span_id),
                    name: span.name,
                    attributes: span
                        .attributes
                        .iter()
                        .map(|kv| (kv.key.clone(), text(kv)))
                        .collect(),
                });
            }
        }
    }
    // An empty ExportTraceServiceResponse: everything accepted.
    (StatusCode::OK, Vec::new())
}

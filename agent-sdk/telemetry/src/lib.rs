//! huddle's traces: one OpenTelemetry trace per task attempt, exported over OTLP/HTTP by the
//! daemon and the workers when an endpoint is configured, and nothing at all when it is not.
//!
//! The daemon derives an attempt's trace from the team, the task and the attempt number
//! ([`TraceParent::attempt`]), so every replica and every request that touches the attempt —
//! the create, the claim, the completion — lands in the same trace without storing anything,
//! and hands it to the worker as a W3C `traceparent` in the claim answer. The worker records
//! its test runs, model calls, fixes and verdict under it ([`in_attempt`], [`record`]) and sends
//! the same header on its requests, so the daemon's HTTP spans join too.

mod export;
mod ids;
mod parent;

pub use opentelemetry::KeyValue;
pub use parent::TraceParent;

use opentelemetry::trace::{Span, SpanBuilder, TraceContextExt, Tracer};
use opentelemetry::Context;
use opentelemetry_sdk::trace::{SdkTracer, SdkTracerProvider};
use std::future::Future;
use std::sync::OnceLock;
use std::time::SystemTime;

/// The process's exporter, once [`start`] found an endpoint.
struct Telemetry {
    provider: SdkTracerProvider,
    tracer: SdkTracer,
}

static TELEMETRY: OnceLock<Telemetry> = OnceLock::new();

tokio::task_local! {
    /// The attempt the current worker task is working on.
    static ATTEMPT: Option<TraceParent>;
}

/// Where traces go: `configured` (a base URL such as `http://collector:4318`, as
/// `OTEL_EXPORTER_OTLP_ENDPOINT` is), else the standard `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (the
/// full URL) or `OTEL_EXPORTER_OTLP_ENDPOINT`; `None` when there is none or
/// `OTEL_SDK_DISABLED=true`.
pub fn endpoint(configured: Option<&str>) -> Option<String> {
    if std::env::var("OTEL_SDK_DISABLED").is_ok_and(|v| v.eq_ignore_ascii_case("true")) {
        return None;
    }
    let base = |b: &str| format!("{}/v1/traces", b.trim_end_matches('/'));
    let set = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    configured
        .filter(|c| !c.trim().is_empty())
        .map(base)
        .or_else(|| set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
        .or_else(|| set("OTEL_EXPORTER_OTLP_ENDPOINT").map(|b| base(&b)))
}

/// Starts exporting this process's spans as `service` when
/// [`endpoint`] finds one; returns the URL spans are sent to. Call inside a Tokio runtime, once.
pub fn start(service: &'static str, configured: Option<&str>) -> Result<Option<String>, String> {
    let Some(url) = endpoint(configured) else {
        return Ok(None);
    };
    let provider = export::provider(service, &url)?;
    let tracer = opentelemetry::trace::TracerProvider::tracer(&provider, "huddle");
    TELEMETRY
        .set(Telemetry { provider, tracer })
        .map_err(|_| "telemetry was started twice".to_string())?;
    Ok(Some(url))
}

/// Whether spans are exported: everything else in this crate returns at once when they are not.
pub fn enabled() -> bool {
    TELEMETRY.get().is_some()
}

/// Sends what is still buffered and stops the exporter (at the process's end).
pub async fn shutdown() {
    if let Some(t) = TELEMETRY.get() {
        let provider = t.provider.clone();
        // The exporter's thread sends on this runtime: wait for it off the runtime's threads.
        let _ = tokio::task::spawn_blocking(move || provider.shutdown()).await;
    }
}

/// Records a finished span `name` that began at `start` and ends now, under `parent`, or as
/// the root of a new trace without one.
pub fn record(
    parent: Option<&TraceParent>,
    name: impl Into<std::borrow::Cow<'static, str>>,
    start: SystemTime,
    attributes: Vec<KeyValue>,
) {
    let Some(t) = TELEMETRY.get() else { return };
    let cx = match parent {
        Some(p) => Context::new().with_remote_span_context(p.span_context()),
        None => Context::new(),
    };
    let builder = SpanBuilder::from_name(name)
        .with_start_time(start)
        .with_attributes(attributes);
    t.tracer.build_with_context(builder, &cx).end();
}

/// Records the root span of an attempt's trace: the span `attempt` names itself, which its
/// children (recorded before or after it, by any process) point to.
pub fn record_attempt(
    attempt: &TraceParent,
    name: &'static str,
    start: SystemTime,
    attributes: Vec<KeyValue>,
) {
    let Some(t) = TELEMETRY.get() else { return };
    let builder = SpanBuilder::from_name(name)
        .with_start_time(start)
        .with_attributes(attributes);
    let mut span = ids::with_ids(attempt, || {
        t.tracer.build_with_context(builder, &Context::new())
    });
    span.end();
}

/// Runs `work` as part of `attempt`: [`current`] and [`record_in_attempt`] see it.
pub async fn in_attempt<F: Future>(attempt: Option<TraceParent>, work: F) -> F::Output {
    ATTEMPT.scope(attempt, work).await
}

/// The attempt the current task works on ([`in_attempt`]).
pub fn current() -> Option<TraceParent> {
    ATTEMPT.try_with(|a| *a).ok().flatten()
}

/// [`record`] under the current attempt; nothing outside one.
pub fn record_in_attempt(name: &'static str, start: SystemTime, attributes: Vec<KeyValue>) {
    if !enabled() {
        return;
    }
    if let Some(parent) = current() {
        record(Some(&parent), name, start, attributes);
    }
}

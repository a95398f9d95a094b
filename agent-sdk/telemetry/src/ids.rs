//! Span ids: random, except for an attempt's root span, whose ids are derived
//! ([`crate::TraceParent::attempt`]) so that spans recorded before it can already point to it.

use crate::TraceParent;
use opentelemetry::trace::{SpanId, TraceId};
use opentelemetry_sdk::trace::{IdGenerator, RandomIdGenerator};
use std::cell::Cell;

thread_local! {
    /// The ids the next span built on this thread takes, while [`with_ids`] runs.
    static NEXT: Cell<Option<TraceParent>> = const { Cell::new(None) };
}

/// Builds a span (`build` must build exactly one, on this thread) with `ids`.
pub(crate) fn with_ids<T>(ids: &TraceParent, build: impl FnOnce() -> T) -> T {
    NEXT.with(|n| n.set(Some(*ids)));
    let built = build();
    NEXT.with(|n| n.set(None));
    built
}

#[derive(Debug, Default)]
pub(crate) struct Ids {
    random: RandomIdGenerator,
}

impl IdGenerator for Ids {
    fn new_trace_id(&self) -> TraceId {
        NEXT.with(Cell::get)
            .map_or_else(|| self.random.new_trace_id(), |p| p.trace)
    }

    fn new_span_id(&self) -> SpanId {
        NEXT.with(Cell::get)
            .map_or_else(|| self.random.new_span_id(), |p| p.span)
    }
}

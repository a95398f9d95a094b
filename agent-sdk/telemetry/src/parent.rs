//! A span's W3C trace context: the `traceparent` header and the ids an attempt's trace is
//! derived from.

use opentelemetry::trace::{SpanContext, SpanId, TraceFlags, TraceId, TraceState};
use sha2::{Digest, Sha256};

/// A trace id and the span that is the parent of what is recorded under it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceParent {
    pub(crate) trace: TraceId,
    pub(crate) span: SpanId,
}

impl TraceParent {
    /// Attempt `attempt` of task `task` in team `team`: the same ids in every process, so the
    /// daemon's replicas and the worker put the attempt's spans in one trace, under one root
    /// span, without storing them.
    pub fn attempt(team: &str, task: &str, attempt: i64) -> TraceParent {
        let digest = Sha256::new()
            .chain_update(b"huddle task attempt\0")
            .chain_update(team.as_bytes())
            .chain_update(b"\0")
            .chain_update(task.as_bytes())
            .chain_update(b"\0")
            .chain_update(attempt.to_be_bytes())
            .finalize();
        let mut trace = [0u8; 16];
        let mut span = [0u8; 8];
        trace.copy_from_slice(&digest[..16]);
        span.copy_from_slice(&digest[16..24]);
        TraceParent {
            trace: TraceId::from_bytes(trace),
            span: SpanId::from_bytes(span),
        }
    }

    /// Reads a `traceparent` header (`00-<32 hex>-<16 hex>-<2 hex>`); `None` when it is not
    /// one, or names the invalid all-zero ids.
    pub fn parse(header: &str) -> Option<TraceParent> {
        let mut parts = header.trim().split('-');
        let (version, trace, span, flags) =
            (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
        let hex_of = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_hexdigit());
        if version != "00" || parts.next().is_some() || !hex_of(flags, 2) {
            return None;
        }
        if !hex_of(trace, 32) || !hex_of(span, 16) {
            return None;
        }
        let trace = TraceId::from_hex(trace).ok()?;
        let span = SpanId::from_hex(span).ok()?;
        (trace != TraceId::INVALID && span != SpanId::INVALID)
            .then_some(TraceParent { trace, span })
    }

    /// The `traceparent` header value (sampled).
    pub fn header(&self) -> String {
        format!("00-{}-{}-01", self.trace, self.span)
    }

    /// The trace id in hex.
    pub fn trace_id(&self) -> String {
        self.trace.to_string()
    }

    pub(crate) fn span_context(&self) -> SpanContext {
        SpanContext::new(
            self.trace,
            self.span,
            TraceFlags::SAMPLED,
            true,
            TraceState::default(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_attempt_is_the_same_everywhere_and_differs_from_the_next() {
        let a = TraceParent::attempt("qa", "TEST-001", 1);
        assert_eq!(a, TraceParent::attempt("qa", "TEST-001", 1));
        assert_ne!(a.trace, TraceParent::attempt("qa", "TEST-001", 2).trace);
        assert_ne!(a.trace, TraceParent::attempt("qb", "TEST-001", 1).trace);
    }

    #[test]
    fn a_header_round_trips_and_bad_ones_are_refused() {
        let a = TraceParent::attempt("qa", "TEST-001", 1);
        assert_eq!(TraceParent::parse(&a.header()), Some(a));
        for bad in [
            "",
            "00-abc-def-01",
            "01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            "00-00000000000000000000000000000000-b7ad6b7169203331-01",
            "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-x",
            "00-0af7651916cd43dd8448eb211c80319g-b7ad6b7169203331-01",
        ] {
            assert_eq!(TraceParent::parse(bad), None, "{bad}");
        }
    }
}

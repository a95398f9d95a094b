//! Figures of one scenario run and how they are printed: text, JSON lines, markdown.

use serde::Serialize;
use std::time::Duration;

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Figures {
    pub scenario: String,
    /// What the throughput counts (tasks, posts, rows…).
    pub unit: String,
    pub throughput_per_s: f64,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    pub peak_rss_bytes: u64,
    /// Length of the timed phase, in seconds.
    pub elapsed_s: f64,
    pub settings: serde_json::Value,
    /// Extra named figures (RSS at stages, ratios to baselines…).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<(String, String)>,
}

/// Latency samples; percentiles by sorting (exact, and cheap at bench sizes).
#[derive(Debug, Default, Clone)]
pub struct Latencies(pub Vec<Duration>);

impl Latencies {
    pub fn push(&mut self, d: Duration) {
        self.0.push(d);
    }

    pub fn extend(&mut self, other: Latencies) {
        self.0.extend(other.0);
    }

    /// (p50, p99, max) in milliseconds.
    pub fn summary(&mut self) -> (f64, f64, f64) {
        if self.0.is_empty() {
            return (0.0, 0.0, 0.0);
        }
        self.0.sort_unstable();
        let at = |q: f64| {
            let i = ((self.0.len() as f64 - 1.0) * q).round() as usize;
            self.0[i].as_secs_f64() * 1000.0
        };
        (at(0.50), at(0.99), at(1.0))
    }
}

impl Figures {
    pub fn new(
        scenario: &str,
        unit: &str,
        count: usize,
        elapsed: Duration,
        lat: &mut Latencies,
    ) -> Figures {
        let (p50, p99, max) = lat.summary();
        Figures {
            scenario: scenario.into(),
            unit: unit.into(),
            throughput_per_s: count as f64 / elapsed.as_secs_f64().max(1e-9),
            p50_ms: p50,
            p99_ms: p99,
            max_ms: max,
            peak_rss_bytes: 0,
            elapsed_s: elapsed.as_secs_f64(),
            settings: serde_json::json!({}),
            notes: Vec::new(),
        }
    }

    pub fn note(mut self, key: &str, value: impl ToString) -> Figures {
        self.notes.push((key.into(), value.to_string()));
        self
    }

    pub fn print_text(&self) {
        println!(
            "{:<28} {:>12.0} {}/s   p50 {:>8.2} ms   p99 {:>8.2} ms   max {:>8.2} ms   peak RSS {:>6.1} MB   {}",
            self.scenario,
            self.throughput_per_s,
            self.unit,
            self.p50_ms,
            self.p99_ms,
            self.max_ms,
            self.peak_rss_bytes as f64 / 1e6,
            self.settings
        );
        for (k, v) in &self.notes {
            println!("{:<28}   {k}: {v}", "");
        }
    }

    pub fn markdown_row(&self) -> String {
        format!(
            "| {} | {:.0} {}/s | {:.2} | {:.2} | {:.2} | {:.1} MB | {} |",
            self.scenario,
            self.throughput_per_s,
            self.unit,
            self.p50_ms,
            self.p99_ms,
            self.max_ms,
            self.peak_rss_bytes as f64 / 1e6,
            self.notes
                .iter()
                .map(|(k, v)| format!("{k}: {v}"))
                .collect::<Vec<_>>()
                .join("; ")
        )
    }
}

pub const MARKDOWN_HEADER: &str =
    "| scenario | throughput | p50 ms | p99 ms | max ms | peak RSS | notes |\n|---|---|---|---|---|---|---|";

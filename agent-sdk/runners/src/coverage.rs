//! Line coverage from each ecosystem's own format, reduced to one percentage: istanbul's
//! `coverage-summary.json` (jest, vitest, c8/nyc), coverage.py's JSON report, and go's
//! `-coverprofile` text.

use crate::report::Coverage;
use serde_json::Value;
use std::collections::HashMap;
use std::path::Path;

fn read_json(run_dir: &Path, rel: &str) -> Option<Value> {
    let bytes = std::fs::read(run_dir.join(rel)).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// `total.lines.pct` of an istanbul `coverage-summary.json` at `run_dir/rel`.
pub fn istanbul(run_dir: &Path, rel: &str) -> Option<Coverage> {
    let doc = read_json(run_dir, rel)?;
    let pct = doc.pointer("/total/lines/pct")?.as_f64()?;
    Some(Coverage {
        line_percent: pct,
        source: rel.to_string(),
    })
}

/// `totals.percent_covered` of a coverage.py JSON report at `run_dir/rel`.
pub fn coverage_py(run_dir: &Path, rel: &str) -> Option<Coverage> {
    let doc = read_json(run_dir, rel)?;
    let pct = doc.pointer("/totals/percent_covered")?.as_f64()?;
    Some(Coverage {
        line_percent: pct,
        source: rel.to_string(),
    })
}

/// Statement coverage of a go cover profile at `run_dir/rel`, computed as `go tool cover`
/// does: covered statements over all statements, each block counted once.
pub fn go_profile(run_dir: &Path, rel: &str) -> Option<Coverage> {
    let text = std::fs::read_to_string(run_dir.join(rel)).ok()?;
    Some(Coverage {
        line_percent: go_profile_percent(&text)?,
        source: rel.to_string(),
    })
}

/// The percentage of a cover profile's text (`mode:` line, then
/// `file:l.c,l.c statements count` lines).
pub fn go_profile_percent(text: &str) -> Option<f64> {
    // The same block may appear once per test binary that covers it; keep its best count.
    let mut blocks: HashMap<&str, (u64, u64)> = HashMap::new();
    for line in text.lines().filter(|l| !l.starts_with("mode:")) {
        let mut parts = line.rsplitn(3, ' ');
        let (Some(count), Some(stmts), Some(block)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let (Ok(count), Ok(stmts)) = (count.parse::<u64>(), stmts.parse::<u64>()) else {
            continue;
        };
        let entry = blocks.entry(block).or_insert((stmts, 0));
        entry.1 = entry.1.max(count);
    }
    let total: u64 = blocks.values().map(|(s, _)| s).sum();
    if total == 0 {
        return None;
    }
    let covered: u64 = blocks
        .values()
        .filter(|(_, c)| *c > 0)
        .map(|(s, _)| s)
        .sum();
    Some(covered as f64 * 100.0 / total as f64)
}

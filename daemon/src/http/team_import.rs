//! An import's body, checked line by line as it arrives and spooled to an unnamed temporary
//! file in the data directory (memory stays bounded whatever the team's size), then read
//! back for the store. Nothing reaches the store until the whole file has been read, every
//! line found well formed and every record valid as the API would find the same write
//! (`import_checks`), so a bad file is a 400 with nothing written.

use super::error::{ApiError, ApiResult};
use super::import_checks::{ImportChecks, Problem};
use crate::config::Settings;
use crate::store::transfer::{Record, Shape, TeamRecord};
use axum::body::Body;
use axum::http::StatusCode;
use futures::StreamExt;
use huddle_wire::codes;
use serde_json::json;
use std::io::{BufRead, BufReader, Seek, Write};
use std::path::Path;
use tokio::sync::mpsc;

/// A checked import waiting in its temporary file: the team record, and the lines after it.
pub struct Spooled {
    pub team: TeamRecord,
    file: std::fs::File,
    /// Leads restored revoked (a person's token never comes from a file).
    pub revoked_leads: Vec<String>,
}

/// Records the API would refuse: one 400 listing them (the first [`super::import_checks::MAX_PROBLEMS`]).
fn invalid_records(problems: Vec<Problem>, total: usize) -> ApiError {
    let first: Vec<String> = problems
        .iter()
        .take(3)
        .map(|p| format!("line {}: {}", p.line, p.message))
        .collect();
    let more = if total > first.len() {
        format!("; and {} more", total - first.len())
    } else {
        String::new()
    };
    ApiError::new(
        StatusCode::BAD_REQUEST,
        codes::INVALID_BODY,
        format!(
            "the import holds {total} record(s) the API would refuse, so nothing was imported: {}{more}",
            first.join("; ")
        ),
    )
    .with_details(json!({ "problems": problems, "total": total }))
}

fn bad_line(line: usize, why: impl std::fmt::Display) -> ApiError {
    ApiError::new(
        StatusCode::BAD_REQUEST,
        codes::INVALID_BODY,
        format!("line {line}: {why}"),
    )
    .with_details(json!({ "line": line }))
}

fn spool_failed(e: std::io::Error) -> ApiError {
    ApiError::new(
        StatusCode::SERVICE_UNAVAILABLE,
        codes::STORE_UNAVAILABLE,
        format!("cannot spool the import in the data directory: {e}"),
    )
}

fn too_long(max_line: usize) -> ApiError {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        codes::TOO_LARGE,
        format!("a line is longer than {max_line} bytes, more than any record of this daemon"),
    )
}

/// Reads `body` to its end, checking each line (kind, version, fields, order, the `end`
/// count; then each record as the API would) and keeping it; a line longer than `max_line`
/// bytes is refused (413).
pub async fn spool(
    body: Body,
    dir: &Path,
    max_line: usize,
    settings: &Settings,
) -> ApiResult<Spooled> {
    let mut checks = ImportChecks::new(settings, chrono::Utc::now().timestamp_millis());
    let mut file = tempfile::tempfile_in(dir).map_err(spool_failed)?;
    let mut out = std::io::BufWriter::new(&mut file);
    let mut shape = Shape::default();
    let mut team = None;
    let mut pending: Vec<u8> = Vec::new();
    let mut line_no = 0usize;
    let mut take = |bytes: &[u8], out: &mut std::io::BufWriter<&mut std::fs::File>| {
        line_no += 1;
        let text = std::str::from_utf8(bytes).map_err(|_| bad_line(line_no, "not UTF-8"))?;
        let mut record = Record::parse(text).map_err(|why| bad_line(line_no, why))?;
        shape.check(&record).map_err(|why| bad_line(line_no, why))?;
        let changed = checks.record(line_no, &mut record);
        match record {
            Record::Team(t) => team = Some(t),
            changed_record if changed => {
                let line = changed_record.to_line().map_err(ApiError::from)?;
                out.write_all(line.as_bytes()).map_err(spool_failed)?;
            }
            _ => {
                out.write_all(bytes).map_err(spool_failed)?;
                out.write_all(b"\n").map_err(spool_failed)?;
            }
        }
        Ok::<_, ApiError>(())
    };
    let mut chunks = body.into_data_stream();
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk.map_err(|e| {
            ApiError::new(
                StatusCode::BAD_REQUEST,
                codes::INVALID_BODY,
                format!("reading the body: {e}"),
            )
        })?;
        let mut rest = &chunk[..];
        loop {
            let end = rest.iter().position(|b| *b == b'\n');
            pending.extend_from_slice(&rest[..end.unwrap_or(rest.len())]);
            if pending.len() > max_line {
                return Err(too_long(max_line));
            }
            let Some(end) = end else { break };
            rest = &rest[end + 1..];
            if !pending.is_empty() {
                take(&pending, &mut out)?;
            }
            pending.clear();
        }
    }
    // A last line without its newline (a file cut short fails here or at the `end` check).
    if !pending.is_empty() {
        take(&pending, &mut out)?;
    }
    shape.finish().map_err(|why| bad_line(line_no + 1, why))?;
    let revoked_leads = checks
        .finish()
        .map_err(|(problems, total)| invalid_records(problems, total))?;
    out.flush().map_err(spool_failed)?;
    drop(out);
    file.rewind().map_err(spool_failed)?;
    let team = team.ok_or_else(|| bad_line(1, "no team record"))?;
    Ok(Spooled {
        team,
        file,
        revoked_leads,
    })
}

impl Spooled {
    /// Reads the records back on a blocking thread, into the channel the store takes them
    /// from, each with its line number; stops when the store stops taking them.
    pub fn feed(self, to: mpsc::Sender<(usize, Record)>) {
        let mut line = 1usize;
        for text in BufReader::new(self.file).lines() {
            line += 1;
            let Ok(text) = text else { return };
            // Checked on the way in; a line that fails now (the disk) ends the import short,
            // which the store refuses as an error of its own.
            let Ok(record) = Record::parse(&text) else {
                return;
            };
            if to.blocking_send((line, record)).is_err() {
                return;
            }
        }
    }
}

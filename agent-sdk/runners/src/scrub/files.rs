//! Scrubbing files: a run directory's output and the runners' own reports. Each file is read
//! as what it is — JSON (or JSON lines), XML, or plain text — so escaped secrets are found and
//! structured files stay valid. Binary files (a NUL byte in their first 8 KiB, such as
//! coverage.py's SQLite `.coverage`) are left alone: rewriting them would corrupt them.

use super::rules::might_contain_secret;
use super::{scrub, scrub_json, scrub_xml};
use std::borrow::Cow;
use std::io;
use std::path::Path;

/// A JSON document, or JSON lines (each an object or an array, as huddle's pytest progress
/// lines are).
fn is_json(text: &str) -> bool {
    let whole = serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok();
    whole
        || text.lines().filter(|l| !l.trim().is_empty()).all(|l| {
            l.trim_start().starts_with(['{', '['])
                && serde_json::from_str::<serde::de::IgnoredAny>(l).is_ok()
        })
}

fn is_xml(text: &str) -> bool {
    let mut reader = quick_xml::Reader::from_str(text);
    loop {
        match reader.read_event() {
            Ok(quick_xml::events::Event::Eof) => return true,
            Ok(_) => {}
            Err(_) => return false,
        }
    }
}

/// Scrubs text whose format is found by looking at it: a JSON document or JSON lines by their
/// strings, well-formed XML by its text and attributes, anything else as plain text.
pub fn scrub_text_file(text: &str) -> Cow<'_, str> {
    if !might_contain_secret(text) {
        return Cow::Borrowed(text);
    }
    let start = text.trim_start();
    if (start.starts_with('{') || start.starts_with('[')) && is_json(text) {
        return scrub_json(text);
    }
    // JSON lines cut off mid-line (a runner killed at its timeout while writing one): the
    // whole lines as JSON, the cut one as plain text.
    if let Some((lines, cut)) = text.trim_end_matches('\n').rsplit_once('\n') {
        if (start.starts_with('{') || start.starts_with('[')) && is_json(lines) {
            return Cow::Owned(format!("{}\n{}", scrub_json(lines), scrub(cut)));
        }
    }
    if start.starts_with('<') && is_xml(text) {
        return scrub_xml(text);
    }
    scrub(text)
}

/// Scrubs captured output or a file's bytes. Invalid UTF-8 is kept as it is and the valid
/// text around it scrubbed; binary data comes back unchanged.
pub fn scrub_bytes(bytes: &[u8]) -> Cow<'_, [u8]> {
    if bytes[..bytes.len().min(8192)].contains(&0) {
        return Cow::Borrowed(bytes);
    }
    if let Ok(text) = std::str::from_utf8(bytes) {
        return match scrub_text_file(text) {
            Cow::Borrowed(_) => Cow::Borrowed(bytes),
            Cow::Owned(s) => Cow::Owned(s.into_bytes()),
        };
    }
    let mut out = Vec::with_capacity(bytes.len());
    let mut changed = false;
    for chunk in bytes.utf8_chunks() {
        let scrubbed = scrub(chunk.valid());
        changed |= matches!(scrubbed, Cow::Owned(_));
        out.extend_from_slice(scrubbed.as_bytes());
        out.extend_from_slice(chunk.invalid());
    }
    if changed {
        Cow::Owned(out)
    } else {
        Cow::Borrowed(bytes)
    }
}

/// Scrubs one file in place; it is rewritten only when something was removed.
pub fn scrub_file(path: &Path) -> io::Result<()> {
    let bytes = std::fs::read(path)?;
    if let Cow::Owned(clean) = scrub_bytes(&bytes) {
        // Write-then-rename: a reader sees the old file or the scrubbed one, never half.
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        let tmp = path.with_file_name(format!(".{name}.scrub-tmp"));
        std::fs::write(&tmp, clean)?;
        std::fs::rename(&tmp, path)?;
    }
    Ok(())
}

/// Scrubs every file under `dir`, recursively (symlinks are not followed).
pub fn scrub_dir(dir: &Path) -> io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        if kind.is_dir() {
            scrub_dir(&entry.path())?;
        } else if kind.is_file() {
            scrub_file(&entry.path())?;
        }
    }
    Ok(())
}

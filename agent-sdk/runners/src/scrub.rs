//! Making runner output safe to pass on. [`scrub`] replaces secrets with `[REDACTED:<kind>]`
//! markers in everything huddle writes or prints — the run directory (`report.json`,
//! `junit.xml`, `stdout.txt`, `stderr.txt`, the runner's own reports: [`scrub_dir`]), `huddle
//! test` output — and in what the SDK sends to a model or posts on the bus. JSON and XML are
//! scrubbed on their decoded strings ([`scrub_json`], [`scrub_xml`], [`scrub_json_value`]), so
//! a secret split by an escape (`\n` inside a PEM block, `&quot;`) is still found and the
//! document stays valid. [`tail_lines`] keeps the end of long output for a message (the full
//! output stays in the run directory); [`strip_ansi`] drops colour codes.

mod files;
mod json;
mod rules;
mod xml;

pub use files::{scrub_bytes, scrub_dir, scrub_file, scrub_text_file};
pub use json::{scrub_json, scrub_json_value};
pub use rules::{might_contain_secret, REDACTED_PREFIX};
pub use xml::scrub_xml;

use crate::report::Report;
use regex::{Captures, Regex};
use std::borrow::Cow;
use std::sync::OnceLock;

/// The marker a secret of `kind` is replaced with: `[REDACTED:api-key]`.
pub fn marker(kind: &str) -> String {
    format!("{REDACTED_PREFIX}{kind}]")
}

/// Replaces secrets in `text` (plain, decoded text) with `[REDACTED:<kind>]` markers:
///
/// | kind | what |
/// | --- | --- |
/// | `private-key` | PEM private-key blocks, BEGIN through END |
/// | `jwt` | JSON Web Tokens (`eyJ….eyJ….…`) |
/// | `bearer-token` | the credential after `Bearer ` |
/// | `api-key` | `sk-…` (`sk-proj-`, `sk-ant-`, `sk-live-`), Stripe `sk_live_…`/`rk_test_…` |
/// | `github-token` | `ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`, `github_pat_` |
/// | `gitlab-token`, `slack-token`, `google-api-key` | `glpat-…`, `xox?-…`/`xapp-…`, `AIza…` |
/// | `aws-access-key-id`, `aws-secret-key` | `AKIA…`/`ASIA…`, `aws_secret_access_key=…` |
/// | `huddle-token` | huddle's `hud_…` tokens |
/// | `secret` | the value of `*_TOKEN=`, `*_SECRET=`, `*_KEY=`, `*PASSWORD=` variables and of `password=`, `passwd:`, `secret=`, `token=`, `api_key=`, `"client_secret": "…"` assignments |
///
/// Names and separators stay (`GITHUB_TOKEN=[REDACTED:secret]`). Tokens count only from a word
/// boundary or an escape sequence, so words and hex hashes are left alone. Idempotent; returns
/// the input borrowed when there is nothing to remove. For JSON or XML text use [`scrub_json`]
/// or [`scrub_xml`], which scrub the decoded strings and keep the document valid.
pub fn scrub(text: &str) -> Cow<'_, str> {
    if !might_contain_secret(text) {
        return Cow::Borrowed(text);
    }
    let mut out = Cow::Borrowed(text);
    for rule in rules::rules() {
        if !rule.pattern.is_match(&out) {
            continue;
        }
        let replaced = rule
            .pattern
            .replace_all(&out, |caps: &Captures<'_>| redact(caps, rule.kind));
        if let Cow::Owned(s) = replaced {
            if s != *out {
                out = Cow::Owned(s);
            }
        }
    }
    out
}

/// The match with its `v` group replaced by the marker; a value that already is a marker
/// stays, so scrubbing twice changes nothing.
fn redact(caps: &Captures<'_>, kind: &str) -> String {
    let whole = caps.get(0).expect("group 0");
    let Some(v) = caps.name("v") else {
        return whole.as_str().to_string();
    };
    if v.as_str().starts_with(REDACTED_PREFIX) {
        return whole.as_str().to_string();
    }
    let text = whole.as_str();
    let (from, to) = (v.start() - whole.start(), v.end() - whole.start());
    format!("{}{}{}", &text[..from], marker(kind), &text[to..])
}

/// Scrubs one string in place; returns whether it changed.
pub fn scrub_in_place(text: &mut String) -> bool {
    match scrub(text) {
        Cow::Borrowed(_) => false,
        Cow::Owned(s) => {
            *text = s;
            true
        }
    }
}

/// Scrubs every string of a report: node ids, files, failure text, the root and the command.
/// A test whose id held a secret keeps its place under the scrubbed id.
pub fn scrub_report(report: &mut Report) {
    scrub_in_place(&mut report.root);
    for arg in &mut report.command {
        scrub_in_place(arg);
    }
    for t in &mut report.tests {
        scrub_in_place(&mut t.nodeid);
        if let Some(f) = t.file.as_mut() {
            scrub_in_place(f);
        }
        if let Some(l) = t.longrepr.as_mut() {
            scrub_in_place(l);
        }
    }
    if let Some(c) = report.coverage.as_mut() {
        scrub_in_place(&mut c.source);
    }
}

/// Removes ANSI escape sequences (colours, cursor moves) that runners put in their output.
pub fn strip_ansi(text: &str) -> Cow<'_, str> {
    static ANSI: OnceLock<Regex> = OnceLock::new();
    let re = ANSI.get_or_init(|| {
        Regex::new(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
            .expect("ansi pattern compiles")
    });
    re.replace_all(text, "")
}

/// Keeps the last `max_lines` lines of `text`; when lines were dropped, a first line says how
/// many, so a reader knows the message is not the whole output.
pub fn tail_lines(text: &str, max_lines: usize) -> String {
    let trimmed = text.trim_end_matches(['\n', '\r']);
    let total = trimmed.lines().count();
    if total <= max_lines {
        return trimmed.to_string();
    }
    let dropped = total - max_lines;
    let kept: Vec<&str> = trimmed.lines().skip(dropped).collect();
    format!("[… {dropped} earlier lines omitted]\n{}", kept.join("\n"))
}

/// What a message to a model or the bus should carry: colour codes stripped, secrets
/// scrubbed, the last `max_lines` lines kept.
pub fn for_message(text: &str, max_lines: usize) -> String {
    tail_lines(&scrub(&strip_ansi(text)), max_lines)
}

//! Scrubbing JSON: every string literal is decoded, scrubbed and, when it changed, encoded
//! again, so an escape inside a secret (`\n` in a PEM block, `\"` around a password) hides
//! nothing and the document stays valid. A string value under a secret-looking key
//! (`"password": "…"`, `"GITHUB_TOKEN": "…"`) is replaced whole. The rest of the text is kept
//! byte for byte, so JSON lines (one document per line) work the same.

use super::rules::{might_contain_secret, REDACTED_PREFIX};
use super::{marker, scrub};
use serde_json::Value;
use std::borrow::Cow;

/// Whether a key names a secret: `key=x` is something [`scrub`] redacts.
fn is_secret_key(key: &str) -> bool {
    let probe = format!("{key}=x");
    matches!(scrub(&probe), Cow::Owned(_))
}

/// The end (exclusive) of the string literal opening at `start`, or `None` when it is not
/// one: a raw line break or the end of the text comes before its closing quote.
fn literal_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => return Some(i + 1),
            b'\\' => i += 2,
            b'\n' | b'\r' => return None,
            _ => i += 1,
        }
    }
    None
}

fn next_non_space(bytes: &[u8], mut i: usize) -> usize {
    while i < bytes.len() && bytes[i].is_ascii_whitespace() {
        i += 1;
    }
    i
}

/// Scrubs the strings of a JSON document (or JSON lines); the input comes back borrowed when
/// nothing changed. Text that is not JSON goes through unchanged outside well-formed string
/// literals, so use [`scrub`](super::scrub) for plain text.
pub fn scrub_json(text: &str) -> Cow<'_, str> {
    if !might_contain_secret(text) {
        return Cow::Borrowed(text);
    }
    let bytes = text.as_bytes();
    let mut out = String::new();
    let mut copied = 0;
    // Where the string value of a secret-looking key starts, once such a key was seen.
    let mut secret_value_at: Option<usize> = None;
    let mut i = 0;
    while let Some(offset) = bytes[i..].iter().position(|&b| b == b'"') {
        let start = i + offset;
        let Some(end) = literal_end(bytes, start) else {
            i = start + 1;
            continue;
        };
        i = end;
        let raw = &text[start..end];
        let after = next_non_space(bytes, end);
        let is_key = bytes.get(after) == Some(&b':');
        let replacement = if secret_value_at == Some(start) && !is_key {
            let decoded: String = serde_json::from_str(raw).unwrap_or_default();
            (!decoded.starts_with(REDACTED_PREFIX)).then(|| format!("\"{}\"", marker("secret")))
        } else if might_contain_secret(raw) {
            serde_json::from_str::<String>(&crate::text::json_escapes_fixed(raw))
                .ok()
                .and_then(|decoded| match scrub(&decoded) {
                    Cow::Owned(s) => Some(serde_json::to_string(&s).expect("strings encode")),
                    Cow::Borrowed(_) => None,
                })
        } else {
            None
        };
        secret_value_at = None;
        if is_key && might_contain_secret(&text[start..=after]) {
            let key: String = serde_json::from_str(raw).unwrap_or_default();
            if is_secret_key(&key) {
                secret_value_at = Some(next_non_space(bytes, after + 1));
            }
        }
        if let Some(r) = replacement {
            out.push_str(&text[copied..start]);
            out.push_str(&r);
            copied = end;
        }
    }
    if copied == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

/// Scrubs every string in a JSON value (keys too), and replaces the string value of a
/// secret-looking key (`password`, `api_key`, `GITHUB_TOKEN`…) whole.
pub fn scrub_json_value(value: &mut Value) {
    match value {
        Value::String(s) => {
            super::scrub_in_place(s);
        }
        Value::Array(items) => items.iter_mut().for_each(scrub_json_value),
        Value::Object(map) => {
            let renamed: Vec<String> = map
                .keys()
                .filter(|k| matches!(scrub(k), Cow::Owned(_)))
                .cloned()
                .collect();
            for key in renamed {
                if let Some(v) = map.remove(&key) {
                    map.insert(scrub(&key).into_owned(), v);
                }
            }
            for (key, v) in map.iter_mut() {
                match v {
                    Value::String(s) if !s.starts_with(REDACTED_PREFIX) && is_secret_key(key) => {
                        *s = marker("secret");
                    }
                    _ => scrub_json_value(v),
                }
            }
        }
        _ => {}
    }
}

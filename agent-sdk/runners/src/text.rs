//! Runner output as text a parser accepts, whatever bytes the tests produced. A test title or
//! message may hold anything: bytes that are not UTF-8 (Python's surrogate-escaped output, a
//! binary blob printed by a test) or, in JSON written by JavaScript or Python, an escaped
//! UTF-16 surrogate with no partner (`"\ud800"`), which `JSON.stringify` and `json.dumps`
//! write and serde_json refuses. One such character must never turn a whole report into "the
//! runner's output cannot be read": each is replaced by U+FFFD, as a lossy decoder would.

use std::borrow::Cow;

/// `bytes` as UTF-8 with invalid sequences replaced by U+FFFD.
pub fn lossy(bytes: &[u8]) -> Cow<'_, str> {
    String::from_utf8_lossy(bytes)
}

/// JSON text whose every `\uXXXX` escape decodes: lone surrogate escapes become `\ufffd`
/// (a high surrogate followed by a low one is a pair, and stays). Borrowed when nothing changed.
pub fn json_escapes_fixed(text: &str) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    let mut out = String::new();
    let mut copied = 0;
    let mut i = 0;
    while let Some(offset) = bytes[i..].iter().position(|&b| b == b'\\') {
        let at = i + offset;
        let Some(unit) = escape_at(bytes, at) else {
            // `\"`, `\\`, `\n`…: skip the escaped character so `\\u` is not read as `\u`.
            i = at + 2;
            continue;
        };
        let lone = match unit {
            0xD800..=0xDBFF => match escape_at(bytes, at + 6) {
                Some(0xDC00..=0xDFFF) => {
                    i = at + 12;
                    continue;
                }
                _ => true,
            },
            0xDC00..=0xDFFF => true,
            _ => false,
        };
        if lone {
            out.push_str(&text[copied..at]);
            out.push_str("\\ufffd");
            copied = at + 6;
        }
        i = at + 6;
    }
    if copied == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(&text[copied..]);
    Cow::Owned(out)
}

/// The code unit of a `\uXXXX` escape starting at `at`, when there is one.
fn escape_at(bytes: &[u8], at: usize) -> Option<u32> {
    if bytes.get(at) != Some(&b'\\') || bytes.get(at + 1) != Some(&b'u') {
        return None;
    }
    let hex = std::str::from_utf8(bytes.get(at + 2..at + 6)?).ok()?;
    u32::from_str_radix(hex, 16).ok()
}

/// Runner JSON (a document or JSON lines) as text serde_json accepts: invalid UTF-8 and lone
/// surrogate escapes replaced.
pub fn json(bytes: &[u8]) -> Cow<'_, str> {
    match lossy(bytes) {
        Cow::Borrowed(text) => json_escapes_fixed(text),
        Cow::Owned(text) => Cow::Owned(json_escapes_fixed(&text).into_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lone_surrogate_becomes_the_replacement_character() {
        let fixed = json(br#"{"t": "a \ud800 b", "u": "\udc00"}"#);
        assert_eq!(fixed, r#"{"t": "a \ufffd b", "u": "\ufffd"}"#);
        let v: serde_json::Value = serde_json::from_str(&fixed).unwrap();
        assert_eq!(v["t"], "a \u{fffd} b");
    }

    #[test]
    fn pairs_escaped_backslashes_and_plain_text_stay() {
        let text = r#"{"pair": "\ud83d\ude00", "not": "\\ud800", "q": "\"x\""}"#;
        assert!(matches!(json_escapes_fixed(text), Cow::Borrowed(_)));
        let v: serde_json::Value = serde_json::from_str(text).unwrap();
        assert_eq!(v["pair"], "😀");
    }

    #[test]
    fn a_high_surrogate_before_another_high_one_is_lone() {
        assert_eq!(
            json_escapes_fixed(r#""\ud800\ud801\udc01""#),
            r#""\ufffd\ud801\udc01""#
        );
    }

    #[test]
    fn invalid_utf8_is_replaced_not_refused() {
        let fixed = json(b"{\"t\": \"caf\xe9\"}");
        let v: serde_json::Value = serde_json::from_str(&fixed).unwrap();
        assert_eq!(v["t"], "caf\u{fffd}");
    }
}

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

/// A reader of runner JSON that repairs it as it goes, as [`json`] does for a whole
/// document, so a report of any size is parsed without holding it: bytes are consumed in
/// chunks, each cut where no escape or UTF-8 sequence spans the cut.
pub struct RepairedJson<R> {
    inner: R,
    input: Vec<u8>,
    output: Vec<u8>,
    out_pos: usize,
    eof: bool,
}

/// Bytes held back at a chunk's end: a surrogate pair's two escapes.
const LOOKAHEAD: usize = 12;

impl<R: std::io::Read> RepairedJson<R> {
    /// Wraps `inner`.
    pub fn new(inner: R) -> Self {
        RepairedJson {
            inner,
            input: Vec::new(),
            output: Vec::new(),
            out_pos: 0,
            eof: false,
        }
    }

    /// Reads a chunk and repairs what of it is safe to repair.
    fn fill(&mut self) -> std::io::Result<()> {
        self.output.clear();
        self.out_pos = 0;
        if !self.eof {
            let start = self.input.len();
            self.input.resize(start + 64 * 1024, 0);
            let n = self.inner.read(&mut self.input[start..])?;
            self.input.truncate(start + n);
            self.eof = n == 0;
        }
        let bytes = &self.input;
        let mut end = if self.eof {
            bytes.len()
        } else {
            bytes.len().saturating_sub(LOOKAHEAD)
        };
        // Never cut a UTF-8 sequence: back up to the start of a character.
        while end > 0 && end < bytes.len() && bytes[end] & 0xC0 == 0x80 {
            end -= 1;
        }
        let mut fixed = Vec::with_capacity(end + 16);
        let (mut copied, mut i) = (0, 0);
        while i < end {
            if bytes[i] != b'\\' {
                i += 1;
                continue;
            }
            let lone = match escape_at(bytes, i) {
                Some(0xD800..=0xDBFF) => match escape_at(bytes, i + 6) {
                    Some(0xDC00..=0xDFFF) => {
                        i += 12;
                        continue;
                    }
                    _ => true,
                },
                Some(0xDC00..=0xDFFF) => true,
                Some(_) => {
                    i += 6;
                    continue;
                }
                None => {
                    i += 2;
                    continue;
                }
            };
            if lone {
                fixed.extend_from_slice(&bytes[copied..i]);
                fixed.extend_from_slice(b"\\ufffd");
                i += 6;
                copied = i;
            }
        }
        let consumed = i.min(bytes.len());
        fixed.extend_from_slice(&bytes[copied..consumed]);
        self.output = match String::from_utf8_lossy(&fixed) {
            std::borrow::Cow::Borrowed(_) => fixed,
            std::borrow::Cow::Owned(s) => s.into_bytes(),
        };
        self.input.drain(..consumed);
        Ok(())
    }
}

impl<R: std::io::Read> std::io::Read for RepairedJson<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.out_pos == self.output.len() {
            if self.eof && self.input.is_empty() {
                return Ok(0);
            }
            self.fill()?;
        }
        let n = buf.len().min(self.output.len() - self.out_pos);
        buf[..n].copy_from_slice(&self.output[self.out_pos..self.out_pos + n]);
        self.out_pos += n;
        Ok(n)
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

    /// A reader that hands out one byte at a time, so every cut a chunk can have is tried.
    struct Trickle<'a>(&'a [u8]);

    impl std::io::Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let Some((first, rest)) = self.0.split_first() else {
                return Ok(0);
            };
            buf[0] = *first;
            self.0 = rest;
            Ok(1)
        }
    }

    #[test]
    fn the_streaming_repair_matches_the_whole_document_repair() {
        let doc = "{\"a\": \"x \\ud800 \\ud83d\\ude00 \\\\ud800 caf\u{e9}\", \"b\": \"\\udc00\"}"
            .as_bytes()
            .iter()
            .copied()
            .chain(*b" \"\xff\"")
            .collect::<Vec<u8>>();
        let mut streamed = Vec::new();
        std::io::Read::read_to_end(&mut RepairedJson::new(Trickle(&doc)), &mut streamed).unwrap();
        assert_eq!(String::from_utf8(streamed).unwrap(), json(&doc));
        let mut big = Vec::new();
        std::io::Read::read_to_end(&mut RepairedJson::new(&doc[..]), &mut big).unwrap();
        assert_eq!(String::from_utf8(big).unwrap(), json(&doc));
    }

    #[test]
    fn invalid_utf8_is_replaced_not_refused() {
        let fixed = json(b"{\"t\": \"caf\xe9\"}");
        let v: serde_json::Value = serde_json::from_str(&fixed).unwrap();
        assert_eq!(v["t"], "caf\u{fffd}");
    }
}

//! Scrubbing XML (JUnit files): text, CDATA, comments and attribute values are decoded
//! (entities resolved), scrubbed and, when they changed, written back escaped. A run of text
//! split by entity references (`password=&quot;…&quot;`) is scrubbed as one string. The rest
//! of the document is kept byte for byte; if it stops being well-formed (a file cut short),
//! the remainder is scrubbed as plain text.

use super::rules::might_contain_secret;
use super::scrub;
use quick_xml::escape::{escape, resolve_predefined_entity};
use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;
use std::borrow::Cow;
use std::ops::Range;

/// Replacements to make in the original text, in order.
#[derive(Default)]
struct Edits(Vec<(Range<usize>, String)>);

impl Edits {
    fn apply(self, text: &str) -> Cow<'_, str> {
        if self.0.is_empty() {
            return Cow::Borrowed(text);
        }
        let mut out = String::with_capacity(text.len());
        let mut copied = 0;
        for (range, with) in self.0 {
            out.push_str(&text[copied..range.start]);
            out.push_str(&with);
            copied = range.end;
        }
        out.push_str(&text[copied..]);
        Cow::Owned(out)
    }
}

/// A run of character data (text, entity references, CDATA) scrubbed as one string.
#[derive(Default)]
struct TextRun {
    range: Option<Range<usize>>,
    decoded: String,
}

impl TextRun {
    fn push(&mut self, range: Range<usize>, decoded: &str) {
        self.range = Some(match self.range.take() {
            Some(r) => r.start..range.end,
            None => range,
        });
        self.decoded.push_str(decoded);
    }

    fn flush(&mut self, edits: &mut Edits) {
        if let Some(range) = self.range.take() {
            if let Cow::Owned(s) = scrub(&self.decoded) {
                edits.0.push((range, escape(s.as_str()).into_owned()));
            }
        }
        self.decoded.clear();
    }
}

fn scrub_attributes(text: &str, e: &BytesStart<'_>, edits: &mut Edits) {
    let base = text.as_ptr() as usize;
    for attr in e.attributes().with_checks(false).flatten() {
        let Cow::Borrowed(raw) = &attr.value else {
            continue;
        };
        let start = raw.as_ptr() as usize - base;
        let Ok(value) = attr.unescape_value() else {
            continue;
        };
        if let Cow::Owned(s) = scrub(&value) {
            edits
                .0
                .push((start..start + raw.len(), escape(s.as_str()).into_owned()));
        }
    }
}

/// Scrubs an XML document; the input comes back borrowed when nothing changed.
pub fn scrub_xml(text: &str) -> Cow<'_, str> {
    if !might_contain_secret(text) {
        return Cow::Borrowed(text);
    }
    let mut reader = Reader::from_str(text);
    let mut edits = Edits::default();
    let mut run = TextRun::default();
    let mut rest_from = None;
    loop {
        let before = reader.buffer_position() as usize;
        let event = match reader.read_event() {
            Ok(e) => e,
            Err(_) => {
                rest_from = Some(before);
                break;
            }
        };
        let range = before..reader.buffer_position() as usize;
        match event {
            Event::Text(t) => match t.decode() {
                Ok(s) => run.push(range, &s),
                Err(_) => run.flush(&mut edits),
            },
            Event::CData(t) => match t.decode() {
                Ok(s) => run.push(range, &s),
                Err(_) => run.flush(&mut edits),
            },
            Event::GeneralRef(r) => {
                let resolved = match r.resolve_char_ref() {
                    Ok(Some(c)) => Some(c.to_string()),
                    _ => r
                        .decode()
                        .ok()
                        .and_then(|n| resolve_predefined_entity(&n).map(str::to_string)),
                };
                match resolved {
                    Some(s) => run.push(range, &s),
                    None => run.flush(&mut edits),
                }
            }
            Event::Start(e) | Event::Empty(e) => {
                run.flush(&mut edits);
                scrub_attributes(text, &e, &mut edits);
            }
            Event::Comment(c) => {
                run.flush(&mut edits);
                if let (Ok(inner), Some(at)) = (c.decode(), text[range.clone()].find("<!--")) {
                    let start = range.start + at + 4;
                    if let Cow::Owned(s) = scrub(&inner) {
                        edits.0.push((start..start + inner.len(), s));
                    }
                }
            }
            Event::Eof => break,
            _ => run.flush(&mut edits),
        }
    }
    run.flush(&mut edits);
    if let Some(from) = rest_from {
        if let Cow::Owned(s) = scrub(&text[from..]) {
            edits.0.push((from..text.len(), s));
        }
    }
    edits.apply(text)
}

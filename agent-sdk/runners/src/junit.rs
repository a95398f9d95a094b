//! JUnit XML: reading what pytest and nextest write, and writing huddle's own report for CI
//! systems. Parsing uses quick-xml's streaming reader, so a 100,000-test file is one pass with
//! no DOM.

use crate::report::{Outcome, Report};
use quick_xml::escape::resolve_predefined_entity;
use quick_xml::events::{BytesStart, BytesText, Event};
use quick_xml::{Reader, Writer};
use std::borrow::Cow;
use std::fmt;

/// One `<testcase>` as written by the runner.
#[derive(Debug, Clone, PartialEq)]
pub struct JunitCase {
    /// The enclosing `<testsuite name>`.
    pub suite: String,
    /// The `classname` attribute (module path for pytest, binary id for nextest).
    pub classname: String,
    /// The `name` attribute.
    pub name: String,
    /// The `file` attribute, when present.
    pub file: Option<String>,
    /// The `line` attribute, as written (pytest writes 0-based lines).
    pub line: Option<u32>,
    /// The `time` attribute in seconds.
    pub time: f64,
    /// Failed for `<failure>`, error for `<error>` alone, skipped for `<skipped>`.
    pub outcome: Outcome,
    /// The `message` attribute of the failure, error or skip.
    pub message: Option<String>,
    /// The text inside the failure, error or skip element.
    pub text: String,
}

/// A JUnit file that is not well-formed XML.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JunitError(pub String);

impl fmt::Display for JunitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "malformed JUnit XML: {}", self.0)
    }
}

impl std::error::Error for JunitError {}

fn attr(e: &BytesStart<'_>, key: &[u8]) -> Option<String> {
    e.attributes()
        .flatten()
        .find(|a| a.key.as_ref() == key)
        .and_then(|a| a.unescape_value().ok().map(Cow::into_owned))
}

fn new_case(e: &BytesStart<'_>, suite: &str) -> JunitCase {
    JunitCase {
        suite: suite.to_string(),
        classname: attr(e, b"classname").unwrap_or_default(),
        name: attr(e, b"name").unwrap_or_default(),
        file: attr(e, b"file"),
        line: attr(e, b"line").and_then(|l| l.parse().ok()),
        time: attr(e, b"time").and_then(|t| t.parse().ok()).unwrap_or(0.0),
        outcome: Outcome::Passed,
        message: None,
        text: String::new(),
    }
}

/// Records a `<failure>`, `<error>` or `<skipped>` child; a failure outranks an error (pytest
/// writes both when a failing test also errors in teardown), and both outrank a skip.
fn mark(case: &mut JunitCase, e: &BytesStart<'_>) -> bool {
    let outcome = match e.name().as_ref() {
        b"failure" => Outcome::Failed,
        b"error" => Outcome::Error,
        b"skipped" => Outcome::Skipped,
        _ => return false,
    };
    let rank = |o: Outcome| match o {
        Outcome::Failed => 3,
        Outcome::Error => 2,
        Outcome::Skipped => 1,
        Outcome::Passed => 0,
    };
    if rank(outcome) > rank(case.outcome) {
        case.outcome = outcome;
        case.message = attr(e, b"message");
    }
    true
}

fn err(reader: &Reader<&[u8]>, e: impl fmt::Display) -> JunitError {
    JunitError(format!("at byte {}: {e}", reader.buffer_position()))
}

/// Parses every `<testcase>` in a JUnit XML document, in document order.
pub fn parse_junit(xml: &str) -> Result<Vec<JunitCase>, JunitError> {
    let mut reader = Reader::from_str(xml);
    let mut cases = Vec::new();
    let mut suites: Vec<String> = Vec::new();
    let mut current: Option<JunitCase> = None;
    // Depth of an open <failure>/<error>/<skipped> whose text we collect.
    let mut capturing = 0usize;
    loop {
        let event = reader.read_event().map_err(|e| err(&reader, e))?;
        match event {
            Event::Start(e) => match e.name().as_ref() {
                b"testsuite" => suites.push(attr(&e, b"name").unwrap_or_default()),
                b"testcase" => {
                    current = Some(new_case(&e, suites.last().map_or("", String::as_str)))
                }
                _ => {
                    if let Some(case) = current.as_mut() {
                        if capturing > 0 || mark(case, &e) {
                            capturing += 1;
                        }
                    }
                }
            },
            Event::Empty(e) => match e.name().as_ref() {
                b"testcase" => cases.push(new_case(&e, suites.last().map_or("", String::as_str))),
                _ => {
                    if let Some(case) = current.as_mut() {
                        if capturing == 0 {
                            mark(case, &e);
                        }
                    }
                }
            },
            Event::End(e) => match e.name().as_ref() {
                b"testsuite" => {
                    suites.pop();
                }
                b"testcase" => cases.extend(current.take()),
                _ => capturing = capturing.saturating_sub(1),
            },
            Event::Text(t) if capturing > 0 => {
                if let Some(case) = current.as_mut() {
                    case.text
                        .push_str(&t.xml10_content().map_err(|e| err(&reader, e))?);
                }
            }
            Event::CData(t) if capturing > 0 => {
                if let Some(case) = current.as_mut() {
                    case.text
                        .push_str(&t.decode().map_err(|e| err(&reader, e))?);
                }
            }
            Event::GeneralRef(r) if capturing > 0 => {
                if let Some(case) = current.as_mut() {
                    if let Some(c) = r.resolve_char_ref().map_err(|e| err(&reader, e))? {
                        case.text.push(c);
                    } else {
                        let name = r.decode().map_err(|e| err(&reader, e))?;
                        case.text
                            .push_str(resolve_predefined_entity(&name).unwrap_or(""));
                    }
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    Ok(cases)
}

/// Removes characters XML 1.0 cannot carry (control characters other than tab and newlines).
pub fn xml_safe(text: &str) -> Cow<'_, str> {
    let ok = |c: char| {
        matches!(c, '\t' | '\n' | '\r') || (c >= ' ' && c != '\u{FFFE}' && c != '\u{FFFF}')
    };
    if text.chars().all(ok) {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(text.chars().filter(|&c| ok(c)).collect())
    }
}

/// Writes a report as JUnit XML: one `<testsuite>` named after the framework; each test's
/// classname is its node id up to the last `::` and its name the rest.
pub fn write_junit(report: &Report) -> String {
    let mut w = Writer::new_with_indent(Vec::new(), b' ', 2);
    let s = &report.summary;
    let (tests, failures, errors, skipped) = (
        s.total.to_string(),
        s.failed.to_string(),
        s.error.to_string(),
        s.skipped.to_string(),
    );
    let time = format!("{:.3}", report.duration);
    let counts = [
        ("tests", tests.as_str()),
        ("failures", failures.as_str()),
        ("errors", errors.as_str()),
        ("skipped", skipped.as_str()),
        ("time", time.as_str()),
    ];
    let _ = w.write_event(Event::Decl(quick_xml::events::BytesDecl::new(
        "1.0",
        Some("UTF-8"),
        None,
    )));
    let _ = w
        .create_element("testsuites")
        .with_attribute(("name", "huddle"))
        .with_attributes(counts)
        .write_inner_content(|w| {
            w.create_element("testsuite")
                .with_attribute(("name", report.framework.name()))
                .with_attributes(counts)
                .write_inner_content(|w| {
                    for t in &report.tests {
                        write_case(w, t)?;
                    }
                    Ok(())
                })?;
            Ok(())
        });
    String::from_utf8(w.into_inner()).unwrap_or_default()
}

fn write_case(w: &mut Writer<Vec<u8>>, t: &crate::report::TestResult) -> std::io::Result<()> {
    let (class, name) = match t.nodeid.rsplit_once("::") {
        Some((c, n)) => (c, n),
        None => ("", t.nodeid.as_str()),
    };
    let time = format!("{:.3}", t.duration);
    let line = t.lineno.map(|l| l.to_string());
    let mut el = w
        .create_element("testcase")
        .with_attribute(("classname", xml_safe(class).as_ref()))
        .with_attribute(("name", xml_safe(name).as_ref()))
        .with_attribute(("time", time.as_str()));
    if let Some(file) = &t.file {
        el = el.with_attribute(("file", xml_safe(file).as_ref()));
    }
    if let Some(line) = &line {
        el = el.with_attribute(("line", line.as_str()));
    }
    let child = match t.outcome {
        Outcome::Passed => return el.write_empty().map(|_| ()),
        Outcome::Failed => "failure",
        Outcome::Error => "error",
        Outcome::Skipped => "skipped",
    };
    let body = xml_safe(t.longrepr.as_deref().unwrap_or("")).into_owned();
    let message = body
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
        .to_string();
    el.write_inner_content(|w| {
        let c = w
            .create_element(child)
            .with_attribute(("message", message.as_str()));
        if body.is_empty() {
            c.write_empty()?;
        } else {
            c.write_text_content(BytesText::new(&body))?;
        }
        Ok(())
    })
    .map(|_| ())
}

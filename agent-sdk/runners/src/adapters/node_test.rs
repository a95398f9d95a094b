//! Node's built-in test runner: `node --test` with huddle's reporter
//! (`js/huddle_node_test_reporter.mjs`, written into the run directory) beside node's spec
//! reporter, read by [`super::node_test_events`]. The test files are the test script's
//! (`node --test test/`) or node's own default patterns; the name filter is
//! `--test-name-pattern`; a listing runs with a pattern no test matches, so files load and
//! every test reports as skipped without running (tests a test body creates only exist once
//! it runs, as with go's subtests).

use super::node_test_events::parse_node_test_events;
use super::script::NODE_VALUE_OPTIONS;
use super::shell_glob;
use super::{exact_names_pattern, files_and_names_of, Collected, Ctx, Prepared};
use crate::error::RunnerError;
use crate::options::{Listing, Selection};
use crate::process::{Captured, Invocation};
use crate::tools;

const REPORTER: &str = include_str!("js/huddle_node_test_reporter.mjs");
const REPORTER_FILE: &str = "huddle_node_test_reporter.mjs";
const EVENTS_FILE: &str = "node-test-events.jsonl";
/// A test-name pattern no test matches (an empty negative lookahead).
const MATCHES_NOTHING: &str = "(?!)";

/// Node options huddle sets itself (reporters, the name filter) or that make the run
/// something else (watch mode, coverage); each is dropped with its value.
const DROPPED: &[&str] = &[
    "--test",
    "--test-reporter",
    "--test-reporter-destination",
    "--test-name-pattern",
    "--watch",
    "--watch-path",
    "--experimental-test-coverage",
];

/// What the project's test script (`node [options] --test [options] [files]`) gives node:
/// its options, each with its value (`--import tsx/esm`), and its file arguments, expanded
/// as npm's shell would (node 20 does not expand `src/**/*.test.ts` itself).
fn script_words(ctx: &Ctx<'_>) -> (Vec<String>, Vec<String>) {
    let script = std::fs::read_to_string(ctx.project.join("package.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .and_then(|p| p.pointer("/scripts/test")?.as_str().map(str::to_string))
        .unwrap_or_default();
    split_script(&script, ctx.project)
}

fn split_script(script: &str, project: &std::path::Path) -> (Vec<String>, Vec<String>) {
    let words = shlex::split(script).unwrap_or_default();
    let end = words
        .iter()
        .position(|w| matches!(w.as_str(), "&&" | "||" | "|" | ";"))
        .unwrap_or(words.len());
    let words = &words[..end];
    let Some(node) = words.iter().position(|w| w == "node") else {
        return (Vec::new(), Vec::new());
    };
    if !words[node..].iter().any(|w| w == "--test") {
        return (Vec::new(), Vec::new());
    }
    let (mut options, mut files) = (Vec::new(), Vec::new());
    let mut rest = words[node + 1..].iter();
    while let Some(word) = rest.next() {
        // Node takes options only before the first file.
        if !files.is_empty() || !word.starts_with('-') {
            files.extend(shell_glob::expand(word, script, project));
            continue;
        }
        let name = word.split('=').next().unwrap_or(word);
        let mut option = vec![word.clone()];
        if !word.contains('=') && NODE_VALUE_OPTIONS.contains(&name) {
            option.extend(rest.next().cloned());
        }
        if !DROPPED.contains(&name) {
            options.extend(option);
        }
    }
    (options, files)
}

/// `node [script's node options] --test <huddle's reporter> <spec reporter>
/// [--test-name-pattern] [files]` (node takes options only before the files); returns the
/// invocation and the selection's name pattern. `listing` runs with a pattern no test
/// matches instead.
fn command(
    ctx: &Ctx<'_>,
    events: &std::path::Path,
    listing: bool,
) -> Result<(Invocation, Option<String>), RunnerError> {
    let node = tools::find_program("node", &ctx.path)
        .ok_or_else(|| tools::missing("node", ctx.project))?;
    let reporter = ctx.out(REPORTER_FILE);
    std::fs::write(&reporter, REPORTER)
        .map_err(|e| RunnerError::io(format!("writing {}", reporter.display()), e))?;
    let (node_options, script_args) = script_words(ctx);
    let mut inv = ctx.invocation(node);
    inv.args.extend(node_options.iter().map(Into::into));
    inv.arg("--test")
        .arg(format!("--test-reporter={}", reporter.display()))
        .arg("--test-reporter-destination=stderr")
        .arg("--test-reporter=spec")
        .arg("--test-reporter-destination=stdout");
    inv.env
        .push(("HUDDLE_NODE_TEST_REPORT".into(), events.into()));
    let mut pattern = ctx.opts.filter.clone();
    let files: Vec<String> = match &ctx.opts.selection {
        Selection::All | Selection::Related(_) => script_args,
        Selection::Paths(paths) => paths.clone(),
        Selection::Tests(ids) => {
            let (files, names) = files_and_names_of(ids);
            // node matches a test's own name, so each id gives its last part.
            let leaves: Vec<String> = names
                .iter()
                .map(|n| n.rsplit("::").next().unwrap_or(n).to_string())
                .collect();
            if pattern.is_none() && !leaves.is_empty() {
                pattern = Some(exact_names_pattern(&leaves));
            }
            files
        }
    };
    let applied = if listing {
        Some(MATCHES_NOTHING)
    } else {
        pattern.as_deref()
    };
    if let Some(p) = applied {
        inv.arg(format!("--test-name-pattern={p}"));
    }
    inv.args.extend(files.iter().map(Into::into));
    Ok((inv, pattern))
}

pub(crate) fn prepare(ctx: &Ctx<'_>) -> Result<Prepared, RunnerError> {
    let events = ctx.out(EVENTS_FILE);
    let (inv, _) = command(ctx, &events, false)?;
    let mut prepared = Prepared::new(inv);
    prepared.report_file = Some(events);
    Ok(prepared)
}

pub(crate) fn collect(
    ctx: &Ctx<'_>,
    prepared: &Prepared,
    captured: &Captured,
) -> Result<Collected, RunnerError> {
    let events = prepared
        .report_file
        .as_deref()
        .expect("the events file is set");
    let text = super::read_output(events).unwrap_or_default();
    let (tests, mut running) = parse_node_test_events(&crate::text::lossy(&text), ctx.project);
    // Node runs each file in a process of its own and passes a test's start on only once the
    // test ends: a hung test is then known by the test its file reported last.
    if captured.timed_out && running.is_empty() {
        if let Some(last) = tests.last() {
            let file = last.file.as_deref().unwrap_or("?");
            running.push(format!(
                "the test after {} in {file} (node reports a test's start only once it ends)",
                last.nodeid
            ));
        }
    }
    Ok(Collected {
        tests,
        running,
        ..Collected::default()
    })
}

pub(crate) async fn list(ctx: &Ctx<'_>) -> Result<Listing, RunnerError> {
    let events = ctx.out(EVENTS_FILE);
    let (inv, pattern) = command(ctx, &events, true)?;
    let captured = ctx.helper(&inv).await?;
    let text = super::read_output(&events).unwrap_or_default();
    let (tests, _) = parse_node_test_events(&crate::text::lossy(&text), ctx.project);
    let matcher = pattern
        .map(|p| {
            regex::Regex::new(&p).map_err(|e| {
                RunnerError::Unsupported(format!(
                    "huddle lists node:test tests and applies the name filter {p:?} itself, \
                     with Rust's regex syntax, which refuses it: {e}"
                ))
            })
        })
        .transpose()?;
    let mut listing = Listing::default();
    for t in tests {
        if t.outcome.is_failure() {
            listing.errors.push(format!(
                "{}: {}",
                t.nodeid,
                t.longrepr.as_deref().unwrap_or("failed to load")
            ));
            continue;
        }
        let name = t.nodeid.rsplit("::").next().unwrap_or(&t.nodeid);
        if matcher.as_ref().is_none_or(|m| m.is_match(name)) {
            listing.tests.push(t.nodeid);
        }
    }
    if listing.tests.is_empty() && listing.errors.is_empty() && captured.exit_code != 0 {
        listing.errors.push(format!(
            "node --test exited with code {} and reported no test.\n{}",
            captured.exit_code,
            super::runner_output(&captured)
        ));
    }
    Ok(listing)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_keep_their_values_and_huddles_own_go() {
        let dir = tempfile::tempdir().unwrap();
        let (options, files) = split_script(
            "node --import tsx/esm --test --test-reporter spec --test-concurrency 1 \
             --experimental-test-coverage -r ./setup.js test/",
            dir.path(),
        );
        assert_eq!(
            options,
            [
                "--import",
                "tsx/esm",
                "--test-concurrency",
                "1",
                "-r",
                "./setup.js"
            ]
        );
        assert_eq!(files, ["test/"]);
    }

    #[test]
    fn not_a_node_test_script() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            split_script("node scripts/test.js", dir.path()),
            (Vec::new(), Vec::new())
        );
    }
}

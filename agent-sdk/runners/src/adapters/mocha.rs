//! Mocha: `mocha --reporter=json --reporter-option=output=…`; coverage through c8 or nyc when
//! the project has one. Mocha aborts the whole run when a spec file fails to load, writing no
//! report: that becomes one error entry named by the file, with mocha's message.

use super::jest::files_and_names;
use super::{exact_names_pattern, node_tool, read_output, relative};
use super::{Collected, Ctx, Prepared};
use crate::conventions::test_files;
use crate::coverage;
use crate::error::RunnerError;
use crate::framework::Framework;
use crate::options::{Listing, Selection};
use crate::process::Captured;
use crate::report::{Outcome, TestResult};
use crate::scrub::{strip_ansi, tail_lines};
use crate::tools;
use serde::Deserialize;
use std::collections::HashSet;
use std::path::Path;

#[derive(Deserialize)]
struct Output {
    #[serde(default)]
    tests: Vec<Test>,
    #[serde(default)]
    passes: Vec<Test>,
    #[serde(default)]
    failures: Vec<Test>,
    #[serde(default)]
    pending: Vec<Test>,
}

#[derive(Deserialize)]
struct Test {
    title: String,
    #[serde(rename = "fullTitle")]
    full_title: String,
    #[serde(default)]
    file: Option<String>,
    #[serde(default)]
    duration: Option<f64>,
    #[serde(default)]
    err: Option<serde_json::Value>,
}

impl Test {
    fn key(&self) -> (&str, &str) {
        (self.file.as_deref().unwrap_or(""), &self.full_title)
    }

    fn result(&self, root: &Path, outcome: Outcome) -> TestResult {
        let file = self.file.as_deref().map(|f| relative(root, f));
        // fullTitle is the describe titles and the title joined by spaces.
        let prefix = self
            .full_title
            .strip_suffix(self.title.as_str())
            .map(str::trim_end)
            .unwrap_or("");
        let mut nodeid = file.clone().unwrap_or_default();
        for part in [prefix, self.title.as_str()]
            .into_iter()
            .filter(|p| !p.is_empty())
        {
            nodeid.push_str("::");
            nodeid.push_str(part);
        }
        let longrepr = outcome.is_failure().then(|| {
            let err = self.err.as_ref();
            let text = err
                .and_then(|e| e.get("stack").or_else(|| e.get("message")))
                .and_then(|v| v.as_str())
                .unwrap_or("");
            strip_ansi(text).into_owned()
        });
        TestResult {
            nodeid,
            outcome,
            duration: self.duration.unwrap_or(0.0) / 1000.0,
            file,
            lineno: None,
            longrepr,
        }
    }
}

/// Parses mocha's json reporter output. Outcomes come from the `passes`, `failures` and
/// `pending` lists; a failure that is not a test (a `before all` hook) is an error.
pub fn parse_mocha_json(bytes: &[u8], root: &Path) -> Result<Vec<TestResult>, serde_json::Error> {
    let out: Output = serde_json::from_slice(bytes)?;
    let failed: HashSet<(&str, &str)> = out.failures.iter().map(Test::key).collect();
    let pending: HashSet<(&str, &str)> = out.pending.iter().map(Test::key).collect();
    let passed: HashSet<(&str, &str)> = out.passes.iter().map(Test::key).collect();
    let mut tests = Vec::new();
    let known: HashSet<(&str, &str)> = out.tests.iter().map(Test::key).collect();
    for t in &out.tests {
        let key = t.key();
        let outcome = if failed.contains(&key) {
            Outcome::Failed
        } else if pending.contains(&key) {
            Outcome::Skipped
        } else if passed.contains(&key) {
            Outcome::Passed
        } else {
            // Listed but never finished: a hook failure stopped it.
            Outcome::Skipped
        };
        let source = out.failures.iter().find(|f| f.key() == key).unwrap_or(t);
        tests.push(source.result(root, outcome));
    }
    for f in out.failures.iter().filter(|f| !known.contains(&f.key())) {
        tests.push(f.result(root, Outcome::Error));
    }
    Ok(tests)
}

pub(crate) fn prepare(ctx: &Ctx<'_>) -> Result<Prepared, RunnerError> {
    let (mut inv, mocha_bin) = node_tool(ctx, "mocha")?;
    if ctx.opts.coverage {
        // node <c8|nyc> <options> <mocha> <mocha options>; their scratch data goes to the
        // run directory, not the project's `coverage/` or `.nyc_output/`.
        let (tool, bin) = ["c8", "nyc"]
            .into_iter()
            .find_map(|t| tools::node_bin(ctx.project, t).map(|b| (t, b)))
            .ok_or_else(|| tools::missing("c8", ctx.project))?;
        let temp = if tool == "c8" {
            "--temp-directory"
        } else {
            "--temp-dir"
        };
        inv.args.clear();
        inv.arg(bin).arg("--reporter=json-summary");
        inv.arg(format!("--report-dir={}", ctx.out("coverage").display()));
        inv.arg(format!("{temp}={}", ctx.out("coverage-tmp").display()));
        inv.arg(&mocha_bin);
    }
    let report = ctx.out("mocha.json");
    inv.arg("--reporter=json")
        .arg(format!("--reporter-option=output={}", report.display()));
    add_selection(ctx, &mut inv.args);
    let mut prepared = Prepared::new(inv);
    prepared.report_file = Some(report);
    Ok(prepared)
}

/// Mocha adds files named on the command line to the config's `spec` (it never replaces
/// them), so a selection also ignores every other test file of the project.
fn add_selection(ctx: &Ctx<'_>, args: &mut Vec<std::ffi::OsString>) {
    let mut grep = ctx.opts.filter.clone();
    let selected: Vec<String> = match &ctx.opts.selection {
        Selection::All => Vec::new(),
        Selection::Paths(paths) | Selection::Related(paths) => paths.clone(),
        Selection::Tests(ids) => {
            let (files, names) = files_and_names(ids);
            if !names.is_empty() && grep.is_none() {
                grep = Some(exact_names_pattern(&names));
            }
            files
        }
    };
    if !selected.is_empty() {
        let chosen = |f: &str| {
            selected.iter().any(|s| {
                let s = s.trim_end_matches('/');
                f == s || f.strip_prefix(s).is_some_and(|rest| rest.starts_with('/'))
            })
        };
        for other in test_files(ctx.project, Framework::Mocha) {
            if !chosen(&other) {
                args.push(format!("--ignore={other}").into());
            }
        }
        args.extend(selected.iter().map(Into::into));
    }
    if let Some(g) = grep {
        args.push(format!("--grep={g}").into());
    }
}

pub(crate) fn collect(
    ctx: &Ctx<'_>,
    prepared: &Prepared,
    captured: &Captured,
) -> Result<Collected, RunnerError> {
    let mut collected = Collected::default();
    match prepared.report_file.as_deref().and_then(read_output) {
        Some(bytes) => {
            collected.tests = parse_mocha_json(&bytes, ctx.project)
                .map_err(|e| RunnerError::io("reading mocha's JSON report", e.into()))?;
        }
        None if captured.exit_code != 0 && !captured.timed_out => {
            collected
                .tests
                .push(load_error(ctx.project, &captured.stderr));
        }
        None => {}
    }
    if ctx.opts.coverage {
        collected.coverage = coverage::istanbul(ctx.run_dir, "coverage/coverage-summary.json");
    }
    Ok(collected)
}

/// The error entry for a run mocha aborted: named by the first project file in the message.
fn load_error(root: &Path, stderr: &[u8]) -> TestResult {
    let text = strip_ansi(&String::from_utf8_lossy(stderr)).into_owned();
    let root_str = root.to_string_lossy();
    let file = text
        .split(|c: char| c.is_whitespace() || c == '(' || c == ')' || c == '\'')
        .map(|w| w.split(':').next().unwrap_or(w))
        .find(|w| w.starts_with(root_str.as_ref()) && !w.contains("/node_modules/"))
        .map(|w| relative(root, w));
    let mut t = TestResult::new(
        file.clone().unwrap_or_else(|| "[mocha]".into()),
        Outcome::Error,
    );
    t.file = file;
    let start = text.find("Exception during run:").unwrap_or(0);
    t.longrepr = Some(tail_lines(text[start..].trim(), 60));
    t
}

pub(crate) async fn list(ctx: &Ctx<'_>) -> Result<Listing, RunnerError> {
    let (mut inv, _) = node_tool(ctx, "mocha")?;
    let out_file = ctx.out("mocha-list.json");
    inv.arg("--dry-run")
        .arg("--reporter=json")
        .arg(format!("--reporter-option=output={}", out_file.display()));
    add_selection(ctx, &mut inv.args);
    let out = ctx.helper(&inv).await?;
    let mut listing = Listing::default();
    match read_output(&out_file).and_then(|b| parse_mocha_json(&b, ctx.project).ok()) {
        Some(tests) => listing.tests = tests.into_iter().map(|t| t.nodeid).collect(),
        None => listing
            .errors
            .extend(load_error(ctx.project, &out.stderr).longrepr),
    }
    Ok(listing)
}

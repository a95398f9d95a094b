//! Playwright Test (`@playwright/test`): `playwright test --reporter=json` with the JSON in
//! the run directory (`PLAYWRIGHT_JSON_OUTPUT_NAME`), traces kept for failing tests
//! (`--trace=retain-on-failure`) and every artifact (traces, screenshots the project's config
//! asks for) under `<run>/playwright-output`. The browser is the system's: huddle never lets
//! Playwright download one (`PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD`), and the project's config
//! reads the executable from `HUDDLE_CHROMIUM` (set by the tiers pipeline from `huddle.toml`).
//! Used by the e2e tier, not detected as a project's framework.

use super::{node_entry, unreadable_report, Collected, Ctx, Prepared};
use crate::error::RunnerError;
use crate::options::{Listing, Selection};
use crate::process::{Captured, Invocation};
use crate::report::{Outcome, TestResult};
use crate::tools;
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// Where Playwright writes its artifacts, in the run directory.
pub const OUTPUT_DIR: &str = "playwright-output";
const REPORT_FILE: &str = "playwright.json";

fn command(ctx: &Ctx<'_>) -> Result<Invocation, RunnerError> {
    let resolved = node_entry::resolve(ctx.project, "@playwright/test", "playwright")
        .map_err(|_| tools::missing("@playwright/test", ctx.project))?;
    let mut inv = match resolved.entry {
        node_entry::Entry::Script(script) => {
            let node = tools::find_program("node", &ctx.path)
                .ok_or_else(|| tools::missing("node", ctx.project))?;
            let mut inv = ctx.invocation(node);
            inv.arg(script);
            inv
        }
        node_entry::Entry::Shim(shim) => ctx.invocation(shim),
    };
    inv.arg("test");
    inv.env
        .push(("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD".into(), "1".into()));
    Ok(inv)
}

fn add_selection(ctx: &Ctx<'_>, inv: &mut Invocation) {
    match &ctx.opts.selection {
        Selection::All => {}
        Selection::Paths(p) | Selection::Related(p) => inv.args.extend(p.iter().map(Into::into)),
        Selection::Tests(ids) => {
            let (files, names) = super::files_and_names_of(ids);
            inv.args.extend(files.into_iter().map(Into::into));
            if !names.is_empty() && ctx.opts.filter.is_none() {
                let titles: Vec<String> = names.iter().map(|n| n.replace("::", " ")).collect();
                inv.arg(format!(
                    "--grep={}",
                    super::exact_names_pattern(&titles)
                        .trim_start_matches('^')
                        .trim_end_matches('$')
                ));
            }
        }
    }
    if let Some(f) = &ctx.opts.filter {
        inv.arg(format!("--grep={f}"));
    }
}

pub(crate) fn prepare(ctx: &Ctx<'_>) -> Result<Prepared, RunnerError> {
    if ctx.opts.coverage {
        return Err(RunnerError::Unsupported(
            "coverage is not supported for Playwright tests".into(),
        ));
    }
    let mut inv = command(ctx)?;
    let report = ctx.out(REPORT_FILE);
    inv.arg("--reporter=json")
        .arg("--trace=retain-on-failure")
        .arg(format!("--output={}", ctx.out(OUTPUT_DIR).display()));
    inv.env
        .push(("PLAYWRIGHT_JSON_OUTPUT_NAME".into(), report.clone().into()));
    add_selection(ctx, &mut inv);
    let mut prepared = Prepared::new(inv);
    prepared.report_file = Some(report);
    Ok(prepared)
}

pub(crate) fn collect(
    ctx: &Ctx<'_>,
    prepared: &Prepared,
    captured: &Captured,
) -> Result<Collected, RunnerError> {
    let path = prepared
        .report_file
        .clone()
        .unwrap_or_else(|| ctx.out(REPORT_FILE));
    let tests = match super::read_output(&path) {
        Some(bytes) => match parse_playwright_json(&bytes, ctx.project) {
            Ok(tests) => tests,
            Err(e) => vec![unreadable_report(
                "playwright",
                &path,
                &format!("its JSON does not parse ({e})"),
                captured,
            )],
        },
        None if captured.timed_out => Vec::new(),
        None => vec![unreadable_report(
            "playwright",
            &path,
            "it wrote no JSON report",
            captured,
        )],
    };
    Ok(Collected {
        tests,
        ..Collected::default()
    })
}

pub(crate) async fn list(ctx: &Ctx<'_>) -> Result<Listing, RunnerError> {
    let mut inv = command(ctx)?;
    let report = ctx.out(REPORT_FILE);
    inv.arg("--list").arg("--reporter=json");
    inv.env
        .push(("PLAYWRIGHT_JSON_OUTPUT_NAME".into(), report.clone().into()));
    add_selection(ctx, &mut inv);
    let captured = ctx.helper(&inv).await?;
    let bytes = super::read_output(&report).unwrap_or_else(|| captured.stdout.clone());
    let tests = parse_playwright_json(&bytes, ctx.project)
        .map_err(|e| RunnerError::Unsupported(format!("playwright --list: {e}")))?;
    Ok(Listing {
        tests: tests.into_iter().map(|t| t.nodeid).collect(),
        errors: Vec::new(),
    })
}

#[derive(Deserialize)]
struct JsonReport {
    #[serde(default)]
    config: JsonConfig,
    #[serde(default)]
    suites: Vec<JsonSuite>,
    #[serde(default)]
    errors: Vec<JsonError>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct JsonConfig {
    #[serde(default)]
    root_dir: Option<PathBuf>,
}

#[derive(Deserialize)]
struct JsonSuite {
    #[serde(default)]
    title: String,
    #[serde(default)]
    file: String,
    #[serde(default)]
    specs: Vec<JsonSpec>,
    #[serde(default)]
    suites: Vec<JsonSuite>,
}

#[derive(Deserialize)]
struct JsonSpec {
    title: String,
    #[serde(default)]
    line: Option<u32>,
    #[serde(default)]
    tests: Vec<JsonTest>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct JsonTest {
    #[serde(default)]
    project_name: String,
    #[serde(default)]
    status: String,
    #[serde(default)]
    results: Vec<JsonResult>,
}

#[derive(Deserialize)]
struct JsonResult {
    #[serde(default)]
    status: String,
    #[serde(default)]
    duration: f64,
    #[serde(default)]
    errors: Vec<JsonError>,
    #[serde(default)]
    attachments: Vec<JsonAttachment>,
}

#[derive(Deserialize)]
struct JsonError {
    #[serde(default)]
    message: Option<String>,
    #[serde(default)]
    stack: Option<String>,
}

#[derive(Deserialize)]
struct JsonAttachment {
    #[serde(default)]
    name: String,
    #[serde(default)]
    path: Option<String>,
}

/// Reads Playwright's JSON report into results: `file::describe::title` ids (with the
/// project in brackets when the config has several), failures with their error text and the
/// artifacts (trace, screenshot) the run kept; errors outside any test become `[runner]`.
pub fn parse_playwright_json(bytes: &[u8], project: &Path) -> Result<Vec<TestResult>, String> {
    let report: JsonReport = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
    let root = report
        .config
        .root_dir
        .clone()
        .unwrap_or_else(|| project.to_path_buf());
    let mut projects: Vec<&str> = Vec::new();
    collect_projects(&report.suites, &mut projects);
    let several = projects.len() > 1;
    let mut out = Vec::new();
    for suite in &report.suites {
        let file = super::relative(project, &root.join(&suite.file).to_string_lossy());
        walk(suite, &file, &mut Vec::new(), several, &mut out, true);
    }
    for e in &report.errors {
        let mut t = TestResult::new("[runner]", Outcome::Error);
        t.longrepr = Some(error_text(e));
        out.push(t);
    }
    Ok(out)
}

fn collect_projects<'a>(suites: &'a [JsonSuite], out: &mut Vec<&'a str>) {
    for s in suites {
        for spec in &s.specs {
            for t in &spec.tests {
                if !out.contains(&t.project_name.as_str()) {
                    out.push(&t.project_name);
                }
            }
        }
        collect_projects(&s.suites, out);
    }
}

fn walk(
    suite: &JsonSuite,
    file: &str,
    titles: &mut Vec<String>,
    several: bool,
    out: &mut Vec<TestResult>,
    top: bool,
) {
    // The top suite is the file itself.
    if !top {
        titles.push(suite.title.clone());
    }
    for spec in &suite.specs {
        for test in &spec.tests {
            let mut parts = vec![file.to_string()];
            if several && !test.project_name.is_empty() {
                parts.push(format!("[{}]", test.project_name));
            }
            parts.extend(titles.iter().cloned());
            parts.push(spec.title.clone());
            let mut t = TestResult::new(parts.join("::"), outcome(test));
            t.file = Some(file.to_string());
            t.lineno = spec.line;
            if let Some(last) = test.results.last() {
                t.duration = last.duration / 1000.0;
            }
            if t.outcome.is_failure() {
                t.longrepr = Some(failure_text(test));
            }
            out.push(t);
        }
    }
    for s in &suite.suites {
        walk(s, file, titles, several, out, false);
    }
    if !top {
        titles.pop();
    }
}

fn outcome(test: &JsonTest) -> Outcome {
    match test.status.as_str() {
        "expected" | "flaky" => {
            if test.results.iter().all(|r| r.status == "skipped") && !test.results.is_empty() {
                Outcome::Skipped
            } else {
                Outcome::Passed
            }
        }
        "skipped" => Outcome::Skipped,
        _ => match test.results.last().map(|r| r.status.as_str()) {
            Some("interrupted") => Outcome::Error,
            _ => Outcome::Failed,
        },
    }
}

fn error_text(e: &JsonError) -> String {
    crate::scrub::strip_ansi(
        e.stack
            .as_deref()
            .or(e.message.as_deref())
            .unwrap_or("(no message)"),
    )
    .into_owned()
}

fn failure_text(test: &JsonTest) -> String {
    let Some(last) = test.results.last() else {
        return "the test did not run".into();
    };
    let mut text: String = last
        .errors
        .iter()
        .map(error_text)
        .collect::<Vec<_>>()
        .join("\n");
    if text.is_empty() {
        text = format!("status: {}", last.status);
    }
    let kept: Vec<String> = last
        .attachments
        .iter()
        .filter_map(|a| Some(format!("{}: {}", a.name, a.path.as_deref()?)))
        .collect();
    if !kept.is_empty() {
        text.push_str("\nartifacts:\n");
        text.push_str(&kept.join("\n"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_becomes_results_with_artifacts() {
        let json = br#"{
          "config": {"rootDir": "/p/e2e"},
          "suites": [{"title": "home.spec.ts", "file": "home.spec.ts", "specs": [
              {"title": "shows the title", "line": 3, "tests": [{"projectName": "chromium",
                "status": "expected", "results": [{"status": "passed", "duration": 120}]}]}
            ], "suites": [{"title": "cart", "file": "home.spec.ts", "specs": [
              {"title": "adds an item", "line": 9, "tests": [{"projectName": "chromium",
                "status": "unexpected", "results": [{"status": "failed", "duration": 50,
                  "errors": [{"message": "expect(locator).toHaveText", "stack": "Error: expect(locator).toHaveText\n at home.spec.ts:10"}],
                  "attachments": [{"name": "trace", "path": "/p/run/playwright-output/t/trace.zip"},
                                  {"name": "screenshot", "path": "/p/run/playwright-output/t/shot.png"}]}]}]},
              {"title": "later", "tests": [{"projectName": "chromium", "status": "skipped",
                "results": [{"status": "skipped"}]}]}
            ]}]}],
          "errors": []
        }"#;
        let tests = parse_playwright_json(json, Path::new("/p")).unwrap();
        let ids: Vec<(&str, Outcome)> = tests
            .iter()
            .map(|t| (t.nodeid.as_str(), t.outcome))
            .collect();
        assert_eq!(
            ids,
            [
                ("e2e/home.spec.ts::shows the title", Outcome::Passed),
                ("e2e/home.spec.ts::cart::adds an item", Outcome::Failed),
                ("e2e/home.spec.ts::cart::later", Outcome::Skipped),
            ]
        );
        let text = tests[1].longrepr.as_deref().unwrap();
        assert!(
            text.contains("toHaveText") && text.contains("trace.zip") && text.contains("shot.png"),
            "{text}"
        );
        assert_eq!(tests[1].lineno, Some(9));
    }

    #[test]
    fn errors_outside_tests_are_kept_and_bad_json_is_an_error() {
        let json = br#"{"suites": [], "errors": [{"message": "Error: no tests found"}]}"#;
        let tests = parse_playwright_json(json, Path::new("/p")).unwrap();
        assert_eq!(tests.len(), 1);
        assert_eq!(
            (tests[0].nodeid.as_str(), tests[0].outcome),
            ("[runner]", Outcome::Error)
        );
        assert!(parse_playwright_json(b"{", Path::new("/p")).is_err());
    }
}

//! cargo-nextest: a JUnit report through a tool config file (`--tool-config-file`, profile
//! `huddle`), and `cargo nextest list` for what JUnit leaves out (ignored tests). The list and
//! `cargo metadata` (for node ids) do not depend on the run's result, so they start beside
//! the run: the list waits for the run's build, then lists while the tests run. Doc tests,
//! which nextest cannot run, are [`super::cargo_doc`]'s.

use super::cargo::{plan, workspace, Plan, Workspace};
use super::cargo_libtest::panic_location;
use super::{Ctx, Prepared};
use crate::error::RunnerError;
use crate::junit::{parse_junit, JunitError};
use crate::options::Listing;
use crate::process::{Captured, Invocation};
use crate::report::{Outcome, TestResult};
use serde_json::Value;
use std::path::Path;
use tokio::task::JoinHandle;

const PROFILE: &str = "huddle";

/// The work started beside a run: the workspace facts and nextest's test list.
pub(crate) type Background = JoinHandle<Result<(Workspace, Value), RunnerError>>;

/// The JUnit file, in the run directory. nextest joins the configured path to its store
/// directory (`target/nextest` under the workspace root, whatever `CARGO_TARGET_DIR` says),
/// and an absolute path replaces it, so the report lands with the run.
const JUNIT: &str = "nextest-junit.xml";

/// `s` as a TOML basic string.
fn toml_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `cargo nextest run` writing its JUnit report into the run directory. With a filter,
/// matching nothing is not an error (`--no-tests=pass`), as it is not for `cargo test`.
pub(crate) fn invocation(
    ctx: &Ctx<'_>,
    cargo: &Path,
    plan: &Plan,
) -> Result<Invocation, RunnerError> {
    let config = ctx.out("nextest.toml");
    let toml = format!(
        "[profile.{PROFILE}]\nfail-fast = false\n\n[profile.{PROFILE}.junit]\npath = {}\n",
        toml_string(&ctx.out(JUNIT).to_string_lossy())
    );
    std::fs::write(&config, toml)
        .map_err(|e| RunnerError::io(format!("writing {}", config.display()), e))?;
    let mut inv = ctx.invocation(cargo);
    inv.arg("nextest").arg("run").arg("--no-fail-fast");
    inv.arg("--tool-config-file")
        .arg(format!("huddle:{}", config.display()));
    inv.arg("--profile").arg(PROFILE);
    if ctx.opts.filter.is_some() {
        inv.arg("--no-tests=pass");
    }
    inv.args.extend(plan.cargo_args.iter().map(Into::into));
    if !plan.test_args.is_empty() {
        inv.arg("--");
        inv.args.extend(plan.test_args.iter().map(Into::into));
    }
    Ok(inv)
}

/// Starts `cargo metadata` (unless `ws` is known) and `cargo nextest list` beside the run.
pub(crate) fn start_background(ctx: &Ctx<'_>, cargo: &Path, ws: Option<Workspace>) -> Background {
    let (project, run_dir) = (ctx.project.to_path_buf(), ctx.run_dir.to_path_buf());
    let (opts, cargo) = (ctx.opts.clone(), cargo.to_path_buf());
    // In the run's sandbox too: the listing builds the project (its build scripts and proc
    // macros run), and a spawned task leaves the caller's sandbox scope.
    let jail = crate::sandbox::current();
    tokio::spawn(crate::sandbox::confined(jail, async move {
        let ctx = Ctx::new(&project, &run_dir, &opts);
        let ws = match ws {
            Some(ws) => ws,
            None => workspace(&ctx, &cargo).await?,
        };
        let listed = list_json(&ctx, &cargo, &plan(&ctx, Some(&ws), true)).await?;
        Ok((ws, listed))
    }))
}

fn nodeid(ws: &Workspace, binary_id: &str, name: &str) -> String {
    let source = ws.sources.get(binary_id).map_or(binary_id, String::as_str);
    format!("{source}::{name}")
}

/// Parses nextest's JUnit report; node ids use each binary's source path.
pub fn parse_nextest_junit(xml: &str, ws: &Workspace) -> Result<Vec<TestResult>, JunitError> {
    Ok(parse_junit(xml)?
        .into_iter()
        .map(|c| {
            let mut t = TestResult::new(nodeid(ws, &c.classname, &c.name), c.outcome);
            t.duration = c.time;
            t.file = ws.sources.get(&c.classname).cloned();
            if c.outcome.is_failure() {
                let text = if c.text.trim().is_empty() {
                    c.message.unwrap_or_default()
                } else {
                    c.text
                };
                if let Some((file, line)) = panic_location(&text) {
                    t.file = Some(file);
                    t.lineno = Some(line);
                }
                t.longrepr = Some(text);
            }
            t
        })
        .collect())
}

/// The tests of the run, the workspace facts the background work found, and the tests a
/// timeout stopped (see [`super::cargo_timeout`]).
pub(crate) async fn collect(
    ctx: &Ctx<'_>,
    prepared: &Prepared,
    captured: &Captured,
) -> Result<(Vec<TestResult>, Option<Workspace>, Vec<String>), RunnerError> {
    let Some(background) = prepared.background.lock().expect("background slot").take() else {
        return Ok((Vec::new(), None, Vec::new()));
    };
    if captured.timed_out {
        background.abort();
        // nextest wrote its report at huddle's SIGTERM, when it had time to.
        let Ok(xml) = std::fs::read_to_string(ctx.out(JUNIT)) else {
            return Ok((Vec::new(), None, Vec::new()));
        };
        let ws = workspace(ctx, &super::cargo::cargo(ctx)?).await?;
        let tests = parse_nextest_junit(&xml, &ws).unwrap_or_default();
        let (finished, stopped) = super::cargo_timeout::split_nextest_stopped(tests);
        return Ok((finished, Some(ws), stopped));
    }
    let (ws, listed) = background
        .await
        .map_err(|e| RunnerError::io("listing nextest tests", std::io::Error::other(e)))??;
    let Ok(xml) = std::fs::read_to_string(ctx.out(JUNIT)) else {
        return Ok((Vec::new(), Some(ws), Vec::new()));
    };
    let mut tests = parse_nextest_junit(&xml, &ws)
        .map_err(|e| RunnerError::io("reading nextest's JUnit XML", std::io::Error::other(e)))?;
    for (binary, name, case) in suites(&listed) {
        let ignored = case.get("ignored").and_then(Value::as_bool) == Some(true);
        if ignored && matches(case) {
            let mut t = TestResult::new(nodeid(&ws, binary, name), Outcome::Skipped);
            t.file = ws.sources.get(binary).cloned();
            tests.push(t);
        }
    }
    Ok((tests, Some(ws), Vec::new()))
}

async fn list_json(ctx: &Ctx<'_>, cargo: &Path, plan: &Plan) -> Result<Value, RunnerError> {
    let mut inv = ctx.invocation(cargo);
    // With every test included, `matches` means "matches the name filters"; ignored tests
    // that match are the ones a run skips.
    inv.arg("nextest")
        .arg("list")
        .arg("--message-format")
        .arg("json");
    // The profile every project has (the run's own inherits it): a `NEXTEST_PROFILE` in the
    // environment — one a nextest run around huddle sets for its tests — may name a profile
    // this project lacks, and nextest would refuse the listing.
    inv.arg("--profile").arg("default");
    inv.arg("--run-ignored").arg("all");
    inv.args.extend(plan.cargo_args.iter().map(Into::into));
    if !plan.test_args.is_empty() {
        inv.arg("--");
        inv.args.extend(plan.test_args.iter().map(Into::into));
    }
    let out = ctx.helper(&inv).await?;
    Ok(serde_json::from_slice(&out.stdout).unwrap_or(Value::Null))
}

fn matches(case: &Value) -> bool {
    case.pointer("/filter-match/status").and_then(Value::as_str) == Some("matches")
}

fn suites(listed: &Value) -> Vec<(&str, &str, &Value)> {
    let mut out = Vec::new();
    if let Some(suites) = listed.get("rust-suites").and_then(Value::as_object) {
        for (binary, suite) in suites {
            if let Some(cases) = suite.get("testcases").and_then(Value::as_object) {
                out.extend(
                    cases
                        .iter()
                        .map(|(name, case)| (binary.as_str(), name.as_str(), case)),
                );
            }
        }
    }
    out
}

pub(crate) async fn list(
    ctx: &Ctx<'_>,
    cargo: &Path,
    ws: &Workspace,
    plan: &Plan,
) -> Result<Listing, RunnerError> {
    let listed = list_json(ctx, cargo, plan).await?;
    let mut listing = Listing::default();
    for (binary, name, case) in suites(&listed) {
        if matches(case) {
            listing.tests.push(nodeid(ws, binary, name));
        }
    }
    if listed.is_null() {
        listing
            .errors
            .push("cargo nextest list failed (see the build output)".into());
    }
    Ok(listing)
}

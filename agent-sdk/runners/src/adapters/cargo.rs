//! cargo: `cargo nextest run` with a JUnit report when cargo-nextest is installed (its skipped
//! tests come from `cargo nextest list`, since its JUnit omits ignored tests) and
//! `cargo test --doc` after it for the doc tests nextest cannot run; else `cargo test` and
//! libtest's per-test lines, doc tests included. Either way the report counts unit,
//! integration and doc tests, as `cargo test` does.
//!
//! Node ids are `<test binary's source>::<libtest path>` in both modes
//! (`src/lib.rs::tests::adds`, `src/lib.rs::text::tests::whispers` for a unit test in
//! `src/text.rs`, `tests/strings.rs::shouts`), and `doc-tests/<crate>::<doc test name>` for
//! doc tests (`doc-tests/mycrate::src/lib.rs - add (line 5)`), so `--failed` works across
//! modes. The prefix names the test binary, which a crate name cannot (a package's library
//! and binaries are all "the crate"); `file` is the module's own file. Build failures become
//! `[build]` error entries with the compiler's message.

use super::cargo_doc::{self, is_doc_id, DocRun};
use super::cargo_files::{build_errors, module_files};
pub(crate) use super::cargo_workspace::workspace;
pub use super::cargo_workspace::{DocPackage, Workspace};
use super::{cargo_libtest, cargo_nextest, cargo_timeout, Collected, Ctx, Prepared};
use crate::error::RunnerError;
use crate::options::{Listing, PluginPolicy, Selection};
use crate::process::{Captured, Invocation};
use crate::tools;
use std::path::PathBuf;

/// What one run (or listing) of cargo runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Plan {
    /// Target selection before `--` (`--test x`, `--package p`; `--doc` when only doc tests
    /// were asked for).
    pub cargo_args: Vec<String>,
    /// libtest arguments after `--`: the filter, or `--exact` and test names.
    pub test_args: Vec<String>,
    /// False when only doc tests were asked for: the main command is `cargo test --doc`.
    pub units: bool,
    /// Doc tests that need a `cargo test --doc` of their own beside the main command.
    pub doc: Option<DocRun>,
}

/// Plans a run: target selection, libtest arguments, and where doc tests run. `cargo test`
/// runs doc tests itself; nextest cannot, and `--exact` cannot pick one, so those runs add a
/// `cargo test --doc`. Naming integration tests (`tests/x.rs`) leaves doc tests out, as
/// `cargo test --test x` does.
pub(crate) fn plan(ctx: &Ctx<'_>, ws: Option<&Workspace>, nextest: bool) -> Plan {
    let selection = match (&ctx.opts.filter, &ctx.opts.selection) {
        // A filter picks from every test, as it always has: re-run ids give way to it.
        (Some(_), Selection::Tests(_)) => &Selection::All,
        (_, selection) => selection,
    };
    let mut plan = Plan {
        units: true,
        ..Plan::default()
    };
    let mut doc = DocRun::default();
    let mut want_doc = true;
    // The tiers' unit tier asks for the library's doc tests by name, beside `--lib`.
    let mut doc_tests_asked = false;
    match selection {
        Selection::All => {}
        Selection::Paths(paths) | Selection::Related(paths) => {
            for p in paths {
                if p == cargo_doc::DOC_TESTS_PATH {
                    doc_tests_asked = true;
                    continue;
                }
                // `.` is the root package (a member's dependent in `--affected`).
                let p = match p.trim_end_matches('/') {
                    "." => "",
                    p => p,
                };
                // The tiers' unit tier: the library's (or the binaries') own tests.
                if p == "src/lib.rs" || p == "src/main.rs" {
                    let target = if p == "src/lib.rs" { "--lib" } else { "--bins" };
                    plan.cargo_args.push(target.to_string());
                    want_doc = false;
                } else if let Some(name) =
                    p.strip_prefix("tests/").and_then(|f| f.strip_suffix(".rs"))
                {
                    plan.cargo_args
                        .extend(["--test".to_string(), name.to_string()]);
                    want_doc = false;
                } else if let Some((name, _)) =
                    ws.and_then(|w| w.packages.iter().find(|(_, d)| d == p))
                {
                    let spec = ws.and_then(|w| w.pkgids.get(name)).unwrap_or(name);
                    plan.cargo_args
                        .extend(["--package".to_string(), spec.clone()]);
                    doc.packages.get_or_insert_with(Vec::new).push(name.clone());
                }
            }
            plan.units = !doc_tests_asked || paths.len() > 1;
        }
        Selection::Tests(ids) => {
            let (docs, units): (Vec<&String>, Vec<&String>) =
                ids.iter().partition(|id| is_doc_id(id));
            plan.units = !units.is_empty() || docs.is_empty();
            if plan.units {
                plan.test_args.push("--exact".to_string());
                plan.test_args.extend(
                    units
                        .iter()
                        .filter_map(|id| id.split_once("::"))
                        .map(|(_, n)| n.to_string()),
                );
            }
            want_doc = !docs.is_empty();
            let mut crates: Vec<String> = Vec::new();
            for id in &docs {
                let filter = cargo_doc::filter_for(id);
                if !doc.test_args.contains(&filter) {
                    doc.test_args.push(filter);
                }
                if let Some(c) = cargo_doc::crate_of(id) {
                    if !crates.iter().any(|k| k == c) {
                        crates.push(c.to_string());
                    }
                }
            }
            doc.packages = Some(crates);
        }
    }
    if let Some(f) = &ctx.opts.filter {
        plan.test_args = vec![f.clone()];
        // `cargo test NAME` runs no doc tests (cargo narrows a run with a test name to its
        // test targets), so neither does a filtered run of huddle's.
        want_doc = false;
        doc_tests_asked = false;
        plan.units = true;
    }
    if !plan.units {
        // Only doc tests: the main command runs them.
        let packages = ws.map(|w| cargo_doc::packages(&doc, w)).unwrap_or_default();
        plan.cargo_args = vec!["--doc".to_string()];
        for p in packages {
            plan.cargo_args.extend(["--package".to_string(), p]);
        }
        plan.test_args = doc.test_args;
        return plan;
    }
    let main_runs_doc = !nextest && !doc_tests_asked && !matches!(selection, Selection::Tests(_));
    if (want_doc || doc_tests_asked) && !main_runs_doc {
        plan.doc = Some(doc);
    }
    plan
}

fn use_nextest(ctx: &Ctx<'_>) -> Result<Option<PathBuf>, RunnerError> {
    let found = tools::find_cargo_subcommand("cargo-nextest", &ctx.path);
    match (ctx.opts.plugins, found) {
        (PluginPolicy::Never, _) => Ok(None),
        (PluginPolicy::Auto, found) => Ok(found),
        (PluginPolicy::Require, Some(p)) => Ok(Some(p)),
        (PluginPolicy::Require, None) => Err(tools::missing("cargo-nextest", ctx.project)),
    }
}

pub(crate) fn cargo(ctx: &Ctx<'_>) -> Result<PathBuf, RunnerError> {
    tools::find_program("cargo", &ctx.path).ok_or_else(|| tools::missing("cargo", ctx.project))
}

pub(crate) async fn prepare(ctx: &Ctx<'_>) -> Result<Prepared, RunnerError> {
    if ctx.opts.coverage {
        return Err(RunnerError::Unsupported(
            "coverage is not supported for cargo: run cargo-llvm-cov yourself".into(),
        ));
    }
    let cargo = cargo(ctx)?;
    let needs_ws = match &ctx.opts.selection {
        Selection::Paths(_) | Selection::Related(_) => true,
        Selection::Tests(ids) => ids.iter().any(|id| is_doc_id(id)),
        Selection::All => false,
    };
    let ws = if needs_ws {
        Some(workspace(ctx, &cargo).await?)
    } else {
        None
    };
    let nextest = use_nextest(ctx)?.is_some();
    let plan = plan(ctx, ws.as_ref(), nextest);
    if nextest && plan.units {
        let inv = cargo_nextest::invocation(ctx, &cargo, &plan)?;
        let mut p = Prepared::new(inv);
        p.plugin = true;
        p.background =
            std::sync::Mutex::new(Some(cargo_nextest::start_background(ctx, &cargo, ws)));
        return Ok(p);
    }
    let mut inv: Invocation = ctx.invocation(&cargo);
    inv.arg("test").arg("--no-fail-fast");
    inv.args.extend(plan.cargo_args.iter().map(Into::into));
    inv.args
        .extend(libtest_args(ctx, &plan).into_iter().map(Into::into));
    Ok(Prepared::new(inv))
}

/// `[NAME] -- <test args>` for `cargo test`: a filter goes before `--`, as `cargo test NAME`
/// takes it, so cargo leaves out doc tests as it does for `cargo test NAME` (after `--` it
/// would run the doc tests the name matches).
fn libtest_args(ctx: &Ctx<'_>, plan: &Plan) -> Vec<String> {
    let mut args = Vec::new();
    let mut rest = plan.test_args.clone();
    if let Some(f) = &ctx.opts.filter {
        if rest == [f.clone()] {
            args.push(f.clone());
            rest.clear();
        }
    }
    args.push("--".to_string());
    args.extend(rest);
    args
}

pub(crate) async fn collect(
    ctx: &Ctx<'_>,
    prepared: &Prepared,
    captured: &Captured,
) -> Result<Collected, RunnerError> {
    let stdout = String::from_utf8_lossy(&captured.stdout);
    let stderr = String::from_utf8_lossy(&captured.stderr);
    let mut running = Vec::new();
    let (mut tests, ws) = if prepared.plugin {
        let (tests, ws, stopped) = cargo_nextest::collect(ctx, prepared, captured).await?;
        running = stopped;
        (tests, ws)
    } else {
        let ws = workspace(ctx, &cargo(ctx)?).await.ok();
        let members = ws
            .as_ref()
            .map(|w| w.member_sources.clone())
            .unwrap_or_default();
        let mut tests = cargo_libtest::parse_libtest_in(&stdout, &stderr, &members);
        if captured.timed_out {
            // The kill's own signal is no crash of a test.
            tests.retain(|t| t.nodeid != "[crash]");
            let test_args = plan(ctx, ws.as_ref(), false).test_args;
            running =
                cargo_timeout::libtest_running(ctx, &stderr, &members, &test_args, &tests).await;
        }
        (tests, ws)
    };
    let build_failed = build_errors(&stderr);
    let mut collected = Collected::default();
    let doc = plan(ctx, ws.as_ref(), prepared.plugin).doc;
    if let (Some(doc), false, None) = (doc, captured.timed_out, &build_failed) {
        let cargo = cargo(ctx)?;
        let ws = match ws {
            Some(ws) => ws,
            None => workspace(ctx, &cargo).await?,
        };
        let packages = cargo_doc::packages(&doc, &ws);
        if !packages.is_empty() {
            let time_left = ctx.opts.timeout.saturating_sub(captured.elapsed);
            let ran = cargo_doc::run(ctx, &cargo, &packages, &doc, time_left).await?;
            tests.extend(ran.tests);
            collected.timed_out = ran.timed_out;
            collected.exit_code = Some(ran.exit_code);
        }
    }
    tests.extend(build_failed);
    module_files(ctx.project, &mut tests);
    collected.tests = tests;
    collected.running = running;
    Ok(collected)
}

/// Lists unit, integration and doc tests: `cargo test -- --list` lists all three; with
/// nextest, `cargo nextest list` and `cargo test --doc -- --list`.
pub(crate) async fn list(ctx: &Ctx<'_>) -> Result<Listing, RunnerError> {
    let cargo = cargo(ctx)?;
    let ws = workspace(ctx, &cargo).await.ok();
    let nextest = use_nextest(ctx)?.is_some();
    let plan = plan(ctx, ws.as_ref(), nextest);
    let mut listing = Listing::default();
    if nextest && plan.units {
        let ws = ws.clone().unwrap_or_default();
        listing = cargo_nextest::list(ctx, &cargo, &ws, &plan).await?;
    } else {
        let mut inv = ctx.invocation(&cargo);
        inv.arg("test");
        inv.args.extend(plan.cargo_args.iter().map(Into::into));
        let mut args = libtest_args(ctx, &plan);
        let after_dashes = args.iter().position(|a| a == "--").map_or(0, |i| i + 1);
        args.insert(after_dashes, "--list".to_string());
        inv.args.extend(args.into_iter().map(Into::into));
        read_list(&ctx.helper(&inv).await?, &mut listing, ws.as_ref());
    }
    if let (Some(doc), Some(ws)) = (&plan.doc, &ws) {
        let packages = cargo_doc::packages(doc, ws);
        if !packages.is_empty() {
            let inv = cargo_doc::invocation(ctx, &cargo, &packages, &doc.test_args, true);
            read_list(&ctx.helper(&inv).await?, &mut listing, Some(ws));
        }
    }
    Ok(listing)
}

fn read_list(out: &Captured, listing: &mut Listing, ws: Option<&Workspace>) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let members = ws.map(|w| w.member_sources.clone()).unwrap_or_default();
    listing
        .tests
        .extend(cargo_libtest::parse_list(&stdout, &stderr, &members));
    listing
        .errors
        .extend(build_errors(&stderr).and_then(|t| t.longrepr));
}

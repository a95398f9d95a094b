//! Vitest: `vitest run --reporter=json --outputFile=…` (the reporter always explicit, so a
//! project's configured reporters cannot change what huddle reads; huddle's progress reporter
//! beside it writes a line per finished test for the live counts), or `vitest related` for
//! affected tests, after the options the project's test script gives (`vitest run --config
//! config/vitest.config.mjs`, see `OPTIONS`) and the caller's `huddle test -- …` arguments.
//! The JSON is jest's format, parsed by [`super::jest::parse_jest_json`]. Listing runs vitest
//! with a name pattern no test matches, as for jest: `vitest list` leaves out skipped tests and
//! joins names with `>`, so its ids would not be the run's.

use super::cli_options::{opt, Arity::*, Opt, Use::*};
use super::jest::{files_and_names, listing_from_report, read_report, NameCase};
use super::jest_progress;
use super::project_args::{self, RunnerArgs, RunnerSpec};
use super::{exact_names_pattern, node_entry, node_tool};
use super::{Collected, Ctx, Prepared};
use crate::coverage;
use crate::error::RunnerError;
use crate::options::{Listing, Selection};
use crate::process::{Captured, Invocation};
use crate::tools;

/// Vitest's options (vitest 3's cac table) and what huddle does with each one found in the
/// test script. Kept: what decides which tests exist and how they load and run (config, root,
/// dir, projects, workspace, environment, pool, workers, timeouts, retries, excludes). Dropped:
/// what huddle decides (reporters, output files, coverage, watch, UI, bail, shard, changed
/// files, snapshot updates); an option not listed here is dropped too. Dotted options
/// (`--poolOptions.threads.singleThread`) are looked up by their first part.
pub(crate) const OPTIONS: &[Opt] = &[
    opt(&["config", "c"], Value, Keep),
    opt(&["root", "r"], Value, Keep),
    opt(&["dir"], Value, Keep),
    opt(&["project"], Value, Keep),
    opt(&["workspace"], Value, Keep),
    opt(&["mode"], Value, Keep),
    opt(&["configLoader"], Value, Keep),
    opt(&["environment"], Value, Keep),
    opt(&["browser"], Value, Keep),
    opt(&["pool"], Value, Keep),
    opt(&["poolOptions"], Value, Keep),
    opt(&["maxWorkers"], Value, Keep),
    opt(&["minWorkers"], Value, Keep),
    opt(&["sequence"], Value, Keep),
    opt(&["testTimeout"], Value, Keep),
    opt(&["hookTimeout"], Value, Keep),
    opt(&["teardownTimeout"], Value, Keep),
    opt(&["maxConcurrency"], Value, Keep),
    opt(&["retry"], Value, Keep),
    opt(&["exclude"], Value, Keep),
    opt(&["isolate"], Flag, Keep),
    opt(&["globals"], Flag, Keep),
    opt(&["dom"], Flag, Keep),
    opt(&["fileParallelism"], Flag, Keep),
    opt(&["passWithNoTests"], Flag, Keep),
    opt(&["allowOnly"], Flag, Keep),
    opt(&["typecheck"], Flag, Keep),
    opt(&["cache"], Flag, Keep),
    opt(&["expect"], Flag, Keep),
    opt(&["dangerouslyIgnoreUnhandledErrors"], Flag, Keep),
    opt(&["testNamePattern", "t"], Value, NameFilter),
    opt(&["reporter", "reporters"], Value, Drop),
    opt(&["outputFile"], Value, Drop),
    opt(&["silent"], Value, Drop),
    opt(&["shard"], Value, Drop),
    opt(&["bail"], Value, Drop),
    opt(&["changed"], Value, Drop),
    opt(&["api"], Value, Drop),
    opt(&["inspect"], Value, Drop),
    opt(&["inspectBrk"], Value, Drop),
    opt(&["diff"], Value, Drop),
    opt(&["attachmentsDir"], Value, Drop),
    opt(&["mergeReports"], Value, Drop),
    opt(&["slowTestThreshold"], Value, Drop),
];

/// Options the caller may not pass after `--`: huddle reads the json reporter's file, so the
/// reporter, the output file and coverage's report location stay huddle's; the others make
/// vitest do something other than run the tests once.
pub(crate) const REFUSED: &[&str] = &[
    "reporter",
    "reporters",
    "outputFile",
    "coverage.reportsDirectory",
    "coverage.reporter",
    "mergeReports",
    "watch",
    "w",
    "ui",
    "open",
    "api",
    "standalone",
    "help",
    "h",
    "version",
    "v",
];

pub(crate) const SPEC: RunnerSpec = RunnerSpec {
    tool: "vitest",
    options: OPTIONS,
    run_words: &["run", "watch", "dev"],
    other_commands: &["bench", "typecheck", "list", "init", "related"],
    refused: REFUSED,
};

/// A test-name pattern no test matches (an empty negative lookahead).
const MATCHES_NOTHING: &str = "(?!)";

/// `node <vitest> run|related … <the script's options> <the caller's arguments>`, with the
/// script's environment and node options.
fn command(ctx: &Ctx<'_>) -> Result<(Invocation, RunnerArgs), RunnerError> {
    let (mut inv, _) = node_tool(ctx, "vitest")?;
    let extra = project_args::gather(ctx, &SPEC);
    extra.apply_to(&mut inv);
    match &ctx.opts.selection {
        Selection::Related(files) => {
            inv.arg("related").arg("--run").arg("--passWithNoTests");
            inv.args.extend(files.iter().map(Into::into));
        }
        _ => {
            inv.arg("run");
        }
    }
    inv.args.extend(extra.args.iter().map(Into::into));
    Ok((inv, extra))
}

/// Adds the selection's files; returns the test-name pattern of the run: the caller's
/// filter, else the exact names of selected tests, else the script's own `-t`.
fn add_selection(ctx: &Ctx<'_>, inv: &mut Invocation, extra: &RunnerArgs) -> Option<String> {
    let mut names = Vec::new();
    match &ctx.opts.selection {
        Selection::All => inv.args.extend(extra.positionals.iter().map(Into::into)),
        Selection::Related(_) => {}
        Selection::Paths(paths) => inv.args.extend(paths.iter().map(Into::into)),
        Selection::Tests(ids) => {
            let (files, selected) = files_and_names(ids);
            names = selected;
            let mut projects: Vec<&str> =
                ids.iter().filter_map(|id| super::project_of(id)).collect();
            projects.sort_unstable();
            projects.dedup();
            inv.args.extend(
                projects
                    .into_iter()
                    .map(|p| format!("--project={p}").into()),
            );
            inv.args.extend(files.into_iter().map(Into::into));
        }
    }
    ctx.opts
        .filter
        .clone()
        .or_else(|| (!names.is_empty()).then(|| exact_names_pattern(&names)))
        .or_else(|| extra.name_filter_value())
}

pub(crate) fn prepare(ctx: &Ctx<'_>) -> Result<Prepared, RunnerError> {
    let (mut inv, extra) = command(ctx)?;
    let report = ctx.out("vitest.json");
    inv.arg("--reporter=json")
        .arg(format!("--outputFile={}", report.display()));
    if accepts_task_location(ctx) {
        inv.arg("--includeTaskLocation");
    }
    with_progress_reporter(ctx, &mut inv)?;
    // A filter that matches nothing is a run of 0 tests, as vitest itself reports it.
    if ctx.opts.filter.is_some() {
        inv.arg("--passWithNoTests");
    }
    if let Some(pattern) = add_selection(ctx, &mut inv, &extra) {
        inv.arg(format!("--testNamePattern={pattern}"));
    }
    if ctx.opts.coverage {
        let provider = ["coverage-v8", "coverage-istanbul"]
            .into_iter()
            .find(|p| {
                ctx.project
                    .ancestors()
                    .any(|d| d.join("node_modules/@vitest").join(p).is_dir())
            })
            .ok_or_else(|| tools::missing("@vitest/coverage-v8", ctx.project))?;
        inv.arg("--coverage.enabled=true")
            .arg(format!(
                "--coverage.provider={}",
                provider.trim_start_matches("coverage-")
            ))
            .arg("--coverage.reporter=json-summary")
            // Failing tests are the normal case here; report coverage anyway.
            .arg("--coverage.reportOnFailure=true")
            .arg(format!(
                "--coverage.reportsDirectory={}",
                ctx.out("coverage").display()
            ));
    }
    let mut prepared = Prepared::new(inv);
    prepared.report_file = Some(report);
    Ok(prepared)
}

/// Whether the installed vitest takes `--includeTaskLocation` (each test's line in the
/// report): a command-line option since vitest 3. vitest 2 stops at it ("Unknown option")
/// before writing any report, so an unknown version goes without the lines.
fn accepts_task_location(ctx: &Ctx<'_>) -> bool {
    matches!(
        node_entry::installed_version(ctx.project, "vitest").0,
        Some((major, _)) if major >= 3
    )
}

/// huddle's progress reporter beside the json one: each test as it ends (for a run stopped at
/// its timeout, and for the live counts of `huddle test`, `crate::live`) and each file's
/// project (which the json report does not name).
fn with_progress_reporter(ctx: &Ctx<'_>, inv: &mut Invocation) -> Result<(), RunnerError> {
    let reporter = ctx.out(PROGRESS_REPORTER_FILE);
    std::fs::write(&reporter, PROGRESS_REPORTER)
        .map_err(|e| RunnerError::io(format!("writing {}", reporter.display()), e))?;
    inv.arg(format!("--reporter={}", reporter.display()));
    inv.env.push((
        "HUDDLE_JEST_PROGRESS".into(),
        ctx.out(jest_progress::PROGRESS_FILE).into(),
    ));
    inv.env.push((
        "HUDDLE_JEST_FILES".into(),
        ctx.out(jest_progress::FILES_FILE).into(),
    ));
    Ok(())
}

/// The progress reporter, written into the run directory for each run.
const PROGRESS_REPORTER: &str = include_str!("js/huddle_vitest_progress.mjs");
const PROGRESS_REPORTER_FILE: &str = "huddle_vitest_progress.mjs";

pub(crate) fn collect(
    ctx: &Ctx<'_>,
    prepared: &Prepared,
    captured: &Captured,
) -> Result<Collected, RunnerError> {
    let mut collected = Collected {
        tests: read_report("vitest", ctx, prepared, captured),
        ..Collected::default()
    };
    if captured.timed_out && collected.tests.is_empty() {
        let progress = ctx.out(jest_progress::PROGRESS_FILE);
        (collected.tests, collected.running) = jest_progress::read_progress(&progress, ctx.project);
    }
    if ctx.opts.coverage {
        collected.coverage = coverage::istanbul(ctx.run_dir, "coverage/coverage-summary.json");
    }
    Ok(collected)
}

pub(crate) async fn list(ctx: &Ctx<'_>) -> Result<Listing, RunnerError> {
    let (mut inv, extra) = command(ctx)?;
    let report = ctx.out("vitest-list.json");
    inv.arg("--reporter=json")
        .arg(format!("--outputFile={}", report.display()))
        .arg(format!("--testNamePattern={MATCHES_NOTHING}"));
    with_progress_reporter(ctx, &mut inv)?;
    let filter = add_selection(ctx, &mut inv, &extra);
    let captured = ctx.helper(&inv).await?;
    let projects = jest_progress::file_projects(&ctx.out(jest_progress::FILES_FILE));
    listing_from_report(
        "vitest",
        ctx.project,
        &report,
        &captured,
        filter.as_deref(),
        NameCase::Sensitive,
        &projects,
    )
}

//! Jest: `jest --json --outputFile=… --testLocationInResults --ci`, after the options the
//! project's test script gives (`jest --config config/jest.config.js`, see `OPTIONS`) and the
//! caller's `huddle test -- …` arguments. The JSON format (shared by vitest's json reporter) is
//! parsed by [`parse_jest_json`]. Listing runs jest with a name pattern no test matches: every
//! suite is loaded and each test reported as pending, with no hook or test body run.

use super::cli_options::{opt, Arity::*, Opt, Use::*};
pub use super::jest_json::parse_jest_json;
use super::project_args::{self, RunnerArgs, RunnerSpec};
use super::{exact_names_pattern, node_tool, split_js_nodeid};
use super::{jest_progress, unreadable_report, Collected, Ctx, Prepared};
use crate::coverage;
use crate::error::RunnerError;
use crate::options::{Listing, Selection};
use crate::process::{Captured, Invocation};
use crate::report::TestResult;
use std::path::Path;

/// Jest's options (jest 30's yargs table, plus jest 29's `--testPathPattern`) and what huddle
/// does with each one found in the test script. Kept: what decides which tests exist and how
/// they load and run (config, roots, matches, projects, transforms, environment, module
/// resolution, setup files, workers, timeouts). Dropped: what huddle decides (reporters, output
/// files, coverage, watch and changed-files modes, `--bail`, `--ci`, `--shard`,
/// `--updateSnapshot`); an option not listed here is dropped too. Test path patterns, given
/// as words or as `--testPathPatterns`, apply to whole-suite runs only.
pub(crate) const OPTIONS: &[Opt] = &[
    opt(&["config", "c"], Value, Keep),
    opt(&["rootDir"], Value, Keep),
    opt(&["roots"], List, Keep),
    opt(&["projects"], List, Keep),
    opt(&["selectProjects"], List, Keep),
    opt(&["ignoreProjects"], List, Keep),
    opt(&["testMatch"], List, Keep),
    opt(&["testRegex"], List, Keep),
    opt(&["testPathPatterns"], List, TestPaths),
    opt(&["testPathPattern"], List, TestPaths),
    opt(&["testPathIgnorePatterns"], List, Keep),
    opt(&["filter"], Value, Keep),
    opt(&["testEnvironment", "env"], Value, Keep),
    opt(&["testEnvironmentOptions"], Value, Keep),
    opt(&["preset"], Value, Keep),
    opt(&["transform"], Value, Keep),
    opt(&["transformIgnorePatterns"], List, Keep),
    opt(&["moduleNameMapper"], Value, Keep),
    opt(&["moduleDirectories"], List, Keep),
    opt(&["moduleFileExtensions"], List, Keep),
    opt(&["modulePaths"], List, Keep),
    opt(&["modulePathIgnorePatterns"], List, Keep),
    opt(&["setupFiles"], List, Keep),
    opt(&["setupFilesAfterEnv"], List, Keep),
    opt(&["globalSetup"], Value, Keep),
    opt(&["globalTeardown"], Value, Keep),
    opt(&["globals"], Value, Keep),
    opt(&["resolver"], Value, Keep),
    opt(&["runner"], Value, Keep),
    opt(&["testRunner"], Value, Keep),
    opt(&["testSequencer"], Value, Keep),
    opt(&["snapshotSerializers"], List, Keep),
    opt(&["unmockedModulePathPatterns"], List, Keep),
    opt(&["haste"], Value, Keep),
    opt(&["cacheDirectory"], Value, Keep),
    opt(&["maxWorkers", "w"], Value, Keep),
    opt(&["maxConcurrency"], Value, Keep),
    opt(&["testTimeout"], Value, Keep),
    opt(&["openHandlesTimeout"], Value, Keep),
    opt(&["workerGracefulExitTimeout"], Value, Keep),
    opt(&["seed"], Value, Keep),
    opt(&["runInBand", "i"], Flag, Keep),
    opt(&["workerThreads"], Flag, Keep),
    opt(&["cache"], Flag, Keep),
    opt(&["watchman"], Flag, Keep),
    opt(&["detectOpenHandles"], Flag, Keep),
    opt(&["detectLeaks"], Flag, Keep),
    opt(&["forceExit"], Flag, Keep),
    opt(&["passWithNoTests"], Flag, Keep),
    opt(&["injectGlobals"], Flag, Keep),
    opt(&["automock"], Flag, Keep),
    opt(&["clearMocks"], Flag, Keep),
    opt(&["resetMocks"], Flag, Keep),
    opt(&["restoreMocks"], Flag, Keep),
    opt(&["resetModules"], Flag, Keep),
    opt(&["errorOnDeprecated"], Flag, Keep),
    opt(&["randomize"], Flag, Keep),
    opt(&["waitForUnhandledRejections"], Flag, Keep),
    opt(&["testNamePattern", "t"], Value, NameFilter),
    opt(&["outputFile"], Value, Drop),
    opt(&["reporters"], List, Drop),
    opt(&["testResultsProcessor"], Value, Drop),
    opt(&["coverageDirectory"], Value, Drop),
    opt(&["coverageReporters"], List, Drop),
    opt(&["coveragePathIgnorePatterns"], List, Drop),
    opt(&["collectCoverageFrom"], Value, Drop),
    opt(&["coverageThreshold"], Value, Drop),
    opt(&["coverageProvider"], Value, Drop),
    opt(&["changedSince"], Value, Drop),
    opt(&["shard"], Value, Drop),
    opt(&["testFailureExitCode"], Value, Drop),
    opt(&["notifyMode"], Value, Drop),
    opt(&["prettierPath"], Value, Drop),
    opt(&["watchPathIgnorePatterns"], List, Drop),
];

/// Options the caller may not pass after `--`: huddle's JSON report is written by `--json
/// --outputFile` and must not be redirected or post-processed, and the others make jest do
/// something other than run the tests once.
pub(crate) const REFUSED: &[&str] = &[
    "json",
    "outputFile",
    "reporters",
    "testResultsProcessor",
    "coverageDirectory",
    "coverageReporters",
    "listTests",
    "collectTests",
    "showConfig",
    "watch",
    "watchAll",
    "clearCache",
    "init",
    "help",
    "h",
    "version",
    "v",
];

pub(crate) const SPEC: RunnerSpec = RunnerSpec {
    tool: "jest",
    options: OPTIONS,
    run_words: &[],
    other_commands: &[],
    refused: REFUSED,
};

/// A test-name pattern no test matches (an empty negative lookahead).
const MATCHES_NOTHING: &str = "(?!)";

pub(crate) fn prepare(ctx: &Ctx<'_>) -> Result<Prepared, RunnerError> {
    let (mut inv, extra) = command(ctx)?;
    let report = ctx.out("jest.json");
    inv.arg("--json")
        .arg(format!("--outputFile={}", report.display()))
        .arg("--testLocationInResults")
        .arg("--ci");
    with_progress_reporter(ctx, &mut inv)?;
    // A filter that matches nothing is a run of 0 tests, as jest itself reports it.
    if ctx.opts.filter.is_some() && !matches!(ctx.opts.selection, Selection::Related(_)) {
        inv.arg("--passWithNoTests");
    }
    if let Some(pattern) = add_selection(ctx, &mut inv, &extra) {
        inv.arg(format!("--testNamePattern={pattern}"));
    }
    if ctx.opts.coverage {
        inv.arg("--coverage")
            .arg("--coverageReporters=json-summary")
            .arg(format!(
                "--coverageDirectory={}",
                ctx.out("coverage").display()
            ));
    }
    let mut prepared = Prepared::new(inv);
    prepared.report_file = Some(report);
    Ok(prepared)
}

/// jest's default reporter plus huddle's progress lines: each test as it ends (for a run
/// stopped at its timeout) and each file's project (which `--json` does not name).
fn with_progress_reporter(ctx: &Ctx<'_>, inv: &mut Invocation) -> Result<(), RunnerError> {
    let reporter = ctx.out(jest_progress::REPORTER_FILE);
    std::fs::write(&reporter, jest_progress::REPORTER)
        .map_err(|e| RunnerError::io(format!("writing {}", reporter.display()), e))?;
    inv.arg("--reporters=default")
        .arg(format!("--reporters={}", reporter.display()));
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

/// `node <jest> <the script's options> <the caller's arguments>`, with the script's
/// environment and node options.
fn command(ctx: &Ctx<'_>) -> Result<(Invocation, RunnerArgs), RunnerError> {
    let (mut inv, _) = node_tool(ctx, "jest")?;
    let extra = project_args::gather(ctx, &SPEC);
    extra.apply_to(&mut inv);
    inv.args.extend(extra.args.iter().map(Into::into));
    Ok((inv, extra))
}

/// Adds the selection's files; returns the test-name pattern of the run: the caller's
/// filter, else the exact names of selected tests, else the script's own `-t`.
fn add_selection(ctx: &Ctx<'_>, inv: &mut Invocation, extra: &RunnerArgs) -> Option<String> {
    let mut names = Vec::new();
    match &ctx.opts.selection {
        Selection::All => inv.args.extend(extra.positionals.iter().map(Into::into)),
        Selection::Paths(paths) => {
            inv.arg("--runTestsByPath");
            inv.args.extend(paths.iter().map(Into::into));
        }
        Selection::Related(files) => {
            inv.arg("--passWithNoTests").arg("--findRelatedTests");
            inv.args.extend(files.iter().map(Into::into));
        }
        Selection::Tests(ids) => {
            let (files, selected) = files_and_names(ids);
            names = selected;
            let mut projects: Vec<&str> =
                ids.iter().filter_map(|id| super::project_of(id)).collect();
            projects.dedup();
            if !projects.is_empty() {
                inv.arg("--selectProjects");
                inv.args.extend(projects.into_iter().map(Into::into));
            }
            inv.arg("--runTestsByPath");
            inv.args.extend(files.into_iter().map(Into::into));
        }
    }
    ctx.opts
        .filter
        .clone()
        .or_else(|| (!names.is_empty()).then(|| exact_names_pattern(&names)))
        .or_else(|| extra.name_filter_value())
}

/// The distinct files of JavaScript node ids, and the full names of the tests in them. A file
/// that failed to load as a whole contributes no name: re-running it shows whether it loads.
pub(crate) fn files_and_names(ids: &[String]) -> (Vec<String>, Vec<String>) {
    let (mut files, mut names) = (Vec::new(), Vec::new());
    for id in ids {
        let (file, name) = split_js_nodeid(id);
        if !files.iter().any(|f| f == file) {
            files.push(file.to_string());
        }
        names.extend(name);
    }
    (files, names)
}

/// Reads a jest-format JSON report (jest, vitest), or an error entry saying why it cannot be
/// read; nothing when the run timed out (the run adds `[TIMEOUT]`).
pub(crate) fn read_report(
    tool: &str,
    ctx: &Ctx<'_>,
    prepared: &Prepared,
    captured: &Captured,
) -> Vec<TestResult> {
    let Some(path) = prepared.report_file.as_deref() else {
        return Vec::new();
    };
    let projects = jest_progress::file_projects(&ctx.out(jest_progress::FILES_FILE));
    match super::jest_json::parse_jest_json_file(path, ctx.project, &projects) {
        Some(parsed) => parsed.unwrap_or_else(|e| {
            vec![unreadable_report(
                tool,
                path,
                &format!("its JSON does not parse ({e})"),
                captured,
            )]
        }),
        None if captured.timed_out => Vec::new(),
        None => vec![unreadable_report(
            tool,
            path,
            "it wrote no JSON report",
            captured,
        )],
    }
}

pub(crate) fn collect(
    ctx: &Ctx<'_>,
    prepared: &Prepared,
    captured: &Captured,
) -> Result<Collected, RunnerError> {
    let mut collected = Collected {
        tests: read_report("jest", ctx, prepared, captured),
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

/// How a runner matches its test-name pattern against a test's full name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NameCase {
    /// Jest: `new RegExp(pattern, "i")`.
    Insensitive,
    /// Vitest: `new RegExp(pattern)`.
    Sensitive,
}

/// A listing from a jest-format report of a run whose tests were all filtered out: the tests
/// (those whose full name matches `filter`, as the runner would match it), and the files that
/// failed to load as errors.
pub(crate) fn listing_from_report(
    tool: &str,
    project: &Path,
    report: &Path,
    captured: &Captured,
    filter: Option<&str>,
    case: NameCase,
    projects: &[(String, Option<String>)],
) -> Result<Listing, RunnerError> {
    let matcher = filter
        .map(|f| {
            regex::RegexBuilder::new(f)
                .case_insensitive(case == NameCase::Insensitive)
                .build()
                .map_err(|e| {
                    RunnerError::Unsupported(format!(
                        "huddle lists {tool} tests and applies the name filter {f:?} itself, \
                         with Rust's regex syntax, which refuses it: {e}"
                    ))
                })
        })
        .transpose()?;
    let mut listing = Listing::default();
    let Some(parsed) = super::jest_json::parse_jest_json_file(report, project, projects) else {
        listing.errors.push(format!(
            "{tool} exited with code {} and wrote no JSON report (expected {}).\n{}",
            captured.exit_code,
            report.display(),
            super::runner_output(captured)
        ));
        return Ok(listing);
    };
    let tests =
        parsed.map_err(|e| RunnerError::io(format!("reading {tool}'s JSON report"), e.into()))?;
    for t in tests {
        let (file, name) = split_js_nodeid(&t.nodeid);
        match name {
            None => listing.errors.push(format!(
                "{file}: {}",
                t.longrepr.as_deref().unwrap_or("failed to load")
            )),
            Some(name) => {
                if matcher.as_ref().is_none_or(|m| m.is_match(&name)) {
                    listing.tests.push(t.nodeid);
                }
            }
        }
    }
    Ok(listing)
}

pub(crate) async fn list(ctx: &Ctx<'_>) -> Result<Listing, RunnerError> {
    let (mut inv, extra) = command(ctx)?;
    let report = ctx.out("jest-list.json");
    inv.arg("--json")
        .arg(format!("--outputFile={}", report.display()))
        .arg("--ci")
        .arg(format!("--testNamePattern={MATCHES_NOTHING}"));
    with_progress_reporter(ctx, &mut inv)?;
    let filter = add_selection(ctx, &mut inv, &extra);
    let captured = ctx.helper(&inv).await?;
    let projects = jest_progress::file_projects(&ctx.out(jest_progress::FILES_FILE));
    listing_from_report(
        "jest",
        ctx.project,
        &report,
        &captured,
        filter.as_deref(),
        NameCase::Insensitive,
        &projects,
    )
}

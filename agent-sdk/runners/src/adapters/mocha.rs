//! Mocha: `mocha --reporter=json --reporter-option=output=…`, after the options the project's
//! test script gives (see `OPTIONS`) and the caller's `huddle test -- …` arguments; coverage
//! through c8 or nyc when the project has one. Mocha before 9.1 ignores the `output` option and
//! prints the JSON on stdout, where huddle then reads it. Mocha aborts the whole run when a
//! spec file fails to load, writing no report: that becomes one error entry named by the file,
//! with mocha's message. Listing uses `--dry-run` (mocha 9 and later; mocha 8 would run the
//! tests, so listing refuses it).

use super::cli_options::{opt, Arity::*, Opt, Use::*};
use super::jest::files_and_names;
pub use super::mocha_json::{json_on_stdout, parse_mocha_json};
use super::project_args::{self, RunnerArgs, RunnerSpec};
use super::{exact_names_pattern, mocha_progress, node_entry, node_tool, read_output};
use super::{relative, unreadable_report};
use super::{Collected, Ctx, Prepared};
use crate::conventions::test_files;
use crate::coverage;
use crate::error::RunnerError;
use crate::framework::Framework;
use crate::options::{Listing, Selection};
use crate::process::{Captured, Invocation};
use crate::report::{Outcome, TestResult};
use crate::scrub::{strip_ansi, tail_lines};
use crate::tools;
use std::path::Path;

/// Mocha's options (mocha 8 to 11; each takes one value per use) and what huddle does with
/// each one found in the test script. Kept: what decides which specs load and how they run
/// (config files, spec globs, requires, extensions, ignores, UI, timeouts, retries, parallel
/// mode). The name filter (`--grep`, `--fgrep`, `--invert`) is kept only when huddle sets none.
/// Dropped: what huddle decides (reporter and its options, watch mode, `--bail`, `--dry-run`,
/// colours); an option not listed here is dropped too.
pub(crate) const OPTIONS: &[Opt] = &[
    opt(&["config"], Value, Keep),
    opt(&["package"], Value, Keep),
    opt(&["opts"], Value, Keep),
    opt(&["require", "r"], Value, Keep),
    opt(&["spec"], Value, Keep),
    opt(&["extension"], Value, Keep),
    opt(&["file"], Value, Keep),
    opt(&["ignore", "exclude"], Value, Keep),
    opt(&["ui", "u"], Value, Keep),
    opt(&["timeout", "timeouts", "t"], Value, Keep),
    opt(&["slow", "s"], Value, Keep),
    opt(&["retries"], Value, Keep),
    opt(&["global", "globals"], Value, Keep),
    opt(&["jobs", "j"], Value, Keep),
    opt(&["node-option", "n"], Value, Keep),
    opt(&["recursive"], Flag, Keep),
    opt(&["parallel", "p"], Flag, Keep),
    opt(&["exit"], Flag, Keep),
    opt(&["async-only", "A"], Flag, Keep),
    opt(&["check-leaks"], Flag, Keep),
    opt(&["allow-uncaught"], Flag, Keep),
    opt(&["full-trace"], Flag, Keep),
    opt(&["sort", "S"], Flag, Keep),
    opt(&["delay"], Flag, Keep),
    opt(&["forbid-only"], Flag, Keep),
    opt(&["forbid-pending"], Flag, Keep),
    opt(&["fail-zero"], Flag, Keep),
    opt(&["grep", "g"], Value, NameFilter),
    opt(&["fgrep", "f"], Value, NameFilter),
    opt(&["invert", "i"], Flag, NameFilter),
    opt(&["reporter", "R"], Value, Drop),
    opt(&["reporter-option", "reporter-options", "O"], Value, Drop),
    opt(&["watch-files"], Value, Drop),
    opt(&["watch-ignore"], Value, Drop),
];

/// Options the caller may not pass after `--`: huddle reads the json reporter's output, so
/// the reporter and its options stay huddle's; the others make mocha do something other than
/// run the tests once (`--dry-run` reports every test as passed without running it).
pub(crate) const REFUSED: &[&str] = &[
    "reporter",
    "R",
    "reporter-option",
    "reporter-options",
    "O",
    "dry-run",
    "watch",
    "w",
    "list-reporters",
    "list-interfaces",
    "init",
    "help",
    "h",
    "version",
    "V",
];

pub(crate) const SPEC: RunnerSpec = RunnerSpec {
    tool: "mocha",
    options: OPTIONS,
    run_words: &[],
    other_commands: &["init"],
    refused: REFUSED,
};

pub(crate) fn prepare(ctx: &Ctx<'_>) -> Result<Prepared, RunnerError> {
    let (mut inv, mocha_bin) = node_tool(ctx, "mocha")?;
    if ctx.opts.coverage {
        // <c8|nyc> <options> <mocha> <mocha options>; their scratch data goes to the
        // run directory, not the project's `coverage/` or `.nyc_output/`.
        let tool = ["c8", "nyc"]
            .into_iter()
            .find(|t| node_entry::resolve(ctx.project, t, t).is_ok())
            .ok_or_else(|| tools::missing("c8", ctx.project))?;
        let temp = if tool == "c8" {
            "--temp-directory"
        } else {
            "--temp-dir"
        };
        inv = node_tool(ctx, tool)?.0;
        inv.arg("--reporter=json-summary");
        inv.arg(format!("--report-dir={}", ctx.out("coverage").display()));
        inv.arg(format!("{temp}={}", ctx.out("coverage-tmp").display()));
        inv.arg(&mocha_bin);
    }
    let extra = with_project_args(ctx, &mut inv);
    let report = ctx.out("mocha.json");
    let reporter = reporter(ctx, &mut inv.env)?;
    inv.arg(reporter)
        .arg(format!("--reporter-option=output={}", report.display()));
    add_selection(ctx, &extra, &mut inv.args);
    let mut prepared = Prepared::new(inv);
    prepared.report_file = Some(report);
    Ok(prepared)
}

/// `--reporter=<huddle's reporter>`: mocha's json reporter with progress lines beside it (see
/// [`mocha_progress`]), when the project's mocha has its json reporter where huddle looks;
/// else `--reporter=json`.
fn reporter(
    ctx: &Ctx<'_>,
    env: &mut Vec<(std::ffi::OsString, std::ffi::OsString)>,
) -> Result<String, RunnerError> {
    let json = node_entry::package_dir(ctx.project, "mocha")
        .map(|dir| dir.join("lib/reporters/json.js"))
        .filter(|f| f.is_file());
    let Some(json) = json else {
        return Ok("--reporter=json".into());
    };
    let file = ctx.out(mocha_progress::REPORTER_FILE);
    std::fs::write(&file, mocha_progress::REPORTER)
        .map_err(|e| RunnerError::io(format!("writing {}", file.display()), e))?;
    env.push(("HUDDLE_MOCHA_JSON_REPORTER".into(), json.into()));
    env.push((
        "HUDDLE_MOCHA_PROGRESS".into(),
        ctx.out(mocha_progress::PROGRESS_FILE).into(),
    ));
    Ok(format!("--reporter={}", file.display()))
}

/// Adds the script's environment, node options and kept options, then the caller's
/// arguments, to a `node <…> <mocha>` invocation.
fn with_project_args(ctx: &Ctx<'_>, inv: &mut Invocation) -> RunnerArgs {
    let extra = project_args::gather(ctx, &SPEC);
    extra.apply_to(inv);
    inv.args.extend(extra.args.iter().map(Into::into));
    extra
}

/// Mocha adds files named on the command line to the config's `spec` (it never replaces
/// them), so a selection also ignores every other test file of the project. The name filter
/// is the caller's, else the exact names of selected tests, else the script's own.
fn add_selection(ctx: &Ctx<'_>, extra: &RunnerArgs, args: &mut Vec<std::ffi::OsString>) {
    let mut grep = ctx.opts.filter.clone();
    let selected: Vec<String> = match &ctx.opts.selection {
        Selection::All => {
            args.extend(extra.positionals.iter().map(Into::into));
            Vec::new()
        }
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
    match grep {
        Some(g) => args.push(format!("--grep={g}").into()),
        None => args.extend(extra.name_filter.iter().map(Into::into)),
    }
}

/// The json reporter's output: the file, else stdout (mocha before 9.1 prints it there,
/// after anything the tests printed).
fn json_output(file: &Path, captured: &Captured) -> Option<Vec<u8>> {
    read_output(file).or_else(|| json_on_stdout(&captured.stdout).map(<[u8]>::to_vec))
}

pub(crate) fn collect(
    ctx: &Ctx<'_>,
    prepared: &Prepared,
    captured: &Captured,
) -> Result<Collected, RunnerError> {
    let mut collected = Collected::default();
    let report = prepared
        .report_file
        .clone()
        .unwrap_or_else(|| ctx.out("mocha.json"));
    match json_output(&report, captured) {
        Some(bytes) => match parse_mocha_json(&bytes, ctx.project) {
            Ok(tests) => collected.tests = tests,
            Err(e) => collected.tests.push(unreadable_report(
                "mocha",
                &report,
                &format!("its JSON does not parse ({e})"),
                captured,
            )),
        },
        None if captured.timed_out => {
            let progress = ctx.out(mocha_progress::PROGRESS_FILE);
            (collected.tests, collected.running) =
                mocha_progress::read_progress(&progress, ctx.project);
        }
        None => {
            collected.tests.push(
                load_error(ctx.project, &captured.stderr).unwrap_or_else(|| {
                    unreadable_report(
                        "mocha",
                        &report,
                        "it wrote no JSON report, neither to the file nor on stdout",
                        captured,
                    )
                }),
            )
        }
    }
    if ctx.opts.coverage {
        collected.coverage = coverage::istanbul(ctx.run_dir, "coverage/coverage-summary.json");
    }
    Ok(collected)
}

/// The error entry for a run mocha aborted while loading a spec: named by the first project
/// file in its message; `None` when the message names none.
fn load_error(root: &Path, stderr: &[u8]) -> Option<TestResult> {
    let text = strip_ansi(&String::from_utf8_lossy(stderr)).into_owned();
    let root_str = root.to_string_lossy();
    let file = text
        .split(|c: char| c.is_whitespace() || c == '(' || c == ')' || c == '\'')
        .map(|w| w.split(':').next().unwrap_or(w))
        .find(|w| w.starts_with(root_str.as_ref()) && !w.contains("/node_modules/"))
        .map(|w| relative(root, w))?;
    let mut t = TestResult::new(file.clone(), Outcome::Error);
    t.file = Some(file);
    let start = text.find("Exception during run:").unwrap_or(0);
    t.longrepr = Some(tail_lines(text[start..].trim(), 60));
    Some(t)
}

pub(crate) async fn list(ctx: &Ctx<'_>) -> Result<Listing, RunnerError> {
    let (mut inv, _) = node_tool(ctx, "mocha")?;
    // Mocha 8 ignores --dry-run and would run every test: refuse rather than run.
    match node_entry::installed_version(ctx.project, "mocha") {
        (Some((major, _)), _) if major >= 9 => {}
        (Some((major, minor)), manifest) => {
            return Err(RunnerError::Unsupported(format!(
                "mocha {major}.{minor} ({}) cannot list tests without running them: --dry-run \
                 arrived in mocha 9.0.0, and mocha {major} ignores it and runs every test. \
                 Upgrade mocha to 9 or later, or run the tests (`huddle test`) and read the \
                 report",
                manifest.display()
            )))
        }
        (None, manifest) => {
            return Err(RunnerError::Unsupported(format!(
                "cannot read mocha's version from {}, so huddle cannot tell whether it supports \
                 --dry-run (mocha 9 and later; older versions would run every test)",
                manifest.display()
            )))
        }
    }
    let extra = with_project_args(ctx, &mut inv);
    let out_file = ctx.out("mocha-list.json");
    inv.arg("--dry-run")
        .arg("--reporter=json")
        .arg(format!("--reporter-option=output={}", out_file.display()));
    add_selection(ctx, &extra, &mut inv.args);
    let out = ctx.helper(&inv).await?;
    let mut listing = Listing::default();
    match json_output(&out_file, &out).and_then(|b| parse_mocha_json(&b, ctx.project).ok()) {
        Some(tests) => listing.tests = tests.into_iter().map(|t| t.nodeid).collect(),
        None => listing
            .errors
            .push(match load_error(ctx.project, &out.stderr) {
                Some(t) => format!("{}: {}", t.nodeid, t.longrepr.unwrap_or_default()),
                None => format!(
                    "mocha exited with code {} and wrote no JSON listing (expected {}).\n{}",
                    out.exit_code,
                    out_file.display(),
                    super::runner_output(&out)
                ),
            }),
    }
    Ok(listing)
}

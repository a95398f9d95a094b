//! `huddle test`: the runner layer as a command. The `huddle` binary wires it with
//! `Command::Test(args) => test_command::run_test_command(args).await`.
//!
//! Exit codes: 0 when every test passed (and at least one ran), or when a `-k` filter matched
//! no test (as the runners themselves treat it; the output says "0 tests matched -k …"), 1
//! when a test failed or errored or, without a filter, none ran, 2 for a usage problem
//! (refused filter, no framework detected, no previous run for `--failed`), 124 on timeout,
//! 127 when the runner is not installed.

use crate::live_line;
use huddle_runners::affected::{affected, AffectedPlan};
use huddle_runners::detect::{detect, Overrides};
use huddle_runners::error::RunnerError;
use huddle_runners::human::render_summary;
use huddle_runners::live::with_live_counts;
use huddle_runners::options::{PluginPolicy, RunOptions, Selection};
use huddle_runners::process::TIMEOUT_EXIT_CODE;
use huddle_runners::report::Report;
use huddle_runners::run::{failed_selection, list_tests, run_tests, FailedSelection};
use huddle_runners::rundir::default_runs_dir;
use huddle_runners::scrub;
use std::borrow::Cow;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Duration;

/// Arguments of `huddle test`.
#[derive(Debug, Clone, clap::Args)]
pub struct TestArgs {
    /// The project to test.
    #[arg(long, default_value = ".")]
    pub project: PathBuf,
    /// pytest, jest, vitest, mocha, node-test, go, cargo, cypress or maestro (default: detected
    /// from the project).
    #[arg(long)]
    pub framework: Option<String>,
    /// Print the report (JSON) on stdout instead of the summary: the `huddle` command line's
    /// global `--json` sets it.
    #[arg(skip)]
    pub json: bool,
    /// Print which framework was detected and why, then exit (with --tiers: which tier each
    /// test file is in, and why).
    #[arg(long)]
    pub explain: bool,
    /// List the tests without running them.
    #[arg(long, conflicts_with_all = ["failed", "affected"])]
    pub list: bool,
    /// Re-run only the tests that failed in the last run.
    #[arg(long, conflicts_with = "affected")]
    pub failed: bool,
    /// Run only the tests affected by files changed since --base (git).
    #[arg(long)]
    pub affected: bool,
    /// The git revision --affected compares with.
    #[arg(long, requires = "affected", default_value = "HEAD")]
    pub base: String,
    /// Run only tests whose names match (pytest -k, jest/vitest -t, mocha --grep, go -run,
    /// cargo's filter).
    #[arg(long, short = 'k')]
    pub filter: Option<String>,
    /// Stop the runner (its whole process group) after this many seconds.
    #[arg(long, default_value_t = 900, value_name = "SECONDS")]
    pub timeout: u64,
    /// Measure line coverage (istanbul, coverage.py, go -coverprofile).
    #[arg(long)]
    pub coverage: bool,
    /// Reporter plugins. pytest: huddle's own reporter (auto), pytest's JUnit XML (never),
    /// pytest-json-report (require). cargo: cargo-nextest when installed (auto), never, or
    /// required.
    #[arg(long, value_enum, default_value = "auto")]
    pub plugins: PluginPolicy,
    /// Run the tests (and a tier's services) in a bubblewrap sandbox: the host read-only but
    /// the project, no network, homes hidden. auto: when bwrap works; required: or fail.
    #[arg(long, value_enum, default_value = "auto")]
    pub sandbox: huddle_runners::Sandbox,
    /// Where run directories go (default: PROJECT/.huddle/runs).
    #[arg(long)]
    pub runs_dir: Option<PathBuf>,
    /// Arguments for the runner itself, after `--` (jest, vitest and mocha): `huddle test --
    /// --config config/jest.config.js`. They replace the same options taken from the
    /// project's test script; options that redirect the reporter output huddle reads (jest
    /// `--json`/`--outputFile`, vitest `--reporter`, mocha `--reporter`) or start watch mode
    /// are refused.
    #[arg(last = true, value_name = "RUNNER_ARGS")]
    pub runner_args: Vec<String>,
    /// `--tiers` and its options.
    #[command(flatten)]
    pub tiers: crate::tiers_command::TiersArgs,
}

/// What the command printed and its exit code.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommandOutput {
    /// The exit code.
    pub code: i32,
    /// Text for stdout.
    pub stdout: String,
    /// Text for stderr.
    pub stderr: String,
    /// After a run: tests run (passed, failed or errored), failed, errors.
    pub tally: Option<(usize, usize, usize)>,
}

impl CommandOutput {
    pub(crate) fn error(e: &RunnerError, mut notes: String) -> Self {
        let _ = writeln!(notes, "huddle test: {e}");
        CommandOutput {
            code: e.exit_code(),
            stdout: String::new(),
            stderr: notes,
            tally: None,
        }
    }
}

/// Runs `huddle test` and prints its output; the exit code is the process's. On a terminal,
/// and not with `--json`, a live line on stderr shows the tests done and failed so far and the
/// time taken, then a final line ([`crate::live_line`]).
pub async fn run_test_command(args: TestArgs) -> std::process::ExitCode {
    let quiet = args.json || args.list || args.explain;
    let (out, took) = if live_line::wanted(quiet) {
        let live = live_line::LiveLine::start();
        let out = with_live_counts(live.counts(), execute(&args)).await;
        (out, Some(live.stop().await))
    } else {
        (execute(&args).await, None)
    };
    print!("{}", out.stdout);
    eprint!("{}", out.stderr);
    if let Some(took) = took {
        eprintln!("{}", live_line::final_line(out.tally, took, out.code));
    }
    std::process::ExitCode::from(u8::try_from(out.code).unwrap_or(1))
}

/// Runs `huddle test` and returns what it would print (the testable entry point). Everything
/// printed is scrubbed of secrets: the report already is, and this catches the rest (test
/// names in a listing, runner errors); JSON is scrubbed on its decoded strings, so it stays
/// valid.
pub async fn execute(args: &TestArgs) -> CommandOutput {
    let mut notes = String::new();
    let mut out = match execute_inner(args, &mut notes).await {
        Ok(mut out) => {
            if args.json {
                out.stderr.insert_str(0, &notes);
            } else {
                out.stdout.insert_str(0, &notes);
            }
            out
        }
        Err(e) => CommandOutput::error(&e, notes),
    };
    for text in [&mut out.stdout, &mut out.stderr] {
        if let Cow::Owned(clean) = scrub::scrub_text_file(text) {
            *text = clean;
        }
    }
    out
}

async fn execute_inner(args: &TestArgs, notes: &mut String) -> Result<CommandOutput, RunnerError> {
    let overrides = Overrides {
        flag: args.framework.as_deref(),
        ..Overrides::default()
    };
    let detection = detect(&args.project, &overrides)?;
    let fw = detection.framework;
    if args.tiers.enabled {
        let opts = RunOptions {
            timeout: Duration::from_secs(args.timeout),
            plugins: args.plugins,
            runs_dir: args.runs_dir.clone(),
            sandbox: args.sandbox,
            ..RunOptions::default()
        };
        return crate::tiers_command::execute(args, fw, opts, notes).await;
    }
    if args.explain {
        return Ok(CommandOutput {
            code: 0,
            stdout: detection.explain(),
            stderr: String::new(),
            tally: None,
        });
    }
    let mut opts = RunOptions {
        filter: args.filter.clone(),
        timeout: Duration::from_secs(args.timeout),
        coverage: args.coverage,
        plugins: args.plugins,
        runs_dir: args.runs_dir.clone(),
        runner_args: args.runner_args.clone(),
        sandbox: args.sandbox,
        ..RunOptions::default()
    };
    if args.list {
        let listing = list_tests(&args.project, fw, &opts).await?;
        let stdout = if args.json {
            serde_json::to_string_pretty(&listing).expect("listings serialise") + "\n"
        } else {
            listing.tests.iter().map(|t| format!("{t}\n")).collect()
        };
        let mut stderr: String = listing
            .errors
            .iter()
            .map(|e| format!("error: {e}\n"))
            .collect();
        if listing.tests.is_empty() {
            stderr.push_str(&nothing_listed(opts.filter.as_deref()));
        }
        let code = i32::from(!listing.errors.is_empty());
        return Ok(CommandOutput {
            code,
            stdout,
            stderr,
            tally: None,
        });
    }
    if args.failed {
        let project = huddle_runners::run::canonical_project(&args.project)?;
        let runs_dir = opts
            .runs_dir
            .clone()
            .unwrap_or_else(|| default_runs_dir(&project));
        match failed_selection(&runs_dir, fw)? {
            FailedSelection::Nothing { run_dir } => {
                let _ = writeln!(
                    notes,
                    "no failures in the last run ({}); nothing to re-run",
                    run_dir.display()
                );
                return Ok(CommandOutput::default());
            }
            FailedSelection::Tests(ids) => {
                let _ = writeln!(notes, "re-running {} failed test(s)", ids.len());
                opts.selection = Selection::Tests(ids);
            }
            FailedSelection::Everything { reason } => {
                let _ = writeln!(notes, "re-running the full suite: {reason}");
            }
        }
    }
    if args.affected {
        let plan = affected(&args.project, fw, Some(&args.base)).await?;
        match plan.plan {
            AffectedPlan::Nothing { reason } => {
                let _ = writeln!(notes, "affected: nothing to run: {reason}");
                return Ok(CommandOutput::default());
            }
            AffectedPlan::Full { reason } => {
                let _ = writeln!(notes, "affected: running the full suite: {reason}");
            }
            AffectedPlan::Subset { selection, reasons } => {
                for r in reasons {
                    let _ = writeln!(notes, "affected: {r}");
                }
                opts.selection = selection;
            }
        }
    }
    let mut outcome = run_tests(&args.project, fw, &opts).await?;
    if matches!(opts.selection, Selection::Related(_)) && outcome.report.summary.total == 0 {
        let _ = writeln!(
            notes,
            "affected: the runner found no related tests; running the full suite"
        );
        opts.selection = Selection::All;
        outcome = run_tests(&args.project, fw, &opts).await?;
    }
    let report = &outcome.report;
    let no_match = no_match_note(opts.filter.as_deref(), report);
    if let Some(note) = &no_match {
        notes.push_str(note);
    }
    let code = if report.timed_out {
        TIMEOUT_EXIT_CODE
    } else {
        i32::from(!report.all_passed() && no_match.is_none())
    };
    let stdout = if args.json {
        serde_json::to_string_pretty(report).expect("reports serialise") + "\n"
    } else {
        render_summary(report, Some(&outcome.run_dir))
    };
    let s = report.summary;
    Ok(CommandOutput {
        code,
        stdout,
        stderr: String::new(),
        tally: Some((s.passed + s.failed + s.error, s.failed, s.error)),
    })
}

/// The line for a run whose `-k` filter matched no test: a valid answer, as it is to every
/// runner (exit 0). With no filter, a run without tests stays a failure.
fn no_match_note(filter: Option<&str>, report: &Report) -> Option<String> {
    let s = report.summary;
    let f = filter.filter(|_| !report.timed_out && s.passed + s.failed + s.error == 0)?;
    Some(if s.total == 0 {
        format!("0 tests matched -k {f}\n")
    } else {
        // jest and vitest report the tests a name filter leaves out as skipped.
        format!("no test ran for -k {f}: {} skipped\n", s.skipped)
    })
}

/// The line `--list` prints when it lists nothing.
fn nothing_listed(filter: Option<&str>) -> String {
    match filter {
        Some(f) => format!("0 tests matched -k {f}\n"),
        None => "no tests found\n".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::TestArgs;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        test: TestArgs,
    }

    fn parse(args: &[&str]) -> Result<TestArgs, clap::Error> {
        Cli::try_parse_from(std::iter::once("huddle-test").chain(args.iter().copied()))
            .map(|c| c.test)
    }

    #[test]
    fn defaults_need_no_arguments() {
        let a = parse(&[]).unwrap();
        assert_eq!(
            (a.project.to_str(), a.timeout, a.base.as_str()),
            (Some("."), 900, "HEAD")
        );
        assert!(!a.json && !a.list && !a.failed && !a.affected);
    }

    #[test]
    fn flags_parse_and_conflicts_are_refused() {
        let a = parse(&[
            "--project",
            "p",
            "-k",
            "add",
            "--timeout",
            "5",
            "--plugins",
            "never",
        ])
        .unwrap();
        assert_eq!(
            (a.filter.as_deref(), a.json, a.timeout),
            (Some("add"), false, 5)
        );
        assert_eq!(a.plugins, huddle_runners::PluginPolicy::Never);
        assert_eq!(
            parse(&["--affected", "--base", "main"]).unwrap().base,
            "main"
        );
        assert!(
            parse(&["--base", "main"]).is_err(),
            "--base needs --affected"
        );
        assert!(parse(&["--list", "--failed"]).is_err());
        assert!(parse(&["--failed", "--affected"]).is_err());
    }

    #[test]
    fn arguments_after_a_double_dash_are_the_runners() {
        let a = parse(&["-k", "add", "--", "--config", "a.js", "--list", "-k"]).unwrap();
        assert_eq!(a.runner_args, ["--config", "a.js", "--list", "-k"]);
        assert_eq!(a.filter.as_deref(), Some("add"));
        assert!(!a.list, "--list after `--` is the runner's, not huddle's");
        assert!(parse(&[]).unwrap().runner_args.is_empty());
        assert!(
            parse(&["--config", "a.js"]).is_err(),
            "runner arguments need the `--`"
        );
    }
}

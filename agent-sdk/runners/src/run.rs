//! Running a suite end to end: prepare the adapter's command, run it under the timeout, read
//! its machine-readable output, make sure nothing is silently lost (a crash, a timeout or a
//! non-zero exit with no failing test becomes an error entry), and write the run directory.

use crate::adapters::{self, Ctx};
use crate::error::RunnerError;
use crate::framework::Framework;
use crate::guard;
use crate::options::{Listing, RunOptions, Selection};
use crate::process::{self, Captured, Limits};
use crate::report::{Outcome, Report, Summary, TestResult};
use crate::rundir;
use crate::scrub::{strip_ansi, tail_lines};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

/// A finished run: its report and the directory holding `report.json`, `junit.xml` and the
/// full output.
#[derive(Debug, Clone)]
pub struct RunOutcome {
    /// The runner-agnostic report.
    pub report: Report,
    /// `.huddle/runs/<timestamp>/`.
    pub run_dir: PathBuf,
}

/// The project directory, made absolute and free of symlinks (runners report real paths).
pub fn canonical_project(project: &Path) -> Result<PathBuf, RunnerError> {
    if !project.is_dir() {
        return Err(RunnerError::NoProject(project.to_path_buf()));
    }
    project
        .canonicalize()
        .map_err(|e| RunnerError::io(format!("resolving {}", project.display()), e))
}

/// Refuses options whose values would be unsafe on a runner's command line.
pub fn check_options(opts: &RunOptions) -> Result<(), RunnerError> {
    if let Some(f) = &opts.filter {
        guard::check_filter(f)?;
    }
    match &opts.selection {
        Selection::All => {}
        Selection::Paths(p) | Selection::Related(p) => {
            for v in p {
                guard::check_path(v)?;
            }
        }
        Selection::Tests(ids) => {
            for v in ids {
                guard::check_test_id(v)?;
            }
        }
    }
    Ok(())
}

/// Runs `framework`'s suite in `project` and writes a run directory.
pub async fn run_tests(
    project: &Path,
    framework: Framework,
    opts: &RunOptions,
) -> Result<RunOutcome, RunnerError> {
    let canonical = canonical_project(project)?;
    // Refused options write nothing, not even the runs directory the sandbox binds.
    check_options(opts)?;
    adapters::check_runner_args(framework, opts)?;
    let runs_dir = opts
        .runs_dir
        .clone()
        .unwrap_or_else(|| rundir::default_runs_dir(&canonical));
    let jail = crate::sandbox::for_run(&canonical, &runs_dir, opts)?;
    before_sandboxed(jail.as_ref(), framework, &canonical).await;
    let run = run_suite(project, framework, opts);
    crate::live::tapping(framework, crate::sandbox::confined(jail, run)).await
}

/// What a run in `jail` needs done outside it first: a cargo project's downloaded
/// dependencies unpacked (`sandbox/cargo_sources.rs`).
async fn before_sandboxed(
    jail: Option<&crate::sandbox::Jail>,
    framework: Framework,
    project: &Path,
) {
    if jail.is_some() && framework == Framework::Cargo {
        crate::sandbox::cargo_sources::unpack_downloaded(project).await;
    }
}

async fn run_suite(
    project: &Path,
    framework: Framework,
    opts: &RunOptions,
) -> Result<RunOutcome, RunnerError> {
    let project = canonical_project(project)?;
    check_options(opts)?;
    adapters::check_runner_args(framework, opts)?;
    let runs_dir = opts
        .runs_dir
        .clone()
        .unwrap_or_else(|| rundir::default_runs_dir(&project));
    let run_dir = rundir::create(&runs_dir)?;
    let ctx = Ctx::new(&project, &run_dir, opts);
    let prepared = match adapters::prepare(framework, &ctx).await {
        Ok(p) => p,
        Err(e) => {
            // Nothing ran: leave no empty run behind.
            let _ = std::fs::remove_dir_all(&run_dir);
            return Err(e);
        }
    };
    let created = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    let limits = Limits {
        timeout: opts.timeout,
        grace: opts.kill_grace,
    };
    let caps = &opts.output;
    // go, cargo, mocha 8 and cypress report on stdout, which huddle must read whole.
    let stdout_cap = (!matches!(
        framework,
        Framework::Go | Framework::Cargo | Framework::Mocha | Framework::Cypress
    ))
    .then_some(caps.per_stream);
    // Counts while the run goes, when the caller asked for them (`huddle test`'s live line).
    let following = crate::live::current()
        .and_then(|c| crate::live::follow_progress_file(framework, &run_dir, c));
    let run = process::run_capped(
        &prepared.invocation,
        limits,
        stdout_cap,
        Some(caps.per_stream),
    );
    let captured = run.await;
    drop(following);
    let captured = match captured {
        Ok(c) => c,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&run_dir);
            let program = prepared.invocation.program.display();
            return Err(RunnerError::io(format!("running {program}"), e));
        }
    };
    rundir::write(&run_dir, "stdout.txt", &head_tail(&captured.stdout, caps))?;
    rundir::write(&run_dir, "stderr.txt", &captured.stderr)?;
    let collected = adapters::collect(framework, &ctx, &prepared, &captured).await;
    rundir::drop_oversize_runner_files(&run_dir, caps.per_stream)?;
    let collected = match collected {
        Ok(c) => c,
        Err(e) => {
            // The runner's own files stay for a look, but never with a secret in them.
            let _ = rundir::scrub_runner_files(&run_dir);
            return Err(e);
        }
    };
    let mut tests = collected.tests;
    crate::report::disambiguate_ids(tests.iter_mut().map(|t| &mut t.nodeid));
    // A retry that re-ran every failure speaks for the run's exit (Maestro).
    let mut captured = captured;
    if let Some(code) = collected.retry_exit_code {
        captured.exit_code = code;
    }
    account_for_exit(&mut tests, &captured, opts, framework, &collected.running);
    crate::limits::cap_failures(&mut tests, caps);
    let exitcode = match (collected.timed_out, captured.exit_code) {
        (true, _) => process::TIMEOUT_EXIT_CODE,
        (false, 0) => collected.exit_code.unwrap_or(0),
        (false, code) => code,
    };
    let mut report = Report {
        created,
        duration: captured.elapsed.as_secs_f64(),
        exitcode,
        root: project.display().to_string(),
        framework,
        summary: Summary::of(&tests),
        tests,
        timed_out: captured.timed_out || collected.timed_out,
        command: prepared.invocation.argv(),
        coverage: collected.coverage,
        artifacts: crate::artifacts::keep(
            &run_dir,
            prepared.report_file.as_deref(),
            caps.artifacts,
        ),
        flaky_in_run: collected.flaky.len(),
        flaky: collected.flaky,
    };
    rundir::finish(&run_dir, &mut report)?;
    rundir::prune(&runs_dir, caps.keep_runs)?;
    Ok(RunOutcome { report, run_dir })
}

/// stdout for `stdout.txt`: capped like stderr even when kept whole in memory for parsing.
fn head_tail<'a>(
    bytes: &'a [u8],
    caps: &crate::limits::OutputLimits,
) -> std::borrow::Cow<'a, [u8]> {
    if bytes.len() <= caps.per_stream {
        return std::borrow::Cow::Borrowed(bytes);
    }
    let mut kept = crate::limits::HeadTail::new(Some(caps.per_stream));
    kept.push(bytes);
    std::borrow::Cow::Owned(kept.into_bytes())
}

fn output_tail(captured: &Captured, lines: usize) -> String {
    let pick = if captured.stderr.iter().any(|b| !b.is_ascii_whitespace()) {
        &captured.stderr
    } else {
        &captured.stdout
    };
    tail_lines(&strip_ansi(&String::from_utf8_lossy(pick)), lines)
}

/// Whether a filtered run simply matched no test: every runner then reports no test, and exits
/// 0 (go, mocha, cargo; jest and vitest with `--passWithNoTests`, nextest with
/// `--no-tests=pass`) or with pytest's "no tests collected" (5), which has no such switch.
fn nothing_matched(
    tests: &[TestResult],
    captured: &Captured,
    opts: &RunOptions,
    fw: Framework,
) -> bool {
    const PYTEST_NO_TESTS_COLLECTED: i32 = 5;
    tests.is_empty()
        && opts.filter.is_some()
        && (captured.exit_code == 0
            || (fw == Framework::Pytest && captured.exit_code == PYTEST_NO_TESTS_COLLECTED))
}

/// A timeout, or a failing exit that no test explains, becomes an error entry, so a crashed
/// or killed runner never reads as "0 tests, passed". A filter that matched nothing is not a
/// failure (the caller says so); an unfiltered run with no test is left without entries, and
/// `huddle test` fails it.
fn account_for_exit(
    tests: &mut Vec<TestResult>,
    captured: &Captured,
    opts: &RunOptions,
    fw: Framework,
    running: &[String],
) {
    if captured.timed_out {
        let mut t = TestResult::new("[TIMEOUT]", Outcome::Error);
        t.duration = captured.elapsed.as_secs_f64();
        let still = if running.is_empty() {
            String::new()
        } else {
            format!(
                " Still running when it was stopped: {}. The tests that finished before are in \
                 the report.",
                running.join(", ")
            )
        };
        t.longrepr = Some(format!(
            "[TIMEOUT] the run exceeded {}s; its process group was killed (exit code {}).{still}\n{}",
            opts.timeout.as_secs_f64(),
            process::TIMEOUT_EXIT_CODE,
            output_tail(captured, 30)
        ));
        tests.push(t);
        return;
    }
    if captured.exit_code == 0
        || tests.iter().any(|t| t.outcome.is_failure())
        || nothing_matched(tests, captured, opts, fw)
    {
        return;
    }
    let what = if tests.is_empty() {
        "without reporting any test"
    } else {
        "although no test failed"
    };
    let mut t = TestResult::new("[runner]", Outcome::Error);
    t.longrepr = Some(format!(
        "the runner exited with code {} {what}:\n{}",
        captured.exit_code,
        output_tail(captured, 40)
    ));
    tests.push(t);
}

/// Lists the tests `framework` would run in `project`, without running them.
pub async fn list_tests(
    project: &Path,
    framework: Framework,
    opts: &RunOptions,
) -> Result<Listing, RunnerError> {
    let project = canonical_project(project)?;
    check_options(opts)?;
    adapters::check_runner_args(framework, opts)?;
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let scratch = std::env::temp_dir().join(format!("huddle-list-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(&scratch)
        .map_err(|e| RunnerError::io(format!("creating {}", scratch.display()), e))?;
    let ctx = Ctx::new(&project, &scratch, opts);
    let listing = match crate::sandbox::for_run(&project, &scratch, opts) {
        Ok(jail) => {
            before_sandboxed(jail.as_ref(), framework, &project).await;
            crate::sandbox::confined(jail, adapters::list(framework, &ctx)).await
        }
        Err(e) => Err(e),
    };
    let _ = std::fs::remove_dir_all(&scratch);
    let mut listing = listing?;
    crate::report::disambiguate_ids(listing.tests.iter_mut());
    Ok(listing)
}

/// What `--failed` should run, from the newest report in `runs_dir`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FailedSelection {
    /// The last run had no failures.
    Nothing {
        /// The run it looked at.
        run_dir: PathBuf,
    },
    /// Re-run these tests.
    Tests(Vec<String>),
    /// Re-run everything: a failure was not a test (timeout, crash, build failure).
    Everything {
        /// Why.
        reason: String,
    },
}

/// Reads the newest report in `runs_dir` and says what `--failed` should run.
pub fn failed_selection(
    runs_dir: &Path,
    framework: Framework,
) -> Result<FailedSelection, RunnerError> {
    let Some((run_dir, report)) = rundir::latest(runs_dir)? else {
        return Err(RunnerError::NoPreviousRun(runs_dir.to_path_buf()));
    };
    if report.framework != framework {
        return Err(RunnerError::Unsupported(format!(
            "the last run ({}) used {}, not {framework}",
            run_dir.display(),
            report.framework
        )));
    }
    let failures: Vec<&TestResult> = report.failures().collect();
    if failures.is_empty() {
        return Ok(FailedSelection::Nothing { run_dir });
    }
    if let Some(s) = failures.iter().find(|t| t.is_synthetic()) {
        return Ok(FailedSelection::Everything {
            reason: format!("the last run failed outside any test ({})", s.nodeid),
        });
    }
    if let Some(s) = failures
        .iter()
        .find(|t| t.nodeid.contains(crate::scrub::REDACTED_PREFIX))
    {
        return Ok(FailedSelection::Everything {
            reason: format!(
                "a failed test's id held a secret and was redacted ({})",
                s.nodeid
            ),
        });
    }
    Ok(FailedSelection::Tests(
        failures.into_iter().map(|t| t.nodeid.clone()).collect(),
    ))
}

//! One adapter per framework. Each turns [`RunOptions`] into an [`Invocation`] of the
//! framework's own CLI with a machine-readable reporter, and reads that output back into
//! [`TestResult`]s. The parsers are public so they can be tested and benchmarked alone.

pub mod cargo;
pub mod cargo_doc;
mod cargo_files;
pub mod cargo_libtest;
pub mod cargo_nextest;
mod cargo_timeout;
mod cargo_workspace;
mod cli_options;
pub mod cypress;
pub mod go;
pub mod go_events;
pub mod jest;
mod jest_json;
mod jest_progress;
pub mod maestro;
pub mod mocha;
mod mocha_json;
mod mocha_progress;
pub mod node_entry;
mod node_test;
pub mod node_test_events;
pub mod playwright;
mod project_args;
pub mod pytest;
pub mod pytest_parse;
pub mod python_probe;
mod script;
mod shell_glob;
pub mod vitest;

use crate::error::RunnerError;
use crate::framework::Framework;
use crate::guard;
use crate::options::{Listing, RunOptions};
use crate::process::{Captured, Invocation, Limits};
use crate::report::{Coverage, Outcome, TestResult};
use crate::scrub::strip_ansi;
use crate::tools;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// In a value of [`RunOptions::env`], the run's own directory (not known before the run).
pub const RUN_DIR: &str = "{run_dir}";

/// The least time a helper command gets, whatever the run's own timeout.
const HELPER_TIMEOUT_FLOOR: Duration = Duration::from_secs(60);

/// What an adapter knows during one run.
#[derive(Debug, Clone)]
pub(crate) struct Ctx<'a> {
    /// The project directory (canonical).
    pub project: &'a Path,
    /// This run's directory, for the runner's output files.
    pub run_dir: &'a Path,
    /// The caller's options.
    pub opts: &'a RunOptions,
    /// The run's extra environment.
    pub env: Vec<(OsString, OsString)>,
    /// Where programs are looked up.
    pub path: OsString,
}

impl<'a> Ctx<'a> {
    pub fn new(project: &'a Path, run_dir: &'a Path, opts: &'a RunOptions) -> Self {
        // `{run_dir}` in a value is this run's directory (see `RunOptions::env`).
        let here = run_dir.to_string_lossy();
        let env: Vec<(OsString, OsString)> = opts
            .env
            .iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v.replace(RUN_DIR, &here))))
            .collect();
        let path = tools::search_path(&env);
        Ctx {
            project,
            run_dir,
            opts,
            env,
            path,
        }
    }

    /// An invocation of `program` in the project with the run's environment.
    pub fn invocation(&self, program: impl Into<PathBuf>) -> Invocation {
        let mut inv = Invocation::new(program, self.project);
        inv.env = self.env.clone();
        inv
    }

    /// A path in the run directory.
    pub fn out(&self, name: &str) -> PathBuf {
        self.run_dir.join(name)
    }

    /// Runs a helper command (a probe, a listing). The run's timeout bounds the suite, not
    /// its helpers: a Python start-up on a loaded machine can outlast a two-second run
    /// limit, and a probe cut short would read as "pytest not installed".
    pub async fn helper(&self, inv: &Invocation) -> Result<Captured, RunnerError> {
        let limits = Limits {
            timeout: self
                .opts
                .timeout
                .clamp(HELPER_TIMEOUT_FLOOR, Duration::from_secs(300)),
            grace: self.opts.kill_grace,
        };
        crate::process::run(inv, limits)
            .await
            .map_err(|e| RunnerError::io(format!("running {}", inv.program.display()), e))
    }
}

/// A prepared run: the command, plus what the adapter needs to read its results.
#[derive(Debug)]
pub(crate) struct Prepared {
    pub invocation: Invocation,
    /// The runner's machine-readable output file, when it writes one.
    pub report_file: Option<PathBuf>,
    /// Whether the plugin path (pytest-json-report, nextest) was taken.
    pub plugin: bool,
    /// The Python interpreter (pytest), for the coverage step.
    pub python: Option<PathBuf>,
    /// Work started beside the run (nextest's list), taken once by `collect`.
    pub background: std::sync::Mutex<Option<cargo_nextest::Background>>,
}

impl Prepared {
    pub fn new(invocation: Invocation) -> Self {
        Prepared {
            invocation,
            report_file: None,
            plugin: false,
            python: None,
            background: std::sync::Mutex::new(None),
        }
    }
}

/// What an adapter read back.
#[derive(Debug, Clone, Default)]
pub(crate) struct Collected {
    pub tests: Vec<TestResult>,
    pub coverage: Option<Coverage>,
    /// Whether a second command the adapter ran after the main one (cargo's doc tests beside
    /// nextest) hit the time the run had left.
    pub timed_out: bool,
    /// That command's exit code, the run's when the main command exited 0.
    pub exit_code: Option<i32>,
    /// Tests that had started and not finished when the timeout stopped the run, by id.
    pub running: Vec<String>,
    /// Tests that failed and then passed in this run, by id (see `Report::flaky`).
    pub flaky: Vec<String>,
    /// The exit code of a retry that re-ran every failure of the first attempt (Maestro);
    /// it replaces the first attempt's, so a run whose retries all passed exits 0.
    pub retry_exit_code: Option<i32>,
}

/// Checks the caller's runner arguments (`huddle test -- …`) before anything starts: the
/// guard's bounds, then the runner's own refusals (its reporter and output flags, watch
/// mode). Only the JavaScript runners take such arguments.
pub(crate) fn check_runner_args(fw: Framework, opts: &RunOptions) -> Result<(), RunnerError> {
    if opts.runner_args.is_empty() {
        return Ok(());
    }
    guard::check_runner_args(&opts.runner_args)?;
    let spec = match fw {
        Framework::Jest => &jest::SPEC,
        Framework::Vitest => &vitest::SPEC,
        Framework::Mocha => &mocha::SPEC,
        _ => {
            return Err(RunnerError::Unsupported(format!(
                "runner arguments after `--` ({:?}) are passed to jest, vitest and mocha only; \
                 {fw} does not take them",
                opts.runner_args
            )))
        }
    };
    project_args::check_caller_args(spec, &opts.runner_args)?;
    Ok(())
}

pub(crate) async fn prepare(fw: Framework, ctx: &Ctx<'_>) -> Result<Prepared, RunnerError> {
    match fw {
        Framework::Pytest => pytest::prepare(ctx).await,
        Framework::Jest => jest::prepare(ctx),
        Framework::Vitest => vitest::prepare(ctx),
        Framework::Mocha => mocha::prepare(ctx),
        Framework::NodeTest => node_test::prepare(ctx),
        Framework::Go => go::prepare(ctx),
        Framework::Cargo => cargo::prepare(ctx).await,
        Framework::Cypress => cypress::prepare(ctx),
        Framework::Maestro => maestro::prepare(ctx),
        Framework::Playwright => playwright::prepare(ctx),
    }
}

pub(crate) async fn collect(
    fw: Framework,
    ctx: &Ctx<'_>,
    prepared: &Prepared,
    captured: &Captured,
) -> Result<Collected, RunnerError> {
    match fw {
        Framework::Pytest => pytest::collect(ctx, prepared, captured).await,
        Framework::Jest => jest::collect(ctx, prepared, captured),
        Framework::Vitest => vitest::collect(ctx, prepared, captured),
        Framework::Mocha => mocha::collect(ctx, prepared, captured),
        Framework::NodeTest => node_test::collect(ctx, prepared, captured),
        Framework::Go => go::collect(ctx, captured),
        Framework::Cargo => cargo::collect(ctx, prepared, captured).await,
        Framework::Cypress => cypress::collect(ctx, captured),
        Framework::Maestro => maestro::collect(ctx, prepared, captured).await,
        Framework::Playwright => playwright::collect(ctx, prepared, captured),
    }
}

pub(crate) async fn list(fw: Framework, ctx: &Ctx<'_>) -> Result<Listing, RunnerError> {
    match fw {
        Framework::Pytest => pytest::list(ctx).await,
        Framework::Jest => jest::list(ctx).await,
        Framework::Vitest => vitest::list(ctx).await,
        Framework::Mocha => mocha::list(ctx).await,
        Framework::NodeTest => node_test::list(ctx).await,
        Framework::Go => go::list(ctx).await,
        Framework::Cargo => cargo::list(ctx).await,
        Framework::Cypress => cypress::list(ctx),
        Framework::Maestro => maestro::list(ctx),
        Framework::Playwright => playwright::list(ctx).await,
    }
}

/// `path` relative to `root`, with `/` separators; unchanged when outside `root`.
pub fn relative(root: &Path, path: &str) -> String {
    let p = Path::new(path);
    let rel = p.strip_prefix(root).unwrap_or(p);
    rel.to_string_lossy().replace('\\', "/")
}

/// A JavaScript framework's runner, started as its package manager would: `node <entry>` for
/// the package's real entry point (see [`node_entry`]), or the `.bin` shim itself. Returns the
/// invocation and the entry (the script, or the shim).
pub(crate) fn node_tool(ctx: &Ctx<'_>, tool: &str) -> Result<(Invocation, PathBuf), RunnerError> {
    let resolved = node_entry::resolve(ctx.project, tool, tool)?;
    match resolved.entry {
        node_entry::Entry::Script(script) => {
            let node = tools::find_program("node", &ctx.path)
                .ok_or_else(|| tools::missing("node", ctx.project))?;
            let mut inv = ctx.invocation(node);
            inv.arg(&script);
            Ok((inv, script))
        }
        node_entry::Entry::Shim(shim) => Ok((ctx.invocation(&shim), shim)),
    }
}

/// Splits a JavaScript node id (`file::describe::…::title`) into its file and the runner's
/// full test name (describe blocks and title joined by spaces, as jest, vitest and mocha
/// match `-t`/`--grep`). A bare file (a suite that failed to load) has no name.
pub(crate) fn split_js_nodeid(nodeid: &str) -> (&str, Option<String>) {
    match nodeid.split_once("::") {
        Some((file, rest)) => {
            let rest = match project_of(nodeid) {
                Some(p) => rest[p.len() + 2..].trim_start_matches("::"),
                None => rest,
            };
            let name = (!rest.is_empty()).then(|| rest.split("::").collect::<Vec<_>>().join(" "));
            (file, name)
        }
        None => (nodeid, None),
    }
}

/// The jest project a node id names after its file (`src/x.test.js::[unit]::title`).
pub(crate) fn project_of(nodeid: &str) -> Option<&str> {
    let (_, rest) = nodeid.split_once("::")?;
    let segment = rest.split("::").next()?;
    segment.strip_prefix('[')?.strip_suffix(']')
}

/// The distinct files of JavaScript node ids and the names after each file (`a::b::title`).
pub(crate) fn files_and_names_of(ids: &[String]) -> (Vec<String>, Vec<String>) {
    let (mut files, mut names) = (Vec::new(), Vec::new());
    for id in ids {
        let (file, rest) = id.split_once("::").unwrap_or((id, ""));
        if !files.iter().any(|f| f == file) {
            files.push(file.to_string());
        }
        if !rest.is_empty() {
            names.push(rest.to_string());
        }
    }
    (files, names)
}

/// A regex that matches exactly one of `names`: `^(?:a|b)$`, each escaped. A name that ends
/// with a duplicate's ` [N]` (see [`crate::report::disambiguate_ids`]) also matches without it:
/// the runner knows the test only by its title.
pub(crate) fn exact_names_pattern(names: &[String]) -> String {
    let mut alts: Vec<String> = Vec::new();
    for name in names {
        alts.push(regex::escape(name));
        if let Some(base) = duplicate_base(name) {
            alts.push(regex::escape(base));
        }
    }
    alts.dedup();
    format!("^(?:{})$", alts.join("|"))
}

/// The title before a duplicate's ` [N]` suffix, when `name` has one.
pub(crate) fn duplicate_base(name: &str) -> Option<&str> {
    let (base, n) = name.strip_suffix(']')?.rsplit_once(" [")?;
    (!n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())).then_some(base)
}

/// Reads a file the runner was asked to write; `None` when it did not write it.
pub(crate) fn read_output(path: &Path) -> Option<Vec<u8>> {
    std::fs::read(path).ok().filter(|b| !b.is_empty())
}

/// The first and last lines of `text` (an error's message comes first, its stack after).
fn ends(text: &str, head: usize, tail: usize) -> String {
    let lines: Vec<&str> = text.trim_end().lines().collect();
    if lines.len() <= head + tail {
        return lines.join("\n");
    }
    format!(
        "{}\n[… {} lines omitted]\n{}",
        lines[..head].join("\n"),
        lines.len() - head - tail,
        lines[lines.len() - tail..].join("\n")
    )
}

/// What a runner printed, for messages: the first and last lines of stderr and of stdout.
pub(crate) fn runner_output(captured: &Captured) -> String {
    let show = |bytes: &[u8]| {
        let text = ends(&strip_ansi(&String::from_utf8_lossy(bytes)), 12, 12);
        if text.trim().is_empty() {
            "(nothing)".to_string()
        } else {
            text
        }
    };
    format!(
        "stderr:\n{}\nstdout:\n{}",
        show(&captured.stderr),
        show(&captured.stdout)
    )
}

/// The error entry for a run whose machine-readable report huddle cannot read (never a
/// silent "0 tests"): the file it expected, why, the exit code and what the runner printed.
/// Named `[runner]`, like any failure outside a test: the tester role reads a first run that
/// holds only `[runner]` as the runner crashing, not as a test to repair.
pub(crate) fn unreadable_report(
    tool: &str,
    expected: &Path,
    why: &str,
    captured: &Captured,
) -> TestResult {
    let mut t = TestResult::new("[runner]", Outcome::Error);
    t.longrepr = Some(format!(
        "{tool} exited with code {} and huddle cannot read its report: {why} (expected {}).\n{}",
        captured.exit_code,
        expected.display(),
        runner_output(captured)
    ));
    t
}

#[cfg(test)]
mod tests {
    use super::ends;

    #[test]
    fn ends_keeps_the_message_and_the_last_lines() {
        let text: String = (1..=30).map(|i| format!("line {i}\n")).collect();
        let shown = ends(&text, 2, 2);
        assert_eq!(
            shown,
            "line 1\nline 2\n[… 26 lines omitted]\nline 29\nline 30"
        );
        assert_eq!(ends("a\nb\n", 2, 2), "a\nb");
    }
}

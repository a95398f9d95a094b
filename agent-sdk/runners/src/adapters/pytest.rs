//! pytest: by default through huddle's own reporter plugin (`huddle_pytest_report.py`,
//! written into the run directory and loaded with `-p`), which costs a run far less than
//! pytest's JUnit XML or pytest-json-report (BENCHMARKS.md, "large suite"). JUnit XML
//! (`--junitxml`, xunit1 so files and lines are kept) with `PluginPolicy::Never`;
//! pytest-json-report with `PluginPolicy::Require`. Collection errors do not stop the run
//! (`--continue-on-collection-errors`) and each becomes an error entry.

use super::pytest_parse::{parse_huddle_pytest, parse_json_report, parse_pytest_junit};
use super::python_probe::find_python;
use super::{read_output, unreadable_report, Collected, Ctx, Prepared};
use crate::coverage;
use crate::error::RunnerError;
use crate::options::{Listing, PluginPolicy, Selection};
use crate::process::Captured;
use crate::scrub::{strip_ansi, tail_lines};
use crate::tools;

fn add_selection(ctx: &Ctx<'_>, args: &mut Vec<std::ffi::OsString>) {
    if let Some(f) = &ctx.opts.filter {
        args.push("-k".into());
        args.push(f.into());
    }
    match &ctx.opts.selection {
        Selection::All => {}
        Selection::Paths(p) | Selection::Related(p) => args.extend(p.iter().map(Into::into)),
        Selection::Tests(ids) => args.extend(node_ids(ids).into_iter().map(Into::into)),
    }
}

/// The pytest node ids behind report ids, each once: huddle's ` [2]` on a second result of
/// one id (a case that failed and then errored in teardown is two JUnit testcases) is no
/// part of pytest's id, and pytest finds no test by it (exit 4).
fn node_ids(ids: &[String]) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::with_capacity(ids.len());
    for id in ids {
        let id = super::duplicate_base(id).unwrap_or(id);
        if !out.contains(&id) {
            out.push(id);
        }
    }
    out
}

pub(crate) async fn prepare(ctx: &Ctx<'_>) -> Result<Prepared, RunnerError> {
    // The runs directory is the project's own, so its probe cache is too.
    let cache = ctx
        .run_dir
        .parent()
        .map(|runs| runs.join(".python-probe.json"));
    let python = find_python(ctx, cache).await?;
    let reporter = match ctx.opts.plugins {
        PluginPolicy::Never => Reporter::Junit,
        PluginPolicy::Auto => Reporter::Huddle,
        PluginPolicy::Require if python.json_report => Reporter::JsonReport,
        PluginPolicy::Require => return Err(tools::missing("pytest-json-report", ctx.project)),
    };
    let mut inv = ctx.invocation(&python.executable);
    if ctx.opts.coverage {
        if !python.coverage {
            return Err(tools::missing("coverage", ctx.project));
        }
        inv.arg("-m").arg("coverage").arg("run");
        inv.arg(format!("--data-file={}", ctx.out(".coverage").display()));
    }
    inv.arg("-m")
        .arg("pytest")
        .arg("--continue-on-collection-errors");
    if ctx.opts.isolated {
        isolate(ctx, &mut inv)?;
    }
    let report = ctx.out(reporter.file());
    match reporter {
        Reporter::Huddle => {
            let module = ctx.out(&format!("{HUDDLE_MODULE}.py"));
            std::fs::write(&module, HUDDLE_PLUGIN)
                .map_err(|e| RunnerError::io(format!("writing {}", module.display()), e))?;
            let path = prepend_pythonpath(&inv.env, ctx.run_dir)
                .map_err(|e| RunnerError::io("setting PYTHONPATH", std::io::Error::other(e)))?;
            inv.env.push(("PYTHONPATH".into(), path));
            inv.env
                .push(("HUDDLE_PYTEST_REPORT".into(), report.clone().into()));
            inv.env.push((
                "HUDDLE_PYTEST_PROGRESS".into(),
                ctx.out(HUDDLE_PROGRESS_FILE).into(),
            ));
            inv.arg("-p").arg(HUDDLE_MODULE);
        }
        Reporter::JsonReport => {
            inv.arg("--json-report")
                .arg(format!("--json-report-file={}", report.display()));
        }
        Reporter::Junit => {
            inv.arg(format!("--junitxml={}", report.display()))
                .arg("-o")
                .arg("junit_family=xunit1");
        }
    }
    add_selection(ctx, &mut inv.args);
    let mut prepared = Prepared::new(inv);
    prepared.report_file = Some(report);
    prepared.plugin = reporter != Reporter::Junit;
    prepared.python = Some(python.executable);
    Ok(prepared)
}

pub(crate) async fn collect(
    ctx: &Ctx<'_>,
    prepared: &Prepared,
    captured: &Captured,
) -> Result<Collected, RunnerError> {
    let mut collected = Collected::default();
    let report = prepared.report_file.as_deref();
    let reporter = Reporter::of(report);
    if reporter == Reporter::Huddle {
        // huddle's reporter writes its file at the end of every session pytest starts, even
        // one that collects nothing: no file means the plugin did not load or pytest stopped
        // early, never "0 tests".
        let path = report.expect("the reporter's file is set");
        collected.tests = match read_output(path) {
            Some(bytes) => parse_huddle_pytest(&bytes).unwrap_or_else(|e| {
                vec![unreadable_report(
                    "pytest",
                    path,
                    &format!("huddle's reporter file does not parse ({e})"),
                    captured,
                )]
            }),
            None if captured.timed_out => {
                let progress = read_output(&ctx.out(HUDDLE_PROGRESS_FILE)).unwrap_or_default();
                let (tests, running) = super::pytest_parse::read_huddle_progress(&progress);
                collected.running = running;
                tests
            }
            None => vec![unreadable_report(
                "pytest",
                path,
                "huddle's reporter plugin (`-p huddle_pytest_report`) wrote no report; \
                 `--plugins never` runs through pytest's JUnit XML instead",
                captured,
            )],
        };
    } else if let Some(bytes) = report.and_then(read_output) {
        collected.tests = if reporter == Reporter::JsonReport {
            parse_json_report(&bytes)
                .map_err(|e| RunnerError::io("reading pytest-json-report's report", e.into()))?
        } else {
            let xml = String::from_utf8_lossy(&bytes);
            parse_pytest_junit(&xml, ctx.project).map_err(|e| {
                RunnerError::io("reading pytest's JUnit XML", std::io::Error::other(e))
            })?
        };
    }
    if ctx.opts.coverage && !captured.timed_out {
        if let Some(python) = &prepared.python {
            let mut inv = ctx.invocation(python);
            inv.arg("-m").arg("coverage").arg("json").arg("-q");
            inv.arg(format!("--data-file={}", ctx.out(".coverage").display()));
            inv.arg("-o").arg(ctx.out("coverage.json"));
            ctx.helper(&inv).await?;
            collected.coverage = coverage::coverage_py(ctx.run_dir, "coverage.json");
        }
    }
    Ok(collected)
}

/// Which of pytest's machine-readable outputs a run reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reporter {
    /// huddle's own plugin (the default).
    Huddle,
    /// pytest-json-report (`PluginPolicy::Require`).
    JsonReport,
    /// pytest's JUnit XML (`PluginPolicy::Never`).
    Junit,
}

const HUDDLE_MODULE: &str = "huddle_pytest_report";
const HUDDLE_PLUGIN: &str = include_str!("python/huddle_pytest_report.py");
const HUDDLE_FILE: &str = "pytest-huddle.json";
/// The progress lines of huddle's reporter, read when the run was stopped at its timeout.
const HUDDLE_PROGRESS_FILE: &str = "pytest-huddle-progress.jsonl";
const JSON_REPORT_FILE: &str = "pytest-report.json";
const JUNIT_FILE: &str = "pytest-junit.xml";

impl Reporter {
    fn file(self) -> &'static str {
        match self {
            Reporter::Huddle => HUDDLE_FILE,
            Reporter::JsonReport => JSON_REPORT_FILE,
            Reporter::Junit => JUNIT_FILE,
        }
    }

    /// The reporter a prepared run chose, by the file it expects.
    fn of(report: Option<&std::path::Path>) -> Self {
        match report.and_then(|p| p.file_name()).and_then(|n| n.to_str()) {
            Some(HUDDLE_FILE) => Reporter::Huddle,
            Some(JSON_REPORT_FILE) => Reporter::JsonReport,
            _ => Reporter::Junit,
        }
    }
}

/// `PYTHONPATH` with `dir` first, then the run's own value (or huddle's environment's).
/// A module pytest loads (`-p`) before any conftest: the project root goes on `sys.path`
/// after the standard library and site-packages, where `PYTHONSAFEPATH` left it off.
const ROOT_LAST_MODULE: &str = "huddle_root_last";

/// An isolated run: the project's own modules cannot stand in for pytest, its plugins or the
/// standard library (`PYTHONSAFEPATH`, Python 3.11 and later), and pytest's cache stays off.
fn isolate(ctx: &Ctx<'_>, inv: &mut crate::process::Invocation) -> Result<(), RunnerError> {
    let root = serde_json::to_string(&ctx.project.to_string_lossy())
        .map_err(|e| RunnerError::io("naming the project root", std::io::Error::other(e)))?;
    let module = ctx.out(&format!("{ROOT_LAST_MODULE}.py"));
    std::fs::write(&module, format!("import sys\nsys.path.append({root})\n"))
        .map_err(|e| RunnerError::io(format!("writing {}", module.display()), e))?;
    let path = prepend_pythonpath(&inv.env, ctx.run_dir)
        .map_err(|e| RunnerError::io("setting PYTHONPATH", std::io::Error::other(e)))?;
    inv.env.push(("PYTHONPATH".into(), path));
    inv.env.push(("PYTHONSAFEPATH".into(), "1".into()));
    inv.env.push(("PYTHONDONTWRITEBYTECODE".into(), "1".into()));
    inv.arg("-p").arg(ROOT_LAST_MODULE);
    inv.arg("-p").arg("no:cacheprovider");
    Ok(())
}

fn prepend_pythonpath(
    env: &[(std::ffi::OsString, std::ffi::OsString)],
    dir: &std::path::Path,
) -> Result<std::ffi::OsString, std::env::JoinPathsError> {
    let current = env
        .iter()
        .rev()
        .find(|(k, _)| k == "PYTHONPATH")
        .map(|(_, v)| v.clone())
        .or_else(|| std::env::var_os("PYTHONPATH"));
    let mut paths = vec![dir.to_path_buf()];
    if let Some(current) = current.filter(|c| !c.is_empty()) {
        paths.extend(std::env::split_paths(&current));
    }
    std::env::join_paths(paths)
}

/// Lists through pytest's own collection hooks, not its printed list: `--collect-only -q`
/// prints node ids only at the default verbosity (a project's `addopts = -v` turns it back
/// into a tree) and ids may contain spaces (`test_slug[two words]`). The project's addopts
/// still apply, so `-m`/`-p` options there select what a run would.
const COLLECT: &str = r#"import json, sys
import pytest

class HuddleCollect:
    def __init__(self):
        self.tests, self.errors = [], []

    def pytest_collectreport(self, report):
        if report.failed:
            lines = str(report.longrepr).strip().splitlines() or ["collection error"]
            self.errors.append(report.nodeid or lines[-1])

    def pytest_collection_finish(self, session):
        self.tests = [item.nodeid for item in session.items]

plugin = HuddleCollect()
code = int(pytest.main(sys.argv[2:], plugins=[plugin]))
with open(sys.argv[1], "w", encoding="utf-8") as f:
    json.dump({"tests": plugin.tests, "errors": plugin.errors, "exit": code}, f)
sys.exit(code)
"#;

#[derive(serde::Deserialize)]
struct Collection {
    tests: Vec<String>,
    errors: Vec<String>,
    exit: i32,
}

pub(crate) async fn list(ctx: &Ctx<'_>) -> Result<Listing, RunnerError> {
    let python = find_python(ctx, None).await?;
    let file = ctx.out("collected.json");
    let mut inv = ctx.invocation(&python.executable);
    inv.arg("-c").arg(COLLECT).arg(&file);
    inv.arg("--collect-only")
        .arg("-q")
        .arg("--continue-on-collection-errors");
    add_selection(ctx, &mut inv.args);
    let out = ctx.helper(&inv).await?;
    let collection = read_output(&file)
        .and_then(|b| serde_json::from_str::<Collection>(&crate::text::json(&b)).ok());
    let mut listing = Listing::default();
    let exit = match collection {
        Some(c) => {
            listing.tests = c.tests;
            listing.errors = c.errors;
            c.exit
        }
        None => out.exit_code,
    };
    // 0: listed; 1: listed, with the collection errors named above; 5: nothing collected.
    // Anything else (a usage or internal error) stopped collection part-way: the hooks ran,
    // but what they saw is not what a run would run.
    if !matches!(exit, 0 | 1 | 5) {
        listing.tests.clear();
        let text = String::from_utf8_lossy(if out.stderr.is_empty() {
            &out.stdout
        } else {
            &out.stderr
        })
        .into_owned();
        listing.errors.push(format!(
            "pytest exited with code {exit} while collecting:\n{}",
            tail_lines(&strip_ansi(&text), 20)
        ));
    }
    Ok(listing)
}

#[cfg(test)]
mod tests {
    use super::node_ids;

    #[test]
    fn a_duplicates_suffix_is_dropped_and_its_id_given_once() {
        let ids: Vec<String> = [
            "t.py::test_a[2]",
            "t.py::test_a[2] [2]",
            "t.py::test_a[2] [3]",
            "t.py::test_b[x [2]]",
            "t.py::test_c",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            node_ids(&ids),
            ["t.py::test_a[2]", "t.py::test_b[x [2]]", "t.py::test_c"]
        );
    }
}

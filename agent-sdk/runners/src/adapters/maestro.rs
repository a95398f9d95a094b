//! Maestro mobile UI flows (`maestro test --format junit`), as the seeds' `run_tests` runs
//! them: the flows in `.maestro/` (the folder itself, so Maestro applies its `config.yaml`),
//! a filter picks the flows whose file name holds it, and flows that fail on the first
//! attempt are run once more: one that passes then counts as passed and as flaky
//! (`Report::flaky_in_run`). `MAESTRO_RETRY=false` in the run's environment turns the retry
//! off. Maestro's JUnit names a flow (its `name:`, else its file name) but not its file, so
//! huddle maps names back to the flow files to make `file::name` ids and to re-run them.

use super::{unreadable_report, Collected, Ctx, Prepared};
use crate::error::RunnerError;
use crate::junit::parse_junit;
use crate::options::{Listing, Selection};
use crate::process::{self, Captured, Invocation, Limits};
use crate::report::{Outcome, TestResult};
use crate::{rundir, tools};
use std::path::{Path, PathBuf};

/// Where Maestro projects keep their flows.
pub const FLOWS_DIR: &str = ".maestro";
const REPORT_FILE: &str = "maestro-report.xml";
const RETRY_REPORT_FILE: &str = "maestro-retry.xml";

/// The flows in `dir` as Maestro runs a folder: its top-level `*.yaml`/`*.yml` files but
/// the workspace's `config.yaml`, sorted.
pub fn flow_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut flows: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .filter(|p| {
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
            let name = name.unwrap_or_default();
            (name.ends_with(".yaml") || name.ends_with(".yml"))
                && !name.starts_with("config.")
                && !name.starts_with('.')
        })
        .collect();
    flows.sort();
    flows
}

/// A flow's name as Maestro reports it: `name:` in the flow's config section (before
/// `---`), else the file name without its extension.
pub fn flow_name(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let header = text.split("\n---").next().unwrap_or("");
    let named = header.lines().find_map(|l| {
        let v = l
            .strip_prefix("name:")?
            .trim()
            .trim_matches(|c| c == '"' || c == '\'');
        (!v.is_empty()).then(|| v.to_string())
    });
    named.unwrap_or_else(|| {
        path.file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    })
}

fn command(ctx: &Ctx<'_>, report: &Path, flows: &[String]) -> Result<Invocation, RunnerError> {
    let maestro = tools::find_program("maestro", &ctx.path)
        .ok_or_else(|| tools::missing("maestro", ctx.project))?;
    let mut inv = ctx.invocation(maestro);
    inv.arg("test")
        .arg("--format")
        .arg("junit")
        .arg("--output")
        .arg(report);
    inv.args.extend(flows.iter().map(Into::into));
    Ok(inv)
}

/// The flows to run, relative to the project.
fn selected_flows(ctx: &Ctx<'_>) -> Result<Vec<String>, RunnerError> {
    let mut flows = match &ctx.opts.selection {
        Selection::All if ctx.opts.filter.is_none() => return Ok(vec![FLOWS_DIR.to_string()]),
        Selection::All => flow_files(&ctx.project.join(FLOWS_DIR))
            .iter()
            .map(|p| super::relative(ctx.project, &p.to_string_lossy()))
            .collect(),
        Selection::Paths(p) => p.clone(),
        Selection::Tests(ids) => super::files_and_names_of(ids).0,
        Selection::Related(_) => {
            return Err(RunnerError::Unsupported(
                "Maestro cannot select flows by the source files they cover".into(),
            ))
        }
    };
    if let Some(needle) = &ctx.opts.filter {
        let file_name = |f: &String| {
            Path::new(f)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
        };
        flows.retain(|f| file_name(f).is_some_and(|n| n.contains(needle.as_str())));
        if flows.is_empty() {
            return Err(RunnerError::Unsupported(format!(
                "no tests ran: no Maestro flow in {FLOWS_DIR}/ has {needle:?} in its file name"
            )));
        }
    }
    Ok(flows)
}

pub(crate) fn prepare(ctx: &Ctx<'_>) -> Result<Prepared, RunnerError> {
    if ctx.opts.coverage {
        return Err(RunnerError::Unsupported(
            "coverage is not supported for Maestro flows".into(),
        ));
    }
    let flows = selected_flows(ctx)?;
    let report = ctx.out(REPORT_FILE);
    let mut prepared = Prepared::new(command(ctx, &report, &flows)?);
    prepared.report_file = Some(report);
    Ok(prepared)
}

/// The flows in `dir` and its subfolders (a `config.yaml` can take flows from those).
fn flow_files_within(dir: &Path, depth: usize) -> Vec<PathBuf> {
    let mut flows = flow_files(dir);
    let Ok(entries) = std::fs::read_dir(dir) else {
        return flows;
    };
    let mut subdirs: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.is_dir()
                && !p
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with('.'))
        })
        .collect();
    subdirs.sort();
    if depth < 4 {
        for d in subdirs {
            flows.extend(flow_files_within(&d, depth + 1));
        }
    }
    flows
}

/// Flow names to their project-relative files, for the flows under `.maestro/` and those run.
fn names_to_files(ctx: &Ctx<'_>, ran: &[String]) -> Vec<(String, String)> {
    let mut files: Vec<PathBuf> = flow_files_within(&ctx.project.join(FLOWS_DIR), 0);
    for f in ran {
        let p = ctx.project.join(f);
        if p.is_file() && !files.contains(&p) {
            files.push(p);
        } else if p.is_dir() {
            files.extend(
                flow_files(&p)
                    .into_iter()
                    .filter(|f| !files.contains(f))
                    .collect::<Vec<_>>(),
            );
        }
    }
    files
        .iter()
        .map(|p| {
            (
                flow_name(p),
                super::relative(ctx.project, &p.to_string_lossy()),
            )
        })
        .collect()
}

/// Reads a Maestro JUnit file into results with `file::name` ids (the name alone when no
/// flow file has it).
pub fn parse_maestro_junit(
    xml: &str,
    files: &[(String, String)],
) -> Result<Vec<TestResult>, String> {
    let cases = parse_junit(xml).map_err(|e| e.to_string())?;
    Ok(cases
        .into_iter()
        .map(|c| {
            let file = files
                .iter()
                .find(|(n, _)| *n == c.name)
                .map(|(_, f)| f.clone());
            let id = match &file {
                Some(f) => format!("{f}::{}", c.name),
                None => c.name.clone(),
            };
            let mut t = TestResult::new(id, c.outcome);
            t.file = file;
            t.duration = c.time;
            if c.outcome.is_failure() {
                let text = if c.text.trim().is_empty() {
                    c.message.unwrap_or_else(|| "the flow failed".into())
                } else {
                    c.text
                };
                t.longrepr = Some(text);
            }
            t
        })
        .collect())
}

fn retry_enabled(ctx: &Ctx<'_>) -> bool {
    let value = ctx
        .env
        .iter()
        .find(|(k, _)| k == "MAESTRO_RETRY")
        .map(|(_, v)| v.to_string_lossy().into_owned())
        .or_else(|| std::env::var("MAESTRO_RETRY").ok());
    !matches!(
        value.as_deref().map(str::to_ascii_lowercase).as_deref(),
        Some("false" | "0" | "no" | "off")
    )
}

pub(crate) async fn collect(
    ctx: &Ctx<'_>,
    prepared: &Prepared,
    captured: &Captured,
) -> Result<Collected, RunnerError> {
    let path = prepared
        .report_file
        .clone()
        .unwrap_or_else(|| ctx.out(REPORT_FILE));
    let ran: Vec<String> = prepared
        .invocation
        .args
        .iter()
        .skip(5) // test --format junit --output FILE
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let files = names_to_files(ctx, &ran);
    let mut tests = match super::read_output(&path) {
        Some(bytes) => match parse_maestro_junit(&String::from_utf8_lossy(&bytes), &files) {
            Ok(tests) => tests,
            Err(e) => {
                let why = format!("its JUnit XML does not parse ({e})");
                return Ok(only(unreadable_report("maestro", &path, &why, captured)));
            }
        },
        None if captured.timed_out => Vec::new(),
        None => {
            let why = "it wrote no JUnit report";
            return Ok(only(unreadable_report("maestro", &path, why, captured)));
        }
    };
    let failed: Vec<usize> = (0..tests.len())
        .filter(|&i| tests[i].outcome.is_failure())
        .collect();
    let mut collected = Collected::default();
    if failed.is_empty() || captured.timed_out || !retry_enabled(ctx) {
        collected.tests = tests;
        return Ok(collected);
    }
    // Re-run the failed flows whose files are known, once, in the time the run has left.
    let retry_files: Vec<String> = failed
        .iter()
        .filter_map(|&i| tests[i].file.clone())
        .collect();
    if retry_files.is_empty() {
        collected.tests = tests;
        return Ok(collected);
    }
    let retry_report = ctx.out(RETRY_REPORT_FILE);
    let inv = command(ctx, &retry_report, &retry_files)?;
    let limits = Limits {
        timeout: ctx.opts.timeout.saturating_sub(captured.elapsed),
        grace: ctx.opts.kill_grace,
    };
    let retry = process::run(&inv, limits)
        .await
        .map_err(|e| RunnerError::io("running the maestro retry", e))?;
    rundir::write(ctx.run_dir, "maestro-retry-stdout.txt", &retry.stdout)?;
    rundir::write(ctx.run_dir, "maestro-retry-stderr.txt", &retry.stderr)?;
    collected.timed_out = retry.timed_out;
    let second = super::read_output(&retry_report)
        .and_then(|b| parse_maestro_junit(&String::from_utf8_lossy(&b), &files).ok())
        .unwrap_or_default();
    for &i in &failed {
        let t = &mut tests[i];
        match second.iter().find(|r| r.nodeid == t.nodeid) {
            Some(r) if r.outcome == Outcome::Passed => {
                t.outcome = Outcome::Passed;
                t.duration = r.duration;
                t.longrepr = None;
                collected.flaky.push(t.nodeid.clone());
            }
            Some(r) => {
                let first = t.longrepr.take().unwrap_or_default();
                let again = r.longrepr.clone().unwrap_or_default();
                t.longrepr = Some(format!("{first}\n[retry] failed again: {again}"));
            }
            None => {}
        }
    }
    // The retry speaks for the run only when it re-ran every failure.
    if retry_files.len() == failed.len() && !retry.timed_out {
        collected.retry_exit_code = Some(retry.exit_code);
    }
    collected.tests = tests;
    Ok(collected)
}

fn only(t: TestResult) -> Collected {
    Collected {
        tests: vec![t],
        ..Collected::default()
    }
}

pub(crate) fn list(ctx: &Ctx<'_>) -> Result<Listing, RunnerError> {
    let flows = selected_flows(ctx)?;
    let files = names_to_files(ctx, &flows);
    let ran: Vec<PathBuf> = flows.iter().map(|f| ctx.project.join(f)).collect();
    let tests = files
        .into_iter()
        .filter(|(_, f)| {
            let p = ctx.project.join(f);
            ran.iter()
                .any(|r| *r == p || (r.is_dir() && p.parent() == Some(r.as_path())))
        })
        .map(|(name, file)| format!("{file}::{name}"))
        .collect();
    Ok(Listing {
        tests,
        errors: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maestros_own_junit_shape_becomes_results() {
        // The document Maestro's JUnitTestSuiteReporterTest expects for a failed suite.
        let xml = r#"<?xml version='1.0' encoding='UTF-8'?>
<testsuites>
  <testsuite name="Test Suite" tests="2" failures="1" time="552">
    <testcase id="Flow A" name="Flow A" classname="Flow A" time="421" status="SUCCESS"/>
    <testcase id="Flow B" name="Flow B" classname="Flow B" time="131" status="ERROR">
      <failure>Error message</failure>
    </testcase>
  </testsuite>
</testsuites>
"#;
        let files = [("Flow A".to_string(), ".maestro/flow_a.yaml".to_string())];
        let tests = parse_maestro_junit(xml, &files).unwrap();
        let got: Vec<(&str, Outcome)> = tests
            .iter()
            .map(|t| (t.nodeid.as_str(), t.outcome))
            .collect();
        assert_eq!(
            got,
            [
                (".maestro/flow_a.yaml::Flow A", Outcome::Passed),
                ("Flow B", Outcome::Failed)
            ]
        );
        assert_eq!(tests[1].longrepr.as_deref(), Some("Error message"));
        assert_eq!(tests[0].duration, 421.0);
    }
}

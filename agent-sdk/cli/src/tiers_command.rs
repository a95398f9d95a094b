//! `huddle test --tiers`: the project's tests as tiers (unit → PBT → integration → e2e), each
//! its own run, with the services integration and e2e need; `--tiers --explain` says which
//! tier each test file is in and why, without running anything.

use crate::test_command::{CommandOutput, TestArgs};
use huddle_runners::affected::changed_files;
use huddle_runners::error::RunnerError;
use huddle_runners::framework::Framework;
use huddle_runners::options::RunOptions;
use huddle_runners::tiers::diff_scope::{scope, DiffScope};
use huddle_runners::tiers::e2e_capture::Capture;
use huddle_runners::tiers::pipeline::{plan, run_tiers, TiersOptions, TiersReport};
use huddle_runners::tiers::{SkipReason, Tier};
use std::fmt::Write as _;
use std::time::Duration;

/// The tier options of `huddle test`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct TiersArgs {
    /// Run the tests as tiers: unit, property-based, integration, e2e (in that order), with
    /// the services of huddle.toml started for integration and e2e.
    #[arg(long = "tiers", conflicts_with_all = ["list", "failed"])]
    pub enabled: bool,
    /// With --tiers: the whole pipeline's time in seconds; tiers that would start after it
    /// are skipped (budget_exhausted).
    #[arg(long, requires = "enabled", value_name = "SECONDS")]
    pub budget: Option<u64>,
    /// With --tiers: the Chromium executable e2e tests launch (default: huddle.toml
    /// `[e2e] chromium`, else $HUDDLE_CHROMIUM). Never downloaded.
    #[arg(long, requires = "enabled", value_name = "PATH")]
    pub chromium: Option<String>,
    /// With --tiers: what pytest-playwright records in the e2e tier: `failures` (their traces
    /// and screenshots; the default, else huddle.toml `[e2e] capture`) or `on` (every
    /// screenshot and trace, and failures' videos). The project's own options win.
    #[arg(long, requires = "enabled", value_enum, value_name = "WHAT")]
    pub e2e_capture: Option<Capture>,
}

/// `--tiers` (with `--explain`, `--affected`, `--json`).
pub(crate) async fn execute(
    args: &TestArgs,
    fw: Framework,
    opts: RunOptions,
    notes: &mut String,
) -> Result<CommandOutput, RunnerError> {
    if args.explain {
        return explain(args, fw);
    }
    let mut tiers_opts = TiersOptions {
        run: opts,
        budget: args.tiers.budget.map(Duration::from_secs),
        chromium: args.tiers.chromium.clone(),
        capture: args.tiers.e2e_capture,
        ..TiersOptions::default()
    };
    if args.affected {
        let changed = changed_files(&args.project, Some(&args.base)).await?;
        let (_, classified) = plan(&args.project, fw, None)?;
        let diff = scope(&args.project, fw, &classified, &changed);
        write_scope(notes, &diff);
        tiers_opts.scope = Some(diff.files);
    }
    let report = run_tiers(&args.project, fw, &tiers_opts).await?;
    let s = report.summary();
    let stdout = if args.json {
        serde_json::to_string_pretty(&report).expect("tier reports serialise") + "\n"
    } else {
        render(&report)
    };
    Ok(CommandOutput {
        code: i32::from(!report.passed()),
        stdout,
        stderr: String::new(),
        tally: Some((s.passed + s.failed + s.error, s.failed, s.error)),
    })
}

fn explain(args: &TestArgs, fw: Framework) -> Result<CommandOutput, RunnerError> {
    let (file, classified) = plan(&args.project, fw, None)?;
    let mut out = String::new();
    let _ = writeln!(out, "framework: {fw}");
    for tier in Tier::ALL {
        let files: Vec<_> = classified.iter().filter(|c| c.tier == tier).collect();
        if files.is_empty() {
            let _ = writeln!(out, "{tier}: no test files (skipped: no_tests)");
            continue;
        }
        let _ = writeln!(out, "{tier}:");
        for c in files {
            let runner = if c.runner == fw {
                String::new()
            } else {
                format!(" [runs with {}]", c.runner)
            };
            let _ = writeln!(out, "  {} — {}{runner}", c.file, c.reason);
        }
    }
    if file.services.is_empty() {
        let _ = writeln!(out, "services: none declared in huddle.toml");
    }
    for (name, s) in &file.services {
        let check = s
            .health
            .clone()
            .or_else(|| s.port.map(|p| format!("TCP port {p}")))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "service {name}: `{}`, healthy when {check} answers (within {}s), before integration and e2e",
            s.command,
            s.timeout_secs.unwrap_or(60)
        );
    }
    Ok(CommandOutput {
        code: 0,
        stdout: out,
        stderr: String::new(),
        tally: None,
    })
}

fn write_scope(notes: &mut String, diff: &DiffScope) {
    for line in &diff.reasons {
        let _ = writeln!(notes, "affected: {line}");
    }
    for f in &diff.uncovered {
        let _ = writeln!(
            notes,
            "uncovered implementation: {f} (no test in any tier maps to it)"
        );
    }
}

/// The human summary: one line per tier, the failures with their class, the verdict.
pub fn render(report: &TiersReport) -> String {
    let mut out = String::new();
    for note in &report.notes {
        let _ = writeln!(out, "note: {note}");
    }
    for t in &report.tiers {
        let s = t.summary;
        match t.skipped {
            Some(reason) => {
                let _ = writeln!(out, "{:<12} skipped: {reason}", t.tier.as_str());
                if let Some(detail) = &t.skip_detail {
                    for line in detail.lines() {
                        let _ = writeln!(out, "    {line}");
                    }
                }
            }
            None => {
                let _ = writeln!(
                    out,
                    "{:<12} {}: {} passed, {} failed, {} errors, {} skipped ({} total, {} file(s), timeout {}s)",
                    t.tier.as_str(),
                    if t.passed { "passed" } else { "FAILED" },
                    s.passed,
                    s.failed,
                    s.error,
                    s.skipped,
                    s.total,
                    t.files.len(),
                    t.timeout_secs
                );
                for f in &t.failures {
                    let evidence = f
                        .evidence
                        .as_deref()
                        .map(|e| format!(": {e}"))
                        .unwrap_or_default();
                    let _ = writeln!(
                        out,
                        "    FAILED {} [{}{evidence}]",
                        f.test,
                        f.class.as_str()
                    );
                }
                for r in &t.runs {
                    let _ = writeln!(out, "    run ({}): {}", r.framework, r.run_dir.display());
                }
                for a in &t.artifacts {
                    let _ = writeln!(out, "    artifact: {a}");
                }
            }
        }
    }
    let failed: Vec<&str> = report
        .tiers
        .iter()
        .filter(|t| !t.passed && t.skipped.is_none())
        .map(|t| t.tier.as_str())
        .collect();
    let skipped: Vec<String> = report
        .tiers
        .iter()
        .filter_map(|t| {
            t.skipped
                .filter(|r| *r != SkipReason::NoTests)
                .map(|r| format!("{} ({r})", t.tier))
        })
        .collect();
    let mut verdict = format!("verdict: {}", report.verdict);
    if !failed.is_empty() {
        let _ = write!(verdict, "; failed: {}", failed.join(", "));
    }
    if !skipped.is_empty() {
        let _ = write!(verdict, "; not run: {}", skipped.join(", "));
    }
    let _ = writeln!(out, "{verdict}");
    let _ = writeln!(out, "tiers: {}", report.dir.display());
    out
}

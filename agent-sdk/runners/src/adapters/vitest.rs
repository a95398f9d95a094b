//! Vitest: `vitest run --reporter=json --outputFile=…` (the reporter always explicit, so a
//! project's configured reporters cannot change what huddle reads), or `vitest related` for
//! affected tests. The JSON is jest's format, parsed by [`super::jest::parse_jest_json`].

use super::jest::{files_and_names, parse_jest_json};
use super::{exact_names_pattern, node_tool, read_output, relative};
use super::{Collected, Ctx, Prepared};
use crate::coverage;
use crate::error::RunnerError;
use crate::options::{Listing, Selection};
use crate::tools;
use serde::Deserialize;

pub(crate) fn prepare(ctx: &Ctx<'_>) -> Result<Prepared, RunnerError> {
    let (mut inv, _) = node_tool(ctx, "vitest")?;
    let report = ctx.out("vitest.json");
    match &ctx.opts.selection {
        Selection::Related(files) => {
            inv.arg("related").arg("--run").arg("--passWithNoTests");
            inv.args.extend(files.iter().map(Into::into));
        }
        _ => {
            inv.arg("run");
        }
    }
    inv.arg("--reporter=json")
        .arg(format!("--outputFile={}", report.display()))
        .arg("--includeTaskLocation");
    if let Some(f) = &ctx.opts.filter {
        inv.arg(format!("--testNamePattern={f}"))
            .arg("--passWithNoTests");
    }
    match &ctx.opts.selection {
        Selection::All | Selection::Related(_) => {}
        Selection::Paths(paths) => inv.args.extend(paths.iter().map(Into::into)),
        Selection::Tests(ids) => {
            let (files, names) = files_and_names(ids);
            if !names.is_empty() && ctx.opts.filter.is_none() {
                inv.arg(format!("--testNamePattern={}", exact_names_pattern(&names)));
            }
            inv.args.extend(files.into_iter().map(Into::into));
        }
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

pub(crate) fn collect(ctx: &Ctx<'_>, prepared: &Prepared) -> Result<Collected, RunnerError> {
    let mut collected = Collected::default();
    if let Some(bytes) = prepared.report_file.as_deref().and_then(read_output) {
        collected.tests = parse_jest_json(&bytes, ctx.project)
            .map_err(|e| RunnerError::io("reading vitest's JSON report", e.into()))?;
    }
    if ctx.opts.coverage {
        collected.coverage = coverage::istanbul(ctx.run_dir, "coverage/coverage-summary.json");
    }
    Ok(collected)
}

#[derive(Deserialize)]
struct Listed {
    name: String,
    file: String,
}

pub(crate) async fn list(ctx: &Ctx<'_>) -> Result<Listing, RunnerError> {
    let (mut inv, _) = node_tool(ctx, "vitest")?;
    let out_file = ctx.out("vitest-list.json");
    inv.arg("list")
        .arg(format!("--json={}", out_file.display()));
    if let Some(f) = &ctx.opts.filter {
        inv.arg(format!("--testNamePattern={f}"));
    }
    if let Selection::Paths(paths) = &ctx.opts.selection {
        inv.args.extend(paths.iter().map(Into::into));
    }
    let out = ctx.helper(&inv).await?;
    let listed: Vec<Listed> = read_output(&out_file)
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    let mut listing = Listing::default();
    for t in listed {
        let name = t.name.split(" > ").collect::<Vec<_>>().join("::");
        listing
            .tests
            .push(format!("{}::{name}", relative(ctx.project, &t.file)));
    }
    if out.exit_code != 0 {
        let text = String::from_utf8_lossy(if out.stderr.is_empty() {
            &out.stdout
        } else {
            &out.stderr
        });
        listing
            .errors
            .push(crate::scrub::strip_ansi(text.trim()).into_owned());
    }
    Ok(listing)
}

//! `go test -json`: the event stream is parsed by [`super::go_events::parse_go_events`]; a
//! name filter and re-runs map to `-run`; coverage to `-coverprofile`.

use super::go_events::parse_go_events;
use super::{exact_names_pattern, Collected, Ctx, Prepared};
use crate::coverage;
use crate::error::RunnerError;
use crate::options::{Listing, Selection};
use crate::process::{Captured, Invocation};
use crate::tools;

fn go(ctx: &Ctx<'_>) -> Result<Invocation, RunnerError> {
    let go =
        tools::find_program("go", &ctx.path).ok_or_else(|| tools::missing("go", ctx.project))?;
    Ok(ctx.invocation(go))
}

/// The module path from go.mod (`module example.com/x`).
fn module_path(ctx: &Ctx<'_>) -> String {
    std::fs::read_to_string(ctx.project.join("go.mod"))
        .ok()
        .and_then(|m| {
            m.lines().find_map(|l| {
                l.trim()
                    .strip_prefix("module ")
                    .map(|s| s.trim().trim_matches('"').to_string())
            })
        })
        .unwrap_or_default()
}

/// Packages and `-run` pattern for the selection. Re-running a test id re-runs its top-level
/// test (subtests cannot be selected across several parents with one pattern).
fn selection(ctx: &Ctx<'_>) -> (Vec<String>, Option<String>) {
    let mut run = ctx.opts.filter.clone();
    let packages = match &ctx.opts.selection {
        Selection::All => vec!["./...".to_string()],
        Selection::Paths(p) | Selection::Related(p) => p.clone(),
        Selection::Tests(ids) => {
            let (mut pkgs, mut names): (Vec<String>, Vec<String>) = (Vec::new(), Vec::new());
            for id in ids {
                let (pkg, test) = id.split_once("::").unwrap_or((id, ""));
                if !pkgs.iter().any(|p| p == pkg) {
                    pkgs.push(pkg.to_string());
                }
                let top = test.split('/').next().unwrap_or("");
                if !top.is_empty() && !names.iter().any(|n| n == top) {
                    names.push(top.to_string());
                }
            }
            if run.is_none() && !names.is_empty() {
                run = Some(exact_names_pattern(&names));
            }
            pkgs
        }
    };
    (packages, run)
}

/// `-tags=a,b`: the build tags that compile the tests behind `//go:build integration`.
fn tags(ctx: &Ctx<'_>, inv: &mut Invocation) {
    if !ctx.opts.build_tags.is_empty() {
        inv.arg(format!("-tags={}", ctx.opts.build_tags.join(",")));
    }
}

pub(crate) fn prepare(ctx: &Ctx<'_>) -> Result<Prepared, RunnerError> {
    let mut inv = go(ctx)?;
    inv.arg("test").arg("-json");
    let (packages, run) = selection(ctx);
    tags(ctx, &mut inv);
    if let Some(run) = run {
        inv.arg(format!("-run={run}"));
    }
    if ctx.opts.coverage {
        inv.arg(format!("-coverprofile={}", ctx.out("cover.out").display()));
    }
    inv.args.extend(packages.into_iter().map(Into::into));
    Ok(Prepared::new(inv))
}

pub(crate) fn collect(ctx: &Ctx<'_>, captured: &Captured) -> Result<Collected, RunnerError> {
    let stdout = String::from_utf8_lossy(&captured.stdout);
    let stderr = String::from_utf8_lossy(&captured.stderr);
    let mut collected = Collected {
        tests: parse_go_events(&stdout, &stderr, &module_path(ctx)),
        ..Collected::default()
    };
    if captured.timed_out {
        collected.running = super::go_events::unfinished_go_tests(&stdout);
    }
    if ctx.opts.coverage {
        collected.coverage = coverage::go_profile(ctx.run_dir, "cover.out");
    }
    Ok(collected)
}

/// `go test -list`: top-level tests, examples and fuzz targets. Subtests are not listed: go
/// creates them while the tests run (`t.Run`), so nothing short of running the tests can
/// name them, and a listing never runs tests.
pub(crate) async fn list(ctx: &Ctx<'_>) -> Result<Listing, RunnerError> {
    let mut inv = go(ctx)?;
    let (packages, run) = selection(ctx);
    inv.arg("test").arg("-json");
    tags(ctx, &mut inv);
    inv.arg(format!("-list={}", run.as_deref().unwrap_or(".")));
    inv.args.extend(packages.into_iter().map(Into::into));
    let out = ctx.helper(&inv).await?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let mut listing = Listing::default();
    for line in stdout.lines() {
        let Ok(ev) = serde_json::from_str::<serde_json::Value>(line) else {
            if line.starts_with("FAIL\t") {
                listing.errors.push(line.replace('\t', " "));
            }
            continue;
        };
        let (Some(pkg), Some(text)) = (
            ev.get("Package").and_then(|v| v.as_str()),
            ev.get("Output").and_then(|v| v.as_str()),
        ) else {
            continue;
        };
        let name = text.trim_end();
        // Benchmarks are listed too, but `go test` does not run them without -bench.
        let is_test = ["Test", "Example", "Fuzz"]
            .iter()
            .any(|p| name.starts_with(p))
            && !name.contains(char::is_whitespace);
        if is_test {
            listing.tests.push(format!("{pkg}::{name}"));
        }
    }
    if !out.stderr.is_empty() && out.exit_code != 0 {
        listing
            .errors
            .push(String::from_utf8_lossy(&out.stderr).trim().to_string());
    }
    Ok(listing)
}

/// Whether go can build against `module` without downloading it: it is vendored, or some
/// version of it is in the module cache (`go env GOMODCACHE`, as the run's environment sets
/// it). A project whose PBT library is missing would otherwise fail to build its tests.
pub async fn has_module(
    project: &std::path::Path,
    opts: &crate::options::RunOptions,
    module: &str,
) -> Result<bool, RunnerError> {
    if project.join("vendor").join(module).is_dir() {
        return Ok(true);
    }
    let scratch = std::env::temp_dir();
    let ctx = Ctx::new(project, &scratch, opts);
    let mut inv = go(&ctx)?;
    inv.arg("env").arg("GOMODCACHE");
    let out = ctx.helper(&inv).await?;
    let cache = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if out.exit_code != 0 || cache.is_empty() {
        return Ok(false);
    }
    // The cache escapes capitals as `!` and the lowercase letter.
    let escaped: String = module
        .chars()
        .flat_map(|c| {
            if c.is_ascii_uppercase() {
                vec!['!', c.to_ascii_lowercase()]
            } else {
                vec![c]
            }
        })
        .collect();
    let (parent, name) = escaped.rsplit_once('/').unwrap_or(("", &escaped));
    let versions = std::fs::read_dir(std::path::Path::new(&cache).join(parent));
    Ok(versions.is_ok_and(|entries| {
        entries.flatten().any(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(&format!("{name}@"))
        })
    }))
}

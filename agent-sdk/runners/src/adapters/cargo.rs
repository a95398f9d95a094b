//! cargo: `cargo nextest run` with a JUnit report when cargo-nextest is installed (its skipped
//! tests come from `cargo nextest list`, since its JUnit omits ignored tests), else
//! `cargo test` and libtest's per-test lines. Node ids are `<target source>::<test path>`
//! in both modes (`src/lib.rs::tests::adds`, `tests/strings.rs::shouts`), so `--failed` works
//! across them. Build failures become `[build]` error entries with the compiler's message.

use super::{cargo_libtest, cargo_nextest, Collected, Ctx, Prepared};
use crate::error::RunnerError;
use crate::options::{Listing, PluginPolicy, Selection};
use crate::process::{Captured, Invocation};
use crate::report::{Outcome, TestResult};
use crate::tools;
use serde::Deserialize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Facts from `cargo metadata` that map nextest binary ids and directories to source paths
/// and package names.
#[derive(Debug, Clone, Default)]
pub struct Workspace {
    /// `target_directory`.
    pub target_dir: PathBuf,
    /// Binary id (`pkg`, `pkg::test`, `pkg::bin/name`) → target source, relative to the
    /// project.
    pub sources: HashMap<String, String>,
    /// Package name → package directory, relative to the project (`""` for the root).
    pub packages: Vec<(String, String)>,
}

#[derive(Deserialize)]
struct Metadata {
    packages: Vec<MetaPackage>,
    target_directory: PathBuf,
}

#[derive(Deserialize)]
struct MetaPackage {
    name: String,
    manifest_path: PathBuf,
    targets: Vec<MetaTarget>,
}

#[derive(Deserialize)]
struct MetaTarget {
    name: String,
    kind: Vec<String>,
    src_path: PathBuf,
}

fn rel(root: &Path, p: &Path) -> String {
    p.strip_prefix(root)
        .unwrap_or(p)
        .to_string_lossy()
        .replace('\\', "/")
}

pub(crate) async fn workspace(ctx: &Ctx<'_>, cargo: &Path) -> Result<Workspace, RunnerError> {
    let mut inv = ctx.invocation(cargo);
    inv.arg("metadata")
        .arg("--no-deps")
        .arg("--format-version=1");
    let out = ctx.helper(&inv).await?;
    let meta: Metadata = serde_json::from_slice(&out.stdout).map_err(|_| {
        RunnerError::Unsupported(format!(
            "cargo metadata failed in {}: {}",
            ctx.project.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    })?;
    let mut ws = Workspace {
        target_dir: meta.target_directory,
        ..Workspace::default()
    };
    for p in meta.packages {
        let dir = p
            .manifest_path
            .parent()
            .map(|d| rel(ctx.project, d))
            .unwrap_or_default();
        for t in &p.targets {
            let kind = t.kind.first().map(String::as_str).unwrap_or("lib");
            let id = match kind {
                "test" => format!("{}::{}", p.name, t.name),
                "bin" | "example" | "bench" => format!("{}::{kind}/{}", p.name, t.name),
                _ => p.name.clone(),
            };
            ws.sources.insert(id, rel(ctx.project, &t.src_path));
        }
        ws.packages.push((p.name, dir));
    }
    Ok(ws)
}

/// Cargo target selection (`--test x`, `-p pkg`) and libtest arguments (after `--`).
pub(crate) fn selection_args(ctx: &Ctx<'_>, ws: Option<&Workspace>) -> (Vec<String>, Vec<String>) {
    let (mut cargo_args, mut test_args) = (Vec::new(), Vec::new());
    match &ctx.opts.selection {
        Selection::All => {}
        Selection::Paths(paths) | Selection::Related(paths) => {
            for p in paths {
                let p = p.trim_end_matches('/');
                if let Some(name) = p.strip_prefix("tests/").and_then(|f| f.strip_suffix(".rs")) {
                    cargo_args.extend(["--test".to_string(), name.to_string()]);
                } else if let Some((name, _)) =
                    ws.and_then(|w| w.packages.iter().find(|(_, d)| d == p))
                {
                    cargo_args.extend(["--package".to_string(), name.clone()]);
                }
            }
        }
        Selection::Tests(ids) => {
            test_args.push("--exact".to_string());
            test_args.extend(
                ids.iter()
                    .filter_map(|id| id.split_once("::"))
                    .map(|(_, n)| n.to_string()),
            );
        }
    }
    if let Some(f) = &ctx.opts.filter {
        test_args = vec![f.clone()];
    }
    (cargo_args, test_args)
}

fn use_nextest(ctx: &Ctx<'_>) -> Result<Option<PathBuf>, RunnerError> {
    let found = tools::find_cargo_subcommand("cargo-nextest", &ctx.path);
    match (ctx.opts.plugins, found) {
        (PluginPolicy::Never, _) => Ok(None),
        (PluginPolicy::Auto, found) => Ok(found),
        (PluginPolicy::Require, Some(p)) => Ok(Some(p)),
        (PluginPolicy::Require, None) => Err(tools::missing("cargo-nextest", ctx.project)),
    }
}

fn cargo(ctx: &Ctx<'_>) -> Result<PathBuf, RunnerError> {
    tools::find_program("cargo", &ctx.path).ok_or_else(|| tools::missing("cargo", ctx.project))
}

pub(crate) async fn prepare(ctx: &Ctx<'_>) -> Result<Prepared, RunnerError> {
    if ctx.opts.coverage {
        return Err(RunnerError::Unsupported(
            "coverage is not supported for cargo: run cargo-llvm-cov yourself".into(),
        ));
    }
    let cargo = cargo(ctx)?;
    let needs_ws = matches!(
        ctx.opts.selection,
        Selection::Paths(_) | Selection::Related(_)
    );
    if use_nextest(ctx)?.is_some() {
        let ws = if needs_ws {
            Some(workspace(ctx, &cargo).await?)
        } else {
            None
        };
        let (cargo_args, test_args) = selection_args(ctx, ws.as_ref());
        let inv = cargo_nextest::invocation(ctx, &cargo, cargo_args, test_args)?;
        let mut p = Prepared::new(inv);
        p.plugin = true;
        p.background =
            std::sync::Mutex::new(Some(cargo_nextest::start_background(ctx, &cargo, ws)));
        return Ok(p);
    }
    let ws = if needs_ws {
        Some(workspace(ctx, &cargo).await?)
    } else {
        None
    };
    let (cargo_args, test_args) = selection_args(ctx, ws.as_ref());
    let mut inv: Invocation = ctx.invocation(&cargo);
    inv.arg("test").arg("--no-fail-fast");
    inv.args.extend(cargo_args.into_iter().map(Into::into));
    inv.arg("--");
    inv.args.extend(test_args.into_iter().map(Into::into));
    Ok(Prepared::new(inv))
}

pub(crate) async fn collect(
    ctx: &Ctx<'_>,
    prepared: &Prepared,
    captured: &Captured,
) -> Result<Collected, RunnerError> {
    let stdout = String::from_utf8_lossy(&captured.stdout);
    let stderr = String::from_utf8_lossy(&captured.stderr);
    let mut tests = if prepared.plugin {
        cargo_nextest::collect(ctx, prepared, captured).await?
    } else {
        cargo_libtest::parse_libtest(&stdout, &stderr)
    };
    tests.extend(build_errors(&stderr));
    Ok(Collected {
        tests,
        coverage: None,
    })
}

/// The compiler's errors when the build failed, as one `[build]` error entry.
pub fn build_errors(stderr: &str) -> Option<TestResult> {
    if !stderr.contains("error: could not compile") {
        return None;
    }
    let mut text = String::new();
    let mut in_error = false;
    for line in stderr.lines() {
        if line.starts_with("error") {
            in_error = true;
        } else if line.starts_with("warning") || line.trim_start().starts_with("Compiling ") {
            in_error = false;
        }
        if in_error {
            text.push_str(line);
            text.push('\n');
        }
    }
    let mut t = TestResult::new("[build]", Outcome::Error);
    if let Some(loc) = text
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("--> "))
    {
        let mut parts = loc.split(':');
        t.file = parts.next().map(str::to_string);
        t.lineno = parts.next().and_then(|l| l.parse().ok());
    }
    t.longrepr = Some(text.trim_end().to_string());
    Some(t)
}

pub(crate) async fn list(ctx: &Ctx<'_>) -> Result<Listing, RunnerError> {
    let cargo = cargo(ctx)?;
    if use_nextest(ctx)?.is_some() {
        let ws = workspace(ctx, &cargo).await?;
        return cargo_nextest::list(ctx, &cargo, &ws).await;
    }
    let ws = workspace(ctx, &cargo).await.ok();
    let (cargo_args, test_args) = selection_args(ctx, ws.as_ref());
    let mut inv = ctx.invocation(&cargo);
    inv.arg("test");
    inv.args.extend(cargo_args.into_iter().map(Into::into));
    inv.arg("--").arg("--list");
    inv.args.extend(test_args.into_iter().map(Into::into));
    let out = ctx.helper(&inv).await?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    Ok(Listing {
        tests: cargo_libtest::parse_list(&stdout, &stderr),
        errors: build_errors(&stderr)
            .and_then(|t| t.longrepr)
            .into_iter()
            .collect(),
    })
}

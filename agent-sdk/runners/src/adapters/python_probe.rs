//! Finding the Python interpreter that has pytest, and which optional modules it has. A probe
//! costs one Python start-up (tens of milliseconds, a tenth of a small suite's run), so each
//! interpreter's answer is kept in `<runs dir>/.python-probe.json` and reused while nothing it
//! depends on has changed: the interpreter, the real executable, its site-packages
//! directories and the project's `.python-version`, compared by modification time.

use super::Ctx;
use crate::error::RunnerError;
use crate::tools;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

/// What one interpreter can import.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Python {
    /// `sys.executable`: run this, not the candidate (a pyenv shim costs a shell start).
    pub executable: PathBuf,
    pub pytest: bool,
    pub json_report: bool,
    pub coverage: bool,
}

#[derive(Serialize, Deserialize)]
struct Entry {
    candidate: PathBuf,
    python: Python,
    /// (path, modification time in ns; 0 when absent) of everything the answer depends on.
    stamps: Vec<(PathBuf, u128)>,
}

const PROBE: &str = "import importlib.util as u, json, site, sys\n\
has = lambda m: u.find_spec(m) is not None\n\
dirs = list(getattr(site, 'getsitepackages', lambda: [])()) + [site.getusersitepackages()]\n\
print(json.dumps({'executable': sys.executable, 'pytest': has('pytest'), \
'json_report': has('pytest_jsonreport'), 'coverage': has('coverage'), 'site': dirs}))";

#[derive(Deserialize)]
struct ProbeOutput {
    #[serde(flatten)]
    python: Python,
    site: Vec<PathBuf>,
}

fn mtime(path: &Path) -> u128 {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos())
}

fn stamps(paths: impl IntoIterator<Item = PathBuf>) -> Vec<(PathBuf, u128)> {
    paths.into_iter().map(|p| (p.clone(), mtime(&p))).collect()
}

fn candidates(ctx: &Ctx<'_>) -> Vec<PathBuf> {
    let mut list: Vec<PathBuf> = [".venv", "venv"]
        .iter()
        .map(|v| ctx.project.join(v).join("bin").join("python"))
        .collect();
    if let Some(venv) = std::env::var_os("VIRTUAL_ENV") {
        list.push(PathBuf::from(venv).join("bin").join("python"));
    }
    list.extend(
        ["python3", "python"]
            .iter()
            .filter_map(|p| tools::find_program(p, &ctx.path)),
    );
    list.retain(|c| c.exists());
    list
}

/// `Ok(None)` when the candidate is not a working Python; an error when the probe ran out of
/// time, which says nothing about whether pytest is there.
async fn probe(ctx: &Ctx<'_>, candidate: &Path) -> Result<Option<Entry>, RunnerError> {
    let mut inv = ctx.invocation(candidate);
    inv.arg("-c").arg(PROBE);
    let Ok(out) = ctx.helper(&inv).await else {
        return Ok(None);
    };
    if out.timed_out {
        return Err(RunnerError::io(
            format!("asking {} what it can import", candidate.display()),
            std::io::Error::new(std::io::ErrorKind::TimedOut, "no answer in time"),
        ));
    }
    let Ok(parsed) = serde_json::from_slice::<ProbeOutput>(&out.stdout) else {
        return Ok(None);
    };
    let mut depends = vec![candidate.to_path_buf(), parsed.python.executable.clone()];
    depends.extend(parsed.site);
    depends.push(ctx.project.join(".python-version"));
    Ok(Some(Entry {
        candidate: candidate.to_path_buf(),
        python: parsed.python,
        stamps: stamps(depends),
    }))
}

/// The first interpreter that can import pytest: the project's `.venv` or `venv`,
/// `$VIRTUAL_ENV`, then `python3` and `python` on the path. With `cache_file`, earlier
/// answers are reused while their stamps hold.
pub(crate) async fn find_python(
    ctx: &Ctx<'_>,
    cache_file: Option<PathBuf>,
) -> Result<Python, RunnerError> {
    let mut cache: Vec<Entry> = cache_file
        .as_deref()
        .and_then(|f| std::fs::read(f).ok())
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    let found = candidates(ctx);
    let mut chosen = None;
    for candidate in &found {
        let fresh =
            |e: &&Entry| &e.candidate == candidate && e.stamps.iter().all(|(p, t)| mtime(p) == *t);
        let python = match cache.iter().find(fresh) {
            Some(e) => e.python.clone(),
            None => {
                let Some(entry) = probe(ctx, candidate).await? else {
                    continue;
                };
                let python = entry.python.clone();
                cache.retain(|e| &e.candidate != candidate);
                cache.push(entry);
                python
            }
        };
        if python.pytest {
            chosen = Some(python);
            break;
        }
    }
    if let Some(file) = cache_file {
        if let Ok(bytes) = serde_json::to_vec(&cache) {
            let _ = std::fs::write(file, bytes);
        }
    }
    chosen.ok_or_else(|| {
        tools::missing(
            if found.is_empty() {
                "python3"
            } else {
                "pytest"
            },
            ctx.project,
        )
    })
}

/// Whether the interpreter that runs pytest for `project` can import `module` (the tiers'
/// check for a PBT library).
pub async fn can_import(
    project: &Path,
    opts: &crate::options::RunOptions,
    module: &str,
) -> Result<bool, RunnerError> {
    let scratch = std::env::temp_dir();
    let ctx = Ctx::new(project, &scratch, opts);
    let python = find_python(&ctx, None).await?;
    let mut inv = ctx.invocation(&python.executable);
    inv.arg("-c").arg(format!(
        "import importlib.util as u, sys; sys.exit(0 if u.find_spec({module:?}) else 3)"
    ));
    Ok(ctx.helper(&inv).await?.exit_code == 0)
}

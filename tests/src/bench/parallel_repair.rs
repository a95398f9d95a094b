//! `parallel-repair`: N independent failures in one git repository (a module and its test file
//! each), N tasks naming their test file and scope, and K in-process testers with the stub
//! model; the wall time until every task is closed, with each task in its own worktree against
//! today's checkout lock (`--workspace in-place`), in the same run.

use crate::llm::stub::{fix, Scripted};
use crate::llm::team::{settings, team};
use crate::llm::LlmStub;
use huddle_sdk::wire::TaskStatus;
use huddle_sdk::workspace::WorkspaceMode;
use serde_json::json;
use std::path::Path;
use std::time::{Duration, Instant};

const BUG: &str = "    return x - 1\n";
const OK: &str = "    return x + 1\n";

/// One measured configuration.
pub struct Run {
    pub mode: &'static str,
    pub testers: usize,
    pub failures: usize,
    pub wall_s: f64,
    pub completed: usize,
}

/// Runs the lock with 2 testers, then worktrees with 2 and 4, on `failures` failures each;
/// prints a markdown table.
pub async fn run(failures: usize) -> Result<Vec<Run>, String> {
    let failures = failures.clamp(1, 50);
    let mut runs = Vec::new();
    for (mode, testers) in [
        (WorkspaceMode::InPlace, 2),
        (WorkspaceMode::Worktree, 2),
        (WorkspaceMode::Worktree, 4),
    ] {
        eprintln!("parallel-repair: {mode:?}, {testers} testers, {failures} failures…");
        runs.push(one(mode, testers, failures).await?);
    }
    let lock = runs[0].wall_s;
    println!("| workspace | testers | failures | completed | wall s | vs the lock |");
    println!("|---|---:|---:|---:|---:|---:|");
    for r in &runs {
        println!(
            "| {} | {} | {} | {} | {:.1} | {:.2}× |",
            r.mode,
            r.testers,
            r.failures,
            r.completed,
            r.wall_s,
            lock / r.wall_s
        );
    }
    Ok(runs)
}

async fn one(mode: WorkspaceMode, testers: usize, failures: usize) -> Result<Run, String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let root = dir.path().join("project");
    repository(&root, failures)?;
    let name = |i: usize| format!("{i:02}");
    let choices: Vec<(&'static str, Scripted)> = (1..=failures)
        .map(|i| {
            let needle: &'static str = Box::leak(format!("test_m{}.py", name(i)).into_boxed_str());
            let file: &'static str = Box::leak(format!("pkg/m{}.py", name(i)).into_boxed_str());
            (needle, fix(&[(file, BUG, OK)]))
        })
        .collect();
    let script = (0..failures)
        .map(|_| Scripted::ByPrompt(choices.clone()))
        .collect();
    let stub = LlmStub::start("sk-bench", script).await;
    let t = team().await;
    for i in 1..=failures {
        t.task(
            &format!("TEST-{}", name(i)),
            json!({"paths": [format!("tests/test_m{}.py", name(i))], "scope": [format!("pkg/m{}.py", name(i))]}),
        )
        .await;
    }
    let started = Instant::now();
    for _ in 0..testers {
        let mut s = settings(&root, Some(&stub));
        s.workspace.mode = mode;
        s.workspace.pool_size = testers;
        t.start_tester(s);
    }
    let completed = loop {
        let tasks = t
            .coord
            .list_all_tasks(&Default::default())
            .await
            .map_err(|e| e.to_string())?;
        let closed = tasks
            .iter()
            .filter(|t| matches!(t.status, TaskStatus::Completed | TaskStatus::Failed))
            .count();
        if closed == failures {
            break tasks
                .iter()
                .filter(|t| t.status == TaskStatus::Completed)
                .count();
        }
        if started.elapsed() > Duration::from_secs(1800) {
            return Err(format!(
                "{closed} of {failures} tasks closed after 30 minutes"
            ));
        }
        // A bench's poll, not a test's synchronisation: the figure is seconds, polled per 100 ms.
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    Ok(Run {
        mode: match mode {
            WorkspaceMode::InPlace => "in place (checkout lock)",
            WorkspaceMode::Worktree => "worktree per claim",
        },
        testers,
        failures,
        wall_s: started.elapsed().as_secs_f64(),
        completed,
    })
}

/// `failures` modules with a bug each and their tests, committed.
fn repository(root: &Path, failures: usize) -> Result<(), String> {
    let write = |rel: &str, text: &str| -> Result<(), String> {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).map_err(|e| e.to_string())?;
        std::fs::write(path, text).map_err(|e| e.to_string())
    };
    write("pkg/__init__.py", "")?;
    write(
        "tests/conftest.py",
        "import sys\nfrom pathlib import Path\n\nsys.path.insert(0, str(Path(__file__).resolve().parent.parent))\n",
    )?;
    write("pytest.ini", "[pytest]\ntestpaths = tests\n")?;
    write(".gitignore", ".huddle/\n__pycache__/\n.pytest_cache/\n")?;
    for i in 1..=failures {
        write(&format!("pkg/m{i:02}.py"), &format!("def f(x):\n{BUG}"))?;
        write(
            &format!("tests/test_m{i:02}.py"),
            &format!("from pkg.m{i:02} import f\n\n\ndef test_f():\n    assert f(1) == 2\n"),
        )?;
    }
    for args in [
        &["init", "-q", "-b", "main"][..],
        &["add", "-A"],
        &[
            "-c",
            "user.name=bench",
            "-c",
            "user.email=bench@localhost",
            "commit",
            "-q",
            "-m",
            "bugs",
        ],
    ] {
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(root)
            .args(args)
            .output()
            .map_err(|e| format!("git: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "git {args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    Ok(())
}

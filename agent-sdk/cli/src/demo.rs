//! `huddle demo`: the whole loop in one command. It starts `huddled` on a temporary SQLite
//! file, creates a team, copies a bundled sample project with a real bug, posts `TEST-001` and
//! `QARUN-001` (blocked by `TEST-001`), runs a tester and an executor in this process, and
//! prints the team's message log live. With a model configured (`[llm]` in `--config`, or
//! `HUDDLE_LLM_BASE_URL` and `HUDDLE_LLM_MODEL`) the tester repairs the bug; without one it
//! reports `fix_required` naming the missing setting.

use crate::demo_daemon::DemoDaemon;
use crate::output::{self, ColorChoice, Colors};
use crate::{parse, CliResult};
use clap::Args;
use futures::StreamExt;
use huddle_sdk::roles::{ExecutorRole, RoleSettings, TesterRole};
use huddle_sdk::wire::{Message, NewTask, Role, TaskStatus};
use huddle_sdk::{Client, MessageQuery, StreamOptions, Worker};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// The bundled sample project: a cart whose discount divides by 10 instead of 100.
const SAMPLE: &[(&str, &str)] = &[
    ("pytest.ini", include_str!("../demo/cart/pytest.ini")),
    (
        "shop/__init__.py",
        include_str!("../demo/cart/shop/__init__.py"),
    ),
    ("shop/cart.py", include_str!("../demo/cart/shop/cart.py")),
    (
        "tests/conftest.py",
        include_str!("../demo/cart/tests/conftest.py"),
    ),
    (
        "tests/test_cart.py",
        include_str!("../demo/cart/tests/test_cart.py"),
    ),
];

#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Give up after this long.
    #[arg(long, value_parser = parse::duration, default_value = "10m")]
    timeout: Duration,
    /// Keep the temporary directory (database and project) and print where it is.
    #[arg(long)]
    keep: bool,
    /// A config file with an `[llm]` table for the model (`HUDDLE_LLM_*` variables win).
    #[arg(long, env = "HUDDLE_CONFIG")]
    config: Option<PathBuf>,
    /// Colour the message log.
    #[arg(long, value_enum, default_value = "auto")]
    color: ColorChoice,
    /// `--json`: each message as one JSON line and a JSON summary on stdout; the narration
    /// goes to stderr.
    #[arg(skip)]
    pub json: bool,
}

/// A line of narration: on stdout, or on stderr when stdout carries JSON.
fn say(json: bool, text: &str) -> CliResult {
    if json {
        eprintln!("{text}");
        Ok(())
    } else {
        output::line(text)
    }
}

pub async fn run(args: DemoArgs) -> CliResult {
    let dir = std::env::temp_dir().join(format!(
        "huddle-demo-{}-{}",
        std::process::id(),
        rand::random::<u32>()
    ));
    std::fs::create_dir_all(dir.join("data"))?;
    let tokens = Mutex::new(Vec::new());
    let outcome = run_in(&args, &dir, &tokens).await;
    let kept = if args.keep {
        print_kept(
            &dir,
            &tokens.lock().unwrap_or_else(|p| p.into_inner()),
            args.json,
        )
    } else {
        let _ = std::fs::remove_dir_all(&dir);
        Ok(())
    };
    outcome.and(kept)
}

/// Where a kept demo is and how to pick it up again: the directory, the team and every token
/// (one JSON object with `--json`).
fn print_kept(dir: &Path, tokens: &[(String, String)], json: bool) -> CliResult {
    let data = dir.join("data");
    if json {
        let tokens: serde_json::Map<String, serde_json::Value> = tokens
            .iter()
            .map(|(name, token)| (name.clone(), token.clone().into()))
            .collect();
        let kept = serde_json::json!({
            "kept": dir, "database": data.join("huddle.db"), "project": dir.join("project"),
            "adminTokenFile": data.join("admin-token"), "team": "demo", "tokens": tokens,
        });
        return output::line(&kept.to_string());
    }
    output::line("")?;
    output::line(&format!("kept {}", dir.display()))?;
    output::line(&format!(
        "  database     {}",
        data.join("huddle.db").display()
    ))?;
    output::line(&format!("  project      {}", dir.join("project").display()))?;
    output::line(&format!(
        "  admin token  {} (file)",
        data.join("admin-token").display()
    ))?;
    output::line("  team         demo")?;
    for (name, token) in tokens {
        output::line(&format!("  {name:<12} {token}"))?;
    }
    output::line(&format!(
        "serve it again: huddled --data-dir {} ; then HUDDLE_TEAM=demo HUDDLE_TOKEN=<a token above> huddle status",
        data.display()
    ))
}

async fn run_in(args: &DemoArgs, dir: &Path, tokens: &Mutex<Vec<(String, String)>>) -> CliResult {
    let daemon = DemoDaemon::start(&dir.join("data")).await?;
    say(
        args.json,
        &format!(
            "huddled running at {} (data in {})",
            daemon.url,
            dir.join("data").display()
        ),
    )?;
    let result = tokio::select! {
        r = demo(args, dir, &daemon.url, &daemon.admin_token, tokens) => r,
        _ = tokio::signal::ctrl_c() => Err("interrupted".into()),
    };
    daemon.stop().await;
    result
}

async fn demo(
    args: &DemoArgs,
    dir: &Path,
    url: &str,
    admin_token: &str,
    kept_tokens: &Mutex<Vec<(String, String)>>,
) -> CliResult {
    let project = dir.join("project");
    for (rel, text) in SAMPLE {
        let path = project.join(rel);
        std::fs::create_dir_all(path.parent().ok_or("bad sample path")?)?;
        std::fs::write(path, text)?;
    }
    let admin = Client::new(url, admin_token)?.with_team("demo");
    admin.create_team("demo").await?;
    let mut tokens = Vec::new();
    for (name, role) in [
        ("coordinator", Role::Coordinator),
        ("tester", Role::Tester),
        ("executor", Role::Executor),
    ] {
        tokens.push(admin.create_agent(name, role).await?.token);
    }
    *kept_tokens.lock().unwrap_or_else(|p| p.into_inner()) = ["coordinator", "tester", "executor"]
        .iter()
        .zip(&tokens)
        .map(|(name, token)| (name.to_string(), token.clone()))
        .collect();
    let coord = admin.with_token(&tokens[0]);
    let settings = RoleSettings::load(&project, args.config.as_deref(), |k| std::env::var(k).ok())?;
    match &settings.llm {
        Some(llm) => say(
            args.json,
            &format!("model: {} at {}", llm.config().model, llm.config().base_url),
        )?,
        None => say(
            args.json,
            &format!(
                "{} — the tester will run the tests and report fix_required",
                settings.llm_missing
            ),
        )?,
    }
    say(
        args.json,
        &format!("sample project copied to {}\n", project.display()),
    )?;
    coord
        .create_tasks(&[
            NewTask {
                id: Some("TEST-001".into()),
                subject: "Make the cart's unit tests pass".into(),
                description: Some("The discount tests fail. Find the bug and fix it.".into()),
                active_form: Some("Testing the cart".into()),
                ..NewTask::default()
            },
            NewTask {
                id: Some("QARUN-001".into()),
                subject: "QA run of the cart".into(),
                description: Some("layer: L1".into()),
                blocked_by: vec!["TEST-001".into()],
                ..NewTask::default()
            },
        ])
        .await?;
    let printed = Arc::new(AtomicI64::new(0));
    let printer_view = Arc::new(View {
        colors: Colors::new(args.color),
        json: args.json,
        // Said once above; the messages repeat it, so they get a short form.
        missing_model: (!settings.llm_missing.is_empty()).then(|| settings.llm_missing.clone()),
    });
    let output_closed = CancellationToken::new();
    let printer = tokio::spawn(print_live(
        coord.clone(),
        printed.clone(),
        printer_view.clone(),
        output_closed.clone(),
    ));
    let stop = CancellationToken::new();
    let tester = Worker::new(
        admin.with_token(&tokens[1]),
        TesterRole::new(settings.clone()),
    )
    .role(Role::Tester)
    .wait(Duration::from_secs(1))
    .run_until(stop.clone());
    let executor = Worker::new(admin.with_token(&tokens[2]), ExecutorRole::new(settings))
        .role(Role::Executor)
        .wait(Duration::from_secs(1))
        .run_until(stop.clone());
    let workers = tokio::spawn(async move { tokio::join!(tester, executor) });
    let finished = tokio::select! {
        f = tokio::time::timeout(args.timeout, wait_until_done(&coord)) => f,
        // Nobody reads any more (`huddle demo | head`): stop quietly.
        _ = output_closed.cancelled() => {
            stop.cancel();
            let _ = workers.await;
            return Err(Box::new(std::io::Error::from(std::io::ErrorKind::BrokenPipe)));
        }
    };
    stop.cancel();
    let _ = workers.await;
    printer.abort();
    // Whatever the live stream had not shown yet.
    let rest = coord
        .list_all_messages(&MessageQuery {
            after: Some(printed.load(Ordering::SeqCst)),
            ..Default::default()
        })
        .await?;
    for m in &rest {
        print_message(m, &printer_view)?;
    }
    let (test, qarun) =
        finished.map_err(|_| format!("the demo did not finish within {:?}", args.timeout))??;
    if args.json {
        let results = coord.memory_at("/execution_results").await.ok();
        let summary = serde_json::json!({
            "tasks": {"TEST-001": test, "QARUN-001": qarun},
            "executionResults": results,
        });
        return output::line(&summary.to_string());
    }
    output::line("")?;
    output::line(&format!("TEST-001: {test}   QARUN-001: {qarun}"))?;
    if qarun == TaskStatus::Pending {
        output::line("QARUN-001 stays blocked: TEST-001 did not complete, and the coordinator decides what follows.")?;
    }
    if let Ok(results) = coord.memory_at("/execution_results").await {
        output::line(&format!("shared memory execution_results: {results}"))?;
    }
    Ok(())
}

/// Waits until TEST-001 is closed and QARUN-001 is closed or can no longer start.
async fn wait_until_done(coord: &Client) -> Result<(TaskStatus, TaskStatus), huddle_sdk::Error> {
    let closed = |s: TaskStatus| {
        matches!(
            s,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
        )
    };
    loop {
        let test = coord.get_task("TEST-001").await?.status;
        let qarun = coord.get_task("QARUN-001").await?.status;
        if closed(test) && (closed(qarun) || test != TaskStatus::Completed) {
            return Ok((test, qarun));
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// How messages are printed.
struct View {
    colors: Colors,
    /// Messages as JSON lines (`--json`).
    json: bool,
    /// The missing-model text, printed once at the start and shortened in messages.
    missing_model: Option<String>,
}

impl View {
    fn text(&self, text: &str) -> String {
        match &self.missing_model {
            Some(missing) => text.replace(missing.as_str(), "no model configured (see above)"),
            None => text.to_string(),
        }
    }
}

async fn print_live(
    coord: Client,
    printed: Arc<AtomicI64>,
    view: Arc<View>,
    closed: CancellationToken,
) {
    let Ok(mut stream) = coord.stream_messages(&StreamOptions::default()) else {
        return;
    };
    while let Some(Ok(m)) = stream.next().await {
        if m.seq > printed.load(Ordering::SeqCst) {
            if print_message(&m, &view).is_err() {
                closed.cancel();
                return;
            }
            printed.store(m.seq, Ordering::SeqCst);
        }
    }
}

fn print_message(m: &Message, view: &View) -> CliResult {
    if view.json {
        return output::line(&serde_json::to_string(m)?);
    }
    let colors = &view.colors;
    let head = format!(
        "#{:<3} {} {} → {} [{}]",
        m.seq,
        output::clock(&m.created_at),
        m.from,
        m.to,
        m.kind
    );
    output::line(&format!(
        "{} {}",
        colors.kind(&m.kind, &head),
        view.text(&m.summary)
    ))?;
    match m.kind.as_str() {
        "test_result" => {
            if let Some(summary) = m.data["summary"].as_str() {
                for l in view.text(summary).lines() {
                    output::line(&format!("      {l}"))?;
                }
            }
        }
        "fix_required" => output::line(&format!(
            "      tests: {}; {}",
            m.data["tests"],
            view.text(m.data["details"].as_str().unwrap_or(""))
        ))?,
        _ => {}
    }
    Ok(())
}

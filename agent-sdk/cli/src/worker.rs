//! `huddle worker`: claim tasks and work on them until SIGINT/SIGTERM.
//!
//! Two kinds of work:
//! - `--project DIR`: the built-in tester or executor role (`huddle_sdk::roles`) runs the
//!   project's real tests, repairs through the configured code-developer model (`[llm]` in
//!   `--config`, or `HUDDLE_LLM_*`) and reports on the message bus.
//! - `--exec PROGRAM ARGS...`: the program runs once per task as argv (no shell) with the task
//!   JSON on stdin and in `HUDDLE_TASK_JSON`; exit code 0 completes the task, anything else
//!   fails it (see `huddle_sdk::exec` for the whole contract).

use crate::parse;
use crate::{CliResult, Ctx};
use clap::Args;
use huddle_sdk::roles::{ExecutorRole, RoleSettings, TesterRole};
use huddle_sdk::wire::Role;
use huddle_sdk::workspace::{WorkspaceMode, WorkspaceSettings, DEFAULT_POOL_SIZE};
use huddle_sdk::{ExecHandler, Handler, Worker};
use std::path::PathBuf;
use std::time::Duration;
use tracing::Instrument;

#[derive(Debug, Args)]
pub struct WorkerArgs {
    /// tester (claims TEST-*) or executor (claims QARUN-*), unless --prefix says otherwise.
    #[arg(long, value_parser = worker_role)]
    role: Role,
    /// A name for the logs (the token decides who the worker is to the daemon).
    #[arg(long)]
    name: Option<String>,
    /// Claim tasks with these id prefixes instead of the role's (repeat, or use commas).
    #[arg(long = "prefix", value_delimiter = ',')]
    prefixes: Vec<String>,
    /// Lease asked for each claim; heartbeats go every third of it.
    #[arg(long, value_parser = parse::duration, default_value = "30s")]
    lease: Duration,
    /// How long each claim waits for a task (long poll).
    #[arg(long, value_parser = parse::duration, default_value = "20s")]
    wait: Duration,
    /// On SIGINT/SIGTERM, how long the current task may take to finish before it is released.
    #[arg(long, value_parser = parse::duration, default_value = "30s")]
    grace: Duration,
    /// Kill the program and fail the task (`[TIMEOUT] …`) when it runs longer than this.
    #[arg(long, value_parser = parse::duration)]
    timeout: Option<Duration>,
    /// Run the program in this directory (default: the current one).
    #[arg(long)]
    workdir: Option<PathBuf>,
    /// Run the built-in role on this project: its real tests, fixes through the configured
    /// model, reports on the bus (instead of --exec). The model (any OpenAI-compatible
    /// endpoint) is set by HUDDLE_LLM_BASE_URL, HUDDLE_LLM_MODEL and HUDDLE_LLM_API_KEY, or
    /// the `[llm]` table of --config; without one the tests still run and report.
    #[arg(long, conflicts_with_all = ["exec", "workdir", "timeout"])]
    project: Option<PathBuf>,
    /// With --project: a config file whose `[llm]` and `[cycles]` tables set the model and the
    /// cycle limits (`HUDDLE_LLM_*` variables win over the file).
    #[arg(long, env = "HUDDLE_CONFIG")]
    config: Option<PathBuf>,
    /// With --project: take only tasks whose metadata `project` is this name, or that name none
    /// (default: the checkout's git `origin`, like `github.com/org/repo`, else its directory's
    /// name — the name its test history is kept under).
    #[arg(long, requires = "project", conflicts_with = "any_project")]
    project_name: Option<String>,
    /// With --project: not the tasks that name no project either.
    #[arg(long, requires = "project", conflicts_with = "any_project")]
    strict_project: bool,
    /// With --project: take tasks of every project (each task still works in its own
    /// worktree, or under the checkout's lock in place).
    #[arg(long, requires = "project")]
    any_project: bool,
    /// With --project: where each task works. `worktree` (the default): in a git repository,
    /// a git worktree of its own at the task's `baseRef` (else HEAD), from a pool kept in a
    /// cache directory (--worktrees), so that workers on one repository work in parallel; a fix
    /// that meets the gate is committed on `huddle/<task id>` and the checkout is never
    /// edited. `in-place`: the checkout itself, one task at a time (also without git).
    #[arg(long, requires = "project", default_value = "worktree", value_parser = workspace_mode)]
    workspace: WorkspaceMode,
    /// With --project: worktrees kept per repository (the least recently used is evicted
    /// beyond it; a worker waits while all are in use).
    #[arg(long, requires = "project", default_value_t = DEFAULT_POOL_SIZE, value_parser = pool_size)]
    pool_size: usize,
    /// With --project: where the worktree pools live (one directory per repository; default
    /// `$XDG_CACHE_HOME/huddle/worktrees`, else `~/.cache/huddle/worktrees`).
    #[arg(long, requires = "project", env = "HUDDLE_WORKTREES")]
    worktrees: Option<PathBuf>,
    /// With --project: commit a failed verdict's changes on `huddle/<task id>` too, for a
    /// person to look at (by default a failed or released task leaves no branch).
    #[arg(long, requires = "project")]
    keep_failed_branches: bool,
    /// With --project: who gets the messages (an agent, a role or `*`).
    #[arg(long, default_value = "coordinator")]
    report_to: String,
    /// With --project: run the tests (and anything the cycle runs) in a bubblewrap sandbox.
    /// auto: when bwrap works; required: or refuse to start; off: never.
    #[arg(long, value_enum, default_value = "auto", requires = "project")]
    sandbox: huddle_runners::Sandbox,
    /// The program to run per task, then its arguments; must come last.
    #[arg(
        long,
        required_unless_present = "project",
        num_args = 1..,
        allow_hyphen_values = true,
        value_name = "PROGRAM [ARGS]..."
    )]
    exec: Vec<String>,
}

fn workspace_mode(text: &str) -> Result<WorkspaceMode, String> {
    text.parse()
}

fn pool_size(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(n @ 1..=64) => Ok(n),
        _ => Err(format!("`{text}` is not a pool size (1 to 64 worktrees)")),
    }
}

fn worker_role(text: &str) -> Result<Role, String> {
    match text.parse::<Role>()? {
        role @ (Role::Tester | Role::Executor) => Ok(role),
        other => Err(format!(
            "a worker is a tester or an executor, not a {other}"
        )),
    }
}

pub async fn run(ctx: &Ctx, args: WorkerArgs) -> CliResult {
    if let Some(project) = args.project.clone() {
        if !project.is_dir() {
            return Err(format!("--project {}: no such directory", project.display()).into());
        }
        // Every run of this worker's roles takes it (RunOptions::default).
        huddle_runners::Sandbox::set_process_default(args.sandbox);
        args.sandbox.resolve()?;
        let mut settings =
            RoleSettings::load(project, args.config.as_deref(), |k| std::env::var(k).ok())?;
        settings.report_to = args.report_to.clone();
        settings.workspace = WorkspaceSettings {
            mode: args.workspace,
            pool_size: args.pool_size,
            keep_failed: args.keep_failed_branches,
            root: args.worktrees.clone(),
        };
        start_telemetry(settings.otlp_endpoint.as_deref())?;
        match &settings.llm {
            Some(llm) => tracing::info!(
                "code-developer model: {} at {}",
                llm.config().model,
                llm.config().base_url
            ),
            None => tracing::warn!(
                "{}: failures will be reported as fix_required",
                settings.llm_missing
            ),
        }
        // Declared on every claim: while the team's model budget is spent, the daemon gives
        // this worker no task that would call the model.
        let model = settings.llm.as_ref().map(|l| l.config().model.clone());
        return match args.role {
            Role::Executor => serve(ctx, args, ExecutorRole::new(settings), model).await,
            _ => serve(ctx, args, TesterRole::new(settings), model).await,
        };
    }
    start_telemetry(None)?;
    let (program, program_args) = args
        .exec
        .split_first()
        .ok_or("--exec needs a program to run")?;
    let mut handler =
        ExecHandler::new(program.clone(), program_args.to_vec()).env("HUDDLE_URL", ctx.url.clone());
    if let Some(team) = &ctx.team {
        handler = handler.env("HUDDLE_TEAM", team.clone());
    }
    if let Some(token) = &ctx.token {
        handler = handler.env("HUDDLE_TOKEN", token.clone());
    }
    if let Some(dir) = args.workdir.clone() {
        handler = handler.workdir(dir);
    }
    if let Some(timeout) = args.timeout {
        handler = handler.timeout(timeout);
    }
    serve(ctx, args, handler, None).await
}

/// Runs `handler` in a worker loop with the flags' role, prefixes, lease, wait and grace;
/// `model` is the model it calls, if any.
async fn serve<H: Handler>(
    ctx: &Ctx,
    args: WorkerArgs,
    handler: H,
    model: Option<String>,
) -> CliResult {
    let mut worker = Worker::new(ctx.client.clone(), handler)
        .role(args.role)
        .lease(args.lease)
        .wait(args.wait)
        .grace(args.grace);
    if let Some(model) = model {
        worker = worker.model(model);
    }
    if !args.prefixes.is_empty() {
        worker = worker.prefixes(args.prefixes);
    }
    if let Some(dir) = args.project.as_deref().filter(|_| !args.any_project) {
        let name = match args.project_name {
            Some(name) => name,
            None => huddle_sdk::roles::checkout_project(dir).await,
        };
        let naming_none = if args.strict_project {
            ""
        } else {
            " and tasks naming none"
        };
        tracing::info!("claiming the tasks of project {name}{naming_none}");
        worker = worker.project(name).strict_project(args.strict_project);
    }
    let name = args.name.unwrap_or_else(|| args.role.to_string());
    let ran = worker
        .run()
        .instrument(tracing::info_span!("worker", name = %name))
        .await;
    huddle_telemetry::shutdown().await;
    ran?;
    Ok(())
}

/// Exports the worker's spans when an OTLP endpoint is configured (`[telemetry]` or the
/// `OTEL_EXPORTER_OTLP_*` variables).
fn start_telemetry(configured: Option<&str>) -> CliResult {
    match huddle_telemetry::start("huddle-worker", configured) {
        Ok(Some(url)) => tracing::info!("exporting traces to {url}"),
        Ok(None) => {}
        Err(e) => return Err(format!("telemetry: {e}").into()),
    }
    Ok(())
}

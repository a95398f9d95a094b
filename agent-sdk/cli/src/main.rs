//! `huddle`: the command line for humans and scripts, over the typed client.
//!
//! Configured by `--url`/`HUDDLE_URL`, `--token`/`HUDDLE_TOKEN` and `--team`/`HUDDLE_TEAM`.
//! Read commands print tables for humans and JSON with `--json`; errors are one line on stderr
//! naming what was wrong, with a non-zero exit code (1; 2 for bad usage).

#![forbid(unsafe_code)]

mod demo;
mod demo_daemon;
mod errors;
mod events;
mod gates;
mod history;
mod hook;
mod hook_state;
mod mcp_front;
mod memory;
mod messages;
mod output;
mod parse;
mod spend;
mod status;
mod task_merge;
mod task_scope;
mod tasks;
mod teams;
mod transfer;
mod webhooks;
mod why_not_ready;
mod worker;

use clap::{Parser, Subcommand};
use huddle_sdk::Client;
use std::io::IsTerminal;
use std::process::ExitCode;

/// What every command returns: an error is printed as one line.
pub type CliResult = Result<(), Box<dyn std::error::Error + Send + Sync>>;

#[derive(Debug, Parser)]
#[command(
    name = "huddle",
    version,
    about = "Talk to a huddle daemon: teams, agents, tasks, messages, shared memory, workers",
    propagate_version = true
)]
struct Cli {
    /// The daemon's base URL.
    #[arg(
        long,
        global = true,
        env = "HUDDLE_URL",
        hide_env_values = true,
        default_value = "http://127.0.0.1:7700"
    )]
    url: String,
    /// Bearer token: an agent's (a coordinator's for `agent add|rotate|revoke`, `gate`,
    /// `answer` and `webhook`), or the admin token for `team create|ls|delete`, `export` and
    /// `import` (it may also add agents).
    #[arg(long, global = true, env = "HUDDLE_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// The team to work in.
    #[arg(long, global = true, env = "HUDDLE_TEAM", hide_env_values = true)]
    team: Option<String>,
    /// Print machine-readable JSON instead of tables.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Create, list and delete teams (admin token).
    #[command(subcommand)]
    Team(teams::TeamCmd),
    /// Write the `--team` team as JSON Lines to stdout or a file (admin token): backup,
    /// audit, or moving it to another daemon.
    Export(transfer::ExportArgs),
    /// Create a team from an export read from a file or stdin (admin token), all or nothing.
    Import(transfer::ImportArgs),
    /// Add and list agents.
    #[command(subcommand)]
    Agent(teams::AgentCmd),
    /// The shared task list.
    #[command(subcommand)]
    Task(tasks::TaskCmd),
    /// The team message bus.
    #[command(subcommand)]
    Msg(messages::MsgCmd),
    /// Messages for me, my role or everyone that I have not acknowledged yet.
    Inbox(messages::InboxArgs),
    /// The team's shared memory document.
    #[command(subcommand)]
    Memory(memory::MemoryCmd),
    /// The team's change stream: tasks, messages, memory and agents as they change.
    #[command(subcommand)]
    Events(events::EventsCmd),
    /// The team's test history: runs and pass rates, `--flaky` tests, `--regressions`.
    History(history::HistoryArgs),
    /// Hold a pending task until a person answers a question (coordinator).
    Gate(gates::GateArgs),
    /// Answer a question for a person (HUMAN-NNN): the task it held may be claimed.
    Answer(gates::AnswerArgs),
    /// Outbound notices to people (coordinator): register, list, delete, deliveries.
    #[command(subcommand)]
    Webhook(webhooks::WebhookCmd),
    /// What the team spent on models: totals, by task, agent, model and day.
    Spend(spend::SpendArgs),
    /// The team's model budget: show it, or set it (coordinator, lead, admin).
    #[command(subcommand)]
    Budget(spend::BudgetCmd),
    /// The team at a glance: tasks by status, who holds what, agents, latest messages.
    Status(status::StatusArgs),
    /// Claim and run tasks in a loop until SIGINT/SIGTERM.
    Worker(worker::WorkerArgs),
    /// Run a project's tests (pytest, jest, vitest, mocha, go test, cargo test) and report;
    /// needs no daemon. `--json` prints the report itself.
    Test(huddle_cli::test_command::TestArgs),
    /// Run the whole loop on a bundled sample project: daemon, team, tester, executor.
    Demo(demo::DemoArgs),
    /// A stdio MCP server: huddle's tools (with `--token`) and, with `--forward`, every other
    /// tool of your own MCP server, so skills naming that server keep working.
    Mcp(mcp_front::McpArgs),
    /// The Claude Code hook bridge: reads a hook event on stdin and mirrors Claude Code's
    /// `TaskCreate`/`TaskUpdate`/`SendMessage` into the team (docs/claude-code.md).
    Hook(hook::HookArgs),
}

/// The resolved global options every command gets.
pub struct Ctx {
    pub client: Client,
    pub json: bool,
    pub url: String,
    pub token: Option<String>,
    pub team: Option<String>,
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = match parse_args() {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    init_logging(matches!(cli.command, Command::Worker(_)));
    if let Command::Test(args) = &cli.command {
        let args = huddle_cli::test_command::TestArgs {
            json: cli.json,
            ..args.clone()
        };
        return huddle_cli::test_command::run_test_command(args).await;
    }
    if let Command::Hook(_) = &cli.command {
        return run_hook(cli).await;
    }
    let json = cli.json;
    match run(cli).await {
        Ok(()) => ExitCode::SUCCESS,
        // The reader went away (`huddle msg tail | head`): nothing to say, nothing went wrong.
        Err(e) if errors::is_closed_output(e.as_ref()) => ExitCode::SUCCESS,
        Err(e) => {
            errors::print(e.as_ref(), json);
            ExitCode::FAILURE
        }
    }
}

async fn run(cli: Cli) -> CliResult {
    if let Command::Demo(mut args) = cli.command {
        // The demo brings its own daemon and tokens.
        args.json = cli.json;
        return demo::run(args).await;
    }
    let token = cli.token.filter(|t| !t.trim().is_empty());
    let Some(token_value) = token.clone() else {
        return Err("no token: pass --token or set HUDDLE_TOKEN".into());
    };
    let team = cli.team.filter(|t| !t.trim().is_empty());
    let mut builder = Client::builder(&cli.url).token(&token_value);
    if let Some(team) = &team {
        builder = builder.team(team);
    }
    let ctx = Ctx {
        client: builder.build()?,
        json: cli.json,
        url: cli.url,
        token,
        team,
    };
    match cli.command {
        Command::Team(cmd) => teams::team(&ctx, cmd).await,
        Command::Agent(cmd) => teams::agent(&ctx, cmd).await,
        Command::Export(args) => transfer::export(&ctx, args).await,
        Command::Import(args) => transfer::import(&ctx, args).await,
        Command::Task(cmd) => tasks::run(&ctx, cmd).await,
        Command::Msg(cmd) => messages::run(&ctx, cmd).await,
        Command::Inbox(args) => messages::inbox(&ctx, args).await,
        Command::Memory(cmd) => memory::run(&ctx, cmd).await,
        Command::Events(cmd) => events::run(&ctx, cmd).await,
        Command::History(args) => history::run(&ctx, args).await,
        Command::Webhook(cmd) => webhooks::webhook(&ctx, cmd).await,
        Command::Spend(args) => spend::spend(&ctx, args).await,
        Command::Budget(cmd) => spend::budget(&ctx, cmd).await,
        Command::Gate(args) => gates::gate(&ctx, args).await,
        Command::Answer(args) => gates::answer(&ctx, args).await,
        Command::Status(args) => status::run(&ctx, args).await,
        Command::Worker(args) => worker::run(&ctx, args).await,
        Command::Test(_) => unreachable!("handled before a client is built"),
        Command::Demo(args) => demo::run(args).await,
        Command::Mcp(args) => mcp_front::run(&ctx.url, &token_value, args).await,
        Command::Hook(_) => unreachable!("handled by run_hook"),
    }
}

/// A hook never fails the Claude Code session it runs in: a missing token is a line on stderr.
async fn run_hook(cli: Cli) -> ExitCode {
    let Command::Hook(args) = cli.command else {
        unreachable!("called for `huddle hook` only")
    };
    let Some(token) = cli.token.filter(|t| !t.trim().is_empty()) else {
        eprintln!("huddle hook: no token: set HUDDLE_TOKEN");
        return ExitCode::SUCCESS;
    };
    // A hung daemon must not hold the session: Claude Code waits 60 s for a hook, and four
    // tries of 5 s stay under it.
    let mut builder = Client::builder(&cli.url)
        .token(&token)
        .timeout(std::time::Duration::from_secs(5));
    if let Some(team) = cli.team.filter(|t| !t.trim().is_empty()) {
        builder = builder.team(&team);
    }
    match builder.build() {
        Ok(client) => hook::run(&client, args).await,
        Err(e) => {
            eprintln!("huddle hook: {e}");
            ExitCode::SUCCESS
        }
    }
}

/// Commands that never talk to a running daemon with the global connection options: `test`
/// needs none, `demo` starts its own daemon and makes its own tokens.
const OFFLINE_COMMANDS: [&str; 2] = ["test", "demo"];
/// The global options those commands ignore.
const CONNECTION_ARGS: [&str; 3] = ["url", "token", "team"];

/// The command line, with the connection options hidden from the help of commands that ignore
/// them and refused when given to those commands on the command line.
fn parse_args() -> Result<Cli, clap::Error> {
    use clap::parser::ValueSource;
    use clap::{CommandFactory, FromArgMatches};
    let mut command = Cli::command();
    for name in OFFLINE_COMMANDS {
        command = command.mut_subcommand(name, |sub| {
            CONNECTION_ARGS.iter().fold(sub, |sub, arg| {
                sub.arg(clap::Arg::new(*arg).long(*arg).global(false).hide(true))
            })
        });
    }
    let matches = command.clone().get_matches();
    if let Some((name, sub)) = matches.subcommand() {
        if OFFLINE_COMMANDS.contains(&name) {
            for arg in CONNECTION_ARGS {
                if sub.value_source(arg) == Some(ValueSource::CommandLine) {
                    return Err(command.error(
                        clap::error::ErrorKind::ArgumentConflict,
                        format!("--{arg} is not used by `huddle {name}`, which needs no daemon connection"),
                    ));
                }
            }
        }
    }
    Cli::from_arg_matches(&matches)
}

/// Logs go to stderr: `info` for workers (what they claim and finish), `warn` otherwise except
/// for stream reconnects; `HUDDLE_LOG` overrides, e.g. `HUDDLE_LOG=debug`.
fn init_logging(worker: bool) {
    // Stream reconnects are news for someone watching `msg tail`; the rest only when it matters.
    let default = if worker {
        "info"
    } else {
        "warn,huddle_sdk::client::stream=info"
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("HUDDLE_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_target(false)
        .init();
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// Every argument of every command says what it is for in `--help`.
    #[test]
    fn every_argument_has_help_text() {
        fn walk(cmd: &clap::Command, path: &str, missing: &mut Vec<String>) {
            for arg in cmd.get_arguments() {
                let id = arg.get_id().as_str();
                if arg.is_hide_set() || id == "help" || id == "version" {
                    continue;
                }
                if arg.get_help().is_none() && arg.get_long_help().is_none() {
                    missing.push(format!("{path} {id}"));
                }
            }
            for sub in cmd.get_subcommands() {
                walk(sub, &format!("{path} {}", sub.get_name()), missing);
            }
        }
        let mut missing = Vec::new();
        let mut command = Cli::command();
        command.build();
        walk(&command, "huddle", &mut missing);
        assert!(missing.is_empty(), "arguments without help: {missing:#?}");
    }
}

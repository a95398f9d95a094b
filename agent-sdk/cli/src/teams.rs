//! `huddle team …` and `huddle agent …`.

use crate::output::{self, Table};
use crate::{CliResult, Ctx};
use clap::Subcommand;
use huddle_sdk::wire::{CreatedAgent, Role};

#[derive(Debug, Subcommand)]
pub enum TeamCmd {
    /// Create a team (needs the admin token).
    Create {
        /// `[a-z0-9][a-z0-9_-]{0,62}`, e.g. `qa`.
        name: String,
    },
    /// List every team of the daemon (needs the admin token).
    Ls,
    /// Delete a team and everything of it: agents, tasks, messages, events, memory, test
    /// history, webhooks (needs the admin token). Its tokens stop working at once. Keep a copy
    /// first with `huddle export --team NAME`.
    Delete {
        /// The team to delete.
        name: String,
        /// Confirms the deletion (nothing is deleted without it).
        #[arg(long)]
        yes: bool,
    },
}

#[derive(Debug, Subcommand)]
pub enum AgentCmd {
    /// Add an agent to the team (admin or coordinator token). Prints its token, which is shown
    /// only this once: stdout has the bare token (or JSON with --json), stderr the explanation.
    Add {
        /// `[a-z0-9][a-z0-9_-]{0,62}`, e.g. `tester-1`.
        name: String,
        /// coordinator, tester, executor, observer or lead (a person; admin or lead token only).
        #[arg(long)]
        role: Role,
    },
    /// List the team's agents.
    Ls,
    /// Give an agent a new token (printed like `agent add`); the old one stops working.
    Rotate {
        /// The agent whose token is replaced.
        name: String,
    },
    /// Revoke an agent's token: its requests get 401 and its streams end.
    Revoke {
        /// The agent whose token stops working.
        name: String,
    },
}

pub async fn team(ctx: &Ctx, cmd: TeamCmd) -> CliResult {
    match cmd {
        TeamCmd::Create { name } => {
            let team = ctx.client.create_team(&name).await?;
            if ctx.json {
                output::json(&team)
            } else {
                output::line(&format!("created team {}", team.name))
            }
        }
        TeamCmd::Ls => {
            let teams = ctx.client.list_teams().await?;
            if ctx.json {
                return output::json(&serde_json::json!({ "teams": teams }));
            }
            let mut table = Table::new(&["TEAM", "CREATED"]);
            for t in &teams {
                table.row(vec![t.name.clone(), t.created_at.clone()]);
            }
            table.print()
        }
        TeamCmd::Delete { name, yes } => {
            if !yes {
                return Err(format!(
                    "deleting team {name} removes all of its agents, tasks, messages, events, \
                     memory, test history and webhooks for good; pass --yes to delete it \
                     (`huddle export --team {name}` keeps a copy)"
                )
                .into());
            }
            ctx.client.delete_team(&name).await?;
            if ctx.json {
                output::json(&serde_json::json!({ "deleted": name }))
            } else {
                output::line(&format!("deleted team {name}"))
            }
        }
    }
}

pub async fn agent(ctx: &Ctx, cmd: AgentCmd) -> CliResult {
    match cmd {
        AgentCmd::Add { name, role } => {
            let agent = ctx.client.create_agent(&name, role).await?;
            token_once(ctx, &agent, "created")
        }
        AgentCmd::Rotate { name } => {
            let agent = ctx.client.rotate_agent(&name).await?;
            token_once(ctx, &agent, "rotated the token of")
        }
        AgentCmd::Revoke { name } => {
            let agent = ctx.client.revoke_agent(&name).await?;
            if ctx.json {
                output::json(&agent)
            } else {
                output::line(&format!("revoked the token of {}", agent.name))
            }
        }
        AgentCmd::Ls => {
            let agents = ctx.client.list_agents().await?;
            if ctx.json {
                return output::json(&serde_json::json!({ "agents": agents }));
            }
            let mut table = Table::new(&["NAME", "ROLE", "LAST SEEN"]);
            for a in &agents {
                table.row(vec![
                    a.name.clone(),
                    a.role.to_string(),
                    output::opt(a.last_seen_at.as_deref()),
                ]);
            }
            table.print()
        }
    }
}

/// A new token: bare on stdout (for scripts), the explanation on stderr; JSON with --json.
fn token_once(ctx: &Ctx, agent: &CreatedAgent, verb: &str) -> CliResult {
    if ctx.json {
        return output::json(agent);
    }
    eprintln!(
        "{verb} agent {} ({}); its token follows and will not be shown again",
        agent.name, agent.role
    );
    output::line(&agent.token)
}

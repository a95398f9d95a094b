//! Health, teams and agents.

use super::transport::Call;
use super::{Client, Error};
use crate::wire::{Agent, AgentList, CreateAgent, CreateTeam, CreatedAgent, Role, Team, TeamList};

impl Client {
    /// `GET /healthz`: succeeds when the daemon process answers.
    pub async fn health(&self) -> Result<(), Error> {
        self.send(Call::get(self.url(&["healthz"]))).await.map(drop)
    }

    /// `GET /readyz`: `true` when the daemon's database answers, `false` when it reports 503.
    pub async fn ready(&self) -> Result<bool, Error> {
        match self.send(Call::get(self.url(&["readyz"]))).await {
            Ok(_) => Ok(true),
            Err(Error::Api(e)) if e.status == 503 => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// `POST /v1/teams` (admin token): creates a team; 409 `conflict` when it exists.
    pub async fn create_team(&self, name: &str) -> Result<Team, Error> {
        let body = CreateTeam {
            name: name.to_string(),
        };
        self.json(Call::post(self.url(&["v1", "teams"])).json(&body)?)
            .await
    }

    /// `GET /v1/teams` (admin token): every team of the daemon, by name.
    pub async fn list_teams(&self) -> Result<Vec<Team>, Error> {
        let list: TeamList = self.json(Call::get(self.url(&["v1", "teams"]))).await?;
        Ok(list.teams)
    }

    /// `POST …/agents` (admin or coordinator): adds an agent to the client's team. The answer
    /// carries the agent's token, which the daemon never shows again.
    pub async fn create_agent(&self, name: &str, role: Role) -> Result<CreatedAgent, Error> {
        let body = CreateAgent {
            name: name.to_string(),
            role,
        };
        self.json(Call::post(self.team_url(&["agents"])?).json(&body)?)
            .await
    }

    /// `POST …/agents/{name}/revoke` (admin or coordinator): the agent's token stops working at
    /// once and its open streams end.
    pub async fn revoke_agent(&self, name: &str) -> Result<Agent, Error> {
        self.json(
            Call::post(self.team_url(&["agents", name, "revoke"])?).json(&serde_json::json!({}))?,
        )
        .await
    }

    /// `POST …/agents/{name}/rotate` (admin or coordinator): a new token, shown only in this
    /// answer; the old one stops working at once.
    pub async fn rotate_agent(&self, name: &str) -> Result<CreatedAgent, Error> {
        self.json(
            Call::post(self.team_url(&["agents", name, "rotate"])?).json(&serde_json::json!({}))?,
        )
        .await
    }

    /// `GET …/agents`: the team's agents (never with tokens).
    pub async fn list_agents(&self) -> Result<Vec<Agent>, Error> {
        let list: AgentList = self.json(Call::get(self.team_url(&["agents"])?)).await?;
        Ok(list.agents)
    }
}

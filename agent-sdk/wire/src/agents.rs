use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// What an agent is for; decides which tasks it claims by default and what it may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Coordinator,
    Tester,
    Executor,
    /// Read-only: may list and stream but never change anything.
    Observer,
    /// A person leading the team: what a coordinator may do, and the only role that may decide
    /// a gate asked with `personOnly`. Only the admin token or another lead adds, rotates or
    /// revokes a lead, so no agent can mint itself a person's token.
    Lead,
}

impl Role {
    pub const ALL: [Role; 5] = [
        Role::Coordinator,
        Role::Tester,
        Role::Executor,
        Role::Observer,
        Role::Lead,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Role::Coordinator => "coordinator",
            Role::Tester => "tester",
            Role::Executor => "executor",
            Role::Observer => "observer",
            Role::Lead => "lead",
        }
    }

    /// Task id prefixes a worker of this role claims when it names none.
    pub fn default_prefixes(self) -> &'static [&'static str] {
        match self {
            Role::Tester => &["TEST"],
            Role::Executor => &["QARUN"],
            Role::Coordinator | Role::Observer | Role::Lead => &[],
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Role {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Role::ALL
            .into_iter()
            .find(|r| r.as_str() == s)
            .ok_or_else(|| {
                format!(
                    "unknown role `{s}` (expected coordinator, tester, executor, observer or lead)"
                )
            })
    }
}

/// `POST /v1/teams`
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateTeam {
    #[cfg_attr(
        feature = "openapi",
        schema(pattern = "^[a-z0-9][a-z0-9_-]{0,62}$", example = "qa")
    )]
    pub name: String,
}

/// A team as returned by the daemon.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Team {
    pub name: String,
    pub created_at: String,
}

/// `GET /v1/teams` (admin token): every team, by name.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct TeamList {
    pub teams: Vec<Team>,
}

/// `POST /v1/teams/{team}/agents`
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CreateAgent {
    #[cfg_attr(
        feature = "openapi",
        schema(pattern = "^[a-z0-9][a-z0-9_-]{0,62}$", example = "tester-1")
    )]
    pub name: String,
    pub role: Role,
}

/// The answer to creating an agent: the only time its token is ever shown.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct CreatedAgent {
    pub name: String,
    pub role: Role,
    pub token: String,
}

/// An agent as listed (never with its token).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Agent {
    pub name: String,
    pub role: Role,
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub last_seen_at: Option<String>,
}

/// `GET /v1/teams/{team}/me`: who the caller's token is, so a client (the dashboard) offers
/// only what the role may do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct Me {
    pub name: String,
    pub role: Role,
    /// How the team's workers ask a person mid-task: the wait in force (the team's or the
    /// daemon's default) and whether the built-in tester asks before giving up under the gate.
    #[serde(default)]
    pub questions: crate::TeamQuestions,
}

/// `GET /v1/teams/{team}/agents`
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "camelCase")]
pub struct AgentList {
    pub agents: Vec<Agent>,
}

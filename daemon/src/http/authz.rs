//! Who may do what: the permission matrix, in one place.
//!
//! Every handler names the [`Action`] it performs through the [`Can`] extractor (or, for the
//! routes the admin shares with coordinators, by calling [`allowed`] itself). Whether a worker
//! *holds* a task is a state question the store answers (409 `not_holder`); this module answers
//! only whether the role may attempt the action at all (403).

use super::error::ApiError;
use super::identity::Principal;
use super::AppState;
use crate::store::Caller;
use axum::extract::{FromRequestParts, RawPathParams};
use axum::http::request::Parts;
use huddle_wire::Role;
use std::marker::PhantomData;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Action {
    CreateTeam,
    /// List every team of the daemon.
    ListTeams,
    /// Add, revoke and rotate agents.
    ManageAgents,
    ListAgents,
    CreateTasks,
    /// `PATCH` a task: subject, status, owner, dependencies, metadata.
    EditTasks,
    ReadTasks,
    ClaimTasks,
    /// Heartbeat, complete, fail, release — the store checks the caller holds the task.
    ActOnClaims,
    PostMessages,
    ReadMessages,
    ReadInbox,
    /// Move one's own inbox cursor.
    AckInbox,
    ReadMemory,
    PatchMemory,
    ReplaceMemory,
    /// `/events` and `/messages/stream`.
    ReadStreams,
    /// Post a run's test outcomes to the test history.
    PostTestRuns,
    /// Runs, flaky tests and regressions of the test history.
    ReadTestHistory,
    /// Register, list and delete outbound webhooks, and read their delivery log.
    ManageWebhooks,
    /// Read and change a team's quotas and retention (`/v1/teams/{team}/settings`).
    TeamSettings,
    /// Read the team's model budget and spending (`/budget`, `/spend`).
    ReadSpend,
    /// Reserve and settle model calls in the team's ledger (`/spend/reserve`, `/spend/{id}/settle`).
    RecordSpend,
    /// Set the team's model budget (`PUT /budget`).
    ManageBudget,
    /// Delete a team and everything of it.
    DeleteTeams,
    /// Export a team as JSON Lines, or import such a file as a new team.
    TransferTeams,
}

impl Action {
    pub const ALL: [Action; 26] = [
        Action::CreateTeam,
        Action::ListTeams,
        Action::ManageAgents,
        Action::ListAgents,
        Action::CreateTasks,
        Action::EditTasks,
        Action::ReadTasks,
        Action::ClaimTasks,
        Action::ActOnClaims,
        Action::PostMessages,
        Action::ReadMessages,
        Action::ReadInbox,
        Action::AckInbox,
        Action::ReadMemory,
        Action::PatchMemory,
        Action::ReplaceMemory,
        Action::ReadStreams,
        Action::PostTestRuns,
        Action::ReadTestHistory,
        Action::ManageWebhooks,
        Action::TeamSettings,
        Action::ReadSpend,
        Action::RecordSpend,
        Action::ManageBudget,
        Action::DeleteTeams,
        Action::TransferTeams,
    ];
}

/// The matrix. `None` is the admin token.
pub fn allowed(role: Option<Role>, action: Action) -> bool {
    use Action::*;
    match role {
        None => matches!(
            action,
            CreateTeam
                | ListTeams
                | ManageAgents
                | ListAgents
                | TeamSettings
                | ReadSpend
                | ManageBudget
                | DeleteTeams
                | TransferTeams
        ),
        // A lead is a person with a coordinator's powers; what only a person may do (decide a
        // person-only gate, manage leads) is checked where it happens.
        Some(Role::Coordinator | Role::Lead) => !matches!(
            action,
            CreateTeam | ListTeams | TeamSettings | DeleteTeams | TransferTeams
        ),
        Some(Role::Tester | Role::Executor) => matches!(
            action,
            ListAgents
                | ReadTasks
                | ClaimTasks
                | ActOnClaims
                | PostMessages
                | ReadMessages
                | ReadInbox
                | AckInbox
                | ReadMemory
                | PatchMemory
                | ReadStreams
                | PostTestRuns
                | ReadTestHistory
                | ReadSpend
                | RecordSpend
        ),
        Some(Role::Observer) => matches!(
            action,
            ListAgents
                | ReadTasks
                | ReadMessages
                | ReadInbox
                | AckInbox
                | ReadMemory
                | ReadStreams
                | ReadTestHistory
                | ReadSpend
        ),
    }
}

impl Action {
    /// What the action does, for people: "post messages", "create tasks".
    pub fn describe(self) -> &'static str {
        match self {
            Action::CreateTeam => "create teams",
            Action::ListTeams => "list every team",
            Action::ManageAgents => "add, revoke or rotate agents",
            Action::ListAgents => "list agents",
            Action::CreateTasks => "create tasks",
            Action::EditTasks => "edit tasks",
            Action::ReadTasks => "read tasks",
            Action::ClaimTasks => "claim tasks",
            Action::ActOnClaims => "heartbeat, complete, fail or release tasks",
            Action::PostMessages => "post messages",
            Action::ReadMessages => "read messages",
            Action::ReadInbox => "read an inbox",
            Action::AckInbox => "acknowledge an inbox",
            Action::ReadMemory => "read the shared memory",
            Action::PatchMemory => "patch the shared memory",
            Action::ReplaceMemory => "replace the shared memory",
            Action::ReadStreams => "follow streams",
            Action::PostTestRuns => "post test runs",
            Action::ReadTestHistory => "read the test history",
            Action::ManageWebhooks => "manage webhooks",
            Action::TeamSettings => "read or change a team's quotas and retention",
            Action::ReadSpend => "read the model budget and spending",
            Action::RecordSpend => "reserve and settle model calls",
            Action::ManageBudget => "set the model budget",
            Action::DeleteTeams => "delete teams",
            Action::TransferTeams => "export or import teams",
        }
    }
}

/// 403 naming the role and the action in words: "an observer may not post messages".
pub fn refuse(role: Option<Role>, action: Action) -> ApiError {
    let what = action.describe();
    ApiError::forbidden(match role {
        None => format!("the admin token may not {what}; use the token of an agent in the team"),
        Some(r) => {
            let name = r.to_string();
            let article = if name.starts_with(['a', 'e', 'i', 'o', 'u']) {
                "an"
            } else {
                "a"
            };
            format!("{article} {name} may not {what}")
        }
    })
}

/// Whether an agent's role may perform `action`: `Ok`, or the 403 [`refuse`] gives. Used by
/// [`Can`] and by the MCP tools, so both surfaces answer alike.
pub fn permit(caller: &Caller, action: Action) -> Result<(), ApiError> {
    if allowed(Some(caller.role), action) {
        Ok(())
    } else {
        Err(refuse(Some(caller.role), action))
    }
}

/// [`permit`] for a caller that may be the admin token: the routes the admin shares with
/// coordinators (teams, settings, delete, export, import) check through this.
pub fn permit_principal(principal: &Principal, action: Action) -> Result<(), ApiError> {
    let role = match principal {
        Principal::Admin => None,
        Principal::Agent(c) => Some(c.role),
    };
    if allowed(role, action) {
        Ok(())
    } else {
        Err(refuse(role, action))
    }
}

/// Type-level names for actions, so a handler's signature says what it needs.
pub trait ActionName {
    const ACTION: Action;
}

macro_rules! actions {
    ($($name:ident),*) => {
        /// Marker types for [`Can`], one per [`Action`].
        pub mod act {
            $(
                pub struct $name;
                impl super::ActionName for $name {
                    const ACTION: super::Action = super::Action::$name;
                }
            )*
        }
    };
}

actions!(
    ListAgents,
    CreateTasks,
    EditTasks,
    ReadTasks,
    ClaimTasks,
    ActOnClaims,
    PostMessages,
    ReadMessages,
    ReadInbox,
    AckInbox,
    ReadMemory,
    PatchMemory,
    ReplaceMemory,
    ReadStreams,
    PostTestRuns,
    ReadTestHistory,
    ManageWebhooks,
    RecordSpend
);

/// An agent of the path's team whose role may perform `A`. Another team's token answers 404 as
/// if the team did not exist; the admin token answers 403 (it manages teams and agents only).
pub struct Can<A>(pub Caller, pub PhantomData<A>);

impl<A: ActionName + Send> FromRequestParts<AppState> for Can<A> {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let params = RawPathParams::from_request_parts(parts, state)
            .await
            .map_err(|_| ApiError::not_found("no such route"))?;
        let team = super::extract::path_team(&params)
            .unwrap_or_default()
            .to_string();
        match Principal::from_request_parts(parts, state).await? {
            Principal::Admin => Err(ApiError::forbidden(
                "the admin token manages teams and agents; use an agent token for team resources",
            )),
            Principal::Agent(caller) if caller.team != team => {
                Err(ApiError::not_found(format!("team {team} not found")))
            }
            Principal::Agent(caller) => {
                permit(&caller, A::ACTION)?;
                Ok(Can(caller, PhantomData))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// SECURITY.md's table promises the matrix to operators; it must say what the code does.
    #[test]
    fn the_security_document_states_the_matrix() {
        let doc = include_str!("../../../SECURITY.md");
        let columns = [
            None,
            Some(Role::Coordinator),
            Some(Role::Tester),
            Some(Role::Observer),
        ];
        for action in Action::ALL {
            let row = doc
                .lines()
                .find(|l| l.starts_with(&format!("| {} |", action.describe())))
                .unwrap_or_else(|| panic!("SECURITY.md has no row for {:?}", action));
            let cells: Vec<&str> = row.split('|').map(str::trim).skip(2).take(4).collect();
            assert_eq!(cells.len(), 4, "{row}");
            for (role, cell) in columns.iter().zip(cells) {
                assert_eq!(
                    cell == "yes",
                    allowed(*role, action),
                    "SECURITY.md says {cell:?} for {role:?} / {action:?}"
                );
            }
            assert_eq!(
                allowed(Some(Role::Tester), action),
                allowed(Some(Role::Executor), action),
                "testers and executors share a column"
            );
        }
    }

    /// The matrix, cell by cell: every (who, action) pair has an expected answer here.
    #[test]
    fn every_cell_of_the_matrix() {
        let expect = |role: Option<Role>, yes: &[Action]| {
            for action in Action::ALL {
                assert_eq!(
                    allowed(role, action),
                    yes.contains(&action),
                    "{role:?} / {action:?}"
                );
            }
        };
        use Action::*;
        expect(
            None,
            &[
                CreateTeam,
                ListTeams,
                ManageAgents,
                ListAgents,
                TeamSettings,
                ReadSpend,
                ManageBudget,
                DeleteTeams,
                TransferTeams,
            ],
        );
        let everything_but_teams: Vec<Action> = Action::ALL
            .into_iter()
            .filter(|a| {
                !matches!(
                    a,
                    CreateTeam | ListTeams | TeamSettings | DeleteTeams | TransferTeams
                )
            })
            .collect();
        expect(Some(Role::Coordinator), &everything_but_teams);
        let worker = [
            ListAgents,
            ReadTasks,
            ClaimTasks,
            ActOnClaims,
            PostMessages,
            ReadMessages,
            ReadInbox,
            AckInbox,
            ReadMemory,
            PatchMemory,
            ReadStreams,
            PostTestRuns,
            ReadTestHistory,
            ReadSpend,
            RecordSpend,
        ];
        expect(Some(Role::Tester), &worker);
        expect(Some(Role::Executor), &worker);
        expect(
            Some(Role::Observer),
            &[
                ListAgents,
                ReadTasks,
                ReadMessages,
                ReadInbox,
                AckInbox,
                ReadMemory,
                ReadStreams,
                ReadTestHistory,
                ReadSpend,
            ],
        );
    }
}

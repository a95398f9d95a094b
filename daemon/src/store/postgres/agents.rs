//! Teams, agents and token lookup.

use super::super::error::{StoreError, StoreResult};
use super::super::rules::fmt_time;
use super::super::rules::{self, validate};
use super::super::types::Caller;
use super::db::Db;
use super::rows::append_event;
use super::tx::Tx;
use super::DB_NOW_MS;
use huddle_wire::{Agent, Role, Team};
use sqlx::Row;

/// A claim statement's guard, with the team as `$1` and the claimer as `$3`: a revocation
/// committed after the request's token was checked binds there, and a revoked agent takes
/// nothing (a caller with no agent row is not revoked).
pub const CLAIMER_NOT_REVOKED: &str = "not exists (select 1 from agents
    where team_id = $1 and name = $3 and revoked_at is not null)";

pub async fn create_team(tx: &mut Tx, name: &str) -> StoreResult<Team> {
    validate::name("name", name)?;
    let now = tx.read_clock().await?;
    let inserted = sqlx::query(
        "insert into teams (name, created_at) values ($1, $2) on conflict (name) do nothing",
    )
    .bind(name)
    .bind(now)
    .execute(tx.conn())
    .await?
    .rows_affected();
    rules::created_team(name, now, inserted == 1)
}

pub async fn list_teams(db: Db<'_>) -> StoreResult<Vec<Team>> {
    let rows: Vec<(String, i64)> =
        sqlx::query_as("select name, created_at from teams order by name")
            .fetch_all(db)
            .await?;
    Ok(rows
        .into_iter()
        .map(|(name, at)| Team {
            name,
            created_at: fmt_time(at),
        })
        .collect())
}

pub async fn team_id(db: Db<'_>, name: &str) -> StoreResult<i64> {
    sqlx::query_scalar("select id from teams where name = $1")
        .bind(name)
        .fetch_optional(db)
        .await?
        .ok_or_else(|| StoreError::not_found(format!("team {name}")))
}

/// The team's agents that are not revoked.
async fn live_agents(tx: &mut Tx, team_id: i64) -> StoreResult<usize> {
    let agents: i64 =
        sqlx::query_scalar("select count(*) from agents where team_id = $1 and revoked_at is null")
            .bind(team_id)
            .fetch_one(tx.conn())
            .await?;
    Ok(agents as usize)
}

pub async fn create_agent(
    tx: &mut Tx,
    team_id: i64,
    name: &str,
    role: Role,
    token_hash: &str,
    max_agents: usize,
) -> StoreResult<Agent> {
    validate::name("name", name)?;
    tx.lock_team(team_id).await?;
    rules::check_agent_count(live_agents(tx, team_id).await?, max_agents)?;
    let now = tx.now_ms();
    let inserted = sqlx::query(
        "insert into agents (team_id, name, role, token_hash, created_at) values ($1, $2, $3, $4, $5)
         on conflict (team_id, name) do nothing",
    )
    .bind(team_id)
    .bind(name)
    .bind(role.as_str())
    .bind(token_hash)
    .bind(now)
    .execute(tx.conn())
    .await?
    .rows_affected();
    let agent = rules::created_agent(name, role, inserted == 1)?;
    append_event(tx, team_id, "agent.created", &agent)?;
    Ok(agent)
}

pub async fn authenticate(db: Db<'_>, token_hash: &str) -> StoreResult<Option<Caller>> {
    let row = sqlx::query(
        "select t.id, t.name as team, a.name as agent, a.role from agents a join teams t on t.id = a.team_id
         where a.token_hash = $1 and a.revoked_at is null",
    )
    .bind(token_hash)
    .fetch_optional(db)
    .await?;
    let Some(row) = row else {
        return Ok(None);
    };
    let role: String = row.try_get("role")?;
    Ok(Some(Caller {
        team_id: row.try_get("id")?,
        team: row.try_get("team")?,
        agent: row.try_get("agent")?,
        role: role.parse().unwrap_or(Role::Observer),
    }))
}

pub async fn list_agents(conn: impl sqlx::PgExecutor<'_>, team_id: i64) -> StoreResult<Vec<Agent>> {
    let rows: Vec<(String, String, Option<i64>)> = sqlx::query_as(
        "select name, role, last_seen_at from agents where team_id = $1 order by name",
    )
    .bind(team_id)
    .fetch_all(conn)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(name, role, seen)| Agent {
            name,
            role: role.parse().unwrap_or(Role::Observer),
            last_seen_at: seen.map(fmt_time),
        })
        .collect())
}

/// Sets a new token hash, or revokes (a random, never-issued hash and `revoked_at`). A new
/// token for a revoked agent brings it back, so it must fit under `max_agents` as a new one.
pub async fn set_token(
    tx: &mut Tx,
    team_id: i64,
    name: &str,
    token_hash: Option<&str>,
    max_agents: usize,
) -> StoreResult<(Agent, String)> {
    tx.lock_team(team_id).await?;
    let (old_hash, role, revoked): (String, String, bool) = sqlx::query_as(
        "select token_hash, role, revoked_at is not null from agents where team_id = $1 and name = $2",
    )
    .bind(team_id)
    .bind(name)
    .fetch_optional(tx.conn())
    .await?
    .ok_or_else(|| StoreError::not_found(format!("agent {name}")))?;
    if rules::reactivates(revoked, token_hash) {
        rules::check_agent_count(live_agents(tx, team_id).await?, max_agents)?;
    }
    let change = rules::token_change(token_hash, tx.now_ms());
    sqlx::query(
        "update agents set token_hash = $3, revoked_at = $4 where team_id = $1 and name = $2",
    )
    .bind(team_id)
    .bind(name)
    .bind(&change.hash)
    .bind(change.revoked_at)
    .execute(tx.conn())
    .await?;
    let agent = rules::changed_agent(name, &role);
    append_event(tx, team_id, change.event, &agent)?;
    Ok((agent, old_hash))
}

/// Moves each agent's `lastSeenAt` forward to the time given (never back), in one statement.
/// The times are this replica's; they are stored on the database's clock, as how long ago
/// each agent was seen.
pub async fn record_presence(db: Db<'_>, seen: &[(i64, String, i64)]) -> StoreResult<()> {
    let here_now = chrono::Utc::now().timestamp_millis();
    let teams: Vec<i64> = seen.iter().map(|s| s.0).collect();
    let names: Vec<&str> = seen.iter().map(|s| s.1.as_str()).collect();
    let ages: Vec<i64> = seen.iter().map(|s| (here_now - s.2).max(0)).collect();
    sqlx::query(&format!(
        "update agents a set last_seen_at = {DB_NOW_MS} - v.age
         from unnest($1::bigint[], $2::text[], $3::bigint[]) as v(team_id, name, age)
         where a.team_id = v.team_id and a.name = v.name
           and (a.last_seen_at is null or a.last_seen_at < {DB_NOW_MS} - v.age)"
    ))
    .bind(&teams)
    .bind(&names)
    .bind(&ages)
    .execute(db)
    .await?;
    Ok(())
}

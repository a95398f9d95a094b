//! Teams, agents and token lookup.

use super::super::error::{StoreError, StoreResult};
use super::super::rules::{self, validate};
use super::super::types::Caller;
use super::rows::{append_event, fmt_time};
use super::writer::WriteCtx;
use huddle_wire::{Agent, Role, Team};
use rusqlite::{params, Connection, OptionalExtension};

pub fn create_team(ctx: &mut WriteCtx<'_>, name: &str) -> StoreResult<Team> {
    validate::name("name", name)?;
    let inserted = ctx
        .conn
        .prepare_cached(
            "insert into teams (name, created_at) values (?1, ?2) on conflict (name) do nothing",
        )?
        .execute(params![name, ctx.now_ms])?;
    rules::created_team(name, ctx.now_ms, inserted == 1)
}

/// Every team, by name.
pub fn list_teams(conn: &Connection) -> StoreResult<Vec<Team>> {
    // `~` names are teams being purged or imported (`team_purge.rs`), not there for callers.
    let mut stmt = conn.prepare_cached(
        "select name, created_at from teams where name not like '~%' order by name",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok(Team {
            name: r.get(0)?,
            created_at: fmt_time(r.get(1)?),
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

pub fn team_id(conn: &Connection, name: &str) -> StoreResult<i64> {
    conn.prepare_cached("select id from teams where name = ?1 and name not like '~%'")?
        .query_row([name], |r| r.get(0))
        .optional()?
        .ok_or_else(|| StoreError::not_found(format!("team {name}")))
}

pub fn create_agent(
    ctx: &mut WriteCtx<'_>,
    team_id: i64,
    name: &str,
    role: Role,
    token_hash: &str,
    max_agents: usize,
) -> StoreResult<Agent> {
    validate::name("name", name)?;
    rules::check_agent_count(live_agents(ctx.conn, team_id)?, max_agents)?;
    let inserted = ctx
        .conn
        .prepare_cached(
            "insert into agents (team_id, name, role, token_hash, created_at) values (?1, ?2, ?3, ?4, ?5)
             on conflict (team_id, name) do nothing",
        )?
        .execute(params![team_id, name, role.as_str(), token_hash, ctx.now_ms])?;
    let agent = rules::created_agent(name, role, inserted == 1)?;
    append_event(ctx, team_id, "agent.created", &agent)?;
    Ok(agent)
}

/// The team's agents that are not revoked.
fn live_agents(conn: &Connection, team_id: i64) -> StoreResult<usize> {
    let agents: i64 = conn
        .prepare_cached("select count(*) from agents where team_id = ?1 and revoked_at is null")?
        .query_row([team_id], |r| r.get(0))?;
    Ok(agents as usize)
}

/// Whether the team's agent `name` was revoked (its row stays; a caller with no row is not).
pub fn is_revoked(conn: &Connection, team_id: i64, name: &str) -> StoreResult<bool> {
    Ok(conn
        .prepare_cached(
            "select revoked_at is not null from agents where team_id = ?1 and name = ?2",
        )?
        .query_row(params![team_id, name], |r| r.get(0))
        .optional()?
        .unwrap_or(false))
}

pub fn authenticate(conn: &Connection, token_hash: &str) -> StoreResult<Option<Caller>> {
    Ok(conn
        .prepare_cached(
            "select t.id, t.name, a.name, a.role from agents a join teams t on t.id = a.team_id where a.token_hash = ?1 and a.revoked_at is null",
        )?
        .query_row([token_hash], |r| {
            let role: String = r.get(3)?;
            Ok(Caller { team_id: r.get(0)?, team: r.get(1)?, agent: r.get(2)?, role: role.parse().unwrap_or(Role::Observer) })
        })
        .optional()?)
}

pub fn list_agents(conn: &Connection, team_id: i64) -> StoreResult<Vec<Agent>> {
    let mut stmt = conn.prepare_cached(
        "select name, role, last_seen_at from agents where team_id = ?1 order by name",
    )?;
    let agents = stmt
        .query_map([team_id], |r| {
            let role: String = r.get(1)?;
            Ok(Agent {
                name: r.get(0)?,
                role: role.parse().unwrap_or(Role::Observer),
                last_seen_at: r.get::<_, Option<i64>>(2)?.map(fmt_time),
            })
        })?
        .collect::<Result<_, _>>()?;
    Ok(agents)
}

/// Sets a new token hash, or revokes (a random, never-issued hash and `revoked_at`). A new
/// token for a revoked agent brings it back, so it must fit under `max_agents` as a new one.
pub fn set_token(
    ctx: &mut WriteCtx<'_>,
    team_id: i64,
    name: &str,
    token_hash: Option<&str>,
    max_agents: usize,
) -> StoreResult<(Agent, String)> {
    let (old_hash, role, revoked): (String, String, bool) = ctx
        .conn
        .prepare_cached(
            "select token_hash, role, revoked_at is not null from agents where team_id = ?1 and name = ?2",
        )?
        .query_row(params![team_id, name], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .optional()?
        .ok_or_else(|| StoreError::not_found(format!("agent {name}")))?;
    if rules::reactivates(revoked, token_hash) {
        rules::check_agent_count(live_agents(ctx.conn, team_id)?, max_agents)?;
    }
    let change = rules::token_change(token_hash, ctx.now_ms);
    ctx.conn
        .prepare_cached(
            "update agents set token_hash = ?3, revoked_at = ?4 where team_id = ?1 and name = ?2",
        )?
        .execute(params![team_id, name, change.hash, change.revoked_at])?;
    let agent = rules::changed_agent(name, &role);
    append_event(ctx, team_id, change.event, &agent)?;
    Ok((agent, old_hash))
}

/// Moves each agent's `lastSeenAt` forward to the time given (never back).
pub fn record_presence(ctx: &mut WriteCtx<'_>, seen: &[(i64, String, i64)]) -> StoreResult<()> {
    let mut update = ctx.conn.prepare_cached(
        "update agents set last_seen_at = ?3
         where team_id = ?1 and name = ?2 and (last_seen_at is null or last_seen_at < ?3)",
    )?;
    for (team_id, agent, at) in seen {
        update.execute(params![team_id, agent, at])?;
    }
    Ok(())
}

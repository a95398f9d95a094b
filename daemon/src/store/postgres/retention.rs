//! Retention on PostgreSQL (`store::retention`): one short transaction per team, under the
//! team's lock (so a task being edited is never deleted under its writer) and on the
//! database's clock, deleting under that team's policy at most `batch` finished tasks, oldest
//! messages (with their idempotency keys), oldest events and test runs of that team — never
//! past what the team's webhooks have handled.

use super::super::error::{StoreError, StoreResult};
use super::super::retention::{self, cap_for_webhooks, Pruned, RetentionPolicy, SeqLimits};
use super::db::Pool;
use super::tx::Tx;

const FINISHED: &str = "('completed', 'failed', 'cancelled')";

pub async fn prune(pool: &Pool, policy: &RetentionPolicy) -> StoreResult<Pruned> {
    let mut pruned = Pruned::default();
    let teams: Vec<(i64,)> = sqlx::query_as("select id from teams order by id")
        .fetch_all(pool.read().await?.db())
        .await?;
    for (team,) in teams {
        let policy = policy.for_team(team);
        if !policy.deletes_anything() {
            continue;
        }
        let mut tx = Tx::begin(pool).await?;
        match tx.lock_team(team).await {
            // Deleted since it was listed.
            Err(StoreError::NotFound { .. }) => continue,
            locked => locked?,
        }
        let this = prune_team(&mut tx, team, &policy).await?;
        tx.commit().await?;
        pruned.tasks += this.tasks;
        pruned.messages += this.messages;
        pruned.events += this.events;
        pruned.test_runs += this.test_runs;
    }
    Ok(pruned)
}

async fn prune_team(tx: &mut Tx, team: i64, policy: &RetentionPolicy) -> StoreResult<Pruned> {
    let batch = policy.batch.max(1) as i64;
    let now = tx.now_ms();
    let mut pruned = Pruned::default();
    if let Some(limits) = policy.finished_tasks_at(now) {
        pruned.tasks = sqlx::query(&format!(
            "with victims as (
                 select t.id from tasks t
                 where t.team_id = $1 and t.status in {FINISHED}
                   and (t.updated_at <= $2 or t.id in (
                         select id from tasks where team_id = $1 and status in {FINISHED}
                         order by updated_at desc, id desc offset $4))
                   and not exists (
                     select 1 from task_deps d
                     join tasks o on o.team_id = d.team_id and o.id = d.task_id
                     where d.team_id = t.team_id and d.blocker_id = t.id
                       and o.status not in {FINISHED})
                 limit $3
             ),
             edges as (
                 delete from task_deps d using victims v
                 where d.team_id = $1 and (d.task_id = v.id or d.blocker_id = v.id)
             )
             delete from tasks t using victims v where t.team_id = $1 and t.id = v.id"
        ))
        .bind(team)
        .bind(limits.before_ms)
        .bind(batch)
        .bind(limits.keep)
        .execute(tx.conn())
        .await?
        .rows_affected();
    }
    let (msg_seq, event_seq, msg_cursor, event_cursor): (i64, i64, Option<i64>, Option<i64>) =
        sqlx::query_as(
            "select msg_seq, event_seq,
                    (select min(message_cursor) from webhooks w where w.team_id = t.id),
                    (select min(event_cursor) from webhooks w where w.team_id = t.id)
             from teams t where id = $1",
        )
        .bind(team)
        .fetch_one(tx.conn())
        .await?;
    let upto = cutoff(
        tx,
        "messages",
        team,
        policy.messages_at(now, msg_seq),
        batch,
    )
    .await?;
    if let Some(upto) = cap_for_webhooks(upto, msg_cursor) {
        sqlx::query("delete from idempotency_keys where team_id = $1 and seq <= $2")
            .bind(team)
            .bind(upto)
            .execute(tx.conn())
            .await?;
        pruned.messages = sqlx::query("delete from messages where team_id = $1 and seq <= $2")
            .bind(team)
            .bind(upto)
            .execute(tx.conn())
            .await?
            .rows_affected();
    }
    let upto = cutoff(tx, "events", team, policy.events_at(now, event_seq), batch).await?;
    if let Some(upto) = cap_for_webhooks(upto, event_cursor) {
        pruned.events = sqlx::query("delete from events where team_id = $1 and seq <= $2")
            .bind(team)
            .bind(upto)
            .execute(tx.conn())
            .await?
            .rows_affected();
    }
    if let Some(limits) = policy.test_runs_at(now) {
        // Outcomes go with their run (`on delete cascade`).
        pruned.test_runs = sqlx::query(
            "delete from test_runs where id in (
                 select id from test_runs
                 where team_id = $1 and (created_at <= $2 or id in (
                     select id from test_runs where team_id = $1 order by id desc offset $4))
                 order by id limit $3)",
        )
        .bind(team)
        .bind(limits.before_ms)
        .bind(batch)
        .bind(limits.keep)
        .execute(tx.conn())
        .await?
        .rows_affected();
    }
    Ok(pruned)
}

/// The last sequence of `table` to delete in `team` ([`retention::cutoff`]).
async fn cutoff(
    tx: &mut Tx,
    table: &str,
    team: i64,
    limits: SeqLimits,
    batch: i64,
) -> StoreResult<Option<i64>> {
    let (by_age, oldest): (Option<i64>, Option<i64>) =
        sqlx::query_as(&retention::bounds_sql(table))
            .bind(team)
            .bind(limits.before_ms)
            .fetch_one(tx.conn())
            .await?;
    Ok(retention::cutoff(by_age, oldest, limits, batch))
}

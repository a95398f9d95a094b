//! This replica's ear on the database: LISTEN on [`CHANNEL`], and for each committed
//! transaction's announcement read the new messages and events (in sequence order) and hand
//! them to the in-process hub, so streams and long polls here see every replica's writes.
//!
//! Notifications arrive in commit order, and a team's commits are in sequence order (the
//! statement that numbers a transaction's events holds the team's row to the commit), so per team the hub gets every item once, in order. Under load, every notification
//! already waiting is taken at once and merged per team, so a burst of commits costs one read
//! per team, not one per commit; the reads run on the listener's own connection, so a busy
//! pool never holds up delivery. If the LISTEN connection drops, notifications sent meanwhile
//! are lost: it reconnects at once (retrying until the database answers), and after every
//! reconnect every known team is read again from where it was and every claimer is woken.

use super::super::error::StoreResult;
use super::super::rules::event_json;
use super::announcement::Announcement;
use super::team_admin::TEAM_DELETED;
use super::tx::TOKEN_EVENTS;
use super::{messages, CHANNEL};
use crate::hub::{Hub, Publish, RemoteRevocation, StreamItem};
use sqlx::postgres::PgListener;
use sqlx::PgPool;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How far this replica has handed each team's items to the hub.
#[derive(Debug, Default, Clone, Copy)]
struct Delivered {
    msg: i64,
    event: i64,
}

/// Starts listening before returning, so nothing committed after `open` is missed.
pub async fn start(
    pool: &PgPool,
    hub: Arc<Hub>,
    stop: CancellationToken,
) -> StoreResult<tokio::task::JoinHandle<()>> {
    let mut listener = PgListener::connect_with(pool).await?;
    listener.listen_all([CHANNEL, TEAM_DELETED]).await?;
    let pool = pool.clone();
    Ok(tokio::spawn(async move {
        let mut delivered: HashMap<i64, Delivered> = HashMap::new();
        loop {
            let next = tokio::select! {
                _ = stop.cancelled() => return,
                n = listener.try_recv() => n,
            };
            match next {
                Ok(Some(first)) => {
                    let mut waiting = vec![first];
                    while let Some(more) = listener.next_buffered() {
                        waiting.push(more);
                    }
                    // Deletions after the announcements they follow: a deleted team is read no more.
                    let (deleted, waiting): (Vec<_>, Vec<_>) = waiting
                        .into_iter()
                        .partition(|n| n.channel() == TEAM_DELETED);
                    let announced = waiting.iter().filter_map(|n| {
                        let a = Announcement::decode(n.payload());
                        if a.is_none() {
                            tracing::warn!(payload = n.payload(), "unreadable change announcement");
                        }
                        a
                    });
                    let mut failed = false;
                    for a in merge_per_team(announced) {
                        if let Err(e) = deliver(&mut listener, &hub, &mut delivered, a).await {
                            tracing::warn!(error = %e, "reading announced changes failed");
                            failed = true;
                        }
                    }
                    for n in deleted {
                        match n.payload().parse() {
                            Ok(team) => forget_team(&hub, &mut delivered, team),
                            Err(_) => {
                                tracing::warn!(payload = n.payload(), "unreadable team deletion")
                            }
                        }
                    }
                    // Read again on a fresh connection, from where each team was delivered.
                    if failed {
                        match reconnect(&pool, &hub, &mut delivered, &stop).await {
                            Some(l) => listener = l,
                            None => return,
                        }
                    }
                }
                // The connection dropped (or failed): reconnect at once, then catch up on what
                // the notifications lost meanwhile would have said — after every reconnect.
                Ok(None) | Err(_) => {
                    tracing::warn!("lost the LISTEN connection; reconnecting");
                    match reconnect(&pool, &hub, &mut delivered, &stop).await {
                        Some(l) => listener = l,
                        None => return,
                    }
                }
            }
        }
    }))
}

/// Listens again (retrying until the database answers or `stop`), then catches up; a catch-up
/// cut short by another loss starts over. `None` on stop.
async fn reconnect(
    pool: &PgPool,
    hub: &Hub,
    delivered: &mut HashMap<i64, Delivered>,
    stop: &CancellationToken,
) -> Option<PgListener> {
    let mut failures = 0u32;
    loop {
        let listening = async {
            let mut l = PgListener::connect_with(pool).await?;
            l.listen_all([CHANNEL, TEAM_DELETED]).await?;
            Ok::<_, sqlx::Error>(l)
        };
        let attempt = tokio::select! {
            _ = stop.cancelled() => return None,
            l = listening => l,
        };
        match attempt {
            Ok(listener) if catch_up(pool, hub, delivered).await => {
                tracing::info!("listening again; caught up");
                return Some(listener);
            }
            Ok(_) => {}
            Err(e) if failures == 0 => {
                tracing::warn!(error = %e, "LISTEN failed; retrying until the database answers")
            }
            Err(_) => {}
        }
        failures += 1;
        // The pool's own connect already waits and backs off; this only avoids a hot loop
        // when the server refuses at once.
        tokio::select! {
            _ = stop.cancelled() => return None,
            _ = tokio::time::sleep(Duration::from_millis(100)) => {}
        }
    }
}

/// One announcement per team covering all of `announced` for it, in the order teams first
/// appear: ranges joined, ready tasks and "tasks changed" kept from each.
fn merge_per_team(announced: impl Iterator<Item = Announcement>) -> Vec<Announcement> {
    let mut merged: Vec<Announcement> = Vec::new();
    for a in announced {
        match merged.iter_mut().find(|m| m.team_id == a.team_id) {
            None => merged.push(a),
            Some(m) => {
                m.msgs = (m.msgs.0.min(a.msgs.0), m.msgs.1.max(a.msgs.1));
                m.events = (m.events.0.min(a.events.0), m.events.1.max(a.events.1));
                m.tasks_changed |= a.tasks_changed;
                m.tokens_changed |= a.tokens_changed;
                m.ready.extend(a.ready);
            }
        }
    }
    merged
}

/// Reads what `a` announced (and anything missed before it) through `db` and hands it to the hub.
async fn deliver<D>(
    db: &mut D,
    hub: &Hub,
    delivered: &mut HashMap<i64, Delivered>,
    a: Announcement,
) -> StoreResult<()>
where
    for<'c> &'c mut D: sqlx::PgExecutor<'c>,
{
    let team = a.team_id;
    let known = delivered.get(&team).copied();
    // From where this replica stopped (covering any missed announcement), or from the range's
    // start for a team seen for the first time.
    let msg_after = known.map_or(a.msgs.0 - 1, |d| d.msg);
    let event_after = known.map_or(a.events.0 - 1, |d| d.event);
    let mut publish = Vec::new();
    let mut now = known.unwrap_or(Delivered {
        msg: msg_after,
        event: event_after,
    });
    if a.msgs.1 > msg_after {
        for m in messages::range(&mut *db, team, msg_after, a.msgs.1).await? {
            let json = serde_json::to_string(&m)
                .map_err(|e| super::super::error::StoreError::Internal(e.to_string()))?;
            now.msg = m.seq;
            publish.push(Publish::Message(Arc::new(StreamItem::new(
                m.seq,
                m.kind,
                m.from,
                m.to,
                json.into(),
            ))));
        }
    }
    if a.events.1 > event_after {
        // Read only when someone here follows the events (a stream that subscribes later
        // catches up from the database), or for the revocations among them, which end that
        // agent's streams and cached tokens here whoever watches. After a gap (an unreadable
        // announcement) nobody knows what the missed range held, so it is read too.
        let watched = hub.events_watched(team);
        let missed = known.is_some_and(|d| d.event < a.events.0 - 1);
        if watched || a.tokens_changed || missed {
            for (seq, kind, data, created_at) in
                read_events(&mut *db, team, event_after, a.events.1, watched).await?
            {
                if TOKEN_EVENTS.contains(&kind.as_str()) {
                    revoke(&mut *db, hub, team, &data).await?;
                }
                if watched {
                    // Streamed as stored: the data text is spliced into the event's JSON.
                    let owned_kind = kind.clone();
                    publish.push(Publish::Event(Arc::new(StreamItem::lazy(
                        seq,
                        kind,
                        move || event_json(seq, &owned_kind, &data, created_at),
                    ))));
                }
            }
        }
        now.event = a.events.1;
    }
    if a.tasks_changed {
        publish.push(Publish::TasksChanged);
    }
    publish.extend(a.ready.into_iter().map(Publish::TaskReady));
    delivered.insert(team, now);
    hub.publish(team, publish);
    Ok(())
}

/// The team's events in `(after, upto]`, in order: all of them, or only [`TOKEN_EVENTS`].
async fn read_events<D>(
    db: &mut D,
    team: i64,
    after: i64,
    upto: i64,
    all: bool,
) -> StoreResult<Vec<(i64, String, String, i64)>>
where
    for<'c> &'c mut D: sqlx::PgExecutor<'c>,
{
    Ok(sqlx::query_as(
        "select seq, type, data, created_at from events
         where team_id = $1 and seq > $2 and seq <= $3 and ($4 or type = any($5))
         order by seq",
    )
    .bind(team)
    .bind(after)
    .bind(upto)
    .bind(all)
    .bind(&TOKEN_EVENTS[..])
    .fetch_all(db)
    .await?)
}

/// An agent's token was revoked or rotated (on any replica): ends its streams and cached
/// tokens here, except what the token valid now (a rotation's new one) started.
async fn revoke<D>(db: &mut D, hub: &Hub, team: i64, data: &str) -> StoreResult<()>
where
    for<'c> &'c mut D: sqlx::PgExecutor<'c>,
{
    let agent: serde_json::Value = serde_json::from_str(data).unwrap_or_default();
    let Some(name) = agent.get("name").and_then(|n| n.as_str()) else {
        return Ok(());
    };
    let valid: Option<String> = sqlx::query_scalar(
        "select token_hash from agents
         where team_id = $1 and name = $2 and revoked_at is null",
    )
    .bind(team)
    .bind(name)
    .fetch_optional(db)
    .await?;
    hub.revoke(RemoteRevocation {
        team_id: team,
        agent: name.to_string(),
        valid_token_hash: valid,
    });
    Ok(())
}

/// A team was deleted (on any replica): its tokens, streams and waiters here end.
fn forget_team(hub: &Hub, delivered: &mut HashMap<i64, Delivered>, team: i64) {
    delivered.remove(&team);
    hub.delete_team(team);
}

/// After a lost connection: read every known team from where it was, wake every claimer.
/// False when the database could not be read (the caller tries again).
async fn catch_up(pool: &PgPool, hub: &Hub, delivered: &mut HashMap<i64, Delivered>) -> bool {
    let teams: Vec<(i64, i64, i64)> =
        match sqlx::query_as("select id, msg_seq, event_seq from teams")
            .fetch_all(pool)
            .await
        {
            Ok(t) => t,
            Err(e) => {
                tracing::warn!(error = %e, "catching up after a lost LISTEN connection failed");
                return false;
            }
        };
    // A team known here but gone from the database was deleted while the connection was down.
    let gone: Vec<i64> = delivered
        .keys()
        .filter(|id| !teams.iter().any(|(team, _, _)| team == *id))
        .copied()
        .collect();
    for team in gone {
        forget_team(hub, delivered, team);
    }
    for (team_id, msg, event) in teams {
        if !delivered.contains_key(&team_id) {
            continue;
        }
        let a = Announcement {
            team_id,
            msgs: (msg + 1, msg),
            events: (event + 1, event),
            tasks_changed: true,
            tokens_changed: true,
            ready: Vec::new(),
        };
        let delivered_now = match pool.acquire().await {
            Ok(mut conn) => deliver(&mut *conn, hub, delivered, a).await,
            Err(e) => Err(e.into()),
        };
        if let Err(e) = delivered_now {
            tracing::warn!(error = %e, team_id, "catching up a team failed");
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::{merge_per_team, Announcement};
    use crate::hub::ReadyTask;

    fn announced(team_id: i64, msgs: (i64, i64), ready: &[&str]) -> Announcement {
        Announcement {
            team_id,
            msgs,
            events: (1, 0),
            tasks_changed: false,
            tokens_changed: false,
            ready: ready
                .iter()
                .map(|p| ReadyTask {
                    prefix: p.to_string(),
                    owner: None,
                    project: None,
                })
                .collect(),
        }
    }

    #[test]
    fn a_burst_becomes_one_announcement_per_team_covering_every_range() {
        let merged = merge_per_team(
            [
                announced(1, (4, 5), &["TEST"]),
                announced(2, (1, 1), &[]),
                announced(1, (6, 5), &["QARUN"]),
                announced(1, (6, 9), &[]),
            ]
            .into_iter(),
        );
        assert_eq!(merged.len(), 2);
        assert_eq!((merged[0].team_id, merged[0].msgs), (1, (4, 9)));
        let prefixes: Vec<_> = merged[0].ready.iter().map(|r| r.prefix.as_str()).collect();
        assert_eq!(prefixes, ["TEST", "QARUN"]);
        assert_eq!((merged[1].team_id, merged[1].msgs), (2, (1, 1)));
    }
}

//! This replica's ear on the database: LISTEN on [`CHANNEL`], and for each committed
//! transaction's announcement read the new messages and events (in sequence order) and hand
//! them to the in-process hub, so streams and long polls here see every replica's writes.
//!
//! Notifications arrive in commit order, and a team's commits are in sequence order (the team
//! lock), so per team the hub gets every item once, in order. If the LISTEN connection drops,
//! notifications sent meanwhile are lost: on reconnecting, every known team is read again from
//! where it was, and every team's claimers are woken.

use super::super::rules::event_json;
use super::super::StoreResult;
use super::tx::Announcement;
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
    listener.listen(CHANNEL).await?;
    let pool = pool.clone();
    Ok(tokio::spawn(async move {
        let mut delivered: HashMap<i64, Delivered> = HashMap::new();
        loop {
            let next = tokio::select! {
                _ = stop.cancelled() => return,
                n = listener.try_recv() => n,
            };
            match next {
                Ok(Some(n)) => match Announcement::decode(n.payload()) {
                    Some(a) => {
                        if let Err(e) = deliver(&pool, &hub, &mut delivered, a).await {
                            tracing::warn!(error = %e, "reading announced changes failed");
                        }
                    }
                    None => tracing::warn!(payload = n.payload(), "unreadable change announcement"),
                },
                // The connection dropped; the next `try_recv` reconnects. Catch up on what the
                // lost notifications would have said.
                Ok(None) => {
                    tracing::warn!("lost the LISTEN connection; catching up");
                    catch_up(&pool, &hub, &mut delivered).await;
                }
                Err(e) => {
                    tracing::warn!(error = %e, "LISTEN failed; retrying in 1 s");
                    tokio::select! {
                        _ = stop.cancelled() => return,
                        _ = tokio::time::sleep(Duration::from_secs(1)) => {}
                    }
                }
            }
        }
    }))
}

async fn deliver(
    pool: &PgPool,
    hub: &Hub,
    delivered: &mut HashMap<i64, Delivered>,
    a: Announcement,
) -> StoreResult<()> {
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
        for m in messages::range(pool, team, msg_after, a.msgs.1).await? {
            let json = serde_json::to_string(&m)
                .map_err(|e| super::super::StoreError::Internal(e.to_string()))?;
            now.msg = m.seq;
            publish.push(Publish::Message(Arc::new(StreamItem {
                seq: m.seq,
                kind: m.kind,
                from: m.from,
                to: m.to,
                json: json.into(),
            })));
        }
    }
    if a.events.1 > event_after {
        // Streamed as stored: the data text is spliced into the event's JSON, never parsed,
        // except for revocations, which end that agent's streams and cached tokens here.
        let rows: Vec<(i64, String, String, i64)> = sqlx::query_as(
            "select seq, type, data, created_at from events
             where team_id = $1 and seq > $2 and seq <= $3 order by seq",
        )
        .bind(team)
        .bind(event_after)
        .bind(a.events.1)
        .fetch_all(pool)
        .await?;
        for (seq, kind, data, created_at) in rows {
            if kind == "agent.revoked" || kind == "agent.rotated" {
                let agent: serde_json::Value = serde_json::from_str(&data).unwrap_or_default();
                if let Some(name) = agent.get("name").and_then(|n| n.as_str()) {
                    // The token valid now (a rotation's new one) keeps what it started.
                    let valid: Option<String> = sqlx::query_scalar(
                        "select token_hash from agents
                         where team_id = $1 and name = $2 and revoked_at is null",
                    )
                    .bind(team)
                    .bind(name)
                    .fetch_optional(pool)
                    .await?;
                    hub.revoke(RemoteRevocation {
                        team_id: team,
                        agent: name.to_string(),
                        valid_token_hash: valid,
                    });
                }
            }
            now.event = seq;
            publish.push(Publish::Event(Arc::new(StreamItem {
                seq,
                json: event_json(seq, &kind, &data, created_at)?.into(),
                kind,
                from: String::new(),
                to: String::new(),
            })));
        }
    }
    if a.tasks_changed {
        publish.push(Publish::TasksChanged);
    }
    publish.extend(a.ready.into_iter().map(Publish::TaskReady));
    delivered.insert(team, now);
    hub.publish(team, publish);
    Ok(())
}

/// After a lost connection: read every known team from where it was, wake every claimer.
async fn catch_up(pool: &PgPool, hub: &Hub, delivered: &mut HashMap<i64, Delivered>) {
    let teams: Vec<(i64, i64, i64)> =
        match sqlx::query_as("select id, msg_seq, event_seq from teams")
            .fetch_all(pool)
            .await
        {
            Ok(t) => t,
            Err(e) => {
                tracing::warn!(error = %e, "catching up after a lost LISTEN connection failed");
                return;
            }
        };
    for (team_id, msg, event) in teams {
        if !delivered.contains_key(&team_id) {
            continue;
        }
        let a = Announcement {
            team_id,
            msgs: (msg + 1, msg),
            events: (event + 1, event),
            tasks_changed: true,
            ready: Vec::new(),
        };
        if let Err(e) = deliver(pool, hub, delivered, a).await {
            tracing::warn!(error = %e, team_id, "catching up a team failed");
        }
    }
}

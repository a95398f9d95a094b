//! One write transaction: the team locks it holds, the sequences it hands out, and what it
//! announces to every replica when it commits.

use super::super::StoreResult;
use super::CHANNEL;
use sqlx::{PgConnection, PgPool, Postgres, Transaction};
use std::collections::BTreeMap;

/// A team's sequences, read under the team's row lock and written back before the commit.
#[derive(Debug, Clone, Copy)]
struct TeamSeqs {
    msg: i64,
    event: i64,
    /// The values when locked: the announced ranges start after them.
    msg_start: i64,
    event_start: i64,
    tasks_changed: bool,
}

pub struct Tx {
    tx: Transaction<'static, Postgres>,
    /// Milliseconds since the epoch, fixed per transaction.
    pub now_ms: i64,
    teams: BTreeMap<i64, TeamSeqs>,
}

impl Tx {
    pub async fn begin(pool: &PgPool) -> StoreResult<Tx> {
        Ok(Tx {
            tx: pool.begin().await?,
            now_ms: chrono::Utc::now().timestamp_millis(),
            teams: BTreeMap::new(),
        })
    }

    pub fn conn(&mut self) -> &mut PgConnection {
        &mut self.tx
    }

    /// Locks the team's row until the commit. Every write to a team takes this lock before
    /// anything else, so writes to one team never deadlock and commit in sequence order.
    pub async fn lock_team(&mut self, team_id: i64) -> StoreResult<()> {
        if self.teams.contains_key(&team_id) {
            return Ok(());
        }
        let (msg, event): (i64, i64) =
            sqlx::query_as("select msg_seq, event_seq from teams where id = $1 for update")
                .bind(team_id)
                .fetch_one(&mut *self.tx)
                .await?;
        self.teams.insert(
            team_id,
            TeamSeqs {
                msg,
                event,
                msg_start: msg,
                event_start: event,
                tasks_changed: false,
            },
        );
        Ok(())
    }

    fn seqs(&mut self, team_id: i64) -> &mut TeamSeqs {
        self.teams
            .get_mut(&team_id)
            .expect("lock_team before handing out sequences")
    }

    pub fn next_event_seq(&mut self, team_id: i64) -> i64 {
        let s = self.seqs(team_id);
        s.event += 1;
        s.event
    }

    pub fn next_msg_seq(&mut self, team_id: i64) -> i64 {
        let s = self.seqs(team_id);
        s.msg += 1;
        s.msg
    }

    /// The last message sequence of the team, this transaction included.
    pub fn last_msg_seq(&mut self, team_id: i64) -> i64 {
        self.seqs(team_id).msg
    }

    /// Some task of the team may have become claimable: wake claimers on every replica.
    pub fn tasks_changed(&mut self, team_id: i64) {
        self.seqs(team_id).tasks_changed = true;
    }

    /// Writes the sequences back, announces each team's new rows, and commits. The
    /// notifications are delivered only if the commit succeeds, in commit order.
    pub async fn commit(mut self) -> StoreResult<()> {
        for (team_id, s) in &self.teams {
            let changed = s.msg != s.msg_start || s.event != s.event_start;
            if !changed && !s.tasks_changed {
                continue;
            }
            let payload = Announcement {
                team_id: *team_id,
                msgs: (s.msg_start + 1, s.msg),
                events: (s.event_start + 1, s.event),
                tasks_changed: s.tasks_changed,
            }
            .encode();
            // The sequences and the announcement in one round trip.
            sqlx::query(
                "with saved as (
                     update teams set msg_seq = $2, event_seq = $3 where id = $1 and $4
                 )
                 select pg_notify($5, $6)",
            )
            .bind(team_id)
            .bind(s.msg)
            .bind(s.event)
            .bind(changed)
            .bind(CHANNEL)
            .bind(payload)
            .execute(&mut *self.tx)
            .await?;
        }
        self.tx.commit().await?;
        Ok(())
    }
}

/// What one committed transaction added to a team: message and event sequence ranges
/// (`first > last` when none) and whether tasks may have become claimable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Announcement {
    pub team_id: i64,
    pub msgs: (i64, i64),
    pub events: (i64, i64),
    pub tasks_changed: bool,
}

impl Announcement {
    pub fn encode(&self) -> String {
        format!(
            "{} {} {} {} {} {}",
            self.team_id,
            self.msgs.0,
            self.msgs.1,
            self.events.0,
            self.events.1,
            u8::from(self.tasks_changed)
        )
    }

    pub fn decode(payload: &str) -> Option<Announcement> {
        let n: Vec<i64> = payload
            .split(' ')
            .map(|p| p.parse().ok())
            .collect::<Option<_>>()?;
        match n[..] {
            [team_id, mf, ml, ef, el, tc] => Some(Announcement {
                team_id,
                msgs: (mf, ml),
                events: (ef, el),
                tasks_changed: tc != 0,
            }),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Announcement;

    #[test]
    fn announcements_round_trip_and_garbage_is_refused() {
        let a = Announcement {
            team_id: 7,
            msgs: (3, 5),
            events: (10, 9),
            tasks_changed: true,
        };
        assert_eq!(Announcement::decode(&a.encode()), Some(a));
        assert_eq!(Announcement::decode("7 1 2"), None);
        assert_eq!(Announcement::decode("x 1 2 3 4 0"), None);
    }
}

//! Each team's share of the read connections, on either backend: a team's reads hold at most
//! `[limits] max_reads_per_team` connections at once, so an observer looping on heavy reads
//! queues behind its own team's share and every other team still finds connections free.
//!
//! A team's entry lives only while one of its reads holds or waits for a share: the map holds
//! as many entries as teams reading right now, whoever creates and deletes teams.

use super::error::{StoreError, StoreResult};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Semaphore;

type Teams = Arc<Mutex<HashMap<i64, Arc<Semaphore>>>>;

pub struct ReadShares {
    per_team: usize,
    /// The longest a read waits for its team's share before it is answered `TeamReadsBusy`
    /// (none: as long as it takes).
    wait: Option<Duration>,
    teams: Teams,
}

/// One read's place in its team's share, given back when dropped.
pub struct ReadShare {
    entry: Entry,
}

/// A read holding or waiting for its team's share: it keeps the team's entry in the map, and
/// the last one to go removes it. Its reference to the semaphore is taken and given back under
/// the map's lock, so the count read there is exact, whether the read ends, fails or its
/// caller gives up while it waits.
struct Entry {
    teams: Teams,
    team_id: i64,
    slots: Option<Arc<Semaphore>>,
}

impl ReadShares {
    /// `per_team` reads of one team at once (at least one); a read waits at most `wait` for
    /// its team's share.
    pub fn new(per_team: usize, wait: Option<Duration>) -> Self {
        ReadShares {
            per_team: per_team.max(1),
            wait,
            teams: Teams::default(),
        }
    }

    /// Waits for a place in `team_id`'s share (counted in `huddle_reads_waiting_for_share`
    /// while it waits).
    pub async fn enter(&self, team_id: i64) -> StoreResult<ReadShare> {
        let slots = lock(&self.teams)
            .entry(team_id)
            .or_insert_with(|| Arc::new(Semaphore::new(self.per_team)))
            .clone();
        let entry = Entry {
            teams: self.teams.clone(),
            team_id,
            slots: Some(slots),
        };
        let slots = entry.slots.as_deref().expect("set above");
        match slots.try_acquire() {
            Ok(permit) => permit.forget(),
            Err(_) => {
                let _waiting = crate::metrics::ReadShareWait::start();
                let acquire = slots.acquire();
                let permit = match self.wait {
                    Some(wait) => tokio::time::timeout(wait, acquire).await.map_err(|_| {
                        StoreError::TeamReadsBusy(format!(
                            "this team's reads hold all {} read connections of its share \
                             ([limits] max_reads_per_team) and none came free in {} ms; retry",
                            self.per_team,
                            wait.as_millis()
                        ))
                    })?,
                    None => acquire.await,
                };
                permit
                    .map_err(|_| StoreError::Unavailable("the store is closed".into()))?
                    .forget();
            }
        }
        Ok(ReadShare { entry })
    }

    /// Teams with an entry now (reads holding or waiting for a share).
    pub fn teams_tracked(&self) -> usize {
        lock(&self.teams).len()
    }
}

impl Drop for ReadShare {
    fn drop(&mut self) {
        if let Some(slots) = &self.entry.slots {
            slots.add_permits(1);
        }
    }
}

impl Drop for Entry {
    fn drop(&mut self) {
        let mut teams = lock(&self.teams);
        let Some(slots) = self.slots.take() else {
            return;
        };
        let ours = teams
            .get(&self.team_id)
            .is_some_and(|s| Arc::ptr_eq(s, &slots));
        drop(slots);
        // Every other read of the team holds a reference, taken under this lock.
        if ours
            && teams
                .get(&self.team_id)
                .is_some_and(|s| Arc::strong_count(s) == 1)
        {
            teams.remove(&self.team_id);
        }
    }
}

fn lock(teams: &Teams) -> std::sync::MutexGuard<'_, HashMap<i64, Arc<Semaphore>>> {
    teams.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::ReadShares;
    use std::time::Duration;

    #[tokio::test]
    async fn a_team_past_its_share_waits_while_another_team_reads() {
        let shares = ReadShares::new(2, None);
        let a1 = shares.enter(1).await.unwrap();
        let a2 = shares.enter(1).await.unwrap();
        let third = tokio::time::timeout(Duration::from_millis(50), shares.enter(1)).await;
        assert!(third.is_err(), "team 1's third read waits for its share");
        let b = tokio::time::timeout(Duration::from_secs(30), shares.enter(2))
            .await
            .expect("team 2 reads while team 1 is at its share")
            .unwrap();
        drop(a1);
        let a3 = tokio::time::timeout(Duration::from_secs(30), shares.enter(1))
            .await
            .expect("a place freed is taken")
            .unwrap();
        drop((a2, a3, b));
    }

    #[tokio::test]
    async fn a_teams_entry_lasts_only_while_it_reads() {
        let shares = ReadShares::new(1, None);
        let held = shares.enter(7).await.unwrap();
        let waiting = {
            let shares = &shares;
            async move { shares.enter(7).await.unwrap() }
        };
        let mut waiting = Box::pin(waiting);
        assert!(
            futures::poll!(waiting.as_mut()).is_pending(),
            "the second read waits"
        );
        drop(held);
        assert_eq!(shares.teams_tracked(), 1, "kept for the read still waiting");
        let second = waiting.await;
        assert_eq!(shares.teams_tracked(), 1);
        drop(second);
        assert_eq!(shares.teams_tracked(), 0, "no read left: the entry is gone");
        for team in 0..1000 {
            drop(shares.enter(team).await.unwrap());
        }
        assert_eq!(
            shares.teams_tracked(),
            0,
            "a thousand teams read once: no entry kept"
        );
    }

    #[tokio::test]
    async fn a_read_given_up_while_waiting_leaves_no_entry_behind() {
        let shares = ReadShares::new(1, None);
        let held = shares.enter(3).await.unwrap();
        {
            let mut waiting = Box::pin(shares.enter(3));
            assert!(futures::poll!(waiting.as_mut()).is_pending());
            // The place freed is handed to the waiter, which is then dropped unpolled, as
            // when its client disconnects.
            drop(held);
        }
        assert_eq!(shares.teams_tracked(), 0, "nobody reads: no entry");
        let again = tokio::time::timeout(Duration::from_secs(30), shares.enter(3))
            .await
            .expect("the place came back")
            .unwrap();
        drop(again);
        assert_eq!(shares.teams_tracked(), 0);
    }

    #[tokio::test]
    async fn a_bounded_wait_ends_unavailable() {
        let shares = ReadShares::new(1, Some(Duration::from_millis(20)));
        let held = shares.enter(4).await.unwrap();
        let refused = shares.enter(4).await;
        assert!(
            matches!(
                refused,
                Err(crate::store::error::StoreError::TeamReadsBusy(_))
            ),
            "past its wait a read is answered busy"
        );
        drop(held);
        assert_eq!(shares.teams_tracked(), 0);
        drop(shares.enter(4).await.unwrap());
    }
}

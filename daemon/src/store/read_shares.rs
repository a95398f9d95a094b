//! Each team's share of the read connections, on either backend: a team's reads hold at most
//! `[limits] max_reads_per_team` connections at once, so an observer looping on heavy reads
//! queues behind its own team's share and every other team still finds connections free.
//!
//! A team's entry lives only while one of its reads holds or waits for a share: the map holds
//! as many entries as teams reading right now, whoever creates and deletes teams.

use super::{StoreError, StoreResult};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

type Teams = Arc<Mutex<HashMap<i64, Arc<Semaphore>>>>;

pub struct ReadShares {
    per_team: usize,
    teams: Teams,
}

/// One read's place in its team's share, given back when dropped.
pub struct ReadShare {
    permit: Option<OwnedSemaphorePermit>,
    team_id: i64,
    slots: Arc<Semaphore>,
    teams: Teams,
}

impl ReadShares {
    /// `per_team` reads of one team at once (at least one).
    pub fn new(per_team: usize) -> Self {
        ReadShares {
            per_team: per_team.max(1),
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
        let permit = match slots.clone().try_acquire_owned() {
            Ok(permit) => permit,
            Err(_) => {
                let _waiting = crate::metrics::ReadShareWait::start();
                slots
                    .clone()
                    .acquire_owned()
                    .await
                    .map_err(|_| StoreError::Unavailable("the store is closed".into()))?
            }
        };
        Ok(ReadShare {
            permit: Some(permit),
            team_id,
            slots,
            teams: self.teams.clone(),
        })
    }

    /// Teams with an entry now (reads holding or waiting for a share).
    pub fn teams_tracked(&self) -> usize {
        lock(&self.teams).len()
    }
}

impl Drop for ReadShare {
    fn drop(&mut self) {
        drop(self.permit.take());
        let mut teams = lock(&self.teams);
        // Every other holder or waiter keeps a clone (a waiting `acquire_owned` holds one), and
        // clones are made only under this lock: the map's and this one mean nobody else.
        if Arc::strong_count(&self.slots) == 2
            && teams
                .get(&self.team_id)
                .is_some_and(|s| Arc::ptr_eq(s, &self.slots))
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
        let shares = ReadShares::new(2);
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
        let shares = ReadShares::new(1);
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
}

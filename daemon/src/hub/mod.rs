//! In-process fan-out of committed changes.
//!
//! The store publishes here only after a transaction commits, so nothing a subscriber sees can
//! later vanish. Each team has two bounded broadcast channels (events and messages, each item
//! serialised to JSON once) and two watch counters that wake long-polling claimers and inbox
//! readers. A subscriber that falls behind the bounded buffer is told it lagged and catches up
//! from the database by its cursor, so a stuck client never slows a writer or anyone else.
//! Long-polling claimers wait in a queue of their own (`claim_waiters`), woken one per task
//! that becomes ready.

mod claim_waiters;

pub use claim_waiters::{ClaimWaiters, Parcel, ProjectFilter, ReadyTask, WaitTicket, Withdrawer};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use tokio::sync::{broadcast, watch};

/// One committed item ready to send to streams: its sequence, a few fields for filtering, and
/// its JSON, serialised once however many subscribers there are.
#[derive(Clone)]
pub struct StreamItem {
    pub seq: i64,
    /// Event type (`task.created`…) or message type (`test_result`…).
    pub kind: String,
    /// Message sender and recipient; empty for events.
    pub from: String,
    pub to: String,
    json: OnceLock<Arc<str>>,
    /// Makes the JSON on first use ([`StreamItem::lazy`]).
    make: Option<MakeJson>,
}

/// An item's JSON, made when a stream first sends it.
type MakeJson = Arc<dyn Fn() -> String + Send + Sync>;

impl StreamItem {
    /// An item whose JSON is already made (a message, shared with the event log).
    pub fn new(seq: i64, kind: String, from: String, to: String, json: Arc<str>) -> StreamItem {
        StreamItem {
            seq,
            kind,
            from,
            to,
            json: OnceLock::from(json),
            make: None,
        }
    }

    /// An event whose JSON `make` formats on first use, on the thread of the stream that sends
    /// it: the single writer thread that publishes every event never formats one, and an event
    /// nobody streams is never formatted at all.
    pub fn lazy(
        seq: i64,
        kind: String,
        make: impl Fn() -> String + Send + Sync + 'static,
    ) -> StreamItem {
        StreamItem {
            seq,
            kind,
            from: String::new(),
            to: String::new(),
            json: OnceLock::new(),
            make: Some(Arc::new(make)),
        }
    }

    pub fn json(&self) -> &str {
        self.json
            .get_or_init(|| match &self.make {
                Some(make) => make().into(),
                None => Arc::from("null"),
            })
            .as_ref()
    }
}

impl std::fmt::Debug for StreamItem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StreamItem")
            .field("seq", &self.seq)
            .field("kind", &self.kind)
            .field("from", &self.from)
            .field("to", &self.to)
            .field("json", &self.json.get())
            .finish_non_exhaustive()
    }
}

/// What a committed write asks the hub to announce.
#[derive(Debug, Clone)]
pub enum Publish {
    Event(Arc<StreamItem>),
    Message(Arc<StreamItem>),
    /// This task has just become claimable: wakes one waiting claimer that could take it.
    TaskReady(ReadyTask),
    /// Some tasks may have become claimable, which ones unknown: wakes every waiting claimer.
    TasksChanged,
}

struct TeamChannels {
    events: broadcast::Sender<Arc<StreamItem>>,
    messages: broadcast::Sender<Arc<StreamItem>>,
    /// Messages by recipient, for streams that follow one `to`: a message is handed only to
    /// its recipient's followers, so many agents each watching their own messages cost one
    /// delivery per message rather than one per subscriber.
    messages_to: Mutex<HashMap<String, broadcast::Sender<Arc<StreamItem>>>>,
    claim_waiters: Arc<ClaimWaiters>,
    tasks_changed: watch::Sender<u64>,
    messages_posted: watch::Sender<u64>,
}

/// An agent's token revoked or rotated on another replica, as the database tells it: the
/// agent, and the token hash it has now (after a rotation), which stays valid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteRevocation {
    pub team_id: i64,
    pub agent: String,
    pub valid_token_hash: Option<String>,
}

pub struct Hub {
    buffer: usize,
    /// `(team_id, agent)` whose token was revoked or rotated on another replica (reported by
    /// the PostgreSQL listener); the daemon's forgetter turns them into cache revocations.
    revocations: broadcast::Sender<RemoteRevocation>,
    /// Teams deleted (here or, on PostgreSQL, on another replica); the daemon's forgetter
    /// drops their tokens and ends what they started.
    deleted_teams: broadcast::Sender<i64>,
    teams: Mutex<HashMap<i64, Arc<TeamChannels>>>,
}

impl Hub {
    /// `buffer` bounds how many items a slow subscriber may fall behind before it lags.
    pub fn new(buffer: usize) -> Self {
        Hub {
            buffer: buffer.max(16),
            revocations: broadcast::channel(1024).0,
            deleted_teams: broadcast::channel(64).0,
            teams: Mutex::new(HashMap::new()),
        }
    }

    fn team(&self, team_id: i64) -> Arc<TeamChannels> {
        let mut teams = self.teams.lock().unwrap_or_else(|p| p.into_inner());
        teams
            .entry(team_id)
            .or_insert_with(|| {
                Arc::new(TeamChannels {
                    events: broadcast::channel(self.buffer).0,
                    messages: broadcast::channel(self.buffer).0,
                    messages_to: Mutex::new(HashMap::new()),
                    claim_waiters: Arc::default(),
                    tasks_changed: watch::channel(0).0,
                    messages_posted: watch::channel(0).0,
                })
            })
            .clone()
    }

    pub fn publish(&self, team_id: i64, items: impl IntoIterator<Item = Publish>) {
        let team = self.team(team_id);
        for item in items {
            match item {
                // A send error only means nobody is listening right now.
                Publish::Event(e) => drop(team.events.send(e)),
                Publish::Message(m) => {
                    let mut by_to = team.messages_to.lock().unwrap_or_else(|p| p.into_inner());
                    if let Some(followers) = by_to.get(&m.to) {
                        if followers.send(m.clone()).is_err() {
                            by_to.remove(&m.to); // nobody follows this recipient any more
                        }
                    }
                    drop(by_to);
                    let _ = team.messages.send(m);
                    team.messages_posted.send_modify(|n| *n += 1);
                }
                Publish::TaskReady(task) => {
                    team.claim_waiters.wake_one(&task);
                    team.tasks_changed.send_modify(|n| *n += 1);
                }
                Publish::TasksChanged => {
                    team.claim_waiters.wake_all();
                    team.tasks_changed.send_modify(|n| *n += 1);
                }
            }
        }
    }

    pub fn subscribe_events(&self, team_id: i64) -> broadcast::Receiver<Arc<StreamItem>> {
        self.team(team_id).events.subscribe()
    }

    /// Whether anyone here follows the team's events now. A feed that skips unwatched events
    /// loses nothing: a stream subscribes before it catches up from the database.
    pub fn events_watched(&self, team_id: i64) -> bool {
        let teams = self.teams.lock().unwrap_or_else(|p| p.into_inner());
        teams
            .get(&team_id)
            .is_some_and(|t| t.events.receiver_count() > 0)
    }

    pub fn subscribe_messages(&self, team_id: i64) -> broadcast::Receiver<Arc<StreamItem>> {
        self.team(team_id).messages.subscribe()
    }

    /// Only the messages whose `to` is exactly `to`. The recipient's channel is freed when its
    /// last follower drops its [`ToFollower`].
    pub fn subscribe_messages_to(&self, team_id: i64, to: &str) -> ToFollower {
        let team = self.team(team_id);
        let rx = {
            let mut by_to = team.messages_to.lock().unwrap_or_else(|p| p.into_inner());
            by_to
                .entry(to.to_string())
                .or_insert_with(|| broadcast::channel(self.buffer).0)
                .subscribe()
        };
        ToFollower {
            rx: Some(rx),
            team,
            to: to.to_string(),
        }
    }

    /// How many recipients have a channel of their own in the team (for tests of the cleanup).
    pub fn recipient_channels(&self, team_id: i64) -> usize {
        let team = self.team(team_id);
        let n = team
            .messages_to
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .len();
        n
    }

    /// Reports a revocation made elsewhere; see [`Hub::subscribe_revocations`]. (Local
    /// revocations go straight to the token cache, which ends streams and long polls itself.)
    pub fn revoke(&self, revocation: RemoteRevocation) {
        let _ = self.revocations.send(revocation);
    }

    /// The team was deleted: its channels go (streams following them see them close), its
    /// waiting claimers are woken (and find their token gone), and the deletion is reported to
    /// [`Hub::subscribe_deleted_teams`].
    pub fn delete_team(&self, team_id: i64) {
        let team = self
            .teams
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&team_id);
        if let Some(team) = team {
            team.claim_waiters.wake_all();
            team.tasks_changed.send_modify(|n| *n += 1);
            team.messages_posted.send_modify(|n| *n += 1);
        }
        let _ = self.deleted_teams.send(team_id);
    }

    pub fn subscribe_deleted_teams(&self) -> broadcast::Receiver<i64> {
        self.deleted_teams.subscribe()
    }

    pub fn subscribe_revocations(&self) -> broadcast::Receiver<RemoteRevocation> {
        self.revocations.subscribe()
    }

    /// The team's waiting claimers.
    pub fn claim_waiters(&self, team_id: i64) -> Arc<ClaimWaiters> {
        self.team(team_id).claim_waiters.clone()
    }

    /// Changes whenever a task of the team may have become claimable.
    pub fn watch_tasks(&self, team_id: i64) -> watch::Receiver<u64> {
        self.team(team_id).tasks_changed.subscribe()
    }

    /// Changes whenever a message is posted in the team.
    pub fn watch_messages(&self, team_id: i64) -> watch::Receiver<u64> {
        self.team(team_id).messages_posted.subscribe()
    }
}

/// A follower of one recipient's messages. Dropping the last follower of a recipient frees its
/// channel, so streams for many distinct `to` values cost nothing once they close.
pub struct ToFollower {
    rx: Option<broadcast::Receiver<Arc<StreamItem>>>,
    team: Arc<TeamChannels>,
    to: String,
}

impl ToFollower {
    pub async fn recv(&mut self) -> Result<Arc<StreamItem>, broadcast::error::RecvError> {
        match self.rx.as_mut() {
            Some(rx) => rx.recv().await,
            None => Err(broadcast::error::RecvError::Closed),
        }
    }
}

impl Drop for ToFollower {
    fn drop(&mut self) {
        let mut by_to = self
            .team
            .messages_to
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        // Under the lock, so no one subscribes between the drop and the count.
        drop(self.rx.take());
        if by_to
            .get(&self.to)
            .is_some_and(|tx| tx.receiver_count() == 0)
        {
            by_to.remove(&self.to);
        }
    }
}

//! `Store` for PostgreSQL: each write is one transaction ([`Tx`]), reads go to the pool.

use super::super::error::{StoreError, StoreResult};
use super::super::read_shares::ReadShare;
use super::super::rules::scope::Held;
use super::super::rules::{MemoryChangeKind, MemoryLimits, ProjectFilter};
use super::super::test_history::{HistoryLimits, StoredRun};
use super::super::types::{
    BytePage, Caller, MemoryChange, MemoryOps, MessageFilter, MessageSearch, Page, Posted,
    ProgressQuery, StreamCursors, TaskFilter,
};
use super::super::Store;
use super::db::{Db, Reader};
use super::rows::{event_from_row, load_task};
use super::tx::Tx;
use super::{
    agents, claims, completions, gates, memory, messages, task_create, tasks, test_history,
    PostgresStore,
};
use async_trait::async_trait;
use huddle_wire::{
    Agent, Event, Memory, Message, NewTask, PostMessage, Role, Task, TaskPatch, TaskStatus, Team,
};

/// Runs `$body` (an expression using `tx`) in a fresh transaction of its own and commits it.
macro_rules! in_tx {
    ($self:ident, |$tx:ident| $body:expr) => {{
        let mut $tx = $self.begin().await?;
        let out = $body;
        $tx.commit().await?;
        Ok(out)
    }};
}

/// Runs `$body` (an expression using `tx: &mut Tx` and owned copies of `$var`s) in the next
/// transaction of `$team`'s writes, which may hold several requests' writes (`batcher.rs`).
/// The body may run twice, so it takes fresh copies each time.
macro_rules! batched {
    ($self:ident, $team:expr, [$($var:ident),*], |$tx:ident| $body:expr) => {{
        $(let $var = $var.to_owned();)*
        $self
            .batcher
            .write($team, move |$tx: &mut Tx| {
                $(let $var = $var.clone();)*
                Box::pin(async move { $body })
            })
            .await
    }};
}

/// A pooled reader held within its team's share; the connection goes back before the share.
struct TeamReader {
    reader: Reader,
    _share: ReadShare,
}

impl TeamReader {
    fn db(&mut self) -> Db<'_> {
        self.reader.db()
    }
}

/// The longest a heartbeat waits for its mark (`claims::hear_heartbeat`) before it goes on.
const MARK_WAIT: std::time::Duration = std::time::Duration::from_secs(1);

impl PostgresStore {
    fn page(&self, limit: usize) -> usize {
        limit.clamp(1, self.options.limits.max_page_size.max(1))
    }

    fn memory_limits(&self) -> MemoryLimits {
        MemoryLimits {
            max_depth: self.options.limits.max_json_depth,
            max_bytes: self.options.memory_max_bytes,
            history: self.options.memory_history_limit.max(1),
        }
    }

    /// A pooled connection for reads (`db.rs`: in a transaction behind a pooler).
    async fn read(&self) -> StoreResult<Reader> {
        Ok(self.pool.read().await?)
    }

    /// A pooled connection for a read of `team_id`, within the team's share of the pool
    /// (`[limits] max_reads_per_team`, `read_shares.rs`).
    /// Each wait is bounded by `acquire_timeout_ms` on its own: the share's here, the
    /// connection's by the pool. (A pool acquire or `BEGIN` is not cancelled half-way.)
    async fn read_team(&self, team_id: i64) -> StoreResult<TeamReader> {
        let share = self.read_shares.enter(team_id).await?;
        Ok(TeamReader {
            reader: self.read().await?,
            _share: share,
        })
    }

    async fn begin(&self) -> StoreResult<Tx> {
        if self.pool.is_closed() {
            return Err(StoreError::Unavailable("the store is closed".into()));
        }
        Tx::begin(&self.pool).await
    }

    async fn memory_change(
        &self,
        caller: &Caller,
        kind: MemoryChangeKind,
        patch: serde_json::Value,
        if_match: Option<i64>,
    ) -> StoreResult<Memory> {
        let limits = self.memory_limits();
        let quota_limits = &self.options.limits;
        batched!(self, caller.team_id, [caller, patch, quota_limits], |tx| {
            memory::change(tx, &caller, kind, patch, if_match, limits, &quota_limits).await
        })
    }
}

#[async_trait]
impl Store for PostgresStore {
    async fn create_team(&self, name: &str) -> StoreResult<Team> {
        in_tx!(self, |tx| agents::create_team(&mut tx, name).await?)
    }

    async fn list_teams(&self) -> StoreResult<Vec<Team>> {
        agents::list_teams(self.read().await?.db()).await
    }

    async fn team_id(&self, name: &str) -> StoreResult<i64> {
        agents::team_id(self.read().await?.db(), name).await
    }

    async fn create_agent(
        &self,
        team_id: i64,
        name: &str,
        role: Role,
        token_hash: &str,
    ) -> StoreResult<Agent> {
        let max_agents = self.options.limits.max_agents_per_team;
        in_tx!(self, |tx| agents::create_agent(
            &mut tx, team_id, name, role, token_hash, max_agents
        )
        .await?)
    }

    async fn authenticate(&self, token_hash: &str) -> StoreResult<Option<Caller>> {
        agents::authenticate(self.read().await?.db(), token_hash).await
    }

    async fn set_agent_token(
        &self,
        team_id: i64,
        name: &str,
        token_hash: Option<&str>,
    ) -> StoreResult<(Agent, String)> {
        let max_agents = self.options.limits.max_agents_per_team;
        in_tx!(self, |tx| agents::set_token(
            &mut tx, team_id, name, token_hash, max_agents
        )
        .await?)
    }

    async fn list_agents(&self, team_id: i64) -> StoreResult<Vec<Agent>> {
        agents::list_agents(self.read_team(team_id).await?.db(), team_id).await
    }

    async fn create_tasks(&self, caller: &Caller, new: Vec<NewTask>) -> StoreResult<Vec<Task>> {
        let limits = &self.options.limits;
        let default_max = self.options.default_max_attempts;
        let created: Vec<Task> = batched!(self, caller.team_id, [caller, new, limits], |tx| {
            let mut new = new;
            let asks: Vec<_> = new.iter_mut().map(|t| t.gate.take()).collect();
            let mut created = task_create::create(tx, &caller, new, default_max, &limits).await?;
            // Gated in the same transaction, so no waiting claimer sees the task ungated.
            for (task, gate) in created.iter_mut().zip(asks) {
                if let Some(gate) = gate {
                    *task = gates::ask(tx, &caller, &task.id, &gate, default_max, &limits)
                        .await?
                        .1;
                }
            }
            Ok(created)
        })?;
        self.analyzer.tasks_created(created.len());
        Ok(created)
    }

    async fn list_tasks(&self, team_id: i64, mut filter: TaskFilter) -> StoreResult<Page<Task>> {
        filter.limit = self.page(filter.limit);
        tasks::list(self.read_team(team_id).await?.db(), team_id, &filter).await
    }

    async fn get_task(&self, team_id: i64, id: &str) -> StoreResult<Task> {
        load_task(self.read_team(team_id).await?.db(), team_id, id).await
    }

    async fn scope_held(&self, team_id: i64) -> StoreResult<Vec<Held>> {
        super::scope_claims::held(self.read_team(team_id).await?.db(), team_id).await
    }

    async fn update_task(
        &self,
        caller: &Caller,
        id: &str,
        patch: TaskPatch,
        if_match: Option<i64>,
    ) -> StoreResult<Task> {
        let limits = &self.options.limits;
        batched!(self, caller.team_id, [caller, id, patch, limits], |tx| {
            let cancels = patch.status == Some(TaskStatus::Cancelled);
            gates::check_patch(tx, &caller, &id, &patch).await?;
            if patch.status == Some(TaskStatus::Pending) {
                gates::check_reopen(tx, &caller, &id).await?;
            }
            let task = tasks::update(tx, &caller, &id, patch, if_match, &limits).await?;
            if cancels {
                gates::withdraw_for(tx, &caller, &task).await?;
            }
            Ok(task)
        })
    }

    async fn claim_project_tasks(
        &self,
        caller: &Caller,
        prefixes: Vec<String>,
        project: Option<ProjectFilter>,
        lease_ms: u64,
        max: usize,
    ) -> StoreResult<Vec<Task>> {
        batched!(self, caller.team_id, [caller, prefixes, project], |tx| {
            claims::claim(tx, &caller, &prefixes, project.as_ref(), lease_ms, max).await
        })
    }

    async fn heartbeat(&self, caller: &Caller, id: &str, lease_ms: u64) -> StoreResult<Task> {
        // Marked on arrival, for other replicas' sweeps, on a connection no team's batches
        // can tie up; then applied in the team's turn. The mark only protects the lease
        // meanwhile: one that fails or is slow is left out, never the heartbeat.
        let mark = async {
            let mut tx = self.marks.begin().await?;
            claims::hear_heartbeat(tx.db(), caller, id, lease_ms).await?;
            tx.commit().await?;
            StoreResult::Ok(())
        };
        match tokio::time::timeout(MARK_WAIT, mark).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => tracing::debug!(error = %e, "heartbeat not marked"),
            Err(_) => tracing::debug!("heartbeat not marked within {MARK_WAIT:?}"),
        }
        batched!(self, caller.team_id, [caller, id], |tx| {
            claims::heartbeat(tx, &caller, &id, lease_ms).await
        })
    }

    async fn complete_task(
        &self,
        caller: &Caller,
        id: &str,
        result: Option<serde_json::Value>,
    ) -> StoreResult<Task> {
        batched!(self, caller.team_id, [caller, id, result], |tx| {
            completions::complete(tx, &caller, &id, result).await
        })
    }

    async fn complete_tasks(
        &self,
        caller: &Caller,
        items: Vec<(String, Option<serde_json::Value>)>,
    ) -> StoreResult<Vec<Task>> {
        batched!(self, caller.team_id, [caller, items], |tx| {
            completions::complete_many(tx, &caller, items).await
        })
    }

    async fn fail_task(
        &self,
        caller: &Caller,
        id: &str,
        reason: String,
        final_: bool,
        result: Option<serde_json::Value>,
    ) -> StoreResult<Task> {
        batched!(self, caller.team_id, [caller, id, reason, result], |tx| {
            claims::fail(tx, &caller, &id, reason, final_, result).await
        })
    }

    async fn release_task(&self, caller: &Caller, id: &str) -> StoreResult<Task> {
        batched!(self, caller.team_id, [caller, id], |tx| {
            claims::release(tx, &caller, &id).await
        })
    }

    async fn record_presence(&self, seen: Vec<(i64, String, i64)>) -> StoreResult<()> {
        // A write: committed (a read's transaction behind a pooler is rolled back).
        let mut tx = self.pool.begin().await?;
        agents::record_presence(tx.db(), &seen).await?;
        Ok(tx.commit().await?)
    }

    async fn expire_leases(&self) -> StoreResult<usize> {
        // Not while cut off: leases are renewed first when the database returns (`health`).
        self.health.serving()?;
        let mut moved = 0;
        // Judged as of now by the database's clock, when the sweep starts, and through each
        // team's write queue, so the heartbeats this replica received before the sweep are
        // applied before it judges their leases; a team's lock is held only for its own leases.
        let now: i64 = sqlx::query_scalar(&format!("select {}", super::DB_NOW_MS))
            .fetch_one(self.read().await?.db())
            .await?;
        let teams = claims::teams_with_expired_leases(self.read().await?.db(), now).await?;
        for team_id in teams {
            let expired = batched!(self, team_id, [], |tx| {
                claims::expire_team_leases(tx, team_id, now).await
            });
            match expired {
                Ok(n) => moved += n,
                // Deleted since it was listed: nothing of it is left to expire.
                Err(StoreError::NotFound { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(moved)
    }

    async fn prune(
        &self,
        policy: &crate::store::retention::RetentionPolicy,
    ) -> StoreResult<crate::store::retention::Pruned> {
        self.health.serving()?;
        super::retention::prune(&self.pool, policy).await
    }

    async fn post_message(
        &self,
        caller: &Caller,
        post: PostMessage,
        idempotency_key: Option<String>,
    ) -> StoreResult<Posted> {
        let limits = &self.options.limits;
        batched!(
            self,
            caller.team_id,
            [caller, post, idempotency_key, limits],
            |tx| messages::post(tx, &caller, post, idempotency_key, &limits, &mut None).await
        )
    }

    async fn post_message_changing_memory(
        &self,
        caller: &Caller,
        post: PostMessage,
        ops: MemoryOps,
    ) -> StoreResult<(Posted, Memory)> {
        let limits = &self.options.limits;
        let memory_limits = self.memory_limits();
        batched!(self, caller.team_id, [caller, post, ops, limits], |tx| {
            // The post takes the team lock first, so the document read next is the latest.
            let posted = messages::post(tx, &caller, post, None, &limits, &mut None).await?;
            let ops = ops(&memory::get(tx.conn(), caller.team_id).await?.doc);
            let kind = MemoryChangeKind::JsonPatch;
            let memory =
                memory::change(tx, &caller, kind, ops, None, memory_limits, &limits).await?;
            Ok((posted, memory))
        })
    }

    async fn post_messages(
        &self,
        caller: &Caller,
        items: Vec<(PostMessage, Option<String>)>,
    ) -> StoreResult<Vec<Posted>> {
        let limits = &self.options.limits;
        batched!(self, caller.team_id, [caller, items, limits], |tx| {
            messages::post_many(tx, &caller, items, &limits).await
        })
    }

    async fn list_messages(
        &self,
        team_id: i64,
        mut filter: MessageFilter,
    ) -> StoreResult<BytePage<Message>> {
        filter.limit = self.page(filter.limit);
        messages::list(self.read_team(team_id).await?.db(), team_id, &filter).await
    }

    async fn task_progress(
        &self,
        team_id: i64,
        mut q: ProgressQuery,
    ) -> StoreResult<(Vec<Message>, i64)> {
        q.limit = self.page(q.limit);
        super::progress::task_progress(self.read_team(team_id).await?.db(), team_id, &q).await
    }

    async fn search_messages(
        &self,
        team_id: i64,
        mut search: MessageSearch,
    ) -> StoreResult<(BytePage<Message>, i64)> {
        search.limit = self.page(search.limit);
        super::search::search(self.read_team(team_id).await?.db(), team_id, &search).await
    }

    async fn inbox(
        &self,
        caller: &Caller,
        limit: usize,
        max_bytes: usize,
    ) -> StoreResult<BytePage<Message>> {
        messages::inbox(
            self.read_team(caller.team_id).await?.db(),
            caller,
            self.page(limit),
            max_bytes,
        )
        .await
    }

    async fn ack_inbox(&self, caller: &Caller, seq: i64) -> StoreResult<i64> {
        batched!(self, caller.team_id, [caller], |tx| {
            messages::ack(tx, &caller, seq).await
        })
    }

    async fn get_memory(&self, team_id: i64) -> StoreResult<Memory> {
        memory::get(self.read_team(team_id).await?.db(), team_id).await
    }

    async fn patch_memory(
        &self,
        caller: &Caller,
        patch: serde_json::Value,
        if_match: Option<i64>,
    ) -> StoreResult<Memory> {
        self.memory_change(caller, MemoryChangeKind::Merge, patch, if_match)
            .await
    }

    async fn replace_memory(
        &self,
        caller: &Caller,
        doc: serde_json::Value,
        if_match: Option<i64>,
    ) -> StoreResult<Memory> {
        self.memory_change(caller, MemoryChangeKind::Replace, doc, if_match)
            .await
    }

    async fn json_patch_memory(
        &self,
        caller: &Caller,
        ops: serde_json::Value,
        if_match: Option<i64>,
    ) -> StoreResult<Memory> {
        self.memory_change(caller, MemoryChangeKind::JsonPatch, ops, if_match)
            .await
    }

    async fn memory_history(
        &self,
        team_id: i64,
        before: Option<i64>,
        limit: usize,
        max_bytes: usize,
    ) -> StoreResult<BytePage<MemoryChange>> {
        memory::history(
            self.read_team(team_id).await?.db(),
            team_id,
            before,
            self.page(limit),
            max_bytes,
        )
        .await
    }

    #[tracing::instrument(skip(self, run), fields(project = %run.project))]
    async fn record_test_run(
        &self,
        caller: &Caller,
        run: huddle_wire::NewTestRun,
    ) -> StoreResult<huddle_wire::TestRunSummary> {
        let limits = HistoryLimits::new(&self.options.limits, &self.options.history);
        batched!(self, caller.team_id, [caller, run, limits], |tx| {
            test_history::record(tx, &caller, run, &limits).await
        })
    }

    async fn test_projects(&self, team_id: i64) -> StoreResult<Vec<String>> {
        test_history::projects(self.read_team(team_id).await?.db(), team_id).await
    }

    async fn test_runs(
        &self,
        team_id: i64,
        project: &str,
        with_outcomes: bool,
    ) -> StoreResult<Vec<StoredRun>> {
        let _share = self.read_shares.enter(team_id).await?;
        test_history::runs(&self.pool, team_id, project, with_outcomes).await
    }

    async fn cursors(&self, team_id: i64) -> StoreResult<StreamCursors> {
        let (events, messages): (i64, i64) =
            sqlx::query_as("select event_seq, msg_seq from teams where id = $1")
                .bind(team_id)
                .fetch_optional(self.read().await?.db())
                .await?
                .ok_or_else(|| StoreError::not_found("team"))?;
        Ok(StreamCursors { events, messages })
    }

    async fn task_events(
        &self,
        team_id: i64,
        task_id: &str,
        limit: usize,
    ) -> StoreResult<Vec<Event>> {
        let rows = sqlx::query(
            "select seq, type, data, created_at from events
             where team_id = $1 and type like 'task.%' and (data::jsonb ->> 'id') = $2
             order by seq desc limit $3",
        )
        .bind(team_id)
        .bind(task_id)
        .bind(limit.clamp(1, 1_000) as i64)
        .fetch_all(self.read_team(team_id).await?.db())
        .await?;
        Ok(rows.iter().map(event_from_row).collect::<Result<_, _>>()?)
    }

    async fn list_events(&self, team_id: i64, after: i64, limit: usize) -> StoreResult<Vec<Event>> {
        let rows = sqlx::query(
            "select seq, type, data, created_at from events
             where team_id = $1 and seq > $2 order by seq limit $3",
        )
        .bind(team_id)
        .bind(after)
        .bind(limit.clamp(1, 10_000) as i64)
        .fetch_all(self.read_team(team_id).await?.db())
        .await?;
        Ok(rows.iter().map(event_from_row).collect::<Result<_, _>>()?)
    }

    async fn replica_heartbeat(
        &self,
        replica: &str,
        expiry: std::time::Duration,
    ) -> StoreResult<usize> {
        super::replicas::heartbeat(&self.pool, replica, expiry).await
    }

    async fn replica_left(&self, replica: &str) -> StoreResult<()> {
        super::replicas::left(&self.pool, replica).await
    }

    async fn ping(&self) -> StoreResult<()> {
        super::health::ping(&self.pool, &self.health).await
    }

    fn reachability(&self) -> Option<tokio::sync::watch::Receiver<bool>> {
        Some(self.health.watch())
    }

    async fn close(&self) {
        self.stop.cancel();
        if let Some(task) = self.listener.lock().await.take() {
            let _ = task.await;
        }
        if let Some(task) = self.probe.lock().await.take() {
            let _ = task.await;
        }
        self.pool.close().await;
        self.marks.close().await;
        self.direct.close().await;
    }

    fn describe(&self) -> String {
        format!("PostgreSQL {}", super::redact(&self.options.url))
    }
}

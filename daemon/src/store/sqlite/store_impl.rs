//! `Store` for SQLite: writes go to the group-commit writer, reads to the read pool.

use super::super::error::StoreResult;
use super::super::rules::scope::Held;
use super::super::rules::{MemoryChangeKind, MemoryLimits, ProjectFilter};
use super::super::test_history::{HistoryLimits, StoredRun};
use super::super::types::{
    BytePage, Caller, ClaimToPark, HandedOver, MemoryChange, MemoryOps, MessageFilter,
    MessageSearch, Page, Posted, ProgressQuery, StreamCursors, TaskFilter, Undelivered,
};
use super::super::Store;
use super::{
    agents, claims, events, gates, memory, messages, tasks, test_history, writer, SqliteStore,
};
use crate::hub::WaitTicket;
use async_trait::async_trait;
use huddle_wire::{
    Agent, Event, Memory, Message, NewTask, PostMessage, Role, Task, TaskPatch, TaskStatus, Team,
};

impl SqliteStore {
    /// A page size within `[limits] max_page_size` (the HTTP layer refuses larger ones; this
    /// keeps every caller of the trait within it too).
    fn page(&self, limit: usize) -> usize {
        limit.clamp(1, self.options.limits.max_page_size.max(1))
    }

    fn history_limits(&self) -> HistoryLimits {
        HistoryLimits::new(&self.options.limits, &self.options.history)
    }

    fn memory_limits(&self) -> MemoryLimits {
        MemoryLimits {
            max_depth: self.options.limits.max_json_depth,
            max_bytes: self.options.memory_max_bytes,
            history: self.options.memory_history_limit.max(1),
        }
    }
}

#[async_trait]
impl Store for SqliteStore {
    #[tracing::instrument(skip(self))]
    async fn create_team(&self, name: &str) -> StoreResult<Team> {
        let name = name.to_string();
        self.writer()?
            .write(move |ctx| agents::create_team(ctx, &name))
            .await
    }

    async fn list_teams(&self) -> StoreResult<Vec<Team>> {
        self.readers.read(agents::list_teams).await
    }

    async fn team_id(&self, name: &str) -> StoreResult<i64> {
        let name = name.to_string();
        self.readers
            .read(move |conn| agents::team_id(conn, &name))
            .await
    }

    #[tracing::instrument(skip(self, token_hash))]
    async fn create_agent(
        &self,
        team_id: i64,
        name: &str,
        role: Role,
        token_hash: &str,
    ) -> StoreResult<Agent> {
        let (name, hash) = (name.to_string(), token_hash.to_string());
        let max_agents = self.options.limits.max_agents_per_team;
        self.writer()?
            .write_team(team_id, move |ctx| {
                agents::create_agent(ctx, team_id, &name, role, &hash, max_agents)
            })
            .await
    }

    async fn authenticate(&self, token_hash: &str) -> StoreResult<Option<Caller>> {
        let hash = token_hash.to_string();
        self.readers
            .read(move |conn| agents::authenticate(conn, &hash))
            .await
    }

    #[tracing::instrument(skip(self, token_hash))]
    async fn set_agent_token(
        &self,
        team_id: i64,
        name: &str,
        token_hash: Option<&str>,
    ) -> StoreResult<(Agent, String)> {
        let (name, hash) = (name.to_string(), token_hash.map(str::to_string));
        let max_agents = self.options.limits.max_agents_per_team;
        self.writer()?
            .write_team(team_id, move |ctx| {
                agents::set_token(ctx, team_id, &name, hash.as_deref(), max_agents)
            })
            .await
    }

    async fn list_agents(&self, team_id: i64) -> StoreResult<Vec<Agent>> {
        self.readers
            .read_team(team_id, move |conn| agents::list_agents(conn, team_id))
            .await
    }

    #[tracing::instrument(skip(self, caller, tasks), fields(count = tasks.len()))]
    async fn create_tasks(&self, caller: &Caller, tasks: Vec<NewTask>) -> StoreResult<Vec<Task>> {
        let caller = caller.clone();
        let default_max = self.options.default_max_attempts;
        let limits = self.options.limits.clone();
        self.writer()?
            .write_team(caller.team_id, move |ctx| {
                let mut tasks = tasks;
                let asks: Vec<_> = tasks.iter_mut().map(|t| t.gate.take()).collect();
                let mut created = tasks::create(ctx, &caller, tasks, default_max, &limits)?;
                // Gated in the same job, so no waiting claimer sees the task ungated.
                for (task, gate) in created.iter_mut().zip(asks) {
                    if let Some(gate) = gate {
                        *task = gates::ask(ctx, &caller, &task.id, &gate, default_max, &limits)?.1;
                    }
                }
                Ok(created)
            })
            .await
    }

    async fn list_tasks(&self, team_id: i64, mut filter: TaskFilter) -> StoreResult<Page<Task>> {
        filter.limit = self.page(filter.limit);
        self.readers
            .read_team(team_id, move |conn| tasks::list(conn, team_id, &filter))
            .await
    }

    async fn get_task(&self, team_id: i64, id: &str) -> StoreResult<Task> {
        let id = id.to_string();
        self.readers
            .read_team(team_id, move |conn| {
                super::rows::load_task(conn, team_id, &id)
            })
            .await
    }

    async fn scope_held(&self, team_id: i64) -> StoreResult<Vec<Held>> {
        self.readers
            .read_team(team_id, move |conn| super::scopes::held(conn, team_id))
            .await
    }

    #[tracing::instrument(skip(self, caller, patch))]
    async fn update_task(
        &self,
        caller: &Caller,
        id: &str,
        patch: TaskPatch,
        if_match: Option<i64>,
    ) -> StoreResult<Task> {
        let (caller, id) = (caller.clone(), id.to_string());
        let limits = self.options.limits.clone();
        self.writer()?
            .write_team(caller.team_id, move |ctx| {
                let cancels = patch.status == Some(TaskStatus::Cancelled);
                gates::check_patch(ctx, &caller, &id, &patch)?;
                if patch.status == Some(TaskStatus::Pending) {
                    gates::check_reopen(ctx, &caller, &id)?;
                }
                let task = tasks::update(ctx, &caller, &id, patch, if_match, &limits)?;
                if cancels {
                    gates::withdraw_for(ctx, &caller, &task)?;
                }
                Ok(task)
            })
            .await
    }

    async fn claim_project_tasks(
        &self,
        caller: &Caller,
        prefixes: Vec<String>,
        project: Option<ProjectFilter>,
        lease_ms: u64,
        max: usize,
    ) -> StoreResult<Vec<Task>> {
        let writer = self.writer()?;
        let now_ms = chrono::Utc::now().timestamp_millis();
        let (team_id, agent, role) = (caller.team_id, &caller.agent, caller.role.as_str());
        if self.empty_claims.known_empty(
            team_id,
            &prefixes,
            project.as_ref(),
            (agent, role),
            now_ms,
        ) {
            crate::metrics::claim_known_empty();
            return Ok(Vec::new());
        }
        let caller = caller.clone();
        writer
            .write_team(caller.team_id, move |ctx| {
                claims::claim(ctx, &caller, &prefixes, project.as_ref(), lease_ms, max)
            })
            .await
    }

    fn park_claim(
        &self,
        ticket: &WaitTicket,
        caller: &Caller,
        claim: ClaimToPark<'_>,
        undelivered: Undelivered,
    ) -> Option<HandedOver> {
        Some(writer::park(ticket, caller, claim, undelivered))
    }

    async fn heartbeat(&self, caller: &Caller, id: &str, lease_ms: u64) -> StoreResult<Task> {
        let (caller, id) = (caller.clone(), id.to_string());
        self.writer()?
            .write_team(caller.team_id, move |ctx| {
                claims::heartbeat(ctx, &caller, &id, lease_ms)
            })
            .await
    }

    async fn complete_task(
        &self,
        caller: &Caller,
        id: &str,
        result: Option<serde_json::Value>,
    ) -> StoreResult<Task> {
        let (caller, id) = (caller.clone(), id.to_string());
        self.writer()?
            .write_team(caller.team_id, move |ctx| {
                claims::complete(ctx, &caller, &id, result)
            })
            .await
    }

    async fn complete_tasks(
        &self,
        caller: &Caller,
        items: Vec<(String, Option<serde_json::Value>)>,
    ) -> StoreResult<Vec<Task>> {
        let caller = caller.clone();
        self.writer()?
            .write_team(caller.team_id, move |ctx| {
                items
                    .into_iter()
                    .map(|(id, result)| claims::complete(ctx, &caller, &id, result))
                    .collect()
            })
            .await
    }

    async fn fail_task(
        &self,
        caller: &Caller,
        id: &str,
        reason: String,
        final_: bool,
        result: Option<serde_json::Value>,
    ) -> StoreResult<Task> {
        let (caller, id) = (caller.clone(), id.to_string());
        self.writer()?
            .write_team(caller.team_id, move |ctx| {
                claims::fail(ctx, &caller, &id, reason, final_, result)
            })
            .await
    }

    async fn release_task(&self, caller: &Caller, id: &str) -> StoreResult<Task> {
        let (caller, id) = (caller.clone(), id.to_string());
        self.writer()?
            .write_team(caller.team_id, move |ctx| {
                claims::release(ctx, &caller, &id)
            })
            .await
    }

    async fn expire_leases(&self) -> StoreResult<usize> {
        // Judged as of now, before the job queues: a heartbeat that arrived before the sweep is
        // ahead of it in the writer's queue (jobs run in the order they were sent), so however
        // long the writer stalls, a lease heartbeated on time is extended before it is judged.
        // A heartbeat still waiting for a slot in its team's queue is not ahead of it yet: then
        // as of that heartbeat's arrival (`unsent.rs`).
        let writer = self.writer()?;
        let cutoff = writer.sweep_cutoff_ms();
        writer
            .write(move |ctx| claims::expire_leases(ctx, cutoff))
            .await
    }

    async fn prune(
        &self,
        policy: &crate::store::retention::RetentionPolicy,
    ) -> StoreResult<crate::store::retention::Pruned> {
        let policy = policy.clone();
        self.writer()?
            .write(move |ctx| super::retention::prune(ctx, &policy))
            .await
    }

    async fn record_presence(&self, seen: Vec<(i64, String, i64)>) -> StoreResult<()> {
        self.writer()?
            .write(move |ctx| agents::record_presence(ctx, &seen))
            .await
    }

    #[tracing::instrument(skip(self, caller, post))]
    async fn post_message(
        &self,
        caller: &Caller,
        post: PostMessage,
        idempotency_key: Option<String>,
    ) -> StoreResult<Posted> {
        let caller = caller.clone();
        let limits = self.options.limits.clone();
        self.writer()?
            .write_team(caller.team_id, move |ctx| {
                let mut quota = messages::one_post_quota(ctx, caller.team_id, &limits)?;
                messages::post(ctx, &caller, post, idempotency_key, &limits, &mut quota)
            })
            .await
    }

    async fn post_message_changing_memory(
        &self,
        caller: &Caller,
        post: PostMessage,
        ops: MemoryOps,
    ) -> StoreResult<(Posted, Memory)> {
        let caller = caller.clone();
        let limits = self.options.limits.clone();
        let memory_limits = self.memory_limits();
        self.writer()?
            .write_team(caller.team_id, move |ctx| {
                let mut quota = messages::one_post_quota(ctx, caller.team_id, &limits)?;
                let posted = messages::post(ctx, &caller, post, None, &limits, &mut quota)?;
                let ops = ops(&memory::get(ctx.conn, caller.team_id)?.doc);
                let kind = MemoryChangeKind::JsonPatch;
                let memory = memory::change(ctx, &caller, kind, ops, None, memory_limits, &limits)?;
                Ok((posted, memory))
            })
            .await
    }

    async fn post_messages(
        &self,
        caller: &Caller,
        items: Vec<(PostMessage, Option<String>)>,
    ) -> StoreResult<Vec<Posted>> {
        let caller = caller.clone();
        let limits = self.options.limits.clone();
        self.writer()?
            .write_team(caller.team_id, move |ctx| {
                messages::post_many(ctx, &caller, items, &limits)
            })
            .await
    }

    async fn list_messages(
        &self,
        team_id: i64,
        mut filter: MessageFilter,
    ) -> StoreResult<BytePage<Message>> {
        filter.limit = self.page(filter.limit);
        self.readers
            .read_team(team_id, move |conn| messages::list(conn, team_id, &filter))
            .await
    }

    async fn task_progress(
        &self,
        team_id: i64,
        mut q: ProgressQuery,
    ) -> StoreResult<(Vec<Message>, i64)> {
        q.limit = self.page(q.limit);
        self.readers
            .read_team(team_id, move |conn| {
                super::progress::task_progress(conn, team_id, &q)
            })
            .await
    }

    async fn search_messages(
        &self,
        team_id: i64,
        mut search: MessageSearch,
    ) -> StoreResult<(BytePage<Message>, i64)> {
        search.limit = self.page(search.limit);
        if !search.words.is_empty() {
            // Words need the index: the team's messages posted until now go in first.
            let upto = self.cursors(team_id).await?.messages;
            let writer = self.writer()?;
            while !writer
                .write_team(team_id, move |ctx| {
                    super::search::index_pending(ctx.conn, team_id, upto)
                })
                .await?
            {}
        }
        self.readers
            .read_team(team_id, move |conn| {
                super::search::search(conn, team_id, &search)
            })
            .await
    }

    async fn inbox(
        &self,
        caller: &Caller,
        limit: usize,
        max_bytes: usize,
    ) -> StoreResult<BytePage<Message>> {
        let (caller, limit) = (caller.clone(), self.page(limit));
        self.readers
            .read_team(caller.team_id, move |conn| {
                messages::inbox(conn, &caller, limit, max_bytes)
            })
            .await
    }

    async fn ack_inbox(&self, caller: &Caller, seq: i64) -> StoreResult<i64> {
        let caller = caller.clone();
        self.writer()?
            .write_team(caller.team_id, move |ctx| messages::ack(ctx, &caller, seq))
            .await
    }

    async fn get_memory(&self, team_id: i64) -> StoreResult<Memory> {
        self.readers
            .read_team(team_id, move |conn| memory::get(conn, team_id))
            .await
    }

    #[tracing::instrument(skip(self, patch))]
    async fn patch_memory(
        &self,
        caller: &Caller,
        patch: serde_json::Value,
        if_match: Option<i64>,
    ) -> StoreResult<Memory> {
        let (caller, limits) = (caller.clone(), self.memory_limits());
        let quota_limits = self.options.limits.clone();
        self.writer()?
            .write_team(caller.team_id, move |ctx| {
                memory::change(
                    ctx,
                    &caller,
                    MemoryChangeKind::Merge,
                    patch,
                    if_match,
                    limits,
                    &quota_limits,
                )
            })
            .await
    }

    #[tracing::instrument(skip(self, ops))]
    async fn json_patch_memory(
        &self,
        caller: &Caller,
        ops: serde_json::Value,
        if_match: Option<i64>,
    ) -> StoreResult<Memory> {
        let (caller, limits) = (caller.clone(), self.memory_limits());
        let quota_limits = self.options.limits.clone();
        self.writer()?
            .write_team(caller.team_id, move |ctx| {
                memory::change(
                    ctx,
                    &caller,
                    MemoryChangeKind::JsonPatch,
                    ops,
                    if_match,
                    limits,
                    &quota_limits,
                )
            })
            .await
    }

    #[tracing::instrument(skip(self, doc))]
    async fn replace_memory(
        &self,
        caller: &Caller,
        doc: serde_json::Value,
        if_match: Option<i64>,
    ) -> StoreResult<Memory> {
        let (caller, limits) = (caller.clone(), self.memory_limits());
        let quota_limits = self.options.limits.clone();
        self.writer()?
            .write_team(caller.team_id, move |ctx| {
                memory::change(
                    ctx,
                    &caller,
                    MemoryChangeKind::Replace,
                    doc,
                    if_match,
                    limits,
                    &quota_limits,
                )
            })
            .await
    }

    async fn memory_history(
        &self,
        team_id: i64,
        before: Option<i64>,
        limit: usize,
        max_bytes: usize,
    ) -> StoreResult<BytePage<MemoryChange>> {
        let limit = self.page(limit);
        self.readers
            .read_team(team_id, move |conn| {
                memory::history(conn, team_id, before, limit, max_bytes)
            })
            .await
    }

    #[tracing::instrument(skip(self, run), fields(project = %run.project))]
    async fn record_test_run(
        &self,
        caller: &Caller,
        run: huddle_wire::NewTestRun,
    ) -> StoreResult<huddle_wire::TestRunSummary> {
        let caller = caller.clone();
        let limits = self.history_limits();
        self.writer()?
            .write_team(caller.team_id, move |ctx| {
                test_history::record(ctx, &caller, run, &limits)
            })
            .await
    }

    async fn test_projects(&self, team_id: i64) -> StoreResult<Vec<String>> {
        self.readers
            .read_team(team_id, move |conn| test_history::projects(conn, team_id))
            .await
    }

    async fn test_runs(
        &self,
        team_id: i64,
        project: &str,
        with_outcomes: bool,
    ) -> StoreResult<Vec<StoredRun>> {
        let project = project.to_string();
        self.readers
            .read_team(team_id, move |conn| {
                test_history::runs(conn, team_id, &project, with_outcomes)
            })
            .await
    }

    async fn list_events(&self, team_id: i64, after: i64, limit: usize) -> StoreResult<Vec<Event>> {
        self.readers
            .read_team(team_id, move |conn| {
                events::list(conn, team_id, after, limit)
            })
            .await
    }

    async fn task_events(
        &self,
        team_id: i64,
        task_id: &str,
        limit: usize,
    ) -> StoreResult<Vec<Event>> {
        let task_id = task_id.to_string();
        self.readers
            .read_team(team_id, move |conn| {
                events::for_task(conn, team_id, &task_id, limit)
            })
            .await
    }

    async fn cursors(&self, team_id: i64) -> StoreResult<StreamCursors> {
        self.readers
            .read(move |conn| events::cursors(conn, team_id))
            .await
    }

    async fn ping(&self) -> StoreResult<()> {
        self.writer()?;
        self.readers
            .read(|conn| Ok(conn.query_row("select 1", [], |_| Ok(()))?))
            .await
    }

    async fn writable(&self) -> StoreResult<()> {
        let dir = self.options.path.parent().map(ToOwned::to_owned);
        let dir = dir.unwrap_or_else(|| ".".into());
        tokio::task::spawn_blocking(move || super::probe::probe_writes(&dir))
            .await
            .map_err(|e| crate::store::error::StoreError::Internal(e.to_string()))?
    }

    async fn close(&self) {
        self.shut_down().await;
    }

    fn describe(&self) -> String {
        format!(
            "{} (synchronous={:?})",
            self.options.path.display(),
            self.options.synchronous
        )
    }
}

//! A team on a test daemon with in-process tester and executor workers running the built-in
//! roles, and helpers to wait on tasks and read messages.

use super::LlmStub;
use crate::{eventually, TestDaemon, ADMIN};
use huddle_sdk::llm::LlmSettings;
use huddle_sdk::roles::{ExecutorRole, RoleSettings, TesterRole};
use huddle_sdk::wire::{Message, Role, Task, TaskStatus};
use huddle_sdk::{Client, MessageQuery, Worker};
use std::path::Path;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

pub struct Team {
    pub daemon: TestDaemon,
    pub coord: Client,
    pub tester: Client,
    pub executor: Client,
    /// The tester's token, for the `huddle` binary.
    pub tester_token: String,
    stop: CancellationToken,
}

impl Drop for Team {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// A daemon, team `qa`, and a coordinator, a tester and an executor.
pub async fn team() -> Team {
    let daemon = TestDaemon::start().await;
    let admin = Client::new(&daemon.url, ADMIN).unwrap().with_team("qa");
    admin.create_team("qa").await.unwrap();
    let token = |name: &'static str, role: Role| {
        let admin = admin.clone();
        async move { admin.create_agent(name, role).await.unwrap().token }
    };
    let coord = admin.with_token(&token("coordinator", Role::Coordinator).await);
    let tester_token = token("tester", Role::Tester).await;
    let tester = admin.with_token(&tester_token);
    let executor = admin.with_token(&token("executor", Role::Executor).await);
    Team {
        daemon,
        coord,
        tester,
        executor,
        tester_token,
        stop: CancellationToken::new(),
    }
}

/// Model settings pointing at `stub`: short backoff, a 10 s timeout unless given.
pub fn llm(stub: &LlmStub, timeout_secs: u64) -> LlmSettings {
    LlmSettings {
        base_url: Some(stub.base_url.clone()),
        model: Some("stub-model".into()),
        api_key: Some(stub.key.clone()),
        timeout_secs: Some(timeout_secs),
        retry_backoff_ms: Some(10),
        ..LlmSettings::default()
    }
}

/// Role settings for `project`, with the stub as the model when given, and its worktree pools
/// beside it.
pub fn settings(project: &Path, stub: Option<&LlmStub>) -> RoleSettings {
    let mut s = RoleSettings::new(project);
    // The worktrees beside the project, in its temporary directory: gone with it.
    s.workspace.root = Some(project.parent().unwrap_or(project).join("huddle-worktrees"));
    match stub {
        Some(stub) => s.with_llm(llm(stub, 10)).unwrap(),
        None => s,
    }
}

impl Team {
    /// Starts a tester worker with `settings` until the team is dropped.
    pub fn start_tester(&self, settings: RoleSettings) {
        let w = Worker::new(self.tester.clone(), TesterRole::new(settings))
            .role(Role::Tester)
            .wait(Duration::from_millis(500));
        tokio::spawn(w.run_until(self.stop.clone()));
    }

    /// Cancelled when the team is dropped: for workers a test starts itself.
    pub fn stop_token(&self) -> CancellationToken {
        self.stop.clone()
    }

    /// Starts an executor worker with `settings` until the team is dropped.
    pub fn start_executor(&self, settings: RoleSettings) {
        let w = Worker::new(self.executor.clone(), ExecutorRole::new(settings))
            .role(Role::Executor)
            .wait(Duration::from_millis(500));
        tokio::spawn(w.run_until(self.stop.clone()));
    }

    /// Waits (up to 7 minutes: a fix cycle of several full runs, with CI's other suites on the
    /// same two cores, took over 3) for `id` to be completed or failed, then for its verdict: the
    /// roles post `test_result` after the task is closed, last of the task's messages — or,
    /// when the cycle could not run at all, an `error` before it (`model_unreachable` is
    /// followed by a `test_result`).
    pub async fn closed(&self, id: &str) -> Task {
        eventually(420, &format!("{id} closed"), || async {
            let t = self.coord.get_task(id).await.unwrap();
            matches!(t.status, TaskStatus::Completed | TaskStatus::Failed)
        })
        .await;
        eventually(60, &format!("{id}'s verdict on the bus"), || async {
            let all = self
                .coord
                .list_all_messages(&MessageQuery::default())
                .await
                .unwrap();
            all.iter().any(|m| {
                m.data["taskId"] == id
                    && (m.kind == "test_result"
                        || (m.kind == "error" && m.data["code"] != "model_unreachable"))
            })
        })
        .await;
        self.coord.get_task(id).await.unwrap()
    }

    /// The `impl_progress` messages of fix attempts (not the full-run and waiting notes).
    pub async fn fix_progress(&self) -> Vec<Message> {
        let mut all = self.messages("impl_progress").await;
        all.retain(|m| m.data.get("iteration").is_some());
        all
    }

    /// Creates task `id` with `metadata`.
    pub async fn task(&self, id: &str, metadata: serde_json::Value) {
        self.coord
            .create_task(&huddle_sdk::wire::NewTask {
                id: Some(id.into()),
                subject: format!("{id} on the fixture"),
                metadata: Some(metadata),
                ..Default::default()
            })
            .await
            .unwrap();
    }

    /// Messages of `kind`, oldest first.
    pub async fn messages(&self, kind: &str) -> Vec<Message> {
        let q = MessageQuery {
            kind: Some(kind.into()),
            ..Default::default()
        };
        self.coord.list_all_messages(&q).await.unwrap()
    }

    /// The one message of `kind` (asserts there is exactly one).
    pub async fn one(&self, kind: &str) -> Message {
        let mut all = self.messages(kind).await;
        assert_eq!(all.len(), 1, "expected one {kind}: {all:#?}");
        all.remove(0)
    }
}

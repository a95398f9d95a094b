//! The shared task list and claims: create, list, read, update, claim, heartbeat, complete,
//! fail, release.

use super::queries::TaskQuery;
use super::transport::{decode, Call};
use super::{Client, Error};
use crate::wire::{
    ClaimRequest, ClaimedTasks, CompleteItem, CompleteTask, CompleteTasks, FailTask, Heartbeat,
    NewTask, ReleaseTask, Task, TaskList, TaskPatch, WhyNotReady, WorkspaceNote,
};
use reqwest::{Method, Response, StatusCode};
use std::time::Duration;

impl Client {
    /// `POST …/tasks` with one task. Give `id` (`TEST-007`) or only `prefix` (`TEST`) to get the
    /// next number. Sent once (a retry could create a second task).
    pub async fn create_task(&self, task: &NewTask) -> Result<Task, Error> {
        self.json(Call::post(self.team_url(&["tasks"])?).json(task)?)
            .await
    }

    /// `POST …/tasks` with an array: all are created, or none (the error names the culprit).
    pub async fn create_tasks(&self, tasks: &[NewTask]) -> Result<Vec<Task>, Error> {
        self.json(Call::post(self.team_url(&["tasks"])?).json(&tasks)?)
            .await
    }

    /// `GET …/tasks`: one page; `next` is the cursor for [`TaskQuery::after`].
    pub async fn list_tasks(&self, query: &TaskQuery) -> Result<TaskList, Error> {
        let call = Call::get(self.team_url(&["tasks"])?)
            .query("status", query.status.map(|s| s.as_str()))
            .query("owner", query.owner.as_deref())
            .query("prefix", query.prefix.as_deref())
            .query("ready", query.ready.then_some("true"))
            .query("limit", query.limit)
            .query("after", query.after.as_deref());
        self.json(call).await
    }

    /// Every task matching `query`, following `next` page after page.
    pub async fn list_all_tasks(&self, query: &TaskQuery) -> Result<Vec<Task>, Error> {
        let mut query = query.clone();
        let mut all = Vec::new();
        loop {
            let page = self.list_tasks(&query).await?;
            all.extend(page.tasks);
            match page.next {
                Some(next) => query.after = Some(next),
                None => return Ok(all),
            }
        }
    }

    /// `GET …/tasks/{id}`; [`Error::is_not_found`] when there is no such task.
    pub async fn get_task(&self, id: &str) -> Result<Task, Error> {
        self.json(Call::get(self.team_url(&["tasks", id])?)).await
    }

    /// `GET …/tasks/{id}/why-not-ready`: what keeps the task from a claim now (blockers, a
    /// question, a file scope overlapping a task in progress); no reasons when claimable.
    pub async fn why_not_ready(&self, id: &str) -> Result<WhyNotReady, Error> {
        self.json(Call::get(self.team_url(&["tasks", id, "why-not-ready"])?))
            .await
    }

    /// `PATCH …/tasks/{id}`; with `if_match`, 412 ([`Error::is_stale`]) when the task's version
    /// moved on since it was read.
    pub async fn update_task(
        &self,
        id: &str,
        patch: &TaskPatch,
        if_match: Option<i64>,
    ) -> Result<Task, Error> {
        let mut call = Call::new(Method::PATCH, self.team_url(&["tasks", id])?).json(patch)?;
        if let Some(version) = if_match {
            call = call.header("if-match", &version.to_string())?;
        }
        self.json(call).await
    }

    /// `POST …/tasks/claim`: the next ready task this agent may do, or `None` when none became
    /// ready within `wait_ms`. Retried when the daemon is unreachable.
    /// `request.max` is ignored here; [`Client::claim_many`] claims several at once.
    pub async fn claim(&self, request: &ClaimRequest) -> Result<Option<Task>, Error> {
        let request = ClaimRequest {
            max: None,
            ..request.clone()
        };
        let Some(res) = self.send_claim(&request).await? else {
            return Ok(None);
        };
        decode(res, "POST …/tasks/claim").await.map(Some)
    }

    /// `POST …/tasks/claim` with `max`: up to `max` ready tasks at once (the daemon allows
    /// 1–100), each with its own lease; empty when none became ready within `wait_ms`.
    pub async fn claim_many(&self, request: &ClaimRequest, max: u32) -> Result<Vec<Task>, Error> {
        let request = ClaimRequest {
            max: Some(max),
            ..request.clone()
        };
        let Some(res) = self.send_claim(&request).await? else {
            return Ok(Vec::new());
        };
        let claimed: ClaimedTasks = decode(res, "POST …/tasks/claim").await?;
        Ok(claimed.tasks)
    }

    /// The claim call itself: `None` for 204 (nothing ready).
    async fn send_claim(&self, request: &ClaimRequest) -> Result<Option<Response>, Error> {
        let wait = Duration::from_millis(request.wait_ms.unwrap_or(0));
        let call = Call::post(self.team_url(&["tasks", "claim"])?)
            .json(request)?
            .retry()
            .wait(wait);
        let res = self.send(call).await?;
        Ok((res.status() != StatusCode::NO_CONTENT).then_some(res))
    }

    /// `POST …/tasks/{id}/heartbeat`: extends the caller's lease (by `lease`, or the daemon's
    /// default). 409 ([`Error::is_conflict`]) or 404 means the lease is gone.
    pub async fn heartbeat(&self, id: &str, lease: Option<Duration>) -> Result<Task, Error> {
        self.heartbeat_with(id, lease, None).await
    }

    /// A heartbeat that also says where the task is worked on (shown on `/metrics`).
    pub async fn heartbeat_with(
        &self,
        id: &str,
        lease: Option<Duration>,
        workspace: Option<WorkspaceNote>,
    ) -> Result<Task, Error> {
        let body = Heartbeat {
            lease_ms: lease.map(|d| d.as_millis() as u64),
            workspace,
        };
        let call = Call::post(self.team_url(&["tasks", id, "heartbeat"])?)
            .json(&body)?
            .retry();
        self.json(call).await
    }

    /// `POST …/tasks/{id}/complete` with an optional result (any JSON).
    pub async fn complete(
        &self,
        id: &str,
        result: Option<serde_json::Value>,
    ) -> Result<Task, Error> {
        let body = CompleteTask { result };
        self.json(Call::post(self.team_url(&["tasks", id, "complete"])?).json(&body)?)
            .await
    }

    /// `POST …/tasks/complete`: completes several held tasks in one request, all or none.
    pub async fn complete_many(&self, items: &[CompleteItem]) -> Result<Vec<Task>, Error> {
        let body = CompleteTasks {
            tasks: items.to_vec(),
        };
        let done: ClaimedTasks = self
            .json(Call::post(self.team_url(&["tasks", "complete"])?).json(&body)?)
            .await?;
        Ok(done.tasks)
    }

    /// `POST …/tasks/{id}/fail`: this attempt failed. While the task has attempts left it goes
    /// back to `pending` for another try (the attempt counts); on its last attempt it becomes
    /// `failed`. The task keeps the reason as `failureReason`.
    pub async fn fail(&self, id: &str, reason: &str) -> Result<Task, Error> {
        self.fail_with(id, reason, false, None).await
    }

    /// `POST …/tasks/{id}/fail` with `final: true`: the task becomes `failed` now, whatever
    /// attempts it has left, and its dependents stay blocked.
    pub async fn fail_final(&self, id: &str, reason: &str) -> Result<Task, Error> {
        self.fail_with(id, reason, true, None).await
    }

    /// `POST …/tasks/{id}/fail` with everything: `final_` as in [`Client::fail_final`], and a
    /// `result` kept as the task's `result` (what the attempt ran and changed).
    pub async fn fail_with(
        &self,
        id: &str,
        reason: &str,
        final_: bool,
        result: Option<serde_json::Value>,
    ) -> Result<Task, Error> {
        let body = FailTask {
            reason: reason.to_string(),
            final_,
            result,
        };
        self.json(Call::post(self.team_url(&["tasks", id, "fail"])?).json(&body)?)
            .await
    }

    /// `POST …/tasks/{id}/release`: gives a claimed task back to the queue without counting an
    /// attempt.
    pub async fn release(&self, id: &str) -> Result<Task, Error> {
        self.release_with_note(id, None).await
    }

    /// `POST …/tasks/{id}/release` with a note (why), which the daemon posts to the
    /// coordinators as a `task_released` message.
    pub async fn release_with_note(&self, id: &str, note: Option<&str>) -> Result<Task, Error> {
        let body = ReleaseTask {
            note: note.map(str::to_string),
        };
        let call = Call::post(self.team_url(&["tasks", id, "release"])?).json(&body)?;
        self.json(call).await
    }
}

//! Human gates on SQLite: the question and the new blocker in one writer job.

use super::super::gates::{self, GateStore};
use super::super::{Caller, StoreResult};
use super::rows::load_state;
use super::{tasks, SqliteStore};
use async_trait::async_trait;
use huddle_wire::{Task, TaskPatch};

#[async_trait]
impl GateStore for SqliteStore {
    async fn gate_task(
        &self,
        caller: &Caller,
        id: &str,
        question: &str,
    ) -> StoreResult<(Task, Task)> {
        let (caller, id) = (caller.clone(), id.to_string());
        let new = gates::question_task(&id, question, &caller.agent)?;
        let limits = self.options.limits.clone();
        let default_max = self.options.default_max_attempts;
        self.writer()?
            .write_team(caller.team_id, move |ctx| {
                let gated = load_state(ctx.conn, caller.team_id, &id)?;
                gates::check_gateable(&id, gated.status)?;
                let asked = tasks::create(ctx, &caller, vec![new], default_max, &limits)?.remove(0);
                let patch = TaskPatch {
                    add_blocked_by: vec![asked.id.clone()],
                    ..TaskPatch::default()
                };
                let held = tasks::update(ctx, &caller, &id, patch, None, &limits)?;
                Ok((asked, held))
            })
            .await
    }
}

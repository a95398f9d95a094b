//! Human gates on PostgreSQL: the question and the new blocker in one transaction of the
//! team's writes.

use super::super::gates::{self, GateStore};
use super::super::{Caller, StoreResult};
use super::tx::Tx;
use super::{task_create, task_state, tasks, PostgresStore};
use async_trait::async_trait;
use huddle_wire::{Task, TaskPatch};

#[async_trait]
impl GateStore for PostgresStore {
    async fn gate_task(
        &self,
        caller: &Caller,
        id: &str,
        question: &str,
    ) -> StoreResult<(Task, Task)> {
        let new = gates::question_task(id, question, &caller.agent)?;
        let (caller, id) = (caller.clone(), id.to_string());
        let limits = self.options.limits.clone();
        let default_max = self.options.default_max_attempts;
        self.batcher
            .write(caller.team_id, move |tx: &mut Tx| {
                let (caller, id, new, limits) =
                    (caller.clone(), id.clone(), new.clone(), limits.clone());
                Box::pin(async move {
                    tx.lock_team(caller.team_id).await?;
                    let gated = task_state::load(tx, caller.team_id, &id).await?;
                    gates::check_gateable(&id, gated.status)?;
                    let asked = task_create::create(tx, &caller, vec![new], default_max, &limits)
                        .await?
                        .remove(0);
                    let patch = TaskPatch {
                        add_blocked_by: vec![asked.id.clone()],
                        ..TaskPatch::default()
                    };
                    let held = tasks::update(tx, &caller, &id, patch, None, &limits).await?;
                    Ok((asked, held))
                })
            })
            .await
    }
}

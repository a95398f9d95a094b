//! Any sequence of operations on a board of tasks keeps the task invariants: one holder with
//! one lease while in progress and none otherwise, attempts within `maxAttempts`, a task with
//! an open blocker never claimed, and a version that rises with every change and only then.

use super::{is_ready, TaskState};
use crate::store::types::Caller;
use huddle_wire::{NewTask, Role, TaskStatus};
use proptest::prelude::*;

const TASKS: usize = 4;
const LEASE_MS: u64 = 1_000;

#[derive(Debug, Clone)]
enum Op {
    Claim(usize),
    Heartbeat(usize, usize),
    Complete(usize, usize),
    Fail(usize, usize, bool),
    Release(usize, usize),
    /// Time passes beyond every lease; expired ones are swept.
    Expire,
    SetStatus(usize, TaskStatus, bool),
}

fn callers() -> Vec<Caller> {
    let caller = |agent: &str, role| Caller {
        team_id: 1,
        team: "qa".into(),
        agent: agent.into(),
        role,
    };
    vec![
        caller("ann", Role::Executor),
        caller("bob", Role::Executor),
        caller("lead", Role::Coordinator),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    let who = 0..3usize;
    let task = 0..TASKS;
    let status = prop_oneof![
        Just(TaskStatus::Pending),
        Just(TaskStatus::InProgress),
        Just(TaskStatus::Completed),
        Just(TaskStatus::Failed),
        Just(TaskStatus::Cancelled),
    ];
    prop_oneof![
        3 => who.clone().prop_map(Op::Claim),
        1 => (who.clone(), task.clone()).prop_map(|(w, t)| Op::Heartbeat(w, t)),
        2 => (who.clone(), task.clone()).prop_map(|(w, t)| Op::Complete(w, t)),
        2 => (who.clone(), task.clone(), any::<bool>()).prop_map(|(w, t, f)| Op::Fail(w, t, f)),
        1 => (who, task.clone()).prop_map(|(w, t)| Op::Release(w, t)),
        1 => Just(Op::Expire),
        1 => (task, status, any::<bool>()).prop_map(|(t, s, f)| Op::SetStatus(t, s, f)),
    ]
}

/// A board: tasks, each blocked by some earlier ones (so no cycle), at a moment in time.
struct Board {
    tasks: Vec<TaskState>,
    blockers: Vec<Vec<usize>>,
    now: i64,
}

impl Board {
    fn new(max_attempts: Vec<i64>, edges: Vec<Vec<bool>>) -> Board {
        let tasks = max_attempts
            .iter()
            .enumerate()
            .map(|(i, max)| {
                let new = NewTask {
                    subject: format!("task {i}"),
                    max_attempts: Some(*max),
                    ..Default::default()
                };
                TaskState::created(1, format!("T-{i}"), &new, 3, 0)
            })
            .collect();
        let blockers = (0..TASKS)
            .map(|i| (0..i).filter(|j| edges[i][*j]).collect())
            .collect();
        Board {
            tasks,
            blockers,
            now: 0,
        }
    }

    fn unmet(&self, i: usize) -> i64 {
        self.blockers[i]
            .iter()
            .filter(|b| self.tasks[**b].status != TaskStatus::Completed)
            .count() as i64
    }

    fn waiting(&self, i: usize) -> Vec<String> {
        self.blockers[i]
            .iter()
            .filter(|b| self.tasks[**b].status != TaskStatus::Completed)
            .map(|b| self.tasks[*b].id.clone())
            .collect()
    }

    /// Applies `op` to a copy of the task it touches and keeps the copy only when the rules
    /// accept it, as a backend keeps a change only when its transaction commits.
    fn apply(&mut self, op: &Op, callers: &[Caller]) -> Result<(), String> {
        self.now += 10;
        let now = self.now;
        match op {
            Op::Claim(w) => {
                let ready = (0..TASKS).find(|i| is_ready(self.tasks[*i].status, self.unmet(*i)));
                if let Some(i) = ready {
                    if !self.waiting(i).is_empty() {
                        return Err(format!("claimed {} with an open blocker", self.tasks[i].id));
                    }
                    if self.tasks[i].status != TaskStatus::Pending {
                        return Err(format!(
                            "claimed {}, which is {}",
                            self.tasks[i].id, self.tasks[i].status
                        ));
                    }
                    self.change(i, |t| {
                        t.claim(&callers[*w].agent, now, LEASE_MS);
                        Ok(true)
                    })?;
                }
            }
            Op::Heartbeat(w, i) => self.change(*i, |t| {
                t.heartbeat(&callers[*w], now, LEASE_MS).map(|_| false)
            })?,
            Op::Complete(w, i) => {
                self.change(*i, |t| t.complete(&callers[*w], None).map(|_| true))?
            }
            Op::Fail(w, i, final_) => self.change(*i, |t| {
                t.fail(&callers[*w], "broke".into(), *final_, None)
                    .map(|_| true)
            })?,
            Op::Release(w, i) => self.change(*i, |t| t.release(&callers[*w]).map(|_| true))?,
            Op::Expire => {
                self.now += LEASE_MS as i64;
                for i in 0..TASKS {
                    let t = &self.tasks[i];
                    let expired = t.status == TaskStatus::InProgress
                        && t.lease_expires_at.is_some_and(|at| at <= self.now);
                    if expired {
                        self.change(i, |t| {
                            t.expire();
                            Ok(true)
                        })?;
                    }
                }
            }
            Op::SetStatus(i, status, force) => {
                let waiting = self.waiting(*i);
                self.change(*i, |t| {
                    t.set_status(*status, *force, &waiting).map(|_| true)
                })?
            }
        }
        self.check()
    }

    /// `f` returns whether the change is saved by the save rules (a heartbeat saves itself).
    fn change(
        &mut self,
        i: usize,
        f: impl FnOnce(&mut TaskState) -> crate::store::error::StoreResult<bool>,
    ) -> Result<(), String> {
        let before = self.tasks[i].clone();
        let mut after = before.clone();
        match f(&mut after) {
            Ok(save) => {
                if save {
                    after.prepare_save(self.now);
                }
                if after.version <= before.version {
                    return Err(format!("{} changed without a new version", after.id));
                }
                self.tasks[i] = after.as_loaded();
            }
            Err(_) if after.version != before.version => {
                return Err(format!("{} refused but its version moved", after.id));
            }
            Err(_) => {}
        }
        Ok(())
    }

    fn check(&self) -> Result<(), String> {
        for t in &self.tasks {
            let held = t.status == TaskStatus::InProgress;
            if held && (t.claimed_by.is_none() || t.lease_expires_at.is_none()) {
                return Err(format!(
                    "{} is in progress without a holder and a lease",
                    t.id
                ));
            }
            if !held && t.lease_expires_at.is_some() {
                return Err(format!("{} has a lease while {}", t.id, t.status));
            }
            if t.attempts > t.max_attempts {
                return Err(format!(
                    "{} used {} of {} attempts",
                    t.id, t.attempts, t.max_attempts
                ));
            }
        }
        Ok(())
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn any_sequence_of_operations_keeps_the_task_invariants(
        max_attempts in prop::collection::vec(1..4i64, TASKS),
        edges in prop::collection::vec(prop::collection::vec(any::<bool>(), TASKS), TASKS),
        ops in prop::collection::vec(op(), 1..60),
    ) {
        let callers = callers();
        let mut board = Board::new(max_attempts, edges);
        for op in &ops {
            if let Err(broken) = board.apply(op, &callers) {
                prop_assert!(false, "after {:?}: {}", op, broken);
            }
        }
    }
}

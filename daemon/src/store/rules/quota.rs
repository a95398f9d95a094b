//! Per-team quotas, checked by every backend before a write adds tasks, edges, messages or
//! bytes. The use comes from the maintained `team_usage` row (kept by triggers in the same
//! transaction), so a check is one row read, never a count; the refusal names the quota, its
//! limit and the use, and the request stores nothing.

use super::super::error::StoreError;
use crate::config::LimitSettings;
use huddle_wire::{codes, NewTask, TeamQuotas, TeamUsage};
use serde_json::json;

/// The quotas in force for one team (`0`: none): the `[limits]` defaults under the team's
/// overrides.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Quotas {
    pub tasks: u64,
    pub edges: u64,
    pub messages: u64,
    pub storage_bytes: u64,
}

impl Quotas {
    pub fn effective(limits: &LimitSettings, overrides: &TeamQuotas) -> Quotas {
        Quotas {
            tasks: overrides.max_tasks.unwrap_or(limits.max_tasks_per_team),
            edges: overrides.max_edges.unwrap_or(limits.max_edges_per_team),
            messages: overrides
                .max_messages
                .unwrap_or(limits.max_messages_per_team),
            storage_bytes: overrides
                .max_storage_bytes
                .unwrap_or(limits.max_storage_bytes_per_team),
        }
    }

    /// As the wire's quotas, every field present.
    pub fn to_wire(self) -> TeamQuotas {
        TeamQuotas {
            max_tasks: Some(self.tasks),
            max_edges: Some(self.edges),
            max_messages: Some(self.messages),
            max_storage_bytes: Some(self.storage_bytes),
        }
    }
}

/// A team's use and the quotas in force, read in the write's transaction.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TeamBudget {
    pub used: TeamUsage,
    pub quotas: Quotas,
}

impl TeamBudget {
    /// Refuses `add` when it would take any counter past its quota (a counter already past
    /// it — a lowered quota — refuses any addition of that kind, and allows what removes).
    pub fn check(&self, add: &TeamUsage) -> Result<(), StoreError> {
        let kinds = [
            ("tasks", self.quotas.tasks, self.used.tasks, add.tasks),
            ("edges", self.quotas.edges, self.used.edges, add.edges),
            (
                "messages",
                self.quotas.messages,
                self.used.messages,
                add.messages,
            ),
            (
                "storage_bytes",
                self.quotas.storage_bytes,
                self.used.storage_bytes,
                add.storage_bytes,
            ),
        ];
        for (quota, limit, used, add) in kinds {
            if limit > 0 && add > 0 && used.saturating_add(add) > limit {
                return Err(over_quota(quota, limit, used, add));
            }
        }
        Ok(())
    }

    /// Counts `add` as used (later writes of the same transaction see it).
    pub fn charge(&mut self, add: &TeamUsage) {
        self.used = sum(&self.used, add);
    }
}

/// One request's additions, checked together against the team's budget as it was when the
/// request began: a batch is refused whole, and the refusal reports the team's use before
/// the request and what the whole request would add up to the item that passed the quota.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RequestQuota {
    pub budget: TeamBudget,
    pub added: TeamUsage,
}

impl RequestQuota {
    pub fn new(budget: TeamBudget) -> RequestQuota {
        RequestQuota {
            budget,
            added: TeamUsage::default(),
        }
    }

    /// Adds `more` to the request, refusing it when the request's total passes a quota.
    pub fn add(&mut self, more: &TeamUsage) -> Result<(), StoreError> {
        let total = sum(&self.added, more);
        self.budget.check(&total)?;
        self.added = total;
        Ok(())
    }
}

fn sum(a: &TeamUsage, b: &TeamUsage) -> TeamUsage {
    TeamUsage {
        tasks: a.tasks + b.tasks,
        edges: a.edges + b.edges,
        messages: a.messages + b.messages,
        storage_bytes: a.storage_bytes + b.storage_bytes,
    }
}

pub fn over_quota(quota: &str, limit: u64, used: u64, add: u64) -> StoreError {
    StoreError::Conflict {
        code: codes::TEAM_QUOTA,
        message: format!(
            "the team's {quota} quota is {limit}; it uses {used} and this request would add {add} \
             (the admin can raise it: PUT /v1/teams/{{team}}/settings)"
        ),
        details: json!({ "quota": quota, "limit": limit, "used": used, "add": add }),
    }
}

/// What creating `tasks` adds: the tasks, their edges and their texts' bytes (the same
/// columns the triggers sum; `metadata` as its JSON text).
pub fn new_tasks_usage(tasks: &[NewTask]) -> TeamUsage {
    let mut add = TeamUsage::default();
    for t in tasks {
        add.tasks += 1;
        add.edges += t.blocked_by.len() as u64;
        add.storage_bytes += task_text_bytes(t);
    }
    add
}

fn task_text_bytes(t: &NewTask) -> u64 {
    let metadata = t
        .metadata
        .as_ref()
        .map_or(2, |m| serde_json::to_string(m).map_or(0, |s| s.len()));
    (t.subject.len()
        + t.description.as_deref().map_or(0, str::len)
        + t.active_form.as_deref().map_or(0, str::len)
        + metadata) as u64
}

/// What storing one message adds (`summary` and `data` text, as the triggers sum them).
pub fn message_usage(summary: &str, data_text: &str) -> TeamUsage {
    TeamUsage {
        messages: 1,
        storage_bytes: (summary.len() + data_text.len()) as u64,
        ..TeamUsage::default()
    }
}

/// What new blocker edges add.
pub fn edges_usage(edges: usize) -> TeamUsage {
    TeamUsage {
        edges: edges as u64,
        ..TeamUsage::default()
    }
}

/// What replacing the memory document of `old_len` bytes by one of `new_len` adds (nothing
/// when it shrinks: a smaller document is always allowed).
pub fn memory_usage(old_len: usize, new_len: usize) -> TeamUsage {
    TeamUsage {
        storage_bytes: new_len.saturating_sub(old_len) as u64,
        ..TeamUsage::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn budget(used_tasks: u64, quota: u64) -> TeamBudget {
        TeamBudget {
            used: TeamUsage {
                tasks: used_tasks,
                ..TeamUsage::default()
            },
            quotas: Quotas {
                tasks: quota,
                ..Quotas::default()
            },
        }
    }

    #[test]
    fn a_request_that_fits_exactly_passes_and_one_more_is_refused_with_the_numbers() {
        let add = |n| TeamUsage {
            tasks: n,
            ..TeamUsage::default()
        };
        assert!(budget(8, 10).check(&add(2)).is_ok());
        match budget(8, 10).check(&add(3)) {
            Err(StoreError::Conflict { code, details, .. }) => {
                assert_eq!(code, codes::TEAM_QUOTA);
                assert_eq!(
                    details,
                    json!({"quota": "tasks", "limit": 10, "used": 8, "add": 3})
                );
            }
            other => panic!("expected team_quota, got {other:?}"),
        }
    }

    #[test]
    fn a_batch_is_judged_whole_and_reports_the_use_before_it() {
        let one = TeamUsage {
            tasks: 1,
            ..TeamUsage::default()
        };
        let mut request = RequestQuota::new(budget(8, 10));
        request.add(&one).unwrap();
        request.add(&one).unwrap();
        match request.add(&one) {
            Err(StoreError::Conflict { details, .. }) => {
                assert_eq!(details["used"], 8);
                assert_eq!(details["add"], 3);
            }
            other => panic!("expected team_quota, got {other:?}"),
        }
    }

    #[test]
    fn zero_means_no_quota_and_adding_nothing_always_passes() {
        let many = TeamUsage {
            tasks: u64::MAX / 2,
            ..TeamUsage::default()
        };
        assert!(budget(u64::MAX / 2, 0).check(&many).is_ok());
        assert!(budget(50, 10).check(&TeamUsage::default()).is_ok());
    }

    #[test]
    fn overrides_replace_the_defaults_one_by_one() {
        let limits = LimitSettings::default();
        let q = Quotas::effective(
            &limits,
            &TeamQuotas {
                max_tasks: Some(7),
                ..TeamQuotas::default()
            },
        );
        assert_eq!(q.tasks, 7);
        assert_eq!(q.edges, limits.max_edges_per_team);
    }
}

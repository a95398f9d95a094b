//! Claim searches known to find nothing, so an idle claimer's next look skips the writer.
//!
//! A worker that has just taken its task asks again at once and, on an idle team, finds
//! nothing: without this, that empty look is a write job of its own (the writer thread woken,
//! a transaction begun and committed) for every task. A claim that takes every task matching
//! it proves that its searches are empty; a search is keyed by team, prefix, the owner a
//! ready task would carry (none, the agent, its role) and the projects the claim admits (any,
//! or its project and, unless strict, none). The writer marks searches empty after
//! the claim's batch commits and unmarks one, before waking any claimer, when a committed
//! change leaves a task ready that the search would find. Every way a task becomes ready on
//! SQLite says so (`Publish::TaskReady`), which claimers waiting for work rely on already; a
//! `Publish::TasksChanged` forgets the whole team.
//!
//! A claim answered here does not touch the agent's `lastSeenAt`: it is answered here only
//! within a second of the agent's last touch, so `lastSeenAt` lags no more than before.

use crate::hub::{ProjectFilter, ReadyTask};
use std::collections::{HashMap, HashSet};
use std::sync::{Mutex, MutexGuard};

/// Past this many remembered searches (or agents), everything is forgotten: any prefix string
/// may be asked for, and forgetting only sends the next claims to the writer.
const MAX_ENTRIES: usize = 16_384;

/// How long after the writer last touched an agent its empty claims may be answered here; the
/// writer touches `lastSeenAt` at most once a second.
const TOUCH_INTERVAL_MS: i64 = 1000;

#[derive(Default)]
pub struct EmptyClaims {
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// (team, prefix) → the searches no ready task of that prefix would answer.
    empty: HashMap<(i64, String), HashSet<Search>>,
    entries: usize,
    /// (team, agent) → when the writer last wrote the agent's `lastSeenAt`.
    touched: HashMap<(i64, String), i64>,
}

/// A search within one prefix: the owner a ready task would carry (`None`: unowned) and the
/// projects looked in.
type Search = (Option<String>, Projects);

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Projects {
    /// Every project (a claim with no project filter).
    Any,
    /// Tasks of this project (`None`: tasks naming none).
    One(Option<String>),
}

impl Projects {
    /// What a claim with `filter` looks in.
    fn of(filter: Option<&ProjectFilter>) -> Vec<Projects> {
        match filter {
            None => vec![Projects::Any],
            Some(f) if f.strict => vec![Projects::One(Some(f.name.clone()))],
            Some(f) => vec![Projects::One(Some(f.name.clone())), Projects::One(None)],
        }
    }
}

/// What a claim that took every matching task proves: these searches are empty now.
#[derive(Debug, Clone)]
pub struct Exhausted {
    pub prefixes: Vec<String>,
    pub agent: String,
    pub role: String,
    pub project: Option<ProjectFilter>,
    /// When the agent's `lastSeenAt` was last written.
    pub touched_at: i64,
}

impl EmptyClaims {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Records a committed claim that left nothing for its searches.
    pub fn exhausted(&self, team_id: i64, proof: &Exhausted) {
        let mut state = self.lock();
        if state.entries + proof.prefixes.len() * 6 > MAX_ENTRIES
            || state.touched.len() >= MAX_ENTRIES
        {
            *state = State::default();
        }
        let owners = [None, Some(proof.agent.clone()), Some(proof.role.clone())];
        let projects = Projects::of(proof.project.as_ref());
        for prefix in &proof.prefixes {
            let searches = state.empty.entry((team_id, prefix.clone())).or_default();
            let before = searches.len();
            for owner in &owners {
                for p in &projects {
                    searches.insert((owner.clone(), p.clone()));
                }
            }
            let added = searches.len() - before;
            state.entries += added;
        }
        state
            .touched
            .insert((team_id, proof.agent.clone()), proof.touched_at);
    }

    /// A committed change left `task` ready: the searches that would find it are no longer
    /// empty. Runs before any claimer is woken for it.
    pub fn ready(&self, team_id: i64, task: &ReadyTask) {
        let mut state = self.lock();
        let key = (team_id, task.prefix.clone());
        let Some(searches) = state.empty.get_mut(&key) else {
            return;
        };
        let mut removed = 0;
        for p in [Projects::Any, Projects::One(task.project.clone())] {
            removed += usize::from(searches.remove(&(task.owner.clone(), p)));
        }
        state.entries -= removed;
        if state.empty.get(&key).is_some_and(HashSet::is_empty) {
            state.empty.remove(&key);
        }
    }

    /// Some of the team's tasks may have become ready, which ones unknown: nothing of the
    /// team is known empty any more.
    pub fn changed(&self, team_id: i64) {
        let mut state = self.lock();
        let mut forgotten = 0;
        state.empty.retain(|(team, _), searches| {
            let keep = *team != team_id;
            if !keep {
                forgotten += searches.len();
            }
            keep
        });
        state.entries -= forgotten;
    }

    /// Whether a claim by `agent` (of `role`) for `prefixes` and `project` at `now_ms` is known
    /// to find nothing and the agent needs no `lastSeenAt` write.
    pub fn known_empty(
        &self,
        team_id: i64,
        prefixes: &[String],
        project: Option<&ProjectFilter>,
        (agent, role): (&str, &str),
        now_ms: i64,
    ) -> bool {
        let state = self.lock();
        // A wall clock stepped back counts as due, so `lastSeenAt` cannot freeze behind it.
        let touched = state.touched.get(&(team_id, agent.to_string()));
        if !touched.is_some_and(|at| (0..TOUCH_INTERVAL_MS).contains(&(now_ms - at))) {
            return false;
        }
        let owners = [None, Some(agent.to_string()), Some(role.to_string())];
        let projects = Projects::of(project);
        prefixes.iter().all(|prefix| {
            let Some(searches) = state.empty.get(&(team_id, prefix.clone())) else {
                return false;
            };
            // Every project proven empty covers any filter.
            owners.iter().all(|owner| {
                searches.contains(&(owner.clone(), Projects::Any))
                    || projects
                        .iter()
                        .all(|p| searches.contains(&(owner.clone(), p.clone())))
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn proof(prefixes: &[&str], agent: &str, touched_at: i64) -> Exhausted {
        Exhausted {
            prefixes: prefixes.iter().map(|p| p.to_string()).collect(),
            agent: agent.into(),
            role: "tester".into(),
            project: None,
            touched_at,
        }
    }

    fn filter(name: &str, strict: bool) -> Option<ProjectFilter> {
        Some(ProjectFilter {
            name: name.into(),
            strict,
        })
    }

    fn ready_in(project: Option<&str>) -> ReadyTask {
        ReadyTask {
            project: project.map(Into::into),
            ..ready("TEST", None)
        }
    }

    fn ready(prefix: &str, owner: Option<&str>) -> ReadyTask {
        ReadyTask {
            prefix: prefix.into(),
            owner: owner.map(Into::into),
            project: None,
        }
    }

    fn asks(prefixes: &[&str]) -> Vec<String> {
        prefixes.iter().map(|p| p.to_string()).collect()
    }

    #[test]
    fn only_a_proven_search_is_known_empty() {
        let memo = EmptyClaims::default();
        assert!(!memo.known_empty(1, &asks(&["TEST"]), None, ("t1", "tester"), 100));
        memo.exhausted(1, &proof(&["TEST"], "t1", 100));
        assert!(memo.known_empty(1, &asks(&["TEST"]), None, ("t1", "tester"), 100));
        // Another prefix, another team, another agent of the role: not proven.
        assert!(!memo.known_empty(1, &asks(&["TEST", "QARUN"]), None, ("t1", "tester"), 100));
        assert!(!memo.known_empty(2, &asks(&["TEST"]), None, ("t1", "tester"), 100));
        assert!(!memo.known_empty(1, &asks(&["TEST"]), None, ("t2", "tester"), 100));
    }

    #[test]
    fn a_ready_task_unmarks_exactly_the_searches_that_would_find_it() {
        let memo = EmptyClaims::default();
        memo.exhausted(1, &proof(&["TEST"], "t1", 0));
        memo.exhausted(1, &proof(&["TEST"], "t2", 0));
        memo.ready(1, &ready("TEST", Some("t2")));
        assert!(memo.known_empty(1, &asks(&["TEST"]), None, ("t1", "tester"), 0));
        assert!(!memo.known_empty(1, &asks(&["TEST"]), None, ("t2", "tester"), 0));
        memo.ready(1, &ready("TEST", Some("tester")));
        assert!(!memo.known_empty(1, &asks(&["TEST"]), None, ("t1", "tester"), 0));
        memo.exhausted(1, &proof(&["TEST"], "t1", 0));
        memo.ready(1, &ready("QARUN", None));
        assert!(memo.known_empty(1, &asks(&["TEST"]), None, ("t1", "tester"), 0));
        memo.ready(1, &ready("TEST", None));
        assert!(!memo.known_empty(1, &asks(&["TEST"]), None, ("t1", "tester"), 0));
    }

    #[test]
    fn a_project_claim_is_proven_by_its_own_search_or_one_of_every_project() {
        let memo = EmptyClaims::default();
        let empty = |f: &Option<ProjectFilter>| {
            memo.known_empty(1, &asks(&["TEST"]), f.as_ref(), ("t1", "tester"), 0)
        };
        let (calc, calc_only, shop) = (
            filter("calc", false),
            filter("calc", true),
            filter("shop", false),
        );
        memo.exhausted(
            1,
            &Exhausted {
                project: calc.clone(),
                ..proof(&["TEST"], "t1", 0)
            },
        );
        assert!(empty(&calc) && empty(&calc_only));
        assert!(!empty(&shop) && !empty(&None));
        // A shop task leaves calc's searches empty; a task naming no project does not.
        memo.ready(1, &ready_in(Some("shop")));
        assert!(empty(&calc));
        memo.ready(1, &ready_in(None));
        assert!(!empty(&calc) && empty(&calc_only));
        // A claim of every project proves every filter; any ready task unproves it.
        memo.exhausted(1, &proof(&["TEST"], "t1", 0));
        assert!(empty(&shop) && empty(&None));
        memo.ready(1, &ready_in(Some("shop")));
        assert!(!empty(&shop) && !empty(&None) && empty(&calc_only));
    }

    #[test]
    fn tasks_changed_forgets_only_that_team() {
        let memo = EmptyClaims::default();
        memo.exhausted(1, &proof(&["TEST", "QARUN"], "t1", 0));
        memo.exhausted(2, &proof(&["TEST"], "t1", 0));
        memo.changed(1);
        assert!(!memo.known_empty(1, &asks(&["TEST"]), None, ("t1", "tester"), 0));
        assert!(memo.known_empty(2, &asks(&["TEST"]), None, ("t1", "tester"), 0));
        assert_eq!(memo.lock().entries, 3);
    }

    #[test]
    fn an_agent_due_a_last_seen_write_goes_to_the_writer() {
        let memo = EmptyClaims::default();
        memo.exhausted(1, &proof(&["TEST"], "t1", 1_000));
        assert!(memo.known_empty(1, &asks(&["TEST"]), None, ("t1", "tester"), 1_999));
        assert!(!memo.known_empty(1, &asks(&["TEST"]), None, ("t1", "tester"), 2_000));
        assert!(!memo.known_empty(1, &asks(&["TEST"]), None, ("t1", "tester"), 999));
    }

    #[test]
    fn many_distinct_prefixes_cannot_grow_it_without_bound() {
        let memo = EmptyClaims::default();
        for i in 0..MAX_ENTRIES {
            memo.exhausted(1, &proof(&[&format!("P{i}")], &format!("a{i}"), 0));
        }
        let state = memo.lock();
        assert!(state.entries <= MAX_ENTRIES, "{} entries", state.entries);
        assert!(state.touched.len() <= MAX_ENTRIES);
        assert!(state.empty.len() <= MAX_ENTRIES);
    }
}

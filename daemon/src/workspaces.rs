//! Where each held task is worked on, as its holder's heartbeats say (a worktree and the branch
//! its fix goes to), for `/metrics`.
//!
//! In memory, per replica: an entry is written only after a heartbeat the store accepted (the
//! caller holds the task), dropped when the task is completed, failed or released through this
//! replica, and ignored once its lease has run out. So the map holds at most the tasks in
//! progress, and never more than [`MAX_ENTRIES`]: who can make it grow is a holder of a task,
//! one entry per task.

use huddle_wire::WorkspaceNote;
use std::collections::HashMap;
use std::fmt::Write;
use std::sync::Mutex;

/// Entries kept at most, whatever the number of tasks in progress.
pub const MAX_ENTRIES: usize = 10_000;

#[derive(Default)]
pub struct Workspaces {
    tasks: Mutex<HashMap<(String, String), Entry>>,
}

struct Entry {
    agent: String,
    note: WorkspaceNote,
    until_ms: i64,
}

impl Workspaces {
    /// `agent` works on `team`'s `task` in `note` until `until_ms` (its lease).
    pub fn note(&self, team: &str, task: &str, agent: &str, note: WorkspaceNote, until_ms: i64) {
        let mut tasks = self.lock();
        let key = (team.to_string(), task.to_string());
        if tasks.len() >= MAX_ENTRIES && !tasks.contains_key(&key) {
            let now = now_ms();
            tasks.retain(|_, e| e.until_ms > now);
            if tasks.len() >= MAX_ENTRIES {
                return;
            }
        }
        let agent = agent.to_string();
        tasks.insert(
            key,
            Entry {
                agent,
                note,
                until_ms,
            },
        );
    }

    /// The task is closed or released.
    pub fn forget(&self, team: &str, task: &str) {
        self.lock().remove(&(team.to_string(), task.to_string()));
    }

    /// `huddle_task_workspace{team,task,agent,workspace,branch} 1` for each task whose lease
    /// holds; expired entries go.
    pub fn render(&self, out: &mut String) {
        let now = now_ms();
        let mut tasks = self.lock();
        tasks.retain(|_, e| e.until_ms > now);
        if tasks.is_empty() {
            return;
        }
        let mut rows: Vec<_> = tasks.iter().collect();
        rows.sort_by(|a, b| a.0.cmp(b.0));
        out.push_str("# HELP huddle_task_workspace where each held task is worked on (its worktree and fix branch)\n");
        out.push_str("# TYPE huddle_task_workspace gauge\n");
        for ((team, task), e) in rows {
            let _ = writeln!(
                out,
                "huddle_task_workspace{{team=\"{}\",task=\"{}\",agent=\"{}\",workspace=\"{}\",branch=\"{}\"}} 1",
                label(team),
                label(task),
                label(&e.agent),
                label(&e.note.path),
                label(e.note.branch.as_deref().unwrap_or("")),
            );
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(String, String), Entry>> {
        self.tasks.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A label value in the text format: backslash, quote and newline escaped.
fn label(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// Milliseconds since the epoch, as leases count them.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn note(path: &str) -> WorkspaceNote {
        WorkspaceNote {
            path: path.into(),
            branch: Some("huddle/TEST-1".into()),
            base: None,
        }
    }

    #[test]
    fn held_tasks_are_shown_escaped_and_closed_or_expired_ones_are_not() {
        let w = Workspaces::default();
        let later = now_ms() + 60_000;
        w.note("qa", "TEST-1", "tester", note("/r/wt-\"1\""), later);
        w.note("qa", "TEST-2", "tester", note("/r/wt-2"), now_ms() - 1);
        w.note("qa", "TEST-3", "tester", note("/r/wt-3"), later);
        w.forget("qa", "TEST-3");
        let mut out = String::new();
        w.render(&mut out);
        assert!(out.contains(
            "huddle_task_workspace{team=\"qa\",task=\"TEST-1\",agent=\"tester\",workspace=\"/r/wt-\\\"1\\\"\",branch=\"huddle/TEST-1\"} 1"
        ), "{out}");
        assert!(!out.contains("TEST-2"), "expired");
        assert!(!out.contains("TEST-3"), "closed");
    }

    #[test]
    fn the_map_is_bounded() {
        let w = Workspaces::default();
        let later = now_ms() + 60_000;
        for i in 0..MAX_ENTRIES + 5 {
            w.note("qa", &format!("T-{i}"), "a", note("/x"), later);
        }
        assert_eq!(w.lock().len(), MAX_ENTRIES);
    }
}

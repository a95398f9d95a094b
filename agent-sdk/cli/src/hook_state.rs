//! What a Claude Code session holds in huddle, between hook runs: each hook is a new process,
//! and renewing leases on every tool call must not cost a query to find them. One small JSON
//! file per session (Claude Code task id → huddle task id) in the temp directory, written
//! whole and renamed into place so a reader never sees half of it.

use std::collections::BTreeMap;
use std::path::PathBuf;

pub struct Held {
    path: PathBuf,
}

impl Held {
    pub fn of_session(session_id: &str) -> Held {
        let safe: String = session_id
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let dir = std::env::var_os("HUDDLE_HOOK_STATE_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| std::env::temp_dir().join("huddle-hook"));
        Held {
            path: dir.join(format!("{safe}.json")),
        }
    }

    /// Claude Code task id → huddle task id, empty when the session holds nothing.
    pub fn all(&self) -> BTreeMap<String, String> {
        std::fs::read(&self.path)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default()
    }

    pub fn add(&self, claude_id: &str, huddle_id: &str) {
        let mut held = self.all();
        held.insert(claude_id.to_string(), huddle_id.to_string());
        self.write(&held);
    }

    pub fn remove(&self, claude_id: &str) {
        let mut held = self.all();
        if held.remove(claude_id).is_some() {
            self.write(&held);
        }
    }

    fn write(&self, held: &BTreeMap<String, String>) {
        if held.is_empty() {
            let _ = std::fs::remove_file(&self.path);
            return;
        }
        let write = || -> std::io::Result<()> {
            if let Some(dir) = self.path.parent() {
                std::fs::create_dir_all(dir)?;
            }
            let tmp = self
                .path
                .with_extension(format!("{}.tmp", std::process::id()));
            std::fs::write(&tmp, serde_json::to_vec(held).unwrap_or_default())?;
            std::fs::rename(&tmp, &self.path)
        };
        if let Err(e) = write() {
            eprintln!(
                "huddle hook: cannot record held tasks in {}: {e}",
                self.path.display()
            );
        }
    }
}

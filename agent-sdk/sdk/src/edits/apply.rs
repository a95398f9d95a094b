//! Applying a reply's edits: all checked first (paths, single matches, content rules), then all
//! written, or none. The files' previous contents come back as a [`Snapshot`].

use super::guard::{check_content, check_path, resolve, Policy};
use super::snapshot::{write_atomically, Snapshot};
use super::{Edit, Refusal};
use std::path::{Path, PathBuf};

/// Largest file an edit may change.
const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// Edits that were applied.
#[derive(Debug, Clone)]
pub struct Applied {
    /// The files changed or created, relative to the root, in first-edit order.
    pub files: Vec<String>,
    /// The files as they were before; restoring it undoes the fix.
    pub snapshot: Snapshot,
    /// The unified diff of the change, file by file (not yet scrubbed or capped).
    pub diff: String,
}

/// One file's planned change.
struct Change {
    rel: String,
    path: PathBuf,
    before: Option<String>,
    after: String,
}

/// Applies `edits` inside `root` under `policy`, atomically. On refusal nothing is written and
/// every reason found is returned (the model gets them all at its next attempt).
pub fn apply(root: &Path, edits: &[Edit], policy: &Policy) -> Result<Applied, Vec<Refusal>> {
    if edits.is_empty() {
        return Err(vec![Refusal::Empty]);
    }
    let mut refusals = Vec::new();
    let mut changes: Vec<Change> = Vec::new();
    for edit in edits {
        let (path, rel) = match resolve(root, &edit.path).and_then(|(p, r)| {
            check_path(&r, policy)?;
            Ok((p, r))
        }) {
            Ok(x) => x,
            Err(r) => {
                refusals.push(r);
                continue;
            }
        };
        let index = match changes.iter().position(|c| c.rel == rel) {
            Some(i) => i,
            None => match load(&path, &rel) {
                Ok(before) => {
                    let after = before.clone().unwrap_or_default();
                    changes.push(Change {
                        rel: rel.clone(),
                        path,
                        before,
                        after,
                    });
                    changes.len() - 1
                }
                Err(r) => {
                    refusals.push(r);
                    continue;
                }
            },
        };
        if let Err(r) = edit_one(&mut changes[index], edit) {
            refusals.push(r);
        }
    }
    for c in &changes {
        if let Err(r) = check_content(&c.rel, c.before.as_deref().unwrap_or(""), &c.after, policy) {
            refusals.push(r);
        }
    }
    if !refusals.is_empty() {
        return Err(refusals);
    }
    let files: Vec<String> = changes.iter().map(|c| c.rel.clone()).collect();
    let snapshot = Snapshot::capture(root, &files).map_err(|e| {
        vec![Refusal::Io {
            path: files.join(", "),
            message: e.to_string(),
        }]
    })?;
    for c in &changes {
        if let Err(e) = write_atomically(&c.path, c.after.as_bytes()) {
            let _ = snapshot.restore();
            return Err(vec![Refusal::Io {
                path: c.rel.clone(),
                message: format!("writing failed, nothing was changed: {e}"),
            }]);
        }
    }
    let diff = changes
        .iter()
        .map(|c| super::diff::unified(&c.rel, c.before.as_deref(), Some(&c.after)))
        .collect();
    Ok(Applied {
        files,
        snapshot,
        diff,
    })
}

/// The file's text, `None` when it does not exist.
fn load(path: &Path, rel: &str) -> Result<Option<String>, Refusal> {
    let io = |message: String| Refusal::Io {
        path: rel.to_string(),
        message,
    };
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io(e.to_string())),
        Ok(m) if !m.is_file() => return Err(io("not a regular file".into())),
        Ok(m) if m.len() > MAX_FILE_BYTES => return Err(io("too large to edit".into())),
        Ok(_) => {}
    }
    let bytes = std::fs::read(path).map_err(|e| io(e.to_string()))?;
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| io("not a UTF-8 text file".into()))
}

fn edit_one(change: &mut Change, edit: &Edit) -> Result<(), Refusal> {
    let rel = change.rel.clone();
    if edit.search.is_empty() {
        // Creating a file: only when it does not exist and nothing else edited it.
        if change.before.is_some() || !change.after.is_empty() {
            return Err(Refusal::Missing {
                path: rel,
                hint: " as a new file: it exists, so give a non-empty search text".into(),
            });
        }
        change.after = edit.replace.clone();
        return Ok(());
    }
    if change.before.is_none() && change.after.is_empty() {
        return Err(Refusal::Missing {
            path: rel,
            hint: "; to create it, give an empty search text".into(),
        });
    }
    match change.after.matches(edit.search.as_str()).count() {
        0 => Err(Refusal::NoMatch { path: rel }),
        1 => {
            change.after = change
                .after
                .replacen(edit.search.as_str(), &edit.replace, 1);
            Ok(())
        }
        count => Err(Refusal::Ambiguous { path: rel, count }),
    }
}

#[cfg(test)]
#[path = "apply_tests.rs"]
mod tests;

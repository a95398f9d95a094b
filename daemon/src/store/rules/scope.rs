//! File scopes: a task's metadata `scope`, the path globs (relative to the repository root) its
//! worker may edit. No two tasks whose scopes overlap are in progress at once; a task without a
//! scope is unconstrained. The backends' claims ask here whether a ready task's scope overlaps
//! one held; `why-not-ready` names the holder and the globs.
//!
//! Overlap is conservative: it never misses a real overlap, and may report one for globs that
//! could not in fact match a common file. Globs are compared component by component: a
//! wildcard component (`*`, `?`, `[`, `{`, `**`, or an escape) may match anything, so it ends
//! the comparison as "may overlap"; two different literal components are disjoint; one glob a
//! prefix of the other (`src` and `src/a.py`: a directory and a file in it) overlaps.

use super::{parse_json, TaskState};
use crate::store::error::StoreError;
use huddle_wire::TaskStatus;
use serde_json::Value;

/// The most globs one task's scope may list.
pub const MAX_GLOBS: usize = 100;
/// The longest glob, in characters.
pub const MAX_GLOB_CHARS: usize = 1024;

/// The text a task's stored metadata holds when it may have a scope: a cheap test before
/// parsing (the backends' SQL uses the same one). Metadata is stored compact, so a top-level
/// key `scope` always appears so; a match elsewhere only costs a parse.
pub const SCOPE_KEY_TEXT: &str = "\"scope\"";

/// A task in progress whose scope others must keep clear of.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Held {
    pub id: String,
    /// The agent holding it.
    pub holder: Option<String>,
    pub globs: Vec<String>,
}

impl Held {
    /// The scoped ones among `(id, holder, metadata)` rows of tasks in progress, as both
    /// backends read them.
    pub fn of_rows(rows: Vec<(String, Option<String>, String)>) -> Vec<Held> {
        rows.into_iter()
            .filter_map(|(id, holder, metadata)| {
                let globs = of_metadata(&metadata)?;
                Some(Held { id, holder, globs })
            })
            .collect()
    }
}

/// Why a task's scope keeps it from being claimed now: the task in progress holding an
/// overlapping scope, and the first pair of globs found to overlap (the task's, the holder's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Overlap<'h> {
    pub held: &'h Held,
    pub glob: String,
    pub held_glob: String,
}

/// A task's scope from its stored metadata: `None` when it has none. A scope stored before
/// scopes were checked on write and not a list of strings counts as none (it never meant one).
pub fn of_metadata(metadata: &str) -> Option<Vec<String>> {
    if !metadata.contains(SCOPE_KEY_TEXT) {
        return None;
    }
    of_value(&parse_json(metadata))
}

/// [`of_metadata`] of metadata already parsed.
pub fn of_value(metadata: &Value) -> Option<Vec<String>> {
    metadata
        .get("scope")?
        .as_array()?
        .iter()
        .map(|g| g.as_str().map(str::to_string))
        .collect()
}

/// A task's metadata `scope`, when present and not null, is a list of at most [`MAX_GLOBS`]
/// globs, each non-empty, at most [`MAX_GLOB_CHARS`] long, relative (no leading `/`) and with
/// no `..` component.
pub fn check_metadata(field: &str, metadata: &Value) -> Result<(), StoreError> {
    let field = format!("{field}.scope");
    let globs = match metadata.get("scope") {
        None | Some(Value::Null) => return Ok(()),
        Some(Value::Array(globs)) => globs,
        Some(_) => return Err(invalid(&field, "must be an array of path globs")),
    };
    if globs.len() > MAX_GLOBS {
        return Err(invalid(&field, &format!("holds at most {MAX_GLOBS} globs")));
    }
    for (i, glob) in globs.iter().enumerate() {
        let at = format!("{field}[{i}]");
        let Some(glob) = glob.as_str() else {
            return Err(invalid(&at, "must be a string, a path glob"));
        };
        check_glob(&at, glob)?;
    }
    Ok(())
}

fn check_glob(at: &str, glob: &str) -> Result<(), StoreError> {
    if glob.trim().is_empty() {
        return Err(invalid(at, "must not be empty"));
    }
    if glob.chars().count() > MAX_GLOB_CHARS {
        return Err(invalid(
            at,
            &format!("must be at most {MAX_GLOB_CHARS} characters"),
        ));
    }
    if glob.chars().any(char::is_control) {
        return Err(invalid(at, "must not hold control characters"));
    }
    if glob.starts_with('/') {
        return Err(invalid(at, "must be relative to the repository root"));
    }
    if glob.split('/').any(|c| c == "..") {
        return Err(invalid(at, "must not have a `..` component"));
    }
    Ok(())
}

fn invalid(field: &str, what: &str) -> StoreError {
    StoreError::invalid(field, format!("`{field}` {what}"))
}

/// The glob's path components, with `.` and empty ones (`./`, a trailing or doubled `/`)
/// dropped. None at all: the repository root, which overlaps everything.
fn components(glob: &str) -> impl Iterator<Item = &str> {
    glob.split('/').filter(|c| !c.is_empty() && *c != ".")
}

/// Whether a component may match more than its own text.
fn is_wild(component: &str) -> bool {
    component.contains(['*', '?', '[', '{', '\\'])
}

/// Whether two globs may match a common path (a file, or a file under a directory named).
pub fn globs_overlap(a: &str, b: &str) -> bool {
    for (x, y) in components(a).zip(components(b)) {
        if is_wild(x) || is_wild(y) {
            return true;
        }
        if x != y {
            return false;
        }
    }
    // Equal, or one a prefix of the other.
    true
}

/// The first pair of globs (one of `a`, one of `b`) that may overlap.
pub fn first_overlap(a: &[String], b: &[String]) -> Option<(String, String)> {
    a.iter().find_map(|x| {
        b.iter()
            .find(|y| globs_overlap(x, y))
            .map(|y| (x.clone(), y.clone()))
    })
}

/// The first task of `held` whose scope overlaps `scope`.
pub fn conflict<'h>(scope: &[String], held: &'h [Held]) -> Option<Overlap<'h>> {
    held.iter().find_map(|h| {
        first_overlap(scope, &h.globs).map(|(glob, held_glob)| Overlap {
            held: h,
            glob,
            held_glob,
        })
    })
}

/// A claim's walk over its ready candidates, oldest first: a task is admitted when its scope
/// overlaps none held and none admitted before it in the same claim.
#[derive(Debug)]
pub struct Admission {
    held: Vec<Held>,
    /// Whether a ready task was passed over for its scope: then the claim did not take
    /// everything it could see, and it must not be remembered as having emptied its searches.
    pub passed_over: bool,
}

impl Admission {
    pub fn new(held: Vec<Held>) -> Admission {
        Admission {
            held,
            passed_over: false,
        }
    }

    /// Whether the claim may take the task with this stored metadata; admitting it holds its
    /// scope for the rest of the walk.
    pub fn admit(&mut self, id: &str, metadata: &str) -> bool {
        let Some(globs) = of_metadata(metadata) else {
            return true;
        };
        if conflict(&globs, &self.held).is_some() {
            self.passed_over = true;
            return false;
        }
        self.held.push(Held {
            id: id.to_string(),
            holder: None,
            globs,
        });
        true
    }
}

/// Whether saving `state` may make claimable a task that a scope held: a scoped task leaving
/// `in_progress`, or any change by hand of one in progress (its scope may have shrunk). Such a
/// task turns claimable without becoming ready, so the backends announce that the team's tasks
/// changed (every claimer of the team looks again).
pub fn frees_scope(state: &TaskState, event: &str) -> bool {
    let was_held = state.loaded_status == TaskStatus::InProgress;
    let left = state.status != TaskStatus::InProgress && state.metadata.contains(SCOPE_KEY_TEXT);
    was_held && (left || event == "task.updated")
}

#[cfg(test)]
#[path = "scope_tests.rs"]
mod tests;

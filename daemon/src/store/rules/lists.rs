//! What a task list asks for, checked once for both backends, and how a page is cut.

use super::validate;
use crate::store::error::StoreResult;
use crate::store::types::TaskFilter;

/// A task filter with its cursor and prefix checked: the values a backend binds.
pub struct TaskQuery {
    pub prefix: Option<String>,
    /// The cursor's prefix and number: tasks after it in id order.
    pub after_prefix: Option<String>,
    pub after_number: Option<i64>,
    /// One row past the page, which tells whether another page follows ([`cut_page`]).
    pub fetch: i64,
}

pub fn task_query(filter: &TaskFilter) -> StoreResult<TaskQuery> {
    let after = filter
        .after
        .as_deref()
        .map(|a| validate::task_id("after", a))
        .transpose()?;
    let prefix = filter
        .prefix
        .as_deref()
        .map(|p| validate::prefix("prefix", p))
        .transpose()?;
    let (after_prefix, after_number) = after.map_or((None, None), |(p, n)| (Some(p), Some(n)));
    Ok(TaskQuery {
        prefix,
        after_prefix,
        after_number,
        fetch: filter.limit as i64 + 1,
    })
}

/// Keeps the first `limit` rows and returns the cursor of the next page: the last kept row's
/// id when a row was read past the page, `None` at the end.
pub fn cut_page<T>(rows: &mut Vec<T>, limit: usize, id: impl Fn(&T) -> String) -> Option<String> {
    if rows.len() <= limit {
        return None;
    }
    rows.truncate(limit);
    rows.last().map(id)
}

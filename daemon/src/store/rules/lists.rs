//! What a task list asks for, checked once for both backends, and how a page is cut: by
//! count, and by bytes ([`PageBudget`]), so no answer holds a list of large rows whole.

use super::validate;
use crate::store::error::StoreResult;
use crate::store::rules::TaskState;
use crate::store::types::{BytePage, TaskFilter};
use serde::Serialize;

/// A task filter with its cursor and prefix checked: the values a backend binds.
pub struct TaskQuery {
    pub prefix: Option<String>,
    /// The cursor's prefix and number: tasks after it in id order.
    pub after_prefix: Option<String>,
    pub after_number: Option<i64>,
    /// One row past the page, which tells whether another page follows ([`take_task_page`]).
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

/// What a page's envelope (`{"messages":[…],"next":…}`) may take besides its rows.
const ENVELOPE_BYTES: usize = 1024;

/// A page's byte budget (`[limits] max_page_bytes`): rows are taken while their JSON fits,
/// so a page is under the budget, or a single row (a page is never empty while rows remain,
/// and no row is larger than its own limit: `max_message_bytes`, `[memory] max_bytes`).
/// Each row is measured as it is read, so the rows past the budget are never held.
#[derive(Debug)]
pub struct PageBudget {
    /// Bytes left; `None`: no budget.
    left: Option<usize>,
    taken: usize,
}

impl PageBudget {
    pub fn new(max_bytes: Option<usize>) -> PageBudget {
        PageBudget {
            left: max_bytes.map(|max| max.saturating_sub(ENVELOPE_BYTES)),
            taken: 0,
        }
    }

    /// Whether `row` fits (it is then counted): the first row always does.
    pub fn fits<T: Serialize>(&mut self, row: &T) -> bool {
        if self.left.is_none() {
            return true;
        }
        self.fits_bytes(json_len(row))
    }

    /// Whether a row of `bytes` as JSON fits (it is then counted): the first always does.
    pub fn fits_bytes(&mut self, bytes: usize) -> bool {
        let Some(left) = self.left else {
            return true;
        };
        // The row and the comma before it.
        let bytes = bytes + 1;
        if self.taken > 0 && bytes > left {
            return false;
        }
        self.left = Some(left.saturating_sub(bytes));
        self.taken += 1;
        true
    }
}

/// Rows read one at a time into a page until one does not fit; the rest are not read.
pub fn take_page<T: Serialize, E>(
    rows: impl IntoIterator<Item = Result<T, E>>,
    max_bytes: Option<usize>,
) -> Result<BytePage<T>, E> {
    let mut budget = PageBudget::new(max_bytes);
    let mut items = Vec::new();
    for row in rows {
        let row = row?;
        if !budget.fits(&row) {
            return Ok(BytePage { items, cut: true });
        }
        items.push(row);
    }
    Ok(BytePage { items, cut: false })
}

/// What a task takes in a page, from its stored row: its texts as JSON, its stored JSON
/// (`metadata`, `result`: compact text, sent as is), and a bound for the fixed fields and a
/// few edges (a task's `blockedBy` are at most `[limits] max_blocked_by` ids).
pub fn task_bytes(t: &TaskState) -> usize {
    const FIXED: usize = 512;
    let text = |s: &Option<String>| s.as_ref().map_or(0, json_len);
    FIXED
        + json_len(&t.id)
        + json_len(&t.subject)
        + json_len(&t.description)
        + text(&t.active_form)
        + text(&t.owner)
        + text(&t.claimed_by)
        + text(&t.failure_reason)
        + t.metadata.len()
        + t.result.as_ref().map_or(0, String::len)
}

/// A task page from rows read one at a time (the query asks for one past the page): taken
/// while they fit `limit` and `max_bytes`; the next page's cursor when a row was left.
pub fn take_task_page<E>(
    rows: impl IntoIterator<Item = Result<TaskState, E>>,
    limit: usize,
    max_bytes: Option<usize>,
) -> Result<(Vec<TaskState>, Option<String>), E> {
    let mut budget = PageBudget::new(max_bytes);
    let mut items: Vec<TaskState> = Vec::new();
    for row in rows {
        let row = row?;
        if items.len() >= limit || !budget.fits_bytes(task_bytes(&row)) {
            let next = items.last().map(|t| t.id.clone());
            return Ok((items, next));
        }
        items.push(row);
    }
    Ok((items, None))
}

/// The length of `value` as compact JSON, counted without building the text.
pub fn json_len<T: Serialize>(value: &T) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Writing to a counter never fails; a value that cannot be written counts as nothing.
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_takes_rows_while_they_fit_and_always_the_first() {
        let rows = |n: usize, len: usize| (0..n).map(move |_| Ok::<_, ()>("x".repeat(len)));
        // Each row is 1,000 bytes of text, 1,002 as JSON, 1,003 with its comma.
        let page = take_page(rows(10, 1000), Some(ENVELOPE_BYTES + 3_500)).unwrap();
        assert_eq!((page.items.len(), page.cut), (3, true));
        let page = take_page(rows(10, 1000), Some(ENVELOPE_BYTES + 100_000)).unwrap();
        assert_eq!((page.items.len(), page.cut), (10, false));
        let page = take_page(rows(2, 1_000_000), Some(ENVELOPE_BYTES + 10)).unwrap();
        assert_eq!(
            (page.items.len(), page.cut),
            (1, true),
            "one row too large still comes"
        );
        let page = take_page(rows(5, 1_000_000), None).unwrap();
        assert_eq!((page.items.len(), page.cut), (5, false));
        assert_eq!(json_len(&"a\"b"), 6);
    }
}

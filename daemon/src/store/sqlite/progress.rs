//! Each task's newest pass-rate report on SQLite: for every task of the team, one walk back along
//! `messages_by_task` to its newest `test_result` or `impl_progress` with a numeric `passRate`,
//! then the page in the order asked for. The cost follows the team's tasks, not its messages.

use super::super::error::StoreResult;
use super::super::types::{ProgressOrder, ProgressQuery};
use super::rows::{message_from_row, MESSAGE_COLUMNS};
use huddle_wire::Message;
use rusqlite::{params, Connection};

/// Each task's newest report's `seq` (null for a task without one).
const LATEST: &str = "select (select m.seq from messages m indexed by messages_by_task \
     where m.team_id = t.team_id and m.task_ref = t.id \
     and m.type in ('test_result', 'impl_progress') \
     and json_type(m.data, '$.passRate') in ('integer', 'real') \
     order by m.seq desc limit 1) as seq \
     from tasks t where t.team_id = ?1";

/// The page of reports and how many tasks have one.
pub fn task_progress(
    conn: &Connection,
    team_id: i64,
    q: &ProgressQuery,
) -> StoreResult<(Vec<Message>, i64)> {
    let total: i64 = conn
        .prepare_cached(&format!("select count(seq) from ({LATEST})"))?
        .query_row([team_id], |r| r.get(0))?;
    let dir = if q.ascending { "asc" } else { "desc" };
    let order = match q.order {
        ProgressOrder::Rate => format!("json_extract(m.data, '$.passRate') {dir}, m.seq {dir}"),
        ProgressOrder::Recent => format!("m.seq {dir}"),
    };
    let columns = MESSAGE_COLUMNS
        .split(", ")
        .map(|c| format!("m.{c}"))
        .collect::<Vec<_>>()
        .join(", ");
    let sql = format!(
        "select {columns} from ({LATEST}) l cross join messages m \
         on m.team_id = ?1 and m.seq = l.seq order by {order} limit ?2 offset ?3"
    );
    let mut stmt = conn.prepare_cached(&sql)?;
    let rows = stmt.query_map(
        params![team_id, q.limit as i64, q.offset as i64],
        message_from_row,
    )?;
    Ok((rows.collect::<Result<_, _>>()?, total))
}

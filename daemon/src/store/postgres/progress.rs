//! Each task's newest pass-rate report on PostgreSQL: for every task of the team, one walk back
//! along `messages_by_task` (a lateral subquery, newest first, limit 1) to its newest
//! `test_result` or `impl_progress` with a numeric `passRate`, then the page in the order asked
//! for. The cost follows the team's tasks, not its messages.

use super::super::error::StoreResult;
use super::super::types::{ProgressOrder, ProgressQuery};
use super::db::Db;
use super::rows::{message_from_row, MESSAGE_COLUMNS};
use huddle_wire::Message;

/// Each task's newest report's `seq` (tasks without one are left out).
const LATEST: &str = "select l.seq from tasks t cross join lateral (\
     select m.seq from messages m where m.team_id = t.team_id and m.task_ref = t.id \
     and m.type in ('test_result', 'impl_progress') \
     and jsonb_typeof(m.data::jsonb -> 'passRate') = 'number' \
     order by m.seq desc limit 1) l where t.team_id = $1";

/// The page of reports and how many tasks have one.
pub async fn task_progress(
    mut db: Db<'_>,
    team_id: i64,
    q: &ProgressQuery,
) -> StoreResult<(Vec<Message>, i64)> {
    let total: i64 = sqlx::query_scalar(&format!("select count(*) from ({LATEST}) latest"))
        .bind(team_id)
        .fetch_one(db.re())
        .await?;
    let dir = if q.ascending { "asc" } else { "desc" };
    let order = match q.order {
        ProgressOrder::Rate => {
            format!("(m.data::jsonb ->> 'passRate')::float8 {dir}, m.seq {dir}")
        }
        ProgressOrder::Recent => format!("m.seq {dir}"),
    };
    let columns = MESSAGE_COLUMNS
        .split(", ")
        .map(|c| format!("m.{c}"))
        .collect::<Vec<_>>()
        .join(", ");
    let sql = format!(
        "select {columns} from ({LATEST}) latest join messages m \
         on m.team_id = $1 and m.seq = latest.seq order by {order} limit $2 offset $3"
    );
    let rows = sqlx::query(&sql)
        .bind(team_id)
        .bind(q.limit as i64)
        .bind(q.offset as i64)
        .fetch_all(db)
        .await?;
    let messages = rows
        .iter()
        .map(message_from_row)
        .collect::<Result<_, _>>()?;
    Ok((messages, total))
}

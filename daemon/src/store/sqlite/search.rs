//! Message search on SQLite: the FTS5 index `messages_fts` (migration 0004) when there are
//! words, a scan of the team's messages newest first otherwise; the other filters in SQL.

use super::super::rules::fts5_query;
use super::super::{MessageSearch, StoreResult};
use super::rows::{message_from_row, MESSAGE_COLUMNS};
use huddle_wire::Message;
use rusqlite::types::Value as Sql;
use rusqlite::{params_from_iter, Connection};

/// rowid = team_id * 2^40 + seq in `messages_fts`.
const TEAM_SHIFT: i64 = 1 << 40;

/// The page and the number of all matches.
pub fn search(
    conn: &Connection,
    team_id: i64,
    s: &MessageSearch,
) -> StoreResult<(Vec<Message>, i64)> {
    let mut args: Vec<Sql> = Vec::new();
    let mut conditions = vec!["m.team_id = ?".to_string()];
    args.push(Sql::Integer(team_id));
    let from = if s.words.is_empty() {
        "messages m".to_string()
    } else {
        // The rowid range keeps FTS5 to this team's rows.
        conditions.push("f.messages_fts match ? and f.rowid between ? and ?".into());
        args.push(Sql::Text(fts5_query(&s.words)));
        args.push(Sql::Integer(team_id * TEAM_SHIFT));
        args.push(Sql::Integer((team_id + 1) * TEAM_SHIFT - 1));
        "messages_fts f join messages m on m.team_id = ? and m.seq = f.rowid - ?".to_string()
    };
    let join_args = if s.words.is_empty() {
        vec![]
    } else {
        vec![Sql::Integer(team_id), Sql::Integer(team_id * TEAM_SHIFT)]
    };
    let text = |v: &Option<String>| v.clone().map(Sql::Text);
    for (column, value) in [
        ("m.sender = ?", text(&s.from)),
        ("m.recipient = ?", text(&s.to)),
        ("m.type = ?", text(&s.kind)),
        ("m.created_at >= ?", s.since_ms.map(Sql::Integer)),
        ("m.created_at < ?", s.until_ms.map(Sql::Integer)),
    ] {
        if let Some(value) = value {
            conditions.push(column.into());
            args.push(value);
        }
    }
    if let Some(task) = &s.task {
        conditions.push(
            "(json_extract(m.data, '$.taskId') = ? or json_extract(m.data, '$.task') = ?)".into(),
        );
        args.push(Sql::Text(task.clone()));
        args.push(Sql::Text(task.clone()));
    }
    let filter = conditions.join(" and ");
    let all_args: Vec<Sql> = join_args
        .iter()
        .cloned()
        .chain(args.iter().cloned())
        .collect();
    let total: i64 = conn
        .prepare_cached(&format!("select count(*) from {from} where {filter}"))?
        .query_row(params_from_iter(all_args.iter()), |r| r.get(0))?;
    let mut page_args = all_args;
    let mut page_filter = filter;
    if let Some(before) = s.before {
        page_filter.push_str(" and m.seq < ?");
        page_args.push(Sql::Integer(before));
    }
    page_args.push(Sql::Integer(s.limit as i64));
    let columns = MESSAGE_COLUMNS
        .split(", ")
        .map(|c| format!("m.{c}"))
        .collect::<Vec<_>>()
        .join(", ");
    let mut stmt = conn.prepare_cached(&format!(
        "select {columns} from {from} where {page_filter} order by m.seq desc limit ?"
    ))?;
    let rows = stmt.query_map(params_from_iter(page_args.iter()), message_from_row)?;
    Ok((rows.collect::<Result<_, _>>()?, total))
}

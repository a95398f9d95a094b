//! Message search on SQLite: the FTS5 index `messages_fts` (migrations 0004 and 0011) for words,
//! each indexed under its team's mark (`rules::team_words`), so a query walks only its team's
//! terms; its rowid is team_id * 2^40 + seq, so a `before` cursor is a rowid range FTS5 walks
//! newest first. The other filters are on `messages` (`task_ref`, `type` and `sender` are
//! indexed).
//!
//! Messages enter the index when a search with words needs them ([`index_pending`], a writer
//! job of the team's, a chunk at a time), not as they are posted: an FTS5 row costs about 10 µs
//! of the single writer, which every post would otherwise pay.

use super::super::error::StoreResult;
use super::super::rules::{fts5_query, take_page, team_words};
use super::super::types::{BytePage, MessageSearch};
use super::rows::{message_from_row, MESSAGE_COLUMNS};
use huddle_wire::Message;
use rusqlite::types::Value as Sql;
use rusqlite::{params, params_from_iter, Connection, OptionalExtension};

/// rowid = team_id * 2^40 + seq in `messages_fts`.
const TEAM_SHIFT: i64 = 1 << 40;

/// Messages indexed per writer job, so a long backlog never holds the writer (about 20 ms).
pub const INDEX_CHUNK: i64 = 2_000;

/// Adds the team's next messages up to `upto` not yet in the full-text index (at most
/// [`INDEX_CHUNK`]), each word under the team's mark (`rules::team_words`); `true` once every
/// one up to `upto` is in it.
pub fn index_pending(conn: &Connection, team_id: i64, upto: i64) -> StoreResult<bool> {
    let mark: i64 = conn
        .prepare_cached("select seq from messages_fts_mark where team_id = ?1")?
        .query_row(params![team_id], |r| r.get(0))
        .optional()?
        .unwrap_or(0);
    let mut rows = conn.prepare_cached(
        "select seq, summary, data from messages where team_id = ?1 and seq > ?2 \
         and seq <= ?4 order by seq limit ?3",
    )?;
    let mut insert =
        conn.prepare_cached("insert into messages_fts (rowid, summary, data) values (?1, ?2, ?3)")?;
    let (mut summary, mut data) = (String::new(), String::new());
    let mut last = None;
    let mut found = rows.query(params![team_id, mark, INDEX_CHUNK, upto])?;
    while let Some(row) = found.next()? {
        let seq: i64 = row.get(0)?;
        summary.clear();
        data.clear();
        team_words(team_id, &row.get::<_, String>(1)?, &mut summary);
        team_words(team_id, &row.get::<_, String>(2)?, &mut data);
        insert.execute(params![team_id * TEAM_SHIFT + seq, summary, data])?;
        last = Some(seq);
    }
    let Some(last) = last else {
        return Ok(true);
    };
    conn.prepare_cached(
        "insert into messages_fts_mark (team_id, seq) values (?1, ?2) \
         on conflict (team_id) do update set seq = excluded.seq",
    )?
    .execute(params![team_id, last])?;
    Ok(last >= upto)
}

/// The page and the number of all matches.
pub fn search(
    conn: &Connection,
    team_id: i64,
    s: &MessageSearch,
) -> StoreResult<(BytePage<Message>, i64)> {
    let (filters, filter_args) = filters(s);
    let lowest = team_id * TEAM_SHIFT;
    let highest = (team_id + 1) * TEAM_SHIFT - 1;
    let page_highest = s.before.map_or(highest, |b| highest.min(lowest + b - 1));
    let team = Sql::Integer(team_id);
    let limit = Sql::Integer(s.limit as i64);
    let (count_sql, count_args, page_sql, page_args) = if s.words.is_empty() {
        // Without statistics the planner would walk the team's whole log (newest first, to skip
        // the sort) for a task, a type or a sender, however few messages match.
        let table = if s.task.is_some() {
            "messages m indexed by messages_by_task"
        } else if s.kind.is_some() {
            "messages m indexed by messages_by_type"
        } else if s.from.is_some() {
            "messages m indexed by messages_by_sender"
        } else {
            "messages m"
        };
        let before = s.before.map_or(String::new(), |_| " and m.seq < ?".into());
        let mut page_args = vec![team.clone()];
        page_args.extend(filter_args.iter().cloned());
        page_args.extend(s.before.map(Sql::Integer));
        page_args.push(limit);
        (
            format!("select count(*) from {table} where m.team_id = ?{filters}"),
            [vec![team], filter_args].concat(),
            format!(
                "select {} from {table} where m.team_id = ?{filters}{before} \
                 order by m.seq desc limit ?",
                columns()
            ),
            page_args,
        )
    } else {
        let query = Sql::Text(fts5_query(team_id, &s.words));
        let matches = "messages_fts match ? and rowid between ? and ?";
        if filters.is_empty() {
            // Words alone: FTS5 counts and pages by itself; `messages` is read for the page only
            // (CROSS JOIN keeps that order).
            (
                format!("select count(*) from messages_fts where {matches}"),
                vec![query.clone(), Sql::Integer(lowest), Sql::Integer(highest)],
                format!(
                    "select {} from (select rowid from messages_fts where {matches} \
                     order by rowid desc limit ?) f \
                     cross join messages m on m.team_id = ? and m.seq = f.rowid - ? order by m.seq desc",
                    columns()
                ),
                vec![
                    query,
                    Sql::Integer(lowest),
                    Sql::Integer(page_highest),
                    limit,
                    team,
                    Sql::Integer(lowest),
                ],
            )
        } else {
            // CROSS JOIN keeps FTS5 outside: the planner would otherwise scan the team's log
            // and run the full-text query once per message.
            let from =
                "messages_fts f cross join messages m on m.team_id = ? and m.seq = f.rowid - ?";
            let matches = "f.messages_fts match ? and f.rowid between ? and ?";
            let with = |high: i64| {
                let mut args = vec![team.clone(), Sql::Integer(lowest), query.clone()];
                args.extend([Sql::Integer(lowest), Sql::Integer(high)]);
                args.extend(filter_args.iter().cloned());
                args
            };
            let mut page_args = with(page_highest);
            page_args.push(limit);
            (
                format!("select count(*) from {from} where {matches}{filters}"),
                with(highest),
                format!(
                    "select {} from {from} where {matches}{filters} order by f.rowid desc limit ?",
                    columns()
                ),
                page_args,
            )
        }
    };
    let total: i64 = conn
        .prepare_cached(&count_sql)?
        .query_row(params_from_iter(count_args.iter()), |r| r.get(0))?;
    let mut stmt = conn.prepare_cached(&page_sql)?;
    let rows = stmt.query_map(params_from_iter(page_args.iter()), message_from_row)?;
    Ok((take_page(rows, s.max_bytes)?, total))
}

/// ` and …` conditions on `m` for every filter but the words, with their arguments in order.
fn filters(s: &MessageSearch) -> (String, Vec<Sql>) {
    let text = |v: &Option<String>| v.clone().map(Sql::Text);
    let mut sql = String::new();
    let mut args = Vec::new();
    for (condition, value) in [
        ("m.sender = ?", text(&s.from)),
        ("m.recipient = ?", text(&s.to)),
        ("m.type = ?", text(&s.kind)),
        ("m.task_ref = ?", text(&s.task)),
        ("m.created_at >= ?", s.since_ms.map(Sql::Integer)),
        ("m.created_at < ?", s.until_ms.map(Sql::Integer)),
    ] {
        if let Some(value) = value {
            sql.push_str(" and ");
            sql.push_str(condition);
            args.push(value);
        }
    }
    (sql, args)
}

fn columns() -> String {
    MESSAGE_COLUMNS
        .split(", ")
        .map(|c| format!("m.{c}"))
        .collect::<Vec<_>>()
        .join(", ")
}

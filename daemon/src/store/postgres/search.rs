//! Message search on PostgreSQL: the `search` tsvector column and its GIN index (migration
//! 0003) when there are words; the other filters in SQL; newest first.

use super::super::error::StoreResult;
use super::super::rules::tsquery;
use super::super::types::{BytePage, MessageSearch};
use super::db::Db;
use super::rows::MESSAGE_COLUMNS;
use huddle_wire::Message;

enum Arg {
    Int(i64),
    Text(String),
}

/// The page and the number of all matches.
pub async fn search(
    mut db: Db<'_>,
    team_id: i64,
    s: &MessageSearch,
) -> StoreResult<(BytePage<Message>, i64)> {
    let mut args = vec![Arg::Int(team_id)];
    let mut conditions = vec!["team_id = $1".to_string()];
    let mut push = |condition: &str, arg: Arg| {
        args.push(arg);
        conditions.push(condition.replace('?', &format!("${}", args.len())));
    };
    if !s.words.is_empty() {
        push(
            "search @@ to_tsquery('simple', ?)",
            Arg::Text(tsquery(team_id, &s.words)),
        );
    }
    for (condition, value) in [
        ("sender = ?", &s.from),
        ("recipient = ?", &s.to),
        ("type = ?", &s.kind),
    ] {
        if let Some(value) = value {
            push(condition, Arg::Text(value.clone()));
        }
    }
    if let Some(since) = s.since_ms {
        push("created_at >= ?", Arg::Int(since));
    }
    if let Some(until) = s.until_ms {
        push("created_at < ?", Arg::Int(until));
    }
    if let Some(task) = &s.task {
        push("task_ref = ?", Arg::Text(task.clone()));
    }
    let filter = conditions.join(" and ");
    let count_sql = format!("select count(*) from messages where {filter}");
    let total: i64 = bind(sqlx::query_scalar(&count_sql), &args)
        .fetch_one(db.re())
        .await?;
    let mut page_filter = filter;
    if let Some(before) = s.before {
        args.push(Arg::Int(before));
        page_filter.push_str(&format!(" and seq < ${}", args.len()));
    }
    args.push(Arg::Int(s.limit as i64));
    let page_sql = format!(
        "select {MESSAGE_COLUMNS} from messages where {page_filter} order by seq desc limit ${}",
        args.len()
    );
    let mut query = sqlx::query(&page_sql);
    for arg in &args {
        query = match arg {
            Arg::Int(i) => query.bind(*i),
            Arg::Text(t) => query.bind(t.as_str()),
        };
    }
    let messages = super::messages::take_page(query.fetch(db), s.max_bytes).await?;
    Ok((messages, total))
}

fn bind<'q, O>(
    mut query: sqlx::query::QueryScalar<'q, sqlx::Postgres, O, sqlx::postgres::PgArguments>,
    args: &'q [Arg],
) -> sqlx::query::QueryScalar<'q, sqlx::Postgres, O, sqlx::postgres::PgArguments> {
    for arg in args {
        query = match arg {
            Arg::Int(i) => query.bind(*i),
            Arg::Text(t) => query.bind(t.as_str()),
        };
    }
    query
}

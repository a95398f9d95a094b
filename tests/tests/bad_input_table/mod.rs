//! The bad-input table: each malformed request, the status and error code it must get, and a
//! snapshot of the SQLite file to prove it changed nothing.

use reqwest::Method;

/// Row counts and sequence/version sums of every table: any change shows up here.
pub fn snapshot(db: &std::path::Path) -> Vec<(String, i64)> {
    let conn =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let queries = [
        ("teams", "select count(*) + sum(memory_version) * 10000000 from teams"),
        ("team_seqs", "select count(*) + sum(msg_seq) * 1000 + sum(event_seq) * 100000 from team_seqs"),
        ("agents", "select count(*) + coalesce(sum(inbox_cursor), 0) * 1000 from agents"),
        ("tasks", "select count(*) + coalesce(sum(version), 0) * 1000 + coalesce(sum(unmet_blockers), 0) * 100000 from tasks"),
        ("task_deps", "select count(*) from task_deps"),
        ("task_counters", "select count(*) + coalesce(sum(next_number), 0) * 1000 from task_counters"),
        ("messages", "select count(*) from messages"),
        ("idempotency_keys", "select count(*) from idempotency_keys"),
        ("events", "select count(*) from events"),
        ("memory_history", "select count(*) from memory_history"),
        ("test_runs", "select count(*) from test_runs"),
        ("test_outcomes", "select count(*) from test_outcomes"),
    ];
    queries
        .iter()
        .map(|(name, q)| {
            (
                name.to_string(),
                conn.query_row(q, [], |r| r.get::<_, Option<i64>>(0))
                    .unwrap()
                    .unwrap_or(0),
            )
        })
        .collect()
}

pub struct Case {
    pub what: &'static str,
    pub method: Method,
    pub path: &'static str,
    pub headers: Vec<(&'static str, &'static str)>,
    pub body: Option<Vec<u8>>,
    pub status: u16,
    pub code: &'static str,
}

pub fn case(
    what: &'static str,
    method: Method,
    path: &'static str,
    body: &str,
    status: u16,
    code: &'static str,
) -> Case {
    Case {
        what,
        method,
        path,
        headers: vec![],
        body: Some(body.as_bytes().to_vec()),
        status,
        code,
    }
}

/// Every malformed request of the table (`huge` is past the body limit, `deep` past serde's
/// nesting limit).
mod bus;
mod tasks;
mod test_history;

/// Every malformed request of the table (`huge` is past the body limit, `deep` past serde's
/// nesting limit).
pub fn cases(huge: &str, deep: &str) -> Vec<Case> {
    let mut all = tasks::cases();
    all.extend(bus::cases(huge, deep));
    all.extend(test_history::cases());
    all
}

//! A team's message search costs in proportion to its own messages: when another team's
//! indexed messages double, a small team's search of 16 one-letter words touches no more of the
//! index than before. Cost is counted, not timed, so the figure is the same on any machine:
//! SQLite's index entries the query's prefix terms make FTS5 merge, PostgreSQL's shared buffers
//! in `EXPLAIN (ANALYZE, BUFFERS)`. Both backends (`HUDDLE_TEST_BACKEND=postgres`).

use huddle_daemon::config::Backend;
use huddle_daemon::store::rules::{fts5_query, search_words, tsquery};
use huddle_tests::{Api, TestDaemon};
use serde_json::{json, Value};

/// Words every message holds: sixteen, one beginning with each letter a…p.
const WORDS: &str = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima \
                     mike november oscar papa";
/// The search: a one-letter prefix of each.
const QUERY: &str = "a b c d e f g h i j k l m n o p";
/// The large team's messages, posted twice.
const BIG: usize = 4_000;

async fn post_messages(api: &Api, from: usize, count: usize) {
    for start in (from..from + count).step_by(500) {
        let messages: Vec<Value> = (start..(start + 500).min(from + count))
            .map(|n| {
                json!({"to": "*", "type": "note", "summary": format!("{WORDS} {n}"),
                            "data": {"n": n, "note": WORDS}})
            })
            .collect();
        api.post(&api.t("/messages/batch"), json!({ "messages": messages }))
            .await
            .expect_status(201);
    }
}

/// Searches through the API (which indexes what is pending) and returns the total.
async fn search(api: &Api) -> i64 {
    let reply = api
        .get(&api.t(&format!(
            "/messages/search?q={}&limit=1",
            QUERY.replace(' ', "+")
        )))
        .await
        .expect_status(200);
    reply.body["total"].as_i64().unwrap()
}

#[tokio::test]
async fn a_small_teams_search_does_not_grow_with_another_teams_messages() {
    let d = TestDaemon::start().await;
    let big = d.team("big").await;
    let small = d.team("small").await;
    post_messages(&small, 0, 50).await;
    post_messages(&big, 0, BIG).await;
    assert_eq!(search(&big).await, BIG as i64);
    assert_eq!(search(&small).await, 50);
    let before = pages_touched(&d, "small").await;

    post_messages(&big, BIG, BIG).await;
    assert_eq!(search(&big).await, 2 * BIG as i64);
    assert_eq!(search(&small).await, 50);
    let after = pages_touched(&d, "small").await;
    // Proportional to everyone's messages, the second figure would be about twice the first.
    assert!(
        after <= before + before / 4 + 4,
        "the small team's search read {before} (index entries or pages), then {after} once the other team's \
         messages doubled"
    );
}

/// Pages the team's words-only search touches, read beside the daemon.
async fn pages_touched(d: &TestDaemon, team: &str) -> i64 {
    let words = search_words(QUERY).unwrap();
    match d.settings.storage.backend {
        Backend::Sqlite => sqlite_pages(d, team, &words),
        Backend::Postgres => postgres_pages(&d.settings.storage.database_url, team, &words).await,
    }
}

/// Index entries the team's query makes FTS5 read: a prefix term ("a"*) is answered by merging
/// the document lists of every term it begins, so the entries read are the documents of those
/// terms, summed over the query's words (`fts5vocab` lists terms with their document counts).
fn sqlite_pages(d: &TestDaemon, team: &str, words: &[String]) -> i64 {
    let conn = rusqlite::Connection::open(d.data_dir.join("huddle.db")).unwrap();
    let id: i64 = conn
        .query_row("select id from teams where name = ?1", [team], |r| r.get(0))
        .unwrap();
    conn.execute_batch(
        "create virtual table temp.vocab using fts5vocab(main, messages_fts, 'row')",
    )
    .unwrap();
    // The terms FTS5 is asked for: the daemon's query, `"<term>"*` joined by AND.
    let query = fts5_query(id, words);
    let prefixes: Vec<&str> = query
        .split(" AND ")
        .map(|t| t.trim_start_matches('"').trim_end_matches("\"*"))
        .collect();
    assert_eq!(prefixes.len(), words.len(), "{query}");
    prefixes
        .iter()
        .map(|prefix| {
            conn.query_row(
                "select coalesce(sum(doc), 0) from temp.vocab \
                 where substr(term, 1, length(?1)) = ?1",
                [prefix],
                |r| r.get::<_, i64>(0),
            )
            .unwrap()
        })
        .sum()
}

/// Shared buffers the team's words make the GIN index read, after `vacuum` has merged its
/// pending list (which every search reads whole until then; bounded by
/// `gin_pending_list_limit`). The query leaves out `team_id` and sequential scans, so the index
/// alone answers it: with a small team the planner reads the team's rows instead, but a large
/// team's search walks the index, and this is what that walk costs.
async fn postgres_pages(url: &str, team: &str, words: &[String]) -> i64 {
    use sqlx::{Connection, Row};
    let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
    sqlx::query("vacuum analyze messages")
        .execute(&mut conn)
        .await
        .unwrap();
    let id: i64 = sqlx::query_scalar("select id from teams where name = $1")
        .bind(team)
        .fetch_one(&mut conn)
        .await
        .unwrap();
    sqlx::query("set enable_seqscan = off")
        .execute(&mut conn)
        .await
        .unwrap();
    let count: i64 = sqlx::query_scalar(
        "select count(*) from messages where search @@ to_tsquery('simple', $1)",
    )
    .bind(tsquery(id, words))
    .fetch_one(&mut conn)
    .await
    .unwrap();
    assert_eq!(count, 50, "the team's words match only its own messages");
    let lines: Vec<String> = sqlx::query(
        "explain (analyze, buffers) select count(*) from messages \
         where search @@ to_tsquery('simple', $1)",
    )
    .bind(tsquery(id, words))
    .fetch_all(&mut conn)
    .await
    .unwrap()
    .iter()
    .map(|row| row.get(0))
    .collect();
    assert!(
        lines.iter().any(|l| l.contains("messages_search")),
        "the GIN index answers: {lines:#?}"
    );
    // The top node's line, e.g. "  Buffers: shared hit=12 read=3": everything below it summed.
    let buffers = lines
        .iter()
        .find_map(|l| l.trim().strip_prefix("Buffers: "))
        .unwrap_or_else(|| panic!("no buffer figures in {lines:#?}"));
    buffers
        .split_whitespace()
        .filter_map(|part| {
            let (name, value) = part.split_once('=')?;
            matches!(name, "hit" | "read").then(|| value.parse::<i64>().unwrap())
        })
        .sum()
}

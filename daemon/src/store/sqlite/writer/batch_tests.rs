//! A batch whose transaction SQLite rolled back under a job keeps nothing and runs nothing more.

use super::super::super::super::error::StoreError;
use super::super::{Published, Reopen, Writer};
use crate::hub::Hub;
use crate::store::sqlite::{checkpointer::Checkpointer, empty_claims::EmptyClaims, migrate};
use rusqlite::Connection;
use std::path::Path;
use std::sync::Arc;

/// The store's schema (the writer's own statements run on it) and a table of the test's.
fn open(path: &Path) -> Connection {
    let mut conn = Connection::open(path).unwrap();
    conn.execute_batch("pragma journal_mode = wal").unwrap();
    migrate::apply(&mut conn, true).unwrap();
    conn.execute_batch("create table if not exists t (n integer)")
        .unwrap();
    conn
}

fn start(path: &Path) -> Writer {
    let reopen_path = path.to_path_buf();
    let reopen = Reopen {
        open: Box::new(move || Ok(open(&reopen_path))),
        recycle_readers: Box::new(|| {}),
    };
    let published = Published {
        hub: Arc::new(Hub::new(16)),
        empty_claims: Arc::new(EmptyClaims::default()),
    };
    let checkpointer = Checkpointer::start(path.to_path_buf());
    let (writer, _done) = Writer::start(open(path), reopen, published, checkpointer, 64, 0);
    writer
}

fn rows(path: &Path) -> Vec<i64> {
    let conn = Connection::open(path).unwrap();
    let mut stmt = conn.prepare("select n from t order by n").unwrap();
    let rows = stmt.query_map([], |r| r.get(0)).unwrap();
    rows.collect::<Result<_, _>>().unwrap()
}

#[tokio::test]
async fn a_transaction_sqlite_rolled_back_keeps_nothing_of_its_batch() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.db");
    let writer = start(&path);
    let insert = |n: i64| {
        move |ctx: &mut super::super::WriteCtx<'_>| {
            ctx.conn.execute("insert into t values (?1)", [n])?;
            Ok(())
        }
    };
    // The first job holds its batch open until the others are queued behind it, so they join
    // it. (Store-wide jobs: never "heavy", never a batch of their own.)
    let (go, wait) = std::sync::mpsc::channel::<()>();
    let first = writer.write(move |ctx| {
        wait.recv().unwrap();
        insert(1)(ctx)
    });
    // As SQLite does under an I/O error or a full disk in a statement without a statement
    // journal; the job itself reports success.
    let rolled_back = writer.write(|ctx| {
        ctx.conn.execute_batch("rollback")?;
        Ok(())
    });
    let after = writer.write(insert(3));
    let sender = async {
        go.send(()).unwrap();
    };
    // Polled in this order: each job is sent before `go` is.
    let (first, rolled_back, after, ()) = tokio::join!(first, rolled_back, after, sender);
    assert!(
        matches!(rolled_back, Err(StoreError::Unavailable(_))),
        "{rolled_back:?}"
    );
    // A job answered with an error kept nothing, and one answered `Ok` was kept.
    let kept = rows(&path);
    for (n, result) in [(1, &first), (3, &after)] {
        assert_eq!(
            kept.contains(&n),
            result.is_ok(),
            "job {n}: {result:?}, rows {kept:?}"
        );
    }
    assert!(
        first.is_err(),
        "the first job shared the rolled-back transaction"
    );
    // The writer goes on: the next batch commits.
    writer.write(insert(4)).await.unwrap();
    assert!(rows(&path).contains(&4));
}

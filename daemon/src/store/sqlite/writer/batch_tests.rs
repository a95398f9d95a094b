//! A batch whose transaction SQLite rolled back under a job, or under a claim it serves, keeps
//! nothing and runs nothing more; a batch that cannot renew leases after an outage fails its
//! jobs rather than holding them.

use super::super::super::super::error::StoreError;
use super::super::super::super::types::{Caller, ClaimToPark};
use super::super::{park, Published, Reopen, Writer};
use crate::hub::{Hub, ReadyTask};
use crate::store::sqlite::{checkpointer::Checkpointer, empty_claims::EmptyClaims, migrate};
use huddle_wire::Role;
use rusqlite::Connection;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

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
    start_with(path, Arc::new(Hub::new(16)), 0)
}

fn start_with(path: &Path, hub: Arc<Hub>, outage_lease_grace_ms: i64) -> Writer {
    let reopen_path = path.to_path_buf();
    let reopen = Reopen {
        open: Box::new(move || Ok(open(&reopen_path))),
        recycle_readers: Box::new(|| {}),
    };
    let published = Published {
        hub,
        empty_claims: Arc::new(EmptyClaims::default()),
    };
    let checkpointer = Checkpointer::start(path.to_path_buf());
    let (writer, _done) = Writer::start(
        open(path),
        reopen,
        published,
        checkpointer,
        64,
        outage_lease_grace_ms,
    );
    writer
}

/// Team 1, which the tests' tasks belong to.
const SEED: &str = "insert into teams (id, name, created_at) values (1, 'team', 0)";

/// A task of team 1 with prefix `A`: its number from `id`, held by `w` when in progress.
fn task_sql(id: &str, created_at: i64, unmet: i64, status: &str, lease: Option<i64>) -> String {
    let lease = lease.map_or("null".to_string(), |l| l.to_string());
    let number: String = id.chars().filter(char::is_ascii_digit).collect();
    format!(
        "insert into tasks (team_id, id, prefix, number, subject, status, max_attempts,
             unmet_blockers, lease_expires_at, claimed_by, created_at, updated_at)
         values (1, '{id}', 'A', {number}, 's', '{status}', 3, {unmet}, {lease},
             {claimed}, {created_at}, {created_at})",
        claimed = if status == "in_progress" {
            "'w'"
        } else {
            "null"
        }
    )
}

fn status_of(path: &Path, id: &str) -> (String, Option<String>) {
    let conn = Connection::open(path).unwrap();
    conn.query_row(
        "select status, claimed_by from tasks where team_id = 1 and id = ?1",
        [id],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
    .unwrap()
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

#[tokio::test]
async fn a_claim_served_after_sqlite_rolled_back_is_not_run_outside_the_transaction() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.db");
    let hub = Arc::new(Hub::new(16));
    let writer = start_with(&path, hub.clone(), 0);
    // A-0 ready since before; blocked. On the writer's connection, a trigger that
    // rolls the whole transaction back when w1 claims a task, as an I/O error would.
    writer
        .write(|ctx| {
            ctx.conn.execute_batch(&format!(
                "{SEED}; {}; {}; {};
                 create temp trigger roll_back_w1 after update on tasks
                 when new.claimed_by = 'w1' begin select raise(rollback, 'injected'); end;",
                task_sql("A-0", 1, 0, "pending", None),
                task_sql("A-1", 2, 1, "pending", None),
                task_sql("A-2", 3, 1, "pending", None),
            ))?;
            Ok(())
        })
        .await
        .unwrap();
    // Two claimers wait for A-* work, each with its claim parked.
    let waiters = hub.claim_waiters(1);
    let prefixes = vec!["A".to_string()];
    let mut answers = Vec::new();
    let mut tickets = Vec::new();
    for agent in ["w1", "w2"] {
        let ticket = waiters.register(agent, "tester", &prefixes, None);
        let caller = Caller {
            team_id: 1,
            team: "team".into(),
            agent: agent.into(),
            role: Role::Tester,
        };
        let claim = ClaimToPark {
            prefixes: &prefixes,
            project: None,
            lease_ms: 60_000,
            max: 1,
        };
        answers.push(park(&ticket, &caller, claim, Box::new(|_| {})));
        tickets.push(ticket);
    }
    // One batch makes ready: the writer serves w1's claim (it takes A-0, and the
    // trigger rolls everything back), then would serve w2's for A-2.
    let ready = ReadyTask {
        prefix: "A".into(),
        owner: None,
        project: None,
    };
    let made_ready = writer
        .write(move |ctx| {
            ctx.conn
                .execute_batch("update tasks set unmet_blockers = 0 where id in ('A-1', 'A-2')")?;
            ctx.ready(1, "A-1", ready.clone());
            ctx.ready(1, "A-2", ready);
            Ok(())
        })
        .await;
    assert!(
        matches!(made_ready, Err(StoreError::Unavailable(_))),
        "{made_ready:?}"
    );
    let w1 = tokio::time::timeout(Duration::from_secs(60), answers.remove(0))
        .await
        .expect("w1 is answered")
        .expect("w1's channel");
    assert!(matches!(&w1, Ok(tasks) if tasks.is_empty()), "{w1:?}");
    // Nothing of the batch was kept, and w2's claim did not run on its own: every task is
    // where it was before the batch.
    assert_eq!(status_of(&path, "A-0"), ("pending".to_string(), None));
    let blocked: i64 = Connection::open(&path)
        .unwrap()
        .query_row("select sum(unmet_blockers) from tasks", [], |r| r.get(0))
        .unwrap();
    assert_eq!(blocked, 2, "A-1 and A-2 stay blocked");
    // The writer goes on.
    writer.write(|_| Ok(())).await.unwrap();
}

#[tokio::test]
async fn jobs_fail_rather_than_wait_while_leases_cannot_be_renewed_after_an_outage() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.db");
    let writer = start_with(&path, Arc::new(Hub::new(16)), 3_600_000);
    let lease = chrono::Utc::now().timestamp_millis() + 600_000;
    // A live lease, and a trigger that makes every renewal of it fail.
    writer
        .write(move |ctx| {
            ctx.conn.execute_batch(&format!(
                "{SEED}; {};
                 create temp trigger refuse_renewal before update of lease_expires_at on tasks
                 begin select raise(abort, 'injected'); end;",
                task_sql("A-0", 1, 0, "in_progress", Some(lease)),
            ))?;
            Ok(())
        })
        .await
        .unwrap();
    // An outage: a batch that does not commit.
    let lost = writer
        .write(|ctx| {
            ctx.conn.execute_batch("rollback")?;
            Ok(())
        })
        .await;
    assert!(matches!(lost, Err(StoreError::Unavailable(_))), "{lost:?}");
    // Every later batch renews first and fails to: its jobs are answered, not held.
    for _ in 0..2 {
        let answered = tokio::time::timeout(Duration::from_secs(60), writer.write(|_| Ok(())))
            .await
            .expect("a job is answered while renewals fail");
        assert!(
            matches!(answered, Err(StoreError::Unavailable(_))),
            "{answered:?}"
        );
    }
    assert_eq!(
        status_of(&path, "A-0"),
        ("in_progress".to_string(), Some("w".to_string()))
    );
}

//! The SQLite ceiling, in process: a claim-and-complete loop on a raw table with
//! `synchronous` as the daemon's, committing `per_tx` tasks per transaction.

use super::stats::{Figures, Latencies};
use super::{Sizes, Sync};
use std::time::Instant;

pub fn run(sync: Sync, per_tx: usize, sizes: &Sizes) -> Result<Figures, String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let conn =
        rusqlite::Connection::open(dir.path().join("baseline.db")).map_err(|e| e.to_string())?;
    conn.execute_batch(&format!(
        "pragma journal_mode = wal; pragma synchronous = {};
         create table jobs (id integer primary key, status text not null, owner text);
         create index jobs_ready on jobs (id) where status = 'pending';",
        sync.as_str()
    ))
    .map_err(|e| e.to_string())?;
    let n = sizes.tasks;
    {
        let tx = conn.unchecked_transaction().map_err(|e| e.to_string())?;
        let mut insert = tx
            .prepare("insert into jobs (status) values ('pending')")
            .map_err(|e| e.to_string())?;
        for _ in 0..n {
            insert.execute([]).map_err(|e| e.to_string())?;
        }
        drop(insert);
        tx.commit().map_err(|e| e.to_string())?;
    }
    let mut lat = Latencies::default();
    let started = Instant::now();
    let mut done = 0;
    while done < n {
        let t0 = Instant::now();
        conn.execute_batch("begin immediate")
            .map_err(|e| e.to_string())?;
        let mut in_tx = 0;
        while in_tx < per_tx && done < n {
            let id: i64 = conn
                .query_row("update jobs set status = 'running', owner = 'w' where id = (select id from jobs where status = 'pending' order by id limit 1) returning id", [], |r| r.get(0))
                .map_err(|e| e.to_string())?;
            conn.execute("update jobs set status = 'done' where id = ?1", [id])
                .map_err(|e| e.to_string())?;
            in_tx += 1;
            done += 1;
        }
        conn.execute_batch("commit").map_err(|e| e.to_string())?;
        lat.push(t0.elapsed());
    }
    let name = format!("sqlite raw, {per_tx}/tx");
    let mut figures = Figures::new(&name, "tasks", n, started.elapsed(), &mut lat)
        .note("latency", "one transaction");
    figures.settings =
        serde_json::json!({"synchronous": sync.as_str(), "perTransaction": per_tx, "tasks": n});
    Ok(figures)
}

/// CPU of this thread per durable commit of one small row, `commits` in a row, each its own
/// transaction, with `synchronous` as the daemon's: the least any durable write costs on this
/// host, whatever serves it (`wake` sets a create's cost beside it).
pub fn lone_commit_cpu_us(sync: Sync, commits: usize) -> Result<f64, String> {
    const WARM_UP: usize = 20;
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let conn = rusqlite::Connection::open(dir.path().join("lone.db")).map_err(|e| e.to_string())?;
    conn.execute_batch(&format!(
        "pragma journal_mode = wal; pragma synchronous = {};
         create table jobs (id integer primary key, status text not null, owner text);",
        sync.as_str()
    ))
    .map_err(|e| e.to_string())?;
    let mut insert = conn
        .prepare("insert into jobs (status) values ('pending')")
        .map_err(|e| e.to_string())?;
    for _ in 0..WARM_UP {
        insert.execute([]).map_err(|e| e.to_string())?;
    }
    let before = super::thread_cpu::this_thread_ns();
    for _ in 0..commits {
        // Outside a transaction each statement commits on its own.
        insert.execute([]).map_err(|e| e.to_string())?;
    }
    let spent = super::thread_cpu::this_thread_ns().saturating_sub(before);
    Ok(spent as f64 / 1e3 / commits.max(1) as f64)
}

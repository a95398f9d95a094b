//! One task's creation with huddle's rows, committed durably in process on a copy of a real
//! daemon's database: the least a create costs with huddle's schema on this host, whatever
//! serves it (`wake` sets the daemon's create beside it).

use super::baseline_own_copy::{open_as_writer, TaskRow};
use super::Sync;
use rusqlite::{params, Connection, OptionalExtension};
use std::path::Path;

/// CPU of this thread per durable commit of one task's creation with huddle's rows (the task,
/// its event carrying it, the prefix's counter, the team's sequences and usage), `commits` in a
/// row, each its own transaction, in the copy at `db` (team `team`): the least a create costs
/// with huddle's schema on this host, whatever serves it (`wake` sets a create's cost beside it).
pub fn lone_create_cpu_us(
    sync: Sync,
    db: &Path,
    team: &str,
    commits: usize,
) -> Result<f64, String> {
    const WARM_UP: usize = 20;
    let conn = open_as_writer(db, sync)?;
    let team_id: i64 = conn
        .query_row("select id from teams where name = ?1", [team], |r| r.get(0))
        .map_err(|e| e.to_string())?;
    let mut before = 0;
    for i in 0..WARM_UP + commits {
        if i == WARM_UP {
            before = super::thread_cpu::this_thread_ns();
        }
        create_one(&conn, team_id).map_err(|e| e.to_string())?;
    }
    let spent = super::thread_cpu::this_thread_ns().saturating_sub(before);
    Ok(spent as f64 / 1e3 / commits.max(1) as f64)
}

/// One transaction: the writer's statements for a create (`store/sqlite/tasks.rs`).
fn create_one(conn: &Connection, team_id: i64) -> rusqlite::Result<()> {
    const PREFIX: &str = "RAW";
    conn.execute_batch("begin immediate")?;
    let number: i64 = conn
        .prepare_cached("select next_number from task_counters where team_id = ?1 and prefix = ?2")?
        .query_row(params![team_id, PREFIX], |r| r.get(0))
        .optional()?
        .unwrap_or(1);
    let (seq, now): (i64, i64) = conn
        .prepare_cached("select event_seq + 1, cast(unixepoch('subsec') * 1000 as integer) from team_seqs where team_id = ?1")?
        .query_row([team_id], |r| Ok((r.get(0)?, r.get(1)?)))?;
    let task = TaskRow {
        id: format!("{PREFIX}-{number}"),
        subject: "wake".into(),
        description: String::new(),
        metadata: "{}".into(),
        attempts: 0,
        max_attempts: 3,
        version: 1,
        created_at: now,
        updated_at: now,
    };
    conn.prepare_cached(
        "insert into tasks (team_id, id, prefix, number, subject, description, active_form, status, owner,
                            max_attempts, metadata, created_at, updated_at)
         values (?1, ?2, ?3, ?4, ?5, ?6, null, 'pending', null, ?7, ?8, ?9, ?9)",
    )?
    .execute(params![
        team_id,
        task.id,
        PREFIX,
        number,
        task.subject,
        task.description,
        task.max_attempts,
        task.metadata,
        now
    ])?;
    let data = task.event_json("pending", None, None, &(Vec::new(), Vec::new()), true);
    conn.prepare_cached(
        "insert into events (team_id, seq, type, data, created_at) values (?1, ?2, 'task.created', ?3, ?4)",
    )?
    .execute(params![team_id, seq, data, now])?;
    conn.prepare_cached(
        "insert into task_counters (team_id, prefix, next_number) values (?1, ?2, ?3)
         on conflict (team_id, prefix) do update set next_number = max(next_number, excluded.next_number)",
    )?
    .execute(params![team_id, PREFIX, number + 1])?;
    conn.prepare_cached(
        "update team_seqs set msg_seq = msg_seq, event_seq = ?2 where team_id = ?1",
    )?
    .execute(params![team_id, seq])?;
    conn.prepare_cached(
        "update team_usage set tasks_pending = tasks_pending + 1,
             tasks_in_progress = tasks_in_progress + 0, tasks_completed = tasks_completed + 0,
             tasks_failed = tasks_failed + 0, tasks_cancelled = tasks_cancelled + 0,
             storage_bytes = storage_bytes + ?2
         where team_id = ?1",
    )?
    .execute(params![team_id, (task.subject.len() + 2) as i64])?;
    conn.execute_batch("commit")
}

#[cfg(test)]
mod tests {
    use super::super::baseline_own_copy::copy_of;
    use super::super::client::{setup_team, BenchClient};
    use super::super::Sync;
    use super::lone_create_cpu_us;
    use rusqlite::Connection;
    use std::path::Path;

    fn count(db: &Path, sql: &str) -> i64 {
        Connection::open(db)
            .unwrap()
            .query_row(sql, [], |r| r.get(0))
            .unwrap()
    }

    /// Each timed create commits one task, its event and the team's counts, as the daemon's.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn each_create_commits_a_task_its_event_and_the_teams_counts() {
        let daemon = crate::TestDaemon::start().await;
        let admin = BenchClient::new(&daemon.url, crate::ADMIN);
        setup_team(&admin, "wake").await;
        let dir = tempfile::tempdir().unwrap();
        let copy = copy_of(&daemon.data_dir.join("huddle.db"), dir.path()).unwrap();
        let team = "(select id from teams where name = 'wake')";
        let pending = format!("select tasks_pending from team_usage where team_id = {team}");
        let seq = format!("select event_seq from team_seqs where team_id = {team}");
        let (pending_before, seq_before) = (count(&copy, &pending), count(&copy, &seq));
        lone_create_cpu_us(Sync::Full, &copy, "wake", 30).unwrap();
        // Twenty warm-up commits, then thirty.
        let raw = "select count(*) from tasks where prefix = 'RAW' and status = 'pending'";
        assert_eq!(count(&copy, raw), 50);
        let created = format!(
            "select count(*) from events where team_id = {team} and type = 'task.created'
               and json_extract(data, '$[1]') like 'RAW-%'"
        );
        assert_eq!(count(&copy, &created), 50);
        assert_eq!(count(&copy, &pending), pending_before + 50);
        assert_eq!(count(&copy, &seq), seq_before + 50);
        let next = format!(
            "select next_number from task_counters where team_id = {team} and prefix = 'RAW'"
        );
        assert_eq!(count(&copy, &next), 51);
    }
}

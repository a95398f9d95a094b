//! `compare` on SQLite: the raw baselines beside huddle's claim figure, each with the ratio —
//! a bare two-row loop (1 and 100 rows per transaction) and the writer's own statements on a
//! copy of a daemon's rows, each way of writing events.

use super::baseline_own_rows::Events;
use super::client::BenchClient;
use super::daemon::{self, BenchDaemon};
use super::stats::Figures;
use super::{baseline_own_copy, baseline_own_rows, baseline_sqlite, claim, Args};

/// Every baseline, each noted with huddle's claim throughput (`huddle`, tasks/s) over its own.
pub async fn baselines(args: &Args, huddle: f64) -> Result<Vec<Figures>, String> {
    let mut all = vec![
        baseline_sqlite::run(args.sync, 1, &args.sizes)?,
        baseline_sqlite::run(args.sync, 100, &args.sizes)?,
    ];
    all.extend(own_rows(args).await?);
    Ok(all.into_iter().map(|b| ratio(b, huddle)).collect())
}

/// Tasks per transaction of the raw loops on huddle's rows: the daemon's own commits in
/// `compare`'s batched run hold about this many (18–38 jobs of 50), so the loops get the same
/// share of a commit per task. The bare loop keeps the 100 the ceiling names.
const OWN_ROWS_PER_TX: usize = 1_000;

/// `baseline_own_rows` at `OWN_ROWS_PER_TX`, each way of writing events, each on its own
/// copy of the rows a fresh daemon wrote for `claim::prepare` (its team, tasks and workers).
async fn own_rows(args: &Args) -> Result<Vec<Figures>, String> {
    let daemon = BenchDaemon::start(args.sync.as_str(), &[])?;
    let admin = BenchClient::new(&daemon.url, daemon::ADMIN);
    claim::prepare(&admin, &args.sizes, std::slice::from_ref(&daemon.url)).await;
    let batch = args.sizes.claim_batch.clamp(1, 100);
    let mut figures = Vec::new();
    for events in [Events::Task, Events::Object, Events::Empty, Events::Omitted] {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let copy = baseline_own_copy::copy_of(&daemon.sqlite_file(), dir.path())?;
        figures.push(baseline_own_rows::run(
            args.sync,
            OWN_ROWS_PER_TX,
            batch,
            events,
            &copy,
            ("claim", "w0"),
        )?);
    }
    Ok(figures)
}

fn ratio(baseline: Figures, huddle: f64) -> Figures {
    let r = huddle / baseline.throughput_per_s.max(1e-9);
    baseline.note("huddle claim / this", format!("{r:.2}×"))
}

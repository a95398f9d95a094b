//! Fresh planner statistics while a database is young.
//!
//! Statements are prepared once per connection, and after five runs PostgreSQL may keep a
//! generic plan built from the statistics of that moment. Planned while a team had a few dozen
//! tasks, the plan for "these tasks of this team by id" scanned every task of the team, and
//! kept doing so as they grew into thousands: `huddle-bench mixed` ran 3.5× slower until the
//! table was analyzed (which also drops the cached plans). Autovacuum analyzes only after a
//! tenth of a table changed and at most once a minute, so this replica analyzes the task
//! tables itself each time the tasks it created have doubled (from 1,000 on), in the
//! background, one run at a time. Past the first doublings autovacuum keeps up on its own.

use sqlx::PgPool;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// Tasks created before the first analysis.
const FIRST_AT: u64 = 1_000;

pub struct Analyzer {
    pool: PgPool,
    created: AtomicU64,
    next_at: AtomicU64,
    running: AtomicBool,
}

impl Analyzer {
    pub fn new(pool: PgPool) -> Arc<Analyzer> {
        Arc::new(Analyzer {
            pool,
            created: AtomicU64::new(0),
            next_at: AtomicU64::new(FIRST_AT),
            running: AtomicBool::new(false),
        })
    }

    /// Counts `n` tasks this replica created; starts an analysis when they have doubled.
    pub fn tasks_created(self: &Arc<Self>, n: usize) {
        let created = self.created.fetch_add(n as u64, Ordering::Relaxed) + n as u64;
        if created < self.next_at.load(Ordering::Relaxed)
            || self.running.swap(true, Ordering::AcqRel)
        {
            return;
        }
        self.next_at
            .store(created.saturating_mul(2), Ordering::Relaxed);
        let analyzer = Arc::clone(self);
        tokio::spawn(async move {
            // Outside any team's lock; it blocks no reader or writer.
            if let Err(e) = sqlx::query("analyze tasks, task_deps")
                .execute(&analyzer.pool)
                .await
            {
                tracing::warn!(error = %e, "analyzing the task tables failed");
            }
            analyzer.running.store(false, Ordering::Release);
        });
    }
}

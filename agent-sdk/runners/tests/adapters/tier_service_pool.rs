//! Services kept up across pipeline runs (the tester's runs of one task), on
//! tests/fixtures/tiers-go: a second run reuses the first run's service (same check, no new
//! start, the process still up in between), a change to the code it serves starts it again,
//! and stopping the pool leaves no process behind.

use crate::common::*;
use huddle_runners::tiers::pipeline::{run_tiers, TiersOptions, TiersReport};
use huddle_runners::tiers::service_pool::ServicePool;
use huddle_runners::tiers::Tier;
use huddle_runners::Framework;
use std::path::Path;
use std::time::Duration;

/// Processes whose working directory is inside `dir` (the service is one).
fn processes_in(dir: &Path) -> usize {
    let dir = dir.canonicalize().expect("project dir");
    std::fs::read_dir("/proc")
        .expect("/proc")
        .flatten()
        .filter(|e| std::fs::read_link(e.path().join("cwd")).is_ok_and(|cwd| cwd.starts_with(&dir)))
        .count()
}

async fn run(project: &Path, pool: &ServicePool) -> TiersReport {
    let opts = TiersOptions {
        services: Some(pool.clone()),
        ..TiersOptions::default()
    };
    run_tiers(project, Framework::Go, &opts)
        .await
        .expect("the pipeline runs")
}

/// (reused, the health check with its port, passed/failed) of the integration tier.
fn integration(report: &TiersReport) -> (bool, String, (u64, u64)) {
    let t = report
        .tiers
        .iter()
        .find(|t| t.tier == Tier::Integration)
        .expect("an integration tier");
    assert!(t.skipped.is_none(), "{:?}: {:?}", t.skipped, t.skip_detail);
    (
        t.services_reused,
        t.services[0].check.clone(),
        (t.summary.passed as u64, t.summary.failed as u64),
    )
}

#[tokio::test]
async fn a_pool_keeps_the_service_up_across_runs_until_the_code_changes() {
    require_tool("go");
    let project = fixture("tiers-go");
    let pool = ServicePool::default();

    let (reused, check, counts) = integration(&run(project.path(), &pool).await);
    assert!(!reused, "the first run starts the service");
    assert_eq!(counts, (2, 1), "the integration tests reach it");
    assert!(processes_in(project.path()) > 0, "kept up after the run");

    let (reused, again, counts) = integration(&run(project.path(), &pool).await);
    assert!(reused, "the second run reuses it");
    assert_eq!(again, check, "same service, same port");
    assert_eq!(counts, (2, 1));

    // A fix to the code the service runs: it must be served fresh.
    let code = project.path().join("text/text.go");
    let text = std::fs::read_to_string(&code).unwrap();
    std::fs::write(&code, format!("{text}\n// touched by a fix\n")).unwrap();
    let (reused, _, counts) = integration(&run(project.path(), &pool).await);
    assert!(!reused, "a changed implementation restarts the service");
    assert_eq!(counts, (2, 1));

    pool.stop(Duration::from_secs(5)).await;
    assert_eq!(
        processes_gone_from(project.path()).await,
        0,
        "stopping the pool stops it"
    );
}

/// Waits (bounded) until no process runs in `dir`, and returns how many still do: a killed
/// process leaves `/proc` a little after the signal, later still on a loaded machine.
async fn processes_gone_from(dir: &Path) -> usize {
    for _ in 0..1_200 {
        if processes_in(dir) == 0 {
            return 0;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    processes_in(dir)
}

//! The test history: post a run's per-test outcomes; read a project's runs (the pass-rate
//! trend), flaky tests and regressions, of the whole suite or of one test tier (`tier_…`).

use super::transport::Call;
use super::{Client, Error};
use crate::wire::{FlakyTests, NewTestRun, Regressions, TestHistory, TestRunSummary};

impl Client {
    /// `POST …/history/runs`: stores one run (testers, executors, coordinators). Not retried: a
    /// repeated post would count the run twice.
    pub async fn post_test_run(&self, run: &NewTestRun) -> Result<TestRunSummary, Error> {
        self.json(Call::post(self.team_url(&["history", "runs"])?).json(run)?)
            .await
    }

    /// `GET …/history`: the project's kept runs, oldest first (the one posted to last when
    /// `project` is `None`).
    pub async fn test_history(&self, project: Option<&str>) -> Result<TestHistory, Error> {
        self.json(Call::get(self.team_url(&["history"])?).query("project", project))
            .await
    }

    /// `GET …/history/flaky`: tests that passed and failed on one tree (only `tree` when given).
    pub async fn flaky_tests(
        &self,
        project: Option<&str>,
        tree: Option<&str>,
    ) -> Result<FlakyTests, Error> {
        self.json(
            Call::get(self.team_url(&["history", "flaky"])?)
                .query("project", project)
                .query("tree", tree),
        )
        .await
    }

    /// `GET …/history/regressions`: tests failing in the latest run that passed before.
    pub async fn test_regressions(&self, project: Option<&str>) -> Result<Regressions, Error> {
        self.json(Call::get(self.team_url(&["history", "regressions"])?).query("project", project))
            .await
    }

    /// `GET …/history?tier=`: one test tier's kept runs, oldest first (its pass-rate trend).
    pub async fn tier_history(
        &self,
        project: Option<&str>,
        tier: &str,
    ) -> Result<TestHistory, Error> {
        self.json(
            Call::get(self.team_url(&["history"])?)
                .query("project", project)
                .query("tier", Some(tier)),
        )
        .await
    }

    /// `GET …/history/flaky?tier=`: one tier's tests that passed and failed on one tree (only
    /// `tree` when given).
    pub async fn tier_flaky_tests(
        &self,
        project: Option<&str>,
        tree: Option<&str>,
        tier: &str,
    ) -> Result<FlakyTests, Error> {
        self.json(
            Call::get(self.team_url(&["history", "flaky"])?)
                .query("project", project)
                .query("tree", tree)
                .query("tier", Some(tier)),
        )
        .await
    }

    /// `GET …/history/regressions?tier=`: one tier's tests failing in its latest run that
    /// passed before.
    pub async fn tier_regressions(
        &self,
        project: Option<&str>,
        tier: &str,
    ) -> Result<Regressions, Error> {
        self.json(
            Call::get(self.team_url(&["history", "regressions"])?)
                .query("project", project)
                .query("tier", Some(tier)),
        )
        .await
    }
}

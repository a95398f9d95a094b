-- The task a test run verifies (`NewTestRun.task`), so the daemon can check a completion's
-- evidence against its own test history (`http/evidence.rs`), and the files the run kept
-- (`NewTestRun.artifacts`, JSON text: its run directory and each screenshot, trace, video or
-- raw report). Expand-only: older binaries ignore the columns.
alter table test_runs add column if not exists task text;
alter table test_runs add column if not exists artifacts text;

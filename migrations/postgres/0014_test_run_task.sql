-- The task a test run verifies (`NewTestRun.task`), so the daemon can check a completion's
-- evidence against its own test history (`http/evidence.rs`). Expand-only: older binaries
-- ignore the column.
alter table test_runs add column if not exists task text;

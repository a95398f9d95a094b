-- Test tiers: a run may cover one tier of a project's tests (unit, pbt, integration, e2e);
-- null for a whole-suite run. Expand-only: older binaries ignore the column.
alter table test_runs add column tier text;

-- A task update's change of status and size is counted into team_usage by the daemon, once
-- per transaction in the statement that numbers its events (store/postgres/tx.rs, `counted`),
-- rather than by a statement trigger: the trigger cost every claim, completion, heartbeat and
-- lease renewal 80-150 µs of the database's CPU (its transition tables, its PL/pgSQL
-- executor start, its upsert and the wait on the usage row), about a third of a claimed and
-- completed task's one request at a time (issue 50; BENCHMARKS.md).
-- Inserts and deletes of tasks are still counted by their triggers.
-- Contracting: a release before this one updates tasks without counting them, so it must not
-- start on this schema; stop every older replica before migrating (docs/operations.md).
drop trigger team_usage_tasks_changed on tasks;
drop function huddle_usage_tasks();

create table if not exists huddle_schema_compat (compatible_from bigint not null);
delete from huddle_schema_compat;
insert into huddle_schema_compat values (18);

-- A saved task's move between statuses and change of size is counted into team_usage by the
-- writer, once per batch (store/sqlite/writer.rs, `UsageDelta`), rather than by a row trigger:
-- the trigger's SQL functions made SQLite keep a statement journal for every task update, a
-- copy of each page it touched, which with the trigger itself was half of a claim's or a
-- completion's update.
-- Contracting: a release before this one saves tasks without counting them, so it must not
-- start on this schema (huddle_schema_compat, store/schema.rs).
drop trigger team_usage_task_changed;

create table if not exists huddle_schema_compat (compatible_from integer not null);
delete from huddle_schema_compat;
insert into huddle_schema_compat values (14);

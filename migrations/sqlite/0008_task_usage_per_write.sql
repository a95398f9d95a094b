-- New tasks are counted into team_usage once per write (store/sqlite/tasks.rs, import.rs)
-- rather than by a trigger running one UPDATE per inserted row: a 1,000-task batch ran a
-- thousand updates of one row on the writer that every team shares.
-- Contracting: a release before this one inserts tasks without counting them, so it must not
-- start on this schema (huddle_schema_compat, store/schema.rs).
drop trigger team_usage_task_added;

create table if not exists huddle_schema_compat (compatible_from integer not null);
delete from huddle_schema_compat;
insert into huddle_schema_compat values (8);

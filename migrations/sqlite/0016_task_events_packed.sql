-- A `task.*` event's data is stored as a JSON array in `Task`'s field order, without field
-- names (store/rules/task_event.rs); this release's readers expand it and read older rows,
-- stored as objects, as they are. Nothing in the schema changes.
-- Contracting: a release before this one would show the arrays as event data and miss them in
-- one task's events, so it must not start on this file (huddle_schema_compat, store/schema.rs).
-- The way back to an older release is `huddle export --team` here and an import there: an export
-- carries every event as the object.
create table if not exists huddle_schema_compat (compatible_from integer not null);
delete from huddle_schema_compat;
insert into huddle_schema_compat values (16);

-- A posted message is counted into team_usage by the daemon, once per transaction in the
-- statement that numbers its events (store/postgres/tx.rs, `counted`), rather than by a
-- statement trigger on every insert. The trigger cost each post a PL/pgSQL executor start and
-- an upsert of its backend's slot, held from the middle of the transaction to its commit: the
-- one usage row a post locked before its team's row (issue 50; BENCHMARKS.md).
-- Deleted messages (retention, team deletion) are still counted by their trigger.
-- Contracting: a release before this one inserts messages without counting them, so it must
-- not start on this schema; stop every older replica before migrating (docs/operations.md).
drop trigger team_usage_messages_added on messages;
drop function huddle_usage_messages_added();

create table if not exists huddle_schema_compat (compatible_from bigint not null);
delete from huddle_schema_compat;
insert into huddle_schema_compat values (19);

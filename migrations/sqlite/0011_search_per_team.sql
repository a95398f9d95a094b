-- Full-text search that costs a team in proportion to its own messages: every word is now
-- indexed under its team's mark (`t`, the count of hex digits of the team id, the digits:
-- `store/rules/search.rs`, `team_words`), so a prefix query walks only its team's terms. The
-- index is rebuilt from nothing: each team's messages go back in, a chunk at a time, when it
-- next searches with words (`store/sqlite/search.rs`, `index_pending`). The delete trigger of
-- 0004 names the table, not its shape, and keeps working.
drop table messages_fts;
create virtual table messages_fts using fts5(
    summary, data,
    content = '', contentless_delete = 1,
    tokenize = 'unicode61 remove_diacritics 0'
);
delete from messages_fts_mark;

-- Contracting: a release before this one would index and search words without their team's
-- mark in this table, so it must not start on this schema (huddle_schema_compat,
-- store/schema.rs).
create table if not exists huddle_schema_compat (compatible_from integer not null);
delete from huddle_schema_compat;
insert into huddle_schema_compat values (11);

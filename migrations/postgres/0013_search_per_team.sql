-- Full-text search that costs a team in proportion to its own messages: every word is indexed
-- under its team's mark (`t`, the count of hex digits of the team id, the digits — the same as
-- `team_mark` in `store/rules/search.rs`), so a prefix query's walk of the GIN index covers only
-- its team's entries. Rewrites `messages` once (the generated column is replaced).
create or replace function huddle_team_words(team bigint, body text) returns tsvector
language sql immutable parallel safe as $$
    select array_to_tsvector(array(
        select 't' || to_hex(length(to_hex(team))) || to_hex(team) || word
        from unnest(tsvector_to_array(to_tsvector('simple',
            regexp_replace(body, '[[:punct:]]+', ' ', 'g')))) as word
    ))
$$;

drop index if exists messages_search;
alter table messages drop column search;
alter table messages
    add column search tsvector
    generated always as (huddle_team_words(team_id, summary || ' ' || data)) stored;
create index messages_search on messages using gin (search);

-- Contracting: a release before this one would search for words without their team's mark and
-- find nothing, so it must not start on this schema (huddle_schema_compat, store/schema.rs).
create table if not exists huddle_schema_compat (compatible_from bigint not null);
delete from huddle_schema_compat;
insert into huddle_schema_compat values (13);

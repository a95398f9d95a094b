-- Full-text search of messages (summary and data). A contentless FTS5 index: the text stays in
-- `messages`; a row's rowid is team_id * 2^40 + seq, so a team's rows are one rowid range.
-- remove_diacritics 0 keeps words as PostgreSQL's 'simple' configuration keeps them.
create virtual table messages_fts using fts5(
    summary, data,
    content = '', contentless_delete = 1,
    tokenize = 'unicode61 remove_diacritics 0'
);

-- Messages are indexed when a search needs them, not as they are stored (an FTS5 row costs
-- about 10 µs, which the message bus would pay on every post): each team's messages up to
-- `seq` are in the index (`store/sqlite/search.rs`, `index_pending`).
create table messages_fts_mark (
    team_id  integer primary key,
    seq      integer not null
);

create trigger messages_fts_delete after delete on messages begin
    delete from messages_fts where rowid = old.team_id * 1099511627776 + old.seq;
end;

-- The task a message is about (`data.taskId`, or `data.task` when absent), indexed for a task's
-- messages without reading the team's whole log.
alter table messages add column task_ref text
    generated always as (coalesce(json_extract(data, '$.taskId'), json_extract(data, '$.task'))) virtual;

create index messages_by_task on messages (team_id, task_ref, seq);

-- Full-text search of messages (summary and data), with the 'simple' configuration: words as
-- written, lowercased, no stemming or stop words. Punctuation becomes a space first, so words
-- are letters and digits only, as SQLite's FTS5 tokenizer makes them (the parser alone reads
-- `TEST-001` as `test` and `-001`).
alter table messages
    add column search tsvector
    generated always as (
        to_tsvector('simple', regexp_replace(summary || ' ' || data, '[[:punct:]]+', ' ', 'g'))
    ) stored;

create index messages_search on messages using gin (search);

-- The task a message is about (`data.taskId`, or `data.task` when absent), indexed for a task's
-- messages without reading the team's whole log.
alter table messages
    add column task_ref text
    generated always as (coalesce(data::jsonb ->> 'taskId', data::jsonb ->> 'task')) stored;

create index messages_by_task on messages (team_id, task_ref, seq);

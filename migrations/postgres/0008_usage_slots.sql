-- A team's usage counters in up to 64 rows ("slots") instead of one: claims and completions
-- take no team lock, and one row changed by every write of a team would serialise them again
-- (the triggers' update holds that row to the commit). Each transaction adds its changes to
-- the slot of its server process (`pg_backend_pid() % 64`), so concurrent writers rarely
-- share one; readers sum a team's slots. Slot 0 holds what existed before.
alter table team_usage add column slot smallint not null default 0;
alter table team_usage drop constraint team_usage_pkey;
alter table team_usage add primary key (team_id, slot);

-- Adds a change to this process's slot of `team`.
create function huddle_usage_add(team bigint, pending bigint, in_progress bigint,
                                 completed bigint, failed bigint, cancelled bigint,
                                 edge_count bigint, message_count bigint, bytes bigint)
returns void language sql as $$
    insert into team_usage as u (team_id, slot, tasks_pending, tasks_in_progress,
                                 tasks_completed, tasks_failed, tasks_cancelled, edges,
                                 messages, storage_bytes)
    values (team, (pg_backend_pid() % 64)::smallint, pending, in_progress, completed, failed,
            cancelled, edge_count, message_count, bytes)
    on conflict (team_id, slot) do update set
        tasks_pending = u.tasks_pending + excluded.tasks_pending,
        tasks_in_progress = u.tasks_in_progress + excluded.tasks_in_progress,
        tasks_completed = u.tasks_completed + excluded.tasks_completed,
        tasks_failed = u.tasks_failed + excluded.tasks_failed,
        tasks_cancelled = u.tasks_cancelled + excluded.tasks_cancelled,
        edges = u.edges + excluded.edges,
        messages = u.messages + excluded.messages,
        storage_bytes = u.storage_bytes + excluded.storage_bytes
$$;

create or replace function huddle_usage_tasks() returns trigger language plpgsql as $$
begin
    perform huddle_usage_add(p.team_id, coalesce(p.pending, 0), coalesce(p.in_progress, 0),
                             coalesce(p.completed, 0), coalesce(p.failed, 0),
                             coalesce(p.cancelled, 0), 0, 0, coalesce(p.bytes, 0)::bigint)
    from (
        select team_id,
               sum(sign) filter (where status = 'pending') as pending,
               sum(sign) filter (where status = 'in_progress') as in_progress,
               sum(sign) filter (where status = 'completed') as completed,
               sum(sign) filter (where status = 'failed') as failed,
               sum(sign) filter (where status = 'cancelled') as cancelled,
               sum(sign * bytes) as bytes
        from (
            select team_id, status, huddle_task_bytes(n.subject, n.description, n.active_form, n.metadata, n.result, n.failure_reason) as bytes, 1 as sign from new_rows n
            union all
            select team_id, status, huddle_task_bytes(o.subject, o.description, o.active_form, o.metadata, o.result, o.failure_reason), -1 from old_rows o
        ) moved
        group by team_id
    ) p
    where coalesce(p.pending, 0) <> 0 or coalesce(p.in_progress, 0) <> 0
       or coalesce(p.completed, 0) <> 0 or coalesce(p.failed, 0) <> 0
       or coalesce(p.cancelled, 0) <> 0 or coalesce(p.bytes, 0) <> 0;
    return null;
end $$;

create or replace function huddle_usage_tasks_added() returns trigger language plpgsql as $$
begin
    perform huddle_usage_add(p.team_id, p.pending, p.in_progress, p.completed, p.failed,
                             p.cancelled, 0, 0, p.bytes::bigint)
    from (select team_id,
                 count(*) filter (where status = 'pending') as pending,
                 count(*) filter (where status = 'in_progress') as in_progress,
                 count(*) filter (where status = 'completed') as completed,
                 count(*) filter (where status = 'failed') as failed,
                 count(*) filter (where status = 'cancelled') as cancelled,
                 sum(huddle_task_bytes(n.subject, n.description, n.active_form, n.metadata, n.result, n.failure_reason)) as bytes
          from new_rows n group by team_id) p;
    return null;
end $$;

create or replace function huddle_usage_tasks_deleted() returns trigger language plpgsql as $$
begin
    perform huddle_usage_add(p.team_id, -p.pending, -p.in_progress, -p.completed, -p.failed,
                             -p.cancelled, 0, 0, -p.bytes::bigint)
    from (select team_id,
                 count(*) filter (where status = 'pending') as pending,
                 count(*) filter (where status = 'in_progress') as in_progress,
                 count(*) filter (where status = 'completed') as completed,
                 count(*) filter (where status = 'failed') as failed,
                 count(*) filter (where status = 'cancelled') as cancelled,
                 sum(huddle_task_bytes(o.subject, o.description, o.active_form, o.metadata, o.result, o.failure_reason)) as bytes
          from old_rows o group by team_id) p;
    return null;
end $$;

create or replace function huddle_usage_edges_added() returns trigger language plpgsql as $$
begin
    perform huddle_usage_add(p.team_id, 0, 0, 0, 0, 0, p.n, 0, 0)
    from (select team_id, count(*) as n from new_rows group by team_id) p;
    return null;
end $$;

create or replace function huddle_usage_edges_deleted() returns trigger language plpgsql as $$
begin
    perform huddle_usage_add(p.team_id, 0, 0, 0, 0, 0, -p.n, 0, 0)
    from (select team_id, count(*) as n from old_rows group by team_id) p;
    return null;
end $$;

create or replace function huddle_usage_messages_added() returns trigger language plpgsql as $$
begin
    perform huddle_usage_add(p.team_id, 0, 0, 0, 0, 0, 0, p.n, p.bytes)
    from (select team_id, count(*) as n, sum(octet_length(summary) + octet_length(data)) as bytes
          from new_rows group by team_id) p;
    return null;
end $$;

create or replace function huddle_usage_messages_deleted() returns trigger language plpgsql as $$
begin
    perform huddle_usage_add(p.team_id, 0, 0, 0, 0, 0, 0, -p.n, -p.bytes)
    from (select team_id, count(*) as n, sum(octet_length(summary) + octet_length(data)) as bytes
          from old_rows group by team_id) p;
    return null;
end $$;

create or replace function huddle_usage_memory() returns trigger language plpgsql as $$
begin
    perform huddle_usage_add(new.id, 0, 0, 0, 0, 0, 0, 0,
                             octet_length(new.memory_doc) - octet_length(old.memory_doc));
    return null;
end $$;

-- A release before this one reads `team_usage` as one row per team and would take one slot
-- for the whole: its quota checks and metrics would be wrong. So this is a contracting
-- change under the schema policy (store::schema): older binaries refuse to start on it.
create table if not exists huddle_schema_compat (compatible_from bigint not null);
delete from huddle_schema_compat;
insert into huddle_schema_compat values (8);

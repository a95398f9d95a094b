-- The usage triggers in one statement each (issue 50). Since 0008 each trigger ran a query over
-- its transition tables and called `huddle_usage_add` per team, a PL/pgSQL function whose
-- upsert is a second statement with its own executor start. Unbatched, every claim and every
-- completion fires the tasks trigger once, and a profile of the PostgreSQL backends in that
-- run put 27 % of their CPU in it, half in the nested call. Each trigger is now one upsert that
-- reads the transition tables itself. Same slots, same effect, and N-1 compatible (below:
-- older binaries too delete a team's counters before the team).
-- `huddle_usage_add` stays for the memory trigger (one row per statement) and older binaries.
create or replace function huddle_usage_tasks() returns trigger language plpgsql as $$
begin
    insert into team_usage as u (team_id, slot, tasks_pending, tasks_in_progress,
                                 tasks_completed, tasks_failed, tasks_cancelled, edges,
                                 messages, storage_bytes)
    select p.team_id, (pg_backend_pid() % 64)::smallint, p.pending, p.in_progress,
           p.completed, p.failed, p.cancelled, 0, 0, p.bytes
    from (
        select team_id,
               coalesce(sum(sign) filter (where status = 'pending'), 0) as pending,
               coalesce(sum(sign) filter (where status = 'in_progress'), 0) as in_progress,
               coalesce(sum(sign) filter (where status = 'completed'), 0) as completed,
               coalesce(sum(sign) filter (where status = 'failed'), 0) as failed,
               coalesce(sum(sign) filter (where status = 'cancelled'), 0) as cancelled,
               coalesce(sum(sign * bytes), 0)::bigint as bytes
        from (
            select team_id, status,
                   huddle_task_bytes(n.subject, n.description, n.active_form, n.metadata,
                                     n.result, n.failure_reason) as bytes,
                   1 as sign
            from new_rows n
            union all
            select team_id, status,
                   huddle_task_bytes(o.subject, o.description, o.active_form, o.metadata,
                                     o.result, o.failure_reason),
                   -1
            from old_rows o
        ) moved
        group by team_id
    ) p
    -- A statement that changed no status and no text (a heartbeat's lease) writes nothing.
    where p.pending <> 0 or p.in_progress <> 0 or p.completed <> 0 or p.failed <> 0
       or p.cancelled <> 0 or p.bytes <> 0
    on conflict (team_id, slot) do update set
        tasks_pending = u.tasks_pending + excluded.tasks_pending,
        tasks_in_progress = u.tasks_in_progress + excluded.tasks_in_progress,
        tasks_completed = u.tasks_completed + excluded.tasks_completed,
        tasks_failed = u.tasks_failed + excluded.tasks_failed,
        tasks_cancelled = u.tasks_cancelled + excluded.tasks_cancelled,
        storage_bytes = u.storage_bytes + excluded.storage_bytes;
    return null;
end $$;

create or replace function huddle_usage_tasks_added() returns trigger language plpgsql as $$
begin
    insert into team_usage as u (team_id, slot, tasks_pending, tasks_in_progress,
                                 tasks_completed, tasks_failed, tasks_cancelled, edges,
                                 messages, storage_bytes)
    select team_id, (pg_backend_pid() % 64)::smallint,
           count(*) filter (where status = 'pending'),
           count(*) filter (where status = 'in_progress'),
           count(*) filter (where status = 'completed'),
           count(*) filter (where status = 'failed'),
           count(*) filter (where status = 'cancelled'),
           0, 0,
           sum(huddle_task_bytes(n.subject, n.description, n.active_form, n.metadata,
                                 n.result, n.failure_reason))::bigint
    from new_rows n group by team_id
    on conflict (team_id, slot) do update set
        tasks_pending = u.tasks_pending + excluded.tasks_pending,
        tasks_in_progress = u.tasks_in_progress + excluded.tasks_in_progress,
        tasks_completed = u.tasks_completed + excluded.tasks_completed,
        tasks_failed = u.tasks_failed + excluded.tasks_failed,
        tasks_cancelled = u.tasks_cancelled + excluded.tasks_cancelled,
        storage_bytes = u.storage_bytes + excluded.storage_bytes;
    return null;
end $$;

create or replace function huddle_usage_tasks_deleted() returns trigger language plpgsql as $$
begin
    insert into team_usage as u (team_id, slot, tasks_pending, tasks_in_progress,
                                 tasks_completed, tasks_failed, tasks_cancelled, edges,
                                 messages, storage_bytes)
    select team_id, (pg_backend_pid() % 64)::smallint,
           -count(*) filter (where status = 'pending'),
           -count(*) filter (where status = 'in_progress'),
           -count(*) filter (where status = 'completed'),
           -count(*) filter (where status = 'failed'),
           -count(*) filter (where status = 'cancelled'),
           0, 0,
           -sum(huddle_task_bytes(o.subject, o.description, o.active_form, o.metadata,
                                  o.result, o.failure_reason))::bigint
    from old_rows o group by team_id
    on conflict (team_id, slot) do update set
        tasks_pending = u.tasks_pending + excluded.tasks_pending,
        tasks_in_progress = u.tasks_in_progress + excluded.tasks_in_progress,
        tasks_completed = u.tasks_completed + excluded.tasks_completed,
        tasks_failed = u.tasks_failed + excluded.tasks_failed,
        tasks_cancelled = u.tasks_cancelled + excluded.tasks_cancelled,
        storage_bytes = u.storage_bytes + excluded.storage_bytes;
    return null;
end $$;

create or replace function huddle_usage_edges_added() returns trigger language plpgsql as $$
begin
    insert into team_usage as u (team_id, slot, edges)
    select team_id, (pg_backend_pid() % 64)::smallint, count(*)
    from new_rows group by team_id
    on conflict (team_id, slot) do update set edges = u.edges + excluded.edges;
    return null;
end $$;

create or replace function huddle_usage_edges_deleted() returns trigger language plpgsql as $$
begin
    insert into team_usage as u (team_id, slot, edges)
    select team_id, (pg_backend_pid() % 64)::smallint, -count(*)
    from old_rows group by team_id
    on conflict (team_id, slot) do update set edges = u.edges + excluded.edges;
    return null;
end $$;

create or replace function huddle_usage_messages_added() returns trigger language plpgsql as $$
begin
    insert into team_usage as u (team_id, slot, messages, storage_bytes)
    select team_id, (pg_backend_pid() % 64)::smallint, count(*),
           sum(octet_length(summary) + octet_length(data))::bigint
    from new_rows group by team_id
    on conflict (team_id, slot) do update set
        messages = u.messages + excluded.messages,
        storage_bytes = u.storage_bytes + excluded.storage_bytes;
    return null;
end $$;

create or replace function huddle_usage_messages_deleted() returns trigger language plpgsql as $$
begin
    insert into team_usage as u (team_id, slot, messages, storage_bytes)
    select team_id, (pg_backend_pid() % 64)::smallint, -count(*),
           -sum(octet_length(summary) + octet_length(data))::bigint
    from old_rows group by team_id
    on conflict (team_id, slot) do update set
        messages = u.messages + excluded.messages,
        storage_bytes = u.storage_bytes + excluded.storage_bytes;
    return null;
end $$;

-- team_usage's foreign key to teams goes: PostgreSQL checks it again on every update of a row
-- the same transaction already wrote, which is every usage upsert after the first of a write
-- batch (3.6 % of the backends' CPU, one claim per request). The rows are written only by the
-- triggers above, for tasks, edges and messages that reference their team themselves, and
-- deleting a team deletes them before the team (`store::team_admin`); this trigger keeps the
-- cascade's effect for any other delete of a team.
alter table team_usage drop constraint team_usage_team_id_fkey;

create function huddle_usage_teams_deleted() returns trigger language plpgsql as $$
begin
    delete from team_usage u using old_teams o where u.team_id = o.id;
    return null;
end $$;

create trigger team_usage_teams_deleted after delete on teams
    referencing old table as old_teams
    for each statement execute function huddle_usage_teams_deleted();

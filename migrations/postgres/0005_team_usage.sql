-- What each team stores, kept by triggers in the transaction that changes it (so every path,
-- retention and an older binary included, keeps it right): tasks per status, dependency edges,
-- messages, and the approximate bytes of tasks, messages and the shared memory document.
-- Quotas are checked against it and /metrics reads it; nothing counts rows per request.
-- The triggers are per statement (transition tables): a batch of 1,000 tasks moves the row once.
create table team_usage (
    team_id            bigint primary key references teams (id) on delete cascade,
    tasks_pending      bigint not null default 0,
    tasks_in_progress  bigint not null default 0,
    tasks_completed    bigint not null default 0,
    tasks_failed       bigint not null default 0,
    tasks_cancelled    bigint not null default 0,
    edges              bigint not null default 0,
    messages           bigint not null default 0,
    storage_bytes      bigint not null default 0
);

-- The admin's per-team overrides of the [limits] quotas and the [retention] policy (null: the
-- configured default). Retention is JSON, read by the background sweep only.
create table team_settings (
    team_id                 bigint primary key references teams (id) on delete cascade,
    max_tasks               bigint,
    max_edges               bigint,
    max_messages            bigint,
    max_storage_bytes       bigint,
    retention               text not null default '{}'
);

-- A task's approximate bytes: its texts (the same sum as SQLite's triggers).
create function huddle_task_bytes(subject text, description text, active_form text,
                                  metadata text, result text, failure_reason text)
returns bigint language sql immutable as $$
    select (octet_length(subject) + octet_length(description)
            + coalesce(octet_length(active_form), 0) + octet_length(metadata)
            + coalesce(octet_length(result), 0) + coalesce(octet_length(failure_reason), 0))::bigint
$$;

insert into team_usage (team_id, tasks_pending, tasks_in_progress, tasks_completed, tasks_failed,
                        tasks_cancelled, edges, messages, storage_bytes)
select tm.id,
       (select count(*) from tasks t where t.team_id = tm.id and t.status = 'pending'),
       (select count(*) from tasks t where t.team_id = tm.id and t.status = 'in_progress'),
       (select count(*) from tasks t where t.team_id = tm.id and t.status = 'completed'),
       (select count(*) from tasks t where t.team_id = tm.id and t.status = 'failed'),
       (select count(*) from tasks t where t.team_id = tm.id and t.status = 'cancelled'),
       (select count(*) from task_deps d where d.team_id = tm.id),
       (select count(*) from messages m where m.team_id = tm.id),
       coalesce((select sum(huddle_task_bytes(t.subject, t.description, t.active_form, t.metadata, t.result, t.failure_reason)) from tasks t where t.team_id = tm.id), 0)
       + coalesce((select sum(octet_length(m.summary) + octet_length(m.data))
                   from messages m where m.team_id = tm.id), 0)
       + octet_length(tm.memory_doc)
from teams tm;

create function huddle_usage_new_team() returns trigger language plpgsql as $$
begin
    insert into team_usage (team_id, storage_bytes) values (new.id, octet_length(new.memory_doc));
    return null;
end $$;
create trigger team_usage_new_team after insert on teams
    for each row execute function huddle_usage_new_team();

-- Adds the rows of `n` and takes away those of `o` (either may be empty), per team.
create function huddle_usage_tasks() returns trigger language plpgsql as $$
begin
    with moved as (
        select team_id, status, huddle_task_bytes(n.subject, n.description, n.active_form, n.metadata, n.result, n.failure_reason) as bytes, 1 as sign from new_rows n
        union all
        select team_id, status, huddle_task_bytes(o.subject, o.description, o.active_form, o.metadata, o.result, o.failure_reason), -1 from old_rows o
    ), per_team as (
        select team_id,
               sum(sign) filter (where status = 'pending') as pending,
               sum(sign) filter (where status = 'in_progress') as in_progress,
               sum(sign) filter (where status = 'completed') as completed,
               sum(sign) filter (where status = 'failed') as failed,
               sum(sign) filter (where status = 'cancelled') as cancelled,
               sum(sign * bytes) as bytes
        from moved group by team_id
    )
    update team_usage u set
        tasks_pending = u.tasks_pending + coalesce(p.pending, 0),
        tasks_in_progress = u.tasks_in_progress + coalesce(p.in_progress, 0),
        tasks_completed = u.tasks_completed + coalesce(p.completed, 0),
        tasks_failed = u.tasks_failed + coalesce(p.failed, 0),
        tasks_cancelled = u.tasks_cancelled + coalesce(p.cancelled, 0),
        storage_bytes = u.storage_bytes + p.bytes
    from per_team p
    where u.team_id = p.team_id
      and (coalesce(p.pending, 0) <> 0 or coalesce(p.in_progress, 0) <> 0
           or coalesce(p.completed, 0) <> 0 or coalesce(p.failed, 0) <> 0
           or coalesce(p.cancelled, 0) <> 0 or p.bytes <> 0);
    return null;
end $$;

-- Transition tables need one trigger per event; an empty table stands in for the other side.
create function huddle_usage_tasks_added() returns trigger language plpgsql as $$
begin
    update team_usage u set
        tasks_pending = u.tasks_pending + p.pending,
        tasks_in_progress = u.tasks_in_progress + p.in_progress,
        tasks_completed = u.tasks_completed + p.completed,
        tasks_failed = u.tasks_failed + p.failed,
        tasks_cancelled = u.tasks_cancelled + p.cancelled,
        storage_bytes = u.storage_bytes + p.bytes
    from (select team_id,
                 count(*) filter (where status = 'pending') as pending,
                 count(*) filter (where status = 'in_progress') as in_progress,
                 count(*) filter (where status = 'completed') as completed,
                 count(*) filter (where status = 'failed') as failed,
                 count(*) filter (where status = 'cancelled') as cancelled,
                 sum(huddle_task_bytes(n.subject, n.description, n.active_form, n.metadata, n.result, n.failure_reason)) as bytes
          from new_rows n group by team_id) p
    where u.team_id = p.team_id;
    return null;
end $$;

create function huddle_usage_tasks_deleted() returns trigger language plpgsql as $$
begin
    update team_usage u set
        tasks_pending = u.tasks_pending - p.pending,
        tasks_in_progress = u.tasks_in_progress - p.in_progress,
        tasks_completed = u.tasks_completed - p.completed,
        tasks_failed = u.tasks_failed - p.failed,
        tasks_cancelled = u.tasks_cancelled - p.cancelled,
        storage_bytes = u.storage_bytes - p.bytes
    from (select team_id,
                 count(*) filter (where status = 'pending') as pending,
                 count(*) filter (where status = 'in_progress') as in_progress,
                 count(*) filter (where status = 'completed') as completed,
                 count(*) filter (where status = 'failed') as failed,
                 count(*) filter (where status = 'cancelled') as cancelled,
                 sum(huddle_task_bytes(o.subject, o.description, o.active_form, o.metadata, o.result, o.failure_reason)) as bytes
          from old_rows o group by team_id) p
    where u.team_id = p.team_id;
    return null;
end $$;

create trigger team_usage_tasks_added after insert on tasks
    referencing new table as new_rows
    for each statement execute function huddle_usage_tasks_added();
create trigger team_usage_tasks_changed after update on tasks
    referencing old table as old_rows new table as new_rows
    for each statement execute function huddle_usage_tasks();
create trigger team_usage_tasks_deleted after delete on tasks
    referencing old table as old_rows
    for each statement execute function huddle_usage_tasks_deleted();

create function huddle_usage_edges_added() returns trigger language plpgsql as $$
begin
    update team_usage u set edges = u.edges + p.n
    from (select team_id, count(*) as n from new_rows group by team_id) p
    where u.team_id = p.team_id;
    return null;
end $$;
create function huddle_usage_edges_deleted() returns trigger language plpgsql as $$
begin
    update team_usage u set edges = u.edges - p.n
    from (select team_id, count(*) as n from old_rows group by team_id) p
    where u.team_id = p.team_id;
    return null;
end $$;
create trigger team_usage_edges_added after insert on task_deps
    referencing new table as new_rows
    for each statement execute function huddle_usage_edges_added();
create trigger team_usage_edges_deleted after delete on task_deps
    referencing old table as old_rows
    for each statement execute function huddle_usage_edges_deleted();

create function huddle_usage_messages_added() returns trigger language plpgsql as $$
begin
    update team_usage u set messages = u.messages + p.n, storage_bytes = u.storage_bytes + p.bytes
    from (select team_id, count(*) as n, sum(octet_length(summary) + octet_length(data)) as bytes
          from new_rows group by team_id) p
    where u.team_id = p.team_id;
    return null;
end $$;
create function huddle_usage_messages_deleted() returns trigger language plpgsql as $$
begin
    update team_usage u set messages = u.messages - p.n, storage_bytes = u.storage_bytes - p.bytes
    from (select team_id, count(*) as n, sum(octet_length(summary) + octet_length(data)) as bytes
          from old_rows group by team_id) p
    where u.team_id = p.team_id;
    return null;
end $$;
create trigger team_usage_messages_added after insert on messages
    referencing new table as new_rows
    for each statement execute function huddle_usage_messages_added();
create trigger team_usage_messages_deleted after delete on messages
    referencing old table as old_rows
    for each statement execute function huddle_usage_messages_deleted();

-- Only statements that set memory_doc fire it (the sequences' update every write does not).
create function huddle_usage_memory() returns trigger language plpgsql as $$
begin
    update team_usage set
        storage_bytes = storage_bytes + octet_length(new.memory_doc) - octet_length(old.memory_doc)
    where team_id = new.id;
    return null;
end $$;
create trigger team_usage_memory_changed after update of memory_doc on teams
    for each row execute function huddle_usage_memory();

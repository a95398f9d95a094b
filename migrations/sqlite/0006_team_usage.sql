-- What each team stores, kept by triggers in the transaction that changes it (so every path,
-- retention and an older binary included, keeps it right): tasks per status, dependency edges,
-- messages, and the approximate bytes of tasks, messages and the shared memory document.
-- Quotas are checked against it and /metrics reads it; nothing counts rows per request.
create table team_usage (
    team_id            integer primary key references teams (id) on delete cascade,
    tasks_pending      integer not null default 0,
    tasks_in_progress  integer not null default 0,
    tasks_completed    integer not null default 0,
    tasks_failed       integer not null default 0,
    tasks_cancelled    integer not null default 0,
    edges              integer not null default 0,
    messages           integer not null default 0,
    storage_bytes      integer not null default 0
);

-- The admin's per-team overrides of the [limits] quotas and the [retention] policy (null: the
-- configured default). Retention is JSON, read by the background sweep only.
create table team_settings (
    team_id                 integer primary key references teams (id) on delete cascade,
    max_tasks               integer,
    max_edges               integer,
    max_messages            integer,
    max_storage_bytes       integer,
    retention               text not null default '{}'
);

insert into team_usage (team_id) select id from teams;

update team_usage set
    tasks_pending = (select count(*) from tasks t where t.team_id = team_usage.team_id and t.status = 'pending'),
    tasks_in_progress = (select count(*) from tasks t where t.team_id = team_usage.team_id and t.status = 'in_progress'),
    tasks_completed = (select count(*) from tasks t where t.team_id = team_usage.team_id and t.status = 'completed'),
    tasks_failed = (select count(*) from tasks t where t.team_id = team_usage.team_id and t.status = 'failed'),
    tasks_cancelled = (select count(*) from tasks t where t.team_id = team_usage.team_id and t.status = 'cancelled'),
    edges = (select count(*) from task_deps d where d.team_id = team_usage.team_id),
    messages = (select count(*) from messages m where m.team_id = team_usage.team_id),
    storage_bytes =
        coalesce((select sum(octet_length(subject) + octet_length(description)
                             + coalesce(octet_length(active_form), 0) + octet_length(metadata)
                             + coalesce(octet_length(result), 0)
                             + coalesce(octet_length(failure_reason), 0))
                  from tasks t where t.team_id = team_usage.team_id), 0)
        + coalesce((select sum(octet_length(summary) + octet_length(data))
                    from messages m where m.team_id = team_usage.team_id), 0)
        + (select octet_length(memory_doc) from teams where teams.id = team_usage.team_id);

create trigger team_usage_new_team after insert on teams begin
    insert into team_usage (team_id, storage_bytes) values (new.id, octet_length(new.memory_doc));
end;

create trigger team_usage_task_added after insert on tasks begin
    update team_usage set
        tasks_pending = tasks_pending + (new.status = 'pending'),
        tasks_in_progress = tasks_in_progress + (new.status = 'in_progress'),
        tasks_completed = tasks_completed + (new.status = 'completed'),
        tasks_failed = tasks_failed + (new.status = 'failed'),
        tasks_cancelled = tasks_cancelled + (new.status = 'cancelled'),
        storage_bytes = storage_bytes + octet_length(new.subject) + octet_length(new.description)
            + coalesce(octet_length(new.active_form), 0) + octet_length(new.metadata)
            + coalesce(octet_length(new.result), 0) + coalesce(octet_length(new.failure_reason), 0)
    where team_id = new.team_id;
end;

create trigger team_usage_task_deleted after delete on tasks begin
    update team_usage set
        tasks_pending = tasks_pending - (old.status = 'pending'),
        tasks_in_progress = tasks_in_progress - (old.status = 'in_progress'),
        tasks_completed = tasks_completed - (old.status = 'completed'),
        tasks_failed = tasks_failed - (old.status = 'failed'),
        tasks_cancelled = tasks_cancelled - (old.status = 'cancelled'),
        storage_bytes = storage_bytes - octet_length(old.subject) - octet_length(old.description)
            - coalesce(octet_length(old.active_form), 0) - octet_length(old.metadata)
            - coalesce(octet_length(old.result), 0) - coalesce(octet_length(old.failure_reason), 0)
    where team_id = old.team_id;
end;

-- Heartbeats and lease changes move neither a status nor a size: the update is skipped.
create trigger team_usage_task_changed after update on tasks
when old.status <> new.status
  or octet_length(old.subject) <> octet_length(new.subject)
  or octet_length(old.description) <> octet_length(new.description)
  or coalesce(octet_length(old.active_form), 0) <> coalesce(octet_length(new.active_form), 0)
  or octet_length(old.metadata) <> octet_length(new.metadata)
  or coalesce(octet_length(old.result), 0) <> coalesce(octet_length(new.result), 0)
  or coalesce(octet_length(old.failure_reason), 0) <> coalesce(octet_length(new.failure_reason), 0)
begin
    update team_usage set
        tasks_pending = tasks_pending + (new.status = 'pending') - (old.status = 'pending'),
        tasks_in_progress = tasks_in_progress + (new.status = 'in_progress') - (old.status = 'in_progress'),
        tasks_completed = tasks_completed + (new.status = 'completed') - (old.status = 'completed'),
        tasks_failed = tasks_failed + (new.status = 'failed') - (old.status = 'failed'),
        tasks_cancelled = tasks_cancelled + (new.status = 'cancelled') - (old.status = 'cancelled'),
        storage_bytes = storage_bytes
            + octet_length(new.subject) + octet_length(new.description)
            + coalesce(octet_length(new.active_form), 0) + octet_length(new.metadata)
            + coalesce(octet_length(new.result), 0) + coalesce(octet_length(new.failure_reason), 0)
            - octet_length(old.subject) - octet_length(old.description)
            - coalesce(octet_length(old.active_form), 0) - octet_length(old.metadata)
            - coalesce(octet_length(old.result), 0) - coalesce(octet_length(old.failure_reason), 0)
    where team_id = new.team_id;
end;

create trigger team_usage_edge_added after insert on task_deps begin
    update team_usage set edges = edges + 1 where team_id = new.team_id;
end;

create trigger team_usage_edge_deleted after delete on task_deps begin
    update team_usage set edges = edges - 1 where team_id = old.team_id;
end;

create trigger team_usage_message_added after insert on messages begin
    update team_usage set messages = messages + 1,
        storage_bytes = storage_bytes + octet_length(new.summary) + octet_length(new.data)
    where team_id = new.team_id;
end;

create trigger team_usage_message_deleted after delete on messages begin
    update team_usage set messages = messages - 1,
        storage_bytes = storage_bytes - octet_length(old.summary) - octet_length(old.data)
    where team_id = old.team_id;
end;

create trigger team_usage_memory_changed after update of memory_doc on teams begin
    update team_usage set
        storage_bytes = storage_bytes + octet_length(new.memory_doc) - octet_length(old.memory_doc)
    where team_id = new.id;
end;

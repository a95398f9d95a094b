-- The same upsert as migration 0008's `huddle_usage_add`, in PL/pgSQL instead of SQL. A SQL
-- function that modifies a table is not inlined and its body is planned again on every call,
-- so each statement that changes tasks, edges or messages paid a planning of this insert in
-- its trigger: measured with `pg_stat_statements`, about half of the trigger's time, and the
-- trigger was half of an unbatched claim's or completion's (issue 32). PL/pgSQL keeps the plan
-- for the session. Same signature and effect: expand only, N-1 compatible.
create or replace function huddle_usage_add(team bigint, pending bigint, in_progress bigint,
                                            completed bigint, failed bigint, cancelled bigint,
                                            edge_count bigint, message_count bigint,
                                            bytes bigint)
returns void language plpgsql as $$
begin
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
        storage_bytes = u.storage_bytes + excluded.storage_bytes;
end $$;

-- File scopes (issue 47): the ready tasks that declare metadata `scope`, so a claim can tell in
-- one index probe whether its team has any (almost always none: the probe finds an empty
-- range and the claim stays one statement). The predicate is written exactly as the claim's
-- (`store/postgres/scope_claims.rs`, `SCOPED`), which is how the planner knows it may use it.
-- Expand only: older binaries never read it.
create index if not exists tasks_scoped_ready on tasks (team_id, prefix)
    where status = 'pending' and unmet_blockers = 0 and metadata like '%"scope"%';

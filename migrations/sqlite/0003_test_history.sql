-- Test history: each posted run of a project's suite and its per-test outcomes. The store keeps
-- the last `[history] runs_per_project` runs per project, deleting older ones (and their
-- outcomes) in the transaction that adds a run.
create table test_runs (
    id          integer primary key,
    team_id     integer not null,
    project     text not null,
    tree        text not null,
    agent       text not null,
    started_at  integer not null,
    created_at  integer not null,
    passed      integer not null,
    failed      integer not null,
    skipped     integer not null,
    errors      integer not null
);
create index test_runs_by_project on test_runs (team_id, project, id);

-- Outcomes as small integers (0 passed, 1 failed, 2 skipped, 3 error): compact.
create table test_outcomes (
    run_id   integer not null,
    nodeid   text not null,
    outcome  integer not null,
    primary key (run_id, nodeid)
) without rowid;

-- Test history: each posted run of a project's suite and its per-test outcomes. The store keeps
-- the last `[history] runs_per_project` runs per project, deleting older ones (and their
-- outcomes) in the transaction that adds a run.
create table test_runs (
    id          bigint generated always as identity primary key,
    team_id     bigint not null references teams (id),
    project     text not null,
    tree        text not null,
    agent       text not null,
    started_at  bigint not null,
    created_at  bigint not null,
    passed      bigint not null,
    failed      bigint not null,
    skipped     bigint not null,
    errors      bigint not null
);
create index test_runs_by_project on test_runs (team_id, project, id);

-- Outcomes as small integers (0 passed, 1 failed, 2 skipped, 3 error): compact.
create table test_outcomes (
    run_id   bigint not null references test_runs (id) on delete cascade,
    nodeid   text not null,
    outcome  smallint not null,
    primary key (run_id, nodeid)
);

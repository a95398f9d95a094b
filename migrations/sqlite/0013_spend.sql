-- Model spending (issue 51): a team's budget, the ledger of model calls its workers reserve
-- before calling and settle after, and per-day totals the budget is checked against (so a
-- reservation reads one row per day, never the ledger). Expand only: older binaries never
-- read these tables.
create table spend_budgets (
    team_id               integer primary key references teams (id) on delete cascade,
    version               integer not null,
    -- The budget as the API shows it (`BudgetSettings`, JSON).
    settings              text not null,
    updated_by            text not null,
    updated_at            integer not null,
    -- The version and period (`3:2026-11-29`, `3:total`) whose warning / exhaustion notice
    -- was sent, so each is sent once per budget and period.
    warned                text,
    exhausted             text
);

create table spend_calls (
    id                integer primary key,
    team_id           integer not null references teams (id) on delete cascade,
    task_id           text,
    agent             text not null,
    model             text not null,
    prompt_tokens     integer not null default 0,
    completion_tokens integer not null default 0,
    cost_micros       integer not null default 0,
    day               text not null,
    created_at        integer not null,
    settled_at        integer
);
create index spend_calls_by_task on spend_calls (team_id, task_id) where task_id is not null;
create index spend_calls_by_team on spend_calls (team_id, id);

create table spend_days (
    team_id           integer not null references teams (id) on delete cascade,
    day               text not null,
    calls             integer not null default 0,
    prompt_tokens     integer not null default 0,
    completion_tokens integer not null default 0,
    cost_micros       integer not null default 0,
    primary key (team_id, day)
);

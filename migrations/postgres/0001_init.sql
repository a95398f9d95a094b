-- huddle schema, PostgreSQL. Times are milliseconds since the Unix epoch (UTC), as in SQLite,
-- so both backends share one row ↔ wire mapping. JSON is kept as text: it is stored and
-- returned as sent, never queried inside.

create table teams (
    id              bigserial primary key,
    name            text not null unique,
    created_at      bigint not null,
    -- per-team sequences: the cursors of the message bus and of the event log. Every write
    -- transaction of a team locks this row first, so sequences are gapless and commit in order
    -- whichever replica writes.
    msg_seq         bigint not null default 0,
    event_seq       bigint not null default 0,
    memory_doc      text not null default '{}',
    memory_version  bigint not null default 0
);

create table agents (
    id            bigserial primary key,
    team_id       bigint not null references teams(id),
    name          text not null,
    role          text not null,
    token_hash    text not null unique,
    created_at    bigint not null,
    last_seen_at  bigint,
    inbox_cursor  bigint not null default 0,
    revoked_at    bigint,
    unique (team_id, name)
);

create table tasks (
    team_id           bigint not null references teams(id),
    id                text not null,
    prefix            text not null,
    number            bigint not null,
    subject           text not null,
    description       text not null default '',
    active_form       text,
    status            text not null,
    owner             text,
    claimed_by        text,
    lease_expires_at  bigint,
    attempts          bigint not null default 0,
    max_attempts      bigint not null,
    unmet_blockers    bigint not null default 0,
    metadata          text not null default '{}',
    result            text,
    failure_reason    text,
    version           bigint not null default 1,
    created_at        bigint not null,
    updated_at        bigint not null,
    primary key (team_id, id)
);

create index tasks_ready on tasks (team_id, created_at, number)
    where status = 'pending' and unmet_blockers = 0;
create index tasks_leases on tasks (lease_expires_at) where status = 'in_progress';
create unique index tasks_order on tasks (team_id, prefix, number);

create table task_deps (
    team_id     bigint not null,
    task_id     text not null,
    blocker_id  text not null,
    primary key (team_id, task_id, blocker_id)
);
create index task_deps_reverse on task_deps (team_id, blocker_id, task_id);

create table task_counters (
    team_id      bigint not null,
    prefix       text not null,
    next_number  bigint not null,
    primary key (team_id, prefix)
);

create table messages (
    team_id     bigint not null,
    seq         bigint not null,
    id          text not null,
    sender      text not null,
    recipient   text not null,
    type        text not null,
    summary     text not null,
    data        text not null,
    created_at  bigint not null,
    primary key (team_id, seq)
);

create table idempotency_keys (
    team_id  bigint not null,
    agent    text not null,
    key      text not null,
    seq      bigint not null,
    primary key (team_id, agent, key)
);

create table events (
    team_id     bigint not null,
    seq         bigint not null,
    type        text not null,
    data        text not null,
    created_at  bigint not null,
    primary key (team_id, seq)
);

create table memory_history (
    team_id     bigint not null,
    version     bigint not null,
    agent       text not null,
    kind        text not null,
    patch       text not null,
    created_at  bigint not null,
    primary key (team_id, version)
);

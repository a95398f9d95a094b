-- huddle schema, SQLite. Times are milliseconds since the Unix epoch (UTC).

create table teams (
    id              integer primary key,
    name            text not null unique,
    created_at      integer not null,
    -- per-team sequences: the cursors of the message bus and of the event log
    msg_seq         integer not null default 0,
    event_seq       integer not null default 0,
    -- the shared memory document and its version (for If-Match)
    memory_doc      text not null default '{}',
    memory_version  integer not null default 0
);

create table agents (
    id            integer primary key,
    team_id       integer not null references teams(id),
    name          text not null,
    role          text not null,
    token_hash    text not null unique,
    created_at    integer not null,
    last_seen_at  integer,
    -- inbox: the last message seq this agent acknowledged
    inbox_cursor  integer not null default 0,
    unique (team_id, name)
);

create table tasks (
    team_id           integer not null references teams(id),
    id                text not null,
    prefix            text not null,
    number            integer not null,
    subject           text not null,
    description       text not null default '',
    active_form       text,
    status            text not null,
    owner             text,
    claimed_by        text,
    lease_expires_at  integer,
    attempts          integer not null default 0,
    max_attempts      integer not null,
    -- blockers not yet completed; a task is ready when pending and this is 0
    unmet_blockers    integer not null default 0,
    metadata          text not null default '{}',
    result            text,
    failure_reason    text,
    version           integer not null default 1,
    created_at        integer not null,
    updated_at        integer not null,
    primary key (team_id, id)
) without rowid;

-- the claim query walks only ready tasks, oldest first
create index tasks_ready on tasks (team_id, created_at, number)
    where status = 'pending' and unmet_blockers = 0;
create index tasks_leases on tasks (lease_expires_at) where status = 'in_progress';
create unique index tasks_order on tasks (team_id, prefix, number);

-- task_id is blocked by blocker_id
create table task_deps (
    team_id     integer not null,
    task_id     text not null,
    blocker_id  text not null,
    primary key (team_id, task_id, blocker_id)
) without rowid;
create index task_deps_reverse on task_deps (team_id, blocker_id, task_id);

-- next auto-assigned number per id prefix
create table task_counters (
    team_id      integer not null,
    prefix       text not null,
    next_number  integer not null,
    primary key (team_id, prefix)
) without rowid;

create table messages (
    team_id     integer not null,
    seq         integer not null,
    id          text not null,
    sender      text not null,
    recipient   text not null,
    type        text not null,
    summary     text not null,
    data        text not null,
    created_at  integer not null,
    primary key (team_id, seq)
) without rowid;

-- a retried post with the same key answers with the stored message
create table idempotency_keys (
    team_id  integer not null,
    agent    text not null,
    key      text not null,
    seq      integer not null,
    primary key (team_id, agent, key)
) without rowid;

create table events (
    team_id     integer not null,
    seq         integer not null,
    type        text not null,
    data        text not null,
    created_at  integer not null,
    primary key (team_id, seq)
) without rowid;

create table memory_history (
    team_id     integer not null,
    version     integer not null,
    agent       text not null,
    kind        text not null,
    patch       text not null,
    created_at  integer not null,
    primary key (team_id, version)
) without rowid;

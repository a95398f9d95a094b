-- Outbound webhooks of a team. Each follows the team's message bus and event log from its own
-- cursors (what it has handled), so nothing is lost across restarts; a lease says which
-- replica sends for it now.
create table webhooks (
    id              integer primary key,
    team_id         integer not null references teams (id),
    url             text not null,
    secret          text not null,
    events          text not null,
    created_by      text not null,
    created_at      integer not null,
    message_cursor  integer not null,
    event_cursor    integer not null,
    lease_holder    text,
    lease_until     integer
);

create index webhooks_by_team on webhooks (team_id, id);

-- The newest deliveries of each webhook (older ones are trimmed as new ones are recorded).
create table webhook_deliveries (
    id          integer primary key,
    webhook_id  integer not null,
    team_id     integer not null,
    trigger     text not null,
    seq         integer not null,
    task_id     text,
    status      text not null,
    attempts    integer not null,
    http_status integer,
    error       text,
    at          integer not null
);

create index webhook_deliveries_by_webhook on webhook_deliveries (webhook_id, id);
create index webhook_deliveries_by_team on webhook_deliveries (team_id, id);

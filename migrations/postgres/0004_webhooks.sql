-- Outbound webhooks of a team. Each follows the team's message bus and event log from its own
-- cursors (what it has handled), so nothing is lost across restarts; a lease says which
-- replica sends for it now.
create table webhooks (
    id              bigserial primary key,
    team_id         bigint not null references teams (id),
    url             text not null,
    secret          text not null,
    events          text not null,
    created_by      text not null,
    created_at      bigint not null,
    message_cursor  bigint not null,
    event_cursor    bigint not null,
    lease_holder    text,
    lease_until     bigint
);

create index webhooks_by_team on webhooks (team_id, id);

-- The newest deliveries of each webhook (older ones are trimmed as new ones are recorded).
create table webhook_deliveries (
    id          bigserial primary key,
    webhook_id  bigint not null,
    team_id     bigint not null,
    trigger     text not null,
    seq         bigint not null,
    task_id     text,
    status      text not null,
    attempts    bigint not null,
    http_status bigint,
    error       text,
    at          bigint not null
);

create index webhook_deliveries_by_webhook on webhook_deliveries (webhook_id, id);
create index webhook_deliveries_by_team on webhook_deliveries (team_id, id);

-- The replicas serving this database, each marking itself alive every heartbeat (database
-- time, milliseconds): each enforces its share of the per-token and per-team limits among
-- the replicas seen recently (daemon/src/replicas.rs). Rows older than the expiry are deleted.
create table replicas (
    id text primary key,
    seen_at bigint not null
);

-- A heartbeat is marked on its task as soon as a replica receives it, before it waits in that
-- replica's queue for the team's lock: the lease it earned (the database's time when it
-- arrived + its lease length, milliseconds). Another replica's lease sweep locks the rows it
-- expires and skips those heard until after its cutoff, so a heartbeat queued behind a long
-- write never loses its lease. Null: no heartbeat waiting. Nullable, no default, no index:
-- the previous release neither reads nor writes it (expand only, N-1 compatible).
alter table tasks add column heard_until bigint;

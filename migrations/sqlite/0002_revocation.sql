-- Revoked agents keep their row (history names them) but no token resolves to them.
alter table agents add column revoked_at integer;

-- A team's event and message sequences move out of its `teams` row into a narrow row of their
-- own. The writer stores them after every batch that appends an event or a message, and SQLite
-- rewrites a row whole: in `teams` each of those updates read and rebuilt the team's shared
-- memory document (up to 1 MiB) beside them (BENCHMARKS.md, "What a wake is made of, and a
-- large memory document").
-- `teams.msg_seq` and `teams.event_seq` stay, written only by an import (the trigger below
-- copies them) so the export's column lists are the same on both backends; every read on
-- SQLite takes `team_seqs`.
-- Contracting: a release before this one would go on numbering from `teams` and hand out
-- sequences already used, so it must not start on this schema (huddle_schema_compat).
create table team_seqs (
    team_id    integer primary key,
    msg_seq    integer not null,
    event_seq  integer not null
);

insert into team_seqs (team_id, msg_seq, event_seq) select id, msg_seq, event_seq from teams;

-- Triggers rather than a foreign key: they hold on every connection, `foreign_keys` or not.
create trigger team_seqs_new_team after insert on teams begin
    insert into team_seqs (team_id, msg_seq, event_seq) values (new.id, new.msg_seq, new.event_seq);
end;

create trigger team_seqs_team_deleted after delete on teams begin
    delete from team_seqs where team_id = old.id;
end;

create table if not exists huddle_schema_compat (compatible_from integer not null);
delete from huddle_schema_compat;
insert into huddle_schema_compat values (15);

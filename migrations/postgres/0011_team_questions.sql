-- A team's settings for questions its workers ask a person mid-task (POST …/tasks/{id}/ask):
-- the longest wait and whether the built-in tester asks before giving up under the gate, as
-- JSON like `retention`. Expand only: older binaries never read the column.
alter table team_settings add column questions text not null default '{}';

-- The dashboard's type and sender filters (and its per-agent "messages sent") ask the server
-- over the whole history: `…/messages/search?type=…` / `?from=…` count and page through these
-- instead of walking the team's whole log. Expand only.
create index if not exists messages_by_type on messages (team_id, type, seq);
create index if not exists messages_by_sender on messages (team_id, sender, seq);

//! `team_msg`'s operations, each answering upstream's result shape. Writes go through the
//! message bus's and the memory's shared functions (their checks, limits and quotas); reads
//! see huddle's history minus what `delete` and `clear` hid (`view::Hidden`).

use super::view::{self, Hidden};
use super::{Operation, TeamMsgArgs};
use crate::http::authz::{self, Action};
use crate::http::error::{ApiError, ApiResult};
use crate::http::messages::{self, InboxQuery, ListQuery};
use crate::http::{memory, teams, AppState, AuthEpoch};
use crate::store::{Caller, MemoryOps};
use huddle_wire::{InboxAck, Message, PostMessage, Role};
use serde_json::{json, Value};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// One call's context.
pub struct Ctx<'a> {
    pub state: &'a AppState,
    pub caller: &'a Caller,
    pub epoch: AuthEpoch,
    pub departed: CancellationToken,
}

impl Ctx<'_> {
    pub async fn run(&self, args: TeamMsgArgs) -> ApiResult<Value> {
        match args.operation {
            Operation::Log => self.log(args, None).await,
            Operation::Broadcast => self.log(args, Some("all")).await,
            Operation::Read => self.read(args).await,
            Operation::List => self.list(args).await,
            Operation::Status => self.status().await,
            Operation::Delete => self.delete(args).await,
            Operation::Clear => self.clear().await,
            Operation::GetState => self.get_state(args).await,
            Operation::ReadMailbox => self.read_mailbox(args).await,
            Operation::MailboxStatus => self.mailbox_status(args).await,
        }
    }

    fn permit(&self, action: Action) -> ApiResult<()> {
        authz::permit(self.caller, action)
    }

    /// `from` (and a mailbox's `role`) must be the caller: its agent name or its role, since
    /// the message is stored as the caller's.
    fn check_self(&self, field: &str, name: &str) -> ApiResult<()> {
        if name == self.caller.agent || name == self.caller.role.as_str() {
            return Ok(());
        }
        Err(ApiError::bad_request(
            field,
            format!(
                "`{field}` must be you: your agent name `{}` or your role `{}`, got `{name}`",
                self.caller.agent, self.caller.role
            ),
        ))
    }

    async fn hidden(&self) -> ApiResult<Hidden> {
        Ok(Hidden::of(
            &memory::read_memory(self.state, self.caller).await?,
        ))
    }

    async fn log(&self, args: TeamMsgArgs, to: Option<&str>) -> ApiResult<Value> {
        self.permit(Action::PostMessages)?;
        let verb = if to.is_some() { "broadcast" } else { "log" };
        let from = args
            .from
            .filter(|f| !f.is_empty())
            .ok_or_else(|| ApiError::bad_request("from", format!("{verb} requires \"from\"")))?;
        self.check_self("from", &from)?;
        let to = to
            .map(str::to_string)
            .or(args.to.filter(|t| !t.is_empty()))
            .unwrap_or_else(|| "coordinator".into());
        let kind = args
            .kind
            .filter(|k| !k.is_empty())
            .unwrap_or_else(|| "message".into());
        let mut data = args.data;
        if let Some(reference) = args.reference {
            let d = data.get_or_insert_with(Default::default);
            d.entry("ref").or_insert(Value::String(reference));
        }
        let summary = args
            .summary
            .filter(|s| !s.trim().is_empty())
            .unwrap_or_else(|| format!("[{from}] {kind} → {to}"));
        let post = PostMessage {
            to: view::recipient_in(&to),
            kind: kind.clone(),
            summary,
            data: data.clone().map(Value::Object).unwrap_or(Value::Null),
        };
        let message = match data.filter(|_| kind == "state_update") {
            Some(data) => {
                self.permit(Action::PatchMemory)?;
                let ops: MemoryOps = Arc::new(move |doc| {
                    let now = chrono::Utc::now().to_rfc3339();
                    view::state_update_ops(doc, &from, &data, &now)
                });
                let (posted, _) =
                    messages::post_message_changing_memory(self.state, self.caller, post, ops)
                        .await?;
                posted.message
            }
            None => {
                messages::post_message(self.state, self.caller, post, "idempotencyKey", None)
                    .await?
                    .message
            }
        };
        let id = view::msg_id(message.seq);
        let to = view::view(&message)["to"].clone();
        let text = format!(
            "Logged {id}: [{} → {}] {}",
            message.from,
            to.as_str().unwrap_or_default(),
            message.summary
        );
        Ok(json!({ "id": id, "message": text }))
    }

    /// The visible message an `id` names, or upstream's not-found error.
    async fn find(&self, id: Option<String>, op: &str, hidden: &Hidden) -> ApiResult<Message> {
        let id = id
            .filter(|i| !i.is_empty())
            .ok_or_else(|| ApiError::bad_request("id", format!("{op} requires \"id\"")))?;
        let team = &self.caller.team;
        let missing = || ApiError::not_found(format!("Message {id} not found in team \"{team}\""));
        let seq = view::seq_of(&id).ok_or_else(missing)?;
        if hidden.hides(seq) {
            return Err(missing());
        }
        let q = ListQuery {
            after: Some(seq - 1),
            limit: Some(1),
            ..Default::default()
        };
        let page = messages::list_messages(self.state, self.caller, q).await?;
        page.messages
            .into_iter()
            .find(|m| m.seq == seq)
            .ok_or_else(missing)
    }

    async fn read(&self, args: TeamMsgArgs) -> ApiResult<Value> {
        self.permit(Action::ReadMessages)?;
        let hidden = self.hidden().await?;
        Ok(view::view(&self.find(args.id, "read", &hidden).await?))
    }

    async fn list(&self, args: TeamMsgArgs) -> ApiResult<Value> {
        self.permit(Action::ReadMessages)?;
        let last = last(args.last)?;
        let hidden = self.hidden().await?;
        let filter = Filter {
            from: args.from.filter(|s| !s.is_empty()),
            to: args
                .to
                .filter(|s| !s.is_empty())
                .map(|t| view::recipient_in(&t)),
            kind: args.kind.filter(|s| !s.is_empty()),
        };
        let shown = self.newest(&filter, &hidden, last).await?;
        let total = self.count(&filter, &hidden).await?;
        let lines: Vec<String> = shown.iter().map(view::line).collect();
        Ok(json!({
            "total": total,
            "showing": shown.len(),
            "messages": shown.iter().map(view::view).collect::<Vec<_>>(),
            "formatted": lines.join("\n"),
        }))
    }

    /// The newest `n` visible messages matching `filter`, oldest first.
    async fn newest(&self, filter: &Filter, hidden: &Hidden, n: usize) -> ApiResult<Vec<Message>> {
        // Deleted messages are few; asking for as many more keeps the answer `n` long.
        let extra = hidden.deleted.len();
        let max = self.state.settings.limits.max_page_size;
        let q = filter.query(hidden.cleared_through, (n + extra).min(max), true);
        let page = messages::list_messages(self.state, self.caller, q).await?;
        let mut shown: Vec<Message> = page
            .messages
            .into_iter()
            .filter(|m| !hidden.hides(m.seq))
            .collect();
        let cut = shown.len().saturating_sub(n);
        Ok(shown.split_off(cut))
    }

    /// How many visible messages match `filter`: the store's count while nothing was cleared,
    /// else counted page by page past the clear.
    async fn count(&self, filter: &Filter, hidden: &Hidden) -> ApiResult<i64> {
        if hidden.cleared_through == 0 {
            let search = crate::store::MessageSearch {
                from: filter.from.clone(),
                to: filter.to.clone(),
                kind: filter.kind.clone(),
                limit: 1,
                ..Default::default()
            };
            let (_, total) = self
                .state
                .store
                .search_messages(self.caller.team_id, search)
                .await?;
            let mut deleted = 0;
            for &seq in &hidden.deleted {
                let q = filter.query(seq - 1, 1, false);
                let page = messages::list_messages(self.state, self.caller, q).await?;
                deleted += i64::from(page.messages.first().is_some_and(|m| m.seq == seq));
            }
            return Ok(total - deleted);
        }
        let max = self.state.settings.limits.max_page_size;
        let (mut after, mut total) = (hidden.cleared_through, 0);
        loop {
            let q = filter.query(after, max, false);
            let page = messages::list_messages(self.state, self.caller, q).await?;
            total += page
                .messages
                .iter()
                .filter(|m| !hidden.hides(m.seq))
                .count() as i64;
            match page.next {
                Some(next) => after = next,
                None => return Ok(total),
            }
        }
    }

    async fn status(&self) -> ApiResult<Value> {
        self.permit(Action::ReadMessages)?;
        self.permit(Action::ListAgents)?;
        let hidden = self.hidden().await?;
        let total = self.count(&Filter::default(), &hidden).await?;
        if total == 0 {
            return Ok(json!({ "members": [], "summary": "No messages recorded yet." }));
        }
        let agents = teams::agents_of(self.state, self.caller.team_id).await?;
        let mut members = Vec::new();
        for agent in agents.agents {
            let filter = Filter {
                from: Some(agent.name.clone()),
                ..Default::default()
            };
            let last = self.newest(&filter, &hidden, 1).await?.pop();
            let count = match last {
                Some(_) => self.count(&filter, &hidden).await?,
                None => 0,
            };
            let last_seen = last
                .as_ref()
                .map(|m| m.created_at.clone())
                .or(agent.last_seen_at)
                .unwrap_or_default();
            let action = last
                .map(|m| {
                    format!(
                        "sent {} → {}",
                        m.kind,
                        view::view(&m)["to"].as_str().unwrap_or("")
                    )
                })
                .unwrap_or_default();
            members.push(json!({
                "member": agent.name,
                "role": agent.role,
                "lastSeen": last_seen,
                "lastAction": action,
                "messageCount": count,
            }));
        }
        members.sort_by(|a, b| b["lastSeen"].as_str().cmp(&a["lastSeen"].as_str()));
        let formatted: Vec<String> = members
            .iter()
            .map(|m| {
                let seen = m["lastSeen"].as_str().unwrap_or_default();
                format!(
                    "{:<12} | last: {} | msgs: {} | {}",
                    m["member"].as_str().unwrap_or_default(),
                    seen.get(11..19).unwrap_or(seen),
                    m["messageCount"],
                    m["lastAction"].as_str().unwrap_or_default()
                )
            })
            .collect();
        Ok(json!({
            "members": members,
            "total_messages": total,
            "formatted": formatted.join("\n"),
        }))
    }

    /// Coordinators (and leads) only, as the upstream skills reserve it to the coordinator.
    fn permit_hiding(&self, what: &str) -> ApiResult<()> {
        if matches!(self.caller.role, Role::Coordinator | Role::Lead) {
            return self.permit(Action::PatchMemory);
        }
        let role = self.caller.role;
        let article = if role == Role::Observer || role == Role::Executor {
            "an"
        } else {
            "a"
        };
        Err(ApiError::forbidden(format!(
            "{article} {role} may not {what} team_msg messages; only coordinators may"
        )))
    }

    /// Hides one message from team_msg, recording who and when under `/team_msg/deleted`.
    async fn delete(&self, args: TeamMsgArgs) -> ApiResult<Value> {
        self.permit_hiding("delete")?;
        let hidden = self.hidden().await?;
        let message = self.find(args.id, "delete", &hidden).await?;
        let id = view::msg_id(message.seq);
        let at = chrono::Utc::now().to_rfc3339();
        let mark = json!({ "by": self.caller.agent, "at": at });
        let patch = json!({ view::HIDDEN_KEY: { "deleted": { &id: mark } } });
        memory::patch_memory(self.state, self.caller, patch, false, None).await?;
        let to = view::view(&message)["to"].clone();
        let text = format!(
            "Deleted {id}: [{} → {}] {}",
            message.from,
            to.as_str().unwrap_or_default(),
            message.summary
        );
        Ok(json!({ "deleted": id, "message": text }))
    }

    /// Hides every message so far from team_msg: `/team_msg/cleared_through` becomes the newest
    /// message's `seq` (never lower than it was).
    async fn clear(&self) -> ApiResult<Value> {
        self.permit_hiding("clear")?;
        let hidden = self.hidden().await?;
        let team = &self.caller.team;
        let count = self.count(&Filter::default(), &hidden).await?;
        let newest = self.newest(&Filter::default(), &hidden, 1).await?.pop();
        let Some(newest) = newest.filter(|_| count > 0) else {
            let text = format!("Team \"{team}\" has no messages to clear.");
            return Ok(json!({ "message": text }));
        };
        let at = chrono::Utc::now().to_rfc3339();
        let through = newest.seq.max(hidden.cleared_through);
        let mark = json!({ "cleared_through": through, "cleared_by": self.caller.agent,
            "cleared_at": at });
        let patch = json!({ view::HIDDEN_KEY: mark });
        memory::patch_memory(self.state, self.caller, patch, false, None).await?;
        let text = format!("Cleared {count} messages for team \"{team}\".");
        Ok(json!({ "cleared": count, "message": text }))
    }

    async fn get_state(&self, args: TeamMsgArgs) -> ApiResult<Value> {
        self.permit(Action::ReadMemory)?;
        let memory = memory::read_memory(self.state, self.caller).await?;
        let role_state = match &memory.doc["role_state"] {
            Value::Object(map) => Value::Object(map.clone()),
            _ => json!({}),
        };
        let Some(role) = args.role.filter(|r| !r.is_empty()) else {
            return Ok(json!({ "role_state": role_state }));
        };
        Ok(match role_state.get(&role) {
            Some(state) => json!({ "role": role, "state": state }),
            None => json!({
                "role": role,
                "state": null,
                "message": format!("No state found for role \"{role}\""),
            }),
        })
    }

    /// The caller's undelivered messages (its inbox: to its name, its role or everyone), then
    /// marked delivered by moving its inbox cursor past them.
    async fn read_mailbox(&self, args: TeamMsgArgs) -> ApiResult<Value> {
        self.permit(Action::ReadInbox)?;
        self.permit(Action::AckInbox)?;
        let role = self.mailbox_of(args.role)?;
        let q = InboxQuery {
            wait_ms: None,
            limit: Some(last(args.last)?),
        };
        let max_wait = self.state.settings.tasks.mcp_max_wait_ms;
        let page = messages::read_inbox(
            self.state,
            self.caller,
            self.epoch,
            q,
            max_wait,
            &self.departed,
        )
        .await?;
        if let Some(seq) = page.messages.last().map(|m| m.seq) {
            messages::ack_inbox(self.state, self.caller, InboxAck { seq }).await?;
        }
        let shown: Vec<Value> = page.messages.iter().map(view::view).collect();
        Ok(json!({
            "role": role,
            "delivery_method": args.delivery_method.unwrap_or_else(|| "pull".into()),
            "count": shown.len(),
            "messages": shown,
        }))
    }

    /// How many messages wait in the caller's mailbox: counted over one inbox page (at most
    /// `[limits] max_page_size` and `max_page_bytes`), `more` when there are more than that.
    async fn mailbox_status(&self, args: TeamMsgArgs) -> ApiResult<Value> {
        self.permit(Action::ReadInbox)?;
        let role = self.mailbox_of(args.role)?;
        let limits = &self.state.settings.limits;
        let (max, max_bytes) = (limits.max_page_size, limits.max_page_bytes);
        let page = self.state.store.inbox(self.caller, max, max_bytes).await?;
        let more = page.cut || page.items.len() == max;
        Ok(json!({ "role": role, "unread": page.items.len(), "more": more }))
    }

    /// Whose mailbox: the caller's own (its name or role); `role` defaults to its role.
    fn mailbox_of(&self, role: Option<String>) -> ApiResult<String> {
        match role.filter(|r| !r.is_empty()) {
            Some(role) => self.check_self("role", &role).map(|()| role),
            None => Ok(self.caller.role.to_string()),
        }
    }
}

/// `last`: 1–100, 20 by default (upstream's bounds).
fn last(last: Option<i64>) -> ApiResult<usize> {
    match last.unwrap_or(20) {
        n @ 1..=100 => Ok(n as usize),
        n => Err(ApiError::bad_request(
            "last",
            format!("`last` must be between 1 and 100, got {n}"),
        )),
    }
}

/// The filters of `list` and `status`, as a message list's query.
#[derive(Default)]
struct Filter {
    from: Option<String>,
    to: Option<String>,
    kind: Option<String>,
}

impl Filter {
    fn query(&self, after: i64, limit: usize, newest: bool) -> ListQuery {
        ListQuery {
            after: Some(after),
            from: self.from.clone(),
            to: self.to.clone(),
            kind: self.kind.clone(),
            limit: Some(limit),
            newest: Some(newest),
        }
    }
}

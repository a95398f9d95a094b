//! The message bus: post (idempotent), list, inbox and ack.

use super::queries::{MessageQuery, MessageSearch};
use super::transport::{decode, Call};
use super::{Client, Error};
use crate::wire::{
    BatchMessage, InboxAck, InboxCursor, Message, MessageList, MessageSearchPage, PostMessage,
    PostMessages, PostedMessages,
};
use std::time::Duration;

/// A posted message and whether the daemon had already stored it under the same idempotency
/// key (a replay).
#[derive(Debug, Clone, PartialEq)]
pub struct Posted {
    /// The stored message (the original one for a replay).
    pub message: Message,
    /// `true` when the key had been used before and nothing new was stored.
    pub replayed: bool,
}

impl Client {
    /// `POST …/messages`. The client generates an idempotency key, so the post is retried safely
    /// and stored exactly once even when an answer is lost.
    pub async fn post_message(&self, message: &PostMessage) -> Result<Message, Error> {
        let key = uuid::Uuid::new_v4().to_string();
        Ok(self.post_message_with_key(message, &key).await?.message)
    }

    /// `POST …/messages` with the caller's own `Idempotency-Key` (1–255 visible ASCII
    /// characters): posting again with the same key answers the first message.
    pub async fn post_message_with_key(
        &self,
        message: &PostMessage,
        key: &str,
    ) -> Result<Posted, Error> {
        let call = Call::post(self.team_url(&["messages"])?)
            .json(message)?
            .header("idempotency-key", key)?
            .retry();
        let what = call.describe();
        let res = self.send(call).await?;
        let replayed = res
            .headers()
            .get("idempotent-replayed")
            .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"true"));
        Ok(Posted {
            message: decode(res, &what).await?,
            replayed,
        })
    }

    /// `POST …/messages/batch`: stores every message or none, in order. Items without an
    /// idempotency key get a fresh one, so the request is retried safely and each message is
    /// stored exactly once even when an answer is lost.
    pub async fn post_messages(&self, messages: &[BatchMessage]) -> Result<PostedMessages, Error> {
        let keyed: Vec<BatchMessage> = messages
            .iter()
            .cloned()
            .map(|mut m| {
                m.idempotency_key
                    .get_or_insert_with(|| uuid::Uuid::new_v4().to_string());
                m
            })
            .collect();
        let body = PostMessages { messages: keyed };
        let call = Call::post(self.team_url(&["messages", "batch"])?)
            .json(&body)?
            .retry();
        self.json(call).await
    }

    /// `GET …/messages`: one page in `seq` order; `next` is the cursor for
    /// [`MessageQuery::after`].
    pub async fn list_messages(&self, query: &MessageQuery) -> Result<MessageList, Error> {
        let call = Call::get(self.team_url(&["messages"])?)
            .query("after", query.after)
            .query("from", query.from.as_deref())
            .query("to", query.to.as_deref())
            .query("type", query.kind.as_deref())
            .query("limit", query.limit);
        self.json(call).await
    }

    /// `GET …/messages/search`: a page of the messages matching `search`, newest first, with
    /// the number of all matches (`total`) and the `before` of the next page (`next`).
    pub async fn search_messages(
        &self,
        search: &MessageSearch,
    ) -> Result<MessageSearchPage, Error> {
        let call = Call::get(self.team_url(&["messages", "search"])?)
            .query("q", search.text.as_deref())
            .query("from", search.from.as_deref())
            .query("to", search.to.as_deref())
            .query("type", search.kind.as_deref())
            .query("task", search.task.as_deref())
            .query("since", search.since.as_deref())
            .query("until", search.until.as_deref())
            .query("before", search.before)
            .query("limit", search.limit);
        self.json(call).await
    }

    /// Every message matching `query`, following `next` page after page.
    pub async fn list_all_messages(&self, query: &MessageQuery) -> Result<Vec<Message>, Error> {
        let mut query = query.clone();
        let mut all = Vec::new();
        loop {
            let page = self.list_messages(&query).await?;
            all.extend(page.messages);
            match page.next {
                Some(next) => query.after = Some(next),
                None => return Ok(all),
            }
        }
    }

    /// `GET …/inbox`: messages to this agent, its role or `*` past its cursor, waiting up to
    /// `wait` for the first. Reading does not move the cursor; [`Client::ack_inbox`] does.
    pub async fn inbox(
        &self,
        wait: Option<Duration>,
        limit: Option<usize>,
    ) -> Result<MessageList, Error> {
        let call = Call::get(self.team_url(&["inbox"])?)
            .query("waitMs", wait.map(|w| w.as_millis()))
            .query("limit", limit)
            .wait(wait.unwrap_or_default());
        self.json(call).await
    }

    /// `POST …/inbox/ack`: everything up to and including `seq` has been handled.
    pub async fn ack_inbox(&self, seq: i64) -> Result<InboxCursor, Error> {
        let call = Call::post(self.team_url(&["inbox", "ack"])?)
            .json(&InboxAck { seq })?
            .retry();
        self.json(call).await
    }
}

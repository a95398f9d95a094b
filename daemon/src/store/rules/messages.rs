//! The message bus's rules: a valid post, who can be reached, batch item errors, acks.

use super::super::error::{StoreError, StoreResult};
use super::super::types::Caller;
use super::validate;
use crate::config::LimitSettings as Limits;
use huddle_wire::{Message, PostMessage, Role, BROADCAST};

/// Checks a post and returns its `data` as the JSON text to store.
pub fn validate_post(post: &PostMessage, limits: &Limits) -> StoreResult<String> {
    validate::message_type(&post.kind)?;
    validate::text("summary", &post.summary, limits.max_summary_chars)?;
    validate::object("data", &post.data)?;
    validate::depth("data", &post.data, limits.max_json_depth)?;
    let data_text = if post.data.is_null() {
        "{}".to_string()
    } else {
        post.data.to_string()
    };
    let size = data_text.len();
    if size > limits.max_message_bytes {
        return Err(StoreError::TooLarge {
            message: format!(
                "message `data` is {size} bytes; the limit is {}",
                limits.max_message_bytes
            ),
        });
    }
    Ok(data_text)
}

/// `to` is `*` or a role: no lookup needed.
pub fn is_group_recipient(to: &str) -> bool {
    to == BROADCAST || Role::ALL.iter().any(|r| r.as_str() == to)
}

/// A message to nobody is silently lost work: the error lists who can be reached.
pub fn unknown_recipient(to: &str, agents: Vec<String>) -> StoreError {
    let mut recipients = agents;
    for role in Role::ALL {
        if !recipients.iter().any(|r| r == role.as_str()) {
            recipients.push(role.as_str().to_string());
        }
    }
    recipients.push(BROADCAST.to_string());
    StoreError::Invalid {
        field: "to".into(),
        message: format!(
            "unknown recipient {to:?}; send to an agent, a role or `*`: {}",
            recipients.join(", ")
        ),
        details: serde_json::json!({ "knownRecipients": recipients }),
    }
}

/// Points a batch item's error at `messages[i]`.
pub fn at_message(i: usize, e: StoreError) -> StoreError {
    match e {
        StoreError::Invalid {
            field,
            message,
            details,
        } => StoreError::Invalid {
            field: format!("messages[{i}].{field}"),
            message: format!("messages[{i}]: {message}"),
            details,
        },
        StoreError::TooLarge { message } => StoreError::TooLarge {
            message: format!("messages[{i}]: {message}"),
        },
        other => other,
    }
}

/// An inbox acknowledgement must name a message that exists.
pub fn check_ack(seq: i64, last: i64) -> StoreResult<()> {
    if seq < 0 || seq > last {
        return Err(StoreError::invalid(
            "seq",
            format!("`seq` must be between 0 and the last message seq ({last}), got {seq}"),
        ));
    }
    Ok(())
}

/// The message a post stores: the next `seq`, a new id, the caller as sender, `{}` for no data.
pub fn new_message(seq: i64, caller: &Caller, post: PostMessage, now: i64) -> Message {
    let data = if post.data.is_null() {
        serde_json::json!({})
    } else {
        post.data
    };
    Message {
        seq,
        id: uuid::Uuid::new_v4().to_string(),
        from: caller.agent.clone(),
        to: post.to,
        kind: post.kind,
        summary: post.summary,
        data,
        created_at: super::fmt_time(now),
    }
}

//! Input rules shared by every backend: names, task ids, prefixes, message types. The fixed
//! bounds come from `huddle_wire::limits`; the configurable ones from `[limits]`
//! (`crate::config::LimitSettings`), passed in by the caller.

use crate::store::error::StoreError;
use huddle_wire::limits::{
    MESSAGE_TYPE_MAX_LEN, NAME_MAX_LEN, PREFIX_MAX_LEN, TASK_NUMBER_MAX_DIGITS,
};

/// JSON nested deeper than `max` levels is refused.
pub fn depth(field: &str, value: &serde_json::Value, max: usize) -> Result<(), StoreError> {
    fn deepest(v: &serde_json::Value) -> usize {
        match v {
            serde_json::Value::Array(a) => 1 + a.iter().map(deepest).max().unwrap_or(0),
            serde_json::Value::Object(o) => 1 + o.values().map(deepest).max().unwrap_or(0),
            _ => 0,
        }
    }
    let d = deepest(value);
    if d > max {
        return Err(StoreError::invalid(
            field,
            format!("`{field}` is nested {d} levels deep; the limit is {max}"),
        ));
    }
    Ok(())
}

/// Team and agent names: `[a-z0-9][a-z0-9_-]{0,62}`.
pub fn name(field: &str, value: &str) -> Result<(), StoreError> {
    let bytes = value.as_bytes();
    let ok = !bytes.is_empty()
        && bytes.len() <= NAME_MAX_LEN
        && (bytes[0].is_ascii_lowercase() || bytes[0].is_ascii_digit())
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'_' || *b == b'-');
    if ok {
        Ok(())
    } else {
        Err(StoreError::invalid(
            field,
            format!(
                "`{field}` must match [a-z0-9][a-z0-9_-]{{0,{}}}, got {value:?}",
                NAME_MAX_LEN - 1
            ),
        ))
    }
}

/// A task id prefix such as `TEST` or `QARUN` (a trailing `-` is accepted and dropped).
pub fn prefix(field: &str, value: &str) -> Result<String, StoreError> {
    let trimmed = value.strip_suffix('-').unwrap_or(value);
    let bytes = trimmed.as_bytes();
    let ok = !bytes.is_empty()
        && bytes.len() <= PREFIX_MAX_LEN
        && bytes[0].is_ascii_uppercase()
        && bytes
            .iter()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || *b == b'_');
    if ok {
        Ok(trimmed.to_string())
    } else {
        Err(StoreError::invalid(
            field,
            format!("`{field}` must be upper-case letters, digits or `_`, starting with a letter (like TEST or QARUN), got {value:?}"),
        ))
    }
}

/// A task id `PREFIX-NNN`; returns the prefix and the number.
pub fn task_id(field: &str, value: &str) -> Result<(String, i64), StoreError> {
    let bad = || {
        StoreError::invalid(
            field,
            format!("`{field}` must look like PREFIX-NNN (for example TEST-001), got {value:?}"),
        )
    };
    let (head, digits) = value.rsplit_once('-').ok_or_else(bad)?;
    if digits.is_empty()
        || digits.len() > TASK_NUMBER_MAX_DIGITS
        || !digits.bytes().all(|b| b.is_ascii_digit())
    {
        return Err(bad());
    }
    let prefix = prefix(field, head).map_err(|_| bad())?;
    if head.ends_with('-') {
        return Err(bad());
    }
    Ok((prefix, digits.parse().map_err(|_| bad())?))
}

/// The `blockedBy` edges a request adds in all, against `[limits] max_blocked_by_per_request`.
/// Checked before the request reaches a store, so no backend's writer sees a larger one.
pub fn blocked_by_edges(
    field: &str,
    edges: usize,
    limits: &crate::config::LimitSettings,
) -> Result<(), StoreError> {
    let max = limits.max_blocked_by_per_request;
    if edges > max {
        return Err(StoreError::TooLarge {
            message: format!(
                "`{field}` adds {edges} blockedBy edges in one request; the limit is {max} ([limits] max_blocked_by_per_request): split the request"
            ),
        });
    }
    Ok(())
}

/// Message types: `[a-z][a-z0-9_]{0,63}`.
pub fn message_type(value: &str) -> Result<(), StoreError> {
    let bytes = value.as_bytes();
    let ok = !bytes.is_empty()
        && bytes.len() <= MESSAGE_TYPE_MAX_LEN
        && bytes[0].is_ascii_lowercase()
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'_');
    if ok {
        Ok(())
    } else {
        Err(StoreError::invalid(
            "type",
            format!(
                "`type` must match [a-z][a-z0-9_]{{0,{}}}, got {value:?}",
                MESSAGE_TYPE_MAX_LEN - 1
            ),
        ))
    }
}

/// A required, non-blank text of bounded length.
pub fn text(field: &str, value: &str, max: usize) -> Result<(), StoreError> {
    if value.trim().is_empty() {
        return Err(StoreError::invalid(
            field,
            format!("`{field}` must not be empty"),
        ));
    }
    optional_text(field, value, max)
}

/// A heartbeat's `workspace`: a path, and a branch and base, each not blank and bounded.
pub fn workspace(note: &huddle_wire::WorkspaceNote) -> Result<(), StoreError> {
    let fields = [
        ("workspace.path", Some(note.path.as_str()), 1024),
        ("workspace.branch", note.branch.as_deref(), 255),
        ("workspace.base", note.base.as_deref(), 64),
    ];
    for (field, value, max) in fields {
        if let Some(value) = value {
            text(field, value, max)?;
        }
    }
    Ok(())
}

/// An optional text of bounded length.
pub fn optional_text(field: &str, value: &str, max: usize) -> Result<(), StoreError> {
    if value.chars().count() > max {
        return Err(StoreError::invalid(
            field,
            format!("`{field}` is longer than {max} characters"),
        ));
    }
    Ok(())
}

/// Task metadata and message data must be JSON objects (or absent).
pub fn object(field: &str, value: &serde_json::Value) -> Result<(), StoreError> {
    if value.is_object() || value.is_null() {
        Ok(())
    } else {
        Err(StoreError::invalid(
            field,
            format!("`{field}` must be a JSON object"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_ids_split_into_prefix_and_number() {
        assert_eq!(task_id("id", "TEST-001").unwrap(), ("TEST".into(), 1));
        assert_eq!(task_id("id", "QA_RUN2-42").unwrap(), ("QA_RUN2".into(), 42));
        for bad in [
            "TEST",
            "test-1",
            "TEST-",
            "-1",
            "TEST--1",
            "TEST-1a",
            "1TEST-1",
            "TEST-1234567890",
        ] {
            assert!(task_id("id", bad).is_err(), "{bad} should be refused");
        }
    }

    #[test]
    fn names_follow_the_documented_pattern() {
        assert!(name("name", "tester-2").is_ok());
        assert!(name("name", "a").is_ok());
        for bad in ["", "Tester", "-x", "a b", &"a".repeat(64)] {
            assert!(name("name", bad).is_err(), "{bad} should be refused");
        }
    }

    #[test]
    fn prefixes_accept_a_trailing_dash() {
        assert_eq!(prefix("prefix", "TEST-").unwrap(), "TEST");
        assert!(prefix("prefix", "te").is_err());
    }
}

//! How a failed command reads: one line for people (`huddle: …`), or with `--json` the API's
//! own error shape on stderr, so scripts parse errors like answers. Messages speak in the
//! command line's terms: the flags a person typed, not the API's field names or the SDK's types.

use huddle_sdk::Error as SdkError;
use serde_json::{json, Value};

/// API body fields and the flags that set them, for messages that name a field.
const FLAGS: &[(&str, &str)] = &[
    ("waitMs", "--wait"),
    ("leaseMs", "--lease"),
    ("blockedBy", "--blocked-by"),
    ("addBlockedBy", "--add-blocked-by"),
    ("removeBlockedBy", "--remove-blocked-by"),
    ("activeForm", "--active-form"),
    ("maxAttempts", "--max-attempts"),
    ("idempotencyKey", "--idempotency-key"),
    ("prefixes", "--prefix"),
    ("metadata", "--metadata"),
    ("data", "--data"),
    ("result", "--result"),
];

/// The error as (code, message, details), in the command line's terms. The message is the
/// message alone: the code travels beside it, and people see the status in [`fn@print`]'s line.
pub fn describe(
    error: &(dyn std::error::Error + Send + Sync + 'static),
) -> (String, String, Value) {
    match error.downcast_ref::<SdkError>() {
        Some(SdkError::Api(api)) => (
            api.code.clone(),
            in_flags(&api.message),
            api.details.clone(),
        ),
        Some(SdkError::NoTeam) => (
            "no_team".into(),
            "no team: pass --team or set HUDDLE_TEAM".into(),
            Value::Null,
        ),
        Some(e @ SdkError::Unreachable { .. }) => {
            ("unreachable".into(), e.to_string(), Value::Null)
        }
        Some(e @ SdkError::Protocol { .. }) => ("protocol".into(), e.to_string(), Value::Null),
        Some(e) => ("invalid_input".into(), e.to_string(), Value::Null),
        None => ("invalid_input".into(), error.to_string(), Value::Null),
    }
}

/// Prints the error on stderr: one line, or the `{"error": …}` shape with `--json`.
pub fn print(error: &(dyn std::error::Error + Send + Sync + 'static), as_json: bool) {
    let (code, message, details) = describe(error);
    let message = message.replace(['\n', '\r'], " ");
    let status = match error.downcast_ref::<SdkError>() {
        Some(SdkError::Api(api)) => Some(api.status),
        _ => None,
    };
    if as_json {
        let mut body = json!({ "error": { "code": code, "message": message } });
        if !details.is_null() {
            body["error"]["details"] = details;
        }
        eprintln!("{body}");
    } else if let Some(status) = status {
        eprintln!("huddle: {message} ({status} {code})");
    } else {
        eprintln!("huddle: {message}");
    }
}

/// Whether the error is stdout closing under us (a pipe whose reader exited).
pub fn is_closed_output(error: &(dyn std::error::Error + Send + Sync + 'static)) -> bool {
    error
        .downcast_ref::<std::io::Error>()
        .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
}

/// `` `waitMs` must be at most 60000, got 90000 `` → `` `--wait` must be at most 60s, got 90s ``:
/// the flag's name, and durations in the units the flags take.
fn in_flags(message: &str) -> String {
    let message = if message.starts_with("`waitMs`") || message.starts_with("`leaseMs`") {
        in_seconds(message)
    } else {
        message.to_string()
    };
    FLAGS.iter().fold(message, |text, (field, flag)| {
        text.replace(&format!("`{field}`"), &format!("`{flag}`"))
    })
}

/// Every whole number of milliseconds in `message` (a word, maybe followed by `,` or `.`)
/// as seconds: `60000` → `60s`, `100` → `0.1s`.
fn in_seconds(message: &str) -> String {
    let words: Vec<String> = message
        .split(' ')
        .map(|word| {
            let number = word.trim_end_matches([',', '.']);
            match number.parse::<u64>() {
                Ok(ms) => {
                    let rest = &word[number.len()..];
                    let secs = ms as f64 / 1000.0;
                    format!("{secs}s{rest}")
                }
                Err(_) => word.to_string(),
            }
        })
        .collect();
    words.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_field_names_become_flags() {
        assert_eq!(
            in_flags("`blockedBy` names TEST-9; `activeForm` too"),
            "`--blocked-by` names TEST-9; `--active-form` too"
        );
        assert_eq!(in_flags("`dataset` stays"), "`dataset` stays");
    }

    #[test]
    fn waits_and_leases_are_said_in_seconds() {
        assert_eq!(
            in_flags("`waitMs` must be at most 60000, got 500000"),
            "`--wait` must be at most 60s, got 500s"
        );
        assert_eq!(
            in_flags("`leaseMs` must be between 100 and 3600000, got 50"),
            "`--lease` must be between 0.1s and 3600s, got 0.05s"
        );
    }

    #[test]
    fn a_client_without_a_team_is_explained_with_the_flag() {
        let (code, message, _) = describe(&SdkError::NoTeam);
        assert_eq!(code, "no_team");
        assert!(!message.contains("ClientBuilder"), "{message}");
        assert!(message.contains("--team"), "{message}");
    }
}

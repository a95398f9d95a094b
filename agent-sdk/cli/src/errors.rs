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

/// The error as (code, message, details), in the command line's terms.
pub fn describe(
    error: &(dyn std::error::Error + Send + Sync + 'static),
) -> (String, String, Value) {
    match error.downcast_ref::<SdkError>() {
        Some(SdkError::Api(api)) => (
            api.code.clone(),
            format!("{} ({} {})", in_flags(&api.message), api.status, api.code),
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
    if as_json {
        let mut body = json!({ "error": { "code": code, "message": message } });
        if !details.is_null() {
            body["error"]["details"] = details;
        }
        eprintln!("{body}");
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

/// `` `waitMs` must be at most 60000 `` → `` `--wait` must be at most 60000 ``.
fn in_flags(message: &str) -> String {
    FLAGS
        .iter()
        .fold(message.to_string(), |text, (field, flag)| {
            text.replace(&format!("`{field}`"), &format!("`{flag}`"))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_field_names_become_flags() {
        assert_eq!(
            in_flags("`waitMs` must be at most 60000 ms; `leaseMs` too"),
            "`--wait` must be at most 60000 ms; `--lease` too"
        );
        assert_eq!(in_flags("`dataset` stays"), "`dataset` stays");
    }

    #[test]
    fn a_client_without_a_team_is_explained_with_the_flag() {
        let (code, message, _) = describe(&SdkError::NoTeam);
        assert_eq!(code, "no_team");
        assert!(!message.contains("ClientBuilder"), "{message}");
        assert!(message.contains("--team"), "{message}");
    }
}

//! Parsers for argument values: durations, JSON, task ids versus prefixes, JSON input files.

use std::io::Read;
use std::time::Duration;

/// `500ms`, `2s`, `1.5s`, `3m`, `1h`; a bare number is seconds.
pub fn duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| format!("invalid duration {text:?}: expected e.g. 500ms, 2s, 1.5m"))?;
    let secs = match unit.trim() {
        "ms" => value / 1000.0,
        "" | "s" => value,
        "m" => value * 60.0,
        "h" => value * 3600.0,
        other => {
            return Err(format!(
                "invalid duration unit {other:?}: use ms, s, m or h"
            ))
        }
    };
    if !secs.is_finite() || secs < 0.0 {
        return Err(format!("invalid duration {text:?}"));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// A JSON value given on the command line.
pub fn json(text: &str) -> Result<serde_json::Value, String> {
    serde_json::from_str(text).map_err(|e| format!("invalid JSON {text:?}: {e}"))
}

/// A JSON value, or the text itself as a JSON string when it is not valid JSON
/// (`pytest` → `"pytest"`, `42` → `42`).
pub fn json_or_string(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|_| serde_json::Value::String(text.to_string()))
}

/// JSON read from `path`, or from stdin when `path` is absent or `-`.
pub fn json_input(path: Option<&str>) -> Result<serde_json::Value, String> {
    let (text, source) = text_input(path)?;
    serde_json::from_str(&text).map_err(|e| format!("{source} is not valid JSON: {e}"))
}

/// The text of `path`, or of stdin when `path` is absent or `-`, with its name for errors.
pub fn text_input(path: Option<&str>) -> Result<(String, String), String> {
    Ok(match path {
        None | Some("-") => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(|e| format!("cannot read stdin: {e}"))?;
            (text, "stdin".to_string())
        }
        Some(p) => (
            std::fs::read_to_string(p).map_err(|e| format!("cannot read {p}: {e}"))?,
            p.to_string(),
        ),
    })
}

/// `TEST-007` is a task id; `TEST` (or `TEST-`) is a prefix for the daemon to number.
pub fn is_task_id(text: &str) -> bool {
    text.rsplit_once('-').is_some_and(|(head, digits)| {
        !head.is_empty() && !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_take_units_and_default_to_seconds() {
        assert_eq!(duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(duration("2").unwrap(), Duration::from_secs(2));
        assert_eq!(duration("1.5s").unwrap(), Duration::from_millis(1500));
        assert_eq!(duration("3m").unwrap(), Duration::from_secs(180));
        assert!(duration("soon").is_err());
        assert!(duration("3d").is_err());
    }

    #[test]
    fn ids_have_a_numeric_tail_and_prefixes_do_not() {
        assert!(is_task_id("TEST-007"));
        assert!(!is_task_id("TEST"));
        assert!(!is_task_id("TEST-"));
        assert!(!is_task_id("-12"));
    }
}

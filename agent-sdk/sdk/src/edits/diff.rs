//! What a fix changed, as a unified diff (`--- a/path` / `+++ b/path`, three lines of context)
//! with secrets scrubbed, capped with a marker so one message stays small.

use crate::runners::scrub::scrub;
use similar::TextDiff;

/// Most bytes of diff in one message or task result.
pub const MAX_DIFF_BYTES: usize = 16 * 1024;

/// The unified diff of one file; `None` means it did not exist (before) or no longer does
/// (after). Empty when nothing changed.
pub fn unified(rel: &str, before: Option<&str>, after: Option<&str>) -> String {
    if before == after {
        return String::new();
    }
    let old = if before.is_some() {
        format!("a/{rel}")
    } else {
        "/dev/null".to_string()
    };
    let new = if after.is_some() {
        format!("b/{rel}")
    } else {
        "/dev/null".to_string()
    };
    TextDiff::from_lines(before.unwrap_or(""), after.unwrap_or(""))
        .unified_diff()
        .context_radius(3)
        .header(&old, &new)
        .to_string()
}

/// `diff` scrubbed of secrets, cut at a line end before `max` bytes with a marker saying how
/// much was left out.
pub fn scrubbed_and_capped(diff: &str, max: usize) -> String {
    let clean = scrub(diff);
    if clean.len() <= max {
        return clean.into_owned();
    }
    let mut cut = max;
    while !clean.is_char_boundary(cut) {
        cut -= 1;
    }
    let cut = clean[..cut].rfind('\n').map_or(cut, |i| i + 1);
    format!(
        "{}… [diff truncated: {} more bytes]\n",
        &clean[..cut],
        clean.len() - cut
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_reads_as_a_unified_diff() {
        let d = unified("pkg/a.py", Some("x = 1\ny = 2\n"), Some("x = 1\ny = 3\n"));
        assert!(d.starts_with("--- a/pkg/a.py\n+++ b/pkg/a.py\n@@"), "{d}");
        assert!(d.contains("-y = 2\n+y = 3\n"), "{d}");
        assert!(unified("a", Some("same"), Some("same")).is_empty());
        assert!(unified("new.py", None, Some("n\n")).starts_with("--- /dev/null\n+++ b/new.py"));
    }

    #[test]
    fn diffs_are_scrubbed_and_capped_with_a_marker() {
        let key = "sk-live-4f9a2c81d7e3b6a05f1e9c2d";
        let d = unified("a.py", Some("k = 1\n"), Some(&format!("k = '{key}'\n")));
        assert!(!scrubbed_and_capped(&d, MAX_DIFF_BYTES).contains(key));
        let long: String = (0..1000).map(|i| format!("+line {i}\n")).collect();
        let capped = scrubbed_and_capped(&long, 100);
        assert!(capped.len() < 160, "{}", capped.len());
        assert!(capped.ends_with("more bytes]\n"), "{capped}");
        assert!(capped.lines().next().unwrap().starts_with("+line"));
    }
}

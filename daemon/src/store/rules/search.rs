//! Message search, the same on every backend: the text becomes words (letters and digits; the
//! rest separates them, as both backends' tokenizers do), and a message matches when every word
//! begins one of the words of its summary or `data` — "TEST-00" finds `TEST-001`. Each backend
//! turns the words into its own query (SQLite FTS5, PostgreSQL `tsquery`); the words hold only
//! letters and digits, so no query syntax can come from the user.
//!
//! Both indexes are shared by every team, so each word is indexed under its team's mark
//! ([`team_mark`]): a team's words are one contiguous run of the index's sorted terms, and a
//! prefix query ("a"*) walks only its own team's terms and documents — a small team's search
//! costs in proportion to its own messages however large another team's are.

use super::super::error::{StoreError, StoreResult};

/// Words in one search at most.
pub const MAX_WORDS: usize = 16;
/// Characters in one word at most (longer words match nothing a tokenizer keeps whole).
pub const MAX_WORD_CHARS: usize = 64;

/// The words of a search text, lowercased; empty when the text has none.
pub fn search_words(text: &str) -> StoreResult<Vec<String>> {
    let words: Vec<String> = text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    if words.len() > MAX_WORDS {
        return Err(StoreError::invalid(
            "q",
            format!("`q` has {} words; at most {MAX_WORDS}", words.len()),
        ));
    }
    if let Some(long) = words.iter().find(|w| w.chars().count() > MAX_WORD_CHARS) {
        return Err(StoreError::invalid(
            "q",
            format!(
                "`q` has a word of {} characters; at most {MAX_WORD_CHARS}",
                long.chars().count()
            ),
        ));
    }
    Ok(words)
}

/// What every indexed word of a team begins with: `t`, the number of hex digits of the team's
/// id, and those digits — `t22a` for team 42. The length digit keeps marks from running into the
/// word (team 0x10 + "0ab" and team 0x100 + "ab" differ). PostgreSQL builds the same mark in
/// SQL (`huddle_team_words`, migration 0013); ids stay below 2^60, one hex digit of length.
pub fn team_mark(team_id: i64) -> String {
    let hex = format!("{team_id:x}");
    format!("t{:x}{hex}", hex.len())
}

/// A text as the index holds it for a team: its words, each under the team's mark.
pub fn team_words(team_id: i64, text: &str, out: &mut String) {
    let mark = team_mark(team_id);
    for word in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(&mark);
        out.push_str(&word.to_lowercase());
    }
}

/// The FTS5 query: every word as a quoted prefix under the team's mark.
pub fn fts5_query(team_id: i64, words: &[String]) -> String {
    let mark = team_mark(team_id);
    words
        .iter()
        .map(|w| format!("\"{mark}{w}\"*"))
        .collect::<Vec<_>>()
        .join(" AND ")
}

/// The PostgreSQL `to_tsquery('simple', …)` text: every word as a prefix under the team's mark.
pub fn tsquery(team_id: i64, words: &[String]) -> String {
    let mark = team_mark(team_id);
    words
        .iter()
        .map(|w| format!("{mark}{w}:*"))
        .collect::<Vec<_>>()
        .join(" & ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_letters_and_digits_lowercased() {
        assert_eq!(
            search_words("TEST-001 failed: \"average\" (x*) OR 1=1").unwrap(),
            ["test", "001", "failed", "average", "x", "or", "1", "1"]
        );
        assert!(search_words("  -- *** ").unwrap().is_empty());
        assert_eq!(search_words("Écart Ünïcode").unwrap(), ["écart", "ünïcode"]);
    }

    #[test]
    fn queries_carry_no_user_syntax() {
        let words = search_words("NEAR(a b) \"x\" OR y*").unwrap();
        assert_eq!(
            fts5_query(1, &words),
            "\"t11near\"* AND \"t11a\"* AND \"t11b\"* AND \"t11x\"* AND \"t11or\"* AND \"t11y\"*"
        );
        assert_eq!(
            tsquery(1, &words),
            "t11near:* & t11a:* & t11b:* & t11x:* & t11or:* & t11y:*"
        );
    }

    #[test]
    fn a_teams_words_carry_a_mark_no_other_team_shares() {
        assert_eq!(team_mark(42), "t22a");
        assert_eq!(team_mark(0x10), "t210");
        let mut text = String::new();
        team_words(42, "TEST-001 failed: Écart", &mut text);
        assert_eq!(text, "t22atest t22a001 t22afailed t22aécart");
        // Team 0x10's word "0ab" and team 0x100's word "ab" are different terms.
        let (mut a, mut b) = (String::new(), String::new());
        team_words(0x10, "0ab", &mut a);
        team_words(0x100, "ab", &mut b);
        assert_ne!(a, b);
        // No team's mark is a prefix of another's with a word after it.
        assert!(!format!("{}x", team_mark(0x1)).starts_with(&team_mark(0x12)));
    }

    #[test]
    fn too_many_or_too_long_words_are_refused() {
        assert!(search_words(&"w ".repeat(MAX_WORDS + 1)).is_err());
        assert!(search_words(&"x".repeat(MAX_WORD_CHARS + 1)).is_err());
        assert_eq!(
            search_words(&"w ".repeat(MAX_WORDS)).unwrap().len(),
            MAX_WORDS
        );
    }
}

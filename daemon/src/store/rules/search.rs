//! Message search, the same on every backend: the text becomes words (letters and digits; the
//! rest separates them, as both backends' tokenizers do), and a message matches when every word
//! begins one of the words of its summary or `data` — "TEST-00" finds `TEST-001`. Each backend
//! turns the words into its own query (SQLite FTS5, PostgreSQL `tsquery`); the words hold only
//! letters and digits, so no query syntax can come from the user.

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

/// The FTS5 query: every word as a quoted prefix.
pub fn fts5_query(words: &[String]) -> String {
    words
        .iter()
        .map(|w| format!("\"{w}\"*"))
        .collect::<Vec<_>>()
        .join(" AND ")
}

/// The PostgreSQL `to_tsquery('simple', …)` text: every word as a prefix.
pub fn tsquery(words: &[String]) -> String {
    words
        .iter()
        .map(|w| format!("{w}:*"))
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
            fts5_query(&words),
            "\"near\"* AND \"a\"* AND \"b\"* AND \"x\"* AND \"or\"* AND \"y\"*"
        );
        assert_eq!(tsquery(&words), "near:* & a:* & b:* & x:* & or:* & y:*");
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

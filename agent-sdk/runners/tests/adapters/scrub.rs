//! The scrubber and the truncation helper: secrets never leave in output sent to a model or
//! posted to the bus, and long output is cut to its last lines with a note.

use huddle_runners::scrub::{for_message, scrub, strip_ansi, tail_lines, REDACTED};

fn assert_scrubbed(input: &str, secret: &str) {
    let out = scrub(input);
    assert!(!out.contains(secret), "{secret:?} survived: {out}");
    assert!(
        out.contains(REDACTED) || out.contains("[REDACTED PRIVATE KEY]"),
        "{out}"
    );
}

#[test]
fn api_keys_and_tokens_are_removed() {
    let cases = [
        (
            "OPENAI_API_KEY missing? got sk-proj-abcdefghijklmnop1234567890",
            "sk-proj-abcdefghijklmnop1234567890",
        ),
        (
            "key sk-ant-api03-AAAABBBBCCCCDDDDEEEE",
            "sk-ant-api03-AAAABBBBCCCCDDDDEEEE",
        ),
        (
            "remote: ghp_abcdefghijklmnopqrstuvwxyz0123456789",
            "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
        ),
        (
            "token github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
            "github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
        ),
        ("aws AKIAIOSFODNN7EXAMPLE used", "AKIAIOSFODNN7EXAMPLE"),
        (
            "Authorization: Bearer abc.def-ghi_jkl~mno",
            "abc.def-ghi_jkl~mno",
        ),
        (
            "slack xoxb-1234567890-abcdefghij",
            "xoxb-1234567890-abcdefghij",
        ),
        (
            "google AIzaSyA-1234567890abcdefghijklmnopqrstu",
            "AIzaSyA-1234567890abcdefghijklmnopqrstu",
        ),
    ];
    for (input, secret) in cases {
        assert_scrubbed(input, secret);
    }
}

#[test]
fn jwts_and_private_keys_are_removed() {
    let jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U";
    assert_scrubbed(&format!("cookie={jwt}; path=/"), jwt);
    let key =
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\nabc\n-----END RSA PRIVATE KEY-----";
    let text = format!("before\n{key}\nafter");
    let out = scrub(&text);
    assert_eq!(out, "before\n[REDACTED PRIVATE KEY]\nafter");
}

#[test]
fn assignments_keep_the_name_and_lose_the_value() {
    assert_eq!(
        scrub("GITHUB_TOKEN=abc123secret"),
        "GITHUB_TOKEN=[REDACTED]"
    );
    assert_eq!(
        scrub("export DB_SECRET='hunter2'"),
        "export DB_SECRET='[REDACTED]'"
    );
    assert_eq!(
        scrub("AWS_SECRET_ACCESS_KEY: wJalrXUtnFEMI/K7MDENG"),
        "AWS_SECRET_ACCESS_KEY: [REDACTED]"
    );
    assert_eq!(scrub("STRIPE_KEY=sk_live_x"), "STRIPE_KEY=[REDACTED]");
    assert_eq!(
        scrub(r#"{"api_key": "abcdef123456"}"#),
        r#"{"api_key": "[REDACTED]"}"#
    );
    assert_eq!(
        scrub("password = 'correct horse'"),
        "password = '[REDACTED]'"
    );
}

#[test]
fn ordinary_test_output_is_untouched() {
    let text =
        "E   KeyError: 'user'\nassert sort_key(x) == 3\nexpected 6 to be 7\nMONKEY=1 token count 5";
    assert_eq!(scrub(text), text);
    assert!(
        matches!(scrub("plain"), std::borrow::Cow::Borrowed(_)),
        "no copy when clean"
    );
}

#[test]
fn tail_keeps_the_last_lines_and_says_how_many_were_dropped() {
    let text: String = (1..=10).map(|i| format!("line {i}\n")).collect();
    assert_eq!(
        tail_lines(&text, 3),
        "[… 7 earlier lines omitted]\nline 8\nline 9\nline 10"
    );
    assert_eq!(tail_lines(&text, 10), text.trim_end());
    assert_eq!(tail_lines("", 5), "");
}

#[test]
fn messages_are_stripped_scrubbed_and_truncated() {
    let raw = "\u{1b}[31mFAIL\u{1b}[0m x\nAPI_TOKEN=s3cr3t\nlast";
    assert_eq!(strip_ansi(raw), "FAIL x\nAPI_TOKEN=s3cr3t\nlast");
    assert_eq!(
        for_message(raw, 2),
        "[… 1 earlier lines omitted]\nAPI_TOKEN=[REDACTED]\nlast"
    );
}

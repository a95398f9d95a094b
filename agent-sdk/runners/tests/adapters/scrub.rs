//! The scrubber on text: every kind of secret becomes its `[REDACTED:<kind>]` marker, also
//! right after an escape sequence; ordinary words and hashes are left alone; and the
//! truncation helper for messages.

use crate::secrets::{pem, SECRETS};
use huddle_runners::scrub::{
    for_message, marker, might_contain_secret, scrub, strip_ansi, tail_lines, REDACTED_PREFIX,
};

#[test]
fn every_kind_of_secret_becomes_its_marker() {
    for (kind, secret, text) in SECRETS {
        let out = scrub(text);
        assert!(!out.contains(secret), "{secret:?} survived: {out}");
        assert!(
            out.contains(&marker(kind)),
            "{text:?} → {out:?}, no {kind} marker"
        );
        assert!(might_contain_secret(text), "the prefilter missed {text:?}");
    }
}

#[test]
fn markers_keep_what_tells_the_reader_what_was_there() {
    let cases = [
        (
            "GITHUB_TOKEN=abc123secret",
            "GITHUB_TOKEN=[REDACTED:secret]",
        ),
        (
            "export DB_SECRET='hunter2'",
            "export DB_SECRET='[REDACTED:secret]'",
        ),
        (
            "AWS_SECRET_ACCESS_KEY: wJalrXUtnFEMI/K7MDENG",
            "AWS_SECRET_ACCESS_KEY: [REDACTED:aws-secret-key]",
        ),
        ("STRIPE_KEY=sk_live_x", "STRIPE_KEY=[REDACTED:secret]"),
        (
            r#"{"api_key": "abcdef123456"}"#,
            r#"{"api_key": "[REDACTED:secret]"}"#,
        ),
        (
            "password = 'correct horse'",
            "password = '[REDACTED:secret]'",
        ),
        ("{'token': 'abc'}", "{'token': '[REDACTED:secret]'}"),
        (
            "curl -H 'Authorization: Bearer abc.def-ghi_jkl~mno'",
            "curl -H 'Authorization: Bearer [REDACTED:bearer-token]'",
        ),
        (
            "TOKEN=sk-live-4f9a2c81d7e3b6a05f1e9c2d",
            "TOKEN=[REDACTED:api-key]",
        ),
        ("?token=abc123&page=2", "?token=[REDACTED:secret]&page=2"),
    ];
    for (input, expected) in cases {
        assert_eq!(scrub(input), expected, "{input}");
    }
}

#[test]
fn pem_blocks_go_whole_even_when_cut_or_escaped() {
    let text = format!("before\n{}\nafter", pem());
    assert_eq!(scrub(&text), "before\n[REDACTED:private-key]\nafter");
    // A Python repr of the key: the line breaks are `\n` escapes.
    let repr = format!("E   assert '{}' == ''", pem().replace('\n', "\\n"));
    assert_eq!(scrub(&repr), "E   assert '[REDACTED:private-key]' == ''");
    // Cut before its END line: every base64 line after BEGIN goes.
    let cut = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nAAAABG5vbmU=\n";
    let out = scrub(cut);
    assert!(
        !out.contains("b3BlbnNzaC1rZXktdjEAAAAA") && !out.contains("AAAABG5vbmU="),
        "{out}"
    );
}

#[test]
fn an_escape_sequence_before_a_secret_counts_as_a_boundary() {
    let token_shaped = |kind: &str| !["secret", "bearer-token", "aws-secret-key"].contains(&kind);
    for (_, secret, _) in SECRETS.iter().filter(|(k, _, _)| token_shaped(k)) {
        for before in [
            "\\n",
            "\\t",
            "\\r",
            "\\u001b",
            "\u{1b}[31m",
            "\\x1b[0m",
            "'",
            "\"",
        ] {
            let text = format!("x{before}{secret} y");
            let out = scrub(&text);
            assert!(!out.contains(secret), "{text:?} → {out:?}");
        }
    }
    // And after an escape the assignments too.
    assert_eq!(
        scrub("a\\npassword=abc d"),
        "a\\npassword=[REDACTED:secret] d"
    );
    assert_eq!(
        scrub("a\\nAPI_TOKEN=abc\\nnext"),
        "a\\nAPI_TOKEN=[REDACTED:secret]\\nnext"
    );
    assert_eq!(
        scrub(r#"{\"password\": \"p4ss\"}"#),
        r#"{\"password\": \"[REDACTED:secret]\"}"#
    );
}

#[test]
fn ordinary_output_words_and_hashes_are_untouched() {
    let text = [
        "E   KeyError: 'user'",
        "assert sort_key(x) == 3",
        "expected 6 to be 7",
        "MONKEY=1 token count 5 PATH=/usr/bin KEYBOARD=us",
        "assert token == 'abc'",
        "test_risk-assessment-of-the-whole-portfolio passed",
        "task-0123456789abcdef0123 done",
        "commit 4b825dc642cb6eb9a060e54bf8d69288fbee4904",
        "sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        "uuid 123e4567-e89b-12d3-a456-426614174000",
        "the bearer of bad news; tokens: many",
        "def test_password_is_hashed(): pass",
        "AKIA is not a key on its own; ghp_short is not a token",
        "package hud_core and desk-lamp-controller-module",
    ]
    .join("\n");
    assert_eq!(scrub(&text), text);
    assert!(
        matches!(scrub("plain"), std::borrow::Cow::Borrowed(_)),
        "no copy when clean"
    );
}

#[test]
fn scrubbing_twice_changes_nothing_more() {
    let all: Vec<&str> = SECRETS.iter().map(|(_, _, t)| *t).collect();
    let text = all.join("\n") + "\n" + &pem();
    let once = scrub(&text).into_owned();
    assert_eq!(scrub(&once), once);
    assert!(once.contains(REDACTED_PREFIX));
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
        "[… 1 earlier lines omitted]\nAPI_TOKEN=[REDACTED:secret]\nlast"
    );
}

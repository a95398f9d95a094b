//! A corpus of fake secrets, one of each kind huddle scrubs, for the scrubber's tests and for
//! the end-to-end tests that make a real runner print them (shared with huddle-cli's tests).
//! Every value is made up; each has the shape of the real thing so the patterns must match it.

use std::path::Path;

/// (kind in the marker, the secret, the text it appears in). The secret is what must not
/// survive; the text puts it where tests print it.
pub const SECRETS: &[(&str, &str, &str)] = &[
    (
        "api-key",
        "sk-live-4f9a2c81d7e3b6a05f1e9c2d",
        "OPENAI_API_KEY is sk-live-4f9a2c81d7e3b6a05f1e9c2d",
    ),
    (
        "api-key",
        "sk-proj-Q2x7Lm9PzR4tV8wK1nB5cJ3h",
        "key=sk-proj-Q2x7Lm9PzR4tV8wK1nB5cJ3h",
    ),
    (
        "github-token",
        "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
        "remote: ghp_16C7e42F292c6912E7710c838347Ae178B4a",
    ),
    (
        "github-token",
        "gho_Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa",
        "oauth gho_Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa",
    ),
    (
        "github-token",
        "ghs_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
        "app (ghs_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789)",
    ),
    (
        "github-token",
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuv",
        "pat github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuv",
    ),
    (
        "slack-token",
        "xoxb-2048-1024-Zk3mQ9rT7vW2yX5a",
        "slack xoxb-2048-1024-Zk3mQ9rT7vW2yX5a",
    ),
    (
        "slack-token",
        "xoxp-4096-2048-Ab1Cd2Ef3Gh4Ij5K",
        "user xoxp-4096-2048-Ab1Cd2Ef3Gh4Ij5K",
    ),
    (
        "aws-access-key-id",
        "AKIAIOSFODNN7EXAMPLE",
        "aws id AKIAIOSFODNN7EXAMPLE used",
    ),
    (
        "aws-access-key-id",
        "ASIAY34FZKBOKMUTVV7A",
        "session ASIAY34FZKBOKMUTVV7A",
    ),
    (
        "aws-secret-key",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    ),
    (
        "bearer-token",
        "Zm9vYmFyLWJlYXJlci10b2tlbi0xMjM0",
        "Authorization: Bearer Zm9vYmFyLWJlYXJlci10b2tlbi0xMjM0",
    ),
    (
        "huddle-token",
        "hud_3f1c9a7e5b2d4f6a8c0e1b3d5f7a9c2e4b6d8f0a1c3e5b7d9f2a4c6e8b0d1f3a",
        "HUDDLE token hud_3f1c9a7e5b2d4f6a8c0e1b3d5f7a9c2e4b6d8f0a1c3e5b7d9f2a4c6e8b0d1f3a",
    ),
    (
        "jwt",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
        "session=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    ),
    (
        "secret",
        "Tr0ub4dor-horse-9",
        "login with password=Tr0ub4dor-horse-9 failed",
    ),
    ("secret", "hunter2hunter2", "passwd: hunter2hunter2"),
    ("secret", "s3cr3t-v4lue-42", "secret=s3cr3t-v4lue-42"),
    ("secret", "tok9a8b7c6d5e4f", "GET /api?token=tok9a8b7c6d5e4f&page=2"),
    (
        "secret",
        "db-pass-Q9w8E7r6",
        "DATABASE_PASSWORD='db-pass-Q9w8E7r6'",
    ),
    (
        "secret",
        "json-pw-7Y6t5R4e",
        r#"{"password": "json-pw-7Y6t5R4e"}"#,
    ),
];

/// The lines of a PEM private key: each body line is a secret of its own.
pub const PEM_LINES: &[&str] = &[
    "-----BEGIN RSA PRIVATE KEY-----",
    "MIIEowIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM2e9xk8pQ1vZrYw0c4J6hfs2nq5N7",
    "b1XW9ePlUaD0sTgQ3vL8kR2mN6pB4cY7wE1tZ5xH9jF0dK3sA6gU8iO2lV4nM1qP",
    "-----END RSA PRIVATE KEY-----",
];

/// The PEM key as one text.
pub fn pem() -> String {
    PEM_LINES.join("\n")
}

/// Everything that must never be found: each secret and the PEM body lines.
pub fn forbidden() -> Vec<&'static str> {
    SECRETS
        .iter()
        .map(|(_, s, _)| *s)
        .chain(PEM_LINES[1..3].iter().copied())
        .collect()
}

/// The secrets `text` still holds.
pub fn leaks(text: &str) -> Vec<&'static str> {
    forbidden()
        .into_iter()
        .filter(|s| text.contains(s))
        .collect()
}

/// Every file under `dir` with the secrets it holds; empty when the directory is clean.
pub fn leaks_in_dir(dir: &Path) -> Vec<(String, Vec<&'static str>)> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("read run dir").flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let text =
                String::from_utf8_lossy(&std::fs::read(&path).expect("read file")).into_owned();
            let l = leaks(&text);
            if !l.is_empty() {
                found.push((path.display().to_string(), l));
            }
        }
    }
    found
}

/// A failure message holding every secret, each right after an escape-producing character
/// (a newline or a tab), so JSON, XML and Python reprs of it put `\n`, `\t`, `&#10;` just
/// before the secret.
pub fn failure_message() -> String {
    let mut lines: Vec<String> = SECRETS.iter().map(|(_, _, t)| t.to_string()).collect();
    lines.push(pem());
    lines.push(format!("\t{}", SECRETS[0].1));
    lines.join("\n")
}

/// A Python string literal for `text` (escapes `\\`, `"`, newlines and tabs).
pub fn python_literal(text: &str) -> String {
    serde_json::to_string(text).expect("strings encode")
}

/// A pytest project whose tests print and fail with every secret: in an assertion message
/// (with the test's source, where the secrets stand after `\n` escapes in a literal), in
/// captured stdout, in a parametrized test id, and on the real stderr at the end of the
/// session. pytest itself reports it as `2 failed, 1 passed`.
pub fn write_leaky_pytest_project(dir: &Path) {
    let message = python_literal(&failure_message());
    std::fs::create_dir_all(dir.join("tests")).expect("create tests/");
    std::fs::write(dir.join("pytest.ini"), "[pytest]\n").expect("write pytest.ini");
    std::fs::write(
        dir.join("conftest.py"),
        format!(
            "import sys\n\n\ndef pytest_sessionfinish(session, exitstatus):\n    \
             sys.__stderr__.write({message} + \"\\n\")\n"
        ),
    )
    .expect("write conftest.py");
    std::fs::write(
        dir.join("tests/test_leak.py"),
        format!(
            "import pytest\n\n\n\
             def test_leaks_every_secret():\n    \
                 message = {message}\n    \
                 print(message)\n    \
                 assert message == \"\", message\n\n\n\
             @pytest.mark.parametrize(\"n\", [1], ids=[\"{api_key}\"])\n\
             def test_id(n):\n    assert n == 2\n\n\n\
             @pytest.mark.parametrize(\"n\", [1], ids=[\"{aws_id}\"])\n\
             def test_passes(n):\n    assert n == 1\n",
            api_key = SECRETS[0].1,
            aws_id = SECRETS[8].1,
        ),
    )
    .expect("write tests/test_leak.py");
}

/// A jest test file (in a copy of the jest fixture) that logs and throws every secret and
/// has a secret in a test name; jest reports it as 2 failed.
pub fn write_leaky_jest_test(project: &Path) -> &'static str {
    let message = python_literal(&failure_message());
    let file = "src/leak.test.js";
    std::fs::write(
        project.join(file),
        format!(
            "const message = {message};\n\n\
             test('leaks every secret', () => {{\n  \
                 console.error(message);\n  \
                 expect(message).toBe('');\n\
             }});\n\n\
             test('id {github}', () => {{\n  throw new Error(message);\n}});\n",
            github = SECRETS[2].1,
        ),
    )
    .expect("write the leaking jest test");
    file
}

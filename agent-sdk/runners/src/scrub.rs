//! Making runner output safe to pass on: [`scrub`] removes secrets from anything a later step
//! sends to a model or posts to the bus; [`tail_lines`] keeps the end of long output for a
//! message (the full output stays in the run directory); [`strip_ansi`] drops colour codes.

use regex::Regex;
use std::borrow::Cow;
use std::sync::OnceLock;

/// What a secret is replaced with.
pub const REDACTED: &str = "[REDACTED]";

struct Rule {
    pattern: Regex,
    /// The replacement; `$name` refers to named groups kept from the match.
    replacement: &'static str,
}

fn rules() -> &'static [Rule] {
    static RULES: OnceLock<Vec<Rule>> = OnceLock::new();
    RULES.get_or_init(|| {
        let rule = |pattern: &str, replacement: &'static str| Rule {
            pattern: Regex::new(pattern).expect("scrub pattern compiles"),
            replacement,
        };
        vec![
            // PEM private keys, whole block (RSA, EC, OPENSSH, ENCRYPTED, plain PKCS#8).
            rule(
                r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END[A-Z0-9 ]*PRIVATE KEY-----|\z)",
                "[REDACTED PRIVATE KEY]",
            ),
            // `Authorization: Bearer …`, `bearer …`.
            rule(r"(?i)(?P<k>\bbearer\s+)[A-Za-z0-9._~+/=-]{8,}", "${k}[REDACTED]"),
            // JSON Web Tokens: base64url header and payload starting with `{"`.
            rule(r"\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*", REDACTED),
            // OpenAI / Anthropic style keys: sk-…, sk-proj-…, sk-ant-….
            rule(r"\bsk-[A-Za-z0-9_-]{16,}", REDACTED),
            // GitHub tokens: ghp_, gho_, ghu_, ghs_, ghr_ and fine-grained github_pat_.
            rule(r"\bgh[pousr]_[A-Za-z0-9]{20,}|\bgithub_pat_[A-Za-z0-9_]{20,}", REDACTED),
            // GitLab, Slack, Google API keys.
            rule(r"\bglpat-[A-Za-z0-9_-]{20,}", REDACTED),
            rule(r"\bxox[abposr]-[A-Za-z0-9-]{10,}", REDACTED),
            rule(r"\bAIza[0-9A-Za-z_-]{35}", REDACTED),
            // AWS access key ids.
            rule(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}\b", REDACTED),
            // Environment-style assignments: NAME_TOKEN=value, NAME_SECRET: value,
            // AWS_SECRET_ACCESS_KEY=…; the name stays so the reader knows what was there.
            rule(
                r#"\b(?P<k>(?:[A-Z][A-Z0-9_]*_)?(?:TOKEN|SECRET|KEY|PASSWORD|PASSWD|PAT|CREDENTIALS?))(?P<s>\s*[=:]\s*)(?P<q>["']?)[^\s"']+"#,
                "${k}${s}${q}[REDACTED]",
            ),
            // Config-style quoted values: "api_key": "…", password = '…', token: "…".
            rule(
                r#"(?i)(?P<k>["']?\b(?:api[_-]?key|secret|client[_-]?secret|token|access[_-]?token|auth[_-]?token|password|passwd)["']?\s*[:=]\s*)(?P<q>["'])[^"'\n]{6,}["']"#,
                "${k}${q}[REDACTED]${q}",
            ),
        ]
    })
}

/// Replaces secrets in `text` with `[REDACTED]`: API keys (`sk-…`, `ghp_…`, `github_pat_…`,
/// `glpat-…`, `xox…-`, `AIza…`, AWS key ids), `Bearer …` credentials, JWTs, PEM private key
/// blocks and the values of `*_TOKEN=`, `*_SECRET=`, `*_KEY=` and `*PASSWORD=` assignments.
/// Returns the input untouched (borrowed) when there is nothing to remove.
pub fn scrub(text: &str) -> Cow<'_, str> {
    let mut out = Cow::Borrowed(text);
    for rule in rules() {
        if rule.pattern.is_match(&out) {
            out = Cow::Owned(
                rule.pattern
                    .replace_all(&out, rule.replacement)
                    .into_owned(),
            );
        }
    }
    out
}

/// Removes ANSI escape sequences (colours, cursor moves) that runners put in their output.
pub fn strip_ansi(text: &str) -> Cow<'_, str> {
    static ANSI: OnceLock<Regex> = OnceLock::new();
    let re = ANSI.get_or_init(|| {
        Regex::new(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
            .expect("ansi pattern compiles")
    });
    re.replace_all(text, "")
}

/// Keeps the last `max_lines` lines of `text`; when lines were dropped, a first line says how
/// many, so a reader knows the message is not the whole output.
pub fn tail_lines(text: &str, max_lines: usize) -> String {
    let trimmed = text.trim_end_matches(['\n', '\r']);
    let total = trimmed.lines().count();
    if total <= max_lines {
        return trimmed.to_string();
    }
    let dropped = total - max_lines;
    let kept: Vec<&str> = trimmed.lines().skip(dropped).collect();
    format!("[… {dropped} earlier lines omitted]\n{}", kept.join("\n"))
}

/// What a message to a model or the bus should carry: colour codes stripped, secrets
/// scrubbed, the last `max_lines` lines kept.
pub fn for_message(text: &str, max_lines: usize) -> String {
    tail_lines(&scrub(&strip_ansi(text)), max_lines)
}

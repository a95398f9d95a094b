//! The secret patterns and the cheap test that says whether any of them could be present.
//!
//! Every rule has a group `v`, the secret, which becomes `[REDACTED:<kind>]`; the rest of the
//! match (a boundary, `NAME=`, an opening quote) stays. A token must start at a word boundary
//! so ordinary words (`risk-assessment-…`) are left alone, but a boundary also counts after an
//! escape sequence (`\n`, `\t`, `\u00XX`, an ANSI colour code), because test output is full of
//! reprs such as `'…\nsk-live-…'` where the character before the key is the `n` of `\n`.

use regex::Regex;
use std::sync::OnceLock;

/// What every marker starts with: `[REDACTED:api-key]`, `[REDACTED:private-key]`….
pub const REDACTED_PREFIX: &str = "[REDACTED:";

/// A word boundary before a token, or an escape sequence standing in for one; kept.
const B: &str =
    r"(?P<pre>\A|[^A-Za-z0-9_]|\\[nrtfbv0]|\\u00[0-9a-fA-F]{2}|\\x1b\[[0-9;]*m|\x1b\[[0-9;]*m)";

/// The value of an unquoted assignment: up to whitespace, a quote, a separator or a closing
/// bracket; a backslash escape that ends a line or a string (`\n`, `\"`) ends it too. The
/// first character is not `=`, so `token == x` is a comparison, not an assignment.
const VALUE: &str = r#"(?:[^\s"'\\=,;&)\]}>]|\\[^\snrt"'\\])(?:[^\s"'\\,;&)\]}>]|\\[^\snrt"'\\])*"#;

/// Names whose value is a secret, in any case: `password`, `db_password`, `client-secret`,
/// `api_key`, `auth_token`, `credentials`….
const SECRET_NAMES: &str = r"(?:password|passwd|secret|token|api[_-]?key|apikey|access[_-]?key|private[_-]?key|credentials?)";

/// Environment-variable names whose value is a secret: `GITHUB_TOKEN`, `AWS_SECRET_ACCESS_KEY`,
/// `SECRET_KEY_BASE`, `DB_PASSWORD`, `NPM_PAT` (not `MONKEY`, `PATH`, `KEYBOARD`).
const ENV_NAMES: &str = r"(?:[A-Z][A-Z0-9]*_)*(?:TOKEN|SECRET|KEY|PASSWORD|PASSWD|PAT|CREDENTIALS?|APIKEY)S?(?:_[A-Z0-9]+)*";

/// One pattern and the kind its marker names.
pub(super) struct Rule {
    pub kind: &'static str,
    pub pattern: Regex,
}

fn rule(kind: &'static str, pattern: &str) -> Rule {
    Rule {
        kind,
        pattern: Regex::new(pattern).expect("scrub pattern compiles"),
    }
}

/// The rules, most specific first, so a key inside `TOKEN=sk-…` is named `api-key`.
pub(super) fn rules() -> &'static [Rule] {
    static RULES: OnceLock<Vec<Rule>> = OnceLock::new();
    RULES.get_or_init(|| {
        vec![
            // PEM private keys (RSA, EC, DSA, OPENSSH, ENCRYPTED, PKCS#8), through the END
            // line; a block cut before its END takes every base64-looking line after BEGIN.
            rule(
                "private-key",
                r"(?P<v>-----BEGIN[A-Z0-9 ]*PRIVATE KEY-----(?:[\s\S]*?-----END[A-Z0-9 ]*PRIVATE KEY-----|(?:[A-Za-z0-9+/=:,. \t\r\n-]|\\[nrt])*))",
            ),
            // JSON Web Tokens: base64url header and payload, both starting with `{"`.
            rule(
                "jwt",
                &format!(r"{B}(?P<v>eyJ[A-Za-z0-9_-]{{5,}}\.eyJ[A-Za-z0-9_-]{{5,}}\.[A-Za-z0-9_-]*)"),
            ),
            // `Authorization: Bearer …`.
            rule(
                "bearer-token",
                &format!(r"(?i){B}bearer\s+(?P<v>[A-Za-z0-9._~+/=-]{{8,}})"),
            ),
            // OpenAI / Anthropic style keys (sk-…, sk-proj-…, sk-ant-…, sk-live-…) and Stripe's
            // sk_live_… / rk_test_….
            rule(
                "api-key",
                &format!(r"{B}(?P<v>sk-[A-Za-z0-9_-]{{16,}}|[sr]k_(?:live|test)_[A-Za-z0-9]{{10,}})"),
            ),
            // GitHub: ghp_, gho_, ghu_, ghs_, ghr_ and fine-grained github_pat_.
            rule(
                "github-token",
                &format!(r"{B}(?P<v>gh[pousr]_[A-Za-z0-9]{{20,}}|github_pat_[A-Za-z0-9_]{{20,}})"),
            ),
            rule("gitlab-token", &format!(r"{B}(?P<v>glpat-[A-Za-z0-9_-]{{20,}})")),
            // Slack: xoxb-, xoxp-, xoxa-, xoxs-, xoxe-… and app-level xapp-.
            rule(
                "slack-token",
                &format!(r"{B}(?P<v>xox[a-z]-[A-Za-z0-9-]{{10,}}|xapp-[0-9]-[A-Za-z0-9-]{{10,}})"),
            ),
            rule("google-api-key", &format!(r"{B}(?P<v>AIza[0-9A-Za-z_-]{{35}})")),
            rule(
                "aws-access-key-id",
                &format!(r"{B}(?P<v>(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA|ABIA|ACCA)[0-9A-Z]{{16}})\b"),
            ),
            // huddle's own agent and admin tokens.
            rule("huddle-token", &format!(r"{B}(?P<v>hud_[A-Za-z0-9]{{16,}})")),
            // ~/.aws/credentials and its environment variable, in any case.
            rule(
                "aws-secret-key",
                &format!(r#"(?i){B}aws_?secret_?access_?key(?:\\?["'])?\s*[=:]\s*(?:\\?["'])?(?P<v>[A-Za-z0-9/+=]{{20,}})"#),
            ),
            // NAME_TOKEN=value, DB_PASSWORD: 'value', export API_KEY="value".
            rule(
                "secret",
                &format!(r#"{B}{ENV_NAMES}(?:\\?["'])?\s*[=:]\s*(?:\\?["'])?(?P<v>{VALUE})"#),
            ),
            // password = 'value', "api_key": "value", {'token': 'value'} (quoted values may
            // hold spaces).
            rule(
                "secret",
                &format!(r#"(?i){B}(?:[a-z0-9]+[_-])*{SECRET_NAMES}(?:\\?["'])?\s*[=:]\s*\\?["'](?P<v>(?:[^"'\r\n\\]|\\[^\snrt"'\\])+)"#),
            ),
            // password=value, ?token=value&…, secret: value.
            rule(
                "secret",
                &format!(r#"(?i){B}(?:[a-z0-9]+[_-])*{SECRET_NAMES}\s*[=:]\s*(?P<v>{VALUE})"#),
            ),
        ]
    })
}

/// Characters that may stand between a secret's name and its `=` or `:` in encoded text:
/// whitespace, quotes, and their JSON (`\"`, `\n`) and XML (`&quot;`, `&#10;`) escapes.
const SEP: &str =
    r#"(?:\s|["']|\\["'nrt]|&(?:quot|apos|#3[49]|#x2[27]|#9|#1[03]|#32|#x[9aAdD]|#x20);)"#;

/// A superset of the rules that also holds on their JSON- and XML-escaped forms (no
/// boundaries; separators may be escaped). Clean text costs one scan and no copy.
fn prefilter() -> &'static Regex {
    static PREFILTER: OnceLock<Regex> = OnceLock::new();
    PREFILTER.get_or_init(|| {
        let triggers = [
            r"PRIVATE KEY-----".to_string(),
            r"eyJ[A-Za-z0-9_-]{5}".into(),
            r"(?i:bearer)".into(),
            r"[sr]k[-_][A-Za-z0-9_-]{10}".into(),
            r"gh[pousr]_[A-Za-z0-9]{20}|github_pat_".into(),
            r"glpat-|xox[a-z]-|xapp-|AIza".into(),
            r"(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA|ABIA|ACCA)[0-9A-Z]{16}".into(),
            r"hud_[A-Za-z0-9]{16}".into(),
            r"(?i:aws_?secret_?access_?key)".into(),
            format!(r"(?:TOKEN|SECRET|KEY|PASSWORD|PASSWD|PAT|CREDENTIALS?|APIKEY)S?(?:_[A-Z0-9]+)*{SEP}*[=:]"),
            format!(r"(?i:{SECRET_NAMES}){SEP}*[=:]"),
        ];
        Regex::new(&triggers.join("|")).expect("prefilter compiles")
    })
}

/// Whether `text` may hold a secret, plainly or JSON- or XML-escaped. False means it holds
/// none; true means the rules must look.
pub fn might_contain_secret(text: &str) -> bool {
    prefilter().is_match(text)
}

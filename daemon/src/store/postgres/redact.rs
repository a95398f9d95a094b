//! Database URLs without their credentials, for logs and errors. libpq takes a password in
//! three places: the URL's userinfo (`postgres://u:pw@h/db`), its query (`?password=pw`,
//! `?sslpassword=pw`) and the key=value form (`host=h password='p w'`); each is masked. A URL
//! that does not parse (a bad port, an unclosed `[`) is masked as text: it is logged exactly
//! when the daemon says why it cannot use it.

/// Keys whose values are secrets, in a URL's query or a key=value connection string.
const SECRET_KEYS: [&str; 2] = ["password", "sslpassword"];

const MASK: &str = "***";

/// `url` with every credential replaced by `***`.
pub fn redact(url: &str) -> String {
    if !starts_with_scheme(url) {
        return redact_key_values(url);
    }
    match url::Url::parse(url) {
        Ok(parsed) if !parsed.cannot_be_a_base() => redact_url(parsed),
        _ => redact_url_text(url),
    }
}

/// Whether `text` opens with `scheme:`; the key=value form opens with a key and `=`.
fn starts_with_scheme(text: &str) -> bool {
    let text = text.trim_start();
    text.split_once(':').is_some_and(|(scheme, _)| {
        scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    })
}

fn redact_url(mut url: url::Url) -> String {
    if url.password().is_some() {
        let _ = url.set_password(Some(MASK));
    }
    if url.query().is_some() {
        let pairs: Vec<(String, String)> = url
            .query_pairs()
            .map(|(k, v)| {
                let secret = SECRET_KEYS.contains(&k.to_ascii_lowercase().as_str());
                (
                    k.into_owned(),
                    if secret { MASK.into() } else { v.into_owned() },
                )
            })
            .collect();
        url.query_pairs_mut().clear().extend_pairs(pairs);
    }
    url.to_string()
}

/// A URL the parser refused, by string handling. The userinfo runs to the last `@` (a password
/// with an unescaped `/`, `?` or `@` in it is a common reason a URL does not parse), so at worst
/// more than the password is masked; then the query's secret keys.
fn redact_url_text(text: &str) -> String {
    let (scheme, rest) = text.split_once(':').unwrap_or(("", text));
    let slashes = if rest.starts_with("//") { "//" } else { "" };
    let rest = &rest[slashes.len()..];
    let mut out = format!("{scheme}:{slashes}");
    let rest = match rest.rsplit_once('@') {
        Some((userinfo, after)) => {
            match userinfo.split_once(':') {
                Some((user, _)) => out.push_str(&format!("{user}:{MASK}@")),
                None => out.push_str(&format!("{userinfo}@")),
            }
            after
        }
        None => rest,
    };
    match rest.split_once('?') {
        Some((before, query)) => {
            out.push_str(before);
            out.push('?');
            out.push_str(&redact_query_text(query));
        }
        None => out.push_str(rest),
    }
    out
}

/// `k=v&k=v` with each secret key's value masked; the key is compared decoded (`pass%77ord`).
fn redact_query_text(query: &str) -> String {
    let pairs: Vec<String> = query
        .split('&')
        .map(|pair| {
            let key = pair.split_once('=').map_or(pair, |(k, _)| k);
            let decoded: String = url::form_urlencoded::parse(key.as_bytes())
                .map(|(k, v)| format!("{k}{v}"))
                .collect();
            if SECRET_KEYS.contains(&decoded.to_ascii_lowercase().as_str()) {
                format!("{key}={MASK}")
            } else {
                pair.to_string()
            }
        })
        .collect();
    pairs.join("&")
}

/// The key=value form: `key = value` pairs separated by spaces, a value optionally in single
/// quotes with `\'` and `\\` escapes (libpq's rules).
fn redact_key_values(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        let Some(eq) = rest.find('=') else {
            out.push_str(rest);
            break;
        };
        let key = rest[..eq].trim_start();
        out.push_str(&rest[..eq + 1]);
        let after = &rest[eq + 1..];
        let spaces = after.len() - after.trim_start().len();
        out.push_str(&after[..spaces]);
        let value_start = &after[spaces..];
        let value_len = value_length(value_start);
        let secret = key
            .trim_end()
            .rsplit(char::is_whitespace)
            .next()
            .is_some_and(|k| SECRET_KEYS.contains(&k.trim().to_ascii_lowercase().as_str()));
        if secret {
            out.push_str(MASK);
        } else {
            out.push_str(&value_start[..value_len]);
        }
        rest = &value_start[value_len..];
    }
    out
}

/// Bytes of the value at the start of `s`: up to the closing quote, or the next space.
fn value_length(s: &str) -> usize {
    let mut chars = s.char_indices();
    if s.starts_with('\'') {
        chars.next();
        let mut escaped = false;
        for (i, c) in chars {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '\'' => return i + 1,
                _ => {}
            }
        }
        return s.len();
    }
    s.find(char::is_whitespace).unwrap_or(s.len())
}

#[cfg(test)]
mod tests {
    use super::redact;

    #[test]
    fn the_userinfo_password_is_masked() {
        let shown = redact("postgres://huddle:s3cret@db:5432/huddle");
        assert!(!shown.contains("s3cret"), "{shown}");
        assert!(shown.contains("huddle:***@db:5432"), "{shown}");
    }

    #[test]
    fn query_passwords_are_masked_and_other_parameters_kept() {
        let shown = redact(
            "postgres://huddle@db/huddle?sslmode=require&password=s3cret&SSLPassword=k3y&application_name=a",
        );
        assert!(
            !shown.contains("s3cret") && !shown.contains("k3y"),
            "{shown}"
        );
        assert!(shown.contains("sslmode=require"), "{shown}");
        assert!(shown.contains("application_name=a"), "{shown}");
        assert_eq!(shown.matches("***").count(), 2, "{shown}");
    }

    #[test]
    fn key_value_passwords_are_masked_quoted_or_not() {
        for text in [
            "host=db user=huddle password=s3cret dbname=huddle",
            "host=db password = 's3 cret \\' more' dbname=huddle",
            "host=db sslpassword=s3cret",
            "password='s3cret",
        ] {
            let shown = redact(text);
            assert!(!shown.contains("s3"), "{text} → {shown}");
            assert!(shown.contains("***"), "{text} → {shown}");
        }
        let shown = redact("host=db user=huddle password=x dbname=huddle");
        assert!(shown.contains("host=db user=huddle"), "{shown}");
        assert!(shown.ends_with("dbname=huddle"), "{shown}");
    }

    #[test]
    fn a_url_that_does_not_parse_is_masked_as_text_up_to_the_last_at() {
        for (text, shown_as) in [
            (
                "postgres://u:s3cret@db.example:99999/huddle",
                "postgres://u:***@db.example:99999/huddle",
            ),
            (
                "postgres://u:s3cret@[::1:5432/huddle?sslmode=require&Pass%77ord=s3cret",
                "postgres://u:***@[::1:5432/huddle?sslmode=require&Pass%77ord=***",
            ),
            (
                "postgresql://u:s3/cr?et@db:5432/huddle",
                "postgresql://u:***@db:5432/huddle",
            ),
            (
                "postgres://u:s3cret@db:port/huddle",
                "postgres://u:***@db:port/huddle",
            ),
            ("postgres:u:s3cret@db/huddle", "postgres:u:***@db/huddle"),
            (
                "postgres://db:99999/huddle?password=s3cret",
                "postgres://db:99999/huddle?password=***",
            ),
            (
                "postgres://u@db:99999/huddle",
                "postgres://u@db:99999/huddle",
            ),
        ] {
            // Each takes the text path: no parse, or one without an authority.
            assert!(
                !matches!(url::Url::parse(text), Ok(u) if !u.cannot_be_a_base()),
                "{text}"
            );
            assert_eq!(redact(text), shown_as, "{text}");
        }
    }

    #[test]
    fn a_url_without_credentials_is_unchanged() {
        assert_eq!(
            redact("postgres://huddle@db:5432/huddle?sslmode=disable"),
            "postgres://huddle@db:5432/huddle?sslmode=disable"
        );
    }
}

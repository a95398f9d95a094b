//! A project's `npm test` script, split into words as a POSIX shell would (it is never run
//! through one). When the script invokes the runner directly, huddle takes what it says about
//! the run: its `VAR=value` assignments, node's own options and the runner's arguments.
//!
//! "Directly" means: optional `VAR=value` words, optional `cross-env` (with more
//! assignments), optional `npx`, then the runner by name (`jest`, `./node_modules/.bin/jest`)
//! or `node [node options] <the runner's bin>`; the words up to the first shell operator
//! (`&&`, `;`, `|`, a redirection) are the runner's. Anything else (`npm run lint && jest`,
//! `react-scripts test`, command substitution) is not read at all.

use regex::Regex;
use serde_json::Value;
use std::path::Path;
use std::sync::LazyLock;

/// What a direct test script says about the run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct TestScript {
    /// `VAR=value` assignments before the command (bare or after `cross-env`); `$NAME` and
    /// `${NAME}` in values are expanded as a shell would in double quotes (single quotes are
    /// not told apart).
    pub env: Vec<(String, String)>,
    /// Node's options, when the script runs `node … <runner bin>`.
    pub node_args: Vec<String>,
    /// The runner's words, after its name.
    pub args: Vec<String>,
}

/// Reads `package.json`'s `scripts.test` in `project`, when it runs `tool` directly.
/// `lookup` gives the values of variables the assignments refer to.
pub(crate) fn read(
    project: &Path,
    tool: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Option<TestScript> {
    let text = std::fs::read_to_string(project.join("package.json")).ok()?;
    let pkg: Value = serde_json::from_str(&text).ok()?;
    let script = pkg.pointer("/scripts/test")?.as_str()?;
    parse(script, tool, lookup)
}

/// Whether a word ends the command: a shell operator or a redirection.
fn ends_command(word: &str) -> bool {
    matches!(word, "&&" | "||" | "|" | ";" | "&" | "|&")
        || word
            .trim_start_matches(|c: char| c.is_ascii_digit())
            .starts_with(['>', '<'])
}

/// Shell syntax huddle cannot reproduce without a shell.
fn needs_a_shell(word: &str) -> bool {
    word.contains("$(") || word.contains('`')
}

fn is_assignment(word: &str) -> Option<(&str, &str)> {
    let (name, value) = word.split_once('=')?;
    let mut chars = name.chars();
    let first = chars.next()?;
    let valid = (first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    valid.then_some((name, value))
}

/// Expands `$NAME` and `${NAME}` (unset: empty), as a shell does in double quotes.
fn expand(value: &str, lookup: &dyn Fn(&str) -> Option<String>) -> String {
    static VARIABLE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")
            .expect("valid regex")
    });
    VARIABLE
        .replace_all(value, |c: &regex::Captures<'_>| {
            let name = c.get(1).or_else(|| c.get(2)).map_or("", |m| m.as_str());
            lookup(name).unwrap_or_default()
        })
        .into_owned()
}

/// Whether `word` runs `tool`: its name, or a path to its bin (`node_modules/.bin/jest`,
/// `node_modules/jest/bin/jest.js`, `node_modules/vitest/vitest.mjs`).
fn names_tool(word: &str, tool: &str) -> bool {
    let (dir, file) = word.rsplit_once('/').unwrap_or(("", word));
    match file.strip_prefix(tool) {
        Some("") => true,
        Some(".js" | ".mjs" | ".cjs") => !dir.is_empty(),
        _ => false,
    }
}

/// Node options that take the next word as their value (`--import tsx/esm`); each also takes
/// it after `=`.
pub(crate) const NODE_VALUE_OPTIONS: &[&str] = &[
    "-r",
    "--require",
    "--import",
    "--loader",
    "--experimental-loader",
    "-C",
    "--conditions",
    "--env-file",
    "--env-file-if-exists",
    "--input-type",
    "--experimental-default-type",
    "--disable-warning",
    "--title",
    "--inspect-port",
    "--redirect-warnings",
    "--test-reporter",
    "--test-reporter-destination",
    "--test-name-pattern",
    "--test-skip-pattern",
    "--test-concurrency",
    "--test-timeout",
    "--test-shard",
    "--test-isolation",
    "--test-coverage-include",
    "--test-coverage-exclude",
    "--test-coverage-branches",
    "--test-coverage-functions",
    "--test-coverage-lines",
    "--watch-path",
];

/// Parses a test script; `None` unless it runs `tool` directly.
pub(crate) fn parse(
    script: &str,
    tool: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Option<TestScript> {
    let all = shlex::split(script)?;
    let end = all
        .iter()
        .position(|w| ends_command(w))
        .unwrap_or(all.len());
    let words = &all[..end];
    if words.iter().any(|w| needs_a_shell(w)) {
        return None;
    }
    let mut out = TestScript::default();
    let mut i = 0;
    // A shell performs leading assignments in order, each seeing the earlier ones, but
    // expands a command's words (cross-env's `VAR=value`) with its own environment only.
    let mut after_cross_env = false;
    // Assignments, `cross-env`, `npx` (and npx's own flags), in any order before the command.
    while let Some(word) = words.get(i) {
        if let Some((name, value)) = is_assignment(word) {
            let earlier = if after_cross_env {
                &[][..]
            } else {
                &out.env[..]
            };
            let value = expand(value, &|n| {
                earlier
                    .iter()
                    .rev()
                    .find(|(k, _)| k == n)
                    .map(|(_, v)| v.clone())
                    .or_else(|| lookup(n))
            });
            out.env.push((name.to_string(), value));
        } else if word == "cross-env" {
            after_cross_env = true;
        } else if word != "npx"
            && !matches!(word.as_str(), "--no-install" | "--yes" | "-y" | "--no")
        {
            break;
        }
        i += 1;
    }
    let command = words.get(i)?;
    if names_tool(command, tool) {
        out.args = words[i + 1..].to_vec();
        return Some(out);
    }
    if command != "node" && !command.ends_with("/node") {
        return None;
    }
    i += 1;
    while let Some(word) = words.get(i) {
        if names_tool(word, tool) {
            out.args = words[i + 1..].to_vec();
            return Some(out);
        }
        if !word.starts_with('-') {
            // `node some-script.js`: not the runner.
            return None;
        }
        out.node_args.push(word.clone());
        if NODE_VALUE_OPTIONS.contains(&word.as_str()) {
            out.node_args.extend(words.get(i + 1).cloned());
            i += 1;
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_env(_: &str) -> Option<String> {
        None
    }

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn a_direct_script_gives_its_arguments() {
        let s = parse("jest --config config/jest.config.js", "jest", &no_env).unwrap();
        assert_eq!(s.args, words("--config config/jest.config.js"));
        assert!(s.env.is_empty() && s.node_args.is_empty());
        let s = parse("vitest run -c 'my config.ts'", "vitest", &no_env).unwrap();
        assert_eq!(s.args, vec!["run", "-c", "my config.ts"]);
        let s = parse("./node_modules/.bin/jest -i", "jest", &no_env).unwrap();
        assert_eq!(s.args, words("-i"));
    }

    #[test]
    fn assignments_cross_env_and_npx_come_first() {
        let s = parse(
            "cross-env NODE_ENV=test TZ=UTC npx jest -c jest.config.js",
            "jest",
            &no_env,
        )
        .unwrap();
        assert_eq!(
            s.env,
            vec![
                ("NODE_ENV".into(), "test".into()),
                ("TZ".into(), "UTC".into())
            ]
        );
        assert_eq!(s.args, words("-c jest.config.js"));
        let lookup = |n: &str| (n == "NODE_OPTIONS").then(|| "--max-old-space-size=4096".into());
        let s = parse(
            r#"NODE_OPTIONS="$NODE_OPTIONS --experimental-vm-modules" npx jest"#,
            "jest",
            &lookup,
        )
        .unwrap();
        assert_eq!(
            s.env,
            vec![(
                "NODE_OPTIONS".into(),
                "--max-old-space-size=4096 --experimental-vm-modules".into()
            )]
        );
    }

    #[test]
    fn later_assignments_see_earlier_ones_but_cross_env_words_do_not() {
        let outer = |n: &str| (n == "A").then(|| "outer".to_string());
        let s = parse("A=x B=$A:l cross-env C=${A}-c jest", "jest", &outer).unwrap();
        assert_eq!(
            s.env,
            vec![
                ("A".into(), "x".into()),
                ("B".into(), "x:l".into()),
                ("C".into(), "outer-c".into())
            ]
        );
        let s = parse("cross-env A=x B=$A:l jest", "jest", &outer).unwrap();
        assert_eq!(s.env[1], ("B".into(), "outer:l".into()));
    }

    #[test]
    fn node_with_the_runners_bin_gives_node_options() {
        let s = parse(
            "node --experimental-vm-modules -r dotenv/config node_modules/jest/bin/jest.js --ci",
            "jest",
            &no_env,
        )
        .unwrap();
        assert_eq!(
            s.node_args,
            words("--experimental-vm-modules -r dotenv/config")
        );
        assert_eq!(s.args, words("--ci"));
    }

    #[test]
    fn only_the_first_command_is_read() {
        let s = parse("jest --config a.js && npm run e2e", "jest", &no_env).unwrap();
        assert_eq!(s.args, words("--config a.js"));
        let s = parse("jest -c a.js > out.txt 2>&1", "jest", &no_env).unwrap();
        assert_eq!(s.args, words("-c a.js"));
    }

    #[test]
    fn indirect_scripts_are_not_read() {
        for script in [
            "npm run lint && jest",
            "react-scripts test",
            "node scripts/test.js",
            "jest-runner-x --config a",
            "jest --config $(pick-config)",
            "jest --config 'unbalanced",
            "node jest.config.js",
            "vitest run",
        ] {
            assert_eq!(parse(script, "jest", &no_env), None, "{script}");
        }
    }
}

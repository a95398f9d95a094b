//! A JavaScript runner's command-line options, described by a table per runner: how many
//! words each takes, and what huddle does with it when a project's test script gives it
//! ([`take`]). Names match the way yargs (jest, mocha) and cac (vitest) do: `--rootDir` and
//! `--root-dir` are one option, `--no-cache` is `--cache`, `--coverage.enabled` is `--coverage`.

use std::collections::HashSet;

/// How many words an option takes after its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Arity {
    /// None: `--runInBand`.
    Flag,
    /// One (`--config x` or `--config=x`); a following word that starts with `-` is the next
    /// option, not a value (as for cac's optional values, and yargs refuses it anyway).
    Value,
    /// Every following word up to the next option (yargs arrays: `--roots src tests`).
    List,
}

/// What huddle does with an option found in a project's test script.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Use {
    /// Passed on: it decides which tests exist, how they load or how they run.
    Keep,
    /// Left out: huddle decides it (reporters, output files, watch mode, coverage, bail).
    Drop,
    /// The runner's test-name filter: passed on only when huddle sets none itself.
    NameFilter,
    /// Test path patterns given as an option (jest `--testPathPatterns`): like positional
    /// paths, passed on only for a whole-suite run.
    TestPaths,
}

/// One option of a runner.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Opt {
    /// Its long name (any spelling yargs or cac accepts) and one-letter aliases.
    pub names: &'static [&'static str],
    /// The words it takes.
    pub arity: Arity,
    /// What huddle does with it.
    pub action: Use,
}

/// Shorthand for the tables.
pub(crate) const fn opt(names: &'static [&'static str], arity: Arity, action: Use) -> Opt {
    Opt {
        names,
        arity,
        action,
    }
}

/// One option as written, with its value words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Group {
    /// The option's canonical name (its table entry's first name, normalised).
    pub name: String,
    /// The words as written: `--config`, `config/jest.config.js`.
    pub words: Vec<String>,
}

/// A test script's words sorted by what huddle does with them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Taken {
    /// Options passed on.
    pub kept: Vec<Group>,
    /// Words that are not options (test path patterns or file filters), and the options of
    /// [`Use::TestPaths`] with their values.
    pub positionals: Vec<String>,
    /// The test-name filter, as written (`-t`, `pattern`).
    pub name_filter: Vec<String>,
    /// Options left out, as written (for the reader of the code and tests).
    pub dropped: Vec<String>,
}

impl Taken {
    /// The kept options' words, leaving out any option in `overridden` (the caller's own
    /// arguments win over the script's).
    pub fn kept_words(&self, overridden: &HashSet<String>) -> Vec<String> {
        self.kept
            .iter()
            .filter(|g| !overridden.contains(&g.name))
            .flat_map(|g| g.words.iter().cloned())
            .collect()
    }
}

/// An option word's name, comparable across spellings: one-letter aliases as written
/// (`-R` is not `-r`); long names without dashes, `no-`, a `=value` or a `.sub.key`, lower
/// case (`--root-dir=x` → `rootdir`, `--no-cache` → `cache`, `--coverage.enabled` → `coverage`).
/// `None` for a word that is not an option.
pub(crate) fn normalise(word: &str) -> Option<String> {
    let body = word.split_once('=').map_or(word, |(name, _)| name);
    if let Some(long) = body.strip_prefix("--") {
        if long.is_empty() {
            return None;
        }
        let long = long.strip_prefix("no-").unwrap_or(long);
        let long = long.split('.').next().unwrap_or(long);
        return Some(long.replace(['-', '_'], "").to_ascii_lowercase());
    }
    let short = body.strip_prefix('-')?;
    (!short.is_empty()).then(|| short.to_string())
}

/// A name as the tables spell it (`rootDir`, `c`), normalised like [`normalise`].
fn name_key(name: &str) -> String {
    if name.chars().count() == 1 {
        name.to_string()
    } else {
        name.replace(['-', '_'], "").to_ascii_lowercase()
    }
}

/// The table's entry for an option word.
pub(crate) fn lookup<'t>(word: &str, table: &'t [Opt]) -> Option<&'t Opt> {
    let name = normalise(word)?;
    table
        .iter()
        .find(|o| o.names.iter().any(|n| name_key(n) == name))
}

/// An option word's canonical name: its table entry's first name (so `-c` and `--config` are
/// one option), else its normalised spelling.
fn canonical(word: &str, table: &[Opt]) -> Option<String> {
    match lookup(word, table) {
        Some(o) => o.names.first().map(|n| name_key(n)),
        None => normalise(word),
    }
}

/// The canonical names of the options in `words` (for [`Taken::kept_words`]).
pub(crate) fn option_names(words: &[String], table: &[Opt]) -> HashSet<String> {
    words.iter().filter_map(|w| canonical(w, table)).collect()
}

/// Sorts a script's words with `table`. An option the table does not know is dropped and
/// read as a flag (jest and vitest refuse unknown options anyway); `--` ends the options.
pub(crate) fn take(words: &[String], table: &[Opt]) -> Taken {
    let mut taken = Taken::default();
    let mut i = 0;
    while i < words.len() {
        let word = &words[i];
        i += 1;
        if word == "--" {
            taken.positionals.extend(words[i..].iter().cloned());
            break;
        }
        let Some(name) = canonical(word, table) else {
            taken.positionals.push(word.clone());
            continue;
        };
        let spec = lookup(word, table);
        let mut group = Group {
            name,
            words: vec![word.clone()],
        };
        let negated = word.starts_with("--no-");
        match spec.map(|o| o.arity).filter(|_| !negated) {
            Some(Arity::Value)
                if !word.contains('=') && words.get(i).is_some_and(|w| !w.starts_with('-')) =>
            {
                group.words.push(words[i].clone());
                i += 1;
            }
            Some(Arity::List) => {
                while i < words.len() && !words[i].starts_with('-') {
                    group.words.push(words[i].clone());
                    i += 1;
                }
            }
            _ => {}
        }
        match spec.map_or(Use::Drop, |o| o.action) {
            Use::Keep => taken.kept.push(group),
            Use::NameFilter => taken.name_filter.extend(group.words),
            Use::TestPaths => taken.positionals.extend(group.words),
            Use::Drop => taken.dropped.extend(group.words),
        }
    }
    taken
}

/// An option word's full name for refusals: like [`normalise`], but a dotted sub-key stays
/// (`--coverage.reportsDirectory=x` → `coverage.reportsdirectory`).
fn full_name(word: &str) -> Option<String> {
    let body = word.split_once('=').map_or(word, |(name, _)| name);
    match body.strip_prefix("--") {
        Some(long) if !long.is_empty() => Some(long.replace(['-', '_'], "").to_ascii_lowercase()),
        Some(_) => None,
        None => body
            .strip_prefix('-')
            .filter(|s| !s.is_empty())
            .map(str::to_string),
    }
}

/// The first word of `words` that names one of the `refused` options (spelled as in [`Opt`];
/// `outputFile` also refuses its sub-keys such as vitest's `--outputFile.json`).
pub(crate) fn first_refused<'w>(words: &'w [String], refused: &[&str]) -> Option<&'w str> {
    words.iter().map(String::as_str).find(|w| {
        full_name(w).is_some_and(|name| {
            refused.iter().any(|r| {
                let key = name_key(r);
                name == key
                    || name
                        .strip_prefix(&key)
                        .is_some_and(|sub| sub.starts_with('.'))
            })
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &[Opt] = &[
        opt(&["config", "c"], Arity::Value, Use::Keep),
        opt(&["roots"], Arity::List, Use::Keep),
        opt(&["runInBand", "i"], Arity::Flag, Use::Keep),
        opt(&["cache"], Arity::Flag, Use::Keep),
        opt(&["testNamePattern", "t"], Arity::Value, Use::NameFilter),
        opt(&["testPathPatterns"], Arity::List, Use::TestPaths),
        opt(&["reporters"], Arity::List, Use::Drop),
        opt(&["outputFile"], Arity::Value, Use::Drop),
    ];

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn names_match_across_spellings() {
        assert_eq!(normalise("--root-dir=x").as_deref(), Some("rootdir"));
        assert_eq!(normalise("--rootDir").as_deref(), Some("rootdir"));
        assert_eq!(normalise("--no-cache").as_deref(), Some("cache"));
        assert_eq!(
            normalise("--coverage.enabled=true").as_deref(),
            Some("coverage")
        );
        assert_eq!(normalise("-R").as_deref(), Some("R"));
        assert_eq!(normalise("src/x.test.js"), None);
        assert_eq!(normalise("--"), None);
        assert!(lookup("--run-in-band", TABLE).is_some());
        assert!(
            lookup("-I", TABLE).is_none(),
            "one-letter aliases keep their case"
        );
    }

    #[test]
    fn take_sorts_a_script() {
        let t = take(
            &words(
                "--config config/jest.config.js --reporters default jest-junit --ci --roots src \
                 tests -i --no-cache -t adds --outputFile=out.json unit/ --testPathPatterns e2e",
            ),
            TABLE,
        );
        assert_eq!(
            t.kept_words(&HashSet::new()),
            words("--config config/jest.config.js --roots src tests -i --no-cache")
        );
        assert_eq!(t.name_filter, words("-t adds"));
        assert_eq!(
            t.dropped,
            words("--reporters default jest-junit --ci --outputFile=out.json")
        );
        assert_eq!(t.positionals, words("unit/ --testPathPatterns e2e"));
    }

    #[test]
    fn the_callers_options_override_the_scripts() {
        let t = take(&words("-c a.js --roots src -i"), TABLE);
        let overridden = option_names(&words("--config=b.js"), TABLE);
        assert_eq!(t.kept_words(&overridden), words("--roots src -i"));
    }

    #[test]
    fn refused_options_are_found_in_any_spelling() {
        let refused = &["outputFile", "json", "R", "coverage.reportsDirectory"];
        assert_eq!(
            first_refused(&words("--config x --output-file=y"), refused),
            Some("--output-file=y")
        );
        assert_eq!(first_refused(&words("-R spec"), refused), Some("-R"));
        assert_eq!(first_refused(&words("-r spec json"), refused), None);
        assert_eq!(
            first_refused(&words("--outputFile.json=x"), refused),
            Some("--outputFile.json=x")
        );
        assert_eq!(
            first_refused(
                &words("--coverage.include=src --coverage.reports-directory=d"),
                refused
            ),
            Some("--coverage.reports-directory=d")
        );
    }

    #[test]
    fn negated_options_take_no_value() {
        let t = take(&words("--no-config x"), TABLE);
        assert_eq!(t.positionals, words("x"));
    }

    #[test]
    fn a_double_dash_ends_the_options() {
        let t = take(&words("-i -- --not-an-option x"), TABLE);
        assert_eq!(t.positionals, words("--not-an-option x"));
    }
}

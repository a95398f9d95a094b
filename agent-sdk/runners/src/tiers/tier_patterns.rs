//! The entries of a `[tiers]` table (or a task's `tiers` metadata), ready to match files: a
//! plain path names a file or a directory (everything under it); an entry with a glob
//! character (`*`, `?`, `[`, `{`) is a glob over project-relative paths (`*` stays within one
//! directory, `**` crosses them: `tests/**/test_*_slow.py`), matching a file or a directory
//! the file is under. Compiled once per run, so classifying many files stays cheap.

use super::project_file::TierPaths;
use super::Tier;
use globset::{GlobBuilder, GlobMatcher};

/// One entry, as written and as matched.
#[derive(Debug, Clone)]
struct Entry {
    tier: Tier,
    written: String,
    matcher: Matcher,
}

#[derive(Debug, Clone)]
enum Matcher {
    /// A file or a directory, without `./` or a trailing `/`.
    Path(String),
    Glob(GlobMatcher),
}

/// How a file matched: the entry as written, and whether it was a glob.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PatternMatch<'a> {
    /// The tier the entry is under.
    pub tier: Tier,
    /// The entry, as the file wrote it.
    pub pattern: &'a str,
    /// A glob (true) or a path (false).
    pub glob: bool,
}

impl PatternMatch<'_> {
    /// The `--explain` words: `lists tests/unit` or `pattern tests/**/*_slow.py matches`.
    pub fn describe(&self) -> String {
        if self.glob {
            format!("[tiers] {} pattern {} matches", self.tier, self.pattern)
        } else {
            format!("[tiers] {} lists {}", self.tier, self.pattern)
        }
    }
}

/// Every entry of a `[tiers]` table, in tier order then as written: the first match wins.
#[derive(Debug, Clone, Default)]
pub struct TierPatterns {
    entries: Vec<Entry>,
}

impl TierPatterns {
    /// Compiles `paths`; a glob that does not parse is an error naming it and its tier.
    pub fn new(paths: &TierPaths) -> Result<TierPatterns, String> {
        let mut entries = Vec::new();
        for tier in Tier::ALL {
            for written in paths.of(tier) {
                let trimmed = written.trim_start_matches("./").trim_end_matches('/');
                let matcher = if trimmed.contains(['*', '?', '[', '{']) {
                    let glob = GlobBuilder::new(trimmed)
                        .literal_separator(true)
                        .build()
                        .map_err(|e| format!("[tiers] {tier}: the pattern {written:?}: {e}"))?;
                    Matcher::Glob(glob.compile_matcher())
                } else {
                    Matcher::Path(trimmed.to_string())
                };
                entries.push(Entry {
                    tier,
                    written: written.clone(),
                    matcher,
                });
            }
        }
        Ok(TierPatterns { entries })
    }

    /// The first entry that holds `file` (project-relative, `/`-separated).
    pub fn tier_of(&self, file: &str) -> Option<PatternMatch<'_>> {
        self.entries.iter().find_map(|e| {
            let (hit, glob) = match &e.matcher {
                Matcher::Path(p) => (
                    file == p
                        || file
                            .strip_prefix(p.as_str())
                            .is_some_and(|rest| rest.starts_with('/')),
                    false,
                ),
                Matcher::Glob(g) => (self_or_parent(file).any(|f| g.is_match(f)), true),
            };
            hit.then_some(PatternMatch {
                tier: e.tier,
                pattern: &e.written,
                glob,
            })
        })
    }
}

/// `a/b/c.py`, then `a/b`, then `a`: a glob naming a directory holds the files under it.
fn self_or_parent(file: &str) -> impl Iterator<Item = &str> {
    std::iter::successors(Some(file), |f| f.rsplit_once('/').map(|(dir, _)| dir))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn patterns(unit: &[&str], integration: &[&str]) -> TierPatterns {
        TierPatterns::new(&TierPaths {
            unit: unit.iter().map(|s| s.to_string()).collect(),
            integration: integration.iter().map(|s| s.to_string()).collect(),
            ..TierPaths::default()
        })
        .unwrap()
    }

    #[test]
    fn paths_hold_a_file_or_a_directory_and_nothing_beside_it() {
        let p = patterns(&["./tests/unit/"], &["tests/api.py"]);
        let m = p.tier_of("tests/unit/test_a.py").unwrap();
        assert_eq!(
            (m.tier, m.pattern, m.glob),
            (Tier::Unit, "./tests/unit/", false)
        );
        assert_eq!(p.tier_of("tests/api.py").unwrap().tier, Tier::Integration);
        assert_eq!(p.tier_of("tests/unitx/test_a.py"), None);
        assert_eq!(p.tier_of("tests/api.pyc"), None);
    }

    #[test]
    fn globs_match_files_and_directories_and_star_stays_in_one_directory() {
        let p = patterns(&[], &["tests/**/test_*_slow.py", "packages/*/it"]);
        let m = p.tier_of("tests/a/b/test_db_slow.py").unwrap();
        assert_eq!(
            (m.tier, m.pattern, m.glob),
            (Tier::Integration, "tests/**/test_*_slow.py", true)
        );
        assert!(
            p.tier_of("tests/test_db_slow.py").is_some(),
            "** is zero or more"
        );
        assert_eq!(p.tier_of("tests/a/test_db_fast.py"), None);
        assert!(p.tier_of("packages/web/it/login.test.js").is_some());
        assert_eq!(
            p.tier_of("packages/web/sub/it/login.test.js"),
            None,
            "* does not cross a /"
        );
        assert_eq!(
            m.describe(),
            "[tiers] integration pattern tests/**/test_*_slow.py matches"
        );
    }

    #[test]
    fn the_first_tier_in_order_wins_and_a_bad_glob_is_named() {
        let p = patterns(&["tests/*.py"], &["tests/test_api.py"]);
        assert_eq!(p.tier_of("tests/test_api.py").unwrap().tier, Tier::Unit);
        let bad = TierPatterns::new(&TierPaths {
            pbt: vec!["tests/[a-.py".into()],
            ..TierPaths::default()
        })
        .unwrap_err();
        assert!(
            bad.contains("[tiers] pbt") && bad.contains("tests/[a-.py"),
            "{bad}"
        );
    }
}

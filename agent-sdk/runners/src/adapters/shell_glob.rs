//! Pathname expansion of a test script's words, as `sh -c` (the shell npm runs scripts with)
//! does it, for runners that do not expand patterns themselves (node 20's `--test` takes
//! `src/**/*.test.ts` as one file name). POSIX sh has no globstar: `**` is `*`, and `*`, `?`
//! and `[…]` match within one path segment; a leading `.` is matched only by a pattern
//! segment that starts with `.`; the matches are sorted; a word that matches nothing, or whose
//! pattern characters were quoted, stays as it is. Each segment is matched by `globset`.

use globset::{Glob, GlobBuilder, GlobMatcher};
use std::path::Path;

/// Whether `word` has a pattern character sh expands.
fn has_pattern(word: &str) -> bool {
    word.contains(['*', '?', '['])
}

/// `**` and longer runs of `*` are `*` without globstar.
fn collapse_stars(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    for c in segment.chars() {
        if !(c == '*' && out.ends_with('*')) {
            out.push(c);
        }
    }
    out
}

fn segment_matcher(segment: &str) -> Option<GlobMatcher> {
    let glob: Glob = GlobBuilder::new(&collapse_stars(segment))
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .ok()?;
    Some(glob.compile_matcher())
}

/// The paths `pattern` names relative to `cwd` (or absolute), as sh expands it; empty when
/// none exists.
fn matches(pattern: &str, cwd: &Path) -> Vec<String> {
    let absolute = pattern.starts_with('/');
    // Each candidate: the word as written so far, and the directory it names.
    let mut found: Vec<String> = vec![if absolute { "/".into() } else { String::new() }];
    let segments: Vec<&str> = pattern.split('/').filter(|s| !s.is_empty()).collect();
    for (n, segment) in segments.iter().enumerate() {
        let last = n + 1 == segments.len();
        let mut next = Vec::new();
        for prefix in &found {
            let dir = cwd.join(if prefix.is_empty() { "." } else { prefix });
            if !has_pattern(segment) {
                next.push(format!("{prefix}{segment}{}", if last { "" } else { "/" }));
                continue;
            }
            let Some(matcher) = segment_matcher(segment) else {
                return Vec::new();
            };
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                if name.starts_with('.') && !segment.starts_with('.') {
                    continue;
                }
                if !matcher.is_match(&name) {
                    continue;
                }
                if last {
                    next.push(format!("{prefix}{name}"));
                } else if cwd.join(prefix).join(&name).is_dir() {
                    next.push(format!("{prefix}{name}/"));
                }
            }
        }
        found = next;
    }
    let mut out: Vec<String> = found
        .into_iter()
        .filter(|p| cwd.join(p).symlink_metadata().is_ok())
        .map(|p| {
            if pattern.ends_with('/') {
                p
            } else {
                p.trim_end_matches('/').to_string()
            }
        })
        .collect();
    out.sort();
    out
}

/// `word` of `script` (the script's text, to tell a quoted pattern from a bare one) expanded
/// in `cwd` as sh would.
pub(crate) fn expand(word: &str, script: &str, cwd: &Path) -> Vec<String> {
    // shlex has removed the quotes: a pattern was bare when the script has it as a word of
    // its own, unquoted and unescaped.
    let bare = script.split_whitespace().any(|w| w == word);
    if !has_pattern(word) || !bare {
        return vec![word.to_string()];
    }
    let found = matches(word, cwd);
    if found.is_empty() {
        vec![word.to_string()]
    } else {
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(root: &Path, rel: &str) {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "").unwrap();
    }

    fn tree() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for f in [
            "src/top.test.ts",
            "src/lib/math.test.ts",
            "src/lib/math.ts",
            "src/text/shout.test.ts",
            "src/a/b/deep.test.ts",
            "src/.hidden/x.test.ts",
            "test/one.test.js",
        ] {
            touch(dir.path(), f);
        }
        dir
    }

    #[test]
    fn double_star_is_one_segment_as_in_sh() {
        let dir = tree();
        let script = "node --test src/**/*.test.ts";
        assert_eq!(
            expand("src/**/*.test.ts", script, dir.path()),
            ["src/lib/math.test.ts", "src/text/shout.test.ts"]
        );
    }

    #[test]
    fn question_marks_classes_and_literal_segments() {
        let dir = tree();
        let script = "node --test src/l?b/*.test.ts src/[lt]*/*.ts test/*.js";
        assert_eq!(
            expand("src/l?b/*.test.ts", script, dir.path()),
            ["src/lib/math.test.ts"]
        );
        assert_eq!(
            expand("src/[lt]*/*.ts", script, dir.path()),
            [
                "src/lib/math.test.ts",
                "src/lib/math.ts",
                "src/text/shout.test.ts"
            ]
        );
        assert_eq!(
            expand("test/*.js", script, dir.path()),
            ["test/one.test.js"]
        );
    }

    #[test]
    fn dot_directories_only_for_a_dot_pattern() {
        let dir = tree();
        let script = "node --test src/*/x.test.ts src/.*/x.test.ts";
        assert_eq!(
            expand("src/*/x.test.ts", script, dir.path()),
            ["src/*/x.test.ts"],
            "no match: the word stays"
        );
        assert_eq!(
            expand("src/.*/x.test.ts", script, dir.path()),
            ["src/.hidden/x.test.ts"]
        );
    }

    #[test]
    fn quoted_patterns_and_plain_words_stay() {
        let dir = tree();
        let script = "node --test 'src/**/*.test.ts' test/";
        assert_eq!(
            expand("src/**/*.test.ts", script, dir.path()),
            ["src/**/*.test.ts"]
        );
        assert_eq!(expand("test/", script, dir.path()), ["test/"]);
    }

    #[test]
    fn absolute_patterns_keep_their_root() {
        let dir = tree();
        let pattern = format!("{}/src/lib/*.ts", dir.path().display());
        let script = format!("node --test {pattern}");
        assert_eq!(
            expand(&pattern, &script, dir.path()),
            [
                format!("{}/src/lib/math.test.ts", dir.path().display()),
                format!("{}/src/lib/math.ts", dir.path().display())
            ]
        );
    }
}

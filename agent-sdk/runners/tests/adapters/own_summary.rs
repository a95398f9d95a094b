//! The runner's own verdict, to compare huddle's counts with: the `Tests` summary line a
//! JavaScript runner prints when started the way its package manager starts it (the
//! `node_modules/.bin` entry itself).

use regex::Regex;
use std::path::Path;

/// (passed, failed, skipped, total) from the runner's own `Tests` summary line: jest's
/// `Tests: 1 failed, 2 passed, 3 total`, vitest's `Tests  1 failed | 2 passed | 1 skipped (4)`.
/// `tool` is `jest` or `vitest` (started as `vitest run`).
pub fn own_summary(project: &Path, tool: &str) -> (usize, usize, usize, usize) {
    let args: &[&str] = if tool == "vitest" { &["run"] } else { &[] };
    summary_of(project, tool, args)
}

/// The same, from `node_modules/.bin/<bin> <args>` (a wrapper's command, `x-scripts test`).
pub fn summary_of(project: &Path, bin: &str, args: &[&str]) -> (usize, usize, usize, usize) {
    let tool = bin;
    let bin = project.join("node_modules/.bin").join(bin);
    let mut cmd = std::process::Command::new(&bin);
    cmd.args(args);
    let out = cmd
        .current_dir(project)
        .env("NO_COLOR", "1")
        .env("FORCE_COLOR", "0")
        .env("CI", "true")
        .output()
        .unwrap_or_else(|e| panic!("running {}: {e}", bin.display()));
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("Tests:") || l.starts_with("Tests "))
        .unwrap_or_else(|| panic!("{tool} printed no Tests line:\n{text}"));
    let count = |word: &str| {
        Regex::new(&format!(r"(\d+) {word}"))
            .unwrap()
            .captures(line)
            .map_or(0, |c| c[1].parse().unwrap())
    };
    let total = Regex::new(r"(\d+) total|\((\d+)\)")
        .unwrap()
        .captures(line)
        .and_then(|c| c.get(1).or(c.get(2)))
        .map(|m| m.as_str().parse().unwrap())
        .unwrap_or_else(|| panic!("no total in {line:?}"));
    (count("passed"), count("failed"), count("skipped"), total)
}

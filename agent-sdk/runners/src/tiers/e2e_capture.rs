//! What pytest-playwright records in the e2e tier, and the `PYTEST_ADDOPTS` that says so. The
//! project's own settings win: the options in its pytest config's `addopts` and in the
//! caller's `PYTEST_ADDOPTS` (a user's `--video=on`, `-n 4`, `-k …`) are kept as they are, and
//! huddle adds its capture defaults only for what they leave unset. `--output` is always
//! huddle's, last, so the artefacts land in the run's own directory.

use serde::{Deserialize, Serialize};
use std::path::Path;

/// Which screenshots, traces and videos the e2e tier asks pytest-playwright for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "lowercase")]
pub enum Capture {
    /// Traces and screenshots of failing tests only (`--tracing=retain-on-failure
    /// --screenshot=only-on-failure`).
    #[default]
    Failures,
    /// Every test's screenshot and trace, and the video of failing ones (`--screenshot=on
    /// --tracing=on --video=retain-on-failure`, as the seeds' `run_tests` asks).
    On,
}

impl Capture {
    /// pytest-playwright's options for this capture.
    fn options(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Capture::Failures => &[
                ("--tracing", "retain-on-failure"),
                ("--screenshot", "only-on-failure"),
            ],
            Capture::On => &[
                ("--screenshot", "on"),
                ("--tracing", "on"),
                ("--video", "retain-on-failure"),
            ],
        }
    }
}

/// Whether `words` set the option `name` (`--video=on` or `--video on`).
fn sets(words: &[String], name: &str) -> bool {
    words
        .iter()
        .any(|w| w == name || w.strip_prefix(name).is_some_and(|r| r.starts_with('=')))
}

/// `PYTEST_ADDOPTS` for the e2e tier: the caller's own (`user`, kept whole), huddle's capture
/// options and browser channel where neither it nor the project's `addopts` sets them, and
/// `--output` into `output`.
pub fn pytest_addopts(
    user: Option<&str>,
    project_addopts: &[String],
    capture: Capture,
    browser_channel: Option<&str>,
    output: &Path,
) -> String {
    let user_words = user
        .map(|u| {
            shlex::split(u).unwrap_or_else(|| u.split_whitespace().map(String::from).collect())
        })
        .unwrap_or_default();
    let set = |name: &str| sets(&user_words, name) || sets(project_addopts, name);
    let mut words: Vec<String> = capture
        .options()
        .iter()
        .filter(|(name, _)| !set(name))
        .map(|(name, value)| format!("{name}={value}"))
        .collect();
    if let Some(ch) = browser_channel.filter(|_| !set("--browser-channel")) {
        words.push(format!("--browser-channel={ch}"));
    }
    words.extend(user_words);
    words.push(format!("--output={}", output.display()));
    shlex::try_join(words.iter().map(String::as_str)).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        shlex::split(s).unwrap()
    }

    #[test]
    fn defaults_without_user_settings() {
        let got = pytest_addopts(None, &[], Capture::Failures, None, Path::new("/r/out"));
        assert_eq!(
            words(&got),
            [
                "--tracing=retain-on-failure",
                "--screenshot=only-on-failure",
                "--output=/r/out"
            ]
        );
        let got = pytest_addopts(None, &[], Capture::On, Some("chrome"), Path::new("/o"));
        assert_eq!(
            words(&got),
            [
                "--screenshot=on",
                "--tracing=on",
                "--video=retain-on-failure",
                "--browser-channel=chrome",
                "--output=/o"
            ]
        );
    }

    #[test]
    fn the_users_options_are_kept_and_win() {
        let ini = words("--video=on -p no:cacheprovider");
        let got = pytest_addopts(
            Some("-n 4 --tracing off -k 'not slow'"),
            &ini,
            Capture::On,
            None,
            Path::new("/o"),
        );
        assert_eq!(
            words(&got),
            [
                "--screenshot=on",
                "-n",
                "4",
                "--tracing",
                "off",
                "-k",
                "not slow",
                "--output=/o"
            ]
        );
    }
}

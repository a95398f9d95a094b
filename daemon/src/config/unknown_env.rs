//! `HUDDLE_*` variables that set nothing. A mistyped setting (`HUDDLE_LIMITS_MAX_BACH`) would
//! otherwise be ignored without a word, so `huddled` names them in a warning at start-up.

use super::Settings;
use std::collections::BTreeSet;

/// Variables `huddled` reads itself, apart from the settings.
const DAEMON: &[&str] = &["HUDDLE_LOG", "HUDDLE_CONFIG", "HUDDLE_DATABASE_URL"];

/// Variables of huddle's other programs (the CLI, workers, runners, tests and benches), often
/// set in the same shell or container as the daemon: not mistakes.
const OTHER_PROGRAMS: &[&str] = &[
    "HUDDLE_URL",
    "HUDDLE_TOKEN",
    "HUDDLE_TEAM",
    "HUDDLE_KEEP_RUNS",
    "HUDDLE_CHROMIUM",
    "HUDDLE_FORCE_LIVE_LINE",
];
const OTHER_PREFIXES: &[&str] = &[
    "HUDDLE_LLM_",
    "HUDDLE_SERVICE_",
    "HUDDLE_TASK_",
    "HUDDLE_TEST_",
    "HUDDLE_BENCH_",
];

/// The names in `vars` that start with `HUDDLE_` and are neither a setting
/// (`HUDDLE_<SECTION>_<KEY>`, and `HUDDLE_<KEY>` for `[server]`) nor a variable that `huddled`
/// or another huddle program reads. A `…_FILE` variable is the container entrypoint's
/// (`deploy/docker-entrypoint.sh`) and is left alone. Sorted, each once.
pub fn unknown_env_vars(vars: impl IntoIterator<Item = String>) -> Vec<String> {
    let settings = setting_variables();
    vars.into_iter()
        .filter(|name| name.starts_with("HUDDLE_") && !name.ends_with("_FILE"))
        .filter(|name| !settings.contains(name.as_str()))
        .filter(|name| !DAEMON.contains(&name.as_str()) && !OTHER_PROGRAMS.contains(&name.as_str()))
        .filter(|name| !OTHER_PREFIXES.iter().any(|p| name.starts_with(p)))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect()
}

/// Every variable that sets a key, named as `apply_env` reads them.
fn setting_variables() -> BTreeSet<String> {
    let value = toml::Value::try_from(Settings::default()).expect("defaults serialise");
    let mut names = BTreeSet::new();
    let Some(sections) = value.as_table() else {
        return names;
    };
    for (section, table) in sections {
        for key in table.as_table().into_iter().flat_map(|t| t.keys()) {
            let (section, key) = (section.to_uppercase(), key.to_uppercase());
            names.insert(format!("HUDDLE_{section}_{key}"));
            if section == "SERVER" {
                names.insert(format!("HUDDLE_{key}"));
            }
        }
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unknown(names: &[&str]) -> Vec<String> {
        unknown_env_vars(names.iter().map(|n| n.to_string()))
    }

    #[test]
    fn a_mistyped_setting_is_named() {
        assert_eq!(
            unknown(&[
                "HUDDLE_LIMITS_MAX_BACH",
                "HUDDLE_LIMITS_MAX_BATCH",
                "HUDDLE_ADMN_TOKEN"
            ]),
            ["HUDDLE_ADMN_TOKEN", "HUDDLE_LIMITS_MAX_BACH"]
        );
    }

    #[test]
    fn settings_and_the_daemons_own_variables_are_known() {
        let known = [
            "HUDDLE_TASKS_DEFAULT_LEASE_MS",
            "HUDDLE_SERVER_LISTEN",
            "HUDDLE_LISTEN",
            "HUDDLE_ADMIN_TOKEN",
            "HUDDLE_STORAGE_DIRECT_DATABASE_URL",
            "HUDDLE_METRICS_LISTEN",
            "HUDDLE_LOG_FORMAT",
            "HUDDLE_LOG",
            "HUDDLE_CONFIG",
            "HUDDLE_DATABASE_URL",
        ];
        assert_eq!(unknown(&known), Vec::<String>::new());
    }

    #[test]
    fn other_programs_variables_and_other_names_are_left_alone() {
        let others = [
            "HUDDLE_URL",
            "HUDDLE_TOKEN",
            "HUDDLE_TEAM",
            "HUDDLE_LLM_MODEL",
            "HUDDLE_SERVICE_API_URL",
            "HUDDLE_ADMIN_TOKEN_FILE",
            "HUDDLED",
            "PATH",
        ];
        assert_eq!(unknown(&others), Vec::<String>::new());
    }

    #[test]
    fn only_server_keys_have_a_short_form() {
        assert_eq!(
            unknown(&["HUDDLE_DEFAULT_LEASE_MS"]),
            ["HUDDLE_DEFAULT_LEASE_MS"]
        );
    }
}

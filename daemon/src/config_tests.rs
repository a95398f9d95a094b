//! Settings: defaults, the file, and the environment over it.

use super::*;
use std::path::Path;

#[test]
fn environment_overrides_file_and_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("huddle.toml");
    std::fs::write(
        &file,
        "[tasks]\ndefault_lease_ms = 5000\n[storage]\nsynchronous = \"normal\"\n",
    )
    .unwrap();
    let env = |k: &str| match k {
        "HUDDLE_LISTEN" => Some("0.0.0.0:9000".to_string()),
        "HUDDLE_TASKS_MAX_WAIT_MS" => Some("1234".to_string()),
        _ => None,
    };
    let s = Settings::load(Some(&file), env).unwrap();
    assert_eq!(s.server.listen, "0.0.0.0:9000");
    assert_eq!(s.tasks.default_lease_ms, 5000);
    assert_eq!(s.tasks.max_wait_ms, 1234);
    assert_eq!(s.storage.synchronous, Synchronous::Normal);
    assert_eq!(s.memory.max_bytes, 1024 * 1024);
    assert_eq!(s.storage.backend, Backend::Sqlite);
}

#[test]
fn a_database_url_selects_postgres() {
    let s = Settings::load(None, |k| {
        (k == "HUDDLE_DATABASE_URL").then(|| "postgres://h@db/huddle".to_string())
    })
    .unwrap();
    assert_eq!(s.storage.backend, Backend::Postgres);
    assert_eq!(s.storage.database_url, "postgres://h@db/huddle");
}

#[test]
fn a_direct_database_url_comes_from_its_variable_and_is_empty_by_default() {
    assert_eq!(Settings::default().storage.direct_database_url, "");
    let s = Settings::load(None, |k| match k {
        "HUDDLE_DATABASE_URL" => Some("postgres://h@pgbouncer:6432/huddle".to_string()),
        "HUDDLE_STORAGE_DIRECT_DATABASE_URL" => Some("postgres://h@db:5432/huddle".to_string()),
        _ => None,
    })
    .unwrap();
    assert_eq!(s.storage.database_url, "postgres://h@pgbouncer:6432/huddle");
    assert_eq!(s.storage.direct_database_url, "postgres://h@db:5432/huddle");
}

#[test]
fn the_replica_heartbeat_settings_are_read_from_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("huddle.toml");
    std::fs::write(
        &file,
        "[limits]\nreplica_heartbeat_ms = 250\nreplica_expiry_ms = 2000\n",
    )
    .unwrap();
    let s = Settings::load(Some(&file), |_| None).unwrap();
    assert_eq!(s.limits.replica_heartbeat_ms, 250);
    assert_eq!(s.limits.replica_expiry_ms, 2000);
}

#[test]
fn unknown_keys_and_bad_values_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("huddle.toml");
    std::fs::write(&file, "[tasks]\nlease = 5\n").unwrap();
    let err = Settings::load(Some(&file), |_| None)
        .unwrap_err()
        .to_string();
    assert!(err.contains("lease"), "{err}");
    let err = Settings::load(None, |k| {
        (k == "HUDDLE_TASKS_MAX_WAIT_MS").then(|| "soon".into())
    })
    .unwrap_err();
    assert!(
        err.to_string().contains("HUDDLE_TASKS_MAX_WAIT_MS"),
        "{err}"
    );
}

#[test]
fn worker_sections_are_accepted_and_left_to_workers() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("huddle.toml");
    std::fs::write(
        &file,
        "[llm]\nmodel = \"m\"\n[cycles.tester]\nmaxIterations = 3\n",
    )
    .unwrap();
    let s = Settings::load(Some(&file), |_| None).unwrap();
    assert_eq!(s.llm["model"].as_str(), Some("m"));
}

#[test]
fn the_shipped_config_file_is_the_defaults() {
    let shipped = concat!(env!("CARGO_MANIFEST_DIR"), "/../config/huddle.toml");
    let s = Settings::load(Some(Path::new(shipped)), |_| None).unwrap();
    assert_eq!(
        toml::Value::try_from(&s).unwrap(),
        toml::Value::try_from(Settings::default()).unwrap()
    );
}

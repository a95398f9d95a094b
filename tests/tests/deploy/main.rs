//! `docker-compose.yml` as a deployment, read with PyYAML (the parser Compose v1 uses): every
//! long-running service has a healthcheck and a restart policy (the database too), secrets come
//! from files and no password is written in the file, published ports are on 127.0.0.1, the
//! load balancer is an official image in front of every replica, and the images run the
//! release build, whose profile strips the binaries. `scripts/test` also runs
//! `docker compose config` on it.

use serde_json::Value;
use std::path::PathBuf;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// docker-compose.yml as JSON, parsed by PyYAML.
fn compose() -> Value {
    huddle_tests::python::require_modules(&["yaml"]);
    let out = std::process::Command::new("python3")
        .args([
            "-c",
            "import json, sys, yaml; json.dump(yaml.safe_load(open(sys.argv[1])), sys.stdout)",
        ])
        .arg(repo().join("docker-compose.yml"))
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "docker-compose.yml does not parse: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Each service with the `x-huddled` defaults merged in (PyYAML resolves `<<` merges).
fn services(compose: &Value) -> Vec<(String, Value)> {
    compose["services"]
        .as_object()
        .expect("services")
        .iter()
        .map(|(name, s)| (name.clone(), s.clone()))
        .collect()
}

/// Runs to completion once (`restart: "no"`), so it has no health to check.
fn one_shot(service: &Value) -> bool {
    service["restart"] == "no"
}

#[test]
fn every_long_running_service_has_a_healthcheck_and_a_restart_policy() {
    let compose = compose();
    let all = services(&compose);
    assert!(all.len() >= 5, "{all:?}");
    for (name, service) in &all {
        if one_shot(service) {
            continue;
        }
        let test = &service["healthcheck"]["test"];
        assert!(
            test.is_array() || test.is_string(),
            "{name} has no healthcheck: {service}"
        );
        assert_ne!(service["healthcheck"]["disable"], true, "{name}");
        assert!(
            matches!(
                service["restart"].as_str(),
                Some("always" | "unless-stopped" | "on-failure")
            ),
            "{name} has no restart policy: {service}"
        );
    }
    let postgres = &compose["services"]["postgres"];
    assert_eq!(postgres["restart"], "unless-stopped");
}

#[test]
fn secrets_come_from_files_and_no_password_is_written_in_the_file() {
    let compose = compose();
    let secrets = compose["secrets"].as_object().expect("top-level secrets");
    for (name, secret) in secrets {
        let file = secret["file"].as_str().unwrap_or_else(|| panic!("{name}"));
        assert!(file.starts_with("./secrets/"), "{name}: {file}");
    }
    let text = std::fs::read_to_string(repo().join("docker-compose.yml")).unwrap();
    for (name, service) in services(&compose) {
        let env = service["environment"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        for (key, value) in &env {
            let value = value.as_str().unwrap_or_default();
            let secretish = ["PASSWORD", "TOKEN"]
                .iter()
                .any(|w| key.contains(w) && !key.ends_with("_FILE"));
            assert!(
                !secretish,
                "{name}: {key} is set in the file: use {key}_FILE"
            );
            if let Ok(url) = reqwest::Url::parse(value) {
                assert!(url.password().is_none(), "{name}: {key} holds a password");
            }
            if key.ends_with("_FILE") && value.starts_with("/run/secrets/") {
                let secret = value.trim_start_matches("/run/secrets/");
                let used: Vec<String> = service["secrets"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
                    .iter()
                    .map(|s| s.as_str().unwrap_or_default().to_string())
                    .collect();
                assert!(
                    used.iter().any(|s| s == secret),
                    "{name}: {key} names {secret}"
                );
            }
        }
    }
    assert!(
        !text.contains("POSTGRES_PASSWORD:"),
        "a password in the file"
    );
    assert!(text.contains("POSTGRES_PASSWORD_FILE: /run/secrets/postgres_password"));
}

#[test]
fn published_ports_are_on_127_0_0_1_and_only_the_balancer_publishes() {
    let compose = compose();
    for (name, service) in services(&compose) {
        let ports = service["ports"].as_array().cloned().unwrap_or_default();
        for port in &ports {
            let port = port.as_str().unwrap_or_else(|| panic!("{name}: {port}"));
            assert!(
                port.starts_with("127.0.0.1:"),
                "{name} publishes {port} beyond this machine"
            );
        }
        if !ports.is_empty() {
            assert_eq!(name, "lb", "only the load balancer is published");
        }
    }
}

#[test]
fn an_official_load_balancer_image_fronts_every_replica() {
    let compose = compose();
    let lb = &compose["services"]["lb"];
    let image = lb["image"].as_str().unwrap();
    assert!(image.starts_with("nginx:"), "{image}");
    let replicas: Vec<String> = services(&compose)
        .into_iter()
        .filter(|(_, s)| s["image"] == "huddle/huddled:local")
        .map(|(n, _)| n)
        .collect();
    assert!(replicas.len() >= 2, "{replicas:?}");
    let nginx = std::fs::read_to_string(repo().join("deploy/nginx.conf")).unwrap();
    for replica in &replicas {
        assert!(
            nginx.contains(&format!("server {replica}:7700")),
            "nginx.conf does not balance to {replica}"
        );
        assert_eq!(lb["depends_on"][replica]["condition"], "service_healthy");
    }
    assert!(
        nginx.contains("proxy_buffering off"),
        "streams need unbuffered proxying"
    );
}

#[test]
fn images_run_a_stripped_release_build() {
    let manifest = std::fs::read_to_string(repo().join("Cargo.toml")).unwrap();
    let release = manifest
        .split("[profile.release]")
        .nth(1)
        .expect("a release profile");
    let release = release.split("\n[").next().unwrap();
    assert!(release.contains("strip = true"), "{release}");
    let dockerfile = std::fs::read_to_string(repo().join("Dockerfile")).unwrap();
    assert!(dockerfile.contains("cargo build --release"));
    assert!(dockerfile.contains("FROM debian:bookworm-slim AS huddled"));
    assert!(dockerfile.contains("COPY --from=build /usr/local/bin/huddled"));
}

#[test]
fn the_images_entrypoint_turns_file_variables_into_values() {
    let dir = tempfile::tempdir().unwrap();
    let secret = dir.path().join("admin_token");
    std::fs::write(&secret, "from-the-secret-file\n").unwrap();
    let script = repo().join("deploy/docker-entrypoint.sh");
    let out = std::process::Command::new("sh")
        .arg(&script)
        .args([
            "sh",
            "-c",
            "echo \"$HUDDLE_ADMIN_TOKEN|${HUDDLE_ADMIN_TOKEN_FILE:-unset}\"",
        ])
        .env("HUDDLE_ADMIN_TOKEN_FILE", &secret)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "from-the-secret-file|unset"
    );
    let missing = std::process::Command::new("sh")
        .arg(&script)
        .args(["true"])
        .env("PGPASSWORD_FILE", dir.path().join("absent"))
        .output()
        .unwrap();
    assert!(
        !missing.status.success(),
        "an unreadable secret file must stop the start"
    );
}

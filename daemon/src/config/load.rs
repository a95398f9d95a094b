//! Loading the settings: the defaults, then the config file (checked on its own first, so its
//! errors name it), then `HUDDLE_…` environment variables, then `HUDDLE_DATABASE_URL`.

use super::{Backend, Settings};
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("config file {path}: {source}")]
    Parse {
        path: PathBuf,
        source: toml::de::Error,
    },
    #[error("environment: {0}")]
    Env(String),
}

impl Settings {
    /// Defaults ← `file` (if any) ← environment variables from `env`.
    pub fn load(
        file: Option<&Path>,
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<Settings, ConfigError> {
        let mut value = toml::Value::try_from(Settings::default()).expect("defaults serialise");
        if let Some(path) = file {
            let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
                path: path.into(),
                source,
            })?;
            let from_file: toml::Value =
                toml::from_str(&text).map_err(|source| ConfigError::Parse {
                    path: path.into(),
                    source,
                })?;
            // Check the file on its own first so errors name the file.
            let _: Settings =
                from_file
                    .clone()
                    .try_into()
                    .map_err(|source| ConfigError::Parse {
                        path: path.into(),
                        source,
                    })?;
            merge(&mut value, from_file);
        }
        apply_env(&mut value, &env)?;
        let mut settings: Settings = value
            .try_into()
            .map_err(|e: toml::de::Error| ConfigError::Env(e.to_string()))?;
        // The conventional variable of hosted databases: a URL means PostgreSQL.
        if let Some(url) = env("HUDDLE_DATABASE_URL").filter(|u| !u.trim().is_empty()) {
            settings.storage.database_url = url;
            settings.storage.backend = Backend::Postgres;
        }
        Ok(settings)
    }
}

fn merge(base: &mut toml::Value, over: toml::Value) {
    match (base, over) {
        (toml::Value::Table(b), toml::Value::Table(o)) => {
            for (k, v) in o {
                match b.get_mut(&k) {
                    Some(slot) => merge(slot, v),
                    None => {
                        b.insert(k, v);
                    }
                }
            }
        }
        (slot, v) => *slot = v,
    }
}

fn apply_env(
    value: &mut toml::Value,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(), ConfigError> {
    let toml::Value::Table(sections) = value else {
        return Ok(());
    };
    for (section, table) in sections.iter_mut() {
        let toml::Value::Table(keys) = table else {
            continue;
        };
        for (key, slot) in keys.iter_mut() {
            let long = format!("HUDDLE_{}_{}", section.to_uppercase(), key.to_uppercase());
            let short = (section == "server").then(|| format!("HUDDLE_{}", key.to_uppercase()));
            let Some((name, raw)) = env(&long)
                .map(|v| (long.clone(), v))
                .or_else(|| short.as_ref().and_then(|s| env(s).map(|v| (s.clone(), v))))
            else {
                continue;
            };
            *slot = match slot {
                toml::Value::Integer(_) => {
                    toml::Value::Integer(raw.trim().parse().map_err(|_| {
                        ConfigError::Env(format!("{name} must be a whole number, got {raw:?}"))
                    })?)
                }
                toml::Value::Boolean(_) => {
                    toml::Value::Boolean(raw.trim().parse().map_err(|_| {
                        ConfigError::Env(format!("{name} must be true or false, got {raw:?}"))
                    })?)
                }
                _ => toml::Value::String(raw),
            };
        }
    }
    Ok(())
}

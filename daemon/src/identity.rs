//! Tokens: 256-bit random, shown once, stored as SHA-256 (a fast hash suffices because the
//! tokens themselves carry 256 bits of entropy). The admin token lives in the config or
//! environment, or is generated into the data directory with mode 0600.

use rand::RngCore;
use sha2::{Digest, Sha256};
use std::io::Write;
use std::path::{Path, PathBuf};

/// A fresh bearer token: `hud_` and 64 hex characters.
pub fn new_token() -> String {
    let mut bytes = [0u8; 32];
    rand::thread_rng().fill_bytes(&mut bytes);
    format!("hud_{}", hex::encode(bytes))
}

pub fn hash_token(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// Compares in constant time so the admin token cannot be guessed byte by byte.
pub fn same_secret(a: &str, b: &str) -> bool {
    let (a, b) = (Sha256::digest(a.as_bytes()), Sha256::digest(b.as_bytes()));
    a.iter()
        .zip(b.iter())
        .fold(0u8, |acc, (x, y)| acc | (x ^ y))
        == 0
}

/// A configured admin token shorter than this is refused at start: it grants every team.
pub const MIN_ADMIN_TOKEN_CHARS: usize = 32;

/// Where the admin token came from, for the start-up log line.
#[derive(Debug, Clone)]
pub enum AdminTokenSource {
    Configured,
    File(PathBuf),
}

/// The configured admin token, or the one stored in `<data_dir>/admin-token` (created on first
/// start with mode 0600).
pub fn admin_token(
    configured: &str,
    data_dir: &Path,
) -> std::io::Result<(String, AdminTokenSource)> {
    let configured = configured.trim();
    if !configured.is_empty() {
        if configured.chars().count() < MIN_ADMIN_TOKEN_CHARS {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!(
                    "the configured admin token (HUDDLE_ADMIN_TOKEN or [server] admin_token) is {} characters; use at least {MIN_ADMIN_TOKEN_CHARS} random ones (e.g. `openssl rand -hex 32`), or leave it empty to have one generated",
                    configured.chars().count()
                ),
            ));
        }
        return Ok((configured.to_string(), AdminTokenSource::Configured));
    }
    let path = data_dir.join("admin-token");
    match std::fs::read_to_string(&path) {
        Ok(token) if !token.trim().is_empty() => {
            return Ok((token.trim().to_string(), AdminTokenSource::File(path)))
        }
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let token = new_token();
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(&path)?;
    writeln!(file, "{token}")?;
    file.sync_all()?;
    Ok((token, AdminTokenSource::File(path)))
}

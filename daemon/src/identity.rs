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
    match std::fs::symlink_metadata(&path) {
        Ok(meta) => {
            check_private(&path, &meta)?;
            let token = std::fs::read_to_string(&path)?;
            if !token.trim().is_empty() {
                return Ok((token.trim().to_string(), AdminTokenSource::File(path)));
            }
            // An empty file (an interrupted first start): write a token into it.
            std::fs::remove_file(&path)?;
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let token = new_token();
    let mut options = std::fs::OpenOptions::new();
    // `create_new`: never follow a symlink planted between the check and the write.
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(&path)?;
    #[cfg(unix)]
    // The umask may have taken bits off the mode given at creation; set it exactly.
    file.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(0o600))?;
    writeln!(file, "{token}")?;
    file.sync_all()?;
    Ok((token, AdminTokenSource::File(path)))
}

/// The admin-token file must be a regular file only its owner can read: a symlink could point
/// anywhere, and a token readable by others is everyone's admin token.
fn check_private(path: &Path, meta: &std::fs::Metadata) -> std::io::Result<()> {
    let refuse = |why: String| {
        Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            format!("{}: {why}", path.display()),
        ))
    };
    if meta.file_type().is_symlink() {
        return refuse("is a symlink; refusing to read the admin token through it (replace it with the file itself, mode 0600)".into());
    }
    if !meta.is_file() {
        return refuse("is not a regular file".into());
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = meta.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            return refuse(format!(
                "has mode {mode:04o}, readable or writable by group or others; run `chmod 600` on it (and consider rotating agent tokens)"
            ));
        }
    }
    Ok(())
}

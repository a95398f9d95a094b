//! The data directory's permissions: the directory is 0700 and the database files 0600,
//! whatever the umask, because they hold token hashes and everything agents wrote.

use std::io;
use std::path::Path;

/// Creates `dir` if needed and makes it 0700.
pub fn private_dir(dir: &Path) -> io::Result<()> {
    std::fs::create_dir_all(dir)?;
    set_mode(dir, 0o700)
}

/// Makes the database file 0600 before SQLite opens it (creating it empty if needed): SQLite
/// gives its `-wal` and `-shm` files the database file's mode.
pub fn private_database(path: &Path) -> io::Result<()> {
    if !path.exists() {
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)?;
    }
    set_mode(path, 0o600)
}

/// The database's side files (`-wal`, `-shm`) that exist, made 0600 (for data directories made
/// by older versions).
pub fn private_side_files(database: &Path) -> io::Result<()> {
    for suffix in ["-wal", "-shm", "-journal"] {
        let mut name = database.as_os_str().to_owned();
        name.push(suffix);
        match set_mode(Path::new(&name), 0o600) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            other => other?,
        }
    }
    Ok(())
}

/// Sets the mode when it differs (so a read-only filesystem with the right modes still starts).
#[cfg(unix)]
fn set_mode(path: &Path, mode: u32) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    if std::fs::metadata(path)?.permissions().mode() & 0o7777 == mode {
        return Ok(());
    }
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

#[cfg(not(unix))]
fn set_mode(_: &Path, _: u32) -> io::Result<()> {
    Ok(())
}

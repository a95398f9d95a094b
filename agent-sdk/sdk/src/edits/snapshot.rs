//! The files a fix touches, as they were before it: restoring the snapshot rolls the fix back
//! (files it created are removed again).

use std::path::{Path, PathBuf};

/// Contents of some project files at one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    root: PathBuf,
    /// Relative path → contents, or `None` when the file did not exist.
    files: Vec<(String, Option<Vec<u8>>)>,
}

impl Snapshot {
    /// Records `files` (relative to `root`) as they are now.
    pub fn capture<S: AsRef<str>>(root: &Path, files: &[S]) -> std::io::Result<Snapshot> {
        let mut out = Vec::with_capacity(files.len());
        for rel in files {
            let rel = rel.as_ref();
            let contents = match std::fs::read(root.join(rel)) {
                Ok(bytes) => Some(bytes),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
                Err(e) => return Err(e),
            };
            out.push((rel.to_string(), contents));
        }
        Ok(Snapshot {
            root: root.to_path_buf(),
            files: out,
        })
    }

    /// The recorded files, relative to the root.
    pub fn files(&self) -> impl Iterator<Item = &str> {
        self.files.iter().map(|(p, _)| p.as_str())
    }

    /// The recorded files with their contents (`None`: the file did not exist).
    pub fn contents(&self) -> impl Iterator<Item = (&str, Option<&[u8]>)> {
        self.files.iter().map(|(p, c)| (p.as_str(), c.as_deref()))
    }

    /// Puts every recorded file back as it was; tries them all and reports the first error.
    pub fn restore(&self) -> std::io::Result<()> {
        let mut first_error = None;
        for (rel, contents) in &self.files {
            let path = self.root.join(rel);
            let result = match contents {
                Some(bytes) => write_atomically(&path, bytes),
                None => match std::fs::remove_file(&path) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
                    _ => Ok(()),
                },
            };
            if let Err(e) = result {
                first_error.get_or_insert(e);
            }
        }
        first_error.map_or(Ok(()), Err)
    }
}

/// Writes `bytes` to a temporary file beside `path`, then renames it over `path`, so a reader
/// never sees half a file. Keeps the old file's permissions.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.huddle-tmp"));
    std::fs::write(&tmp, bytes)?;
    if let Ok(meta) = std::fs::metadata(path) {
        let _ = std::fs::set_permissions(&tmp, meta.permissions());
    }
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn restore_puts_contents_back_and_removes_created_files() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "one").unwrap();
        let snap = Snapshot::capture(dir.path(), &["a.txt", "new.txt"]).unwrap();
        std::fs::write(dir.path().join("a.txt"), "two").unwrap();
        std::fs::write(dir.path().join("new.txt"), "x").unwrap();
        snap.restore().unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
            "one"
        );
        assert!(!dir.path().join("new.txt").exists());
    }
}

//! bwrap's command line for one command: which mounts, namespaces and variables.

use crate::process::Invocation;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// What a command gets of its own beyond the mount, user and PID namespaces.
pub(super) struct Own {
    /// A network namespace (else the caller has already entered one).
    pub net: bool,
    /// A session (`--new-session`: no writing into the caller's terminal).
    pub session: bool,
}

/// bwrap's arguments running `inv` with write access to `writable` only: (directory, path it
/// is mounted at).
pub(super) fn bwrap_args(
    writable: &[(PathBuf, PathBuf)],
    own: Own,
    inv: &Invocation,
) -> Vec<OsString> {
    let mut a = Args::default();
    a.push(["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]);
    a.push(["--tmpfs", "/dev/shm", "--tmpfs", "/tmp"]);
    let homes = home_roots();
    for home in &homes {
        a.path2("--tmpfs", home, None);
    }
    // Runners and tools installed under a home (rustup, pyenv, nvm, ~/.local/bin) stay
    // usable, read-only; the rest of the home stays hidden.
    for dir in tool_dirs(&homes, inv) {
        a.path2("--ro-bind", &dir, Some(&dir));
        if dir.ends_with(".cargo") {
            for creds in ["credentials", "credentials.toml"] {
                let f = dir.join(creds);
                if f.exists() {
                    a.path2("--ro-bind", Path::new("/dev/null"), Some(&f));
                }
            }
        }
    }
    for (dir, at) in writable {
        a.path2("--bind", dir, Some(at));
    }
    // A repository's `.git` (a directory, or a worktree's file naming its git directory) stays
    // read-only in a writable workspace: huddle's own git calls run outside the sandbox, and a
    // hook, a `core.fsmonitor` or a `.git` file pointing to a git directory of the test's
    // making would run code there.
    for (dir, at) in writable {
        let git = dir.join(".git");
        if git.symlink_metadata().is_ok() {
            a.path2("--ro-bind", &git, Some(&at.join(".git")));
        }
    }
    a.push([
        "--unshare-user",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
    ]);
    a.push(["--unshare-cgroup-try", "--cap-drop", "ALL"]);
    if own.net {
        a.push(["--unshare-net"]);
    }
    if own.session {
        a.push(["--new-session"]);
    }
    a.push(["--die-with-parent", "--setenv", "TMPDIR", "/tmp"]);
    for name in credential_vars(inv) {
        a.0.push("--unsetenv".into());
        a.0.push(name);
    }
    a.path2("--chdir", &inv.cwd, None);
    a.0.push("--".into());
    a.0.push(inv.program.clone().into_os_string());
    a.0.extend(inv.args.iter().cloned());
    a.0
}

#[derive(Default)]
struct Args(Vec<OsString>);

impl Args {
    fn push<const N: usize>(&mut self, args: [&str; N]) {
        self.0.extend(args.iter().map(OsString::from));
    }

    fn path2(&mut self, flag: &str, a: &Path, b: Option<&Path>) {
        self.0.push(flag.into());
        self.0.push(a.as_os_str().to_owned());
        if let Some(b) = b {
            self.0.push(b.as_os_str().to_owned());
        }
    }
}

/// The directories hidden behind an empty tmpfs: every user's home (`/home`, `/root`) and
/// `$HOME` wherever it is. `$HOME` keeps its path, so tools find a (private, empty, writable)
/// home there.
fn home_roots() -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = ["/home", "/root"]
        .iter()
        .map(PathBuf::from)
        .filter(|d| d.is_dir())
        .collect();
    if let Some(home) = std::env::var_os("HOME").and_then(|h| Path::new(&h).canonicalize().ok()) {
        if home != Path::new("/") && !roots.iter().any(|r| home.starts_with(r)) {
            roots.push(home);
        }
    }
    roots
}

/// The top directory under a hidden home of the program and of each `PATH` entry
/// (`/root/.pyenv/shims` → `/root/.pyenv`), and rustup's with cargo's.
fn tool_dirs(homes: &[PathBuf], inv: &Invocation) -> Vec<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut candidates: Vec<PathBuf> = std::env::split_paths(&path).collect();
    candidates.push(inv.program.clone());
    if let Some(p) = inv.env.iter().find(|(k, _)| k == "PATH") {
        candidates.extend(std::env::split_paths(&p.1));
    }
    let mut out: Vec<PathBuf> = tool_vars(inv);
    for c in candidates {
        let Some(dir) = top_under_home(homes, &c) else {
            continue;
        };
        let mut found = vec![dir.clone()];
        if dir.ends_with(".cargo") {
            found.push(dir.with_file_name(".rustup"));
        }
        for d in found {
            if d.is_dir() && !out.contains(&d) {
                out.push(d);
            }
        }
    }
    out
}

/// Variables naming where tools are, whose directories stay visible (read-only) even in
/// `/tmp` or a home: Playwright's browsers, huddle's Chromium, toolchains.
const TOOL_VARS: &[&str] = &[
    "PLAYWRIGHT_BROWSERS_PATH",
    "HUDDLE_CHROMIUM",
    "CARGO_HOME",
    "RUSTUP_HOME",
    "GOROOT",
    "GOMODCACHE",
    "VIRTUAL_ENV",
    "NVM_DIR",
];

fn tool_vars(inv: &Invocation) -> Vec<PathBuf> {
    let value = |name: &str| {
        let set = inv.env.iter().rev().find(|(k, _)| k == name);
        set.map(|(_, v)| v.clone())
            .or_else(|| std::env::var_os(name))
    };
    let mut out: Vec<PathBuf> = Vec::new();
    for name in TOOL_VARS {
        let Some(dir) = value(name).and_then(|v| Path::new(&v).canonicalize().ok()) else {
            continue;
        };
        let dir = if dir.is_file() {
            dir.parent().map(Path::to_path_buf).unwrap_or(dir)
        } else {
            dir
        };
        if dir != Path::new("/") && !out.contains(&dir) {
            out.push(dir);
        }
    }
    out
}

/// `<user's home>/<first component>` of `path` when `path` is in a hidden home.
fn top_under_home(homes: &[PathBuf], path: &Path) -> Option<PathBuf> {
    let root = homes.iter().find(|h| path.starts_with(h))?;
    // Under /home the user's own directory is one level further down.
    let depth = if root == Path::new("/home") { 2 } else { 1 };
    let rest: Vec<_> = path
        .strip_prefix(root)
        .ok()?
        .components()
        .take(depth)
        .collect();
    (rest.len() == depth).then(|| rest.iter().fold(root.clone(), |p, c| p.join(c)))
}

/// Variables of huddle's own environment that look like credentials (`*_TOKEN`, `*_SECRET`,
/// `*_KEY`, `*PASSWORD`, `AWS_*`, the ssh agent): the sandbox does not pass them on. Those the
/// run sets itself (`inv.env`) stay.
fn credential_vars(inv: &Invocation) -> Vec<OsString> {
    std::env::vars_os()
        .map(|(k, _)| k)
        .filter(|k| !inv.env.iter().any(|(set, _)| set == k))
        .filter(|k| looks_like_credential(&k.to_string_lossy()))
        .collect()
}

fn looks_like_credential(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    [
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "CREDENTIAL",
        "PRIVATE_KEY",
    ]
    .iter()
    .any(|w| n.contains(w))
        || n.ends_with("_KEY")
        || n.ends_with("_KEY_ID")
        || n.starts_with("AWS_")
        || n == "SSH_AUTH_SOCK"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tools_under_a_home_are_shown_by_their_top_directory_only() {
        let homes = vec![PathBuf::from("/home"), PathBuf::from("/root")];
        let top = |p: &str| top_under_home(&homes, Path::new(p));
        assert_eq!(top("/root/.pyenv/shims"), Some("/root/.pyenv".into()));
        assert_eq!(top("/home/ann/.cargo/bin"), Some("/home/ann/.cargo".into()));
        assert_eq!(top("/home/ann"), None, "never a whole home");
        assert_eq!(top("/usr/bin"), None);
    }

    #[test]
    fn credential_names_are_recognised_and_ordinary_ones_are_not() {
        for n in [
            "GITHUB_TOKEN",
            "AWS_PROFILE",
            "OPENAI_API_KEY",
            "DB_PASSWORD",
            "HUDDLE_TOKEN",
        ] {
            assert!(looks_like_credential(n), "{n}");
        }
        for n in ["PATH", "HOME", "PYTHONPATH", "KEYBOARD", "CI", "LANG"] {
            assert!(!looks_like_credential(n), "{n}");
        }
    }
}

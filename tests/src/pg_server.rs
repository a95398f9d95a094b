//! A PostgreSQL server of a test's own (initdb in a temporary directory, a free port), for
//! tests that stop and start the database: the shared test server (`pg.rs`) is never stopped.
//! From Debian's packages, like `scripts/test-postgres`; as root it runs as `postgres`.

use std::path::{Path, PathBuf};
use std::process::Command;

pub struct PgServer {
    dir: PathBuf,
    bin: PathBuf,
    pub port: u16,
}

fn postgres_bin() -> PathBuf {
    let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .expect("PostgreSQL is not installed: apt-get install postgresql (scripts/install-test-deps does)")
        .filter_map(|e| e.ok().map(|e| e.path().join("bin")))
        .filter(|b| b.join("postgres").exists())
        .collect();
    versions.sort_by_key(|p| {
        p.parent()
            .and_then(|v| v.file_name()?.to_str()?.parse::<u32>().ok())
            .unwrap_or(0)
    });
    versions
        .pop()
        .expect("no PostgreSQL server binaries under /usr/lib/postgresql")
}

fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    // /proc/self belongs to this process's user.
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// `program args…`, as `postgres` when we are root (the server refuses to run as root).
fn run(program: &Path, args: &[&str]) -> std::process::Output {
    let mut cmd = if is_root() {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(program);
        c
    } else {
        Command::new(program)
    };
    cmd.args(args)
        .output()
        .unwrap_or_else(|e| panic!("running {}: {e}", program.display()))
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl PgServer {
    /// A new server, started (trust authentication for the user `huddle`).
    pub fn start() -> PgServer {
        let dir = tempfile::Builder::new()
            .prefix("huddle-own-pg.")
            .tempdir_in("/tmp")
            .unwrap()
            .keep();
        if is_root() {
            let chown = Command::new("chown")
                .args(["postgres:postgres"])
                .arg(&dir)
                .status()
                .unwrap();
            assert!(chown.success(), "chown of the server directory");
        }
        let bin = postgres_bin();
        let data = dir.join("data");
        let init = run(
            &bin.join("initdb"),
            &["-A", "trust", "-U", "huddle", "-D", data.to_str().unwrap()],
        );
        assert!(
            init.status.success(),
            "initdb: {}",
            String::from_utf8_lossy(&init.stderr)
        );
        let server = PgServer {
            dir,
            bin,
            port: free_port(),
        };
        server.resume();
        server
    }

    /// The URL of database `name` on this server (`postgres` always exists).
    pub fn url(&self, name: &str) -> String {
        format!("postgres://huddle@127.0.0.1:{}/{name}", self.port)
    }

    /// Stops the server (fast shutdown: connections are cut) and waits until it is down.
    pub fn stop(&self) {
        self.pg_ctl(&["-m", "fast", "stop"]);
    }

    /// Starts it again on the same port and data, and waits until it accepts connections.
    pub fn resume(&self) {
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c max_connections=100",
            self.port,
            self.dir.display()
        );
        let log = self.dir.join("server.log");
        self.pg_ctl(&["-l", log.to_str().unwrap(), "-o", &options, "start"]);
    }

    fn pg_ctl(&self, args: &[&str]) {
        let data = self.dir.join("data");
        let mut all = vec!["-D", data.to_str().unwrap(), "-w"];
        all.extend_from_slice(args);
        let out = run(&self.bin.join("pg_ctl"), &all);
        assert!(
            out.status.success(),
            "pg_ctl {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        let data = self.dir.join("data");
        let _ = run(
            &self.bin.join("pg_ctl"),
            &["-D", data.to_str().unwrap(), "-m", "immediate", "stop"],
        );
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

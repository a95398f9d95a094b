//! A pgbouncer of a test's own (Debian's package) in front of a PostgreSQL server, with its
//! default settings but the pool mode and sizes: no `ignore_startup_parameters`.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct PgBouncer {
    child: Child,
    dir: PathBuf,
    pub port: u16,
}

fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

impl PgBouncer {
    /// pgbouncer in `pool_mode` (`session` or `transaction`) in front of the server at
    /// `server_host:server_port`, trusting the user `huddle`.
    pub fn start(server_port: u16, pool_mode: &str) -> PgBouncer {
        Self::start_sized(server_port, pool_mode, 100)
    }

    /// The same with `server_connections` per database and user: fewer than the clients make
    /// them share server connections, as a busy pooler does.
    pub fn start_sized(server_port: u16, pool_mode: &str, server_connections: u32) -> PgBouncer {
        assert!(
            std::path::Path::new("/usr/sbin/pgbouncer").exists(),
            "pgbouncer is not installed: apt-get install pgbouncer (scripts/install-test-deps does)"
        );
        let dir = tempfile::Builder::new()
            .prefix("huddle-pgbouncer.")
            .tempdir_in("/tmp")
            .unwrap()
            .keep();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        std::fs::write(dir.join("users.txt"), "\"huddle\" \"\"\n").unwrap();
        let ini = format!(
            "[databases]\n* = host=127.0.0.1 port={server_port}\n\n[pgbouncer]\n\
             listen_addr = 127.0.0.1\nlisten_port = {port}\nunix_socket_dir =\n\
             auth_type = trust\nauth_file = {users}\npool_mode = {pool_mode}\n\
             max_client_conn = 500\ndefault_pool_size = {server_connections}\n\
             logfile = {log}\npidfile =\n",
            users = dir.join("users.txt").display(),
            log = dir.join("pgbouncer.log").display(),
        );
        std::fs::write(dir.join("pgbouncer.ini"), ini).unwrap();
        let mut cmd = Command::new("/usr/sbin/pgbouncer");
        if is_root() {
            // pgbouncer will not run as root: it switches to `postgres` itself (-u), so the
            // child is pgbouncer and killing it stops the server.
            let chown = Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(&dir)
                .status()
                .unwrap();
            assert!(chown.success());
            cmd.args(["-u", "postgres"]);
        }
        let child = cmd
            .arg(dir.join("pgbouncer.ini"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting pgbouncer");
        let bouncer = PgBouncer { child, dir, port };
        let deadline = Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "pgbouncer did not listen: {}",
                std::fs::read_to_string(bouncer.dir.join("pgbouncer.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        bouncer
    }

    /// The URL of `database` through this pgbouncer.
    pub fn url(&self, database: &str) -> String {
        format!("postgres://huddle@127.0.0.1:{}/{database}", self.port)
    }
}

impl Drop for PgBouncer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

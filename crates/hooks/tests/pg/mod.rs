//! A throwaway PostgreSQL server for the tests of the PostgreSQL audit log: one per test binary, in a temporary
//! directory, stopped and removed on drop.
//!
//! The server is found through `initdb` on `PATH` or under `/usr/lib/postgresql/*/bin`. Without one the tests
//! print one line and skip, unless `AGENT_GUARD_REQUIRE_POSTGRES=1` is set, which makes a missing server a failure
//! (CI sets it; see tests/support/need.rs). initdb refuses to run as root, so as root every server command runs as
//! the `postgres` user through `runuser`, on a directory handed over to that user. Only std and tempfile are used,
//! so that any test binary of the workspace can include this file with `#[path]`.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::net::TcpListener;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

#[path = "../../../../tests/support/need.rs"]
mod need;

/// A running server; dropping it stops the server and removes its files.
pub(crate) struct PgServer {
    bin: PathBuf,
    data: PathBuf,
    sockets: PathBuf,
    port: u16,
    run_as: Option<&'static str>,
    // Declared last: removed after the server is stopped.
    dir: tempfile::TempDir,
}

impl PgServer {
    /// Starts a server, or prints why the test is skipped and returns `None`.
    ///
    /// # Panics
    /// When no server is installed and `AGENT_GUARD_REQUIRE_POSTGRES` is `1`, or when an installed server does not
    /// start.
    pub(crate) fn start_or_skip() -> Option<Self> {
        let bin = find_bin_dir();
        let missing = bin
            .is_none()
            .then(|| "no `initdb` on PATH or under /usr/lib/postgresql/*/bin".to_owned());
        if !need::POSTGRES.met(missing) {
            return None;
        }
        bin.map(Self::start)
    }

    fn start(bin: PathBuf) -> Self {
        let dir = tempfile::Builder::new()
            .prefix("agent-guard-pg-")
            .tempdir()
            .unwrap();
        let run_as = running_as_root().then_some("postgres");
        if let Some(user) = run_as {
            run(Command::new("chown").args(["-R", user]).arg(dir.path()));
        }
        let data = dir.path().join("data");
        let sockets = dir.path().to_path_buf();
        let mut server = Self {
            bin,
            data,
            sockets,
            port: 0,
            run_as,
            dir,
        };
        server.server_command(
            "initdb",
            &[
                "--no-sync",
                "--auth=trust",
                "--username=postgres",
                "--encoding=UTF8",
                "--locale=C",
                "--pgdata",
            ],
            &[server.data.as_os_str()],
        );
        server.port = free_port();
        server.pg_ctl_start();
        server
    }

    /// The URL of `database` over TCP on 127.0.0.1.
    pub(crate) fn url(&self, database: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{database}", self.port)
    }

    /// The URL of `database` through the server's unix socket.
    pub(crate) fn socket_url(&self, database: &str) -> String {
        format!(
            "postgres://postgres@localhost:{}/{database}?host={}",
            self.port,
            self.sockets.display()
        )
    }

    /// Creates an empty database and returns its TCP URL.
    pub(crate) fn create_database(&self, database: &str) -> String {
        self.client_command("createdb", &[database]);
        self.url(database)
    }

    /// Runs `sql` in `database` through psql and returns what it printed (unaligned, tuples only).
    pub(crate) fn psql(&self, database: &str, sql: &str) -> String {
        let output = self.client_command(
            "psql",
            &[
                "--no-psqlrc",
                "-At",
                "-v",
                "ON_ERROR_STOP=1",
                "--dbname",
                database,
                "--command",
                sql,
            ],
        );
        String::from_utf8(output.stdout).unwrap().trim().to_owned()
    }

    /// Stops the server, ending every session (clients see their connections closed).
    pub(crate) fn stop(&self) {
        let data = self.data.as_os_str();
        // `fast` rather than `immediate`: the restart then needs no crash recovery and takes a moment, not seconds.
        self.server_command("pg_ctl", &["--mode=fast", "--wait", "stop", "--pgdata"], &[data]);
    }

    /// Starts the stopped server again, on the same port.
    pub(crate) fn restart(&self) {
        self.pg_ctl_start();
    }

    fn pg_ctl_start(&self) {
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c max_connections=50",
            self.port,
            self.sockets.display()
        );
        let log = self.dir.path().join("server.log");
        self.server_command(
            "pg_ctl",
            &["--wait", "--timeout=60", "--options", &options, "--log"],
            &[
                log.as_os_str(),
                "start".as_ref(),
                "--pgdata".as_ref(),
                self.data.as_os_str(),
            ],
        );
    }

    /// Runs a client program (createdb, psql) as `postgres` over TCP, as [`server_command`](Self::server_command).
    fn client_command(&self, program: &str, args: &[&str]) -> Output {
        let port = self.port.to_string();
        let connection = ["--host", "127.0.0.1", "--port", &port, "--username", "postgres"];
        self.server_command(program, &[connection.as_slice(), args].concat(), &[])
    }

    /// Runs a server program and panics with its output when it fails.
    fn server_command(&self, program: &str, args: &[&str], more: &[&std::ffi::OsStr]) -> Output {
        let mut command = self.command(program);
        command.args(args).args(more).current_dir(self.dir.path());
        run(&mut command)
    }

    /// A server program, run as the `postgres` user when we are root.
    fn command(&self, program: &str) -> Command {
        let path = self.bin.join(program);
        match self.run_as {
            Some(user) => {
                let mut command = Command::new("runuser");
                command.args(["-u", user, "--"]).arg(&path);
                command
            }
            None => Command::new(&path),
        }
    }
}

impl Drop for PgServer {
    fn drop(&mut self) {
        // A server already stopped by a test answers with an error; either way it is down afterwards.
        let _stopped = self
            .command("pg_ctl")
            .args(["--mode=immediate", "--wait", "stop", "--pgdata"])
            .arg(&self.data)
            .output();
    }
}

/// The directory of `initdb`: on PATH, else the newest `/usr/lib/postgresql/<version>/bin`.
fn find_bin_dir() -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH")
        .map(|paths| std::env::split_paths(&paths).collect::<Vec<_>>())
        .unwrap_or_default();
    let found = on_path
        .into_iter()
        .map(|dir| dir.join("initdb"))
        .find(|initdb| initdb.is_file())
        .and_then(|initdb| initdb.canonicalize().ok())
        .and_then(|initdb| initdb.parent().map(Path::to_path_buf))
        // A wrapper script on PATH (Debian's pg_wrapper) has no pg_ctl beside it; then look in the versions.
        .filter(|bin| bin.join("pg_ctl").is_file());
    found.or_else(|| {
        let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
            .ok()?
            .filter_map(|entry| entry.ok().map(|entry| entry.path().join("bin")))
            .filter(|bin| bin.join("initdb").is_file())
            .collect();
        versions.sort();
        versions.pop()
    })
}

fn running_as_root() -> bool {
    std::fs::metadata("/proc/self").is_ok_and(|meta| meta.uid() == 0)
}

/// A TCP port nobody listens on right now.
pub(crate) fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn run(command: &mut Command) -> Output {
    let output = command
        .output()
        .unwrap_or_else(|error| panic!("cannot run {command:?}: {error}"));
    assert!(
        output.status.success(),
        "{command:?} failed ({}):\n{}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

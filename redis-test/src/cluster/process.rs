//! One `redis-server` process of a cluster: started, asked, killed.

use core::fmt;
use core::time::Duration;
use std::io;
use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Instant;

use super::view::Line;
use crate::certificates::{Certificates, TlsFiles};

/// How long a node's cluster bus may go unanswered before it is suspected to have failed: short,
/// so a killed master fails over in a few seconds.
const NODE_TIMEOUT_MS: u32 = 1000;

/// How long a starting node may take to answer `PING`.
const NODE_STARTUP: Duration = Duration::from_secs(10);

/// How long one command to a node may wait for its answer.
const RESPONSE: Duration = Duration::from_secs(5);

/// Ports tried for one node before giving up, should another process take a free port first.
const PORT_TRIES: usize = 5;

/// What the nodes of a TLS cluster share: the certificates, and the files they serve with.
pub(super) struct Tls {
    pub(super) certificates: Certificates,
    pub(super) files: TlsFiles,
}

/// One `redis-server` process of a cluster.
pub(super) struct Process {
    pub(super) port: u16,
    /// Speaking TLS only, clients and cluster bus alike.
    pub(super) tls: Option<Arc<Tls>>,
    /// `None` once killed.
    pub(super) child: Option<Child>,
    /// The replicas it had when killed, one of which takes over.
    pub(super) heirs: Vec<u16>,
}

impl Process {
    /// Starts a cluster-enabled node in a directory of its own under `parent`, on free ports
    /// (one for clients, one for the cluster bus), and waits until it answers.
    pub(super) fn start(parent: &Path, tls: Option<&Arc<Tls>>) -> io::Result<Process> {
        let mut last = None;
        for _ in 0..PORT_TRIES {
            // Both bound at once, so they differ; the nodes started before hold theirs.
            let (port, bus_port) = {
                let client = TcpListener::bind("127.0.0.1:0")?;
                let bus = TcpListener::bind("127.0.0.1:0")?;
                (client.local_addr()?.port(), bus.local_addr()?.port())
            };
            let dir = parent.join(port.to_string());
            std::fs::create_dir_all(&dir)?;
            match Process::launch(&dir, port, bus_port, tls) {
                Ok(process) => return Ok(process),
                Err(err) if err.kind() == io::ErrorKind::NotFound => return Err(err),
                Err(err) => last = Some(err),
            }
        }
        Err(last.unwrap_or_else(|| io::Error::other("no cluster node started")))
    }

    fn launch(dir: &Path, port: u16, bus_port: u16, tls: Option<&Arc<Tls>>) -> io::Result<Process> {
        let listen = match tls {
            Some(tls) => {
                let mut args = tls.files.args(port);
                args.extend(
                    ["--tls-cluster", "yes", "--tls-replication", "yes"].map(str::to_owned),
                );
                args
            }
            None => vec!["--port".to_owned(), port.to_string()],
        };
        let mut child = Command::new("redis-server")
            .args(listen)
            .args(["--bind", "127.0.0.1", "--protected-mode", "yes"])
            .args(["--cluster-enabled", "yes"])
            .args(["--cluster-port", &bus_port.to_string()])
            .args(["--cluster-config-file", "nodes.conf"])
            .args(["--cluster-node-timeout", &NODE_TIMEOUT_MS.to_string()])
            // A replica takes over however long ago it last heard from its master: a test's
            // failover must not hang on how busy the machine was.
            .args(["--cluster-replica-validity-factor", "0"])
            // A master serves its replica's first synchronisation at once, not 5 s later in
            // case more replicas ask.
            .args(["--repl-diskless-sync-delay", "0"])
            .args(["--save", "", "--appendonly", "no"])
            .args(["--dir", &dir.to_string_lossy()])
            .args(["--loglevel", "warning"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|err| not_installed(err, "redis-server", "redis-server"))?;
        let mut process = Process {
            port,
            tls: tls.cloned(),
            child: None,
            heirs: Vec::new(),
        };
        let started = Instant::now();
        loop {
            if let Some(status) = child.try_wait()? {
                return Err(io::Error::other(format!(
                    "cluster node redis-server on port {port} exited at once: {status}"
                )));
            }
            if process.answers() {
                process.child = Some(child);
                return Ok(process);
            }
            if started.elapsed() > NODE_STARTUP {
                let _ = child.kill();
                let _ = child.wait();
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!(
                        "cluster node redis-server on port {port} did not answer within {NODE_STARTUP:?}"
                    ),
                ));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    pub(super) fn url(&self) -> String {
        let scheme = if self.tls.is_some() {
            "rediss"
        } else {
            "redis"
        };
        format!("{scheme}://127.0.0.1:{}/", self.port)
    }

    pub(super) fn client(&self) -> io::Result<redis::Client> {
        match &self.tls {
            Some(tls) => tls.certificates.client(self.url()),
            None => redis::Client::open(self.url()),
        }
        .map_err(io::Error::other)
    }

    /// A connection whose commands wait 5 s at most.
    pub(super) fn connect(&self) -> Result<redis::Connection, String> {
        let client = self
            .client()
            .map_err(|err| format!("node {}: {err}", self.port))?;
        let connect = || -> redis::RedisResult<redis::Connection> {
            let connection = client.get_connection_with_timeout(Duration::from_secs(1))?;
            connection.set_read_timeout(Some(RESPONSE))?;
            connection.set_write_timeout(Some(RESPONSE))?;
            Ok(connection)
        };
        connect().map_err(|err| format!("node {}: {err}", self.port))
    }

    fn answers(&self) -> bool {
        self.connect()
            .and_then(|mut connection| {
                redis::cmd("PING")
                    .query::<String>(&mut connection)
                    .map_err(|err| err.to_string())
            })
            .is_ok()
    }

    /// Its `CLUSTER NODES`.
    pub(super) fn view(&self) -> Result<Vec<Line>, String> {
        let mut connection = self.connect()?;
        let text: String = redis::cmd("CLUSTER")
            .arg("NODES")
            .query(&mut connection)
            .map_err(|err| format!("CLUSTER NODES on node {}: {err}", self.port))?;
        text.lines()
            .map(Line::parse)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|err| format!("CLUSTER NODES on node {}: {err}", self.port))
    }

    /// The text of `CLUSTER INFO` or `INFO <section>`.
    pub(super) fn info(&self, command: &str, argument: &str) -> Result<String, String> {
        let mut connection = self.connect()?;
        redis::cmd(command)
            .arg(argument)
            .query(&mut connection)
            .map_err(|err| format!("{command} {argument} on node {}: {err}", self.port))
    }

    /// Kills the process (`SIGKILL`) if it runs.
    pub(super) fn stop(&mut self) -> io::Result<()> {
        if let Some(mut child) = self.child.take() {
            child.kill()?;
            child.wait()?;
        }
        Ok(())
    }
}

impl fmt::Debug for Process {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Process")
            .field("port", &self.port)
            .field("running", &self.child.is_some())
            .field("heirs", &self.heirs)
            .field("tls", &self.tls.is_some())
            .finish()
    }
}

/// `err`, with a hint to install `package` when `program` is not on `PATH`.
pub(super) fn not_installed(err: io::Error, program: &str, package: &str) -> io::Error {
    if err.kind() == io::ErrorKind::NotFound {
        io::Error::new(
            io::ErrorKind::NotFound,
            format!(
                "{program} is not on PATH: install the Debian package {package} (.ci/run does)"
            ),
        )
    } else {
        err
    }
}

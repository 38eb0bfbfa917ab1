//! One throwaway `redis-server` process.

use core::fmt;
use core::time::Duration;
use std::io;
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use crate::certificates::Certificates;
use crate::options::ServerOptions;

/// How long a starting server may take to answer `PING`.
const STARTUP: Duration = Duration::from_secs(10);

/// How often a starting server is asked.
const POLL: Duration = Duration::from_millis(10);

/// Ports tried before giving up, should another process take the free port first.
const PORT_TRIES: usize = 5;

/// A `redis-server` process on a free loopback port, with persistence off (`--save ''
/// --appendonly no`), stopped when dropped.
///
/// Each server works in a directory of its own (removed when dropped), and every start and
/// restart begins with an empty keyspace: nothing a server wrote there (a replica keeps the data
/// of its synchronisation in `dump.rdb`) is loaded by another, or by itself when restarted.
///
/// It runs the `redis-server` found on `PATH` (Debian's package `redis-server`; `.ci/run`
/// installs it when missing). It listens on 127.0.0.1 only. [`restart`](RedisServer::restart)
/// brings it back on the same port with an empty keyspace, as a server restarted without
/// persistence; [`pause`](RedisServer::pause) and [`resume`](RedisServer::resume) stop and
/// continue the process (`SIGSTOP`, `SIGCONT`).
///
/// # Examples
///
/// ```
/// use fixed_window_redis_test::RedisServer;
///
/// let server = RedisServer::start()?;
/// let mut connection = server.client()?.get_connection()?;
/// let pong: String = redis::cmd("PING").query(&mut connection)?;
/// assert_eq!(pong, "PONG");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct RedisServer {
    port: u16,
    child: Option<Child>,
    dir: PathBuf,
    options: ServerOptions,
    /// A TLS server's certificates, made once: a restarted server keeps them.
    certificates: Option<Certificates>,
}

impl RedisServer {
    /// Starts a server on a free loopback port and waits until it answers.
    ///
    /// # Errors
    ///
    /// If `redis-server` is not installed, exits at once, or does not answer within 10 s.
    ///
    /// # Examples
    ///
    /// ```
    /// let server = fixed_window_redis_test::RedisServer::start()?;
    /// assert!(server.url().starts_with("redis://127.0.0.1:"));
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn start() -> io::Result<RedisServer> {
        RedisServer::start_with(&ServerOptions::new())
    }

    /// Starts a server as `options` say, and waits until it answers: on their port if they
    /// name one, else on a free one.
    ///
    /// # Errors
    ///
    /// As [`start`](RedisServer::start); also if the chosen port is taken.
    ///
    /// # Examples
    ///
    /// A server on a port chosen beforehand, as a test does that first runs a client against
    /// that port with nothing listening.
    ///
    /// ```
    /// use fixed_window_redis_test::{RedisServer, ServerOptions};
    ///
    /// let port = RedisServer::free_port()?;
    /// assert!(redis::Client::open(format!("redis://127.0.0.1:{port}/")).unwrap().get_connection().is_err());
    /// let server = RedisServer::start_with(&ServerOptions::new().with_port(port))?;
    /// assert_eq!(server.port(), port);
    /// assert!(server.client().unwrap().get_connection().is_ok());
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn start_with(options: &ServerOptions) -> io::Result<RedisServer> {
        let certificates = if options.tls {
            Some(Certificates::generate()?)
        } else {
            None
        };
        let tries = if options.port.is_some() {
            1
        } else {
            PORT_TRIES
        };
        let mut last = None;
        for _ in 0..tries {
            let port = match options.port {
                Some(port) => port,
                None => RedisServer::free_port()?,
            };
            let dir = std::env::temp_dir()
                .join(format!("fixed-window-redis-{}-{port}", std::process::id()));
            std::fs::create_dir_all(&dir)?;
            let mut server = RedisServer {
                port,
                child: None,
                dir,
                options: options.clone(),
                certificates: certificates.clone(),
            };
            match server.launch() {
                Ok(()) => return Ok(server),
                Err(err) if err.kind() == io::ErrorKind::NotFound => return Err(err),
                Err(err) => last = Some(err),
            }
        }
        Err(last.unwrap_or_else(|| io::Error::other("redis-server did not start")))
    }

    /// A loopback port free now (the system's choice), for a server started later with
    /// [`ServerOptions::with_port`]. Another process may take it meanwhile; tests use it at
    /// once.
    ///
    /// # Errors
    ///
    /// If no loopback socket can be bound.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_ne!(fixed_window_redis_test::RedisServer::free_port()?, 0);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn free_port() -> io::Result<u16> {
        Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
    }

    /// The port it listens on.
    ///
    /// # Examples
    ///
    /// ```
    /// let server = fixed_window_redis_test::RedisServer::start()?;
    /// assert_ne!(server.port(), 0);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Its URL, `redis://127.0.0.1:<port>/`: `rediss://` for a TLS server, and with the
    /// default user's password if it has one (`rediss://:<password>@127.0.0.1:<port>/`).
    ///
    /// # Examples
    ///
    /// ```
    /// let server = fixed_window_redis_test::RedisServer::start()?;
    /// assert_eq!(server.url(), format!("redis://127.0.0.1:{}/", server.port()));
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn url(&self) -> String {
        match &self.options.password {
            Some(password) => self.address_with(&format!(":{password}@")),
            None => self.address_with(""),
        }
    }

    /// Its URL for `user` with `password` (both as written in a URL: no `:`, `@` or `/`).
    ///
    /// # Examples
    ///
    /// ```
    /// let server = fixed_window_redis_test::RedisServer::start()?;
    /// assert_eq!(server.url_as("app", "pw"), format!("redis://app:pw@127.0.0.1:{}/", server.port()));
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn url_as(&self, user: &str, password: &str) -> String {
        self.address_with(&format!("{user}:{password}@"))
    }

    fn address_with(&self, credentials: &str) -> String {
        let scheme = if self.certificates.is_some() {
            "rediss"
        } else {
            "redis"
        };
        format!("{scheme}://{credentials}127.0.0.1:{}/", self.port)
    }

    /// The certificate authority (PEM) that signed a TLS server's certificate, which its
    /// clients trust; `None` for a plain server.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_redis_test::{RedisServer, ServerOptions};
    ///
    /// let server = RedisServer::start_with(&ServerOptions::new().with_tls())?;
    /// assert!(server.authority().is_some_and(|pem| pem.starts_with("-----BEGIN CERTIFICATE-----")));
    /// assert_eq!(RedisServer::start()?.authority(), None);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn authority(&self) -> Option<&str> {
        self.certificates.as_ref().map(Certificates::authority)
    }

    /// A redis-rs client for it.
    ///
    /// # Errors
    ///
    /// Never for the URL it makes; the `Result` is redis-rs's.
    ///
    /// # Examples
    ///
    /// See [`RedisServer`].
    ///
    /// ```
    /// let server = fixed_window_redis_test::RedisServer::start()?;
    /// assert!(server.client().is_ok());
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn client(&self) -> redis::RedisResult<redis::Client> {
        self.client_for(self.url())
    }

    /// A redis-rs client for it, as `user` with `password` (a user added with
    /// [`ServerOptions::with_acl`]).
    ///
    /// # Errors
    ///
    /// If the user or password cannot be written in a URL.
    ///
    /// # Examples
    ///
    /// See [`ServerOptions::with_acl`].
    ///
    /// ```
    /// let server = fixed_window_redis_test::RedisServer::start()?;
    /// // No such user: the client is made, a connection is refused.
    /// assert!(server.client_as("nobody", "pw")?.get_connection().is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn client_as(&self, user: &str, password: &str) -> redis::RedisResult<redis::Client> {
        self.client_for(self.url_as(user, password))
    }

    /// A client for `url`, trusting a TLS server's authority.
    fn client_for(&self, url: String) -> redis::RedisResult<redis::Client> {
        match &self.certificates {
            Some(certificates) => certificates.client(url),
            None => redis::Client::open(url),
        }
    }

    /// Stops the server (`SIGKILL`): its keyspace is gone, and connections break.
    ///
    /// # Errors
    ///
    /// If the process cannot be killed or waited for.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut server = fixed_window_redis_test::RedisServer::start()?;
    /// server.stop()?;
    /// assert!(server.client().unwrap().get_connection().is_err());
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn stop(&mut self) -> io::Result<()> {
        if let Some(mut child) = self.child.take() {
            child.kill()?;
            child.wait()?;
        }
        Ok(())
    }

    /// Starts the server again on the same port, with an empty keyspace.
    ///
    /// # Errors
    ///
    /// As [`start`](RedisServer::start); also if the port was taken meanwhile.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut server = fixed_window_redis_test::RedisServer::start()?;
    /// let port = server.port();
    /// server.restart()?;
    /// assert_eq!(server.port(), port);
    /// assert!(server.client().unwrap().get_connection().is_ok());
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn restart(&mut self) -> io::Result<()> {
        self.stop()?;
        self.launch()
    }

    /// Stops the process in place (`SIGSTOP`): connections stay open and requests queue
    /// unanswered until [`resume`](RedisServer::resume).
    ///
    /// # Errors
    ///
    /// If the server is not running or the signal cannot be sent.
    ///
    /// # Examples
    ///
    /// ```
    /// let server = fixed_window_redis_test::RedisServer::start()?;
    /// server.pause()?;
    /// server.resume()?;
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn pause(&self) -> io::Result<()> {
        self.signal("-STOP")
    }

    /// Continues a paused server (`SIGCONT`).
    ///
    /// # Errors
    ///
    /// If the server is not running or the signal cannot be sent.
    ///
    /// # Examples
    ///
    /// See [`pause`](RedisServer::pause).
    ///
    /// ```
    /// let server = fixed_window_redis_test::RedisServer::start()?;
    /// server.resume()?; // continuing a running server changes nothing
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn resume(&self) -> io::Result<()> {
        self.signal("-CONT")
    }

    fn signal(&self, signal: &str) -> io::Result<()> {
        let child = self
            .child
            .as_ref()
            .ok_or_else(|| io::Error::other("the server is not running"))?;
        let status = Command::new("kill")
            .arg(signal)
            .arg(child.id().to_string())
            .status()?;
        if status.success() {
            Ok(())
        } else {
            Err(io::Error::other(format!("kill {signal} failed: {status}")))
        }
    }

    fn launch(&mut self) -> io::Result<()> {
        // A server starting finds nothing to load: a restart without persistence is empty even
        // if the server synchronised as a replica (which writes the data it received there).
        match std::fs::remove_file(self.dir.join("dump.rdb")) {
            Err(err) if err.kind() != io::ErrorKind::NotFound => return Err(err),
            _ => {}
        }
        let tls_files = match &self.certificates {
            Some(certificates) => Some(certificates.write(&self.dir)?),
            None => None,
        };
        let mut child = Command::new("redis-server")
            .args(self.options.args(self.port, tls_files))
            .args(["--bind", "127.0.0.1", "--protected-mode", "yes"])
            .args(["--save", "", "--appendonly", "no"])
            .args(["--dir", &self.dir.to_string_lossy()])
            .args(["--loglevel", "warning"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|err| {
                if err.kind() == io::ErrorKind::NotFound {
                    io::Error::new(
                        io::ErrorKind::NotFound,
                        "redis-server is not on PATH: install the Debian package redis-server (.ci/run does)",
                    )
                } else {
                    err
                }
            })?;
        let started = std::time::Instant::now();
        loop {
            if let Some(status) = child.try_wait()? {
                return Err(io::Error::other(format!(
                    "redis-server on port {} exited at once: {status}",
                    self.port
                )));
            }
            if self.answers() {
                self.child = Some(child);
                return self.add_users();
            }
            if started.elapsed() > STARTUP {
                let _ = child.kill();
                let _ = child.wait();
                return Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!(
                        "redis-server on port {} did not answer within {STARTUP:?}",
                        self.port
                    ),
                ));
            }
            std::thread::sleep(POLL);
        }
    }

    /// Runs each `ACL SETUSER` line of the options.
    fn add_users(&self) -> io::Result<()> {
        if self.options.acl.is_empty() {
            return Ok(());
        }
        let mut connection = self
            .client()
            .and_then(|client| client.get_connection())
            .map_err(io::Error::other)?;
        for line in &self.options.acl {
            redis::cmd("ACL")
                .arg("SETUSER")
                .arg(line.split_whitespace().collect::<Vec<_>>())
                .exec(&mut connection)
                .map_err(|err| io::Error::other(format!("ACL SETUSER {line}: {err}")))?;
        }
        Ok(())
    }

    fn answers(&self) -> bool {
        let Ok(client) = self.client() else {
            return false;
        };
        let Ok(mut connection) = client.get_connection_with_timeout(Duration::from_secs(1)) else {
            return false;
        };
        redis::cmd("PING").query::<String>(&mut connection).is_ok()
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl fmt::Debug for RedisServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisServer")
            .field("port", &self.port)
            .field("running", &self.child.is_some())
            .field("dir", &self.dir)
            .field("options", &self.options)
            .field("tls", &self.certificates.is_some())
            .finish()
    }
}

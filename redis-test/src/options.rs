//! How a throwaway server is started: its port, and the settings a test needs beyond the
//! defaults (TLS, a password, ACL users, a memory limit).

use crate::certificates::TlsFiles;

/// What a [`RedisServer`](crate::RedisServer) is started with, beyond the defaults (a free
/// loopback port, plain TCP, no password, no memory limit, persistence off).
///
/// # Examples
///
/// A TLS server that wants a password, with a user restricted to a few commands and keys, and
/// at most 8 MiB of data, evicting the least recently used keys.
///
/// ```
/// use fixed_window_redis_test::{RedisServer, ServerOptions};
///
/// let options = ServerOptions::new()
///     .with_tls()
///     .with_password("admin-secret")
///     .with_acl("reader on >reader-secret resetkeys ~public:* -@all +get")
///     .with_maxmemory(8 << 20, "allkeys-lru");
/// let server = RedisServer::start_with(&options)?;
/// assert!(server.url().starts_with("rediss://:admin-secret@127.0.0.1:"));
///
/// let mut admin = server.client()?.get_connection()?;
/// redis::cmd("SET").arg("public:greeting").arg("hello").exec(&mut admin)?;
/// let policy: Vec<String> = redis::cmd("CONFIG").arg("GET").arg("maxmemory-policy").query(&mut admin)?;
/// assert_eq!(policy, ["maxmemory-policy", "allkeys-lru"]);
///
/// let mut reader = server.client_as("reader", "reader-secret")?.get_connection()?;
/// let greeting: String = redis::cmd("GET").arg("public:greeting").query(&mut reader)?;
/// assert_eq!(greeting, "hello");
/// assert!(redis::cmd("SET").arg("public:greeting").arg("bye").exec(&mut reader).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServerOptions {
    pub(crate) port: Option<u16>,
    pub(crate) tls: bool,
    pub(crate) password: Option<String>,
    pub(crate) acl: Vec<String>,
    pub(crate) maxmemory: Option<(u64, String)>,
}

impl ServerOptions {
    /// The defaults: a free port, plain TCP, no password, no memory limit.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_redis_test::ServerOptions;
    ///
    /// assert_eq!(ServerOptions::new(), ServerOptions::default());
    /// ```
    pub fn new() -> ServerOptions {
        ServerOptions::default()
    }

    /// Listens on `port` (see [`RedisServer::free_port`](crate::RedisServer::free_port)).
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_redis_test::{RedisServer, ServerOptions};
    ///
    /// let port = RedisServer::free_port()?;
    /// let server = RedisServer::start_with(&ServerOptions::new().with_port(port))?;
    /// assert_eq!(server.url(), format!("redis://127.0.0.1:{port}/"));
    /// # Ok::<(), std::io::Error>(())
    /// ```
    #[must_use]
    pub fn with_port(self, port: u16) -> ServerOptions {
        ServerOptions {
            port: Some(port),
            ..self
        }
    }

    /// Speaks TLS only (`--tls-port`, the plain port off), with a certificate for `127.0.0.1`
    /// and `localhost` signed by a certificate authority made for this server alone: its
    /// [`client`](crate::RedisServer::client)s trust that authority
    /// ([`authority`](crate::RedisServer::authority)); a client that does not refuses the
    /// server. Clients need no certificate of their own. With the feature `tls` only.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_redis_test::{RedisServer, ServerOptions};
    ///
    /// let server = RedisServer::start_with(&ServerOptions::new().with_tls())?;
    /// assert!(server.url().starts_with("rediss://"));
    /// let pong: String = redis::cmd("PING").query(&mut server.client()?.get_connection()?)?;
    /// assert_eq!(pong, "PONG");
    /// // The system's authorities do not know this one.
    /// let untrusting = redis::Client::open(server.url())?;
    /// assert!(untrusting.get_connection().is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[cfg(feature = "tls")]
    #[must_use]
    pub fn with_tls(self) -> ServerOptions {
        ServerOptions { tls: true, ..self }
    }

    /// Requires `password` of the default user (`--requirepass`); the server's
    /// [`url`](crate::RedisServer::url) carries it.
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_redis_test::{RedisServer, ServerOptions};
    ///
    /// let server = RedisServer::start_with(&ServerOptions::new().with_password("s3cret"))?;
    /// assert!(server.client()?.get_connection().is_ok());
    /// let wrong = redis::Client::open(format!("redis://:wrong@127.0.0.1:{}/", server.port()))?;
    /// assert!(wrong.get_connection().is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn with_password(self, password: &str) -> ServerOptions {
        ServerOptions {
            password: Some(password.to_owned()),
            ..self
        }
    }

    /// Adds a user: `line` is what follows `ACL SETUSER` (a name, then rules separated by
    /// spaces, such as `limiter on >secret resetkeys ~app:* -@all +get`), run when the server
    /// starts and after each restart. Connect as the user with
    /// [`client_as`](crate::RedisServer::client_as).
    ///
    /// # Examples
    ///
    /// ```
    /// use fixed_window_redis_test::{RedisServer, ServerOptions};
    ///
    /// let server = RedisServer::start_with(&ServerOptions::new().with_acl("pinger on >p -@all +ping"))?;
    /// let mut pinger = server.client_as("pinger", "p")?.get_connection()?;
    /// assert_eq!(redis::cmd("PING").query::<String>(&mut pinger)?, "PONG");
    /// assert!(redis::cmd("GET").arg("k").query::<Option<String>>(&mut pinger).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn with_acl(mut self, line: &str) -> ServerOptions {
        self.acl.push(line.to_owned());
        self
    }

    /// Holds at most `bytes` of data (`--maxmemory`), and past that evicts by `policy`
    /// (`--maxmemory-policy`: `noeviction`, `allkeys-lru`, `volatile-ttl`, …).
    ///
    /// # Examples
    ///
    /// Without eviction, a write past the limit is refused.
    ///
    /// ```
    /// use fixed_window_redis_test::{RedisServer, ServerOptions};
    ///
    /// let server = RedisServer::start_with(&ServerOptions::new().with_maxmemory(2 << 20, "noeviction"))?;
    /// let mut connection = server.client()?.get_connection()?;
    /// let filler = "x".repeat(64 << 10);
    /// let refused = (0..100).find_map(|n| {
    ///     redis::cmd("SET").arg(format!("filler:{n}")).arg(&filler).exec(&mut connection).err()
    /// });
    /// assert!(refused.is_some_and(|err| err.to_string().contains("OOM")));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn with_maxmemory(self, bytes: u64, policy: &str) -> ServerOptions {
        ServerOptions {
            maxmemory: Some((bytes, policy.to_owned())),
            ..self
        }
    }

    /// The server's arguments for these options, given where its TLS files are.
    pub(crate) fn args(&self, port: u16, tls_files: Option<TlsFiles>) -> Vec<String> {
        let mut args = match tls_files {
            Some(files) => files.args(port),
            None => vec!["--port".to_owned(), port.to_string()],
        };
        if let Some(password) = &self.password {
            args.extend(["--requirepass".to_owned(), password.clone()]);
        }
        if let Some((bytes, policy)) = &self.maxmemory {
            args.extend([
                "--maxmemory".to_owned(),
                bytes.to_string(),
                "--maxmemory-policy".to_owned(),
                policy.clone(),
            ]);
        }
        args
    }
}

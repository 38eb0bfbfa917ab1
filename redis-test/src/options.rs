//! How a throwaway server is started: its port, and the settings a test needs beyond the
//! defaults.

/// What a [`RedisServer`](crate::RedisServer) is started with, beyond the defaults (a free
/// loopback port, persistence off).
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
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServerOptions {
    pub(crate) port: Option<u16>,
}

impl ServerOptions {
    /// The defaults: a free port.
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
    /// See [`ServerOptions`].
    ///
    /// ```
    /// use fixed_window_redis_test::ServerOptions;
    ///
    /// assert_ne!(ServerOptions::new().with_port(6400), ServerOptions::new());
    /// ```
    #[must_use]
    pub fn with_port(self, port: u16) -> ServerOptions {
        ServerOptions { port: Some(port) }
    }
}

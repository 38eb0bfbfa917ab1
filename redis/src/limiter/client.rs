//! Giving a running limiter a new client: rotated credentials without a restart.

use crate::config::ConfigError;
use crate::error::SharedError;
use crate::limiter::SharedRateLimiter;
use crate::server::Server;

impl<C: fixed_window::Clock> SharedRateLimiter<C> {
    /// Makes every connection from now on with `server`'s client, the next call's at once:
    /// how a rotated password (or user, or TLS certificate) takes effect without a restart.
    /// Build the new client as the first one was (`redis::Client::open` with the new URL, or a
    /// `ClusterClient` whose builder has the new `password`), and give it here once the server
    /// takes the new password, before or after it stops taking the old one (until the server
    /// takes the new client, calls are refused as it refuses it): a limiter refused by the server (`NOAUTH`,
    /// `WRONGPASS`, `NOPERM`, an untrusted certificate) makes a new connection at most every
    /// half second while calls come, so it decides again within about a second of the
    /// credentials working, with this client or the one it has. Nothing is counted or
    /// forgotten: the windows are on the server.
    ///
    /// # Errors
    ///
    /// [`SharedError::Config`] with [`ConfigError::OtherServerKind`] if `server` is a cluster's
    /// client and the limiter was built with one node's, or the reverse; the limiter then keeps
    /// its client.
    ///
    /// # Examples
    ///
    /// ```
    /// use core::time::Duration;
    /// use fixed_window_redis::{Config, ConfigError, SharedError, SharedRateLimiter, redis};
    ///
    /// # let server = fixed_window_redis_test::RedisServer::start()?;
    /// # let url = server.url();
    /// # let cluster_urls = [url.clone()];
    /// let limiter = SharedRateLimiter::connect_blocking(
    ///     Config::of("api", 5, Duration::from_secs(60))?,
    ///     redis::Client::open(url.as_str())?,
    /// )?;
    /// // The password changed: a client with the new one (here, the same URL).
    /// limiter.set_client(redis::Client::open(url.as_str())?)?;
    /// assert_eq!(limiter.try_acquire("alice")?.remaining(), Some(4));
    /// // A cluster's client for a node's limiter is refused.
    /// let err = limiter.set_client(redis::cluster::ClusterClient::new(cluster_urls)?).unwrap_err();
    /// assert!(matches!(err, SharedError::Config { error: ConfigError::OtherServerKind, .. }));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_client(&self, server: impl Into<Server>) -> Result<(), SharedError> {
        if self.connection.link().replace(server.into()) {
            Ok(())
        } else {
            Err(SharedError::Config {
                name: self.config().name(),
                error: ConfigError::OtherServerKind,
            })
        }
    }
}

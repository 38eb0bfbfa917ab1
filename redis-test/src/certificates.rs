//! A TLS server's throwaway certificates, made with the feature `tls` (rcgen, and rustls for
//! the clients that trust them). A build without it has no value of [`Certificates`]: it starts
//! no TLS server, and builds neither rcgen nor rustls, which a user of plain servers (the
//! limiter's doc examples) then does not compile.

#[cfg(feature = "tls")]
mod made;
#[cfg(feature = "tls")]
pub(crate) use self::made::Certificates;

#[cfg(not(feature = "tls"))]
pub(crate) use self::none::Certificates;

/// Where a TLS server's files are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TlsFiles {
    pub(crate) authority: String,
    pub(crate) certificate: String,
    pub(crate) key: String,
}

impl TlsFiles {
    /// `redis-server`'s arguments to speak TLS only on `port` with these files, clients
    /// unauthenticated by certificate.
    pub(crate) fn args(&self, port: u16) -> Vec<String> {
        [
            "--port",
            "0",
            "--tls-port",
            &port.to_string(),
            "--tls-cert-file",
            &self.certificate,
            "--tls-key-file",
            &self.key,
            "--tls-ca-cert-file",
            &self.authority,
            "--tls-auth-clients",
            "no",
        ]
        .map(str::to_owned)
        .to_vec()
    }
}

/// Without the feature `tls`: no certificates exist, so every TLS branch is one the compiler
/// knows is never taken.
#[cfg(not(feature = "tls"))]
mod none {
    use std::io;
    use std::path::Path;

    use super::TlsFiles;

    /// No value: a build without the feature `tls` starts no TLS server.
    #[derive(Clone, PartialEq, Eq)]
    pub(crate) enum Certificates {}

    impl Certificates {
        /// Refused: TLS servers need the feature. Never reached through the public API, whose
        /// TLS options (`ServerOptions::with_tls`, `RedisCluster::start_tls`) exist only with it.
        pub(crate) fn generate() -> io::Result<Certificates> {
            Err(io::Error::other(
                "a TLS server needs fixed-window-redis-test's feature `tls`",
            ))
        }

        pub(crate) fn write(&self, _dir: &Path) -> io::Result<TlsFiles> {
            match *self {}
        }

        pub(crate) fn authority(&self) -> &str {
            match *self {}
        }

        pub(crate) fn client(&self, _url: String) -> redis::RedisResult<redis::Client> {
            match *self {}
        }

        pub(crate) fn cluster_client(
            &self,
            _builder: redis::cluster::ClusterClientBuilder,
        ) -> redis::RedisResult<redis::cluster::ClusterClient> {
            match *self {}
        }
    }
}

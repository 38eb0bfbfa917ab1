//! The certificates made (feature `tls`): a certificate authority made for one server or
//! cluster, and the server's certificate it signed, for `127.0.0.1` and `localhost`.

use std::io;
use std::path::Path;

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose};

use super::TlsFiles;

/// The PEM texts a TLS server and its clients need.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Certificates {
    /// The authority's certificate: what a client trusts.
    authority: String,
    /// The server's certificate, signed by the authority.
    certificate: String,
    /// The server certificate's private key.
    key: String,
}

impl Certificates {
    /// A new authority, and a server certificate it signed.
    pub(crate) fn generate() -> io::Result<Certificates> {
        let authority_key = KeyPair::generate().map_err(io::Error::other)?;
        let mut authority =
            CertificateParams::new(Vec::<String>::new()).map_err(io::Error::other)?;
        authority.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        authority
            .distinguished_name
            .push(DnType::CommonName, "fixed-window test authority");
        authority.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let authority_certificate = authority
            .self_signed(&authority_key)
            .map_err(io::Error::other)?;
        let issuer = Issuer::new(authority, authority_key);

        let key = KeyPair::generate().map_err(io::Error::other)?;
        let mut server =
            CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()])
                .map_err(io::Error::other)?;
        server
            .distinguished_name
            .push(DnType::CommonName, "fixed-window test server");
        let certificate = server.signed_by(&key, &issuer).map_err(io::Error::other)?;
        Ok(Certificates {
            authority: authority_certificate.pem(),
            certificate: certificate.pem(),
            key: key.serialize_pem(),
        })
    }
}

impl Certificates {
    /// Writes the files a TLS server serves with into `dir`.
    pub(crate) fn write(&self, dir: &Path) -> io::Result<TlsFiles> {
        let write = |name: &str, text: &str| -> io::Result<String> {
            let path = dir.join(name);
            std::fs::write(&path, text)?;
            Ok(path.to_string_lossy().into_owned())
        };
        Ok(TlsFiles {
            authority: write("authority.pem", &self.authority)?,
            certificate: write("certificate.pem", &self.certificate)?,
            key: write("key.pem", &self.key)?,
        })
    }

    /// The authority's certificate (PEM): what a client trusts.
    pub(crate) fn authority(&self) -> &str {
        &self.authority
    }

    /// A redis-rs client for `url` that trusts this authority.
    pub(crate) fn client(&self, url: String) -> redis::RedisResult<redis::Client> {
        install_crypto_provider();
        redis::Client::build_with_tls(url, self.trusted())
    }

    /// A redis-rs cluster client from `builder` that trusts this authority.
    pub(crate) fn cluster_client(
        &self,
        builder: redis::cluster::ClusterClientBuilder,
    ) -> redis::RedisResult<redis::cluster::ClusterClient> {
        install_crypto_provider();
        builder.certs(self.trusted()).build()
    }

    /// What a redis-rs client is given to trust this authority.
    fn trusted(&self) -> redis::TlsCertificates {
        redis::TlsCertificates {
            client_tls: None,
            root_cert: Some(self.authority.clone().into_bytes()),
        }
    }
}

/// rustls needs a process-wide crypto provider: ring's, unless one is installed already.
fn install_crypto_provider() {
    if rustls::crypto::CryptoProvider::get_default().is_none() {
        // Another thread may install one meanwhile; either serves.
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
}

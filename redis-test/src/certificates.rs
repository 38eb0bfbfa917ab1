//! A TLS server's throwaway certificates: a certificate authority made for one server, and the
//! server's certificate it signed, for `127.0.0.1` and `localhost`.

use std::io;

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose};

/// The PEM texts a TLS server and its clients need.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct Certificates {
    /// The authority's certificate: what a client trusts.
    pub(crate) authority: String,
    /// The server's certificate, signed by the authority.
    pub(crate) certificate: String,
    /// The server certificate's private key.
    pub(crate) key: String,
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

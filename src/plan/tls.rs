//! TLS settings of a plan: trust roots, client identity, verification and resumption.

use std::path::PathBuf;

/// A client certificate chain and its private key, as PEM files.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct ClientIdentity {
    /// PEM file with the certificate, optionally followed by its chain.
    pub cert: PathBuf,
    /// PEM file with the private key (PKCS#8, PKCS#1 or SEC1). Its content is never stored.
    pub key: PathBuf,
}

/// How the client sets up TLS.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct TlsOptions {
    /// Extra PEM bundle of trusted CAs; when set, only these are trusted.
    pub ca: Option<PathBuf>,
    /// Certificate presented to servers that ask for one.
    pub identity: Option<ClientIdentity>,
    /// Skip verification of the server's certificate.
    pub insecure: bool,
    /// Resume TLS sessions on new connections (on by default).
    pub session_resumption: bool,
    /// Server name sent in SNI and verified; defaults to the URL's host.
    pub server_name: Option<String>,
}

impl Default for TlsOptions {
    fn default() -> Self {
        TlsOptions {
            ca: None,
            identity: None,
            insecure: false,
            session_resumption: true,
            server_name: None,
        }
    }
}

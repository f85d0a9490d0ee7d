//! The client's TLS configuration: trust roots, client identity, ALPN and resumption.
//! The only module of the engine that knows rustls.

use crate::plan::{HttpVersion, TlsOptions};
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::ResolvesClientCert;
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::sign::CertifiedKey;
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A TLS setting that cannot be used, with what to do about it.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// A PEM file is missing, unreadable or holds nothing usable.
    #[error("{what} {path}: {reason}")]
    File {
        /// What the file is for.
        what: &'static str,
        /// Its path.
        path: String,
        /// Why it cannot be used.
        reason: String,
    },
    /// rustls refused the combination (e.g. the key does not match the certificate).
    #[error("{0}")]
    Config(String),
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn file_err(what: &'static str, path: &Path, reason: impl ToString) -> TlsError {
    TlsError::File {
        what,
        path: path.display().to_string(),
        reason: reason.to_string(),
    }
}

fn read_certs(what: &'static str, path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    if !path.exists() {
        return Err(file_err(what, path, "no such file"));
    }
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| file_err(what, path, format!("cannot read PEM: {e}")))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| file_err(what, path, format!("not a PEM certificate file: {e}")))?;
    if certs.is_empty() {
        return Err(file_err(what, path, "holds no PEM certificate"));
    }
    Ok(certs)
}

/// Reads a PEM private key without ever echoing its content.
fn read_key(path: &Path) -> Result<PrivateKeyDer<'static>, TlsError> {
    if !path.exists() {
        return Err(file_err("private key", path, "no such file"));
    }
    PrivateKeyDer::from_pem_file(path).map_err(|_| {
        file_err(
            "private key",
            path,
            "holds no PEM private key (PKCS#8, PKCS#1 or SEC1)",
        )
    })
}

/// ALPN protocol ids to offer for an HTTP version.
fn alpn(http: HttpVersion) -> Vec<Vec<u8>> {
    match http {
        HttpVersion::Auto => vec![b"h2".to_vec(), b"http/1.1".to_vec()],
        HttpVersion::Http1 => vec![b"http/1.1".to_vec()],
        HttpVersion::Http2 => vec![b"h2".to_vec()],
    }
}

/// Builds the client configuration shared by every connection of a run: offering `http` by
/// ALPN, and TLS `version` alone when given (else 1.2 and 1.3).
pub fn client_config(
    opts: &TlsOptions,
    http: HttpVersion,
    version: Option<rustls::ProtocolVersion>,
) -> Result<Arc<ClientConfig>, TlsError> {
    let versions: &[&rustls::SupportedProtocolVersion] = match version {
        Some(rustls::ProtocolVersion::TLSv1_2) => &[&rustls::version::TLS12],
        Some(rustls::ProtocolVersion::TLSv1_3) => &[&rustls::version::TLS13],
        _ => rustls::DEFAULT_VERSIONS,
    };
    let builder = ClientConfig::builder_with_provider(provider())
        .with_protocol_versions(versions)
        .map_err(|e| TlsError::Config(e.to_string()))?;
    let builder = if opts.insecure {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AcceptAnyServerCert(provider())))
    } else {
        let mut roots = RootCertStore::empty();
        match &opts.ca {
            Some(ca) => {
                for cert in read_certs("CA bundle", ca)? {
                    roots.add(cert).map_err(|e| file_err("CA bundle", ca, e))?;
                }
            }
            None => {
                for cert in rustls_native_certs::load_native_certs().certs {
                    // A system store with one odd certificate should not stop the run.
                    let _ = roots.add(cert);
                }
            }
        }
        let webpki = rustls::client::WebPkiServerVerifier::builder_with_provider(
            Arc::new(roots),
            provider(),
        )
        .build()
        .map_err(|e| TlsError::Config(format!("the trusted CAs cannot be used: {e}")))?;
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(Remembering::new(webpki)))
    };
    let mut config = match &opts.identity {
        Some(id) => {
            let chain = read_certs("client certificate", &id.cert)?;
            let key = read_key(&id.key)?;
            builder.with_client_auth_cert(chain, key).map_err(|e| {
                TlsError::Config(format!(
                    "client certificate {} and key {} cannot be used together: {e}",
                    id.cert.display(),
                    id.key.display()
                ))
            })?
        }
        None => builder.with_no_client_auth(),
    };
    config.alpn_protocols = alpn(http);
    if !opts.session_resumption {
        config.resumption = rustls::client::Resumption::disabled();
    }
    Ok(Arc::new(config))
}

/// The same configuration, noting in the flag it returns whether a server asked for a
/// client certificate (the preflight says so when none was given).
pub fn noticing_requests(config: &Arc<ClientConfig>) -> (Arc<ClientConfig>, Arc<AtomicBool>) {
    let asked = Arc::new(AtomicBool::new(false));
    let mut config = (**config).clone();
    config.client_auth_cert_resolver = Arc::new(Noticing {
        inner: config.client_auth_cert_resolver.clone(),
        asked: asked.clone(),
    });
    (Arc::new(config), asked)
}

/// A client-certificate resolver that notes the server asked.
#[derive(Debug)]
struct Noticing {
    inner: Arc<dyn ResolvesClientCert>,
    asked: Arc<AtomicBool>,
}

impl ResolvesClientCert for Noticing {
    fn resolve(
        &self,
        root_hint_subjects: &[&[u8]],
        sigschemes: &[SignatureScheme],
    ) -> Option<Arc<CertifiedKey>> {
        self.asked.store(true, Ordering::Relaxed);
        self.inner.resolve(root_hint_subjects, sigschemes)
    }

    fn has_certs(&self) -> bool {
        self.inner.has_certs()
    }
}

/// The server name to send in SNI and verify.
pub fn server_name(opts: &TlsOptions, host: &str) -> Result<ServerName<'static>, TlsError> {
    let name = opts.server_name.as_deref().unwrap_or(host);
    ServerName::try_from(name.to_string())
        .map_err(|e| TlsError::Config(format!("{name:?} is not a valid TLS server name: {e}")))
}

/// How long a verified certificate chain is taken as verified before it is checked again
/// (its validity dates among the rest).
const REVERIFY_AFTER: Duration = Duration::from_secs(60);

/// Verifies server certificates as webpki does, remembering the chains it verified: a run
/// opening a thousand connections a second to one server gets the same chain a thousand
/// times, and checking it again (parsing, a CA signature) is a share of every full
/// handshake's CPU spent on the generator's side only. Each handshake still checks the
/// server's own signature (its possession of the key), and a chain is checked again after
/// [`REVERIFY_AFTER`].
#[derive(Debug)]
struct Remembering {
    inner: Arc<rustls::client::WebPkiServerVerifier>,
    verified: Mutex<Vec<Verified>>,
}

/// A chain verified for a name, and when.
#[derive(Debug)]
struct Verified {
    end_entity: Vec<u8>,
    intermediates: Vec<Vec<u8>>,
    name: ServerName<'static>,
    at: Instant,
}

/// Distinct chains remembered at once (a run has a few instances).
const REMEMBERED: usize = 16;

impl Remembering {
    fn new(inner: Arc<rustls::client::WebPkiServerVerifier>) -> Remembering {
        Remembering {
            inner,
            verified: Mutex::new(Vec::new()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<Verified>> {
        self.verified.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl ServerCertVerifier for Remembering {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let fresh = Instant::now();
        let same = |v: &Verified| {
            v.end_entity == end_entity.as_ref()
                && v.intermediates.len() == intermediates.len()
                && v.intermediates
                    .iter()
                    .zip(intermediates)
                    .all(|(a, b)| a.as_slice() == b.as_ref())
                && &v.name == server_name
        };
        if self
            .lock()
            .iter()
            .any(|v| same(v) && fresh.saturating_duration_since(v.at) < REVERIFY_AFTER)
        {
            return Ok(ServerCertVerified::assertion());
        }
        let verified = self.inner.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        )?;
        let mut remembered = self.lock();
        remembered.retain(|v| !same(v));
        if remembered.len() >= REMEMBERED {
            remembered.remove(0);
        }
        remembered.push(Verified {
            end_entity: end_entity.to_vec(),
            intermediates: intermediates.iter().map(|c| c.to_vec()).collect(),
            name: server_name.to_owned(),
            at: fresh,
        });
        Ok(verified)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

/// `--insecure`: accepts any server certificate but still checks handshake signatures.
#[derive(Debug)]
struct AcceptAnyServerCert(Arc<CryptoProvider>);

impl ServerCertVerifier for AcceptAnyServerCert {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::ClientIdentity;

    #[test]
    fn missing_and_empty_files_are_named_in_the_error() {
        let dir = tempfile::tempdir().unwrap();
        let opts = TlsOptions {
            ca: Some(dir.path().join("nope.pem")),
            ..TlsOptions::default()
        };
        let err = client_config(&opts, HttpVersion::Auto, None)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("nope.pem") && err.contains("no such file"),
            "{err}"
        );

        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "hello").unwrap();
        let opts = TlsOptions {
            identity: Some(ClientIdentity {
                cert: empty.clone(),
                key: empty.clone(),
            }),
            ..TlsOptions::default()
        };
        let err = client_config(&opts, HttpVersion::Auto, None)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("client certificate") && err.contains("empty.pem"),
            "{err}"
        );
    }

    #[test]
    fn a_remembered_chain_is_still_checked_for_its_name() {
        use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};
        let ca_key = KeyPair::generate().unwrap();
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let ca = ca_params.self_signed(&ca_key).unwrap();
        let key = KeyPair::generate().unwrap();
        let server = CertificateParams::new(vec!["a.test".to_string()])
            .unwrap()
            .signed_by(&key, &ca, &ca_key)
            .unwrap();
        let mut roots = RootCertStore::empty();
        roots.add(ca.der().clone()).unwrap();
        let webpki = rustls::client::WebPkiServerVerifier::builder_with_provider(
            Arc::new(roots),
            provider(),
        )
        .build()
        .unwrap();
        let verifier = Remembering::new(webpki);
        let verify = |name: &str| {
            verifier.verify_server_cert(
                server.der(),
                &[],
                &ServerName::try_from(name.to_string()).unwrap(),
                &[],
                UnixTime::now(),
            )
        };
        assert!(verify("a.test").is_ok());
        assert_eq!(verifier.lock().len(), 1, "remembered");
        assert!(verify("a.test").is_ok(), "from memory");
        assert!(
            matches!(verify("b.test"), Err(rustls::Error::InvalidCertificate(_))),
            "another name is verified, and refused"
        );
        assert_eq!(verifier.lock().len(), 1, "a refusal is not remembered");
    }

    #[test]
    fn a_key_that_does_not_match_the_certificate_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let a = rcgen::generate_simple_self_signed(vec!["a".into()]).unwrap();
        let b = rcgen::generate_simple_self_signed(vec!["b".into()]).unwrap();
        let cert = dir.path().join("a.pem");
        let key = dir.path().join("b.key");
        std::fs::write(&cert, a.cert.pem()).unwrap();
        std::fs::write(&key, b.key_pair.serialize_pem()).unwrap();
        let opts = TlsOptions {
            identity: Some(ClientIdentity { cert, key }),
            ..TlsOptions::default()
        };
        let err = client_config(&opts, HttpVersion::Auto, None)
            .unwrap_err()
            .to_string();
        assert!(err.contains("cannot be used together"), "{err}");
        assert!(!err.contains("PRIVATE KEY"), "{err}");
    }
}

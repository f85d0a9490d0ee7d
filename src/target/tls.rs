//! The target's TLS acceptor, with optional client-certificate verification.

use super::{TargetError, TargetTls};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use std::sync::Arc;

fn certs(path: &std::path::Path) -> Result<Vec<CertificateDer<'static>>, TargetError> {
    let certs = CertificateDer::pem_file_iter(path)
        .and_then(|it| it.collect::<Result<Vec<_>, _>>())
        .map_err(|e| TargetError::Tls(format!("certificate {}: {e}", path.display())))?;
    if certs.is_empty() {
        return Err(TargetError::Tls(format!(
            "certificate {}: no PEM certificate",
            path.display()
        )));
    }
    Ok(certs)
}

pub(super) fn acceptor(tls: &TargetTls) -> Result<tokio_rustls::TlsAcceptor, TargetError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let chain = certs(&tls.cert)?;
    let key = PrivateKeyDer::from_pem_file(&tls.key).map_err(|_| {
        TargetError::Tls(format!(
            "private key {}: no PEM private key",
            tls.key.display()
        ))
    })?;
    let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| TargetError::Tls(e.to_string()))?;
    let builder = match &tls.client_ca {
        Some(ca) => {
            let mut roots = rustls::RootCertStore::empty();
            for c in certs(ca)? {
                roots
                    .add(c)
                    .map_err(|e| TargetError::Tls(format!("client CA {}: {e}", ca.display())))?;
            }
            let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
                Arc::new(roots),
                provider,
            )
            .build()
            .map_err(|e| TargetError::Tls(format!("client CA {}: {e}", ca.display())))?;
            builder.with_client_cert_verifier(verifier)
        }
        None => builder.with_no_client_auth(),
    };
    let mut config = builder.with_single_cert(chain, key).map_err(|e| {
        TargetError::Tls(format!(
            "certificate {} and key {}: {e}",
            tls.cert.display(),
            tls.key.display()
        ))
    })?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(tokio_rustls::TlsAcceptor::from(Arc::new(config)))
}

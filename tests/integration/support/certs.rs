//! Test certificates made on the fly: a CA, a server certificate for 127.0.0.1 and a client
//! certificate, written as PEM files; or the same with a server certificate that has expired.

use rcgen::{BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, KeyPair};
use std::path::{Path, PathBuf};

/// Paths of the PEM files.
pub struct Certs {
    pub ca: PathBuf,
    pub server_cert: PathBuf,
    pub server_key: PathBuf,
    pub client_cert: PathBuf,
    pub client_key: PathBuf,
}

/// Writes a fresh CA, server and client certificate into `dir`.
pub fn make(dir: &Path) -> Certs {
    make_with(dir, false)
}

/// Like [`make`], but the server certificate expired in 2021 (valid from 2020-01-01 to
/// 2021-01-01); everything else is valid. Use a `dir` of its own: the file names are
/// [`make`]'s.
pub fn make_expired(dir: &Path) -> Certs {
    make_with(dir, true)
}

fn make_with(dir: &Path, expired_server: bool) -> Certs {
    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "headroom test CA");
    let ca = ca_params.self_signed(&ca_key).unwrap();

    let server_key = KeyPair::generate().unwrap();
    let mut server_params =
        CertificateParams::new(vec!["127.0.0.1".to_string(), "localhost".to_string()]).unwrap();
    server_params
        .distinguished_name
        .push(DnType::CommonName, "127.0.0.1");
    server_params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    if expired_server {
        server_params.not_before = rcgen::date_time_ymd(2020, 1, 1);
        server_params.not_after = rcgen::date_time_ymd(2021, 1, 1);
    }
    let server = server_params.signed_by(&server_key, &ca, &ca_key).unwrap();

    let client_key = KeyPair::generate().unwrap();
    let mut client_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    client_params
        .distinguished_name
        .push(DnType::CommonName, "headroom test client");
    client_params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    let client = client_params.signed_by(&client_key, &ca, &ca_key).unwrap();

    let write = |name: &str, text: String| {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    Certs {
        ca: write("ca.pem", ca.pem()),
        server_cert: write("server.pem", server.pem()),
        server_key: write("server.key", server_key.serialize_pem()),
        client_cert: write("client.pem", client.pem()),
        client_key: write("client.key", client_key.serialize_pem()),
    }
}

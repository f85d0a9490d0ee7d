//! The least an HTTP/2 client built on tokio, rustls and the `h2` crate can spend per request:
//! bench row (e)'s load (connections × streams, closed model, full speed) with nothing else —
//! no pacing, timeouts, clocks, histograms or checks, one task per connection driving its
//! streams together (the cheapest arrangement measured).
//!
//! headroom's HTTP/2 driver is built on these crates, so this is the floor under its CPU per
//! request in (e); bench.py runs it beside h2load to show how close to that floor headroom is.
//!
//! Usage: `h2_floor URL CA_PEM CONNECTIONS STREAMS SECONDS`; prints `{"done": N, "ok": N}`.

use futures_util::StreamExt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

type Send = h2::client::SendRequest<bytes::Bytes>;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [url, ca, conns, streams, secs] = args.as_slice() else {
        return Err("usage: h2_floor URL CA_PEM CONNECTIONS STREAMS SECONDS".into());
    };
    let uri: http::Uri = url.parse()?;
    let (conns, streams): (usize, usize) = (conns.parse()?, streams.parse()?);
    let end = Instant::now() + Duration::from_secs(secs.parse()?);
    let host = uri.host().ok_or("the URL has no host")?.to_string();
    let port = uri.port_u16().unwrap_or(443);

    use rustls_pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    for cert in rustls_pki_types::CertificateDer::pem_slice_iter(&std::fs::read(ca)?) {
        roots.add(cert?)?;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_root_certificates(roots)
        .with_no_client_auth();
    tls.alpn_protocols = vec![b"h2".to_vec()];
    let tls = tokio_rustls::TlsConnector::from(Arc::new(tls));

    let counts = Arc::new((AtomicU64::new(0), AtomicU64::new(0)));
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let mut tasks = Vec::new();
        for _ in 0..conns {
            let tcp = tokio::net::TcpStream::connect((host.as_str(), port)).await?;
            tcp.set_nodelay(true)?;
            let name = rustls_pki_types::ServerName::try_from(host.clone())?;
            let (send, conn) = h2::client::handshake(tls.connect(name, tcp).await?).await?;
            tokio::spawn(conn);
            tasks.push(tokio::spawn(connection(
                send,
                uri.clone(),
                streams,
                end,
                counts.clone(),
            )));
        }
        for task in tasks {
            task.await?;
        }
        Ok::<_, Box<dyn std::error::Error>>(())
    })?;
    let (done, ok) = (&counts.0, &counts.1);
    println!(
        "{{\"done\": {}, \"ok\": {}}}",
        done.load(Ordering::Relaxed),
        ok.load(Ordering::Relaxed)
    );
    Ok(())
}

/// Keeps `streams` requests in flight on one connection until `end`.
async fn connection(
    send: Send,
    uri: http::Uri,
    streams: usize,
    end: Instant,
    counts: Arc<(AtomicU64, AtomicU64)>,
) {
    let mut in_flight = futures_util::stream::FuturesUnordered::new();
    for _ in 0..streams {
        in_flight.push(one(send.clone(), uri.clone()));
    }
    while let Some((send, ok)) = in_flight.next().await {
        counts.0.fetch_add(1, Ordering::Relaxed);
        counts.1.fetch_add(u64::from(ok), Ordering::Relaxed);
        if let Some(send) = send.filter(|_| Instant::now() < end) {
            in_flight.push(one(send, uri.clone()));
        }
    }
}

/// One GET, its body read and released; the sender back (unless the connection failed) and
/// whether the answer was a 200.
async fn one(send: Send, uri: http::Uri) -> (Option<Send>, bool) {
    let Ok(mut send) = send.ready().await else {
        return (None, false);
    };
    let request = http::Request::get(uri)
        .body(())
        .expect("a GET with a parsed URI");
    let Ok((response, _)) = send.send_request(request, true) else {
        return (None, false);
    };
    let Ok(response) = response.await else {
        return (Some(send), false);
    };
    let ok = response.status() == http::StatusCode::OK;
    let mut body = response.into_body();
    while let Some(Ok(data)) = body.data().await {
        let _ = body.flow_control().release_capacity(data.len());
    }
    (Some(send), ok)
}

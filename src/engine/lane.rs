//! A lane: one task that takes jobs one after another and sends each on its connection.
//!
//! HTTP/1.1 lanes own a connection each; HTTP/2 lanes share a worker's connections as
//! streams. Lanes are added on demand (open model) or fixed (closed model).

use super::transport::{self, Exchange, Failure, RequestTemplate, Scratch, Sender};
use super::worker::Worker;
use crate::sample::{ErrorKind, Outcome, Sample};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Default)]
struct Timings {
    connect: Option<Duration>,
    tls: Option<Duration>,
    retried: bool,
    /// The pool generation of the connection the last attempt used.
    generation: Option<u64>,
}

/// One send: which request, to which instance, and its count among the sends of that
/// request.
struct Send<'a> {
    template: &'a RequestTemplate,
    instance: usize,
    k: u64,
}

/// Runs lane `id` until its worker has no more jobs for it.
pub(super) async fn run(worker: Arc<Worker>, id: usize) {
    // A connection to each instance of the service, opened when first needed.
    let mut conns: Vec<Option<Sender>> = (0..worker.run.instances()).map(|_| None).collect();
    let mut scratch = Scratch::default();
    while let Some((intended, n)) = worker.next_job(id).await {
        let instance = worker.run.instance_of(n);
        let conn = &mut conns[instance];
        execute(&worker, id, conn, &mut scratch, intended, n, instance).await;
    }
    worker.lane_finished();
}

async fn execute(
    worker: &Arc<Worker>,
    id: usize,
    conn: &mut Option<Sender>,
    scratch: &mut Scratch,
    intended: Instant,
    n: u64,
    instance: usize,
) {
    let request = worker.run.mix.pick(n);
    let send = Send {
        template: worker.run.template(instance, request),
        instance,
        k: worker.run.mix.turn(n),
    };
    let sent_at = Instant::now();
    worker.note_sent(sent_at);
    let mut timings = Timings::default();
    let result = tokio::time::timeout(
        worker.run.timeout,
        attempt(worker, id, conn, &send, scratch, &mut timings),
    )
    .await;
    let end = Instant::now();
    let (outcome, first_byte, bytes_in, bytes_out) = match result {
        Ok(Ok(Exchange {
            status,
            head_at,
            body_bytes,
            body_sent,
        })) => (
            Outcome::Status(status),
            Some(head_at - sent_at),
            body_bytes,
            body_sent,
        ),
        Ok(Err(kind)) => (Outcome::Error(kind), None, 0, 0),
        Err(_) => {
            // The connection's state is unknown after a timeout: never reuse it.
            *conn = None;
            (Outcome::Error(ErrorKind::Timeout), None, 0, 0)
        }
    };
    let template = send.template;
    let sample = Sample {
        outcome,
        // From the intended time, so a stalled server or a queue for connections is not
        // hidden (wrk2); from the actual send when the pacer sent it early.
        latency: end - intended.min(sent_at),
        service: end - sent_at,
        lag: sent_at.saturating_duration_since(intended),
        connect: timings.connect,
        tls_handshake: timings.tls,
        first_byte,
        bytes_in,
        bytes_out,
        retried: timings.retried,
        request,
        stage: worker.run.stage_of(intended, n),
        expected: matches!(outcome, Outcome::Status(code) if template.expects(code)),
    };
    worker.record(&sample, end);
}

/// Sends the request; when the server cannot have processed it (a closing connection),
/// sends it once more on a fresh connection, as any real client would.
async fn attempt(
    worker: &Arc<Worker>,
    id: usize,
    conn: &mut Option<Sender>,
    send: &Send<'_>,
    scratch: &mut Scratch,
    timings: &mut Timings,
) -> Result<Exchange, ErrorKind> {
    match attempt_once(worker, id, conn, send, scratch, timings, None).await {
        Err(Failure {
            unprocessed: true, ..
        }) => {
            timings.retried = true;
            let stale = timings.generation;
            attempt_once(worker, id, conn, send, scratch, timings, stale)
                .await
                .map_err(|f| f.kind)
        }
        other => other.map_err(|f| f.kind),
    }
}

async fn attempt_once(
    worker: &Arc<Worker>,
    id: usize,
    conn: &mut Option<Sender>,
    send: &Send<'_>,
    scratch: &mut Scratch,
    timings: &mut Timings,
    stale: Option<u64>,
) -> Result<Exchange, Failure> {
    if conn.as_ref().is_none_or(Sender::is_closed) {
        *conn = None;
        let run = &worker.run;
        let open = || async {
            let (stream, t) = run.connectors[send.instance].connect().await?;
            let sender = transport::handshake(stream, run.http, run.max_header_bytes).await?;
            Ok((sender, t))
        };
        let (sender, opened) = match &worker.h2_pools {
            Some(pools) => pools[send.instance].acquire(id, stale, open).await?,
            None => {
                let (s, t) = open().await?;
                (s, Some(t))
            }
        };
        if let Some(t) = opened {
            timings.connect = Some(t.tcp);
            timings.tls = t.tls;
        }
        *conn = Some(sender);
    }
    let sender = conn.as_mut().expect("a connection was just ensured");
    timings.generation = sender.generation();
    let result = transport::exchange(sender, send.template, send.k, scratch).await;
    if result.is_err() || !worker.run.keepalive {
        *conn = None;
    }
    result
}

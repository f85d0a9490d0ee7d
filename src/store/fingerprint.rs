//! A sharded test's identity: one digest of what defines the test, so that `headroom merge`
//! can tell shards of one test from runs of another.
//!
//! The digest is SHA-256 over a canonical JSON text (fields in declaration order, the whole
//! test's load, stages and stop) of the plan as `meta.json` describes it, plus what the
//! description leaves out but changes the test (request bodies, data sets, flow weights and
//! think times, login rules, the content of the TLS trust and certificate files). It leaves
//! out what differs between the shards of one test: the host, the time, the command line,
//! the threads, the shard itself, and where files lie (pods mount them elsewhere than the
//! machine that wrote the manifests). Rust's own
//! `DefaultHasher` is not used: its output may change between Rust versions, and shards can
//! be built by different ones.

use super::meta::RunMeta;
use crate::plan::AttackPlan;
use serde::Serialize;

/// What defines a test, in a fixed order.
#[derive(Serialize)]
struct Canonical<'a> {
    target: &'a crate::plan::Target,
    instances: Vec<&'a str>,
    requests: &'a [super::RequestMeta],
    data: Vec<Option<(&'a str, String, u64)>>,
    flows: Vec<(&'a str, u32, &'a [u16], u128)>,
    login: Option<(u16, Option<u128>, &'a [u16])>,
    slo: &'a [String],
    load: &'a crate::plan::Load,
    // Left out when even, so the fingerprints of tests made before arrivals were kept stand.
    #[serde(skip_serializing_if = "crate::plan::Arrivals::is_even")]
    arrivals: crate::plan::Arrivals,
    stages: &'a [crate::plan::Stage],
    stop: &'a crate::plan::Stop,
    // Left out when absent, so the fingerprints of tests made before the cap stand.
    #[serde(skip_serializing_if = "Option::is_none")]
    max_rate: Option<crate::plan::Rate>,
    connection: &'a crate::plan::ConnectionOptions,
    tls: Tls<'a>,
}

/// The TLS settings with each file's path replaced by a digest of its content. The private
/// key is left out: the certificate names the identity, and a key's digest is no business
/// of a run directory.
#[derive(Serialize)]
struct Tls<'a> {
    ca: Option<String>,
    cert: Option<String>,
    insecure: bool,
    session_resumption: bool,
    server_name: Option<&'a str>,
}

impl<'a> Tls<'a> {
    fn of(tls: &'a crate::plan::TlsOptions) -> Tls<'a> {
        Tls {
            ca: tls.ca.as_deref().map(file_digest),
            cert: tls.identity.as_ref().map(|id| file_digest(&id.cert)),
            insecure: tls.insecure,
            session_resumption: tls.session_resumption,
            server_name: tls.server_name.as_deref(),
        }
    }
}

/// The largest trust or certificate file read for the fingerprint; a PEM bundle of every
/// public CA is well under a megabyte.
const MOST_PEM_BYTES: u64 = 16 << 20;

/// Hex SHA-256 of a file's first [`MOST_PEM_BYTES`], or a word saying it could not be read
/// (the run then fails when it loads the file, with the reason).
fn file_digest(path: &std::path::Path) -> String {
    use std::io::Read;
    let Ok(Some((file, _))) = crate::plan::regular_file::open_regular(path) else {
        return "unreadable".into();
    };
    let mut bytes = Vec::new();
    if file.take(MOST_PEM_BYTES).read_to_end(&mut bytes).is_err() {
        return "unreadable".into();
    }
    hex(ring::digest::digest(&ring::digest::SHA256, &bytes).as_ref())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The fingerprint (lowercase hex SHA-256) of the whole test `plan`, taken before it is
/// split into shards.
pub fn plan_fingerprint(plan: &AttackPlan) -> String {
    let meta = RunMeta::describe(plan, &[], None, "", &[]);
    let canonical = Canonical {
        target: &plan.target,
        instances: plan.instances.iter().map(|t| t.url.as_str()).collect(),
        requests: &meta.requests,
        data: plan
            .requests
            .iter()
            .map(|r| {
                r.data
                    .as_ref()
                    .map(|d| (d.name.as_str(), format!("{:?}", d.pick), d.dataset.rows()))
            })
            .collect(),
        flows: plan
            .flows
            .iter()
            .map(|f| (f.name.as_str(), f.weight, &f.steps[..], f.think.as_nanos()))
            .collect(),
        login: plan.login.as_ref().map(|l| {
            (
                l.request,
                l.refresh_after.map(|d| d.as_nanos()),
                &l.refresh_on[..],
            )
        }),
        slo: &meta.slo,
        load: &plan.load,
        arrivals: plan.arrivals,
        stages: &plan.stages,
        stop: &plan.stop,
        max_rate: plan.max_rate,
        connection: &plan.connection,
        tls: Tls::of(&plan.tls),
    };
    let text = serde_json::to_vec(&canonical).expect("a plan always serialises");
    let mut digest = ring::digest::Context::new(&ring::digest::SHA256);
    digest.update(&text);
    // Bodies go in as bytes, after the text, each behind its length so that no two
    // different sets of bodies hash alike; only the digest is kept, never a body.
    for r in &plan.requests {
        digest.update(&(r.spec.body.len() as u64).to_le_bytes());
        digest.update(&r.spec.body);
    }
    hex(digest.finish().as_ref())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{Load, NamedRequest, Rate, RequestSpec, Stop, Target};
    use std::time::Duration;

    const PINNED: &str = "62f633394abec71e791e6838903d580b6270c671762193d61d113daf3df5cd45";

    fn plan(rate: f64, body: &'static [u8]) -> AttackPlan {
        let target = Target::parse("http://127.0.0.1:8080/x").unwrap();
        let spec = RequestSpec::parse("POST", &[], bytes::Bytes::from_static(body)).unwrap();
        let request = NamedRequest::single(spec, &target);
        AttackPlan::new(
            target,
            vec![request],
            Load::Open { rate: Rate(rate) },
            Stop {
                duration: Some(Duration::from_secs(10)),
                requests: None,
            },
        )
    }

    #[test]
    fn the_same_test_has_the_same_fingerprint_whatever_the_threads() {
        let a = plan(100.0, b"{}");
        let b = AttackPlan {
            threads: 7,
            ..plan(100.0, b"{}")
        };
        assert_eq!(plan_fingerprint(&a), plan_fingerprint(&b));
        assert_eq!(plan_fingerprint(&a).len(), 64);
    }

    #[test]
    fn the_fingerprint_of_a_plan_does_not_change_between_builds() {
        // Shards built from different commits or compilers must agree: a change here
        // means shards of older builds no longer merge with newer ones, and is a decision.
        assert_eq!(
            plan_fingerprint(&plan(100.0, b"{}")),
            PINNED,
            "the canonical form of a plan changed"
        );
    }

    #[test]
    fn tls_files_count_by_their_content_not_their_place() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str| {
            let path = dir.path().join(name);
            std::fs::write(&path, text).unwrap();
            path
        };
        let with = |ca: std::path::PathBuf, cert: std::path::PathBuf, key: std::path::PathBuf| {
            let mut p = plan(100.0, b"{}");
            p.tls.ca = Some(ca);
            p.tls.identity = Some(crate::plan::ClientIdentity { cert, key });
            plan_fingerprint(&p)
        };
        let here = with(
            write("ca.pem", "CA"),
            write("c.pem", "CERT"),
            write("c.key", "KEY"),
        );
        let elsewhere = with(
            write("other-ca.pem", "CA"),
            write("other-c.pem", "CERT"),
            write("other.key", "ANOTHER KEY"),
        );
        assert_eq!(
            here, elsewhere,
            "same content, other paths (and the key left out)"
        );
        let other_ca = with(
            write("ca2.pem", "ANOTHER CA"),
            write("c.pem", "CERT"),
            write("c.key", "KEY"),
        );
        assert_ne!(here, other_ca);
    }

    #[test]
    fn another_load_or_body_is_another_test() {
        let a = plan_fingerprint(&plan(100.0, b"{}"));
        assert_ne!(a, plan_fingerprint(&plan(101.0, b"{}")));
        assert_ne!(a, plan_fingerprint(&plan(100.0, b"[]")));
    }
}

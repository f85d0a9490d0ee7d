//! A sharded test's identity: one digest of what defines the test, so that `headroom merge`
//! can tell shards of one test from runs of another.
//!
//! The digest is SHA-256 over a canonical JSON text (fields in declaration order, the whole
//! test's load, stages and stop) of the plan as `meta.json` describes it, plus what the
//! description leaves out but changes the test (request bodies, data sets, flow weights and
//! think times, login rules). It leaves out what differs between the shards of one test:
//! the host, the time, the command line, the threads and the shard itself. Rust's own
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
    stages: &'a [crate::plan::Stage],
    stop: &'a crate::plan::Stop,
    connection: &'a crate::plan::ConnectionOptions,
    tls: &'a crate::plan::TlsOptions,
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
        stages: &plan.stages,
        stop: &plan.stop,
        connection: &plan.connection,
        tls: &plan.tls,
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
    digest
        .finish()
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{Load, NamedRequest, Rate, RequestSpec, Stop, Target};
    use std::time::Duration;

    const PINNED: &str = "cfadceefbf2c7413d2563cf4457ed95849385dd3945e6594913001eaf987f922";

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
    fn another_load_or_body_is_another_test() {
        let a = plan_fingerprint(&plan(100.0, b"{}"));
        assert_ne!(a, plan_fingerprint(&plan(101.0, b"{}")));
        assert_ne!(a, plan_fingerprint(&plan(100.0, b"[]")));
    }
}

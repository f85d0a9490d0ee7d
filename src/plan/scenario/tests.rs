//! Scenario files: what lowers, and every mistake reported at its place.

mod lowering {
    use super::super::*;

    const GOOD: &str = r#"
target:
  url: https://127.0.0.1:8443/v1
  tls:
    ca: certs/ca.pem
    cert: certs/client.pem
    key: certs/client.key
  headers:
    X-Team: perf
  timeout: 5s
requests:
  - name: read
    path: /kv/key1?consistent=1
    weight: 95
  - name: write
    method: put
    path: /kv/key1
    json: {value: "abc"}
    weight: 5
    expect:
      status: ["2xx", 409]
  - name: bad credentials
    path: /kv/key1
    headers:
      Authorization: Bearer wrong
    weight: 0
    expect:
      status: [401, "403"]
load:
  rate: 200
  duration: 30s
slo:
  - p95 < 250ms
  - "read: p99 < 50ms"
  - error_rate < 1%
"#;

    fn parse_at(source: &str) -> Result<AttackPlan, ScenarioError> {
        parse(source, Path::new("/scenarios/kv.yaml"), 2)
    }

    #[test]
    fn a_scenario_lowers_to_a_plan() {
        let plan = parse_at(GOOD).unwrap();
        assert_eq!(plan.requests.len(), 3);
        let write = &plan.requests[1];
        assert_eq!(write.spec.method, http::Method::PUT);
        assert_eq!(write.spec.path.as_deref(), Some("/v1/kv/key1"));
        assert_eq!(&write.spec.body[..], br#"{"value":"abc"}"#);
        assert!(write
            .spec
            .headers
            .iter()
            .any(|(k, v)| k == "content-type" && v == "application/json"));
        assert!(write.expect.allows(204) && write.expect.allows(409) && !write.expect.allows(404));
        assert_eq!(
            plan.requests[0].spec.path.as_deref(),
            Some("/v1/kv/key1?consistent=1")
        );
        assert!(plan.requests[0].expect.allows(301) && !plan.requests[0].expect.allows(401));
        assert!(plan.requests[2].expect.allows(403));
        assert_eq!(plan.weights(), vec![95, 5, 0]);
        assert_eq!(plan.load, Load::Open { rate: Rate(200.0) });
        assert_eq!(plan.connection.timeout, std::time::Duration::from_secs(5));
        let id = plan.tls.identity.as_ref().unwrap();
        assert_eq!(id.key, Path::new("/scenarios/certs/client.key"));
        assert_eq!(plan.slo.len(), 3);
        assert_eq!(plan.slo[1].request.as_deref(), Some("read"));
        assert_eq!(plan.threads, 2);

        // A query on the target's URL goes after each request's path and query.
        let plan = parse_at(&GOOD.replace("8443/v1", "8443/v1/?key=k1")).unwrap();
        let paths: Vec<_> = plan
            .requests
            .iter()
            .map(|r| r.spec.path.clone().unwrap())
            .collect();
        assert_eq!(
            paths,
            [
                "/v1/kv/key1?consistent=1&key=k1",
                "/v1/kv/key1?key=k1",
                "/v1/kv/key1?key=k1"
            ]
        );
    }

    #[test]
    fn a_safety_stop_is_written_as_one_string_or_as_a_list_like_slo() {
        let texts = |p: AttackPlan| p.abort.into_iter().map(|a| a.text).collect::<Vec<_>>();
        let want = ["errors > 5% for 30s", "p99 > 2s for 1m"];
        let one = GOOD.to_string() + "abort_when: errors > 5% for 30s, p99 > 2s for 1m\n";
        assert_eq!(texts(parse_at(&one).unwrap()), want);
        let list = GOOD.to_string() + "abort_when:\n  - errors > 5% for 30s\n  - p99 > 2s for 1m\n";
        assert_eq!(texts(parse_at(&list).unwrap()), want);
        // A bad item is named at its own line.
        let bad = GOOD.to_string() + "abort_when:\n  - errors > 5% for 30s\n  - p99 > 2 parsecs\n";
        let e = parse_at(&bad).unwrap_err().to_string();
        let line = bad.lines().position(|l| l.contains("parsecs")).unwrap() + 1;
        assert!(e.contains(&format!(":{line}:5: abort_when:")), "{e}");
        // Anything else says both ways it can be written, at its line.
        for wrong in ["{errors: 5%}", "5"] {
            let source = GOOD.to_string() + "abort_when: " + wrong + "\n";
            let e = parse_at(&source).unwrap_err().to_string();
            let line = source.lines().count();
            assert!(
                e.contains("as one string") && e.contains("or a list"),
                "{e}"
            );
            assert!(
                e.contains(&format!(":{line}:")) && e.contains("abort_when"),
                "{e}"
            );
        }
    }

    /// The error for `GOOD` with `from` replaced by `to`, and where `needle` (its `nth`
    /// occurrence) sits in that text, as ":line:column:".
    fn error_at(from: &str, to: &str, needle: &str, nth: usize) -> (String, String) {
        let source = GOOD.replace(from, to);
        assert_ne!(source, GOOD, "{from:?} is in the scenario");
        let offset = source
            .match_indices(needle)
            .nth(nth)
            .expect("needle present")
            .0;
        let before = &source[..offset];
        let line = before.matches('\n').count() + 1;
        let column = offset - before.rfind('\n').map_or(0, |i| i + 1) + 1;
        let e = parse_at(&source).unwrap_err().to_string();
        (e, format!(":{line}:{column}: "))
    }

    #[test]
    fn rates_read_as_vegeta_writes_them_and_users_take_a_cap() {
        let plan = parse_at(&GOOD.replace("rate: 200", "rate: 6000/1m")).unwrap();
        assert!(matches!(plan.load, Load::Open { rate } if (rate.0 - 100.0).abs() < 1e-9));
        let plan = parse_at(&GOOD.replace("rate: 200", "users: 50\n  max_rate: 100/s")).unwrap();
        assert!(matches!(plan.load, Load::Closed { concurrency: 50 }));
        assert_eq!(plan.max_rate.map(|r| r.0), Some(100.0));
        let e = parse_at(&GOOD.replace("rate: 200", "rate: 200\n  max_rate: 100"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("load.max_rate: caps the closed model"), "{e}");
        let e = parse_at(&GOOD.replace("rate: 200", "users: 5\n  max_rate: 0/s"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("must be a positive number"), "{e}");
    }

    #[test]
    fn mistakes_are_reported_at_their_line_and_column() {
        let cases = [
            (
                "    weight: 95",
                "    wieght: 95",
                "wieght",
                0,
                "unknown field `wieght`, expected one of",
            ),
            ("rate: 200", "rate: fast", "rate: fast", 0, "is not a rate"),
            (
                "duration: 30s",
                "duration: 30 parsecs",
                "30 parsecs",
                0,
                "invalid duration",
            ),
            (
                "[\"2xx\", 409]",
                "[\"2xx\", \"6xx\"]",
                "6xx",
                0,
                "invalid status \"6xx\"",
            ),
            (
                "name: write",
                "name: read",
                "name: read",
                1,
                "already used by requests[0]",
            ),
            (
                "read: p99 < 50ms",
                "reed: p99 < 50ms",
                "reed:",
                0,
                "\"reed\", which the scenario does not have",
            ),
            ("p95 < 250ms", "p95 > > 250ms", "p95 > >", 0, "e.g."),
            (
                "json: {value: \"abc\"}",
                "body_file: missing.json",
                "missing.json",
                0,
                "/scenarios/missing.json",
            ),
            (
                "url: https://127.0.0.1:8443/v1",
                "url: ftp://x",
                "ftp://x",
                0,
                "target: invalid URL",
            ),
        ];
        for (from, to, needle, nth, says) in cases {
            let (e, at) = error_at(from, to, needle, nth);
            assert!(e.starts_with("/scenarios/kv.yaml"), "{e}");
            assert!(e.contains(&at), "{to:?}: expected {at} in {e}");
            assert!(e.contains(says), "{to:?}: expected {says:?} in {e}");
        }
        let e = parse_at(&GOOD.replace("  rate: 200\n", ""))
            .unwrap_err()
            .to_string();
        assert!(e.contains("give rate"), "{e}");
    }

    #[test]
    fn the_schema_describes_every_section() {
        let schema = json_schema();
        for field in [
            "target",
            "requests",
            "load",
            "slo",
            "expect",
            "weight",
            "body_file",
        ] {
            assert!(schema.contains(&format!("\"{field}\"")), "{field}");
        }
    }
}

#[cfg(test)]
mod stage_tests {
    use super::super::*;

    fn plan(load: &str) -> Result<AttackPlan, String> {
        let source = format!(
            "target: {{url: 'http://127.0.0.1:9'}}\nrequests: [{{name: a, path: /}}]\nload:\n{load}"
        );
        parse(&source, Path::new("s.yaml"), 1).map_err(|e| e.to_string())
    }

    #[test]
    fn stages_lower_to_a_staged_plan_sized_by_their_peak() {
        let p = plan("  stages:\n    - {rate: [0, 500], duration: 1m}\n    - {name: hold, rate: 500, duration: 5m}\n").unwrap();
        assert_eq!(p.load, Load::Open { rate: Rate(500.0) });
        assert_eq!(p.stop.duration, Some(std::time::Duration::from_secs(360)));
        assert_eq!(
            (p.stages[0].name.as_str(), p.stages[0].from, p.stages[0].to),
            ("stage 1", 0.0, 500.0)
        );
        assert_eq!(p.stages[1].name, "hold");
        let p = plan("  stages:\n    - {users: [1, 20], duration: 30s}\n").unwrap();
        assert_eq!(p.load, Load::Closed { concurrency: 20 });
    }

    #[test]
    fn stages_that_cannot_run_are_refused() {
        let e = plan("  rate: 10\n  stages:\n    - {rate: 5, duration: 1s}\n").unwrap_err();
        assert!(e.contains("not both"), "{e}");
        let e = plan("  stages:\n    - {rate: 5, duration: 1s}\n    - {users: 5, duration: 1s}\n")
            .unwrap_err();
        assert!(e.contains("same model") && e.contains("s.yaml:5:"), "{e}");
        let e = plan("  stages:\n    - {users: 2.5, duration: 1s}\n").unwrap_err();
        assert!(e.contains("whole number"), "{e}");
        let e = plan("  stages:\n    - {rate: 0, duration: 1s}\n").unwrap_err();
        assert!(e.contains("send nothing"), "{e}");
        let e = plan("  stages:\n    - {rate: 5, duration: soon}\n").unwrap_err();
        assert!(e.contains("invalid duration"), "{e}");
        let e = plan("  stages:\n    - {rate: 5, duration: 500000000000y}\n").unwrap_err();
        assert!(e.contains("longer than a year"), "{e}");
        let e =
            plan("  stages:\n    - {rate: 5, duration: 200d}\n    - {rate: 5, duration: 200d}\n")
                .unwrap_err();
        assert!(e.contains("add up to more than a year"), "{e}");
        let e = plan("  stages:\n    - {users: 1000000, duration: 1s}\n").unwrap_err();
        assert!(e.contains("several generators"), "{e}");
    }

    #[test]
    fn arrivals_lower_from_the_load_and_from_set() {
        use crate::plan::Arrivals;
        let p = plan("  rate: 500\n  duration: 30s\n  arrivals: poisson\n").unwrap();
        assert_eq!(p.arrivals, Arrivals::Poisson { seed: None });
        let p = plan("  {rate: 500, duration: 30s, arrivals: poisson, seed: 7}\n").unwrap();
        assert_eq!(p.arrivals, Arrivals::Poisson { seed: Some(7) });
        // Ramps and stages have arrivals too.
        let p =
            plan("  arrivals: poisson\n  stages:\n    - {rate: [0, 50], duration: 2s}\n").unwrap();
        assert_eq!(p.arrivals, Arrivals::Poisson { seed: None });
        let p = plan("  rate: 500\n  duration: 30s\n").unwrap();
        assert_eq!(p.arrivals, Arrivals::Even);
        // --set, through the schema's own fields.
        let source = "target: {url: 'http://127.0.0.1:9'}\nrequests: [{name: a, path: /}]\nload: {rate: 5, duration: 1s}\n";
        let doc = Document::parse(source.into(), Path::new("s.yaml"), &|_| None).unwrap();
        let set: Vec<Override> = ["load.arrivals=poisson", "load.seed=42"]
            .iter()
            .map(|t| t.parse().unwrap())
            .collect();
        let p = doc.lower(&set, 1).unwrap();
        assert_eq!(p.arrivals, Arrivals::Poisson { seed: Some(42) });
        let e = doc
            .lower(&["load.arrivals=bursty".parse().unwrap()], 1)
            .unwrap_err()
            .to_string();
        assert!(e.contains("even") && e.contains("poisson"), "{e}");
        assert!(json_schema().contains("\"poisson\""));
    }

    #[test]
    fn arrivals_that_cannot_be_spaced_are_refused_at_their_line() {
        let e = plan("  users: 5\n  duration: 1s\n  arrivals: poisson\n").unwrap_err();
        assert!(e.contains("open model") && e.contains("s.yaml:6:"), "{e}");
        let e = plan("  rate: 5\n  duration: 1s\n  seed: 3\n").unwrap_err();
        assert!(
            e.contains("arrivals: poisson") && e.contains("s.yaml:6:"),
            "{e}"
        );
    }

    /// A header that uses both a data column and a captured value (a login's token in the
    /// target's headers, a user name from a CSV) is checked without reading past the
    /// data set's columns (it panicked: index out of bounds).
    #[test]
    fn a_header_mixing_data_and_captured_values_is_checked() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("users.csv"),
            "user,pass\nalice,a1\nbob,b2\n",
        )
        .unwrap();
        let source = r#"
target:
  url: http://127.0.0.1:9/
  headers: {Authorization: "Bearer {{ token }}", X-User: "{{ user }}"}
login: {request: login}
data:
  users: {csv: users.csv}
requests:
  - name: login
    method: POST
    path: /login
    json: {user: "{{ user }}", password: "{{ pass }}"}
    data: users
    capture: {token: {json: token}}
  - name: get
    path: /x/{{ user }}
    data: users
load: {rate: 10, duration: 1s}
"#;
        let plan = parse(source, &dir.path().join("s.yaml"), 1).unwrap();
        assert_eq!(plan.requests.len(), 2);
    }
}

#[cfg(test)]
mod instance_tests {
    use super::super::*;

    fn plan(target: &str) -> Result<AttackPlan, String> {
        let source = format!(
            "target: {target}\nrequests: [{{name: a, path: /}}]\nload: {{rate: 1, duration: 1s}}\n"
        );
        parse(&source, Path::new("i.yaml"), 1).map_err(|e| e.to_string())
    }

    #[test]
    fn instances_share_scheme_and_path_and_are_given_one_way() {
        let p = plan("{urls: ['http://127.0.0.1:1/v1', 'http://127.0.0.1:2/v1']}").unwrap();
        assert_eq!(p.targets().count(), 2);
        assert_eq!(p.instances[0].port, 2);
        let e = plan("{urls: ['http://127.0.0.1:1/v1', 'https://127.0.0.1:2/v1']}").unwrap_err();
        assert!(e.contains("share scheme and path"), "{e}");
        let e = plan("{url: 'http://a', urls: ['http://b']}").unwrap_err();
        assert!(e.contains("not both"), "{e}");
        let e = plan("{urls: []}").unwrap_err();
        assert!(e.contains("give url"), "{e}");
    }
}

#[cfg(test)]
mod flow_tests {
    use super::super::*;

    fn plan(rest: &str) -> Result<AttackPlan, String> {
        let source = format!(
            "target: {{url: 'http://127.0.0.1:9'}}\nload: {{users: 1, requests: 1}}\n{rest}"
        );
        parse(&source, Path::new("f.yaml"), 1).map_err(|e| e.to_string())
    }

    const REQUESTS: &str = "requests:\n  - {name: create, method: POST, path: /k, capture: {id: {json: data.id}}}\n  - {name: read, path: '/k/{{ id }}'}\n";

    #[test]
    fn flows_lower_with_their_steps_and_variables() {
        let p = plan(&format!(
            "{REQUESTS}flows:\n  - {{steps: [create, read], think: 1s}}\n"
        ))
        .unwrap();
        assert_eq!(p.variables, ["id"]);
        assert_eq!(p.flows[0].steps, [0, 1]);
        assert_eq!(p.flows[0].name, "flow 1");
        assert_eq!(p.flows[0].think, std::time::Duration::from_secs(1));
        assert_eq!(p.requests[0].captures[0].slot, 0);
    }

    #[test]
    fn a_value_used_before_it_is_captured_is_refused() {
        let e = plan(&format!(
            "{REQUESTS}flows:\n  - {{steps: [read, create]}}\n"
        ))
        .unwrap_err();
        assert!(
            e.contains("uses {{ id }} before any step of the flow captures it"),
            "{e}"
        );
        let e = plan(REQUESTS).unwrap_err();
        assert!(e.contains("only a flow step can pass"), "{e}");
        let e = plan(&format!(
            "{REQUESTS}flows:\n  - {{steps: [create, raed]}}\n"
        ))
        .unwrap_err();
        assert!(
            e.contains("no request named \"raed\"") && e.contains("f.yaml:"),
            "{e}"
        );
        let e = plan("requests:\n  - {name: c, path: /, capture: {x: {json: 'a..b'}}}\nflows: [{steps: [c]}]\n")
            .unwrap_err();
        assert!(e.contains("not a JSON path"), "{e}");
    }
}

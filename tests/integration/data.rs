//! Data sets in scenarios: templates filled from generated sets and files, unique rows that
//! run out, batches, and files too large to hold read back from disk.

use crate::scenario::kv_nginx;
use crate::support::attack;
use crate::support::nginx::{Nginx, Tls};
use headroom::plan::scenario;
use std::path::Path;

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs nginx: run tests/run")]
fn templates_fill_paths_headers_and_bodies_from_data_sets() {
    let nginx = kv_nginx();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("tokens.csv"),
        "token\ngood\nwrong\ngood\ngood\n",
    )
    .unwrap();
    let source = format!(
        r#"
target: {{url: "{}"}}
data:
  kv: {{generate: {{keys: 10, value_bytes: 256}}}}
  tokens: {{csv: tokens.csv}}
requests:
  - name: put
    method: PUT
    path: "/kv/{{{{ key }}}}"
    headers: {{Authorization: Bearer good}}
    json: {{value: "{{{{ value }}}}", n: "{{{{ seq }}}}"}}
    data: kv
  - name: authed
    path: /kv/x
    headers: {{Authorization: "Bearer {{{{ token }}}}"}}
    data: tokens
    expect: {{status: [200]}}
  - name: once
    path: "/kv/{{{{ key }}}}?once"
    headers: {{Authorization: Bearer good}}
    data: kv
    pick: unique
    weight: 0
load: {{users: 2, requests: 40}}
"#,
        nginx.url("http", "")
    );
    let plan = scenario::parse(&source, &dir.path().join("kv.yaml"), 1).unwrap();
    let (summary, _, _dir) = attack(&plan);
    let log = nginx.access_log();
    // 20 puts walk the 10 keys twice, in order.
    for i in 0..10 {
        let path = format!("HTTP/1.1 200 - /kv/key-{i} ");
        assert_eq!(
            log.iter().filter(|l| l.starts_with(&path)).count(),
            2,
            "{path}\n{log:?}"
        );
    }
    let put = &summary.by_request[0];
    assert_eq!((put.count, put.failures), (20, 0));
    // {"n":"<seq>","value":"<256 chars>"}: the body length is known for every seq.
    let expected_out: u64 = (0..20u64)
        .map(|seq| (r#"{"n":"","value":""}"#.len() + seq.to_string().len() + 256) as u64)
        .sum();
    assert_eq!(summary.bytes.out_total, expected_out);
    // One token in four is wrong: a quarter of the authed requests fail their expectation.
    let authed = &summary.by_request[1];
    assert_eq!((authed.count, authed.failures), (20, 5));
}

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs nginx: run tests/run")]
fn unique_data_runs_out_as_a_client_side_failure_not_a_reuse() {
    let nginx = kv_nginx();
    let source = format!(
        r#"
target: {{url: "{}", headers: {{Authorization: Bearer good}}}}
data: {{few: {{generate: {{keys: 5, value_bytes: 8}}}}}}
requests: [{{name: create, path: "/kv/{{{{ key }}}}", data: few, pick: unique}}]
load: {{rate: 200, requests: 8}}
"#,
        nginx.url("http", "")
    );
    let plan = scenario::parse(&source, Path::new("unique.yaml"), 1).unwrap();
    let (summary, _, _dir) = attack(&plan);
    assert_eq!(nginx.access_log().len(), 5, "each row sent once");
    let exhausted = summary
        .errors
        .iter()
        .find(|e| e.key == "data_exhausted")
        .unwrap();
    assert_eq!(exhausted.count, 3);
    assert_eq!(exhausted.side, headroom::sample::Side::Client);
}

#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs nginx: run tests/run")]
fn a_batch_puts_several_rows_in_one_request() {
    let nginx = Nginx::start(Tls::None);
    let source = format!(
        r#"
target: {{url: "{}"}}
data: {{kv: {{generate: {{keys: 10, value_bytes: 4}}}}}}
requests: [{{name: get many, path: "/many?k={{{{ key | batch(5) }}}}", data: kv}}]
load: {{users: 1, requests: 3}}
"#,
        nginx.url("http", "")
    );
    let plan = scenario::parse(&source, Path::new("batch.yaml"), 1).unwrap();
    attack(&plan);
    let uris: Vec<String> = nginx
        .access_log()
        .iter()
        .map(|l| l.split(' ').nth(3).unwrap_or_default().to_string())
        .collect();
    assert_eq!(
        uris,
        [
            "/many?k=key-0,key-1,key-2,key-3,key-4",
            "/many?k=key-5,key-6,key-7,key-8,key-9",
            "/many?k=key-0,key-1,key-2,key-3,key-4"
        ]
    );
}

/// A data set past what is held in memory is read back from its file as rows are needed:
/// the server gets every row's value, in order, while the generator's memory stays a small
/// fraction of the file (seed 002's set is 1 million values of 5 KB: 5 GB).
#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs nginx: run tests/run")]
fn a_data_file_larger_than_memory_takes_is_read_from_disk_row_by_row() {
    let nginx = Nginx::with_locations_and_log(
        Tls::None,
        r#"location /kv/ { return 200 "value\n"; }
    location / { return 404; }"#,
        "$request_method $request_uri $status",
    );
    let dir = tempfile::tempdir().unwrap();
    let value = |i: usize| format!("{i:07}{}", "v".repeat(4089));
    let mut rows = 0;
    {
        use std::io::Write;
        let file = std::fs::File::create(dir.path().join("kv.csv")).unwrap();
        let mut w = std::io::BufWriter::new(file);
        writeln!(w, "key,value").unwrap();
        // 96 MiB: half again what a table may hold in memory.
        while rows * 4110 < 96 * 1024 * 1024 {
            writeln!(w, "key-{rows:07},{}", value(rows)).unwrap();
            rows += 1;
        }
    }
    let scenario = dir.path().join("kv.yaml");
    std::fs::write(
        &scenario,
        format!(
            r#"
target: {{url: "{}"}}
data:
  kv: {{csv: kv.csv}}
requests:
  - {{name: get, path: "/kv/{{{{ key }}}}", data: kv}}
  - {{name: put, method: PUT, path: "/kv/{{{{ key }}}}", body: "{{{{ value }}}}", data: kv, pick: random}}
load: {{users: 2, requests: 400}}
"#,
            nginx.url("http", "")
        ),
    )
    .unwrap();
    let o = crate::support::headroom(&[
        "run",
        scenario.to_str().unwrap(),
        "-q",
        "--format",
        "json",
        "--out",
        dir.path().join("run").to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["requests"]["total"].as_u64(), Some(400), "{v}");
    assert_eq!(v["success_ratio"].as_f64(), Some(1.0), "{v}");
    // Every put carried one whole row's value (4,096 bytes), read back from the file.
    assert_eq!(v["bytes"]["out_total"].as_u64(), Some(200 * 4096), "{v}");
    let log = nginx.access_log();
    let gets: Vec<&String> = log.iter().filter(|l| l.starts_with("GET ")).collect();
    assert_eq!(gets.len(), 200);
    // The sequential gets walked the first 200 rows, each once.
    for i in 0..200 {
        let line = format!("GET /kv/key-{i:07} 200");
        assert_eq!(
            gets.iter().filter(|l| **l == &line).count(),
            1,
            "{line}\n{gets:?}"
        );
    }
    let rss = v["generator"]["peak_rss_bytes"].as_u64().unwrap();
    assert!(
        rss < 48 * 1024 * 1024,
        "peak RSS {} MiB for a 96 MiB data file",
        rss >> 20
    );
}

//! What headroom's rule calls secret goes to the Secret, never the ConfigMap, and comes back
//! in the pod as it was written; names and values YAML 1.1 would misread, and a scenario
//! file name made to end the Job's comment, are written as text in one document each.

use super::pods::lay_out;
use super::*;
use crate::support::pyyaml::PyYaml;
use headroom::plan::scenario::Document;

/// Secret values in every place the rule knows, each once: data columns (`passwd`,
/// `api_key`, `pwd`), headers (`apikey`, `X-Goog-Api-Key`, `X-Access-Key`), query values of a
/// target URL and a path (`api_key=`, `access_token=`), a header's URL's user info and query.
const SECRETS: &[&str] = &[
    "csv-passwd-2001",
    "csv-apikey-2002",
    "csv-pwd-2003",
    "hdr-apikey-1002",
    "hdr-goog-1003",
    "hdr-access-1004",
    "url-key-1001",
    "path-token-1005",
    "ref-pw-1006",
    "ref-sig-1007",
];

/// Written in the same places as the secrets, not secret: they stay in the ConfigMap.
const KEPT: &[&str] = &[
    "region=eu",
    "limit=5",
    "X-Env: staging",
    "staging-user",
    "q=x",
];

fn secret_scenario(dir: &Path) -> PathBuf {
    std::fs::write(dir.join("a.csv"), "user,passwd\nann,csv-passwd-2001\n").unwrap();
    std::fs::write(dir.join("b.csv"), "user,api_key\nbob,csv-apikey-2002\n").unwrap();
    std::fs::write(dir.join("c.csv"), "user,pwd\ncat,csv-pwd-2003\n").unwrap();
    let path = dir.join("secrets.yaml");
    std::fs::write(
        &path,
        r#"target:
  url: https://api.example.test/v1?api_key=url-key-1001&region=eu
  headers:
    apikey: hdr-apikey-1002
    X-Goog-Api-Key: hdr-goog-1003
    X-Access-Key: hdr-access-1004
    X-Env: staging
    X-User: staging-user
requests:
  - name: login
    method: POST
    path: /login?access_token=path-token-1005&limit=5
    data: a
    json: {user: "{{ user }}", passwd: "{{ passwd }}"}
  - name: keys
    path: /keys/{{ api_key }}
    data: b
  - name: search
    path: /search?q=x&pwd={{ pwd }}
    data: c
    headers: {Referer: "https://u:ref-pw-1006@example.test/?sig=ref-sig-1007"}
data:
  a: {csv: a.csv}
  b: {csv: b.csv}
  c: {csv: c.csv}
load: {rate: 30, duration: 10s}
"#,
    )
    .unwrap();
    path
}

fn base64(text: &str) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(text)
}

/// What a plan sends, as bytes: each request's method, path, headers and body, and its
/// data set's columns and rows.
fn sent(plan: &headroom::plan::AttackPlan) -> Vec<String> {
    let mut out = vec![plan.target.path_and_query.clone()];
    for r in &plan.requests {
        let headers: Vec<(String, Vec<u8>)> = r
            .spec
            .headers
            .iter()
            .map(|(n, v)| (n.to_string(), v.as_bytes().to_vec()))
            .collect();
        let data = r
            .data
            .as_ref()
            .map(|d| (d.dataset.columns().to_vec(), d.dataset.rows()));
        out.push(format!(
            "{} {} {:?} {:?} {:?} {data:?}",
            r.name, r.spec.method, r.spec.path, headers, r.spec.body
        ));
    }
    out
}

/// The issue's rows: a data column `passwd`, `api_key` or `pwd`, a header `apikey`,
/// `X-Goog-Api-Key` or `X-Access-Key`, a URL or path with `?api_key=` or `access_token=`:
/// each value is in the Secret and nowhere in the ConfigMap (plain or base64), and the pod,
/// reading the ConfigMap's scenario with the Secret's variables and files, sends what the
/// scenario as written sends.
#[test]
fn what_the_rule_calls_secret_goes_to_the_secret_and_comes_back_in_the_pod() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = secret_scenario(tmp.path());
    let bundle = kube::build(&spec(scenario.to_str().unwrap(), 2, volume()), &|_| None).unwrap();
    let files = files_of(&bundle);
    let config_text = &files["10-files.yaml"];
    let config: ConfigMap = parse(&files, "10-files.yaml");
    assert!(
        files.contains_key("20-secret.yaml"),
        "no Secret was written; the ConfigMap:\n{config_text}"
    );
    let secret: Secret = parse(&files, "20-secret.yaml");
    let in_config: String = config
        .binary_data
        .values()
        .map(|v| String::from_utf8_lossy(&decode(v)).into_owned())
        .chain(std::iter::once(config_text.clone()))
        .collect();
    let in_secret: String = secret
        .data
        .values()
        .map(|v| String::from_utf8_lossy(&decode(v)).into_owned())
        .collect();
    for s in SECRETS {
        assert!(
            !in_config.contains(s),
            "{s} is in the ConfigMap:\n{config_text}"
        );
        assert!(
            !in_config.contains(&base64(s)),
            "{s} is in the ConfigMap (base64)"
        );
        assert!(in_secret.contains(s), "{s} is not in the Secret");
    }
    for kept in KEPT {
        assert!(
            config.data["scenario.yaml"].contains(kept),
            "{kept} left the ConfigMap:\n{}",
            config.data["scenario.yaml"]
        );
    }
    // Each data set with a secret column is a Secret's file, not the ConfigMap's.
    for csv in ["a.csv", "b.csv", "c.csv"] {
        assert!(secret.data.contains_key(csv), "{csv} is not in the Secret");
        assert!(!config.data.contains_key(csv), "{csv} is in the ConfigMap");
    }

    let manifests = tmp.path().join("manifests");
    bundle.write(&manifests).unwrap();
    let pod = lay_out(&manifests, &tmp.path().join("pod"));
    let pod_scenario = PathBuf::from(&pod.args[1]);
    let env = |name: &str| {
        pod.env
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    let in_pod = Document::parse(
        std::fs::read_to_string(&pod_scenario).unwrap(),
        &pod_scenario,
        &env,
    )
    .unwrap()
    .lower(&[], 1)
    .unwrap();
    let written = Document::parse(
        std::fs::read_to_string(&scenario).unwrap(),
        &scenario,
        &|_| None,
    )
    .unwrap()
    .lower(&[], 1)
    .unwrap();
    assert_eq!(sent(&in_pod), sent(&written));
}

/// The issue's rows: `--image yes`, `--storage-class no`, a test named `on` (and a namespace
/// `n`) are read by a YAML 1.1 reader as the text they are, like every other scalar of
/// every manifest: PyYAML reads each manifest as yaml_serde (YAML 1.2) does, one document
/// each, and the Kubernetes API's schemas take them.
#[test]
#[cfg_attr(
    not(feature = "lab"),
    ignore = "needs kubernetes-validate and PyYAML: run tests/run"
)]
fn names_and_values_yaml_1_1_misreads_are_written_as_text() {
    let tmp = tempfile::tempdir().unwrap();
    let mut s = spec(
        SHOP,
        2,
        Collect::Volume {
            storage_class: Some("no".into()),
            size: "1Gi".into(),
        },
    );
    s.image = "yes".into();
    s.name = Some("on".into());
    s.namespace = Some("n".into());
    let bundle = kube::build(&s, &shop_env).unwrap();
    let mut reader = PyYaml::start();
    for (path, text) in &bundle.files {
        let docs = reader
            .load_all(text)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(docs.len(), 1, "{}:\n{text}", path.display());
        let own: serde_json::Value = yaml_serde::from_str(text).unwrap();
        assert_eq!(
            docs[0],
            own,
            "{} reads otherwise in YAML 1.1:\n{text}",
            path.display()
        );
    }
    let files = files_of(&bundle);
    let mut reader_of = |name: &str| reader.load_all(&files[name]).unwrap().remove(0);
    let job = reader_of("40-job.yaml");
    assert_eq!(job["metadata"]["name"], "on");
    assert_eq!(job["metadata"]["namespace"], "n");
    assert_eq!(
        job["metadata"]["labels"]["app.kubernetes.io/instance"],
        "on"
    );
    assert_eq!(
        job["spec"]["template"]["spec"]["containers"][0]["image"],
        "yes"
    );
    let claim = reader_of("30-runs.yaml");
    assert_eq!(claim["spec"]["storageClassName"], "no");
    let merge = reader_of("merge/50-merge.yaml");
    assert_eq!(
        merge["spec"]["template"]["spec"]["initContainers"][0]["image"],
        "yes"
    );

    bundle.write(tmp.path()).unwrap();
    kubernetes_validate(tmp.path());
}

/// The issue's row: a scenario file whose name holds a line break and `---`, as if to end
/// the Job's comment and start a Secret of its own. The name is written escaped in the
/// comments and quoted in the annotation: `40-job.yaml` stays one document (the Job), and
/// the scenario the pods read, one scenario.
#[test]
#[cfg_attr(not(feature = "lab"), ignore = "needs PyYAML: run tests/run")]
fn a_file_name_cannot_add_a_document() {
    let tmp = tempfile::tempdir().unwrap();
    let name = "s\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: pwned}\n#.yaml";
    let scenario = tmp.path().join(name);
    std::fs::write(
        &scenario,
        "target: {url: 'http://shop.example:9'}\nrequests: [{name: a, path: /}]\nload: {rate: 10, duration: 10s}\n",
    )
    .unwrap();
    let bundle = kube::build(&spec(scenario.to_str().unwrap(), 2, copy()), &|_| None).unwrap();
    let files = files_of(&bundle);
    let mut reader = PyYaml::start();
    for (path, text) in &files {
        let docs = reader
            .load_all(text)
            .unwrap_or_else(|e| panic!("{path}: {e}"));
        assert_eq!(docs.len(), 1, "{path}:\n{text}");
        assert_ne!(docs[0]["kind"], "Secret", "{path}:\n{text}");
    }
    let job = reader.load_all(&files["40-job.yaml"]).unwrap().remove(0);
    assert_eq!(
        job["metadata"]["annotations"]["headroom/scenario"],
        scenario.to_str().unwrap()
    );
    // The comments say the name, escaped: one line each.
    assert!(
        files["40-job.yaml"].contains("s\\n---\\napiVersion: v1"),
        "{}",
        files["40-job.yaml"]
    );
    let config: ConfigMap = parse(&files, "10-files.yaml");
    let pods_read = reader.load_all(&config.data["scenario.yaml"]).unwrap();
    assert_eq!(pods_read.len(), 1, "{}", config.data["scenario.yaml"]);
    assert!(pods_read[0]["requests"].is_array());
}

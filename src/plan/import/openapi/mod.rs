//! OpenAPI 3 documents (YAML or JSON): one request per operation, named by its
//! `operationId` (else method and path), path parameters and required query and header
//! parameters filled from their examples (else from their schema), the request body from its
//! `example`/`examples` or built from its schema (`$ref`s to `#/components/…` resolved), the
//! documented 2xx statuses expected, and the security schemes' credentials as variables.

use super::draft::{split_url, Body, Draft, Origin};
use super::{assemble, read_input, ImportError, Imported};
use crate::plan::scenario::file::HttpChoice;
use serde_json::Value;
use std::path::Path;

mod example;
use example::{first_example, from_schema, parameter_example, Budget, MAX_EXAMPLE, MAX_EXAMPLES};

/// How deep `$ref`s and schemas are followed: a cycle (a tree node holding its children)
/// ends here instead of looping.
const MAX_DEPTH: usize = 12;

/// Collections open at once in the document: far more than an API description nests, and
/// yaml_serde refuses deeper ones anyway, after a parse whose time grows with the square of
/// the depth. Checked before the parse.
const MAX_NESTING: usize = 128;

/// Nodes in the document: a large API (GitHub's, 10 MB) has well under a million. Each takes
/// about 250 bytes at the peak of the parse (a million: 240 MB), so this bounds it to about
/// half a gigabyte.
const MAX_NODES: u64 = 2_000_000;
/// The methods an OpenAPI path item may hold, in the order they are imported.
const METHODS: &[&str] = &[
    "get", "put", "post", "delete", "patch", "head", "options", "trace",
];

/// A scenario from the OpenAPI document at `path`; `server` replaces its `servers`.
pub fn import(path: &Path, server: Option<&str>) -> Result<Imported, ImportError> {
    let text = read_input(path)?;
    from_text(&text, &path.display().to_string(), server)
}

/// A scenario from the text of an OpenAPI document (YAML or JSON) read from `source`.
pub fn from_text(text: &str, source: &str, server: Option<&str>) -> Result<Imported, ImportError> {
    let malformed = |at, message| ImportError::Malformed {
        source_name: source.to_string(),
        at,
        message,
    };
    let limits = headroom_yaml_limits::Limits {
        depth: MAX_NESTING,
        nodes: MAX_NODES,
    };
    match headroom_yaml_limits::check(text, limits) {
        Ok(()) => {}
        Err(headroom_yaml_limits::Exceeded::Depth { line, column }) => {
            return Err(malformed(
                Some((line as usize, column as usize)),
                format!("nested deeper than {MAX_NESTING} levels, far past what an OpenAPI document needs; is it one?"),
            ))
        }
        Err(headroom_yaml_limits::Exceeded::Nodes { line, column }) => {
            return Err(malformed(
                Some((line as usize, column as usize)),
                format!("more than {MAX_NODES} values; import a part of the document (its paths for one service)"),
            ))
        }
    }
    // Read through YAML (JSON is YAML), keeping the document's order of paths.
    let doc: yaml_serde::Value = yaml_serde::from_str(text).map_err(|e| {
        malformed(
            e.location().map(|l| (l.line(), l.column())),
            super::without_values(&strip_location(&e.to_string())),
        )
    })?;
    from_document(&doc, source, server)
}

fn strip_location(message: &str) -> String {
    match message.find(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message.to_string(),
    }
}

/// A scenario from a parsed document.
pub fn from_document(
    doc: &yaml_serde::Value,
    source: &str,
    server: Option<&str>,
) -> Result<Imported, ImportError> {
    let unsupported = |why: String| ImportError::Unsupported(format!("{source}: {why}"));
    if !doc.is_mapping() {
        return Err(unsupported(
            "not an OpenAPI document (its top level is not a mapping)".into(),
        ));
    }
    match doc.get("openapi").and_then(scalar_text) {
        Some(v) if v.starts_with("3.") => {}
        Some(v) => {
            return Err(unsupported(format!(
                "OpenAPI {v} is not supported; import an OpenAPI 3.x document"
            )))
        }
        None if doc.get("swagger").is_some() => {
            return Err(unsupported(
                "a Swagger (OpenAPI 2) document; convert it to OpenAPI 3 first (e.g. `npx swagger2openapi FILE -o out.yaml`) and import that".into(),
            ))
        }
        None => return Err(unsupported("not an OpenAPI document: it has no `openapi: 3.x` field".into())),
    }
    // serde_json's view of the document for values (examples, schemas); the YAML one keeps order.
    let json_doc: Value = serde_json::to_value(doc).map_err(|e| {
        unsupported(format!(
            "a value cannot be read as JSON ({})",
            super::without_values(&e.to_string())
        ))
    })?;
    let origin = origin(&json_doc, source, server)?;
    let mut drafts = Vec::new();
    let mut notes = Vec::new();
    let mut budget = Budget::new(MAX_EXAMPLES);
    let Some(paths) = doc.get("paths").and_then(|p| p.as_mapping()) else {
        return Err(ImportError::Empty(format!("{source} has no paths")));
    };
    for (path_key, item) in paths {
        let Some(path_template) = path_key.as_str() else {
            continue;
        };
        let item_json = &json_doc["paths"][path_template];
        let Some(item_map) = item.as_mapping() else {
            continue;
        };
        for (method_key, _) in item_map {
            let Some(method) = method_key.as_str().filter(|m| METHODS.contains(m)) else {
                continue;
            };
            let op = &item_json[method];
            drafts.push(operation(
                &json_doc,
                path_template,
                method,
                item_json,
                op,
                &mut notes,
                &mut budget,
            )?);
        }
    }
    if budget.left == 0 {
        notes.push(format!(
            "the examples built from the document's schemas add up to more than {} MiB: those past it were left empty (null); fill them in",
            MAX_EXAMPLES >> 20
        ));
    }
    notes.sort();
    notes.dedup();
    assemble(&origin, drafts, source, notes)
}

/// The target: `server`, else the first of `servers` with its variables' defaults.
fn origin(doc: &Value, source: &str, server: Option<&str>) -> Result<Origin, ImportError> {
    let url = match server {
        Some(s) => s.to_string(),
        None => {
            let first = &doc["servers"][0];
            let Some(url) = first["url"].as_str() else {
                return Err(ImportError::Unsupported(format!(
                    "{source} names no server; give one with --server http://host:port/base"
                )));
            };
            let mut url = url.to_string();
            if let Some(vars) = first["variables"].as_object() {
                for (name, v) in vars {
                    let value = v["default"].as_str().unwrap_or_default();
                    url = url.replace(&format!("{{{name}}}"), value);
                }
            }
            if !url.contains("://") {
                return Err(ImportError::Unsupported(format!(
                    "{source}'s server is relative ({url}); give the whole base URL with --server http://host:port{url}"
                )));
            }
            url
        }
    };
    let (scheme, authority, base, user) = split_url(&url, "the server URL")?;
    if user.is_some() {
        return Err(ImportError::Unsupported(
            "the server URL holds user:password@; take it out and set the credential as a header"
                .into(),
        ));
    }
    Ok(Origin {
        scheme,
        authority,
        base_path: base
            .split('?')
            .next()
            .unwrap_or("")
            .trim_end_matches('/')
            .to_string(),
        insecure: false,
        http: HttpChoice::Auto,
    })
}

fn operation(
    doc: &Value,
    path_template: &str,
    method: &str,
    item: &Value,
    op: &Value,
    notes: &mut Vec<String>,
    total: &mut Budget,
) -> Result<Draft, ImportError> {
    let label = format!("{} {path_template}", method.to_ascii_uppercase());
    let mut budget = total.part(MAX_EXAMPLE);
    // Path-level parameters apply unless the operation names the same one.
    let mut params: Vec<&Value> = Vec::new();
    let mut named = std::collections::HashSet::new();
    for p in op["parameters"]
        .as_array()
        .into_iter()
        .flatten()
        .chain(item["parameters"].as_array().into_iter().flatten())
    {
        let p = resolve(doc, p, 0);
        if named.insert((p["name"].as_str(), p["in"].as_str())) {
            params.push(p);
        }
    }
    let mut in_path = std::collections::HashMap::new();
    let mut query = Vec::new();
    let mut headers = Vec::new();
    for p in params {
        let Some(name) = p["name"].as_str() else {
            continue;
        };
        let required = p["required"].as_bool().unwrap_or(false);
        let example = parameter_example(doc, p, &mut budget);
        match p["in"].as_str() {
            Some("path") => {
                let value = example.map(|v| text_of(&v)).unwrap_or_else(|| "1".into());
                in_path.entry(name).or_insert_with(|| encode(&value));
            }
            Some("query") if required || example.is_some() => {
                let value = example.map(|v| text_of(&v)).unwrap_or_default();
                query.push(format!("{}={}", encode(name), encode(&value)));
            }
            Some("header") if required => {
                let value = example.map(|v| text_of(&v)).unwrap_or_default();
                headers.push((name.to_string(), value));
            }
            Some("cookie") if required => {
                notes.push(format!(
                    "{label}: the cookie parameter {name} was left out; add a Cookie header"
                ));
            }
            _ => {}
        }
    }
    let mut path = fill_path(path_template, &in_path);
    security(doc, op, &mut headers, &mut query, notes, &label);
    if !query.is_empty() {
        path.push('?');
        path.push_str(&query.join("&"));
    }
    let body = request_body(doc, op, &label, notes, &mut budget);
    if budget.cut {
        notes.push(format!(
            "{label}: its example was cut at {} KiB (its schema holds itself many times over); values past it are null: edit them",
            MAX_EXAMPLE >> 10
        ));
    }
    total.spent(&budget);
    if let Some(b) = &body {
        if let Some(ct) = &b.content_type {
            if ct.contains("json")
                && !headers
                    .iter()
                    .any(|(h, _): &(String, String)| h.eq_ignore_ascii_case("accept"))
            {
                headers.push(("Accept".into(), "application/json".into()));
            }
        }
    }
    Ok(Draft {
        // Named by its operationId when it has one (the name the API's own documentation
        // uses), else by method and path template, not by the example filled in.
        name: Some(op["operationId"].as_str().map_or(label, str::to_string)),
        method: method.to_ascii_uppercase(),
        path,
        headers,
        body,
        expect: success_statuses(op),
    })
}

/// `value`, or what its `$ref` (`#/components/…`) points at, followed a bounded number of times.
fn resolve<'a>(doc: &'a Value, value: &'a Value, depth: usize) -> &'a Value {
    match value["$ref"].as_str() {
        Some(r) if depth < MAX_DEPTH => match r.strip_prefix('#') {
            Some(pointer) => match doc.pointer(pointer) {
                Some(target) => resolve(doc, target, depth + 1),
                None => value,
            },
            None => value,
        },
        _ => value,
    }
}

/// `template` with each `{name}` of `values` filled in, in one pass (a replace per parameter
/// was a pass over the path each).
fn fill_path(template: &str, values: &std::collections::HashMap<&str, String>) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after
            .find('}')
            .and_then(|close| Some((close, values.get(&after[..close])?)))
        {
            Some((close, value)) => {
                out.push_str(value);
                rest = &after[close + 1..];
            }
            None => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// A value as it goes in a path, query or header.
fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(items) => items.iter().map(text_of).collect::<Vec<_>>().join(","),
        other => other.to_string(),
    }
}

/// Percent-encoding for a path segment or query value.
fn encode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The credential the operation's security (or the document's) asks for, as a header or
/// query parameter whose value the importer then takes out as a variable. Only the first
/// alternative is used: a request carries one.
fn security(
    doc: &Value,
    op: &Value,
    headers: &mut Vec<(String, String)>,
    query: &mut Vec<String>,
    notes: &mut Vec<String>,
    label: &str,
) {
    let requirement = match op.get("security") {
        Some(s) => s,
        None => &doc["security"],
    };
    let Some(first) = requirement
        .as_array()
        .and_then(|a| a.first())
        .and_then(Value::as_object)
    else {
        return;
    };
    for name in first.keys() {
        let scheme = resolve(doc, &doc["components"]["securitySchemes"][name], 0);
        // A placeholder value, one per scheme (the importer makes one variable per value):
        // it becomes a ${HEADROOM_…} variable, never written as is.
        let placeholder = format!("openapi-security-scheme-{name}");
        match (scheme["type"].as_str(), scheme["in"].as_str()) {
            (Some("apiKey"), Some("header")) => {
                if let Some(h) = scheme["name"].as_str() {
                    headers.push((h.to_string(), placeholder));
                }
            }
            (Some("apiKey"), Some("query")) => {
                if let Some(q) = scheme["name"].as_str() {
                    query.push(format!("{}={placeholder}", encode(q)));
                }
            }
            (Some("http"), _) => {
                let kind = scheme["scheme"]
                    .as_str()
                    .unwrap_or("bearer")
                    .to_ascii_lowercase();
                let word = if kind == "basic" { "Basic" } else { "Bearer" };
                headers.push(("Authorization".into(), format!("{word} {placeholder}")));
            }
            (Some("oauth2" | "openIdConnect"), _) => {
                headers.push(("Authorization".into(), format!("Bearer {placeholder}")));
            }
            _ => notes.push(format!(
                "{label}: the security scheme {name} was not imported; add its credential by hand"
            )),
        }
    }
}

/// The request body: JSON preferred, from its example, else built from its schema.
fn request_body(
    doc: &Value,
    op: &Value,
    label: &str,
    notes: &mut Vec<String>,
    budget: &mut Budget,
) -> Option<Body> {
    let body = resolve(doc, &op["requestBody"], 0);
    let content = body["content"].as_object()?;
    let (media_type, media) = content
        .iter()
        .find(|(t, _)| t.contains("json"))
        .or_else(|| content.iter().next())?;
    let schema = resolve(doc, &media["schema"], 0);
    let example = media
        .get("example")
        .or_else(|| first_example(doc, &media["examples"]))
        .or_else(|| schema.get("example"));
    let bytes = if media_type.contains("json") {
        let value = match example {
            Some(e) => budget.take(e).unwrap_or(Value::Null),
            None => from_schema(doc, schema, 0, budget),
        };
        serde_json::to_vec_pretty(&value).unwrap_or_default()
    } else if let Some(Value::String(text)) = example {
        match budget.spend(text.len()) {
            true => text.clone().into_bytes(),
            false => Vec::new(),
        }
    } else {
        notes.push(format!("{label}: a {media_type} body has no example to send; its body file is empty, fill it in"));
        Vec::new()
    };
    Some(Body {
        bytes,
        content_type: Some(media_type.clone()),
    })
}

/// The 2xx statuses the operation documents (`"200"`, `"2XX"`), when it lists any.
fn success_statuses(op: &Value) -> Option<Vec<u16>> {
    let responses = op["responses"].as_object()?;
    let mut codes: Vec<u16> = responses
        .keys()
        .filter_map(|k| k.parse::<u16>().ok())
        .filter(|c| (200..300).contains(c))
        .collect();
    // A class ("2XX") allows any of its codes: the default expectation already does.
    if codes.is_empty() || responses.keys().any(|k| k.eq_ignore_ascii_case("2xx")) {
        return None;
    }
    codes.sort_unstable();
    Some(codes)
}

fn scalar_text(v: &yaml_serde::Value) -> Option<String> {
    match v {
        yaml_serde::Value::String(s) => Some(s.clone()),
        yaml_serde::Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn imported(yaml: &str, server: Option<&str>) -> Result<Imported, ImportError> {
        from_text(yaml, "api.yaml", server)
    }

    const DOC: &str = r##"
openapi: 3.1.0
servers: [{url: "https://{host}:8443/api", variables: {host: {default: 127.0.0.1}}}]
security: [{bearer: []}]
paths:
  /users/{id}:
    parameters:
      - {$ref: "#/components/parameters/Id"}
    get:
      parameters:
        - {name: fields, in: query, schema: {type: string}, example: "name,email"}
        - {name: page, in: query, schema: {type: integer}}
        - {name: X-Tenant, in: header, required: true, schema: {type: string, enum: [acme]}}
      responses: {"200": {description: ok}, "404": {description: no}}
    patch:
      operationId: renameUser
      security: [{key: []}]
      requestBody:
        content:
          application/json:
            schema:
              allOf:
                - {$ref: "#/components/schemas/Named"}
                - {type: object, properties: {tags: {type: array, items: {type: string}}}}
      responses: {"2XX": {description: ok}}
  /tree:
    post:
      operationId: plant
      security: []
      requestBody:
        content:
          application/json:
            schema: {$ref: "#/components/schemas/Node"}
components:
  parameters:
    Id: {name: id, in: path, required: true, schema: {type: integer, example: 42}}
  securitySchemes:
    bearer: {type: http, scheme: bearer}
    key: {type: apiKey, in: header, name: X-Api-Key}
  schemas:
    Named: {type: object, properties: {name: {type: string, example: ann}}}
    Node: {type: object, properties: {label: {type: string}, children: {type: array, items: {$ref: "#/components/schemas/Node"}}}}
"##;

    #[test]
    fn operations_become_requests() {
        let i = imported(DOC, None).unwrap();
        assert_eq!(
            i.scenario.target.url.as_deref(),
            Some("https://127.0.0.1:8443/api")
        );
        let r = &i.scenario.requests;
        assert_eq!(r.len(), 3);
        assert_eq!(r[0].name, "GET /users/{id}");
        assert_eq!(r[0].path, "/users/42?fields=name%2Cemail");
        assert_eq!(r[0].headers["X-Tenant"], "acme");
        assert_eq!(
            r[0].headers["Authorization"],
            "Bearer ${HEADROOM_BEARER_TOKEN}"
        );
        assert!(matches!(
            r[0].expect.status.as_deref(),
            Some([crate::plan::scenario::file::StatusPattern::Code(200)])
        ));
        assert_eq!(r[1].name, "renameUser");
        assert_eq!(r[1].headers["X-Api-Key"], "${HEADROOM_X_API_KEY}");
        assert!(
            r[1].expect.status.is_none(),
            "2XX is the default expectation"
        );
        let body: Value = serde_json::from_slice(&i.bodies[0].1).unwrap();
        assert_eq!(body, json!({"name": "ann", "tags": ["example"]}));
        // A schema that holds itself is built to a bounded depth.
        assert_eq!(r[2].name, "plant");
        assert!(!r[2].headers.contains_key("Authorization"));
        assert!(i.bodies[1].1.len() < 100_000);
        let vars: Vec<&str> = i.variables.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(vars, ["HEADROOM_BEARER_TOKEN", "HEADROOM_X_API_KEY"]);
    }

    #[test]
    fn servers_and_versions() {
        let i = imported(DOC, Some("http://10.0.0.1:8080/v2/")).unwrap();
        assert_eq!(
            i.scenario.target.url.as_deref(),
            Some("http://10.0.0.1:8080/v2")
        );
        let relative = DOC.replace("https://{host}:8443/api", "/api");
        let e = imported(&relative, None).unwrap_err().to_string();
        assert!(e.contains("--server http://host:port/api"), "{e}");
        let e = imported("swagger: '2.0'\npaths: {}\n", None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("Swagger (OpenAPI 2)"), "{e}");
        let e = imported("openapi: 2.5.0\n", None).unwrap_err().to_string();
        assert!(e.contains("OpenAPI 2.5.0 is not supported"), "{e}");
        let e = imported("[1, 2]\n", None).unwrap_err().to_string();
        assert!(e.contains("not an OpenAPI document"), "{e}");
    }

    /// A tree node schema with `fan_out` children that are each the node again.
    fn cycle(fan_out: usize) -> String {
        let children: Vec<String> = (0..fan_out)
            .map(|i| format!("c{i}: {{$ref: '#/components/schemas/N'}}"))
            .collect();
        format!(
            "openapi: 3.0.0\nservers: [{{url: 'http://127.0.0.1:8080'}}]\npaths:\n  /t:\n    post:\n      requestBody:\n        content:\n          application/json:\n            schema: {{$ref: '#/components/schemas/N'}}\ncomponents:\n  schemas:\n    N: {{type: object, properties: {{{}}}}}\n",
            children.join(", ")
        )
    }

    /// A schema that holds itself three or four times over grew with the power of its depth
    /// (fan-out 3: 4.5 s, 1 GiB, a 112 MB body; fan-out 4: more than 30 s). Its example is
    /// now cut at its bound, and the file says so.
    #[test]
    fn a_schema_that_holds_itself_many_times_over_is_cut_at_its_bound() {
        for fan_out in [3, 4, 8] {
            let doc = cycle(fan_out);
            let started = std::time::Instant::now();
            let i = imported(&doc, None).unwrap();
            let body = &i.bodies[0].1;
            assert!(
                body.len() <= MAX_EXAMPLE + MAX_EXAMPLE / 4,
                "fan-out {fan_out}: {} bytes",
                body.len()
            );
            assert!(body.len() > MAX_EXAMPLE / 2, "{} bytes", body.len());
            let parsed: Value = serde_json::from_slice(body).unwrap();
            assert!(parsed.is_object());
            let notes = i.notes.join("\n");
            assert!(
                notes.contains("POST /t: its example was cut at 1024 KiB"),
                "{notes}"
            );
            assert!(
                started.elapsed() < std::time::Duration::from_secs(20),
                "fan-out {fan_out}: {:?}",
                started.elapsed()
            );
        }
    }

    /// 100,000 nested arrays (195 KB) took more than 15 s to parse (its time grows with the
    /// square of the depth); it is refused where it passes 128 levels.
    #[test]
    fn deep_documents_are_refused_before_they_are_parsed() {
        let started = std::time::Instant::now();
        let deep = "[".repeat(100_000) + &"]".repeat(100_000);
        let e = from_text(
            &format!("{{\"openapi\": \"3.0.0\", \"x\": {deep}}}"),
            "api.json",
            None,
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with("api.json:1:154: nested deeper than 128 levels"),
            "{e}"
        );
        let e = from_text(
            &format!("openapi: 3.0.0\nx: {}", "{a: ".repeat(50_000)),
            "api.yaml",
            None,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("nested deeper than 128 levels"), "{e}");
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "{:?}",
            started.elapsed()
        );
    }

    /// Parameters are told apart by a set, where each was compared with all before it: 20,000
    /// of them is linear.
    #[test]
    fn many_parameters_are_read_in_linear_time() {
        let n = 20_000;
        let mut params =
            String::from("        - {name: id, in: path, required: true, example: 7}\n");
        for i in 0..n {
            params.push_str(&format!(
                "        - {{name: q{i}, in: query, required: true, example: v{i}}}\n"
            ));
        }
        let doc = format!(
            "openapi: 3.0.0\nservers: [{{url: 'http://h'}}]\npaths:\n  '/a/{{id}}/{{id}}/{{none}}':\n    get:\n      parameters:\n{params}"
        );
        let started = std::time::Instant::now();
        let i = imported(&doc, None).unwrap();
        let path = &i.scenario.requests[0].path;
        assert!(
            path.starts_with("/a/7/7/{none}?q0=v0&q1=v1&"),
            "{}",
            &path[..40]
        );
        assert!(path.ends_with(&format!("&q{0}=v{0}", n - 1)));
        assert!(
            started.elapsed() < std::time::Duration::from_secs(30),
            "{:?}",
            started.elapsed()
        );
    }
}

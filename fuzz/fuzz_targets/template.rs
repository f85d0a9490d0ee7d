//! Templates (`/kv/{{ key | base64 }}`), parsed then rendered as each send renders them.
//!
//! Input: byte 0 picks the context (path, verbatim, JSON: its value mod 3) and the sequence
//! number (its high bits); the rest is text in NUL-separated fields: the template, the
//! column names (comma-separated; `key,value` when absent), then cell values (`v` when
//! absent).
//!
//! Invariants: no panic; a parsed template uses only known columns and 1 to 1000 rows per
//! send; a template without slots renders as its text; the output is never longer than the
//! template asks for (its text, plus each slot's rows of escaped values and separators).
//! With the input's first value, for fixed templates: a path slot percent-decodes back to the
//! value and holds only URI-safe bytes; a JSON slot between quotes is a JSON string holding
//! the value; base64 and base64url slots decode back to it; a batch joins its rows.
#![no_main]

use base64::Engine as _;
use headroom::plan::{Context, Template};
use libfuzzer_sys::fuzz_target;

const SEQS: [u64; 4] = [0, 7, 1 << 40, u64::MAX];

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let context = [Context::Path, Context::Verbatim, Context::Json][usize::from(first % 3)];
    let seq = SEQS[usize::from(first >> 6)];
    let mut fields = text.split('\0');
    let template = fields.next().unwrap_or_default();
    let columns: Vec<String> = match fields.next() {
        Some(names) => names.split(',').map(str::to_string).collect(),
        None => vec!["key".into(), "value".into()],
    };
    let mut values: Vec<&str> = fields.collect();
    if values.is_empty() {
        values.push("v");
    }
    if let Ok(t) = Template::parse(template, &columns, context) {
        check_parsed(&t, template, &columns, &values, seq);
    }
    properties(values[0], template);
});

fn check_parsed(t: &Template, text: &str, columns: &[String], values: &[&str], seq: u64) {
    assert!(t.columns().all(|c| c < columns.len()));
    let rows = t.rows_per_send();
    assert!((1..=1000).contains(&rows), "{rows} rows per send");
    let _ = t.sample();
    let cell = |c: usize, nth: usize, out: &mut Vec<u8>| {
        out.extend_from_slice(values[(c + nth) % values.len()].as_bytes());
    };
    // Each slot places at most 1000 rows of a value grown by escaping (JSON's \u00XX: 6x,
    // then base64 4/3) and a separator from the text; `seq` is at most 20 digits.
    let slots = text.matches("{{").count();
    let longest = values.iter().map(|v| v.len()).max().unwrap_or(0);
    let per_row = text.len() + 3 * (6 * longest * 4 / 3 + 4);
    let bound = text.len() + slots * (20 + rows * per_row);
    // What a template asks for is the plan's to bound (values times rows times slots); past
    // 64 MiB this target would only measure the allocator.
    if bound > 64 << 20 {
        return;
    }
    let mut out = Vec::new();
    t.render(seq, &cell, &mut out);
    if t.is_static() {
        assert_eq!(out, text.as_bytes(), "a template without slots is its text");
    }
    assert!(
        out.len() <= bound,
        "{} bytes rendered, bound {bound}",
        out.len()
    );
}

/// Fixed templates around `value`: each context's escaping, each filter, a batch.
fn properties(value: &str, text: &str) {
    let columns = ["v".to_string()];
    let render = |template: &str, context: Context| {
        let t = Template::parse(template, &columns, context).expect("a fixed template");
        let mut out = Vec::new();
        t.render(
            0,
            &|_, _, out: &mut Vec<u8>| out.extend_from_slice(value.as_bytes()),
            &mut out,
        );
        out
    };
    let path = render("{{ v }}", Context::Path);
    let safe = |b: u8| b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@/?%".contains(&b);
    assert!(path.iter().all(|&b| safe(b)), "unsafe byte in {path:?}");
    assert_eq!(percent_decode(&path), value.as_bytes());
    let json = render("\"{{ v }}\"", Context::Json);
    let back: String = serde_json::from_slice(&json).expect("a JSON string");
    assert_eq!(back, value);
    let b64 = render("{{ v | base64 }}", Context::Verbatim);
    let back = base64::engine::general_purpose::STANDARD
        .decode(&b64)
        .expect("base64");
    assert_eq!(back, value.as_bytes());
    let b64url = render("{{ v|base64url }}", Context::Path);
    let back = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(&b64url)
        .expect("base64url");
    assert_eq!(back, value.as_bytes());
    // A separator from the input (quotes and braces left out: they would end the filter).
    let sep: String = text
        .chars()
        .filter(|c| !matches!(c, '"' | '\'' | '{' | '}' | '|' | '(' | ')' | '\0'))
        .take(8)
        .collect();
    let sep = sep.trim();
    let n = 1 + text.len() % 5;
    let batch = render(
        &format!("{{{{ v | batch({n}, \"{sep}\") }}}}"),
        Context::Verbatim,
    );
    assert_eq!(batch, vec![value; n].join(sep).as_bytes());
}

fn percent_decode(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).expect("two hex digits");
            out.push(u8::from_str_radix(hex, 16).expect("hex"));
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    out
}

//! curl command lines, imported as `headroom import curl --file` imports them: the text split
//! into commands (a line ending in `\` goes on), each read as curl reads its options.
//!
//! `-d @body.json` reads a body file made for the target (and `-d @FILE` of anything else is
//! refused or read as the importer reads any input).
//!
//! Invariants: no panic, in bounded time and memory; an error is one line; an import gives a
//! scenario whose text renders and reads back as the scenario file model, in which every
//! header named as a credential (`-u`, `--oauth2-bearer`, `-b`, `-H 'Authorization: …'`)
//! holds a variable.
#![no_main]

use headroom::fuzzing::scenario_file_reads;
use headroom::plan::import::{curl, render, Imported};
use headroom::plan::secret_names::is_secret_name;
use libfuzzer_sys::fuzz_target;
use std::sync::OnceLock;

/// A body file `@body.json` in the input stands for: a path of its own (the fuzzer's working
/// directory is not changed, libFuzzer writes its corpus relative to it).
fn body_file() -> &'static str {
    static PATH: OnceLock<String> = OnceLock::new();
    PATH.get_or_init(|| {
        let dir = tempfile::tempdir().expect("a temporary directory").keep();
        let path = dir.join("body.json");
        std::fs::write(&path, "{\"password\":\"s3cReTt0kEn\",\"a\":1}\n").expect("a body file");
        format!("@{}", path.display())
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let text = &text.replace("@body.json", body_file());
    let commands: Vec<(String, String)> = curl::split_file(text)
        .into_iter()
        .map(|(line, c)| (format!("fuzz.txt:{line}"), c))
        .collect();
    match curl::import(&commands) {
        Ok(imported) => {
            let rendered = render(&imported).expect("an import renders");
            if let Err(e) = scenario_file_reads(&rendered) {
                panic!("the written scenario does not read back: {e}\n{rendered}");
            }
            assert_credentials_are_variables(&imported);
        }
        Err(e) => assert!(!e.to_string().contains('\n'), "{e}"),
    }
});

/// Every header whose name says it holds a credential holds a variable instead, after its
/// scheme when it has one (`Bearer ${HEADROOM_BEARER_TOKEN}`).
fn assert_credentials_are_variables(imported: &Imported) {
    let s = &imported.scenario;
    let headers = s
        .target
        .headers
        .iter()
        .chain(s.requests.iter().flat_map(|r| r.headers.iter()));
    for (name, value) in headers {
        if !is_secret_name(name) {
            continue;
        }
        let credential = value.split_once(' ').map_or(value.as_str(), |(_, c)| c);
        let reference = credential.starts_with("${HEADROOM_")
            && credential.ends_with('}')
            && credential.matches('$').count() == 1;
        assert!(reference, "{name}: {value:?} is not a variable");
    }
}

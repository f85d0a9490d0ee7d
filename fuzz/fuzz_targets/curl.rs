//! curl command lines, imported as `headroom import curl --file` imports them: the text split
//! into commands (a line ending in `\` goes on), each read as curl reads its options.
//!
//! The target runs in a directory of its own holding `body.json`, so `-d @body.json` reads a
//! file (and `-d @FILE` of anything else is refused or read as the importer reads any input).
//!
//! Invariants: no panic, in bounded time and memory; an error is one line; an import gives a
//! scenario whose text renders and reads back as the scenario file model, with no `-u`
//! password, `--oauth2-bearer` or `Authorization` credential in it (they become variables).
#![no_main]

use headroom::fuzzing::scenario_file_reads;
use headroom::plan::import::{curl, render};
use libfuzzer_sys::fuzz_target;
use std::sync::Once;

/// A credential the seeds and dictionary use, which must never be written.
const SECRET: &str = "s3cReTt0kEn";

fn in_a_directory_of_its_own() {
    static DIR: Once = Once::new();
    DIR.call_once(|| {
        let dir = tempfile::tempdir().expect("a temporary directory").keep();
        std::fs::write(
            dir.join("body.json"),
            "{\"password\":\"s3cReTt0kEn\",\"a\":1}\n",
        )
        .expect("a body file");
        std::env::set_current_dir(&dir).expect("into it");
    });
}

fuzz_target!(|data: &[u8]| {
    in_a_directory_of_its_own();
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
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
            // Where the secret is a whole credential, it is taken out everywhere.
            let whole = text.lines().any(|l| {
                [
                    format!("Bearer {SECRET}'"),
                    format!("Bearer {SECRET}\""),
                    format!("--oauth2-bearer {SECRET} "),
                    format!("X-Api-Key: {SECRET}'"),
                ]
                .iter()
                .any(|w| l.contains(w.as_str()))
            });
            if whole && text.matches(SECRET).count() == 1 {
                assert!(!rendered.contains(SECRET), "{rendered}");
            }
        }
        Err(e) => assert!(!e.to_string().contains('\n'), "{e}"),
    }
});

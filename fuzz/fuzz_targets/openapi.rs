//! OpenAPI documents (YAML or JSON), imported as `headroom import openapi` imports them (no
//! file: its text), with the document's own server.
//!
//! Invariants: no panic, in bounded time and memory (a schema that holds itself many times
//! over, nesting past 128 levels, a document of millions of nodes are cut or refused); an
//! error is one line; an import gives a scenario whose text renders and reads back as the
//! scenario file model, and whose body files are each at most 2 MiB (an example is cut at
//! about 1 MiB written out).
#![no_main]

use headroom::fuzzing::scenario_file_reads;
use headroom::plan::import::{openapi, render, MAX_OUTPUT_BYTES};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match openapi::from_text(text, "fuzz.yaml", None) {
        Ok(imported) => {
            let rendered = render(&imported).expect("an import renders");
            if let Err(e) = scenario_file_reads(&rendered) {
                panic!("the written scenario does not read back: {e}\n{rendered}");
            }
            let mut total = 0u64;
            for (path, bytes) in &imported.bodies {
                assert!(
                    bytes.len() <= 2 << 20,
                    "{}: {} bytes",
                    path.display(),
                    bytes.len()
                );
                total += bytes.len() as u64;
            }
            assert!(total <= MAX_OUTPUT_BYTES);
        }
        Err(e) => assert!(!e.to_string().contains('\n'), "{e}"),
    }
});

//! A scenario file, loaded as `headroom run` loads it: the YAML size budget (aliases
//! expanded), the file model, then the lowering to a checked plan.
//!
//! The input is the file's text. It sits in a directory holding a small `data.csv`,
//! `data.jsonl` and `body.json`, so relative `csv:`, `jsonl:` and `body_file:` paths lead
//! somewhere.
//!
//! Invariants: no panic; an accepted scenario gives a plan that passes its own checks, with
//! at least one request, 1 to 256 threads, a stop, templates that render, and a mix and a
//! staged pacer the engine can build; an error's line and column are in the file.
#![no_main]

use headroom::plan::{scenario, Load, Weights};
use headroom::schedule::{Mix, RateProfile};
use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;
use std::sync::OnceLock;

fn scenario_path() -> &'static PathBuf {
    static DIR: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    &DIR.get_or_init(|| {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let put = |name: &str, text: &str| {
            std::fs::write(dir.path().join(name), text).expect("a data file");
        };
        put("data.csv", "key,value\nk1,v1\nk2,\"v,2\"\n");
        put(
            "data.jsonl",
            "{\"key\":\"k1\",\"n\":1}\n{\"key\":\"k2\",\"n\":2}\n",
        );
        put("body.json", "{\"hello\":\"world\"}\n");
        let path = dir.path().join("scenario.yaml");
        (dir, path)
    })
    .1
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match scenario::parse(text, scenario_path(), 2) {
        Ok(plan) => {
            plan.validate().expect("an accepted plan passes its checks");
            assert!(!plan.requests.is_empty());
            assert!((1..=headroom::plan::MAX_THREADS).contains(&plan.threads));
            assert!(plan.stop.duration.is_some() || plan.stop.requests.is_some());
            for r in &plan.requests {
                if let Some(t) = &r.templates {
                    let _ = t.path.sample();
                    assert!(t.rows_per_send() >= 1);
                }
            }
            // What the engine builds from a plan before it sends: the mix and the pacer.
            if let Ok(w) = Weights::new(&plan.weights()) {
                let mix = Mix::new(&w);
                for n in [0, 1, w.cycle(), 1 << 40] {
                    assert!(usize::from(mix.pick(n)) < plan.requests.len());
                    let _ = mix.turn(n);
                }
            }
            if matches!(plan.load, Load::Open { .. }) && !plan.stages.is_empty() {
                let profile = RateProfile::of_stages(&plan.stages);
                let total = profile.total();
                let _ = profile.duration();
                for n in [0, 1, total / 2, total.saturating_sub(1), total] {
                    let _ = profile.due(n);
                }
            }
        }
        Err(e) => {
            let _ = e.to_string();
            if let Some((line, column)) = e.at {
                assert!(line >= 1 && column >= 1, "{e}");
                // YAML 1.1 breaks lines at CR LF, LF, CR, NEL, LS and PS alike.
                let breaks = ['\n', '\r', '\u{85}', '\u{2028}', '\u{2029}'];
                let lines = text.replace("\r\n", "\n").split(breaks).count();
                assert!(line <= lines + 1, "{e}");
            }
        }
    }
});

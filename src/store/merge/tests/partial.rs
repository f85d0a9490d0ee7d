//! Merges of a set that lacks shards, or holds shards cut short: merged when asked, and
//! the merged run says which and why.

use super::*;

#[test]
fn a_partial_set_is_merged_when_asked_and_says_what_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(
        dir.path(),
        &Spec {
            count: 3,
            ..spec(0, "2026-11-25T10:00:00.000Z", vec![latencies(1, 5)])
        },
    );
    let run = merge_into(dir.path(), &[a], true).unwrap().load().unwrap();
    assert_eq!(run.meta.merged.as_ref().unwrap().set.missing, [1, 2]);
    let s = Summary::of(&run);
    assert_eq!(
        s.partial.as_deref(),
        Some("merged from 1 of 3 shards; missing: shards 1, 2")
    );
    assert!(crate::report::render_text(&s).contains("MISSING: shards 1, 2"));
    // The set's fields sit beside the shards in meta.json and beside the rows in the
    // summary, one type written in both.
    let meta: serde_json::Value =
        crate::store::read_json(&dir.path().join("merged/meta.json")).unwrap();
    let summary = serde_json::to_value(&s).unwrap();
    for (at, list) in [(&meta["merged"], "shards"), (&summary["shards"], "rows")] {
        assert_eq!(at["count"], 3, "{at}");
        assert_eq!(at["missing"], serde_json::json!([1, 2]), "{at}");
        assert_eq!(at["origin"], "2026-11-25T10:00:00.000Z", "{at}");
        assert!(at["start_spread_secs"].is_number(), "{at}");
        assert_eq!(at[list].as_array().map(Vec::len), Some(1), "{at}");
    }
}

#[test]
fn a_shard_cut_short_is_named_in_the_merged_run() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(
        dir.path(),
        &spec(0, "2026-11-25T10:00:00.000Z", vec![latencies(1, 5); 3]),
    );
    let b = write(
        dir.path(),
        &spec(1, "2026-11-25T10:00:00.000Z", vec![latencies(2, 5); 3]),
    );
    // Shard 1 stopped by a signal; shard 0's log torn in its last line (a kill mid-write).
    let end = b.join("end.json");
    let mut e: serde_json::Value = crate::store::read_json(&end).unwrap();
    e["status"] = "interrupted".into();
    std::fs::write(&end, e.to_string()).unwrap();
    let log = a.join("intervals.jsonl");
    let mut text = std::fs::read_to_string(&log).unwrap();
    text.push_str("{\"record\": {\"ind");
    std::fs::write(&log, text).unwrap();

    let run = merge_into(dir.path(), &[a, b], false)
        .unwrap()
        .load()
        .unwrap();
    let s = Summary::of(&run);
    assert_eq!(
        s.partial.as_deref(),
        Some("shard 1 was interrupted before its stop condition; shard 0 lost its last interval (a torn line, skipped)")
    );
    let table = crate::report::render_text(&s);
    assert_eq!(table.matches("(cut short)").count(), 2, "{table}");
}

#[test]
fn a_test_short_of_a_missing_shards_load_says_why() {
    // Shard 1 of 2 missing: the merged run sent half its rate, for a reason the merge knows.
    let dir = tempfile::tempdir().unwrap();
    let a = write(
        dir.path(),
        &spec(0, "2026-11-25T10:00:00.000Z", vec![latencies(1, 50); 3]),
    );
    let run = merge_into(dir.path(), &[a], true).unwrap().load().unwrap();
    let s = Summary::of(&run);
    assert!(
        s.verdict.findings.contains(&Finding::ShardsIncomplete {
            missing: vec![1],
            cut_short: vec![],
        }),
        "{:?}",
        s.verdict
    );
    let text = crate::report::render_text(&s);
    assert!(
        text.contains("shard 1 missing from the merge: their share of the load is not in this run"),
        "{text}"
    );
}

#[test]
fn a_killed_shard_leaves_the_test_held_to_the_load_it_asked() {
    // Shard 1 of 2 killed (no end.json) after `killed_at` of shard 0's four seconds, each
    // shard asked 50 req/s of the test's 100.
    let verdict = |killed_at: usize| {
        let dir = tempfile::tempdir().unwrap();
        let a = write(
            dir.path(),
            &spec(0, "2026-11-25T10:00:00.000Z", vec![latencies(1, 50); 4]),
        );
        let b = write(
            dir.path(),
            &spec(
                1,
                "2026-11-25T10:00:00.000Z",
                vec![latencies(2, 50); killed_at],
            ),
        );
        std::fs::remove_file(b.join("end.json")).unwrap();
        let own = Summary::of(&RunDir::at(&b).load().unwrap());
        let run = merge_into(dir.path(), &[a, b], false)
            .unwrap()
            .load()
            .unwrap();
        assert!(run.end.is_none());
        let merged = Summary::of(&run);
        // Its row is its own run's: its seconds, its CPU over them, its verdict.
        let row = &merged.shards.as_ref().unwrap().rows[1];
        assert_eq!(own.duration.attack_secs, killed_at as f64);
        assert!(own.generator.cpu_secs > 0.0);
        assert_eq!(row.generator.cpu_secs, own.generator.cpu_secs);
        assert_eq!(row.generator.cpu_percent, own.generator.cpu_percent);
        assert_eq!(row.generator.peak_open_fds, own.generator.peak_open_fds);
        assert_eq!(row.verdict, own.verdict);
        merged.verdict
    };
    // Killed in its last second's end: the whole load left, and no shortfall is claimed.
    let whole = verdict(4);
    assert!(
        !whole
            .findings
            .iter()
            .any(|f| matches!(f, Finding::RateShort { .. })),
        "{whole:?}"
    );
    // Killed halfway: the test sent 75 of its 100 req/s, and says which shard stopped.
    let short = verdict(2);
    assert!(
        short
            .findings
            .iter()
            .any(|f| matches!(f, Finding::RateShort { asked, .. } if *asked == 100.0)),
        "{short:?}"
    );
    assert!(
        short.findings.contains(&Finding::ShardsIncomplete {
            missing: vec![],
            cut_short: vec![1],
        }),
        "{short:?}"
    );
}

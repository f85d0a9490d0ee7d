//! Merges refused: sets that are not one whole test, shards whose counts no run makes, and
//! a refusal that leaves nothing behind that looks like a run.

use super::*;

#[test]
fn a_merge_that_fails_leaves_nothing_that_looks_like_a_run() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let dirs = [
        write(
            root,
            &spec(0, "2026-11-25T10:00:00.000Z", vec![latencies(1, 5)]),
        ),
        write(
            root,
            &spec(1, "2026-11-25T10:00:00.000Z", vec![latencies(2, 5)]),
        ),
    ];
    let command = ["headroom".to_string(), "merge".to_string()];
    let out = RunDir::at(root.join("merged"));
    // The last write fails (a disk full as end.json is written), after every other file.
    let disk_full = |dir: &RunDir, end: &RunEnd| {
        dir.finish(end)?;
        Err(StoreError::Io {
            path: dir.path().join("end.json"),
            reason: std::io::Error::other("no space left on device"),
        })
    };
    let e = merge_with(&dirs, &out, false, &command, &disk_full)
        .unwrap_err()
        .to_string();
    assert!(e.contains("no space left on device"), "{e}");
    assert_eq!(left_beside(root, "merged"), Vec::<String>::new());
    // Nothing failing, the whole run is in place, and nothing beside it.
    merge(&dirs, &out, false, &command).unwrap();
    assert!(out.load().unwrap().end.is_some());
    assert_eq!(left_beside(root, "merged"), ["merged"]);
    // Where a run is stored already, or anything else, the merge is refused before any
    // work, and what is there is left as it was.
    let e = merge(&dirs, &out, false, &command).unwrap_err().to_string();
    assert!(e.contains("not empty"), "{e}");
    assert_eq!(left_beside(root, "merged"), ["merged"]);
    let file = RunDir::at(root.join("file"));
    std::fs::write(file.path(), "mine").unwrap();
    let e = merge(&dirs, &file, false, &command)
        .unwrap_err()
        .to_string();
    assert!(e.contains("not a directory"), "{e}");
    assert_eq!(std::fs::read_to_string(file.path()).unwrap(), "mine");
    // An empty directory made ahead is filled.
    let empty = RunDir::at(root.join("empty"));
    std::fs::create_dir(empty.path()).unwrap();
    merge(&dirs, &empty, false, &command).unwrap();
    assert!(empty.load().unwrap().end.is_some());
    assert_eq!(left_beside(root, "empty"), ["empty"]);
}

#[test]
fn sets_that_are_not_one_whole_test_are_refused_with_a_line() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let secs = || vec![latencies(1, 5)];
    let a = write(root, &spec(0, "2026-11-25T10:00:00.000Z", secs()));
    let b = write(root, &spec(1, "2026-11-25T10:00:00.000Z", secs()));

    let other_plan = write(
        root,
        &Spec {
            plan: "cd34",
            ..spec(1, "2026-11-25T10:00:01.000Z", secs())
        },
    );
    let e = refusal(root, &[a.clone(), other_plan]);
    assert!(
        e.contains("are shards of different tests (their plan fingerprints differ)"),
        "{e}"
    );

    let of_three = write(
        root,
        &Spec {
            count: 3,
            ..spec(1, "2026-11-25T10:00:02.000Z", secs())
        },
    );
    let e = refusal(root, &[a.clone(), of_three]);
    assert!(
        e.contains("is a shard of 2 but") && e.ends_with("of 3; merge only the shards of one test"),
        "{e}"
    );

    let again = write(root, &spec(0, "2026-11-25T10:00:03.000Z", secs()));
    let e = refusal(root, &[a.clone(), b.clone(), again]);
    assert!(e.starts_with("shard 0 is given twice ("), "{e}");
    let e = refusal(root, &[a.clone(), a.clone()]);
    assert!(e.starts_with("shard 0 is given twice ("), "{e}");

    let e = refusal(root, std::slice::from_ref(&a));
    assert_eq!(
        e,
        "shard 1 of 2 missing; give every shard's run, or --partial to merge those given (the report then says which are missing)"
    );

    // A run of one generator is no shard.
    let whole = root.join("whole");
    RunDir::at(&whole).create(&meta(10.0)).unwrap();
    let e = refusal(root, &[whole.clone(), a.clone()]);
    assert!(
        e.ends_with(
            "is not a shard run (its meta.json has no shard); merge the runs of `--shard I/N`"
        ),
        "{e}"
    );
    let e = refusal(root, &[root.join("nowhere")]);
    assert!(e.contains("is not a headroom run directory"), "{e}");

    // A damaged log, past its first line: refused, and the half-merged run removed.
    let torn = write(
        root,
        &spec(1, "2026-11-25T10:00:04.000Z", vec![latencies(1, 5); 3]),
    );
    let log = torn.join("intervals.jsonl");
    let text = std::fs::read_to_string(&log).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines[1] = "{\"record\": 7}";
    std::fs::write(&log, lines.join("\n") + "\n").unwrap();
    let e = refusal(root, &[a.clone(), torn]);
    assert!(e.contains("intervals.jsonl: line 2:"), "{e}");

    // Metadata edited past what any shard writes.
    let edit = |from: &Path, to: &str, field: &str, value: serde_json::Value| {
        let dir = root.join(to);
        std::fs::create_dir_all(&dir).unwrap();
        for file in ["meta.json", "intervals.jsonl", "end.json"] {
            std::fs::copy(from.join(file), dir.join(file)).unwrap();
        }
        let path = dir.join("meta.json");
        let mut meta: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        if field == "index" || field == "count" {
            meta["shard"][field] = value;
        } else {
            meta[field] = value;
        }
        std::fs::write(&path, meta.to_string()).unwrap();
        dir
    };
    let e = refusal(
        root,
        &[
            a.clone(),
            edit(&b, "badtime", "started_at", "yesterday".into()),
        ],
    );
    assert!(
        e.ends_with("badtime: its started_at \"yesterday\" is not an RFC 3339 time; the run's meta.json is damaged"),
        "{e}"
    );
    let e = refusal(root, &[a.clone(), edit(&b, "past", "index", 5.into())]);
    assert!(
        e.ends_with("past/meta.json: shard 5 of 2, not a shard of the test"),
        "{e}"
    );
    // A count no test has would size the list of missing shards: refused first.
    let e = refusal(
        root,
        &[a.clone(), edit(&b, "many", "count", u32::MAX.into())],
    );
    assert!(
        e.ends_with("many/meta.json: shard 1 of 4294967295, not a shard of the test"),
        "{e}"
    );

    // Engine threads no headroom runs: their sum overflowed (a panic in a debug build).
    let e = refusal(
        root,
        &[
            edit(&a, "threads-0", "threads", u64::MAX.into()),
            edit(&b, "threads-1", "threads", u64::MAX.into()),
        ],
    );
    assert!(
        e.ends_with("threads-0/meta.json: 18446744073709551615 engine threads, more than headroom runs (256); the run's meta.json is damaged"),
        "{e}"
    );

    // Counts each shard could hold, that no test adds up to: refused, never overflowed.
    let huge = |from: &Path, to: &str| {
        let dir = edit(from, to, "host", "big".into());
        let log = dir.join("intervals.jsonl");
        let mut line: serde_json::Value = serde_json::from_str(
            std::fs::read_to_string(&log)
                .unwrap()
                .lines()
                .next()
                .unwrap(),
        )
        .unwrap();
        line["record"]["sent"] = (1u64 << 60).into();
        std::fs::write(&log, format!("{line}\n")).unwrap();
        dir
    };
    let e = refusal(root, &[huge(&a, "huge-0"), huge(&b, "huge-1")]);
    assert!(
        e.contains(
            "second 0 of the merged run: sent, scheduled, retried or byte counts add up past 2^60"
        ),
        "{e}"
    );

    // A merged run is merged no further.
    let out = merge_into(root, &[a.clone(), b.clone()], false).unwrap();
    let e = merge_into(root, &[out.path().to_path_buf()], false)
        .unwrap_err()
        .to_string();
    assert!(
        e.ends_with("is already a merged run; merge the shard runs it was made from"),
        "{e}"
    );
}

#[test]
fn a_merged_run_whose_shard_counts_no_run_makes_is_refused_never_added_up() {
    // Found looking for every count read back from a file: a merged run's meta.json keeps
    // each shard's generator counts, which its report adds up; two statuses of 2^64 - 1
    // overflowed them (a panic in a debug build, a wrapped count in a release one).
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let dirs = [
        write(
            root,
            &spec(0, "2026-11-25T10:00:00.000Z", vec![latencies(1, 5)]),
        ),
        write(
            root,
            &spec(1, "2026-11-25T10:00:00.000Z", vec![latencies(2, 5)]),
        ),
    ];
    let out = merge_into(root, &dirs, false).unwrap();
    let path = out.path().join("meta.json");
    let mut meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let generator = &mut meta["merged"]["shards"][1]["generator"];
    generator["status"] = serde_json::json!({"200": u64::MAX, "503": u64::MAX});
    std::fs::write(&path, meta.to_string()).unwrap();
    match out.load() {
        Err(StoreError::Corrupt { path: at, reason }) => {
            assert_eq!(at, path);
            assert_eq!(
                reason,
                "shard 1: the generator's completions (statuses and errors) add up past 2^60, more than any run makes"
            );
        }
        Err(other) => panic!("not refused as corrupt: {other}"),
        Ok(_) => panic!("read as a run"),
    }
}

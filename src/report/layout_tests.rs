//! The report room's cut, checked on its sources: builders turn the summary into a document,
//! writers read only the document, and the parts import one another one way only
//! (build → document ← write; plot below all three), so a new table is one builder's edit
//! and a new format one writer.

use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`.
fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(sources(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out
}

/// A file's code without its tests (a test may render what it built, or load a stored run).
fn code(path: &Path) -> String {
    if path
        .file_name()
        .is_some_and(|n| n == "tests.rs" || n == "layout_tests.rs")
    {
        return String::new();
    }
    let text = std::fs::read_to_string(path).unwrap();
    match text.find("#[cfg(test)]") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

/// The paths under `part` (of src/report) whose code names any of `forbidden`.
fn offenders(part: &str, forbidden: &[&str]) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/report");
    sources(&root.join(part))
        .into_iter()
        .flat_map(|p| {
            let code = code(&p);
            forbidden
                .iter()
                .filter(|f| code.contains(*f))
                .map(|f| format!("{} names {f}", p.display()))
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn writers_read_only_the_document() {
    let found = offenders(
        "write",
        &[
            "crate::store",
            "crate::summary",
            "crate::capacity",
            "report::build",
            "super::build",
        ],
    );
    assert!(found.is_empty(), "{found:#?}");
}

#[test]
fn builders_never_read_the_stored_run() {
    let found = offenders(
        "build",
        &["crate::store", "StoredRun", "report::write", "super::write"],
    );
    assert!(found.is_empty(), "{found:#?}");
}

#[test]
fn the_parts_import_one_another_one_way() {
    let found: Vec<String> = [
        (
            "document",
            &["report::build", "report::write", "crate::store"][..],
        ),
        (
            "plot",
            &["report::build", "report::write", "report::document"][..],
        ),
    ]
    .iter()
    .flat_map(|(part, forbidden)| offenders(part, forbidden))
    .collect();
    assert!(found.is_empty(), "{found:#?}");
}

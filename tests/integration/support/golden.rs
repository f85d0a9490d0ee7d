//! Golden files under tests/golden: an output compared with the one accepted before.

use std::path::Path;

/// Asserts `actual` is the golden file `name`; with UPDATE_GOLDEN set, writes it there first
/// (to accept an intended change, reviewed in the diff).
pub fn check(name: &str, actual: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, actual).unwrap();
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|_| panic!("{} missing: run with UPDATE_GOLDEN=1", path.display()));
    assert_eq!(
        actual, expected,
        "{name} differs from its golden file (UPDATE_GOLDEN=1 to accept)"
    );
}

//! Wide HTML tables split into parts that each fit the page, every part repeating the key
//! columns. A table wider than the page hides its last columns behind a scroll bar; Locust's
//! report splits its per-request table in two (counts, then percentiles) for the same reason.
//!
//! The width is estimated from the cells' lengths rather than measured: the page is static,
//! and a split decided here is the same in every browser and in the test that checks it.

use super::table;
use crate::report::document::Table;

/// The widest a table may be, in CSS pixels: the body's 1240 px less its padding.
const BUDGET: f64 = 1200.0;
/// A character of a table cell (12 px DejaVu Sans, digits and lowercase letters are about
/// 0.6 em wide), rounded up so the estimate errs towards splitting.
const CHAR_PX: f64 = 7.6;
/// A cell's padding and border.
const CELL_PX: f64 = 11.0;

/// `t` as one HTML table, or as several when it would be wider than the page: each part
/// has the first `left` columns and some of the others, in order.
pub fn fitted(t: &Table) -> String {
    parts(&t.text_rows(), t.left)
        .iter()
        .map(|columns| {
            table(&Table {
                header: pick(&t.header, columns),
                rows: t.rows.iter().map(|r| pick(r, columns)).collect(),
                left: t.left.min(columns.len()),
            })
        })
        .collect()
}

/// The `columns` of `row`, in order.
fn pick<T: Clone>(row: &[T], columns: &[usize]) -> Vec<T> {
    columns
        .iter()
        .filter_map(|&c| row.get(c).cloned())
        .collect()
}

/// The columns of each part, key columns first.
fn parts(rows: &[Vec<String>], left: usize) -> Vec<Vec<usize>> {
    let n = rows.iter().map(Vec::len).max().unwrap_or(0);
    let left = left.min(n);
    let widths: Vec<f64> = (0..n).map(|c| width(rows, c)).collect();
    let keys: Vec<usize> = (0..left).collect();
    let key_width: f64 = widths[..left].iter().sum();
    let rest: Vec<usize> = (left..n).collect();
    let fits = |cols: &[usize]| key_width + cols.iter().map(|&c| widths[c]).sum::<f64>() <= BUDGET;
    // Only key columns (nothing to split off) is one table however wide: never none.
    if rest.is_empty() || fits(&rest) {
        return vec![(0..n).collect()];
    }
    // Percentile columns (headed "50%" … "100%") make a part of their own when they can,
    // as in Locust's second table.
    let groups: Vec<Vec<usize>> = match rest.iter().position(|&c| is_percentile(rows, c)) {
        Some(at) if at > 0 => vec![rest[..at].to_vec(), rest[at..].to_vec()],
        _ => vec![rest],
    };
    let mut out = Vec::new();
    for group in groups {
        let mut part: Vec<usize> = Vec::new();
        for c in group {
            part.push(c);
            if !fits(&part) && part.len() > 1 {
                part.pop();
                out.push(part);
                part = vec![c];
            }
        }
        if !part.is_empty() {
            out.push(part);
        }
    }
    out.into_iter()
        .map(|part| keys.iter().copied().chain(part).collect())
        .collect()
}

fn is_percentile(rows: &[Vec<String>], column: usize) -> bool {
    rows.first()
        .and_then(|h| h.get(column))
        .is_some_and(|h| h.ends_with('%') && h[..h.len() - 1].parse::<f64>().is_ok())
}

/// A column's estimated width: its widest body cell (cells do not wrap) or its header's
/// longest word (headers wrap between words).
fn width(rows: &[Vec<String>], column: usize) -> f64 {
    let chars = |s: &str| s.chars().count();
    let header = rows
        .first()
        .and_then(|h| h.get(column))
        .map_or(0, |h| h.split_whitespace().map(chars).max().unwrap_or(0));
    let body = rows
        .iter()
        .skip(1)
        .filter_map(|r| r.get(column))
        .map(|c| chars(c))
        .max()
        .unwrap_or(0);
    header.max(body) as f64 * CHAR_PX + CELL_PX
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::document::Cell;

    #[test]
    fn a_table_of_key_columns_only_is_kept_however_wide() {
        let mut t = Table::new(&["", "fields", "values"], 3);
        t.rows.push(vec![
            Cell::text("Arrivals"),
            Cell::text(""),
            Cell::text("x".repeat(400)),
        ]);
        let html = fitted(&t);
        assert_eq!(html.matches("<table>").count(), 1, "{html}");
        assert!(html.contains(&"x".repeat(400)));
    }

    fn wide(columns: usize, cell: &str) -> Vec<Vec<String>> {
        let mut header = vec!["Name".to_string()];
        header.extend((0..columns).map(|i| {
            if i >= columns / 2 {
                format!("{}%", 50 + i)
            } else {
                format!("c{i}")
            }
        }));
        let row: Vec<String> = std::iter::once("read secret".to_string())
            .chain((0..columns).map(|_| cell.to_string()))
            .collect();
        vec![header, row]
    }

    #[test]
    fn a_table_that_fits_stays_whole() {
        let rows = wide(6, "1.234ms");
        assert_eq!(parts(&rows, 1), vec![(0..7).collect::<Vec<_>>()]);
        assert_eq!(
            fitted(&Table::from_text(&rows, 1))
                .matches("<table>")
                .count(),
            1
        );
    }

    #[test]
    fn a_wide_table_splits_before_its_percentiles_keeping_its_key_columns() {
        let rows = wide(20, "12.345ms");
        let p = parts(&rows, 1);
        assert_eq!(p.len(), 2, "{p:?}");
        assert_eq!(p[0], (0..11).collect::<Vec<_>>());
        assert_eq!(p[1][0], 0);
        assert_eq!(p[1][1..], (11..21).collect::<Vec<_>>());
        // Every column is shown once, besides the repeated key.
        let html = fitted(&Table::from_text(&rows, 1));
        assert_eq!(html.matches("read secret").count(), 2);
        assert_eq!(html.matches("12.345ms").count(), 20);
    }

    #[test]
    fn a_very_wide_group_is_cut_greedily_into_parts_that_fit() {
        let rows = wide(60, "12.345ms");
        let p = parts(&rows, 1);
        assert!(p.len() > 2, "{p:?}");
        for part in &p {
            let w: f64 = part.iter().map(|&c| width(&rows, c)).sum();
            assert!(w <= BUDGET, "{part:?} is {w} px");
        }
        let shown: usize = p.iter().map(|part| part.len() - 1).sum();
        assert_eq!(shown, 60);
    }
}

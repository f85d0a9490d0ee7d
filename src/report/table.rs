//! Tables of cells, as aligned text or as markdown: the first row is the header, the first
//! column (names) is aligned left and the rest (numbers) right.

/// The rows as aligned text columns, the first `left` (names, methods) aligned left.
pub fn aligned_left(rows: &[Vec<String>], left: usize) -> String {
    let Some(first) = rows.first() else {
        return String::new();
    };
    let widths: Vec<usize> = (0..first.len())
        .map(|i| {
            rows.iter()
                .map(|r| r.get(i).map_or(0, |c| c.chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for r in rows {
        let line: Vec<String> = r
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (cell, w))| {
                if i < left {
                    format!("{cell:<w$}")
                } else {
                    format!("{cell:>w$}")
                }
            })
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
    }
    out
}

/// The rows as a GitHub markdown table, the first `left` columns aligned left.
pub fn markdown_left(rows: &[Vec<String>], left: usize) -> String {
    let Some(header) = rows.first() else {
        return String::new();
    };
    let mut out = format!("| {} |\n|", cells(header));
    for i in 0..header.len() {
        out.push_str(if i < left { "---|" } else { "---:|" });
    }
    out.push('\n');
    for r in &rows[1..] {
        out.push_str(&format!("| {} |\n", cells(r)));
    }
    out
}

/// A row's cells joined as markdown: cells are user text (labels, variant values, names),
/// and a `|` would end a cell early and a line break the row.
fn cells(row: &[String]) -> String {
    row.iter()
        .map(|c| c.replace('|', "\\|").replace(['\n', '\r'], " "))
        .collect::<Vec<_>>()
        .join(" | ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_text_cannot_break_a_markdown_row() {
        let rows = vec![
            vec!["a|b".to_string(), "n".into()],
            vec!["x\ny".into(), "1".into()],
        ];
        assert_eq!(
            markdown_left(&rows, 1),
            "| a\\|b | n |\n|---|---:|\n| x y | 1 |\n"
        );
    }

    #[test]
    fn names_align_left_and_numbers_right() {
        let rows = vec![
            vec!["name".to_string(), "n".into()],
            vec!["read".into(), "1200".into()],
        ];
        assert_eq!(aligned_left(&rows, 1), "name     n\nread  1200\n");
        assert_eq!(
            markdown_left(&rows, 1),
            "| name | n |\n|---|---:|\n| read | 1200 |\n"
        );
    }
}

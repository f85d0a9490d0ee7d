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

/// Text made safe inside a markdown table cell: a `|` would end the cell and a line break
/// the row (request names and objectives are user text).
pub fn markdown_cell(text: &str) -> String {
    text.replace('|', "\\|").replace(['\n', '\r'], " ")
}

/// The rows as a GitHub markdown table, the first `left` columns aligned left.
pub fn markdown_left(rows: &[Vec<String>], left: usize) -> String {
    let Some(header) = rows.first() else {
        return String::new();
    };
    let line = |r: &Vec<String>| {
        let cells: Vec<String> = r.iter().map(|c| markdown_cell(c)).collect();
        format!("| {} |\n", cells.join(" | "))
    };
    let mut out = line(header);
    out.push('|');
    for i in 0..header.len() {
        out.push_str(if i < left { "---|" } else { "---:|" });
    }
    out.push('\n');
    for r in &rows[1..] {
        out.push_str(&line(r));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let hostile = vec![vec!["name".to_string()], vec!["a|b\nc".into()]];
        assert_eq!(markdown_left(&hostile, 1), "| name |\n|---|\n| a\\|b c |\n");
    }
}

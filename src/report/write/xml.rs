//! XML escaping for the renderers that write XML (JUnit): names, objectives and messages are
//! user text, so every character that could end a value or is not allowed in XML 1.0 is
//! replaced.

/// `text` made safe as element content or a double- or single-quoted attribute value:
/// markup characters become entities, line breaks and tabs become character references (an
/// attribute would otherwise fold them into spaces), and characters XML 1.0 forbids (control
/// characters, U+FFFE, U+FFFF) become U+FFFD, since no reference can carry them.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            '\t' => out.push_str("&#9;"),
            c if allowed(c) => out.push(c),
            _ => out.push('\u{FFFD}'),
        }
    }
    out
}

/// Whether XML 1.0 allows `c` in a document (its `Char` production; tab and line breaks are
/// handled before this is asked).
fn allowed(c: char) -> bool {
    matches!(c, '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..='\u{10FFFF}')
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn markup_quotes_and_breaks_are_escaped() {
        assert_eq!(
            escape(r#"get <"a" & 'b'>"#),
            "get &lt;&quot;a&quot; &amp; &apos;b&apos;&gt;"
        );
        assert_eq!(escape("a\nb\tc\rd"), "a&#10;b&#9;c&#13;d");
    }

    #[test]
    fn characters_xml_forbids_are_replaced_and_others_kept() {
        assert_eq!(
            escape("a\u{0}b\u{1b}c\u{FFFE}"),
            "a\u{FFFD}b\u{FFFD}c\u{FFFD}"
        );
        assert_eq!(escape("µs → ok 🙂"), "µs → ok 🙂");
    }

    #[test]
    fn an_entity_in_the_input_is_escaped_again() {
        assert_eq!(escape("&amp;"), "&amp;amp;");
    }
}

//! Templates in paths, headers and bodies: `/kv/{{ key }}`, filled from a data row per request.
//!
//! A template is parsed once into literal parts and variable slots, so filling it costs a
//! few copies and no parsing, allocation or lookup by name on the hot path.

/// Where a template's text goes, which decides how a value is escaped in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Context {
    /// The path and query: bytes outside the URI's safe set are percent-encoded.
    Path,
    /// A header value or a body: copied as they are (header values are checked when the
    /// data is loaded; a line break there would end the header).
    Verbatim,
    /// Inside a JSON body's string: quotes, backslashes and control bytes are escaped.
    Json,
}

/// One piece of a template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// Text copied as it is.
    Literal(String),
    /// A column of the request's data row, by index, through a filter; with a batch, the
    /// column of that many consecutive rows, joined by a separator.
    Column(usize, Filter, Option<Batch>),
    /// The request's number among the sends of its name, from 0.
    Seq,
}

/// What is done to a value before it is placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Filter {
    /// Nothing.
    None,
    /// Standard base64, as etcd's JSON API wants keys and values (`{{ key | base64 }}`).
    Base64,
    /// URL-safe base64 without padding (`{{ key | base64url }}`).
    Base64Url,
}

/// Several rows' values in one slot: "get many" requests (`{{ key | batch(5) }}`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Batch {
    /// Rows per send.
    pub rows: usize,
    /// Placed between two values.
    pub separator: String,
}

/// A parsed template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    pieces: Vec<Piece>,
    context: Context,
}

/// Why a template cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    /// `{{` without its `}}`.
    #[error("an unclosed {{{{ in {0:?}")]
    Unclosed(String),
    /// A filter headroom does not know.
    #[error("unknown filter {filter:?} in {text:?}; filters: base64, base64url, batch(N) or batch(N, \"sep\")")]
    Filter {
        /// The filter named.
        filter: String,
        /// The template.
        text: String,
    },
    /// A name no data column (or built-in) has.
    #[error("undefined variable {name:?} in {text:?}; {known}")]
    Undefined {
        /// The name used.
        name: String,
        /// The template.
        text: String,
        /// What could have been used.
        known: String,
    },
}

/// The names a template may fill: a data set's columns (slots from 0), then captured values
/// (slots after the columns). Looked up by hash: a scenario may have tens of thousands.
#[derive(Debug, Clone, Copy)]
pub struct Names<'a> {
    /// The data set's columns, in slot order.
    pub columns: &'a [String],
    /// Captured values and their slot among the captures.
    pub captured: &'a std::collections::HashMap<String, usize>,
}

impl Names<'_> {
    fn slot(&self, name: &str) -> Option<usize> {
        match self.columns.iter().position(|c| c == name) {
            Some(c) => Some(c),
            None => self.captured.get(name).map(|v| self.columns.len() + v),
        }
    }

    fn len(&self) -> usize {
        self.columns.len() + self.captured.len()
    }
}

impl Template {
    /// Parses `text`, resolving names against `columns` (plus the built-in `seq`).
    pub fn parse(
        text: &str,
        columns: &[String],
        context: Context,
    ) -> Result<Template, TemplateError> {
        let none = std::collections::HashMap::new();
        Template::parse_names(
            text,
            Names {
                columns,
                captured: &none,
            },
            context,
        )
    }

    /// Parses `text`, resolving names against a data set's columns and captured values.
    pub fn parse_names(
        text: &str,
        names: Names<'_>,
        context: Context,
    ) -> Result<Template, TemplateError> {
        let mut pieces = Vec::new();
        let mut rest = text;
        while let Some(open) = rest.find("{{") {
            if open > 0 {
                pieces.push(Piece::Literal(rest[..open].to_string()));
            }
            let after = &rest[open + 2..];
            let close = after
                .find("}}")
                .ok_or_else(|| TemplateError::Unclosed(text.to_string()))?;
            let mut parts = after[..close].split('|');
            let name = parts.next().unwrap_or_default().trim();
            let mut filter = Filter::None;
            let mut batch = None;
            for f in parts.map(str::trim) {
                let bad = || TemplateError::Filter {
                    filter: f.to_string(),
                    text: text.to_string(),
                };
                match f {
                    "base64" => filter = Filter::Base64,
                    "base64url" => filter = Filter::Base64Url,
                    _ => batch = Some(parse_batch(f).ok_or_else(bad)?),
                }
            }
            pieces.push(match name {
                "seq" if filter == Filter::None && batch.is_none() => Piece::Seq,
                _ => Piece::Column(names.slot(name).ok_or_else(|| {
                    TemplateError::Undefined {
                        name: name.to_string(),
                        text: text.to_string(),
                        known: if names.len() == 0 {
                            "the request has no data source (add data: NAME to it); only {{ seq }} is built in".into()
                        } else {
                            // The names may be a data file's first line, and a file of
                            // secrets pointed at by mistake must not reach a CI log.
                            format!(
                                "its data and captures name {} value(s), none of them {name:?} (the names are a data file's first line, not shown here); {{{{ seq }}}} is built in",
                                names.len()
                            )
                        },
                    }
                })?, filter, batch),
            });
            rest = &after[close + 2..];
        }
        if !rest.is_empty() {
            pieces.push(Piece::Literal(rest.to_string()));
        }
        Ok(Template { pieces, context })
    }

    /// The most bytes the template can fill to, when slot `c`'s value is at most
    /// `widest(c).0` bytes, of letters, digits and `-._~` only when `widest(c).1`: batches,
    /// filters and escaping included (percent-encoding triples a byte, JSON escaping makes
    /// six of a control byte, base64 four of three; plain values need no escaping).
    pub fn max_len(&self, widest: &dyn Fn(usize) -> (u64, bool)) -> u64 {
        let escaped = match self.context {
            Context::Path => 3,
            Context::Verbatim => 1,
            Context::Json => 6,
        };
        self.pieces
            .iter()
            .map(|p| match p {
                Piece::Literal(s) => s.len() as u64,
                Piece::Seq => 20,
                Piece::Column(c, filter, batch) => {
                    let (rows, separator) = batch
                        .as_ref()
                        .map_or((1, 0), |b| (b.rows as u64, b.separator.len() as u64));
                    // base64's alphabet needs no escaping in a path or a JSON string.
                    let (bytes, plain) = widest(*c);
                    let one = match filter {
                        Filter::None if plain => bytes,
                        Filter::None => bytes.saturating_mul(escaped),
                        Filter::Base64 | Filter::Base64Url => bytes.div_ceil(3) * 4,
                    };
                    rows.saturating_mul(one)
                        .saturating_add((rows - 1) * separator)
                }
            })
            .fold(0, u64::saturating_add)
    }

    /// The template filled with `x` in every slot: what a path is checked with before a run.
    pub fn sample(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.render(0, &|_, _, out: &mut Vec<u8>| out.push(b'x'), &mut out);
        out
    }

    /// True when the template has no variable: it renders the same every time.
    pub fn is_static(&self) -> bool {
        self.pieces.iter().all(|p| matches!(p, Piece::Literal(_)))
    }

    /// The columns it uses.
    pub fn columns(&self) -> impl Iterator<Item = usize> + '_ {
        self.pieces.iter().filter_map(|p| match p {
            Piece::Column(c, ..) => Some(*c),
            _ => None,
        })
    }

    /// Rows each send takes: the largest batch of its slots (1 without).
    pub fn rows_per_send(&self) -> usize {
        self.pieces
            .iter()
            .filter_map(|p| match p {
                Piece::Column(_, _, Some(b)) => Some(b.rows),
                _ => None,
            })
            .max()
            .unwrap_or(1)
    }

    /// Appends the template filled from `cell(column, nth row of the send, out)` and `seq`
    /// to `out`.
    #[inline]
    pub fn render(&self, seq: u64, cell: &dyn Fn(usize, usize, &mut Vec<u8>), out: &mut Vec<u8>) {
        for p in &self.pieces {
            match p {
                Piece::Literal(s) => out.extend_from_slice(s.as_bytes()),
                Piece::Seq => {
                    let mut buf = itoa_buf(seq);
                    out.extend_from_slice(buf.as_bytes_mut());
                }
                Piece::Column(c, filter, batch) => {
                    let (rows, separator) = match batch {
                        Some(b) => (b.rows, b.separator.as_str()),
                        None => (1, ""),
                    };
                    for nth in 0..rows {
                        if nth > 0 {
                            out.extend_from_slice(separator.as_bytes());
                        }
                        let start = out.len();
                        cell(*c, nth, out);
                        encode_tail(out, start, *filter);
                        match self.context {
                            Context::Verbatim => {}
                            Context::Path => percent_encode_tail(out, start),
                            Context::Json => json_escape_tail(out, start),
                        }
                    }
                }
            }
        }
    }
}

/// A number's decimal digits without allocating.
struct Digits {
    buf: [u8; 20],
    start: usize,
}

impl Digits {
    fn as_bytes_mut(&mut self) -> &[u8] {
        &self.buf[self.start..]
    }
}

fn itoa_buf(mut n: u64) -> Digits {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    Digits { buf, start: i }
}

/// Reads `batch(N)` or `batch(N, "sep")` (default separator ",").
fn parse_batch(f: &str) -> Option<Batch> {
    let args = f.strip_prefix("batch(")?.strip_suffix(')')?;
    let (count, separator) = match args.split_once(',') {
        Some((count, sep)) => {
            let sep = sep.trim();
            let sep = sep
                .strip_prefix('"')
                .and_then(|s| s.strip_suffix('"'))
                .or_else(|| sep.strip_prefix('\'').and_then(|s| s.strip_suffix('\'')))?;
            (count, sep.to_string())
        }
        None => (args, ",".to_string()),
    };
    let rows: usize = count.trim().parse().ok()?;
    (1..=1000)
        .contains(&rows)
        .then_some(Batch { rows, separator })
}

/// Applies `filter`, in place, to `out[start..]`.
fn encode_tail(out: &mut Vec<u8>, start: usize, filter: Filter) {
    use base64::Engine;
    let (engine, padded) = match filter {
        Filter::None => return,
        Filter::Base64 => (&base64::engine::general_purpose::STANDARD, true),
        Filter::Base64Url => (&base64::engine::general_purpose::URL_SAFE_NO_PAD, false),
    };
    // Encoded after the raw value in the same buffer, then moved over it: no allocation per
    // send once the buffer has grown.
    let raw = out.len() - start;
    let Some(len) = base64::encoded_len(raw, padded) else {
        return;
    };
    out.resize(start + raw + len, 0);
    let (src, dst) = out[start..].split_at_mut(raw);
    let written = engine.encode_slice(src, dst).unwrap_or(0);
    out.copy_within(start + raw..start + raw + written, start);
    out.truncate(start + written);
}

/// Percent-encodes, in place, the bytes of `out[start..]` that may not appear in a path:
/// grown once, then filled from the end, so a send allocates nothing once the buffer has.
fn percent_encode_tail(out: &mut Vec<u8>, start: usize) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let safe = |b: u8| b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@/?".contains(&b);
    let unsafe_bytes = out[start..].iter().filter(|&&b| !safe(b)).count();
    if unsafe_bytes == 0 {
        return;
    }
    let end = out.len();
    out.resize(end + 2 * unsafe_bytes, 0);
    let mut w = out.len();
    for r in (start..end).rev() {
        let b = out[r];
        if safe(b) {
            w -= 1;
            out[w] = b;
        } else {
            w -= 3;
            out[w..w + 3].copy_from_slice(&[
                b'%',
                HEX[usize::from(b >> 4)],
                HEX[usize::from(b & 15)],
            ]);
        }
    }
}

/// JSON-escapes, in place, the bytes of `out[start..]`.
fn json_escape_tail(out: &mut Vec<u8>, start: usize) {
    if !out[start..]
        .iter()
        .any(|&b| b == b'"' || b == b'\\' || b < 0x20)
    {
        return;
    }
    let raw = out.split_off(start);
    for b in raw {
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b if b < 0x20 => out.extend_from_slice(format!("\\u{b:04x}").as_bytes()),
            b => out.push(b),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn columns() -> Vec<String> {
        vec!["key".into(), "value".into()]
    }

    fn render(t: &Template, seq: u64) -> String {
        let cells = ["k 1/ü", "v\"1"];
        let mut out = Vec::new();
        t.render(
            seq,
            &|c, _, o: &mut Vec<u8>| o.extend_from_slice(cells[c].as_bytes()),
            &mut out,
        );
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn templates_fill_columns_and_the_sequence() {
        let t = Template::parse("/kv/{{ key }}?n={{seq}}", &columns(), Context::Path).unwrap();
        assert_eq!(render(&t, 42), "/kv/k%201/%C3%BC?n=42");
        let t = Template::parse(r#"{"v":"{{ value }}"}"#, &columns(), Context::Verbatim).unwrap();
        assert_eq!(render(&t, 0), r#"{"v":"v"1"}"#);
        let t = Template::parse(r#"{"v":"{{ value }}"}"#, &columns(), Context::Json).unwrap();
        assert_eq!(render(&t, 0), r#"{"v":"v\"1"}"#);
        assert!(Template::parse("/plain", &columns(), Context::Path)
            .unwrap()
            .is_static());
        let t =
            Template::parse(r#"{"k":"{{ key | base64 }}"}"#, &columns(), Context::Json).unwrap();
        assert_eq!(render(&t, 0), r#"{"k":"ayAxL8O8"}"#);
        let t = Template::parse("/{{ key|base64url }}", &columns(), Context::Path).unwrap();
        assert_eq!(render(&t, 0), "/ayAxL8O8");
        assert!(Template::parse("/{{ key | rot13 }}", &columns(), Context::Path).is_err());
        let t = Template::parse("/many?k={{ key | batch(3) }}", &columns(), Context::Path).unwrap();
        assert_eq!(t.rows_per_send(), 3);
        let mut out = Vec::new();
        t.render(
            0,
            &|_, nth, o: &mut Vec<u8>| o.extend_from_slice(format!("k{nth}").as_bytes()),
            &mut out,
        );
        assert_eq!(out, b"/many?k=k0,k1,k2");
        let t = Template::parse(
            r#"["{{ key | base64 | batch(2, '","') }}"]"#,
            &columns(),
            Context::Json,
        )
        .unwrap();
        let mut out = Vec::new();
        t.render(
            0,
            &|_, nth, o: &mut Vec<u8>| o.push(b'a' + nth as u8),
            &mut out,
        );
        assert_eq!(out, br#"["YQ==","Yg=="]"#);
        assert!(Template::parse("{{ key | batch(0) }}", &columns(), Context::Path).is_err());
    }

    #[test]
    fn the_most_a_template_fills_to_bounds_every_filling() {
        let widest = |c: usize| ([5u64, 3][c], false);
        for (text, context) in [
            ("/kv/{{ key }}?n={{seq}}", Context::Path),
            (
                r#"{"v":"{{ value }}","k":"{{ key | base64 }}"}"#,
                Context::Json,
            ),
            ("{{ key | batch(4, '; ') }}", Context::Verbatim),
        ] {
            let t = Template::parse(text, &columns(), context).unwrap();
            let most = t.max_len(&widest);
            // The longest filling there is: every byte one that escapes the most.
            for cell in ["\u{1}\u{1}\u{1}\u{1}\u{1}", "\"\"\"\"\"", "zzzzz"] {
                let mut out = Vec::new();
                t.render(
                    u64::MAX,
                    &|c, _, o: &mut Vec<u8>| {
                        o.extend_from_slice(&cell.as_bytes()[..widest(c).0 as usize])
                    },
                    &mut out,
                );
                assert!(out.len() as u64 <= most, "{text}: {} > {most}", out.len());
            }
        }
        let t = Template::parse("{{ key | batch(1000) }}", &columns(), Context::Path).unwrap();
        assert_eq!(t.max_len(&|_| (1 << 20, false)), 1000 * 3 * (1 << 20) + 999);
        assert_eq!(t.max_len(&|_| (1 << 20, true)), 1000 * (1 << 20) + 999);
    }

    #[test]
    fn percent_encoding_in_place_keeps_what_is_safe() {
        let mut out = b"/kv/".to_vec();
        out.extend_from_slice("a b/\u{0}ü%~".as_bytes());
        percent_encode_tail(&mut out, 4);
        assert_eq!(out, b"/kv/a%20b/%00%C3%BC%25~");
    }

    #[test]
    fn undefined_names_and_unclosed_braces_are_refused() {
        let e = Template::parse("/kv/{{ kye }}", &columns(), Context::Path).unwrap_err();
        assert!(
            e.to_string().contains("\"kye\"") && !e.to_string().contains("value,"),
            "{e}"
        );
        let e = Template::parse("/kv/{{ key", &columns(), Context::Path).unwrap_err();
        assert!(matches!(e, TemplateError::Unclosed(_)));
        let e = Template::parse("/{{ key }}", &[], Context::Path).unwrap_err();
        assert!(e.to_string().contains("no data source"), "{e}");
    }
}

//! Whether a YAML text stays within a depth and a number of nodes, found by pulling libyaml's
//! events one at a time and stopping at the first one past a limit.
//!
//! Why it exists: libyaml (so yaml_serde, which loads every event of a document before it
//! builds a value) spends time that grows with the square of the nesting of flow collections
//! (`[[[[…`): each token walks a stack as deep as the nesting. 195 KB of nested arrays took
//! longer than 15 s. Its own depth limit (128) only applies after every event was loaded.
//! Pulled one at a time, the scanner reads at most a line or 1,024 characters past the event
//! that breaks the limit, so a refusal costs about the limit squared, whatever the input.
//!
//! The check parses with the very scanner that yaml_serde uses, so what it lets through
//! parses within the same bounds. A text libyaml cannot parse passes the check up to the
//! error, and the full parse then reports that error where it is.
//!
//! This is the only `unsafe` code: libyaml-rs is C translated to Rust, with a C-style API.

#![deny(unsafe_op_in_unsafe_fn)]
#![warn(missing_docs)]

use libyaml_rs as sys;
use std::mem::MaybeUninit;

/// How far a text may go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Collections (sequences and mappings, block or flow) open at once.
    pub depth: usize,
    /// Nodes (scalars, collections, aliases) in all the text's documents.
    pub nodes: u64,
}

/// Where a text went past its limits: what, and the line and column (from 1) of the node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exceeded {
    /// A collection nested deeper than [`Limits::depth`].
    Depth {
        /// Line of the collection, from 1.
        line: u64,
        /// Column, from 1.
        column: u64,
    },
    /// A node past [`Limits::nodes`].
    Nodes {
        /// Line of the node, from 1.
        line: u64,
        /// Column, from 1.
        column: u64,
    },
}

/// Owns an initialized parser and deletes it, however the check ends.
struct Parser {
    // Boxed: libyaml keeps pointers into the parser, which must not move.
    sys: Box<MaybeUninit<sys::yaml_parser_t>>,
}

impl Parser {
    /// A parser reading `input`, which must outlive it (it keeps a pointer to it).
    fn new(input: &[u8]) -> Parser {
        let mut sys = Box::new(MaybeUninit::<sys::yaml_parser_t>::uninit());
        let p = sys.as_mut_ptr();
        // SAFETY: `p` points to memory for a parser; initialize writes all of it (a memset,
        // then its buffers). It fails only when an allocation fails, which aborts in Rust.
        unsafe {
            if sys::yaml_parser_initialize(p).fail {
                std::process::abort();
            }
            sys::yaml_parser_set_encoding(p, sys::YAML_UTF8_ENCODING);
            sys::yaml_parser_set_input_string(p, input.as_ptr(), input.len() as u64);
        }
        Parser { sys }
    }

    /// The next event's type and start, or `None` at a parse error.
    fn next(&mut self) -> Option<(sys::yaml_event_type_t, sys::yaml_mark_t)> {
        let p = self.sys.as_mut_ptr();
        let mut event = MaybeUninit::<sys::yaml_event_t>::uninit();
        let e = event.as_mut_ptr();
        // SAFETY: the parser was initialized in `new` and its input outlives it (the borrow
        // in `check`); parse writes a whole event when it succeeds, which is then read once
        // and deleted once. After a failure no event was made, and `check` calls no more.
        unsafe {
            if sys::yaml_parser_parse(p, e).fail {
                return None;
            }
            let got = ((*e).type_, (*e).start_mark);
            sys::yaml_event_delete(e);
            Some(got)
        }
    }
}

impl Drop for Parser {
    fn drop(&mut self) {
        // SAFETY: initialized in `new`, deleted once here.
        unsafe { sys::yaml_parser_delete(self.sys.as_mut_ptr()) }
    }
}

/// Checks `text` against `limits`, stopping at the first node past one of them. A text
/// libyaml cannot parse is within limits up to its error: `Ok`.
pub fn check(text: &str, limits: Limits) -> Result<(), Exceeded> {
    let mut parser = Parser::new(text.as_bytes());
    let (mut depth, mut nodes) = (0usize, 0u64);
    while let Some((kind, mark)) = parser.next() {
        let (line, column) = (mark.line + 1, mark.column + 1);
        match kind {
            // No event: past the end (libyaml makes none once the stream ended).
            sys::YAML_STREAM_END_EVENT | sys::YAML_NO_EVENT => break,
            sys::YAML_SEQUENCE_START_EVENT | sys::YAML_MAPPING_START_EVENT => {
                depth += 1;
                nodes += 1;
                if depth > limits.depth {
                    return Err(Exceeded::Depth { line, column });
                }
            }
            sys::YAML_SEQUENCE_END_EVENT | sys::YAML_MAPPING_END_EVENT => {
                depth = depth.saturating_sub(1);
            }
            sys::YAML_SCALAR_EVENT | sys::YAML_ALIAS_EVENT => nodes += 1,
            _ => {}
        }
        if nodes > limits.nodes {
            return Err(Exceeded::Nodes { line, column });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    const LIMITS: Limits = Limits {
        depth: 64,
        nodes: 1_000,
    };

    #[test]
    fn documents_within_limits_pass() {
        assert_eq!(check("a: [1, {b: c}]\n---\n- x\n", LIMITS), Ok(()));
        assert_eq!(check("", LIMITS), Ok(()));
        // An error is the full parse's to report.
        assert_eq!(check("a: [1,\n", LIMITS), Ok(()));
    }

    #[test]
    fn depth_and_nodes_are_placed() {
        // The mapping is one level, the 64th bracket (column 66) the 65th.
        let deep = format!("x:\n  {}", "[".repeat(65));
        assert_eq!(
            check(&deep, LIMITS),
            Err(Exceeded::Depth {
                line: 2,
                column: 66
            })
        );
        let block = "- ".repeat(65);
        assert!(matches!(
            check(&block, LIMITS),
            Err(Exceeded::Depth { line: 1, .. })
        ));
        let wide = format!("[{}]", "1,".repeat(2_000));
        assert!(matches!(
            check(&wide, LIMITS),
            Err(Exceeded::Nodes { line: 1, .. })
        ));
    }

    /// 100,000 nested arrays on one line (195 KB): the whole parse is quadratic in the depth
    /// (well past a minute in a debug build); the check stops after the limit's square.
    #[test]
    fn deep_nesting_is_refused_after_bounded_work() {
        let text = "[".repeat(100_000) + &"]".repeat(100_000);
        let started = Instant::now();
        assert!(matches!(check(&text, LIMITS), Err(Exceeded::Depth { .. })));
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{:?}",
            started.elapsed()
        );
    }
}

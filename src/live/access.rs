//! Who may do what on the live page: the per-run token, drawn from the operating system,
//! and the rules that read it. On loopback anyone may read and only the token may stop
//! the run; on any other address every request needs the token (the page shows the test's
//! URLs and headers, redacted as the reports are, but still the test's).

use super::LiveError;

/// The token's length in random bytes (written as twice as many hex digits).
const TOKEN_BYTES: usize = 24;

/// A fresh token from the operating system's random source.
pub(super) fn fresh_token() -> Result<String, LiveError> {
    use ring::rand::SecureRandom;
    let mut bytes = [0u8; TOKEN_BYTES];
    ring::rand::SystemRandom::new()
        .fill(&mut bytes)
        .map_err(|_| LiveError::Random)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// What a request may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Access {
    /// See the page and its events.
    pub read: bool,
    /// Stop the run.
    pub control: bool,
}

/// The rules of one server.
#[derive(Clone)]
pub(super) struct Rules {
    /// The run's token.
    pub token: String,
    /// Whether reading needs no token (the server listens on loopback).
    pub open_to_read: bool,
}

impl Rules {
    /// What a request carrying `query` (the URL's query string) and `header` (the
    /// `x-headroom-token` header) may do.
    pub fn access(&self, query: Option<&str>, header: Option<&[u8]>) -> Access {
        let given = header.or_else(|| {
            query.and_then(|q| {
                q.split('&')
                    .find_map(|kv| kv.strip_prefix("token="))
                    .map(str::as_bytes)
            })
        });
        let holds = given.is_some_and(|g| same(g, self.token.as_bytes()));
        Access {
            read: holds || self.open_to_read,
            control: holds,
        }
    }
}

/// Compares in time independent of where the two differ, so the token cannot be guessed a
/// byte at a time by timing the answers (ring keeps no public comparison for this).
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_token_is_fresh_each_run_and_only_it_controls() {
        let a = fresh_token().unwrap();
        assert_eq!(a.len(), 2 * TOKEN_BYTES);
        assert_ne!(a, fresh_token().unwrap());
        let loopback = Rules {
            token: a.clone(),
            open_to_read: true,
        };
        let none = loopback.access(None, None);
        assert!(none.read && !none.control);
        let q = format!("x=1&token={a}");
        assert!(loopback.access(Some(&q), None).control);
        assert!(loopback.access(None, Some(a.as_bytes())).control);
        assert!(!loopback.access(Some("token=00"), None).control);
        let mut wrong = a.clone().into_bytes();
        wrong[0] ^= 1;
        assert!(!loopback.access(None, Some(&wrong)).control);
        let open = Rules {
            token: a.clone(),
            open_to_read: false,
        };
        assert_eq!(
            open.access(Some("token="), None),
            Access {
                read: false,
                control: false
            }
        );
        assert!(open.access(Some(&q), None).read);
    }
}

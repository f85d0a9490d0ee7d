//! How many requests a worker may send a second time: a share of what it sends, so that
//! retrying what an overloaded server closed or refused never multiplies the load asked for
//! (the retry budget of Finagle and gRPC, with headroom's numbers).

/// Retries earned by each request sent.
pub const RETRY_SHARE: f64 = 0.1;
/// Retries allowed before any send has paid for them (a server's idle closes early on).
const RESERVE: f64 = 10.0;
/// The most a quiet stretch can save up, so it cannot pay for a burst later.
const MOST: f64 = 100.0;

/// A worker's retries in hand.
#[derive(Debug, Clone)]
pub struct RetryBudget {
    tokens: f64,
}

impl Default for RetryBudget {
    fn default() -> Self {
        RetryBudget { tokens: RESERVE }
    }
}

impl RetryBudget {
    /// A request was sent: it earns a share of a retry.
    pub fn earn(&mut self) {
        self.tokens = (self.tokens + RETRY_SHARE).min(MOST);
    }

    /// Takes one retry; false when none is left.
    pub fn spend(&mut self) -> bool {
        let ok = self.tokens >= 1.0;
        if ok {
            self.tokens -= 1.0;
        }
        ok
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_stay_within_a_share_of_the_sends_after_the_reserve() {
        let mut b = RetryBudget::default();
        let (mut sent, mut retried) = (0u64, 0u64);
        // Every request closed unprocessed, every one asking for a retry.
        for _ in 0..10_000 {
            b.earn();
            sent += 1;
            if b.spend() {
                retried += 1;
            }
        }
        assert!(
            retried <= (RESERVE + RETRY_SHARE * sent as f64) as u64,
            "{retried}"
        );
        assert!(retried >= (RETRY_SHARE * sent as f64) as u64, "{retried}");
    }

    #[test]
    fn a_quiet_stretch_saves_up_no_more_than_the_cap() {
        let mut b = RetryBudget::default();
        for _ in 0..1_000_000 {
            b.earn();
        }
        let burst = std::iter::from_fn(|| b.spend().then_some(())).count();
        assert_eq!(burst, MOST as usize);
    }
}

//! Open-model load in stages: constant rates and linear ramps in sequence, as due times.
//!
//! Request `n` is due when the expected count of arrivals reaches `n`: for a stage ramping from
//! `a` to `b` req/s over `T`, that count is `a·t + (b − a)·t²/(2T)`, solved for `t`. As with a
//! constant rate, due times come from the count, so nothing drifts over a long profile.

use std::time::Duration;

/// One stretch of an open-model profile.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateStage {
    /// Rate at the start of the stage, req/s.
    pub from: f64,
    /// Rate at its end, req/s (equal to `from` for a constant stage).
    pub to: f64,
    /// How long it lasts.
    pub duration: Duration,
}

#[derive(Debug, Clone, Copy)]
struct Placed {
    stage: RateStage,
    /// Seconds from the start of the profile to the start of the stage.
    start: f64,
    /// Arrivals expected before the stage starts.
    before: f64,
    /// Arrivals expected during the stage.
    count: f64,
}

/// Due times of a staged open-model profile.
#[derive(Debug, Clone)]
pub struct RateProfile {
    stages: Vec<Placed>,
}

impl RateProfile {
    /// A profile of `stages` in sequence (each rate finite and non-negative).
    pub fn new(stages: &[RateStage]) -> RateProfile {
        let mut start = 0.0;
        let mut before = 0.0;
        let stages = stages
            .iter()
            .map(|&stage| {
                let secs = stage.duration.as_secs_f64();
                let count = (stage.from + stage.to) / 2.0 * secs;
                let placed = Placed {
                    stage,
                    start,
                    before,
                    count,
                };
                start += secs;
                before += count;
                placed
            })
            .collect();
        RateProfile { stages }
    }

    /// The profile of a plan's stages (rates, for the open model).
    pub fn of_stages(stages: &[crate::plan::Stage]) -> RateProfile {
        let stages: Vec<RateStage> = stages
            .iter()
            .map(|s| RateStage {
                from: s.from,
                to: s.to,
                duration: s.duration,
            })
            .collect();
        RateProfile::new(&stages)
    }

    /// Requests the whole profile sends.
    pub fn total(&self) -> u64 {
        self.stages
            .last()
            .map_or(0, |s| (s.before + s.count).ceil() as u64)
    }

    /// How long the profile lasts.
    pub fn duration(&self) -> Duration {
        self.stages.last().map_or(Duration::ZERO, |s| {
            Duration::from_secs_f64(s.start) + s.stage.duration
        })
    }

    /// Offset from the start at which request `n` (from 0) is due; `None` past the profile.
    pub fn due(&self, n: u64) -> Option<Duration> {
        self.at(n as f64)
    }

    /// Offset from the start at which the expected count of arrivals reaches `n` (a real
    /// number: Poisson arrivals fall between whole counts); `None` past the profile.
    pub fn at(&self, n: f64) -> Option<Duration> {
        // Stages are few: a linear scan from the end finds the one holding arrival n.
        let s = self
            .stages
            .iter()
            .rev()
            .find(|s| s.before <= n && s.count > 0.0)?;
        let k = n - s.before;
        if k >= s.count {
            return None;
        }
        let secs = s.stage.duration.as_secs_f64();
        let (a, b) = (s.stage.from, s.stage.to);
        // Root of a·t + (b − a)·t²/(2T) = k, in the form that stays exact when b = a and
        // when a = 0.
        let t = if k == 0.0 {
            0.0
        } else {
            2.0 * k / (a + (a * a + 2.0 * (b - a) * k / secs).max(0.0).sqrt())
        };
        Some(Duration::from_secs_f64(s.start + t.min(secs)))
    }

    /// The expected count of arrivals by `elapsed`: the inverse of [`RateProfile::at`] (the
    /// whole profile's count once it is over).
    pub fn expected_by(&self, elapsed: Duration) -> f64 {
        let t = elapsed.as_secs_f64();
        let Some(s) = self.stages.iter().rev().find(|s| s.start <= t) else {
            return 0.0;
        };
        let secs = s.stage.duration.as_secs_f64();
        let into = (t - s.start).min(secs);
        if secs <= 0.0 {
            return s.before + s.count;
        }
        let (a, b) = (s.stage.from, s.stage.to);
        s.before + a * into + (b - a) * into * into / (2.0 * secs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stage(from: f64, to: f64, secs: u64) -> RateStage {
        RateStage {
            from,
            to,
            duration: Duration::from_secs(secs),
        }
    }

    #[test]
    fn a_constant_stage_spaces_requests_evenly() {
        let p = RateProfile::new(&[stage(100.0, 100.0, 10)]);
        assert_eq!(p.total(), 1000);
        assert_eq!(p.due(0), Some(Duration::ZERO));
        assert_eq!(p.due(1), Some(Duration::from_millis(10)));
        assert_eq!(p.due(999), Some(Duration::from_millis(9990)));
        assert_eq!(p.due(1000), None);
    }

    #[test]
    fn a_ramp_sends_its_area_and_speeds_up() {
        // 0 → 100 req/s over 10 s: 500 requests, half of them in the last 2.93 s.
        let p = RateProfile::new(&[stage(0.0, 100.0, 10)]);
        assert_eq!(p.total(), 500);
        let at = |n| p.due(n).unwrap().as_secs_f64();
        assert!((at(250) - 10.0 / 2f64.sqrt()).abs() < 1e-9, "{}", at(250));
        assert!(at(499) < 10.0 && p.due(500).is_none());
        let gaps: Vec<f64> = (1..500).map(|n| at(n) - at(n - 1)).collect();
        assert!(
            gaps.windows(2).all(|w| w[1] <= w[0] + 1e-12),
            "a ramp up never slows down"
        );
    }

    #[test]
    fn stages_follow_one_another_with_pauses_and_ramps_down() {
        let p = RateProfile::new(&[
            stage(0.0, 200.0, 2),   // 200 requests
            stage(200.0, 200.0, 5), // 1000
            stage(0.0, 0.0, 1),     // a pause
            stage(400.0, 0.0, 1),   // 200, a spike decaying
        ]);
        assert_eq!(p.total(), 1400);
        assert_eq!(p.duration(), Duration::from_secs(9));
        let at = |n| p.due(n).unwrap().as_secs_f64();
        assert!((at(200) - 2.0).abs() < 1e-9);
        assert!((at(1199) - (2.0 + 999.0 / 200.0)).abs() < 1e-9);
        assert!((at(1200) - 8.0).abs() < 1e-9, "the pause sends nothing");
        assert!(at(1399) < 9.0 && p.due(1400).is_none());
        let all: Vec<f64> = (0..1400).map(at).collect();
        assert!(
            all.windows(2).all(|w| w[1] >= w[0]),
            "due times never go back"
        );
    }

    #[test]
    fn the_expected_count_by_a_time_inverts_the_due_time_of_a_count() {
        let p = RateProfile::new(&[
            stage(0.0, 200.0, 2),
            stage(200.0, 200.0, 5),
            stage(0.0, 0.0, 1),
            stage(400.0, 0.0, 1),
        ]);
        for tenth in 0..=13_990u32 {
            let count = f64::from(tenth) / 10.0;
            let at = p.at(count).unwrap();
            let back = p.expected_by(at);
            // Due times are rounded to the nanosecond: at most 400 req/s × 1 ns off.
            assert!((back - count).abs() < 1e-6, "{count} -> {at:?} -> {back}");
        }
        // A pause adds nothing; past the end, the whole count.
        let pause = p.expected_by(Duration::from_millis(7500));
        assert!((pause - 1200.0).abs() < 1e-9);
        assert!((p.expected_by(Duration::from_secs(60)) - 1400.0).abs() < 1e-9);
    }
}

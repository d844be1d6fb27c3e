//! When each frame of a sending port is due.
//!
//! A port sends at one constant rate, or steps once to a second rate after a
//! given number of frames: RFC 2544 §26.5's system recovery test overloads
//! the DUT, then drops to a lower load within the same stream of frames.
//! Frame k is due `due_ns(k)` after the port's t0.

use serde::Serialize;

/// A change of rate at frame `at_frame` (the first frame sent at `rate_fps`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Step {
    pub at_frame: u64,
    pub rate_fps: f64,
    /// Due time of `at_frame` after t0 [s].
    pub at_s: f64,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pace {
    pub rate_fps: f64,
    pub step: Option<Step>,
}

impl Pace {
    pub fn constant(rate_fps: f64) -> Pace {
        Pace { rate_fps, step: None }
    }

    /// `rate_fps` for frames `0..at_frame`, then `then_fps`.
    pub fn stepped(rate_fps: f64, at_frame: u64, then_fps: f64) -> Pace {
        Pace { rate_fps, step: Some(Step { at_frame, rate_fps: then_fps, at_s: at_frame as f64 / rate_fps }) }
    }

    /// Due time of frame `k` after t0 [ns].
    #[inline]
    pub fn due_ns(&self, k: u64) -> f64 {
        match self.step {
            Some(s) if k >= s.at_frame => s.at_s * 1e9 + (k - s.at_frame) as f64 * 1e9 / s.rate_fps,
            _ => k as f64 * 1e9 / self.rate_fps,
        }
    }

    /// Frames due by `elapsed_ns` after t0 (frames k with `due_ns(k) ≤ elapsed_ns`).
    #[inline]
    pub fn due_by(&self, elapsed_ns: u64) -> u64 {
        let e = elapsed_ns as f64;
        let first = |rate: f64, e: f64| (e * rate / 1e9) as u64 + 1;
        match self.step {
            Some(s) if e >= s.at_s * 1e9 => s.at_frame + first(s.rate_fps, e - s.at_s * 1e9),
            Some(s) => first(self.rate_fps, e).min(s.at_frame),
            None => first(self.rate_fps, e),
        }
    }

    /// Mean intended rate over `frames` frames [frames/s]: (frames − 1) over
    /// the last frame's due time; the first rate for fewer than two frames.
    pub fn mean_fps(&self, frames: u64) -> f64 {
        if frames >= 2 { (frames - 1) as f64 * 1e9 / self.due_ns(frames - 1) } else { self.rate_fps }
    }

    /// Time the schedule of `frames` frames spans, t0 to one period after the last frame [s].
    pub fn span_s(&self, frames: u64) -> f64 {
        self.due_ns(frames) / 1e9
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_pace_is_k_over_rate() {
        let p = Pace::constant(1000.0);
        assert_eq!(p.due_ns(0), 0.0);
        assert_eq!(p.due_ns(5), 5e6);
        assert_eq!(p.due_by(0), 1);
        assert_eq!(p.due_by(4_999_999), 5);
        assert_eq!(p.due_by(5_000_000), 6);
        assert_eq!(p.mean_fps(100), 1000.0);
        assert_eq!(p.span_s(1000), 1.0);
    }

    #[test]
    fn stepped_pace_changes_rate_at_the_step() {
        // 110 frames at 1100/s (0.1 s), then 500/s.
        let p = Pace::stepped(1100.0, 110, 500.0);
        assert!((p.due_ns(110) - 1e8).abs() < 1.0);
        assert!((p.due_ns(111) - (1e8 + 2e6)).abs() < 1.0);
        assert_eq!(p.due_by(99_000_000), 109);
        assert_eq!(p.due_by(100_000_001), 111);
        assert_eq!(p.due_by(102_000_001), 112);
        // Mean over 110 + 50 frames: 159 frames in 0.1 + 0.098 s.
        assert!((p.mean_fps(160) - 159.0 / 0.198).abs() < 1e-6);
        assert!((p.span_s(160) - 0.2).abs() < 1e-9);
    }

    #[test]
    fn due_by_inverts_due_ns() {
        let p = Pace::stepped(3333.0, 1000, 777.0);
        for k in [0u64, 1, 999, 1000, 1001, 5000] {
            let t = p.due_ns(k).ceil() as u64;
            assert_eq!(p.due_by(t), k + 1, "frame {k}");
        }
    }
}

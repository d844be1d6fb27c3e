//! Per-stream receive counting and delay statistics.
//!
//! Counting follows RFC 2544 §10 (sequence-based loss, out-of-order and
//! duplicate frames); delay follows RFC 5481 §4 and RFC 8219 §7.2–7.3:
//! latency D(i) = receive − transmit time of every received frame, PDV(i) =
//! D(i) − Dmin, IPDV(i) = D(i) − D(i−1) for consecutive sequence numbers.
//! Inter-arrival time is the gap between successive received frames of the
//! stream in arrival order (seed 000's inter-packet delay).

use base64::Engine;
use hdrhistogram::serialization::{Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use serde::Serialize;

/// Significant decimal digits of every histogram (relative error ≤ 0.1 %).
const SIGFIG: u8 = 3;
/// Largest value any histogram records [ns]; larger values are clamped.
const MAX_NS: u64 = 3_600_000_000_000;

fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_NS, SIGFIG).expect("constant histogram bounds are valid")
}

/// Exact running moments (Welford) with exact min and max.
#[derive(Debug, Clone, Default)]
struct Moments {
    n: u64,
    mean: f64,
    m2: f64,
    min: u64,
    max: u64,
}

impl Moments {
    fn add(&mut self, x: u64) {
        if self.n == 0 {
            self.min = x;
            self.max = x;
        } else {
            self.min = self.min.min(x);
            self.max = self.max.max(x);
        }
        self.n += 1;
        let d = x as f64 - self.mean;
        self.mean += d / self.n as f64;
        self.m2 += d * (x as f64 - self.mean);
    }

    fn stddev(&self) -> f64 {
        if self.n < 2 { 0.0 } else { (self.m2 / (self.n - 1) as f64).sqrt() }
    }
}

/// A distribution of non-negative durations: exact moments plus an HDR
/// histogram for percentiles.
#[derive(Debug, Clone)]
pub struct Distribution {
    m: Moments,
    h: Histogram<u64>,
}

/// Summary of a distribution [ns]. Percentiles carry the histogram's
/// relative error (≤ 0.1 %); min, max, mean and stddev are exact.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Summary {
    pub count: u64,
    pub min: u64,
    pub mean: f64,
    pub stddev: f64,
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub p999: u64,
    pub max: u64,
}

impl Default for Distribution {
    fn default() -> Self {
        Distribution { m: Moments::default(), h: histogram() }
    }
}

impl Distribution {
    #[inline]
    pub fn add(&mut self, x_ns: u64) {
        self.m.add(x_ns);
        // Cannot fail: the value is clamped into the histogram's range.
        let _ = self.h.record(x_ns.clamp(1, MAX_NS));
    }

    pub fn count(&self) -> u64 {
        self.m.n
    }

    /// Value at quantile `q`, clamped into [min, max].
    pub fn quantile(&self, q: f64) -> u64 {
        self.h.value_at_quantile(q).clamp(self.m.min, self.m.max)
    }

    pub fn summary(&self) -> Option<Summary> {
        if self.m.n == 0 {
            return None;
        }
        Some(Summary {
            count: self.m.n,
            min: self.m.min,
            mean: self.m.mean,
            stddev: self.m.stddev(),
            p50: self.quantile(0.5),
            p90: self.quantile(0.9),
            p99: self.quantile(0.99),
            p999: self.quantile(0.999),
            max: self.m.max,
        })
    }

    /// The histogram in HdrHistogram's V2 deflate format, base64-encoded, as
    /// read by every HdrHistogram implementation.
    pub fn export(&self) -> String {
        let mut buf = Vec::new();
        V2DeflateSerializer::new().serialize(&self.h, &mut buf).expect("serializing to memory cannot fail");
        base64::engine::general_purpose::STANDARD.encode(buf)
    }
}

/// Packet delay variation summary (RFC 5481 §4.2, RFC 8219 §7.3): PDV at
/// a quantile is D(q) − Dmin [ns].
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PdvSummary {
    pub p50: u64,
    pub p99: u64,
    /// The RFC 8219 §7.3 summary figure, D99.9 − Dmin.
    pub p999: u64,
    pub max: u64,
}

/// Inter-packet delay variation summary (RFC 5481 §4.1) [ns], signed.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct IpdvSummary {
    pub count: u64,
    pub min: i64,
    pub median: i64,
    pub max: i64,
}

/// Signed values, kept as two histograms of magnitudes.
#[derive(Debug, Clone, Default)]
struct Signed {
    neg: Distribution,
    pos: Distribution,
    min: i64,
    max: i64,
}

impl Signed {
    fn add(&mut self, x: i64) {
        let n = self.neg.count() + self.pos.count();
        if n == 0 {
            self.min = x;
            self.max = x;
        } else {
            self.min = self.min.min(x);
            self.max = self.max.max(x);
        }
        if x < 0 { self.neg.add(x.unsigned_abs()) } else { self.pos.add(x as u64) }
    }

    fn summary(&self) -> Option<IpdvSummary> {
        let (nn, np) = (self.neg.count(), self.pos.count());
        let n = nn + np;
        if n == 0 {
            return None;
        }
        // Rank of the median among all values sorted ascending (lower median).
        let k = (n - 1) / 2;
        let median = if k < nn {
            // Negatives ascending are magnitudes descending: rank k is the
            // magnitude at quantile 1 − k/nn.
            -(self.neg.quantile(1.0 - k as f64 / nn as f64) as i64)
        } else {
            let r = k - nn;
            self.pos.quantile((r + 1) as f64 / np as f64) as i64
        };
        Some(IpdvSummary { count: n, min: self.min, median: median.clamp(self.min, self.max), max: self.max })
    }
}

/// Everything the receiver counts for one stream.
#[derive(Debug, Clone)]
pub struct StreamCounters {
    /// Frames the stream will send; sequence numbers are below it.
    planned: u64,
    seen: Vec<u64>,
    pub rx_frames: u64,
    pub duplicate_frames: u64,
    pub reordered_frames: u64,
    /// Frames whose receive timestamp precedes their transmit timestamp.
    pub negative_latency_frames: u64,
    /// Fragments received of this stream's fragmented frames (whole or not).
    pub rx_fragments: u64,
    /// Frames received as fragments and found whole (`reassembly`).
    pub reassembled_frames: u64,
    /// Frames of which some fragments, the first among them, arrived but
    /// not all: lost.
    pub incomplete_frames: u64,
    /// Which lane of the sending port each frame came by: frames are in
    /// order when each lane's are (`mix::Lane`).
    lanes: crate::mix::LaneOf,
    /// Highest sequence number seen, per lane.
    max_seq: Vec<Option<u64>>,
    last_seq: u64,
    last_latency: u64,
    last_rx_ns: Option<u64>,
    pub latency: Distribution,
    ipdv: Signed,
    pub inter_arrival: Distribution,
    /// The 4-tuples the frames arrived with, for a `learn_tuples` stream.
    pub tuples: Option<crate::tuples::TupleLog>,
}

impl StreamCounters {
    pub fn new(planned: u64, lanes: crate::mix::LaneOf) -> StreamCounters {
        StreamCounters {
            planned,
            seen: vec![0; planned.div_ceil(64) as usize],
            rx_frames: 0,
            duplicate_frames: 0,
            reordered_frames: 0,
            negative_latency_frames: 0,
            rx_fragments: 0,
            reassembled_frames: 0,
            incomplete_frames: 0,
            max_seq: vec![None; lanes.lanes()],
            lanes,
            last_seq: u64::MAX,
            last_latency: 0,
            last_rx_ns: None,
            latency: Distribution::default(),
            ipdv: Signed::default(),
            inter_arrival: Distribution::default(),
            tuples: None,
        }
    }

    /// True if `seq` can belong to this stream.
    #[inline]
    pub fn accepts(&self, seq: u64) -> bool {
        seq < self.planned
    }

    /// True if frame `seq` has been counted received.
    pub fn has(&self, seq: u64) -> bool {
        self.accepts(seq) && self.seen[(seq / 64) as usize] & (1u64 << (seq % 64)) != 0
    }

    /// Counts one frame with a valid signature (the caller checked `accepts`).
    #[inline]
    pub fn record(&mut self, seq: u64, tx_ns: u64, rx_ns: u64) {
        let (w, bit) = ((seq / 64) as usize, 1u64 << (seq % 64));
        if self.seen[w] & bit != 0 {
            self.duplicate_frames += 1;
            return;
        }
        self.seen[w] |= bit;
        self.rx_frames += 1;
        let lane = &mut self.max_seq[self.lanes.lane(seq)];
        match *lane {
            Some(m) if seq < m => self.reordered_frames += 1,
            _ => *lane = Some(seq),
        }
        // A frame received "before" it was sent (the clocks disagree) is
        // counted, never timed: it enters no delay statistic, and the
        // trial's result flags it (v6bench marks such a trial suspect).
        if rx_ns >= tx_ns {
            let latency = rx_ns - tx_ns;
            self.latency.add(latency);
            if self.last_seq != u64::MAX && seq == self.last_seq + 1 {
                self.ipdv.add(latency as i64 - self.last_latency as i64);
            }
            self.last_seq = seq;
            self.last_latency = latency;
        } else {
            self.negative_latency_frames += 1;
            self.last_seq = u64::MAX;
        }
        if let Some(prev) = self.last_rx_ns {
            self.inter_arrival.add(rx_ns.saturating_sub(prev));
        }
        self.last_rx_ns = Some(rx_ns);
    }

    /// First and last sequence number below `sent` that never arrived.
    pub fn lost_range(&self, sent: u64) -> Option<(u64, u64)> {
        let sent = sent.min(self.planned);
        let words = sent.div_ceil(64) as usize;
        // The missing frames of word w below `sent`, as set bits.
        let missing = |w: usize| {
            let valid = if (w as u64 + 1) * 64 <= sent { u64::MAX } else { (1u64 << (sent % 64)) - 1 };
            !self.seen[w] & valid
        };
        let first = (0..words).find_map(|w| Some(missing(w)).filter(|&m| m != 0).map(|m| w as u64 * 64 + u64::from(m.trailing_zeros())))?;
        let last = (0..words).rev().find_map(|w| Some(missing(w)).filter(|&m| m != 0).map(|m| w as u64 * 64 + 63 - u64::from(m.leading_zeros())))?;
        Some((first, last))
    }

    pub fn pdv(&self) -> Option<PdvSummary> {
        let s = self.latency.summary()?;
        Some(PdvSummary { p50: s.p50 - s.min, p99: s.p99 - s.min, p999: s.p999 - s.min, max: s.max - s.min })
    }

    pub fn ipdv(&self) -> Option<IpdvSummary> {
        self.ipdv.summary()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_loss_reordering_and_duplicates() {
        let mut c = StreamCounters::new(10, crate::mix::LaneOf::single());
        for (seq, tx) in [(0u64, 100u64), (1, 200), (3, 400), (2, 300), (3, 400), (5, 600)] {
            assert!(c.accepts(seq));
            c.record(seq, tx, tx + 50);
        }
        assert!(!c.accepts(10));
        assert_eq!(c.rx_frames, 5);
        assert_eq!(c.duplicate_frames, 1);
        assert_eq!(c.reordered_frames, 1); // seq 2 after 3
        let l = c.latency.summary().unwrap();
        assert_eq!((l.min, l.max, l.count), (50, 50, 5));
        assert_eq!(l.mean, 50.0);
    }

    #[test]
    fn order_is_checked_within_each_lane_of_the_sending_port() {
        // One stream from a port with two senders: even frames by lane 0, odd by lane 1.
        let s = crate::mix::Schedule::new(&[1]).unwrap();
        let mut c = StreamCounters::new(10, crate::mix::LaneOf::new(&s, 0, 2));
        // Lane 1 runs ahead of lane 0: in order within each lane.
        for seq in [1u64, 3, 0, 5, 2, 4] {
            c.record(seq, 100, 150);
        }
        assert_eq!(c.reordered_frames, 0);
        c.record(7, 100, 150);
        c.record(9, 100, 150);
        c.record(8, 100, 150);
        c.record(6, 100, 150); // lane 0: 6 after 8
        assert_eq!((c.rx_frames, c.reordered_frames), (10, 1));
    }

    #[test]
    fn lost_range_spans_first_to_last_missing_frame() {
        let mut c = StreamCounters::new(200, crate::mix::LaneOf::single());
        for seq in (0..200u64).filter(|q| ![3, 70, 130].contains(q)) {
            c.record(seq, 0, 1);
        }
        assert_eq!(c.lost_range(200), Some((3, 130)));
        assert_eq!(c.lost_range(100), Some((3, 70)));
        assert_eq!(c.lost_range(3), None);
    }

    #[test]
    fn lost_range_word_wise_agrees_with_a_bit_by_bit_scan() {
        let mut x = 0x2545_f491_4f6c_dd1d_u64; // xorshift: a fixed pseudo-random pattern
        for planned in [1u64, 63, 64, 65, 128, 129, 1000] {
            let mut c = StreamCounters::new(planned, crate::mix::LaneOf::single());
            for seq in 0..planned {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                if !x.is_multiple_of(5) || seq == 0 {
                    c.record(seq, 0, 1);
                }
            }
            for sent in [0, 1, planned / 2, planned.saturating_sub(1), planned, planned + 10] {
                let s = sent.min(planned);
                let first = (0..s).find(|&q| !c.has(q));
                let last = (0..s).rev().find(|&q| !c.has(q));
                assert_eq!(c.lost_range(sent), first.zip(last), "planned {planned}, sent {sent}");
            }
        }
    }

    #[test]
    fn latency_summary_and_pdv() {
        let mut c = StreamCounters::new(1000, crate::mix::LaneOf::single());
        for seq in 0..1000u64 {
            c.record(seq, 0, 1000 + seq); // latency 1000..=1999 ns
        }
        let s = c.latency.summary().unwrap();
        assert_eq!(s.min, 1000);
        assert_eq!(s.max, 1999);
        assert!((s.mean - 1499.5).abs() < 1e-9);
        assert!((s.stddev - 288.819).abs() < 0.01);
        assert!((s.p50 as i64 - 1500).abs() <= 2, "{}", s.p50);
        assert!((s.p99 as i64 - 1990).abs() <= 2, "{}", s.p99);
        let pdv = c.pdv().unwrap();
        assert_eq!(pdv.p999, s.p999 - 1000);
        let ipdv = c.ipdv().unwrap();
        assert_eq!((ipdv.count, ipdv.min, ipdv.median, ipdv.max), (999, 1, 1, 1));
        let ia = c.inter_arrival.summary().unwrap();
        assert_eq!((ia.min, ia.max, ia.count), (1, 1, 999));
    }

    #[test]
    fn ipdv_is_signed_and_only_for_consecutive_sequence() {
        let mut c = StreamCounters::new(10, crate::mix::LaneOf::single());
        c.record(0, 0, 500);
        c.record(1, 0, 300); // IPDV −200
        c.record(2, 0, 700); // +400
        c.record(4, 0, 100); // gap: no IPDV
        c.record(5, 0, 90); // −10
        let i = c.ipdv().unwrap();
        assert_eq!((i.count, i.min, i.max), (3, -200, 400));
        assert_eq!(i.median, -10);
    }

    #[test]
    fn negative_latency_is_counted_not_hidden() {
        let mut c = StreamCounters::new(2, crate::mix::LaneOf::single());
        c.record(0, 1000, 900);
        c.record(1, 1000, 1500);
        assert_eq!(c.negative_latency_frames, 1);
        assert_eq!(c.rx_frames, 2);
        let l = c.latency.summary().unwrap();
        assert_eq!((l.count, l.min), (1, 500)); // the negative one is not timed as 0
        assert!(c.ipdv().is_none());
    }

    #[test]
    fn histogram_exports_and_reads_back() {
        let mut d = Distribution::default();
        for x in [10u64, 20, 30_000, 4_000_000] {
            d.add(x);
        }
        let text = d.export();
        let bytes = base64::engine::general_purpose::STANDARD.decode(text).unwrap();
        let h: Histogram<u64> = hdrhistogram::serialization::Deserializer::new().deserialize(&mut &bytes[..]).unwrap();
        assert_eq!(h.len(), 4);
        assert!(h.equivalent(h.max(), 4_000_000));
    }
}

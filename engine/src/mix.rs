//! Deterministic interleaving of streams by integer shares.
//!
//! Shares are reduced by their greatest common divisor to a window of
//! `W = Σ shares` frames. Every aligned window of W frames holds exactly
//! `share_i` frames of stream i (a 90/10 mix gives exactly 9 + 1 in every
//! 10 frames), and inside the window the streams are spread evenly by the
//! smooth weighted round-robin rule: each position credits every stream
//! its share and sends the stream with the largest credit (lowest index on
//! ties), which is then debited W.

/// Largest window accepted; larger share sets should be reduced by the caller.
pub const MAX_WINDOW: u64 = 100_000;
/// Largest window of a schedule in runs ([`Schedule::runs`]): 2 bytes a frame.
pub const MAX_RUN_WINDOW: u64 = 4_000_000;

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// A schedule: which stream (by position in the `shares` list) each frame of
/// a window carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule {
    pub order: Vec<u16>,
    /// Reduced shares, one per input stream.
    pub shares: Vec<u64>,
}

impl Schedule {
    /// Builds the schedule. Errors on an empty list, a zero share or a
    /// window above [`MAX_WINDOW`].
    pub fn new(shares: &[u64]) -> Result<Schedule, String> {
        if shares.is_empty() {
            return Err("a sending port needs at least one stream".into());
        }
        if shares.contains(&0) {
            return Err("every share must be at least 1".into());
        }
        let g = shares.iter().fold(0, |g, &s| gcd(g, s));
        let shares: Vec<u64> = shares.iter().map(|s| s / g).collect();
        // Summed with a check: shares near u64::MAX would otherwise wrap to a small window.
        let window = match shares.iter().try_fold(0u64, |w, &s| w.checked_add(s)) {
            Some(w) if w <= MAX_WINDOW => w,
            Some(w) => return Err(format!("shares reduce to a window of {w} frames; at most {MAX_WINDOW} are supported")),
            None => return Err(format!("shares reduce to a window above {} frames; at most {MAX_WINDOW} are supported", u64::MAX)),
        };
        let w = window as i64;
        let mut credit = vec![0i64; shares.len()];
        let mut order = Vec::with_capacity(window as usize);
        for _ in 0..window {
            let mut best = 0;
            for i in 0..shares.len() {
                credit[i] += shares[i] as i64;
                if credit[i] > credit[best] {
                    best = i;
                }
            }
            credit[best] -= w;
            order.push(best as u16);
        }
        Ok(Schedule { order, shares })
    }

    /// A schedule in runs: stream i's reduced share × `run` frames in a
    /// row, the streams in list order, the window their sum (at most
    /// [`MAX_RUN_WINDOW`]). Every window still holds each stream's exact
    /// share; the frames of a stream are consecutive instead of spread.
    pub fn runs(shares: &[u64], run: u64) -> Result<Schedule, String> {
        if run == 0 {
            return Err("tx_run_frames must be at least 1".into());
        }
        let spread = Schedule::new(shares)?;
        let window = spread.shares.iter().sum::<u64>().checked_mul(run).filter(|&w| w <= MAX_RUN_WINDOW);
        if window.is_none() {
            return Err(format!("runs of {run} frames a share unit make a window above {MAX_RUN_WINDOW} frames"));
        }
        let order = spread.shares.iter().enumerate().flat_map(|(i, &s)| std::iter::repeat(i as u16).take((s * run) as usize)).collect();
        Ok(Schedule { order, shares: spread.shares.iter().map(|s| s * run).collect() })
    }

    /// Frames in one window.
    pub fn window(&self) -> u64 {
        self.order.len() as u64
    }

    /// Frames of stream `i` among the first `n` frames of the schedule.
    pub fn frames_of(&self, i: usize, n: u64) -> u64 {
        let full = n / self.window();
        let rest = (n % self.window()) as usize;
        full * self.shares[i] + self.order[..rest].iter().filter(|&&s| usize::from(s) == i).count() as u64
    }

    /// Position among all frames of the schedule of stream `i`'s frame
    /// number `n` (the inverse of the walk).
    pub fn index_of(&self, i: usize, n: u64) -> u64 {
        Positions::new(self, i).index_of(n)
    }
}

/// A walk along a schedule: which stream carries the next frame, and that
/// frame's sequence number within its stream.
#[derive(Debug, Clone)]
pub struct Cursor {
    pos: usize,
    seq: Vec<u64>,
}

impl Cursor {
    /// A walk from the start of `schedule`.
    pub fn new(schedule: &Schedule) -> Cursor {
        Cursor { pos: 0, seq: vec![0; schedule.shares.len()] }
    }

    /// The next frame: (stream position in the schedule, sequence number).
    #[inline]
    pub fn next(&mut self, schedule: &Schedule) -> (usize, u64) {
        let si = usize::from(schedule.order[self.pos]);
        let seq = self.seq[si];
        self.seq[si] += 1;
        self.pos = (self.pos + 1) % schedule.order.len();
        (si, seq)
    }
}

/// Which of a port's senders sends each frame: with `count` senders (one
/// a transmit queue, `tx.rs`), the port's frame k goes to lane k mod
/// `count`. The lanes run apart, so frames of different lanes may arrive
/// out of order although each lane keeps its own order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lane {
    pub index: u64,
    pub count: u64,
}

impl Lane {
    /// The port's frame number of this lane's frame `i`.
    #[inline]
    pub fn position(self, i: u64) -> u64 {
        i * self.count + self.index
    }

    /// This lane's frames among the port's first `n`.
    #[inline]
    pub fn among(self, n: u64) -> u64 {
        if n > self.index { (n - self.index - 1) / self.count + 1 } else { 0 }
    }

    /// The lane's next frame on `walk`: (stream, sequence number); the
    /// other lanes' frames are stepped over. Start the walk with
    /// [`Lane::start`].
    #[inline]
    pub fn next(self, walk: &mut Cursor, schedule: &Schedule) -> (usize, u64) {
        let f = walk.next(schedule);
        for _ in 1..self.count {
            walk.next(schedule);
        }
        f
    }

    /// A walk at this lane's first frame.
    pub fn start(self, schedule: &Schedule) -> Cursor {
        let mut c = Cursor::new(schedule);
        for _ in 0..self.index {
            c.next(schedule);
        }
        c
    }
}

/// Where one stream's frames lie among all frames of its schedule, found
/// without searching the window.
#[derive(Debug, Clone)]
struct Positions {
    share: u64,
    window: u64,
    /// Position in the window of the stream's r-th frame there (r < share).
    offsets: Vec<u64>,
}

impl Positions {
    fn new(schedule: &Schedule, i: usize) -> Positions {
        let offsets = schedule.order.iter().enumerate().filter(|(_, &s)| usize::from(s) == i).map(|(p, _)| p as u64).collect();
        Positions { share: schedule.shares[i], window: schedule.window(), offsets }
    }

    /// Position among all frames of the stream's frame number `n`.
    #[inline]
    fn index_of(&self, n: u64) -> u64 {
        (n / self.share) * self.window + self.offsets[(n % self.share) as usize]
    }
}

/// The lane of each frame of one stream, for the receiver: stream `i`'s
/// frame `seq` is the port's frame `index_of(i, seq)`, of lane
/// `index_of(i, seq) mod lanes`.
#[derive(Debug, Clone)]
pub struct LaneOf {
    lanes: u64,
    positions: Positions,
}

impl LaneOf {
    pub fn new(schedule: &Schedule, i: usize, lanes: u64) -> LaneOf {
        LaneOf { lanes: lanes.max(1), positions: Positions::new(schedule, i) }
    }

    /// One lane: every frame in lane 0.
    #[cfg(test)]
    pub fn single() -> LaneOf {
        LaneOf { lanes: 1, positions: Positions { share: 1, window: 1, offsets: vec![0] } }
    }

    pub fn lanes(&self) -> usize {
        self.lanes as usize
    }

    #[inline]
    pub fn lane(&self, seq: u64) -> usize {
        if self.lanes == 1 {
            return 0;
        }
        (self.positions.index_of(seq) % self.lanes) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lanes_split_the_walk_and_the_receiver_finds_each_frames_lane() {
        let s = Schedule::new(&[7, 4, 1]).unwrap();
        let frames = 1_003u64;
        for count in 1..=4u64 {
            let mut all = Cursor::new(&s);
            let whole: Vec<(usize, u64)> = (0..frames).map(|_| all.next(&s)).collect();
            let mut seen = Vec::new();
            for index in 0..count {
                let lane = Lane { index, count };
                let mut walk = lane.start(&s);
                let mine: Vec<(usize, u64)> = (0..lane.among(frames)).map(|_| lane.next(&mut walk, &s)).collect();
                for (i, &f) in mine.iter().enumerate() {
                    assert_eq!(whole[lane.position(i as u64) as usize], f);
                    assert_eq!(LaneOf::new(&s, f.0, count).lane(f.1), index as usize);
                }
                seen.extend(mine);
            }
            seen.sort();
            let mut expected = whole.clone();
            expected.sort();
            assert_eq!(seen, expected, "{count} lanes send every frame once");
        }
        assert_eq!(Lane { index: 2, count: 3 }.among(2), 0);
        assert_eq!(Lane { index: 2, count: 3 }.among(3), 1);
        assert_eq!(Lane { index: 0, count: 3 }.among(7), 3);
    }

    #[test]
    fn runs_send_each_streams_share_in_a_row() {
        let s = Schedule::runs(&[50, 50], 3).unwrap();
        assert_eq!(s.order, vec![0, 0, 0, 1, 1, 1]);
        let s = Schedule::runs(&[75, 25], 2).unwrap();
        assert_eq!(s.order, vec![0, 0, 0, 0, 0, 0, 1, 1]);
        assert_eq!(s.frames_of(0, 8 * 5 + 7), 5 * 6 + 6);
        assert_eq!(s.frames_of(1, 8 * 5 + 7), 5 * 2 + 1);
        for n in 0..16 {
            let i = usize::from(s.order[(n % 8) as usize]);
            let seq = s.frames_of(i, n);
            assert_eq!(s.index_of(i, seq), n, "frame {n}");
        }
        assert!(Schedule::runs(&[1, 1], 0).is_err());
        assert!(Schedule::runs(&[1, 1], MAX_RUN_WINDOW).is_err());
    }

    #[test]
    fn index_of_inverts_the_walk() {
        let s = Schedule::new(&[90, 7, 3]).unwrap();
        let mut c = Cursor::new(&s);
        for k in 0..1000u64 {
            let (si, seq) = c.next(&s);
            assert_eq!(s.index_of(si, seq), k);
        }
    }

    #[test]
    fn ninety_ten_holds_exact_shares_in_every_window() {
        let s = Schedule::new(&[90, 10]).unwrap();
        assert_eq!(s.window(), 10);
        assert_eq!(s.order.iter().filter(|&&x| x == 0).count(), 9);
        // Spread out, not bunched: the IPv6 frame is not adjacent to a window edge twice.
        assert_eq!(s.order, vec![0, 0, 0, 0, 0, 1, 0, 0, 0, 0]);
    }

    #[test]
    fn every_mix_of_the_methodology() {
        for (a, b) in [(100, 0), (90, 10), (50, 50), (10, 90), (0, 100)] {
            let shares: Vec<u64> = [a, b].into_iter().filter(|&s| s > 0).collect();
            let s = Schedule::new(&shares).unwrap();
            for (i, &share) in s.shares.iter().enumerate() {
                assert_eq!(s.order.iter().filter(|&&x| usize::from(x) == i).count() as u64, share);
            }
        }
    }

    #[test]
    fn uneven_shares_spread_evenly() {
        let s = Schedule::new(&[33, 67]).unwrap();
        assert_eq!(s.window(), 100);
        // No run of the minority stream longer than one frame.
        assert!(s.order.windows(2).all(|w| !(w[0] == 0 && w[1] == 0)));
        // Any 100 consecutive frames of the repeated schedule hold 33 of stream 0.
        let rep: Vec<u16> = s.order.iter().chain(s.order.iter()).copied().collect();
        for start in 0..100 {
            let n = rep[start..start + 100].iter().filter(|&&x| x == 0).count();
            assert_eq!(n, 33);
        }
    }

    #[test]
    fn frames_of_counts_partial_windows() {
        let s = Schedule::new(&[9, 1]).unwrap();
        assert_eq!(s.frames_of(0, 25) + s.frames_of(1, 25), 25);
        assert_eq!(s.frames_of(1, 25), 2);
        assert_eq!(s.frames_of(1, 5), 0);
        assert_eq!(s.frames_of(1, 6), 1);
    }

    #[test]
    fn cursor_numbers_each_stream_from_zero() {
        let s = Schedule::new(&[2, 1]).unwrap();
        let mut c = Cursor::new(&s);
        let walked: Vec<(usize, u64)> = (0..6).map(|_| c.next(&s)).collect();
        assert_eq!(walked, vec![(0, 0), (1, 0), (0, 1), (0, 2), (1, 1), (0, 3)]);
        assert_eq!(c.seq, vec![4, 2]);
        assert_eq!(c.seq[1], s.frames_of(1, 6));
    }

    #[test]
    fn rejects_bad_shares() {
        assert!(Schedule::new(&[]).is_err());
        assert!(Schedule::new(&[1, 0]).is_err());
        assert!(Schedule::new(&[99_999, 99_998]).is_err());
        // Coprime shares whose sum passes u64::MAX are refused, not wrapped to a window of 0.
        assert!(Schedule::new(&[u64::MAX, 1]).is_err());
        assert!(Schedule::runs(&[u64::MAX - 1, 3], 1).is_err());
    }
}

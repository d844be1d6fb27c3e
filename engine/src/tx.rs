//! The paced sender: one thread per sending port.
//!
//! Frame k of the port (k = 0, 1, …) is due at `t0 + pace.due_ns(k)` on
//! CLOCK_MONOTONIC (`k / rate`, or a step to a second rate, `pace.rs`). The loop sends every frame that is due, in batches of
//! at most `BATCH` frames with one sendmmsg(2); when nothing is due it
//! sleeps until shortly before the next frame and spins the rest. A sender
//! that keeps up therefore sends one frame at a time exactly on schedule;
//! one that falls behind catches up in batches, and the lag is reported.
//! With `slip_after_frames` (the spec's `after_stall: slip`), a sender
//! that finds more frames due than that (a stall: the host or another
//! thread took its CPU) instead moves the rest of its schedule later by
//! the stall: the frame it is at becomes due now, and the DUT sees a pause
//! followed by the intended rate, never a burst above it. Each slip is
//! reported (`slips`, `slipped_ns`, `max_slip_ns`), and the achieved rate
//! is measured over the sending time less the slipped time.
//! Each frame is stamped with CLOCK_REALTIME read just before the batch is
//! handed to the kernel.
//!
//! On a veth port (`refused_is_loss`) the far end is the DUT's interface,
//! and the kernel refuses a frame (ENOBUFS) when that end does not take
//! it: its input queue is full, or its link is down (a router reset, RFC
//! 2544 §26.6). On a wire the frame would have been sent and lost at the
//! DUT, so the sender does the same: it counts the frame in
//! `refused_frames` and goes on with the schedule; the frame's sequence
//! number is used up and the receiver counts it lost. Retrying it instead
//! would hide the DUT's loss and make the tester fall behind. A tap port
//! (driver `tun`) is the same: its reader is a VM router's NIC, and the tap
//! refuses a frame when the VM has not taken the ones before it (its ring
//! is full: the guest is busy, or rebooting). On other ports a refusal is
//! the tester's own transmit path being full, and the frame is retried.
//!
//! A test frame fragmented at the source is one schedule slot: its
//! fragments are due together and leave back to back in one batch. Counts
//! (`tx_frames`, `refused_frames`, the schedule position) are in test
//! frames; `tx_wire_frames` counts what went on the wire. A test frame of
//! which the far end refused any fragment is counted refused (it cannot be
//! reassembled); its other fragments are still sent.
//!
//! A port may have several senders (`tx_queues`), each a thread of its own
//! on a transmit queue of its own: lane j of N sends the port's frames
//! k = j, j + N, j + 2N, … at their due times (`mix::Lane`), and the
//! report of each lane counts only its frames; `merge` adds them up.
//!
//! Bounds: the loop sends at most the planned number of frames and stops
//! by itself at `deadline` (monotonic) or when `stop` is set, whichever
//! comes first; frames not sent by then are reported as unsent.

use crate::clock;
use crate::frame::Template;
use crate::mix::{Cursor, Lane, Schedule};
use crate::pace::Pace;
use crate::txstamp;
use crate::xsk::XskTx;
use serde::Serialize;
use std::os::unix::io::RawFd;
use std::sync::atomic::{AtomicBool, Ordering};

/// Test frames handed to the kernel per sendmmsg call at most.
pub const BATCH: usize = 64;
/// Wire frames per sendmmsg call at most (fragments of several test frames).
const WIRE_BATCH: usize = 256;
const _: () = assert!(WIRE_BATCH >= crate::spec::MAX_FRAGMENTS, "a whole fragmented test frame fits one call");
/// Below this wait the sender spins instead of sleeping [ns].
const SPIN_NS: u64 = 150_000;

/// How a sender hands frames to the kernel.
pub enum Handover {
    /// sendmmsg(2) on a packet socket that bypasses the qdisc.
    Packet(RawFd),
    /// The TX ring of an AF_XDP socket (`xsk.rs`).
    Xdp(XskTx),
}

/// What one hand-over call did, in wire frames of the call.
struct Handed {
    /// Frames the kernel took (sent, or refused by the far end), from the first.
    taken: usize,
    /// Indexes of the taken frames the far end refused.
    refused: Vec<usize>,
    /// The call was cut short (the kernel's queue full, or interrupted): try again.
    retry: bool,
}

impl Handover {
    /// Hands `msgs[..n]` (whose iovecs are `iov[..n]`) over. `refused_is_loss`:
    /// as for [`TxJob`]; otherwise a refused packet-socket frame is retried.
    fn hand(&mut self, msgs: &mut [libc::mmsghdr], iov: &[libc::iovec], refused_is_loss: bool) -> Result<Handed, String> {
        let n = msgs.len();
        match self {
            Handover::Packet(fd) => {
                // SAFETY: msgs[..n] point at iovecs and buffers that live until the call returns.
                let r = unsafe { libc::sendmmsg(*fd, msgs.as_mut_ptr(), n as libc::c_uint, 0) };
                if r >= 0 {
                    return Ok(Handed { taken: r as usize, refused: Vec::new(), retry: (r as usize) < n });
                }
                let e = std::io::Error::last_os_error();
                match e.raw_os_error() {
                    // sendmmsg stops at the first refused frame: that one is lost.
                    Some(libc::ENOBUFS) if refused_is_loss => Ok(Handed { taken: 1, refused: vec![0], retry: false }),
                    Some(libc::ENOBUFS) | Some(libc::EAGAIN) | Some(libc::EINTR) => Ok(Handed { taken: 0, refused: Vec::new(), retry: true }),
                    _ => Err(format!("sendmmsg: {e}")),
                }
            }
            Handover::Xdp(x) => {
                let h = x.send(iov)?;
                Ok(Handed { retry: h.taken < n, taken: h.taken, refused: h.refused })
            }
        }
    }
}

/// What a sender needs.
pub struct TxJob {
    pub port: Handover,
    /// A frame the kernel refuses (ENOBUFS) was refused by the far end of
    /// the link and is lost (veth and tap ports); otherwise it is retried.
    pub refused_is_loss: bool,
    /// Templates in the order of the port's streams in the schedule.
    pub templates: Vec<Template>,
    pub schedule: Schedule,
    /// The port's frames (all lanes').
    pub frames: u64,
    pub pace: Pace,
    /// Which of the port's frames this sender sends.
    pub lane: Lane,
    pub cpu: Option<usize>,
    pub nice: Option<i32>,
    /// Match the kernel's transmit stamps to the carried ones (`txstamp.rs`;
    /// the socket must have them enabled).
    pub stamp_check: bool,
    /// Slip the schedule when more than this many frames are due at once
    /// (`spec::Plan::slip_after_frames`); none = catch up.
    pub slip_after_frames: Option<u64>,
}

/// What a sender did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct TxReport {
    /// Test frames handed to the kernel (every fragment of them).
    pub tx_frames: u64,
    /// Frames that went on the wire: test frames, or their fragments.
    pub tx_wire_frames: u64,
    /// Frames offered per stream (handed over or refused), in the job's
    /// template order: the schedule's walk.
    #[serde(skip)]
    pub stream_offered_frames: Vec<u64>,
    /// Frames the far end refused (`refused_is_loss`): offered, and lost.
    pub refused_frames: u64,
    /// The same per stream, in the job's template order.
    #[serde(skip)]
    pub stream_refused_frames: Vec<u64>,
    /// Planned frames not sent because the deadline passed or the trial was stopped.
    pub unsent_frames: u64,
    /// sendmmsg calls that failed or sent fewer frames than asked (retried).
    pub send_retries: u64,
    pub sendmmsg_calls: u64,
    /// Largest delay of a frame behind its due time [ns] (on the schedule
    /// as slipped, when it slipped).
    pub max_lag_ns: u64,
    /// Times the schedule slipped, by how much in all, and the longest [ns].
    pub slips: u64,
    pub slipped_ns: u64,
    pub max_slip_ns: u64,
    /// How late the port's first frame went, after the common start t0 [ns]:
    /// ports of one trial start within the largest of these (RFC 2889 §5.1.3).
    pub first_lag_ns: u64,
    /// Most frames that were due but not yet sent at one moment: the
    /// longest back-to-back burst the sender had to send to catch up.
    pub max_backlog_frames: u64,
    /// From t0 to the start of the hand-over of the last frame [ns].
    pub send_span_ns: u64,
    /// Longest batch, from before its first frame is built to the end of
    /// the send call [ns]: each frame's transmit timestamp is taken as it
    /// is built, so a frame left at most this long after its stamp.
    pub max_send_call_ns: u64,
    /// Sum of those batch durations [ns], for their mean.
    pub send_call_ns_total: u64,
    /// Achieved offered rate [frames/s]: (frames − 1) / time from the first
    /// frame's due time to the last frame's hand-over (or due time, if
    /// later), less the slipped time; refused frames count as offered; the
    /// intended rate if only one frame was offered.
    pub offered_fps: f64,
    /// The carried stamps against the kernel's, with `stamp_check`.
    #[serde(skip)]
    pub stamp_check: Option<crate::txstamp::StampCheck>,
    #[serde(skip)]
    pub error: Option<String>,
}

/// Sends the job's frames; `t0` is the monotonic instant frame 0 is due.
pub fn run(mut job: TxJob, t0: u64, deadline: u64, stop: &AtomicBool) -> TxReport {
    let streams = job.templates.len();
    // This sender's frames; `sent` counts in them, and `lane.position`
    // gives each one's place in the port's schedule.
    let own = job.lane.among(job.frames);
    let mut rep = TxReport { stream_offered_frames: vec![0; streams], stream_refused_frames: vec![0; streams], ..Default::default() };
    let placed = job.cpu.map_or(Ok(()), clock::pin_to_cpu).and_then(|_| job.nice.map_or(Ok(()), clock::set_nice));
    if let Err(e) = placed {
        rep.error = Some(e);
        rep.unsent_frames = own;
        return rep;
    }
    clock::tight_timer_slack();
    let mut batch = Batch::new(&job.templates);
    let mut at = Progress::new(job.lane.start(&job.schedule), t0);
    let mut stamps = job.stamp_check.then(|| txstamp::Reader::new(batch.slot_len));

    clock::sleep_until(t0);
    while at.sent < own && !stop.load(Ordering::Relaxed) {
        let now = clock::monotonic_ns();
        if now >= deadline {
            break;
        }
        let next_due = t0 + rep.slipped_ns + job.pace.due_ns(job.lane.position(at.sent)) as u64;
        if now < next_due {
            wait(&job, stamps.as_mut(), now, next_due);
            continue;
        }
        if rep.sendmmsg_calls == 0 {
            rep.first_lag_ns = now - next_due;
        }
        let k = frames_due(&job, &mut rep, at.sent, now, next_due, t0).clamp(1, batch.per_call);
        let n = batch.build(&job, &mut at, k);
        let handed = job.port.hand(&mut batch.msgs[..n], &batch.iov[..n], job.refused_is_loss);
        // From the batch's start (`now`, before its first stamp): one clock read per call, an upper bound.
        let call_ns = clock::monotonic_ns() - now;
        rep.max_send_call_ns = rep.max_send_call_ns.max(call_ns);
        rep.send_call_ns_total += call_ns;
        rep.sendmmsg_calls += 1;
        let h = match handed {
            Ok(h) => h,
            Err(e) => {
                rep.error = Some(e);
                break;
            }
        };
        handed_over(&h, &mut rep, stamps.as_mut(), &mut at, now);
        at.commit(&h, &batch.pieces_of[..k], &job, &mut rep);
    }
    if let Some(mut r) = stamps {
        if let Handover::Packet(fd) = job.port {
            r.drain(fd, &job.templates, usize::MAX);
        }
        rep.stamp_check = r.finish();
    }
    finish(&job, rep, &at, own, t0)
}

/// From `now` until `next_due` (monotonic ns), when the next frame is
/// due: reads transmit stamps if there is time to spare, then sleeps, or
/// spins the last `SPIN_NS`.
#[inline]
fn wait(job: &TxJob, stamps: Option<&mut txstamp::Reader>, now: u64, next_due: u64) {
    let wait_ns = next_due - now;
    if let Some(r) = stamps {
        // Time to spare: as many stamps as fit before the next frame is due.
        let most = r.fits(wait_ns);
        if let Handover::Packet(fd) = job.port {
            r.drain(fd, &job.templates, most);
        }
    }
    if wait_ns > SPIN_NS {
        clock::sleep_until(next_due - SPIN_NS / 2);
    } else {
        std::hint::spin_loop();
    }
}

/// How many of this sender's frames are due by `now` and not sent; after
/// a stall (`slip_after_frames`), the schedule slips instead and one is.
/// Keeps the lag, backlog and slip counts.
#[inline]
fn frames_due(job: &TxJob, rep: &mut TxReport, sent: u64, now: u64, mut next_due: u64, t0: u64) -> usize {
    let mut due_by_now = job.lane.among(job.pace.due_by(now - t0 - rep.slipped_ns).min(job.frames));
    if job.slip_after_frames.is_some_and(|most| due_by_now - sent > most) {
        // A stall: frame `sent` becomes due now, and the rest after it.
        let late = now - next_due;
        rep.slips += 1;
        rep.slipped_ns += late;
        rep.max_slip_ns = rep.max_slip_ns.max(late);
        next_due = now;
        due_by_now = sent + 1;
    }
    rep.max_lag_ns = rep.max_lag_ns.max(now - next_due);
    rep.max_backlog_frames = rep.max_backlog_frames.max(due_by_now - sent);
    (due_by_now - sent) as usize
}

/// What one send call took: wire frames, retries, stamps to read, when the last frame left.
#[inline]
fn handed_over(h: &Handed, rep: &mut TxReport, stamps: Option<&mut txstamp::Reader>, at: &mut Progress, now: u64) {
    if h.retry {
        rep.send_retries += 1;
        if h.taken == 0 {
            std::thread::yield_now();
        }
    }
    let refused_here = h.refused.len();
    rep.tx_wire_frames += (h.taken - refused_here) as u64;
    if let Some(s) = stamps {
        s.sent((h.taken - refused_here) as u64);
    }
    if h.taken > refused_here {
        at.last_handover = now;
    }
}

/// The report's totals once the loop ends; the achieved rate from the
/// first frame's due time to the last one's hand-over.
fn finish(job: &TxJob, mut rep: TxReport, at: &Progress, own: u64, t0: u64) -> TxReport {
    let (sent, lane, pace) = (at.sent, job.lane, job.pace);
    rep.tx_frames = sent - rep.refused_frames;
    rep.unsent_frames = own - sent;
    rep.send_span_ns = at.last_handover.saturating_sub(t0);
    let due_first = t0 + rep.slipped_ns + pace.due_ns(lane.position(0)) as u64;
    let due_last = t0 + rep.slipped_ns + pace.due_ns(lane.position(sent.saturating_sub(1))) as u64;
    // The last frame left no earlier than it was due: measure to its hand-over.
    let span = at.last_handover.max(due_last).saturating_sub(due_first);
    rep.offered_fps = if sent >= 2 && span > 0 { (sent - 1) as f64 * 1e9 / span as f64 } else { pace.rate_fps / lane.count as f64 };
    rep
}

/// The buffers a batch is built in: a slot a test frame, an iovec and a
/// message a wire frame.
struct Batch {
    slot_len: usize,
    /// Test frames a call takes at most (fewer when they are fragmented).
    per_call: usize,
    bufs: Vec<u8>,
    scratch: Vec<u8>,
    iov: Vec<libc::iovec>,
    msgs: Vec<libc::mmsghdr>,
    /// Wire frames each test frame of the batch put in `msgs`.
    pieces_of: [usize; BATCH],
}

impl Batch {
    fn new(templates: &[Template]) -> Batch {
        let slot_len = templates.iter().map(Template::wire_len).max().unwrap_or(0);
        let most_pieces = templates.iter().map(Template::wire_frames).max().unwrap_or(1);
        Batch {
            slot_len,
            per_call: BATCH.min(WIRE_BATCH / most_pieces).max(1),
            bufs: vec![0u8; slot_len * BATCH],
            scratch: vec![0u8; templates.iter().map(Template::len).max().unwrap_or(0)],
            // SAFETY: iovec and mmsghdr are plain data; all-zero is a valid initial value.
            iov: vec![unsafe { std::mem::zeroed() }; WIRE_BATCH],
            msgs: vec![unsafe { std::mem::zeroed() }; WIRE_BATCH],
            pieces_of: [0usize; BATCH],
        }
    }

    /// Builds the next `k` test frames from `at`'s committed position (the
    /// first one from its first fragment not gone); returns the wire
    /// frames put in the messages.
    #[inline]
    fn build(&mut self, job: &TxJob, at: &mut Progress, k: usize) -> usize {
        at.batch.clone_from(&at.committed); // reuses the allocation
        let mut n = 0;
        for i in 0..k {
            let (si, seq) = job.lane.next(&mut at.batch, &job.schedule);
            let t = &job.templates[si];
            let slot = &mut self.bufs[i * self.slot_len..(i + 1) * self.slot_len];
            // Stamped per frame as it is built, right before the hand-over (max_send_call_ns bounds the rest).
            let tx_ns = clock::realtime_ns();
            // The schedule position identifies the datagram among the port's (RFC 6864).
            t.write_wire(slot, &mut self.scratch, seq, tx_ns, job.lane.position(at.sent + i as u64));
            let first = if i == 0 { at.gone } else { 0 };
            for j in first..t.wire_frames() {
                let r = t.wire_frame(j);
                self.iov[n] = libc::iovec { iov_base: slot[r.start..].as_mut_ptr() as *mut libc::c_void, iov_len: r.len() };
                self.msgs[n].msg_hdr.msg_iov = &mut self.iov[n];
                self.msgs[n].msg_hdr.msg_iovlen = 1;
                self.msgs[n].msg_len = 0;
                n += 1;
            }
            self.pieces_of[i] = t.wire_frames() - first;
        }
        n
    }
}

/// Where a sender is in its schedule.
struct Progress {
    /// The position after the frames that left or were refused; `batch`
    /// walks ahead of it while a batch is built.
    committed: Cursor,
    batch: Cursor,
    /// Test frames that left or were refused: the schedule position.
    sent: u64,
    /// Fragments of the next test frame already gone (handed over or
    /// refused), and whether one of them was refused.
    gone: usize,
    lost_piece: bool,
    last_handover: u64,
}

impl Progress {
    fn new(start: Cursor, t0: u64) -> Progress {
        Progress { batch: start.clone(), committed: start, sent: 0, gone: 0, lost_piece: false, last_handover: t0 }
    }

    /// Commits the test frames whose every wire frame is gone; the rest
    /// are built again next round, from the first fragment not gone.
    #[inline]
    fn commit(&mut self, h: &Handed, pieces_of: &[usize], job: &TxJob, rep: &mut TxReport) {
        let mut done = h.taken;
        // Wire index (within this call) of the current test frame's first piece.
        let mut w = 0usize;
        for &pieces in pieces_of {
            if h.refused.iter().any(|&x| x >= w && x < w + pieces.min(done)) {
                self.lost_piece = true;
            }
            w += pieces;
            if done < pieces {
                self.gone += done;
                break;
            }
            done -= pieces;
            let (si, _) = job.lane.next(&mut self.committed, &job.schedule);
            rep.stream_offered_frames[si] += 1;
            if self.lost_piece {
                rep.stream_refused_frames[si] += 1;
                rep.refused_frames += 1;
            }
            self.sent += 1;
            self.gone = 0;
            self.lost_piece = false;
        }
    }
}

/// One report for a port from its lanes' (in lane order): frames, calls
/// and stream counts add up, rates add up, and for lags, slips, stamp
/// errors and the send span the worst lane speaks for the port. The
/// backlog adds up: the lanes' bursts may reach the DUT together.
pub fn merge(lanes: Vec<TxReport>) -> TxReport {
    let mut it = lanes.into_iter();
    let mut m = it.next().unwrap_or_default();
    for r in it {
        for (a, b) in m.stream_offered_frames.iter_mut().zip(&r.stream_offered_frames) {
            *a += b;
        }
        for (a, b) in m.stream_refused_frames.iter_mut().zip(&r.stream_refused_frames) {
            *a += b;
        }
        m.tx_frames += r.tx_frames;
        m.tx_wire_frames += r.tx_wire_frames;
        m.refused_frames += r.refused_frames;
        m.unsent_frames += r.unsent_frames;
        m.send_retries += r.send_retries;
        m.sendmmsg_calls += r.sendmmsg_calls;
        m.max_lag_ns = m.max_lag_ns.max(r.max_lag_ns);
        m.slips += r.slips;
        m.slipped_ns = m.slipped_ns.max(r.slipped_ns);
        m.max_slip_ns = m.max_slip_ns.max(r.max_slip_ns);
        m.first_lag_ns = m.first_lag_ns.max(r.first_lag_ns);
        m.max_backlog_frames += r.max_backlog_frames;
        m.send_span_ns = m.send_span_ns.max(r.send_span_ns);
        m.max_send_call_ns = m.max_send_call_ns.max(r.max_send_call_ns);
        m.send_call_ns_total += r.send_call_ns_total;
        m.offered_fps += r.offered_fps;
        m.stamp_check = m.stamp_check.or(r.stamp_check);
        m.error = match (m.error, r.error) {
            (Some(a), Some(b)) => Some(format!("{a}; {b}")),
            (a, b) => a.or(b),
        };
    }
    m
}

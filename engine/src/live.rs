//! The in-kernel sender of the `xdp_live` backend.
//!
//! The other backends hand frames to the kernel from user space, one system
//! call per batch, and on veth the kernel then builds an skb per frame on
//! the tester's CPU. Here the engine loads a small XDP program and has the
//! kernel run it in a loop (BPF_PROG_RUN with BPF_F_TEST_XDP_LIVE_FRAMES,
//! Linux ≥ 5.18). Each run reads CLOCK_MONOTONIC; if the port's next frame
//! is due it writes the whole frame (the stream's frame as
//! `Template::write` gives it, its sequence number, a transmit timestamp,
//! the UDP checksum and the IPv4 Identification and header checksum) and
//! returns XDP_TX, which the kernel turns into a transmit on the port
//! (`ndo_xdp_xmit`); a run with nothing due returns XDP_DROP. Pacing is a
//! spin inside the kernel: frame k is due at `t0 + k × period`, the period
//! in picoseconds (`period_ps`, so the schedule drifts from `pace.rs`'s by
//! under 0.5 ps a frame). A sender that falls behind sends the frames due
//! back to back, and the largest lag is recorded as on the other backends;
//! with `slip_after_frames` (the spec's `after_stall: slip`) a frame later
//! than that many periods moves t0 later by its lag instead, as `tx.rs`
//! does, and the slips are recorded.
//!
//! The whole frame is written on every run because the kernel recycles
//! the frames' pages: a page comes back with whatever the path changed in
//! it (a router rewrites MAC addresses and TTL in place).
//!
//! The timestamp is CLOCK_MONOTONIC read at the start of the run, moved
//! onto CLOCK_REALTIME with the offset `clock::realtime_minus_monotonic_ns`
//! measured when the trial starts. The kernel hands the frames of a batch
//! of `BATCH_RUNS` runs to the driver together, at the batch's end (one
//! wake-up of the receiving end's NAPI per batch rather than per frame:
//! with batches of one run those wake-ups, each a context switch, held the
//! tester to 294 kframes/s on p2p). The first run of the next batch starts
//! after that hand-over, so its clock read less a frame's stamp is an
//! upper bound of that frame's stamp error; the program records the
//! largest and the sum (the frames of a call's last batch are not
//! measured).
//!
//! On veth the frame reaches the peer's ring as an xdp_frame and the DUT's
//! side builds the skb, as a NIC driver would; a frame the peer refuses
//! (its ring full, its link down) is lost, as on the other backends
//! (`tx.rs`); veth counts it in the port's `tx_dropped`, and the frames it
//! took in `tx_queue_<n>_xdp_xmit` (ethtool statistics), both read before
//! and after. A frame in neither (veth drops XDP frames to an end without
//! NAPI and counts nothing) makes the trial's result an error, never DUT
//! loss. (`tx_dropped` would also count a refused ARP or ND reply of the
//! engine's, the only other frames it sends on the port.)
//!
//! Scope: one UDP stream per port, sent whole (no fragments, no ICMP Echo),
//! at a constant rate, on veth; spec validation refuses the rest.
//!
//! The whole trial is one BPF_PROG_RUN call of up to 2³² − 1 runs: each
//! call costs two RCU grace periods (the kernel adds the program to its XDP
//! dispatcher and removes it; 12–24 ms each on the lab machine), the first
//! spent in the trial's lead before frame 0 (`trial.rs`). A watcher thread
//! ends the call with a signal (BPF_PROG_RUN returns EINTR) once every frame
//! is sent, at the deadline, or when `stop` is set; a call ended otherwise
//! (a SIGSTOP, the runs used up) is followed by another.
//!
//! Bounds: the program sends at most `frames` frames and none at or after
//! `deadline`, and the runs of a call are bounded.

use crate::bpf::{self, Insn, ArrayMap};
use crate::bpf::{insn, ADD64_K, ADD64_X, AND64_K, CALL, DIV64_K, EXIT, JEQ_K, JGE_X, JGT_X, JNE_K, KTIME_GET_NS, LDX_DW, LDX_W, LD_IMM64, LSH64_K};
use crate::bpf::{MAP_LOOKUP_ELEM, MOV64_K, MOV64_X, MUL64_X, PSEUDO_MAP_FD, RSH64_K, STX_DW, STX_H, ST_B, ST_DW, ST_H, ST_W, SUB64_X, TO_BE, XDP_DROP, XDP_TX, XOR64_K};
use crate::clock;
use crate::frame::{StampLayout, Template};
use crate::netns;
use crate::sock::{self, IfCounters};
use crate::tx::TxReport;
use std::sync::atomic::{AtomicBool, Ordering};

/// How often the watcher looks whether the run is over [ns].
const WATCH_NS: u64 = 1_000_000;
/// Runs per batch (a power of two): the kernel hands a batch's frames to
/// the driver at its end, 16 runs (about 2.5 µs at the ~150 ns a run
/// measured) after the first was stamped at most. 1 made the tester wake
/// the receiving NAPI thread for every frame; 16 kept 600 kframes/s on p2p
/// with a mean stamp error bound of 7–8 µs against 10–13 µs at 64.
const BATCH_RUNS: u32 = 16;

// The state shared with the program: one array-map entry of u64 fields.
const T0: i16 = 0;
const NEXT: i16 = 8;
const END: i16 = 16;
const DEADLINE: i16 = 24;
const OFFSET: i16 = 32;
const MAX_LAG: i16 = 40;
const FIRST_LAG: i16 = 48;
const LAST: i16 = 56;
const MAX_GAP: i16 = 64;
const SUM_GAP: i16 = 72;
/// Program runs so far in this BPF_PROG_RUN call (batches start at 0).
const RUNS: i16 = 80;
/// Frames sent in the current batch, not yet flushed: count, sum of their
/// stamps (monotonic), the first one's stamp.
const PEND_N: i16 = 88;
const PEND_SUM: i16 = 96;
const PEND_FIRST: i16 = 104;
/// Frames whose stamp-to-flush time is in MAX_GAP and SUM_GAP.
const HELD_N: i16 = 112;
/// Slips of the schedule: count, total and longest [ns].
const SLIPS: i16 = 120;
const SLIPPED: i16 = 128;
const MAX_SLIP: i16 = 136;
const STATE_LEN: usize = 144;

/// What the in-kernel sender needs.
pub struct LiveJob {
    pub interface: String,
    pub netns: Option<String>,
    pub template: Template,
    pub frames: u64,
    pub rate_fps: f64,
    pub cpu: Option<usize>,
    pub nice: Option<i32>,
    /// Slip instead of catching up beyond this backlog (`tx::TxJob`).
    pub slip_after_frames: Option<u64>,
}

/// A tiny assembler: jumps to one shared `drop` exit are patched at the end.
struct Asm {
    code: Vec<Insn>,
    to_drop: Vec<usize>,
}

impl Asm {
    fn op(&mut self, code: u8, dst: u8, src: u8, off: i16, imm: i32) {
        self.code.push(insn(code, dst, src, off, imm));
    }
    fn ld64(&mut self, dst: u8, src: u8, v: u64) {
        self.op(LD_IMM64, dst, src, 0, v as u32 as i32);
        self.op(0, 0, 0, 0, (v >> 32) as u32 as i32);
    }
    fn drop_if(&mut self, code: u8, dst: u8, src: u8, imm: i32) {
        self.to_drop.push(self.code.len());
        self.op(code, dst, src, 0, imm);
    }
    /// `state[at] = max(state[at], reg)`, with r5 as scratch (r8: the state).
    fn max_into(&mut self, at: i16, reg: u8) {
        self.op(LDX_DW, 5, 8, at, 0);
        self.op(JGE_X, 5, reg, 1, 0);
        self.op(STX_DW, 8, reg, at, 0);
    }
    /// `r0 = fold(r0)` to 16 bits, complemented (`checksum::finish`).
    fn finish_checksum(&mut self) {
        for _ in 0..3 {
            self.op(MOV64_X, 5, 0, 0, 0);
            self.op(RSH64_K, 5, 0, 0, 16);
            self.op(AND64_K, 0, 0, 0, 0xffff);
            self.op(ADD64_X, 0, 5, 0, 0);
        }
        self.op(XOR64_K, 0, 0, 0, 0xffff);
    }
    /// `r0 += the 16-bit words of reg`'s low `bits` bits (big-endian words).
    fn add_words(&mut self, reg: u8, bits: i32) {
        for shift in (0..bits).step_by(16).rev() {
            self.op(MOV64_X, 5, reg, 0, 0);
            if shift > 0 {
                self.op(RSH64_K, 5, 0, 0, shift);
            }
            self.op(AND64_K, 5, 0, 0, 0xffff);
            self.op(ADD64_X, 0, 5, 0, 0);
        }
    }
    fn finish(mut self) -> Vec<Insn> {
        let drop_at = self.code.len();
        self.op(MOV64_K, 0, 0, 0, XDP_DROP);
        self.op(EXIT, 0, 0, 0, 0);
        for i in self.to_drop {
            self.code[i].off = (drop_at - i - 1) as i16;
        }
        self.code
    }
}

/// The program for frames `base` (a `Template::write(…, 0, 0, 0)`), whose
/// changing fields are at `layout`, one every `period_ps`, with its state in
/// map `state_fd`; a frame more than `slip_ns` late (if given) moves t0
/// later by its lag. Registers: r6 context, r7 now, r8 state, r1 frame
/// number k, r2 packet, r4 transmit stamp, r0 checksum sums.
fn program(state_fd: i32, base: &[u8], layout: &StampLayout, period_ps: u64, slip_ns: Option<u64>) -> Vec<Insn> {
    let mut a = Asm { code: Vec::new(), to_drop: Vec::new() };
    a.state(state_fd);
    a.batch_accounting();
    a.due(period_ps);
    if let Some(most) = slip_ns {
        a.slip(most);
    }
    a.max_into(MAX_LAG, 9);
    a.frame(base);
    a.stamp(layout);
    a.pend();
    a.finish()
}

/// The program's parts, in the order they run (jumps stay within a part).
impl Asm {
    /// r6 the context, r7 now, r8 the state (drop without it).
    fn state(&mut self, state_fd: i32) {
        self.op(MOV64_X, 6, 1, 0, 0);
        self.op(CALL, 0, 0, 0, KTIME_GET_NS);
        self.op(MOV64_X, 7, 0, 0, 0);
        self.op(ST_W, 10, 0, -4, 0); // key 0
        self.op(LD_IMM64, 1, PSEUDO_MAP_FD, 0, state_fd);
        self.op(0, 0, 0, 0, 0);
        self.op(MOV64_X, 2, 10, 0, 0);
        self.op(ADD64_K, 2, 0, 0, -4);
        self.op(CALL, 0, 0, 0, MAP_LOOKUP_ELEM);
        self.drop_if(JEQ_K, 0, 0, 0);
        self.op(MOV64_X, 8, 0, 0, 0);
    }

    /// The first run of a batch: the frames the previous batch sent were
    /// handed over (flushed) at its end, before this run's clock read, so
    /// now − stamp bounds each one's stamp error.
    fn batch_accounting(&mut self) {
        // The first run of a batch: the frames the previous batch sent were
        // handed over (flushed) at its end, before this run's clock read, so
        // now − stamp bounds each one's stamp error.
        self.op(LDX_DW, 3, 8, RUNS, 0);
        self.op(MOV64_X, 4, 3, 0, 0);
        self.op(ADD64_K, 4, 0, 0, 1);
        self.op(STX_DW, 8, 4, RUNS, 0);
        self.op(AND64_K, 3, 0, 0, BATCH_RUNS as i32 - 1);
        self.op(JNE_K, 3, 0, 19, 0);
        self.op(LDX_DW, 3, 8, PEND_N, 0);
        self.op(JEQ_K, 3, 0, 17, 0);
        self.op(LDX_DW, 4, 8, HELD_N, 0);
        self.op(ADD64_X, 4, 3, 0, 0);
        self.op(STX_DW, 8, 4, HELD_N, 0);
        self.op(MOV64_X, 4, 7, 0, 0);
        self.op(MUL64_X, 4, 3, 0, 0);
        self.op(LDX_DW, 5, 8, PEND_SUM, 0);
        self.op(SUB64_X, 4, 5, 0, 0); // Σ (now − stamp) over the batch's frames
        self.op(LDX_DW, 5, 8, SUM_GAP, 0);
        self.op(ADD64_X, 5, 4, 0, 0);
        self.op(STX_DW, 8, 5, SUM_GAP, 0);
        self.op(MOV64_X, 4, 7, 0, 0);
        self.op(LDX_DW, 5, 8, PEND_FIRST, 0);
        self.op(SUB64_X, 4, 5, 0, 0); // the batch's first frame waited longest
        self.max_into(MAX_GAP, 4);
        self.op(ST_DW, 8, 0, PEND_N, 0);
    }

    /// Frame k (r1) is due? Drop if not, past the end or the deadline; r9 its lag.
    fn due(&mut self, period_ps: u64) {
        // Frame k is due?
        self.op(LDX_DW, 1, 8, NEXT, 0);
        self.op(LDX_DW, 2, 8, END, 0);
        self.drop_if(JGE_X, 1, 2, 0);
        self.op(LDX_DW, 2, 8, DEADLINE, 0);
        self.drop_if(JGE_X, 7, 2, 0);
        self.op(MOV64_X, 2, 1, 0, 0);
        self.ld64(3, 0, period_ps);
        self.op(MUL64_X, 2, 3, 0, 0);
        self.op(DIV64_K, 2, 0, 0, 1000);
        self.op(LDX_DW, 3, 8, T0, 0);
        self.op(ADD64_X, 2, 3, 0, 0);
        self.drop_if(JGT_X, 2, 7, 0);
        self.op(MOV64_X, 9, 7, 0, 0);
        self.op(SUB64_X, 9, 2, 0, 0); // lag
        self.op(JNE_K, 1, 0, 1, 0);
        self.op(STX_DW, 8, 9, FIRST_LAG, 0);
    }

    /// A stall: t0 moves later by the lag, and this frame is on time.
    fn slip(&mut self, most: u64) {
        // A stall: t0 moves later by the lag, and this frame is on time.
        self.ld64(3, 0, most);
        self.op(JGE_X, 3, 9, 13, 0);
        for (at, reg) in [(T0, 9), (SLIPPED, 9)] {
            self.op(LDX_DW, 4, 8, at, 0);
            self.op(ADD64_X, 4, reg, 0, 0);
            self.op(STX_DW, 8, 4, at, 0);
        }
        self.op(LDX_DW, 4, 8, SLIPS, 0);
        self.op(ADD64_K, 4, 0, 0, 1);
        self.op(STX_DW, 8, 4, SLIPS, 0);
        self.max_into(MAX_SLIP, 9);
        self.op(MOV64_K, 9, 0, 0, 0);
    }

    /// The frame `base` in the packet (r2), four bytes a store.
    fn frame(&mut self, base: &[u8]) {
        // The packet must hold the frame.
        self.op(LDX_W, 2, 6, 0, 0);
        self.op(LDX_W, 3, 6, 4, 0);
        self.op(MOV64_X, 4, 2, 0, 0);
        self.op(ADD64_K, 4, 0, 0, base.len() as i32);
        self.drop_if(JGT_X, 4, 3, 0);
        // The frame, four bytes a store.
        let mut at = 0;
        while at < base.len() {
            let rest = &base[at..];
            let (code, n, imm) = match rest.len() {
                4.. => (ST_W, 4, u32::from_le_bytes(rest[..4].try_into().expect("4 bytes")) as i32),
                2 | 3 => (ST_H, 2, i32::from(u16::from_le_bytes([rest[0], rest[1]]))),
                _ => (ST_B, 1, i32::from(rest[0])),
            };
            self.op(code, 2, 0, at as i16, imm);
            at += n;
        }
    }

    /// Sequence number, transmit stamp (r4), UDP checksum, and for IPv4 the Identification and header checksum.
    fn stamp(&mut self, layout: &StampLayout) {
        // Sequence number (48 bits; its store's last two bytes are overwritten by the stamp's).
        self.op(MOV64_X, 5, 1, 0, 0);
        self.op(LSH64_K, 5, 0, 0, 16);
        self.op(TO_BE, 5, 0, 0, 64);
        self.op(STX_DW, 2, 5, layout.seq_off as i16, 0);
        self.op(LDX_DW, 4, 8, OFFSET, 0);
        self.op(ADD64_X, 4, 7, 0, 0);
        self.op(MOV64_X, 5, 4, 0, 0);
        self.op(TO_BE, 5, 0, 0, 64);
        self.op(STX_DW, 2, 5, layout.tx_ns_off as i16, 0);
        // UDP checksum: the template's sum plus the words of k and the stamp.
        self.ld64(0, 0, layout.udp_acc);
        self.add_words(1, 48);
        self.add_words(4, 64);
        self.finish_checksum();
        self.op(JNE_K, 0, 0, 1, 0);
        self.op(MOV64_K, 0, 0, 0, 0xffff); // UDP sends a zero checksum as all ones
        self.op(TO_BE, 0, 0, 0, 16);
        self.op(STX_H, 2, 0, layout.udp_checksum_off as i16, 0);
        if let Some((ident_off, checksum_off, acc)) = layout.ipv4 {
            // Identification: k's low 16 bits (the schedule position, as `tx.rs` gives it).
            self.op(MOV64_X, 3, 1, 0, 0);
            self.op(AND64_K, 3, 0, 0, 0xffff);
            self.ld64(0, 0, acc);
            self.op(ADD64_X, 0, 3, 0, 0);
            self.op(TO_BE, 3, 0, 0, 16);
            self.op(STX_H, 2, 3, ident_off as i16, 0);
            self.finish_checksum();
            self.op(TO_BE, 0, 0, 0, 16);
            self.op(STX_H, 2, 0, checksum_off as i16, 0);
        }
    }

    /// Frame k sent: the next, and the batch's pending stamps until its flush; XDP_TX.
    fn pend(&mut self) {
        self.op(ADD64_K, 1, 0, 0, 1);
        self.op(STX_DW, 8, 1, NEXT, 0);
        self.op(STX_DW, 8, 7, LAST, 0);
        // Pending until the batch's flush: count, sum of stamps, first stamp.
        self.op(LDX_DW, 3, 8, PEND_N, 0);
        self.op(JNE_K, 3, 0, 2, 0);
        self.op(STX_DW, 8, 7, PEND_FIRST, 0);
        self.op(ST_DW, 8, 0, PEND_SUM, 0);
        self.op(ADD64_K, 3, 0, 0, 1);
        self.op(STX_DW, 8, 3, PEND_N, 0);
        self.op(LDX_DW, 3, 8, PEND_SUM, 0);
        self.op(ADD64_X, 3, 7, 0, 0);
        self.op(STX_DW, 8, 3, PEND_SUM, 0);
        self.op(MOV64_K, 0, 0, 0, XDP_TX);
        self.op(EXIT, 0, 0, 0, 0);
    }
}

/// Frames veth has taken from XDP on the port (`ndo_xdp_xmit`): the sum
/// of its `tx_queue_<n>_xdp_xmit` statistics; `None` without them.
fn xdp_xmitted(fd: i32, name: &str) -> Option<u64> {
    let stats = sock::ethtool_stats(fd, name)?;
    let mine: Vec<u64> = stats.iter().filter(|(n, _)| n.starts_with("tx_queue_") && n.ends_with("_xdp_xmit")).map(|&(_, v)| v).collect();
    (!mine.is_empty()).then(|| mine.iter().sum())
}

fn field(state: &[u8], at: i16) -> u64 {
    u64::from_ne_bytes(state[at as usize..at as usize + 8].try_into().expect("8 bytes"))
}

/// The picosecond period of `rate_fps`, checked to keep `frames × period` in 64 bits.
fn period_ps(rate_fps: f64, frames: u64) -> Result<u64, String> {
    let p = (1e12 / rate_fps).round();
    if !(p >= 1.0 && p < u64::MAX as f64) || frames.checked_mul(p as u64).is_none() {
        return Err(format!("xdp_live: {rate_fps} frames/s for {frames} frames is beyond its schedule's range"));
    }
    Ok(p as u64)
}

/// Sends the job's frames; `t0` is the monotonic instant frame 0 is due.
pub fn run(job: LiveJob, t0: u64, deadline: u64, stop: &AtomicBool) -> TxReport {
    let mut rep = TxReport { stream_offered_frames: vec![0], stream_refused_frames: vec![0], ..Default::default() };
    let placed = job.cpu.map_or(Ok(()), clock::pin_to_cpu).and_then(|_| job.nice.map_or(Ok(()), clock::set_nice));
    let sent = placed.and_then(|_| netns::within(job.netns.as_deref(), || send(&job, t0, deadline, stop, &mut rep)));
    if let Err(e) = sent {
        rep.error = Some(e);
    }
    rep.unsent_frames = job.frames - rep.stream_offered_frames[0];
    rep
}

/// The signal that ends the program's loop: BPF_PROG_RUN returns EINTR
/// when one is pending (the handler does nothing).
fn interrupt_signal() -> libc::c_int {
    libc::SIGRTMIN() + 1
}

extern "C" fn ignore(_: libc::c_int) {}

fn catch_interrupt() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: a no-op handler is async-signal-safe; sigaction is given a valid, zeroed struct.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = ignore as *const () as libc::sighandler_t;
            libc::sigaction(interrupt_signal(), &sa, std::ptr::null_mut());
        }
    });
}

/// Runs the program from the calling thread (already in the port's
/// namespace and on its CPU) while a watcher thread reads the state every
/// `WATCH_NS` and interrupts the run once every frame is sent, the
/// deadline has passed or `stop` is set.
fn send(job: &LiveJob, t0: u64, deadline: u64, stop: &AtomicBool, rep: &mut TxReport) -> Result<(), String> {
    let layout = job.template.stamp_layout().ok_or("xdp_live sends UDP test frames whole only")?;
    let mut base = vec![0u8; job.template.len()];
    job.template.write(&mut base, 0, 0, 0);
    let period = period_ps(job.rate_fps, job.frames)?;
    let probe = sock::ioctl_socket()?;
    let probe_fd = std::os::unix::io::AsRawFd::as_raw_fd(&probe);
    let ifindex = sock::if_info(probe_fd, &job.interface)?.index;
    let state = ArrayMap::new(STATE_LEN)?;
    let slip_ns = job.slip_after_frames.map(|n| (n as u128 * period as u128 / 1000).min(u64::MAX as u128) as u64);
    let prog = bpf::load_xdp(&program(state.fd(), &base, &layout, period, slip_ns), "v6b_live_tx")?;
    let counted = || -> Option<(u64, u64)> { Some((xdp_xmitted(probe_fd, &job.interface)?, IfCounters::read(&job.interface)?.tx_dropped)) };
    let before = counted().ok_or_else(|| format!("xdp_live: cannot read the transmit counters of {} (veth's tx_queue_<n>_xdp_xmit, tx_dropped)", job.interface))?;
    let mut init = vec![0u8; STATE_LEN];
    for (at, v) in [(T0, t0), (END, job.frames), (DEADLINE, deadline), (OFFSET, clock::realtime_minus_monotonic_ns() as u64)] {
        init[at as usize..at as usize + 8].copy_from_slice(&v.to_ne_bytes());
    }
    state.write(&init)?;
    catch_interrupt();
    call_program(job, &state, std::os::unix::io::AsRawFd::as_raw_fd(&prog), ifindex, &base, deadline, stop, rep)?;
    let after = counted().unwrap_or(before);
    report(job, &state.read()?, (after.0 - before.0, after.1 - before.1), t0, period, rep)
}

/// Runs the program in one `BPF_PROG_RUN` call for the whole trial (again
/// after an interruption), while a watcher interrupts it when the frames
/// are sent, the deadline passed or the trial was stopped.
#[allow(clippy::too_many_arguments)]
fn call_program(job: &LiveJob, state: &ArrayMap, prog_fd: i32, ifindex: i32, base: &[u8], deadline: u64, stop: &AtomicBool, rep: &mut TxReport) -> Result<(), String> {
    // SAFETY: gettid has no preconditions.
    let me = unsafe { libc::gettid() };
    let running = AtomicBool::new(true);
    std::thread::scope(|sc| {
        sc.spawn(|| {
            // Bounded by the sender: it clears `running` when its last call returns.
            while running.load(Ordering::Acquire) {
                std::thread::sleep(std::time::Duration::from_nanos(WATCH_NS));
                let done = state.read().map_or(true, |s| field(&s, NEXT) >= job.frames);
                if done || stop.load(Ordering::Relaxed) || clock::monotonic_ns() >= deadline {
                    // SAFETY: signals this process's sender thread, whose handler does nothing.
                    unsafe { libc::syscall(libc::SYS_tgkill, libc::getpid(), me, interrupt_signal()) };
                }
            }
        });
        // One call for the whole trial: each call costs two RCU grace periods
        // (the kernel adds the program to its XDP dispatcher and removes it,
        // 12–24 ms each here), so the frames due meanwhile would go late.
        // The first is spent in the lead before t0.
        let out = loop {
            let mut s = state.read()?;
            if stop.load(Ordering::Relaxed) || clock::monotonic_ns() >= deadline || field(&s, NEXT) >= job.frames {
                break Ok(());
            }
            // Batches start again with the call; frames a stopped call left
            // pending were flushed when it stopped, at a time not known: not counted.
            for at in [RUNS, PEND_N] {
                s[at as usize..at as usize + 8].fill(0);
            }
            state.write(&s)?;
            match bpf::test_run(prog_fd, base, ifindex, u32::MAX, Some(BATCH_RUNS), None) {
                Ok(_) => {}
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
                Err(e) => break Err(format!("xdp_live: BPF_PROG_RUN: {e}")),
            }
            rep.sendmmsg_calls += 1;
        };
        running.store(false, Ordering::Release);
        out
    })
}

/// The sender's report from the program's state `s` and the port's
/// counters over the trial: (frames veth took, frames it refused).
fn report(job: &LiveJob, s: &[u8], counted: (u64, u64), t0: u64, period: u64, rep: &mut TxReport) -> Result<(), String> {
    let sent = field(s, NEXT);
    let taken = counted.0;
    let refused = counted.1.min(sent);
    rep.stream_offered_frames[0] = sent;
    rep.stream_refused_frames[0] = refused;
    rep.refused_frames = refused;
    rep.tx_frames = sent - refused;
    rep.tx_wire_frames = rep.tx_frames;
    rep.max_lag_ns = field(s, MAX_LAG);
    rep.first_lag_ns = field(s, FIRST_LAG);
    rep.slips = field(s, SLIPS);
    rep.slipped_ns = field(s, SLIPPED);
    rep.max_slip_ns = field(s, MAX_SLIP);
    // Frames due within the largest lag were due together: the longest catch-up burst.
    rep.max_backlog_frames = if sent > 0 { (rep.max_lag_ns as u128 * 1000 / period as u128) as u64 + 1 } else { 0 };
    let last = field(s, LAST);
    rep.send_span_ns = last.saturating_sub(t0);
    rep.max_send_call_ns = field(s, MAX_GAP);
    // `tx_stamp_mean_error_ns` is send_call_ns_total over sendmmsg_calls: keep that the mean per frame.
    let held = field(s, HELD_N);
    rep.send_call_ns_total = if held > 0 { field(s, SUM_GAP) * rep.sendmmsg_calls.max(1) / held } else { 0 };
    let due_last = t0 + rep.slipped_ns + (sent.saturating_sub(1) as u128 * period as u128 / 1000) as u64;
    let span = last.max(due_last).saturating_sub(t0 + rep.slipped_ns);
    rep.offered_fps = if sent >= 2 && span > 0 { (sent - 1) as f64 * 1e9 / span as f64 } else { job.rate_fps };
    let unaccounted = sent.saturating_sub(taken + refused);
    if unaccounted > 0 {
        // veth drops XDP frames to an end without NAPI and counts nothing.
        return Err(format!(
            "xdp_live: {unaccounted} of {sent} frames neither taken nor refused by the port: the far end receives without NAPI (GRO off and no XDP program, which veth needs for XDP frames)"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::StreamPlan;
    use crate::wire::ethernet::Mac;
    use crate::wire::signature;

    fn template(v4: bool, size: usize) -> Template {
        let (s, d) = if v4 { ("198.18.0.2", "198.19.0.2") } else { ("2001:2::2", "2001:2:0:1::2") };
        Template::new(&StreamPlan::for_test(3, s, d, size), Mac([2, 0, 0, 0, 0, 1]), Mac([2, 0, 0, 0, 0, 2]))
    }

    /// Runs the program once (not live: the kernel hands the frame back) on
    /// a page that holds another frame, and compares with `Template::write`.
    /// Needs root (bpf(2)); skipped where the kernel refuses.
    #[test]
    fn the_program_writes_what_the_template_writes() {
        for (v4, size) in [(true, 64), (true, 128), (true, 1518), (false, 84), (false, 128), (false, 1518)] {
            let t = template(v4, size);
            let layout = t.stamp_layout().expect("a UDP template");
            let mut base = vec![0u8; t.len()];
            t.write(&mut base, 0, 0, 0);
            let Ok(state) = ArrayMap::new(STATE_LEN) else {
                eprintln!("skipped: no bpf(2) here");
                return;
            };
            // 1 ps a frame, and t0 = −k/1000 ns (wrapping): frame k is due at 0,
            // whatever the machine's uptime (t0 = 0 needed 281 s of it for the last k).
            let prog = bpf::load_xdp(&program(state.fd(), &base, &layout, 1, None), "v6b_live_test").unwrap();
            let fd = std::os::unix::io::AsRawFd::as_raw_fd(&prog);
            for k in [0u64, 1, 65_535, 65_536, 0x1234_5678_9abc, signature::MAX_SEQ - 1] {
                let mut init = vec![0u8; STATE_LEN];
                let offset = 1_700_000_000_000_000_000u64;
                for (at, v) in [(T0, (k / 1000).wrapping_neg()), (NEXT, k), (END, k + 1), (DEADLINE, u64::MAX), (OFFSET, offset)] {
                    init[at as usize..at as usize + 8].copy_from_slice(&v.to_ne_bytes());
                }
                state.write(&init).unwrap();
                let stale = vec![0xa5u8; t.len()];
                let mut out = vec![0u8; t.len()];
                let verdict = bpf::test_run(fd, &stale, 1, 1, None, Some(&mut out)).unwrap();
                assert_eq!(verdict, XDP_TX as u32, "frame {k} was due");
                let sig = signature::parse(&out[layout.seq_off - signature::SEQ.start..]).unwrap();
                assert_eq!((sig.stream, sig.seq), (3, k));
                assert!(sig.tx_ns > offset, "stamped with now + offset");
                let mut expect = vec![0u8; t.len()];
                t.write(&mut expect, k, sig.tx_ns, k);
                assert_eq!(out, expect, "{size}-byte IPv{} frame {k}", if v4 { 4 } else { 6 });
                let s = state.read().unwrap();
                assert_eq!(field(&s, NEXT), k + 1);
                // Frame k + 1 is not due: the next run sends nothing.
                assert_eq!(bpf::test_run(fd, &stale, 1, 1, None, Some(&mut out)).unwrap(), XDP_DROP as u32);
            }
        }
    }

    #[test]
    fn the_program_sends_nothing_not_yet_due_or_past_the_deadline() {
        let t = template(true, 128);
        let mut base = vec![0u8; t.len()];
        t.write(&mut base, 0, 0, 0);
        let Ok(state) = ArrayMap::new(STATE_LEN) else { return };
        let prog = bpf::load_xdp(&program(state.fd(), &base, &t.stamp_layout().unwrap(), 1_000_000, None), "v6b_live_test").unwrap();
        let fd = std::os::unix::io::AsRawFd::as_raw_fd(&prog);
        let now = clock::monotonic_ns();
        for (t0, deadline, sends) in [(now + 10_000_000_000, u64::MAX, false), (0, now, false), (0, u64::MAX, true)] {
            let mut init = vec![0u8; STATE_LEN];
            for (at, v) in [(T0, t0), (END, 10), (DEADLINE, deadline)] {
                init[at as usize..at as usize + 8].copy_from_slice(&v.to_ne_bytes());
            }
            state.write(&init).unwrap();
            let mut out = vec![0u8; t.len()];
            let v = bpf::test_run(fd, &base, 1, 1, None, Some(&mut out)).unwrap();
            assert_eq!(v == XDP_TX as u32, sends, "t0 {t0} deadline {deadline}");
        }
    }

    #[test]
    fn the_period_keeps_the_schedule_in_range() {
        assert_eq!(period_ps(1e6, 1000).unwrap(), 1_000_000);
        assert_eq!(period_ps(148_809.523_809_5, 10).unwrap(), 6_720_000);
        assert!(period_ps(1.0, u64::MAX / 1000).is_err());
    }
}

//! The trial result: the JSON document the engine prints (docs/engine-spec.md).
//! Counts are integers; ratios and rates are derived from them here and
//! nowhere else.

use crate::rxport::PortRxCounters;
use crate::sock::IfCounters;
use crate::stats::{IpdvSummary, PdvSummary, Summary};
use serde::Serialize;

/// The result format version this engine writes.
pub const RESULT_VERSION: u32 = 2;

#[derive(Debug, Serialize)]
pub struct TrialResult {
    pub result_version: u32,
    pub engine_version: &'static str,
    /// "completed", or "interrupted" when a signal ended the trial early.
    pub status: &'static str,
    /// CLOCK_REALTIME when the traffic phase began [ns since the epoch].
    pub started_at_unix_ns: u64,
    /// Learning phase length, settle pause included [s].
    pub learning_s: f64,
    /// Intended traffic phase length: the longest port's frames / rate [s].
    pub intended_duration_s: f64,
    /// Actual traffic phase length: until the last frame was handed over [s].
    pub traffic_s: f64,
    /// Wait after the traffic before counting [s]: the spec's.
    pub drain_s: f64,
    /// How long the drain lasted [s]: `drain_s`, or less where
    /// `drain_until_received` ended it when every frame had arrived.
    pub drained_s: f64,
    /// What the senders did after a stall: "catch_up" or "slip" (the spec's `after_stall`).
    pub after_stall: &'static str,
    /// SCHED_FIFO priority the receive thread ran at (the spec's
    /// `rx_priority`, when every port received through AF_XDP); null: an
    /// ordinary thread.
    pub rx_priority: Option<u8>,
    pub tester_limited: bool,
    /// Why, in words; empty when not limited.
    pub tester_limited_reasons: Vec<String>,
    pub totals: Totals,
    pub ports: Vec<PortResult>,
    pub streams: Vec<StreamResult>,
}

/// Frame counts (RFC 2544 §10) with the loss ratio derived from them.
#[derive(Debug, Serialize, Default, Clone, Copy)]
pub struct FrameCounts {
    pub tx_frames: u64,
    pub rx_frames: u64,
    pub lost_frames: u64,
    /// lost / tx, 0 when nothing was sent.
    pub loss_ratio: f64,
    pub reordered_frames: u64,
    pub duplicate_frames: u64,
}

impl FrameCounts {
    /// Counts for `tx` frames sent of which `rx` distinct ones arrived.
    pub fn new(tx: u64, rx: u64, reordered: u64, duplicate: u64) -> FrameCounts {
        let lost = tx.saturating_sub(rx);
        FrameCounts { tx_frames: tx, rx_frames: rx, lost_frames: lost, loss_ratio: loss_ratio(tx, lost), reordered_frames: reordered, duplicate_frames: duplicate }
    }

    /// The sum of several counts, the ratio derived anew.
    pub fn sum<'a>(all: impl Iterator<Item = &'a FrameCounts>) -> FrameCounts {
        let (mut tx, mut rx, mut re, mut dup) = (0, 0, 0, 0);
        for c in all {
            tx += c.tx_frames;
            rx += c.rx_frames;
            re += c.reordered_frames;
            dup += c.duplicate_frames;
        }
        FrameCounts::new(tx, rx, re, dup)
    }
}

#[derive(Debug, Serialize, Default)]
pub struct Totals {
    #[serde(flatten)]
    pub counts: FrameCounts,
    /// Sum of the sending ports' intended rates [frames/s].
    pub intended_fps: f64,
    /// Sum of the sending ports' achieved rates [frames/s].
    pub offered_fps: f64,
}

#[derive(Debug, Serialize)]
pub struct PortResult {
    pub name: String,
    pub interface: String,
    pub netns: Option<String>,
    pub mac: String,
    pub mtu: usize,
    /// The interface's kernel driver ("veth" on the emulated lab).
    pub driver: Option<String>,
    /// The port's packet I/O: "af_packet" or "af_xdp" (what `auto` chose).
    pub backend: crate::spec::Backend,
    /// Why `auto` fell back to af_packet, when it did.
    pub backend_note: Option<String>,
    /// af_xdp: whether the kernel copied frames ("copy", veth) or the NIC used the UMEM ("zero_copy").
    pub xsk_mode: Option<crate::xsk::XskMode>,
    pub next_hop_mac_ipv4: Option<String>,
    pub next_hop_mac_ipv6: Option<String>,
    /// Present on sending ports.
    pub tx: Option<PortTx>,
    pub rx: PortRxCounters,
    /// Frames the kernel could not put in the engine's receive ring.
    pub rx_ring_drops: u64,
    /// Kernel interface counters over the trial (None if unreadable).
    pub interface_counters: Option<IfCounters>,
}

#[derive(Debug, Serialize)]
pub struct PortTx {
    /// Intended rate [frames/s]; with a rate step, the mean over the trial.
    pub intended_fps: f64,
    /// The step to a second rate, if the spec asked for one.
    pub rate_step: Option<crate::pace::Step>,
    /// The spec's `tx_run_frames`: the streams were sent in runs.
    pub run_frames: Option<u64>,
    pub offered_fps: f64,
    /// Share-weighted mean frame size of the port's streams [bytes incl. FCS].
    pub mean_frame_size: f64,
    /// Share-weighted mean of the wire frames per test frame: 1, or more
    /// when streams are fragmented at the source.
    pub mean_wire_frames: f64,
    /// Offered rate at layer 1 (every wire frame + 20 bytes preamble and gap) [b/s].
    pub offered_l1_bps: f64,
    /// Offered rate at layer 2 (wire frames incl. FCS) [b/s].
    pub offered_l2_bps: f64,
    pub planned_frames: u64,
    /// Test frames handed to the kernel (with every fragment).
    pub tx_frames: u64,
    /// Frames handed to the kernel: test frames, or their fragments.
    pub tx_wire_frames: u64,
    /// Frames the far end of a veth port refused (its input queue full or
    /// its link down): not retried; the streams count them as offered and
    /// lost.
    pub refused_frames: u64,
    pub unsent_frames: u64,
    pub send_retries: u64,
    pub sendmmsg_calls: u64,
    pub max_lag_ns: u64,
    /// How late the first frame went after the trial's common start [ns].
    pub first_lag_ns: u64,
    pub max_backlog_frames: u64,
    /// With `after_stall: slip`: times the schedule slipped after a stall,
    /// the time it slipped in all and the longest slip [ns]; 0 otherwise.
    pub slips: u64,
    pub slipped_ns: u64,
    pub max_slip_ns: u64,
    /// Upper bound of a transmit timestamp's earliness [ns]: the longest
    /// send call (a frame is stamped as it is built, before the call).
    pub tx_stamp_max_error_ns: u64,
    /// Mean send-call duration [ns]: the typical bound.
    pub tx_stamp_mean_error_ns: f64,
    /// With the spec's `tx_stamp_check`: the carried stamps against the
    /// kernel's software transmit stamps (`txstamp.rs`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tx_stamp_check: Option<crate::txstamp::StampCheck>,
    /// The first sender's CPU (all senders' when the port has one).
    pub cpu: Option<usize>,
    /// Senders (lanes), each on a transmit queue of its own, and each one's CPU.
    pub queues: u32,
    pub cpus: Vec<Option<usize>>,
}

#[derive(Debug, Serialize)]
pub struct StreamResult {
    pub index: u16,
    pub name: String,
    pub ip_version: u8,
    /// The IP version its frames arrived as (a translator between: the
    /// spec's `rx_ip_version`); `ip_version` otherwise.
    pub rx_ip_version: u8,
    pub tx_port: String,
    pub rx_port: String,
    pub src_ip: String,
    pub dst_ip: String,
    pub src_port: u16,
    pub dst_port: u16,
    /// `udp`, or `icmp_echo`: Echo Requests whose replies are counted at
    /// the sending port; latency is then the round trip.
    pub protocol: crate::spec::Protocol,
    pub frame_size: usize,
    pub share: u64,
    /// This stream's part of its port's intended rate [frames/s].
    pub intended_fps: f64,
    /// `tx_frames` counts the frames offered: those handed to the kernel
    /// plus `refused_frames`, which the far end refused.
    #[serde(flatten)]
    pub counts: FrameCounts,
    pub refused_frames: u64,
    pub negative_latency_frames: u64,
    /// Latency of every received frame [ns]; null if none arrived.
    pub latency_ns: Option<Summary>,
    /// PDV = D(q) − Dmin [ns] (RFC 5481 §4.2).
    pub pdv_ns: Option<PdvSummary>,
    /// IPDV = D(i) − D(i−1) for consecutive sequence numbers [ns] (RFC 5481 §4.1).
    pub ipdv_ns: Option<IpdvSummary>,
    /// Gap between successive received frames of the stream [ns].
    pub inter_arrival_ns: Option<Summary>,
    /// HdrHistogram V2 deflate, base64, of the latency [ns], if asked for.
    pub latency_histogram: Option<String>,
    /// First and last sent frame that never arrived; null without loss.
    pub loss_window: Option<LossWindow>,
    /// Fragmentation counts; null when the stream was neither sent nor
    /// received as fragments.
    pub fragments: Option<Fragments>,
    /// What the stream walked (`walk.rs`); null when it walked nothing.
    /// `src_ip`, `dst_ip`, `src_port` and `dst_port` above are then the
    /// walk's first values.
    pub walk: Option<WalkResult>,
    /// A `learn_tuples` stream's records (`tuples.rs`); null otherwise.
    pub learned_tuples: Option<crate::tuples::LearnedTuples>,
}

/// A walking stream's fields: how many values each walked, their order,
/// and how many times the longest was sent through.
#[derive(Debug, Serialize, Clone)]
pub struct WalkResult {
    pub dst_ip: Option<u64>,
    pub src_ip: Option<u64>,
    pub dst_port: Option<u64>,
    pub src_port: Option<u64>,
    pub order: crate::walk::Order,
    pub seed: Option<u64>,
    /// Frames sent over the longest field's values: below 1, some values
    /// were never sent.
    pub cycles: f64,
}

impl WalkResult {
    pub fn new(w: &crate::walk::Walk, tx_frames: u64) -> WalkResult {
        use crate::walk::Kind;
        let n = |k| w.field(k).map(crate::walk::Field::count);
        let longest = w.fields.iter().map(crate::walk::Field::count).max().unwrap_or(1);
        WalkResult {
            dst_ip: n(Kind::DstIp),
            src_ip: n(Kind::SrcIp),
            dst_port: n(Kind::DstPort),
            src_port: n(Kind::SrcPort),
            order: w.order,
            seed: w.seed,
            cycles: tx_frames as f64 / longest as f64,
        }
    }
}

/// A fragmented stream's counts. Its frames (`tx_frames`, `rx_frames`,
/// loss, latency) stay whole datagrams: one counts received once all its
/// fragments arrived, at the arrival of the last (`reassembly.rs`).
#[derive(Debug, Serialize, Clone, Copy)]
pub struct Fragments {
    /// Fragments the engine sent (source fragmentation), 0 if it sent the
    /// frames whole.
    pub tx_fragments: u64,
    /// Fragments per frame at the source (1: sent whole).
    pub per_frame: u64,
    /// Fragments of this stream's frames received (of whole and incomplete ones).
    pub rx_fragments: u64,
    /// Frames received as fragments and found whole.
    pub reassembled_frames: u64,
    /// Frames of which some fragments, the first among them, arrived but not all.
    pub incomplete_frames: u64,
    /// `rx_fragments` over the traffic phase [fragments/s].
    pub rx_fragments_per_s: f64,
}

/// Where a stream's losses lie: sequence numbers and the frames' due times
/// after t0 [s] (RFC 2544 §26.5 recovery: the last lost frame).
#[derive(Debug, Serialize, Clone, Copy)]
pub struct LossWindow {
    pub first_seq: u64,
    pub last_seq: u64,
    pub first_due_s: f64,
    pub last_due_s: f64,
}

/// (sent − received) / sent, 0 when nothing was sent.
fn loss_ratio(tx: u64, lost: u64) -> f64 {
    if tx == 0 { 0.0 } else { lost as f64 / tx as f64 }
}

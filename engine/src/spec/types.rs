//! The trial spec's serde types, one to one with the JSON (docs/engine-spec.md), and its limits.

use crate::wire::ext::ExtHeader;
use crate::wire::signature;
use serde::Deserialize;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// The spec version this engine reads.
pub const SPEC_VERSION: u32 = 3;
/// Largest frame the engine builds (jumbo), bytes incl. FCS.
pub const MAX_FRAME_SIZE: usize = 9216;
/// Frames per sending port at most (bounds the per-stream sequence bitmaps).
pub const MAX_FRAMES_PER_PORT: u64 = 2_000_000_000;
const _: () = assert!(MAX_FRAMES_PER_PORT <= signature::MAX_SEQ, "sequence numbers must fit the signature");
/// Longest traffic phase accepted, seconds.
pub const MAX_DURATION_S: f64 = 86_400.0;
/// Highest rate accepted per sending port, frames/s.
pub const MAX_RATE_FPS: f64 = 100e6;
/// Most senders (transmit queues) a port may have.
pub const MAX_TX_QUEUES: u32 = 64;
/// RFC 2544 App. C.2.6.4 test-frame UDP ports.
pub const DEFAULT_SRC_PORT: u16 = 0xc020;
pub const DEFAULT_DST_PORT: u16 = 0x0007;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrialSpec {
    pub spec_version: u32,
    pub ports: Vec<PortSpec>,
    pub streams: Vec<StreamSpec>,
    /// Traffic phase length [s]; exactly one of this and `frame_count`.
    pub duration_s: Option<f64>,
    /// Frames each sending port sends; exactly one of this and `duration_s`.
    pub frame_count: Option<u64>,
    /// Wait after the last frame before counting [s] (RFC 2544 §23: ≥ 2 s).
    #[serde(default = "default_drain_s")]
    pub drain_s: f64,
    /// End the drain as soon as every frame each stream offered (and the
    /// far end did not refuse) has been received; `drain_s` stays the most
    /// it waits. A frame still missing keeps the whole wait.
    #[serde(default)]
    pub drain_until_received: bool,
    #[serde(default)]
    pub learning: LearningSpec,
    /// CPU for the receive thread; none = not pinned.
    pub rx_cpu: Option<usize>,
    /// SCHED_FIFO priority (1..=99) for the receive thread when every port
    /// receives through AF_XDP; none = an ordinary thread. Give it the
    /// priority of the NAPI threads that share its CPU: at the same FIFO
    /// priority neither preempts the other in the middle of its batch
    /// (`docs/engine-spec.md`, "Receive thread priority").
    pub rx_priority: Option<u8>,
    /// Include each stream's latency histogram (HdrHistogram V2, base64) in the result.
    #[serde(default)]
    pub export_histograms: bool,
    /// Compare each sent frame's carried transmit stamp with the kernel's
    /// software transmit stamp (`txstamp.rs`); the result's ports then
    /// carry `tx.tx_stamp_check`. For calibration: a copy of every frame
    /// comes back to the sender.
    #[serde(default)]
    pub tx_stamp_check: bool,
    /// Shortfall of achieved against intended rate that marks the trial
    /// `tester_limited`, as a ratio (default 0.001 = 0.1 %).
    #[serde(default = "default_shortfall")]
    pub tester_limited_shortfall: f64,
    /// A sender that falls more than this many frames behind schedule
    /// catches up with a burst a constant-rate tester would not send; the
    /// trial is then `tester_limited` (default 1000 frames, about a Linux
    /// router's default input queue, net.core.netdev_max_backlog).
    #[serde(default = "default_backlog")]
    pub tester_limited_backlog_frames: u64,
    /// What a sender does when it finds itself behind schedule by more
    /// than half of `tester_limited_backlog_frames` (a stall: the host took
    /// its CPU): `catch_up` sends the frames due back to back (the default);
    /// `slip` moves the rest of its schedule later by the stall, so the
    /// DUT sees a pause at the intended rate instead of a burst above it
    /// (`tx.rs`). Slipped time is reported per port.
    #[serde(default)]
    pub after_stall: AfterStall,
    /// With `slip`: a port whose schedule slipped by more than this share
    /// of the trial's intended duration marks the trial `tester_limited`
    /// (default 0.005 = 0.5 %: a DUT given a pause of that share of the
    /// trial can pass at most that share above its capacity).
    #[serde(default = "default_slip_ratio")]
    pub tester_limited_slip_ratio: f64,
    /// Allow destinations outside 198.18.0.0/15 and 2001:2::/48.
    #[serde(default)]
    pub allow_non_benchmarking_addresses: bool,
    /// Allow ports in the engine's own (root) network namespace.
    #[serde(default)]
    pub allow_root_netns: bool,
    /// The lab's namespaces: a port's `netns` must start with this
    /// (required when a port names one), so a spec cannot open ports in
    /// namespaces of anything but the lab it was made for.
    #[serde(default)]
    pub netns_prefix: Option<String>,
}

fn default_drain_s() -> f64 {
    2.0
}
fn default_shortfall() -> f64 {
    0.001
}
fn default_backlog() -> u64 {
    1000
}
fn default_slip_ratio() -> f64 {
    0.005
}

/// What a sender does after a stall (`TrialSpec::after_stall`).
#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum AfterStall {
    #[default]
    CatchUp,
    Slip,
}

#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct LearningSpec {
    /// Longest wait for ARP/ND resolution of all next hops [s].
    #[serde(default = "default_learning_timeout")]
    pub timeout_s: f64,
    /// Pause after learning before the traffic starts [s] (RFC 2544 §23).
    #[serde(default = "default_settle")]
    pub settle_s: f64,
}

fn default_learning_timeout() -> f64 {
    3.0
}
fn default_settle() -> f64 {
    0.5
}

impl Default for LearningSpec {
    fn default() -> Self {
        LearningSpec { timeout_s: default_learning_timeout(), settle_s: default_settle() }
    }
}

#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct PortSpec {
    pub name: String,
    pub interface: String,
    /// Named network namespace (/run/netns/NAME); none = the engine's own.
    pub netns: Option<String>,
    /// The port's MAC, used as source and answered in ARP/ND; default
    /// 02:76:36 + the interface MAC's last three bytes (see `Mac::engine_port`).
    /// "interface" uses the interface's own MAC.
    pub mac: Option<String>,
    /// The port's IPv4 address with prefix length, e.g. "198.18.0.2/24".
    pub ipv4: Option<String>,
    /// The port's IPv6 address with prefix length, e.g. "2001:2::2/64".
    pub ipv6: Option<String>,
    pub gateway_ipv4: Option<Ipv4Addr>,
    pub gateway_ipv6: Option<Ipv6Addr>,
    /// Next hop's MAC for both families; skips ARP/ND resolution.
    pub next_hop_mac: Option<String>,
    /// Sending rate of this port; needed when a stream sends from it.
    pub tx_rate: Option<RateSpec>,
    /// CPU for this port's sender threads (one CPU for all, or one a
    /// `tx_queues`); none = not pinned.
    pub tx_cpu: Option<CpuChoice>,
    /// Sender threads, each on a transmit queue of its own (`tx.rs`,
    /// lanes); default 1. Above 1 needs the af_xdp backend.
    pub tx_queues: Option<u32>,
    /// Nice value (−20..=19) of this port's sender thread; none = inherited.
    pub tx_nice: Option<i32>,
    /// Change to a second rate after `after_s` of traffic (RFC 2544 §26.5
    /// recovery); needs `duration_s`.
    pub rate_step: Option<RateStepSpec>,
    /// Send the port's streams in runs instead of spread evenly: each
    /// stream's share (reduced by the shares' greatest common divisor) ×
    /// this many frames in a row, the streams in list order, then again
    /// (`mix::Schedule::runs`). For reading the DUT's work on each
    /// stream's frames over time, a run at a time; none = spread.
    pub tx_run_frames: Option<u64>,
    /// How the port sends and receives: "auto" (default), "af_packet" or
    /// "af_xdp" (`xsk.rs`: frames of at most `xsk::MAX_FRAME` bytes, no
    /// `tx_stamp_check`).
    #[serde(default)]
    pub backend: Backend,
}

/// The CPUs of a port's senders: one for all, or one a sender.
#[derive(Debug, Deserialize, Clone)]
#[serde(untagged)]
pub enum CpuChoice {
    One(usize),
    Each(Vec<usize>),
}

/// A port's packet I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Backend {
    /// The faster of the two on the port's driver (`trial::choose_backend`).
    #[default]
    Auto,
    /// A packet socket: sendmmsg(2) out, a TPACKET_V3 ring in (`ring.rs`).
    AfPacket,
    /// An AF_XDP socket fed by an XDP program (`xsk.rs`, `bpf.rs`).
    AfXdp,
    /// af_xdp's receive; frames sent by an XDP program the kernel runs in
    /// a loop (`live.rs`): one whole UDP stream at a constant rate, on veth.
    XdpLive,
}

/// A step to a second rate within the trial.
#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct RateStepSpec {
    /// Time after the first frame's due time at which the second rate starts [s].
    pub after_s: f64,
    /// The second rate [frames/s].
    pub fps: f64,
}

/// A port's rate of test frames. Frames/s only: what a percentage or a
/// bit rate means (the path's line rate, fragments and tunnels counted) is
/// the caller's to decide (v6bench: `core/rates.py`), so it is decided once.
#[derive(Debug, Deserialize, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct RateSpec {
    pub fps: f64,
}

#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct StreamSpec {
    pub name: Option<String>,
    pub tx_port: String,
    pub rx_port: String,
    pub ip_version: u8,
    /// Default: the sending port's address of that family.
    pub src_ip: Option<IpAddr>,
    /// Default: the receiving port's address of that family.
    pub dst_ip: Option<IpAddr>,
    pub src_port: Option<u16>,
    pub dst_port: Option<u16>,
    /// Bytes from destination MAC to FCS inclusive (RFC 1242 §3.5).
    pub frame_size: usize,
    /// Relative share of the sending port's frames (integer weight).
    #[serde(default = "default_share")]
    pub share: u64,
    /// IPv6 extension headers between the IPv6 header and UDP (`wire::ext`);
    /// they take their bytes from the payload, the frame size stays.
    #[serde(default)]
    pub ipv6_ext_headers: Vec<ExtHeader>,
    /// Fragment at the source: a datagram longer than this IP MTU [bytes]
    /// is sent as fragments (IPv4: 68..=9198, RFC 791; IPv6: 1280..=9198,
    /// RFC 8200 §5). The stream's rate and counts stay in datagrams.
    pub fragment_mtu: Option<usize>,
    /// What the frames carry: UDP test frames, or ICMP Echo Requests whose
    /// replies return to the sending port (`rx_port` = `tx_port`).
    #[serde(default)]
    pub protocol: Protocol,
    /// Addresses and ports that change from frame to frame (`walk.rs`).
    pub walk: Option<crate::walk::WalkSpec>,
    /// The IP version the frames arrive as; default `ip_version`. A
    /// translator between the ports (NAT64, SIIT: RFC 8219 §4, RFC 7915)
    /// swaps the IP header and keeps UDP and the signature, so the stream
    /// is still counted as one; the receiver then also checks each frame's
    /// UDP checksum (`bad_checksum_frames`). UDP streams only, without
    /// extension headers or source fragmentation.
    pub rx_ip_version: Option<u8>,
    /// Record the source address, source port and destination port of
    /// each frame as it arrives, by sequence number, and return them in
    /// the result (`learned_tuples`, `tuples.rs`): the connections a
    /// stateful DUT made of the frames, for a stream that answers them
    /// (`walk.reply_to`). UDP streams sent whole, of at most
    /// `walk::MAX_VALUES` frames.
    #[serde(default)]
    pub learn_tuples: bool,
}

/// A stream's upper-layer protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Protocol {
    #[default]
    Udp,
    /// ICMPv4/ICMPv6 Echo Request (`wire::echo`); the Echo Replies are counted.
    IcmpEcho,
}

fn default_share() -> u64 {
    1
}


fn positive(field: &str, v: f64) -> Result<f64, String> {
    if v.is_finite() && v > 0.0 { Ok(v) } else { Err(format!("{field}: must be a positive number, got {v}")) }
}

impl RateSpec {
    /// Test frames/s, checked: positive and within the engine's limit.
    pub fn to_fps(&self, field: &str) -> Result<f64, String> {
        let fps = positive(&format!("{field}.fps"), self.fps)?;
        if fps > MAX_RATE_FPS {
            return Err(format!("{field}: {fps:.0} frames/s is above the engine's limit of {MAX_RATE_FPS:.0}"));
        }
        Ok(fps)
    }
}

impl TrialSpec {
    /// Parses JSON text; the error says where the text is wrong.
    pub fn from_json(text: &str) -> Result<TrialSpec, String> {
        serde_json::from_str(text).map_err(|e| format!("trial spec: {e}"))
    }
}

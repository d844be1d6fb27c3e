//! The trial spec: the JSON contract the engine reads (docs/engine-spec.md).
//!
//! `TrialSpec` mirrors the JSON one to one and is checked by
//! [`TrialSpec::validate`], which turns it into a [`Plan`]: every default
//! filled in, every name resolved to an index, every rate in frames/s and
//! every count known before a socket is opened. Errors name the field.

use crate::mix::Schedule;
use crate::pace::Pace;
use crate::rate;
use crate::wire::ext::ExtHeader;
use crate::wire::{ethernet::Mac, ipv4, ipv6, signature, udp, FCS_LEN};
use serde::Deserialize;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// The spec version this engine reads.
pub const SPEC_VERSION: u32 = 1;
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

/// A rate with its unit: exactly one of the four is given.
#[derive(Debug, Deserialize, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct RateSpec {
    pub fps: Option<f64>,
    pub l1_bps: Option<f64>,
    pub l2_bps: Option<f64>,
    pub percent_of_line: Option<f64>,
    /// Nominal line rate for `percent_of_line` [b/s, layer 1].
    pub line_rate_bps: Option<f64>,
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

/// Which MAC a port uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MacChoice {
    /// Derived from the interface MAC (the default).
    Engine,
    /// The interface's own MAC.
    Interface,
    Given(Mac),
}

impl MacChoice {
    /// The MAC for an interface whose own MAC is `iface`.
    pub fn resolve(self, iface: Mac) -> Mac {
        match self {
            MacChoice::Engine => Mac::engine_port(iface),
            MacChoice::Interface => iface,
            MacChoice::Given(m) => m,
        }
    }
}

/// An address with its prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Prefixed<A> {
    pub addr: A,
    pub prefix_len: u8,
}

/// A validated port.
#[derive(Debug, Clone)]
pub struct PortPlan {
    pub name: String,
    pub interface: String,
    pub netns: Option<String>,
    pub mac: MacChoice,
    pub ipv4: Option<Prefixed<Ipv4Addr>>,
    pub ipv6: Option<Prefixed<Ipv6Addr>>,
    pub gateway_ipv4: Option<Ipv4Addr>,
    pub gateway_ipv6: Option<Ipv6Addr>,
    pub next_hop_mac: Option<Mac>,
    pub backend: Backend,
    pub tx: Option<TxPlan>,
    /// Largest wire frame (incl. FCS) this port sends, or receives whole
    /// (IPv6; a router may fragment IPv4 on the way).
    pub max_frame_size: usize,
    /// Whether this port sends IPv4 / IPv6 streams (needs that next hop).
    pub sends_ipv4: bool,
    pub sends_ipv6: bool,
}

/// What a sending port sends.
#[derive(Debug, Clone)]
pub struct TxPlan {
    /// The (first) rate [frames/s].
    pub rate_fps: f64,
    /// When each frame is due: `rate_fps`, or a step to a second rate.
    pub pace: Pace,
    /// Share-weighted mean frame size [bytes incl. FCS].
    pub mean_frame_size: f64,
    /// Share-weighted mean of what one test frame puts on the wire: its
    /// frames (1, or its fragments) and their bytes incl. FCS.
    pub mean_wire_frames: f64,
    pub mean_wire_bytes: f64,
    pub frames: u64,
    /// Stream indices in schedule order (schedule positions map to these).
    pub streams: Vec<usize>,
    pub schedule: Schedule,
    /// The CPU of each sender (lane), none = not pinned; as many as the
    /// port has senders (`tx_queues`).
    pub cpus: Vec<Option<usize>>,
    pub nice: Option<i32>,
}

impl TxPlan {
    /// The port's senders (lanes, one a transmit queue).
    pub fn queues(&self) -> u64 {
        self.cpus.len() as u64
    }
}

/// A validated stream.
#[derive(Debug, Clone)]
pub struct StreamPlan {
    pub index: u16,
    pub name: String,
    pub tx_port: usize,
    pub rx_port: usize,
    pub src_ip: IpAddr,
    pub dst_ip: IpAddr,
    pub src_port: u16,
    pub dst_port: u16,
    pub frame_size: usize,
    pub share: u64,
    /// Frames this stream will send.
    pub frames: u64,
    pub ext_headers: Vec<ExtHeader>,
    /// Source fragmentation MTU, if the spec gave one.
    pub fragment_mtu: Option<usize>,
    pub protocol: Protocol,
}

impl StreamPlan {
    pub fn ip_version(&self) -> u8 {
        if self.src_ip.is_ipv4() { 4 } else { 6 }
    }

    /// How a test frame is cut at the source (`fragment_mtu`): the bytes
    /// before each fragment's data (Ethernet, IP and for IPv6 the Fragment
    /// header; FCS not counted) and the data range of each fragment within
    /// the part behind the IP header. Empty when it is sent whole.
    pub fn fragments(&self) -> (usize, Vec<std::ops::Range<usize>>) {
        let Some(mtu) = self.fragment_mtu else { return (0, vec![]) };
        let v = self.ip_version();
        let (ip, frag) = if v == 4 { (ipv4::HEADER_LEN, 0) } else { (ipv6::HEADER_LEN, ipv6::FRAGMENT_HEADER_LEN) };
        let eth = crate::wire::ethernet::HEADER_LEN;
        let ranges = crate::frame::fragment_ranges(v, self.frame_size - FCS_LEN - eth - ip, mtu);
        if ranges.len() == 1 { (0, vec![]) } else { (eth + ip + frag, ranges) }
    }

    /// Sizes [bytes incl. FCS] of the wire frames one test frame is sent
    /// as: the frame itself, or its fragments.
    pub fn wire_frame_sizes(&self) -> Vec<usize> {
        let (head, ranges) = self.fragments();
        if ranges.is_empty() {
            return vec![self.frame_size];
        }
        ranges.iter().map(|r| head + r.len() + FCS_LEN).collect()
    }
}

#[cfg(test)]
impl StreamPlan {
    /// A UDP stream for unit tests: port 0 to port 0, RFC 2544 UDP ports,
    /// 100 frames of `frame_size` bytes.
    pub fn for_test(index: u16, src: &str, dst: &str, frame_size: usize) -> StreamPlan {
        StreamPlan {
            index,
            name: format!("s{index}"),
            tx_port: 0,
            rx_port: 0,
            src_ip: src.parse().expect("a test address"),
            dst_ip: dst.parse().expect("a test address"),
            src_port: DEFAULT_SRC_PORT,
            dst_port: DEFAULT_DST_PORT,
            frame_size,
            share: 1,
            frames: 100,
            ext_headers: vec![],
            fragment_mtu: None,
            protocol: Protocol::Udp,
        }
    }
}

/// A validated trial.
#[derive(Debug, Clone)]
pub struct Plan {
    pub ports: Vec<PortPlan>,
    pub streams: Vec<StreamPlan>,
    pub drain_s: f64,
    pub learning: LearningSpec,
    pub rx_cpu: Option<usize>,
    pub rx_priority: Option<u8>,
    pub export_histograms: bool,
    pub tx_stamp_check: bool,
    pub tester_limited_shortfall: f64,
    pub tester_limited_backlog_frames: u64,
    /// With `after_stall: slip`: the backlog [frames] beyond which a sender
    /// slips its schedule instead of catching up (half of
    /// `tester_limited_backlog_frames`, at least 1), and the slip ratio.
    pub slip_after_frames: Option<u64>,
    pub tester_limited_slip_ratio: f64,
    pub allow_root_netns: bool,
}

/// Smallest frame that holds Ethernet, the IP header, UDP and the signature.
pub fn min_frame_size(ip_version: u8) -> usize {
    let ip = if ip_version == 4 { ipv4::HEADER_LEN } else { ipv6::HEADER_LEN };
    crate::wire::ethernet::HEADER_LEN + ip + udp::HEADER_LEN + signature::LEN + FCS_LEN
}

/// True for 198.18.0.0/15 (RFC 2544 App. C) and 2001:2::/48 (RFC 5180 §5.2.1).
pub fn is_benchmarking(addr: &IpAddr) -> bool {
    match addr {
        IpAddr::V4(a) => a.octets()[0] == 198 && (a.octets()[1] & 0xfe) == 18,
        IpAddr::V6(a) => a.segments()[0] == 0x2001 && a.segments()[1] == 0x0002 && a.segments()[2] == 0,
    }
}

fn parse_prefixed<A: std::str::FromStr>(field: &str, s: &str, max_len: u8) -> Result<Prefixed<A>, String> {
    let (a, l) = s.split_once('/').ok_or_else(|| format!("{field}: {s:?} needs a prefix length, as in ADDRESS/LEN"))?;
    let addr = a.parse::<A>().map_err(|_| format!("{field}: {a:?} is not a valid address"))?;
    let prefix_len = l.parse::<u8>().ok().filter(|&p| p <= max_len).ok_or_else(|| format!("{field}: prefix length {l:?} must be 0..={max_len}"))?;
    Ok(Prefixed { addr, prefix_len })
}

fn positive(field: &str, v: f64) -> Result<f64, String> {
    if v.is_finite() && v > 0.0 { Ok(v) } else { Err(format!("{field}: must be a positive number, got {v}")) }
}

impl RateSpec {
    /// Test frames/s for a port whose test frames put `wire_frames` frames
    /// of `wire_bytes` bytes in all on the wire (means; 1 frame of the
    /// frame size unless fragmented at the source). Bit rates count every
    /// wire frame with its own 20-byte layer-1 overhead.
    pub fn to_fps(&self, field: &str, wire_bytes: f64, wire_frames: f64) -> Result<f64, String> {
        let l1_bytes = rate::l1_bytes(wire_bytes, wire_frames);
        let given = [self.fps.is_some(), self.l1_bps.is_some(), self.l2_bps.is_some(), self.percent_of_line.is_some()];
        if given.iter().filter(|&&g| g).count() != 1 {
            return Err(format!("{field}: give exactly one of fps, l1_bps, l2_bps, percent_of_line"));
        }
        if self.line_rate_bps.is_some() && self.percent_of_line.is_none() {
            return Err(format!("{field}.line_rate_bps: only used with percent_of_line"));
        }
        let fps = if let Some(f) = self.fps {
            positive(&format!("{field}.fps"), f)?
        } else if let Some(b) = self.l1_bps {
            rate::fps_from_l1_bps(positive(&format!("{field}.l1_bps"), b)?, l1_bytes)
        } else if let Some(b) = self.l2_bps {
            rate::fps_from_l2_bps(positive(&format!("{field}.l2_bps"), b)?, wire_bytes)
        } else {
            let p = positive(&format!("{field}.percent_of_line"), self.percent_of_line.unwrap_or(0.0))?;
            if p > 100.0 {
                return Err(format!("{field}.percent_of_line: {p} % is above line rate"));
            }
            let line = self.line_rate_bps.ok_or_else(|| format!("{field}: percent_of_line needs line_rate_bps"))?;
            rate::fps_from_percent(p, positive(&format!("{field}.line_rate_bps"), line)?, l1_bytes)
        };
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

    /// Checks every field and computes the plan.
    pub fn validate(&self) -> Result<Plan, String> {
        if self.spec_version != SPEC_VERSION {
            return Err(format!("spec_version: this engine reads version {SPEC_VERSION}, got {}", self.spec_version));
        }
        match (self.duration_s, self.frame_count) {
            (Some(d), None) => {
                if !(d.is_finite() && d > 0.0 && d <= MAX_DURATION_S) {
                    return Err(format!("duration_s: must be in (0, {MAX_DURATION_S}], got {d}"));
                }
            }
            (None, Some(n)) => {
                if n == 0 || n > MAX_FRAMES_PER_PORT {
                    return Err(format!("frame_count: must be 1..={MAX_FRAMES_PER_PORT}, got {n}"));
                }
            }
            _ => return Err("give exactly one of duration_s and frame_count".into()),
        }
        if !(self.drain_s.is_finite() && (0.0..=600.0).contains(&self.drain_s)) {
            return Err(format!("drain_s: must be 0..=600 s, got {}", self.drain_s));
        }
        if !(self.learning.timeout_s.is_finite() && self.learning.timeout_s > 0.0 && self.learning.timeout_s <= 60.0) {
            return Err("learning.timeout_s: must be in (0, 60] s".into());
        }
        if !(self.learning.settle_s.is_finite() && (0.0..=60.0).contains(&self.learning.settle_s)) {
            return Err("learning.settle_s: must be 0..=60 s".into());
        }
        if !(self.tester_limited_shortfall.is_finite() && (0.0..1.0).contains(&self.tester_limited_shortfall)) {
            return Err("tester_limited_shortfall: must be a ratio in [0, 1)".into());
        }
        if self.tester_limited_backlog_frames == 0 {
            return Err("tester_limited_backlog_frames: must be at least 1".into());
        }
        if !(self.tester_limited_slip_ratio.is_finite() && (0.0..1.0).contains(&self.tester_limited_slip_ratio)) {
            return Err("tester_limited_slip_ratio: must be a ratio in [0, 1)".into());
        }
        if let Some(p) = self.rx_priority {
            if !(1..=99).contains(&p) {
                return Err(format!("rx_priority: must be a SCHED_FIFO priority 1..=99, got {p}"));
            }
        }
        if self.ports.is_empty() {
            return Err("ports: at least one port is needed".into());
        }
        if self.streams.is_empty() {
            return Err("streams: at least one stream is needed".into());
        }
        if self.streams.len() > usize::from(u16::MAX) {
            return Err(format!("streams: at most {} streams", u16::MAX));
        }
        let mut ports = Vec::with_capacity(self.ports.len());
        for (i, p) in self.ports.iter().enumerate() {
            let f = format!("ports[{i}]");
            if p.name.is_empty() || ports.iter().any(|q: &PortPlan| q.name == p.name) {
                return Err(format!("{f}.name: must be non-empty and unique, got {:?}", p.name));
            }
            if p.interface.is_empty() || p.interface.len() > 15 || p.interface.contains('/') {
                return Err(format!("{f}.interface: {:?} is not a valid interface name", p.interface));
            }
            if let Some(ns) = &p.netns {
                if ns.is_empty() || ns.contains('/') || ns == "." || ns == ".." {
                    return Err(format!("{f}.netns: {ns:?} is not a valid namespace name"));
                }
            }
            let mac = match p.mac.as_deref() {
                None => MacChoice::Engine,
                Some("interface") => MacChoice::Interface,
                Some(m) => MacChoice::Given(m.parse::<Mac>().map_err(|e| format!("{f}.mac: {e}"))?),
            };
            let next_hop_mac = p.next_hop_mac.as_deref().map(|m| m.parse::<Mac>().map_err(|e| format!("{f}.next_hop_mac: {e}"))).transpose()?;
            let ipv4 = p.ipv4.as_deref().map(|s| parse_prefixed::<Ipv4Addr>(&format!("{f}.ipv4"), s, 32)).transpose()?;
            let ipv6 = p.ipv6.as_deref().map(|s| parse_prefixed::<Ipv6Addr>(&format!("{f}.ipv6"), s, 128)).transpose()?;
            ports.push(PortPlan {
                name: p.name.clone(),
                interface: p.interface.clone(),
                netns: p.netns.clone(),
                mac,
                ipv4,
                ipv6,
                gateway_ipv4: p.gateway_ipv4,
                gateway_ipv6: p.gateway_ipv6,
                next_hop_mac,
                backend: p.backend,
                tx: None,
                max_frame_size: 0,
                sends_ipv4: false,
                sends_ipv6: false,
            });
        }
        let port_index = |field: &str, name: &str| -> Result<usize, String> {
            ports.iter().position(|p| p.name == name).ok_or_else(|| format!("{field}: no port named {name:?}"))
        };
        let mut streams = Vec::with_capacity(self.streams.len());
        for (i, s) in self.streams.iter().enumerate() {
            let f = format!("streams[{i}]");
            let tx = port_index(&format!("{f}.tx_port"), &s.tx_port)?;
            let rx = port_index(&format!("{f}.rx_port"), &s.rx_port)?;
            if s.ip_version != 4 && s.ip_version != 6 {
                return Err(format!("{f}.ip_version: must be 4 or 6, got {}", s.ip_version));
            }
            if s.ip_version == 4 && !s.ipv6_ext_headers.is_empty() {
                return Err(format!("{f}.ipv6_ext_headers: only an IPv6 stream carries them"));
            }
            for (k, h) in s.ipv6_ext_headers.iter().enumerate() {
                h.check(&format!("{f}.ipv6_ext_headers[{k}]"))?;
            }
            let ext_len: usize = s.ipv6_ext_headers.iter().map(ExtHeader::len).sum();
            let min = min_frame_size(s.ip_version) + ext_len;
            if s.frame_size < min || s.frame_size > MAX_FRAME_SIZE {
                return Err(format!(
                    "{f}.frame_size: {} bytes does not fit IPv{}/UDP with the {}-byte signature{} (allowed {min}..={MAX_FRAME_SIZE} bytes incl. FCS)",
                    s.frame_size,
                    s.ip_version,
                    signature::LEN,
                    if ext_len > 0 { format!(" and {ext_len} bytes of extension headers") } else { String::new() }
                ));
            }
            if let Some(mtu) = s.fragment_mtu {
                let least = if s.ip_version == 4 { 68 } else { 1280 };
                let most = MAX_FRAME_SIZE - crate::wire::ethernet::HEADER_LEN - FCS_LEN;
                if !(least..=most).contains(&mtu) {
                    return Err(format!("{f}.fragment_mtu: must be {least}..={most} bytes for IPv{} (RFC {}), got {mtu}", s.ip_version, if s.ip_version == 4 { "791 §3.2" } else { "8200 §5" }));
                }
                if !s.ipv6_ext_headers.is_empty() {
                    return Err(format!("{f}.fragment_mtu: a stream with ipv6_ext_headers is not fragmented at the source"));
                }
            }
            if s.protocol == Protocol::IcmpEcho {
                if s.rx_port != s.tx_port {
                    return Err(format!("{f}.rx_port: the Echo Replies of an icmp_echo stream come back to its tx_port {:?}", s.tx_port));
                }
                if s.dst_ip.is_none() {
                    return Err(format!("{f}.dst_ip: an icmp_echo stream needs the address to ping"));
                }
                if s.src_port.is_some() || s.dst_port.is_some() || !s.ipv6_ext_headers.is_empty() || s.fragment_mtu.is_some() {
                    return Err(format!("{f}: src_port, dst_port, ipv6_ext_headers and fragment_mtu are for udp streams"));
                }
            }
            // An SRH sends the frame to its active segment.
            let srh_dst = s.ipv6_ext_headers.iter().find_map(|h| match h {
                ExtHeader::Srh { segments, segments_left } => Some(IpAddr::V6(segments[usize::from(*segments_left)])),
                _ => None,
            });
            if s.share == 0 {
                return Err(format!("{f}.share: must be at least 1"));
            }
            let (tp, rp) = (&ports[tx], &ports[rx]);
            let (src_ip, dst_ip) = if s.ip_version == 4 {
                let src = s.src_ip.or(tp.ipv4.map(|a| IpAddr::V4(a.addr)));
                let dst = s.dst_ip.or(rp.ipv4.map(|a| IpAddr::V4(a.addr)));
                (src, dst)
            } else {
                let src = s.src_ip.or(tp.ipv6.map(|a| IpAddr::V6(a.addr)));
                let dst = s.dst_ip.or(srh_dst).or(rp.ipv6.map(|a| IpAddr::V6(a.addr)));
                (src, dst)
            };
            let src_ip = src_ip.ok_or_else(|| format!("{f}.src_ip: not given and port {:?} has no IPv{} address", tp.name, s.ip_version))?;
            let dst_ip = dst_ip.ok_or_else(|| format!("{f}.dst_ip: not given and port {:?} has no IPv{} address", rp.name, s.ip_version))?;
            if (s.ip_version == 4) != (src_ip.is_ipv4() && dst_ip.is_ipv4()) || (s.ip_version == 6) != (src_ip.is_ipv6() && dst_ip.is_ipv6()) {
                return Err(format!("{f}: src_ip and dst_ip must both be IPv{}", s.ip_version));
            }
            let hops = s.ipv6_ext_headers.iter().flat_map(|h| match h {
                ExtHeader::Srh { segments, .. } => segments.clone(),
                ExtHeader::Routing0 { addresses, .. } => addresses.clone(),
                _ => vec![],
            });
            if let Some(a) = hops.map(IpAddr::V6).find(|a| !is_benchmarking(a)) {
                if !self.allow_non_benchmarking_addresses {
                    return Err(format!("{f}.ipv6_ext_headers: {a} leaves the benchmarking block 2001:2::/48"));
                }
            }
            if !(self.allow_non_benchmarking_addresses || is_benchmarking(&dst_ip) && is_benchmarking(&src_ip)) {
                return Err(format!(
                    "{f}: {src_ip} -> {dst_ip} leaves the benchmarking blocks 198.18.0.0/15 and 2001:2::/48; set allow_non_benchmarking_addresses to send there"
                ));
            }
            let name = s.name.clone().unwrap_or_else(|| format!("ipv{}-{}-{}-{i}", s.ip_version, s.tx_port, s.rx_port));
            if streams.iter().any(|t: &StreamPlan| t.name == name) {
                return Err(format!("{f}.name: {name:?} is used twice"));
            }
            streams.push(StreamPlan {
                index: i as u16,
                name,
                tx_port: tx,
                rx_port: rx,
                src_ip,
                dst_ip,
                src_port: s.src_port.unwrap_or(DEFAULT_SRC_PORT),
                dst_port: s.dst_port.unwrap_or(DEFAULT_DST_PORT),
                frame_size: s.frame_size,
                share: s.share,
                frames: 0,
                ext_headers: s.ipv6_ext_headers.clone(),
                fragment_mtu: s.fragment_mtu,
                protocol: s.protocol,
            });
            let pieces = streams.last().map_or(1, |t: &StreamPlan| t.wire_frame_sizes().len());
            if pieces > crate::frame::MAX_FRAGMENTS {
                return Err(format!("{f}.fragment_mtu: {}-byte frames would be cut into {pieces} fragments, more than {}", s.frame_size, crate::frame::MAX_FRAGMENTS));
            }
        }
        for s in &streams {
            let largest = s.wire_frame_sizes().into_iter().max().unwrap_or(s.frame_size);
            ports[s.tx_port].max_frame_size = ports[s.tx_port].max_frame_size.max(largest);
            if s.ip_version() == 6 {
                // Routers do not fragment IPv6 (RFC 8200 §5): it arrives as sent.
                ports[s.rx_port].max_frame_size = ports[s.rx_port].max_frame_size.max(largest);
            }
            if s.ip_version() == 4 {
                ports[s.tx_port].sends_ipv4 = true;
            } else {
                ports[s.tx_port].sends_ipv6 = true;
            }
        }
        for (pi, p) in ports.iter_mut().enumerate() {
            let f = format!("ports[{pi}]");
            let mine: Vec<usize> = streams.iter().filter(|s| s.tx_port == pi).map(|s| usize::from(s.index)).collect();
            let spec = &self.ports[pi];
            if mine.is_empty() {
                if spec.tx_rate.is_some() {
                    return Err(format!("{f}.tx_rate: port {:?} sends no stream", p.name));
                }
                if spec.tx_cpu.is_some() || spec.tx_nice.is_some() || spec.rate_step.is_some() || spec.tx_queues.is_some() {
                    return Err(format!("{f}: tx_cpu, tx_nice, tx_queues and rate_step need a port that sends, and {:?} sends no stream", p.name));
                }
                continue;
            }
            let rate = spec.tx_rate.as_ref().ok_or_else(|| format!("{f}.tx_rate: port {:?} sends streams and needs a rate", p.name))?;
            let shares: Vec<u64> = mine.iter().map(|&s| streams[s].share).collect();
            let total: u64 = shares.iter().sum();
            let mean = |x: &dyn Fn(&StreamPlan) -> f64| mine.iter().map(|&s| x(&streams[s]) * streams[s].share as f64).sum::<f64>() / total as f64;
            let mean_size = mean(&|s| s.frame_size as f64);
            let mean_wire_frames = mean(&|s| s.wire_frame_sizes().len() as f64);
            let mean_wire_bytes = mean(&|s| s.wire_frame_sizes().iter().sum::<usize>() as f64);
            let rate_fps = rate.to_fps(&format!("{f}.tx_rate"), mean_wire_bytes, mean_wire_frames)?;
            let schedule = Schedule::new(&shares).map_err(|e| format!("{f}: {e}"))?;
            let (frames, pace) = match (self.duration_s, self.frame_count, &spec.rate_step) {
                (Some(d), _, None) => ((d * rate_fps).round().max(1.0) as u64, Pace::constant(rate_fps)),
                (Some(d), _, Some(st)) => {
                    if !(st.after_s.is_finite() && st.after_s > 0.0 && st.after_s < d) {
                        return Err(format!("{f}.rate_step.after_s: must be inside the traffic (0, {d}) s, got {}", st.after_s));
                    }
                    if !(st.fps.is_finite() && st.fps > 0.0 && st.fps <= MAX_RATE_FPS) {
                        return Err(format!("{f}.rate_step.fps: must be in (0, {MAX_RATE_FPS}] frames/s, got {}", st.fps));
                    }
                    let at = (st.after_s * rate_fps).round().max(1.0) as u64;
                    (at + ((d - st.after_s) * st.fps).round().max(1.0) as u64, Pace::stepped(rate_fps, at, st.fps))
                }
                (_, Some(_), Some(_)) => return Err(format!("{f}.rate_step: needs duration_s, not frame_count")),
                (_, Some(n), None) => (n, Pace::constant(rate_fps)),
                _ => unreachable!("checked above"),
            };
            if frames > MAX_FRAMES_PER_PORT {
                return Err(format!("{f}: {frames} frames at {rate_fps:.0} frames/s is more than the {MAX_FRAMES_PER_PORT} a port may send in one trial"));
            }
            if self.duration_s.is_none() && frames as f64 / rate_fps > MAX_DURATION_S {
                return Err(format!("{f}: {frames} frames at {rate_fps:.0} frames/s would take longer than {MAX_DURATION_S} s"));
            }
            for (k, &si) in mine.iter().enumerate() {
                streams[si].frames = schedule.frames_of(k, frames);
            }
            if let Some(n) = spec.tx_nice {
                if !(-20..=19).contains(&n) {
                    return Err(format!("{f}.tx_nice: must be -20..=19, got {n}"));
                }
            }
            let cpus = sender_cpus(&f, spec)?;
            p.tx = Some(TxPlan { rate_fps, pace, mean_frame_size: mean_size, mean_wire_frames, mean_wire_bytes, frames, streams: mine, schedule, cpus, nice: spec.tx_nice });
        }
        for (pi, p) in ports.iter().enumerate() {
            let f = format!("ports[{pi}]");
            if matches!(p.backend, Backend::AfXdp | Backend::XdpLive) {
                let name = if p.backend == Backend::AfXdp { "af_xdp" } else { "xdp_live" };
                if self.tx_stamp_check {
                    return Err(format!("{f}.backend: tx_stamp_check needs the af_packet backend ({name} has no kernel transmit stamps)"));
                }
                if p.max_frame_size > crate::xsk::MAX_FRAME + FCS_LEN {
                    return Err(format!("{f}.backend: {name} carries frames of at most {} bytes, this port has {}", crate::xsk::MAX_FRAME + FCS_LEN, p.max_frame_size));
                }
            }
            if let Some(t) = p.tx.as_ref().filter(|t| t.queues() > 1) {
                if matches!(p.backend, Backend::AfPacket | Backend::XdpLive) {
                    return Err(format!(
                        "{f}.tx_queues: {} senders need the af_xdp backend, or auto (which sends with one where it takes af_packet): only an AF_XDP socket is bound to a transmit queue",
                        t.queues()
                    ));
                }
            }
            if let (Backend::XdpLive, Some(t)) = (p.backend, &p.tx) {
                if t.streams.len() != 1 {
                    return Err(format!("{f}.backend: xdp_live sends one stream a port, this port sends {}", t.streams.len()));
                }
                let s = &streams[t.streams[0]];
                if s.protocol != Protocol::Udp || !s.fragments().1.is_empty() {
                    return Err(format!("{f}.backend: xdp_live sends UDP frames whole (no ICMP Echo, no fragmenting at the source)"));
                }
                if t.pace.step.is_some() {
                    return Err(format!("{f}.backend: xdp_live sends at one constant rate (no rate_step)"));
                }
            }
            if p.tx.is_some() && p.next_hop_mac.is_none() {
                if p.sends_ipv4 && (p.ipv4.is_none() || p.gateway_ipv4.is_none()) {
                    return Err(format!("{f}: sends IPv4 and needs ipv4 and gateway_ipv4 to resolve its next hop, or next_hop_mac"));
                }
                if p.sends_ipv6 && (p.ipv6.is_none() || p.gateway_ipv6.is_none()) {
                    return Err(format!("{f}: sends IPv6 and needs ipv6 and gateway_ipv6 to resolve its next hop, or next_hop_mac"));
                }
            }
        }
        Ok(Plan {
            ports,
            streams,
            drain_s: self.drain_s,
            learning: self.learning.clone(),
            rx_cpu: self.rx_cpu,
            rx_priority: self.rx_priority,
            export_histograms: self.export_histograms,
            tx_stamp_check: self.tx_stamp_check,
            tester_limited_shortfall: self.tester_limited_shortfall,
            tester_limited_backlog_frames: self.tester_limited_backlog_frames,
            slip_after_frames: (self.after_stall == AfterStall::Slip).then(|| (self.tester_limited_backlog_frames / 2).max(1)),
            tester_limited_slip_ratio: self.tester_limited_slip_ratio,
            allow_root_netns: self.allow_root_netns,
        })
    }
}

/// The CPU of each of a sending port's senders (`tx_queues`, `tx_cpu`).
fn sender_cpus(f: &str, spec: &PortSpec) -> Result<Vec<Option<usize>>, String> {
    let queues = spec.tx_queues.unwrap_or(1);
    if !(1..=MAX_TX_QUEUES).contains(&queues) {
        return Err(format!("{f}.tx_queues: must be 1..={MAX_TX_QUEUES}, got {queues}"));
    }
    match &spec.tx_cpu {
        None => Ok(vec![None; queues as usize]),
        Some(CpuChoice::One(c)) => Ok(vec![Some(*c); queues as usize]),
        Some(CpuChoice::Each(list)) if list.len() == queues as usize => Ok(list.iter().map(|&c| Some(c)).collect()),
        Some(CpuChoice::Each(list)) => Err(format!("{f}.tx_cpu: {} CPUs for {queues} sender(s) (tx_queues); give one CPU, or one a sender", list.len())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(json: serde_json::Value) -> Result<Plan, String> {
        TrialSpec::from_json(&json.to_string())?.validate()
    }

    fn base() -> serde_json::Value {
        serde_json::json!({
            "spec_version": 1,
            "duration_s": 2.0,
            "ports": [
                {"name": "a", "interface": "t1", "netns": "ns1", "ipv4": "198.18.0.2/24", "ipv6": "2001:2::2/64",
                 "gateway_ipv4": "198.18.0.1", "gateway_ipv6": "2001:2::1", "tx_rate": {"fps": 1000}},
                {"name": "b", "interface": "t2", "netns": "ns2", "ipv4": "198.19.0.2/24", "ipv6": "2001:2:0:1::2/64"}
            ],
            "streams": [
                {"tx_port": "a", "rx_port": "b", "ip_version": 4, "frame_size": 64, "share": 90},
                {"tx_port": "a", "rx_port": "b", "ip_version": 6, "frame_size": 84, "share": 10}
            ]
        })
    }

    #[test]
    fn valid_spec_plans_counts() {
        let p = spec(base()).unwrap();
        let tx = p.ports[0].tx.as_ref().unwrap();
        assert_eq!(tx.frames, 2000);
        assert_eq!(p.streams[0].frames, 1800);
        assert_eq!(p.streams[1].frames, 200);
        assert_eq!(p.streams[0].dst_ip, "198.19.0.2".parse::<IpAddr>().unwrap());
        assert_eq!(p.streams[1].src_port, DEFAULT_SRC_PORT);
    }

    #[test]
    fn the_receive_priority_is_a_fifo_priority() {
        let mut s = base();
        assert_eq!(spec(s.clone()).unwrap().rx_priority, None, "an ordinary thread by default");
        s["rx_priority"] = serde_json::json!(1);
        assert_eq!(spec(s.clone()).unwrap().rx_priority, Some(1));
        s["rx_priority"] = serde_json::json!(99);
        assert_eq!(spec(s.clone()).unwrap().rx_priority, Some(99));
        s["rx_priority"] = serde_json::json!(0);
        assert!(spec(s.clone()).unwrap_err().starts_with("rx_priority: must be a SCHED_FIFO priority"));
        s["rx_priority"] = serde_json::json!(100);
        assert!(spec(s.clone()).unwrap_err().starts_with("rx_priority"));
        s["rx_priority"] = serde_json::json!(-1);
        assert!(spec(s).is_err(), "not a u8");
    }

    #[test]
    fn a_slip_comes_at_half_the_backlog_limit() {
        let mut s = base();
        assert_eq!(spec(s.clone()).unwrap().slip_after_frames, None, "catch_up by default");
        s["after_stall"] = serde_json::json!("slip");
        s["tester_limited_backlog_frames"] = serde_json::json!(256);
        let p = spec(s.clone()).unwrap();
        assert_eq!((p.slip_after_frames, p.tester_limited_slip_ratio), (Some(128), 0.005));
        s["tester_limited_backlog_frames"] = serde_json::json!(1);
        assert_eq!(spec(s.clone()).unwrap().slip_after_frames, Some(1));
        s["tester_limited_slip_ratio"] = serde_json::json!(1.0);
        assert!(spec(s.clone()).unwrap_err().starts_with("tester_limited_slip_ratio"));
        s["after_stall"] = serde_json::json!("skip");
        assert!(spec(s).is_err());
    }

    #[test]
    fn rate_step_plans_both_phases() {
        let mut s = base();
        s["ports"][0]["rate_step"] = serde_json::json!({"after_s": 1.0, "fps": 500});
        let p = spec(s.clone()).unwrap();
        let tx = p.ports[0].tx.as_ref().unwrap();
        let per_s = tx.rate_fps as u64;
        assert_eq!(tx.frames, per_s + 500);
        assert_eq!(tx.pace.step.unwrap().at_frame, per_s);
        s["ports"][0]["rate_step"] = serde_json::json!({"after_s": 2.0, "fps": 500});
        assert!(spec(s.clone()).unwrap_err().starts_with("ports[0].rate_step.after_s"));
        s["ports"][0]["rate_step"] = serde_json::json!({"after_s": 1.0, "fps": 0});
        assert!(spec(s).unwrap_err().starts_with("ports[0].rate_step.fps"));
    }

    #[test]
    fn rates_in_every_unit() {
        let mut s = base();
        s["ports"][0]["tx_rate"] = serde_json::json!({"percent_of_line": 10, "line_rate_bps": 1e9});
        s["streams"] = serde_json::json!([{"tx_port": "a", "rx_port": "b", "ip_version": 4, "frame_size": 64}]);
        assert!((spec(s.clone()).unwrap().ports[0].tx.as_ref().unwrap().rate_fps - 148_809.52).abs() < 0.01);
        s["ports"][0]["tx_rate"] = serde_json::json!({"l2_bps": 512000});
        assert!((spec(s.clone()).unwrap().ports[0].tx.as_ref().unwrap().rate_fps - 1000.0).abs() < 1e-9);
        s["ports"][0]["tx_rate"] = serde_json::json!({"l1_bps": 672000});
        assert!((spec(s.clone()).unwrap().ports[0].tx.as_ref().unwrap().rate_fps - 1000.0).abs() < 1e-9);
        s["ports"][0]["tx_rate"] = serde_json::json!({"fps": 1000, "l1_bps": 5});
        assert!(spec(s.clone()).unwrap_err().contains("exactly one"));
        s["ports"][0]["tx_rate"] = serde_json::json!({"percent_of_line": 120, "line_rate_bps": 1e9});
        assert!(spec(s).unwrap_err().contains("above line rate"));
    }

    #[test]
    fn several_senders_get_one_cpu_each_and_need_af_xdp() {
        let with = |queues: serde_json::Value, cpu: serde_json::Value, backend: &str| {
            let mut s = base();
            s["ports"][0]["tx_queues"] = queues;
            s["ports"][0]["tx_cpu"] = cpu;
            s["ports"][0]["backend"] = serde_json::json!(backend);
            spec(s)
        };
        let p = with(serde_json::json!(2), serde_json::json!([0, 1]), "af_xdp").unwrap();
        assert_eq!(p.ports[0].tx.as_ref().unwrap().cpus, vec![Some(0), Some(1)]);
        let p = with(serde_json::json!(3), serde_json::json!(1), "auto").unwrap();
        assert_eq!(p.ports[0].tx.as_ref().unwrap().cpus, vec![Some(1); 3], "one CPU for all");
        let p = with(serde_json::Value::Null, serde_json::Value::Null, "auto").unwrap();
        assert_eq!(p.ports[0].tx.as_ref().unwrap().queues(), 1);
        let e = with(serde_json::json!(2), serde_json::json!([0]), "af_xdp").unwrap_err();
        assert!(e.starts_with("ports[0].tx_cpu: 1 CPUs for 2 sender(s)"), "{e}");
        let e = with(serde_json::json!(0), serde_json::Value::Null, "af_xdp").unwrap_err();
        assert!(e.starts_with("ports[0].tx_queues: must be 1..=64"), "{e}");
        for backend in ["af_packet", "xdp_live"] {
            let e = with(serde_json::json!(2), serde_json::Value::Null, backend).unwrap_err();
            assert!(e.starts_with("ports[0].tx_queues: 2 senders need the af_xdp backend"), "{e}");
        }
        let mut s = base();
        s["ports"][1]["tx_queues"] = serde_json::json!(2);
        assert!(spec(s).unwrap_err().contains("need a port that sends"));
    }

    #[test]
    fn errors_name_the_field() {
        let mut s = base();
        s["streams"][1]["frame_size"] = serde_json::json!(80);
        let e = spec(s).unwrap_err();
        assert!(e.starts_with("streams[1].frame_size"), "{e}");
        assert!(e.contains("84"), "{e}");

        let mut s = base();
        s["streams"][0]["rx_port"] = serde_json::json!("zz");
        assert!(spec(s).unwrap_err().starts_with("streams[0].rx_port: no port named"));

        let mut s = base();
        s["ports"][0]["gateway_ipv6"] = serde_json::Value::Null;
        assert!(spec(s).unwrap_err().contains("gateway_ipv6"));

        let mut s = base();
        s["bogus"] = serde_json::json!(1);
        assert!(spec(s).unwrap_err().contains("unknown field"));

        let mut s = base();
        s["frame_count"] = serde_json::json!(10);
        assert!(spec(s).unwrap_err().contains("exactly one of duration_s"));

        assert!(TrialSpec::from_json("{not json").unwrap_err().starts_with("trial spec:"));
    }

    #[test]
    fn af_xdp_is_refused_where_it_cannot_serve() {
        let mut s = base();
        assert_eq!(spec(s.clone()).unwrap().ports[0].backend, Backend::Auto, "auto unless asked");
        s["ports"][0]["backend"] = serde_json::json!("af_xdp");
        assert_eq!(spec(s.clone()).unwrap().ports[0].backend, Backend::AfXdp);
        s["tx_stamp_check"] = serde_json::json!(true);
        assert!(spec(s.clone()).unwrap_err().starts_with("ports[0].backend: tx_stamp_check needs the af_packet backend"));
        let mut s = base();
        s["ports"][0]["backend"] = serde_json::json!("af_xdp");
        s["streams"][0]["frame_size"] = serde_json::json!(9000);
        s["streams"][1]["frame_size"] = serde_json::json!(9000);
        let e = spec(s).unwrap_err();
        assert!(e.starts_with("ports[0].backend: af_xdp carries frames of at most 1796 bytes"), "{e}");
        let mut s = base();
        s["ports"][0]["backend"] = serde_json::json!("xdp");
        assert!(spec(s).unwrap_err().contains("unknown variant"));
    }

    #[test]
    fn xdp_live_takes_one_whole_udp_stream_at_one_rate() {
        let live = |mut s: serde_json::Value| {
            s["ports"][0]["backend"] = serde_json::json!("xdp_live");
            spec(s)
        };
        let e = live(base()).unwrap_err();
        assert_eq!(e, "ports[0].backend: xdp_live sends one stream a port, this port sends 2");
        let mut one = base();
        one["streams"].as_array_mut().unwrap().pop();
        assert_eq!(live(one.clone()).unwrap().ports[0].backend, Backend::XdpLive);
        let mut s = one.clone();
        s["streams"][0]["protocol"] = serde_json::json!("icmp_echo");
        s["streams"][0]["rx_port"] = serde_json::json!("a");
        s["streams"][0]["dst_ip"] = serde_json::json!("198.18.0.1");
        assert!(live(s).unwrap_err().starts_with("ports[0].backend: xdp_live sends UDP frames whole"));
        let mut s = one.clone();
        s["streams"][0]["frame_size"] = serde_json::json!(1518);
        s["streams"][0]["fragment_mtu"] = serde_json::json!(576);
        assert!(live(s).unwrap_err().starts_with("ports[0].backend: xdp_live sends UDP frames whole"));
        let mut s = one.clone();
        s["ports"][0]["rate_step"] = serde_json::json!({"after_s": 1.0, "fps": 500});
        assert_eq!(live(s).unwrap_err(), "ports[0].backend: xdp_live sends at one constant rate (no rate_step)");
        let mut s = one;
        s["tx_stamp_check"] = serde_json::json!(true);
        assert!(live(s).unwrap_err().contains("xdp_live has no kernel transmit stamps"));
    }

    #[test]
    fn refuses_non_benchmarking_addresses_by_default() {
        let mut s = base();
        s["streams"][0]["dst_ip"] = serde_json::json!("192.168.1.1");
        assert!(spec(s.clone()).unwrap_err().contains("benchmarking blocks"));
        s["allow_non_benchmarking_addresses"] = serde_json::json!(true);
        assert!(spec(s).is_ok());
        assert!(is_benchmarking(&"198.19.255.255".parse().unwrap()));
        assert!(!is_benchmarking(&"198.20.0.1".parse().unwrap()));
        assert!(is_benchmarking(&"2001:2:0:ffff::1".parse().unwrap()));
        assert!(!is_benchmarking(&"2001:2:1::1".parse().unwrap()));
    }

    #[test]
    fn fragmented_streams_count_every_wire_frame_in_bit_rates() {
        let mut s = base();
        s["ports"][0]["tx_rate"] = serde_json::json!({"l1_bps": 1e6});
        s["streams"] = serde_json::json!([{"tx_port": "a", "rx_port": "b", "ip_version": 4, "frame_size": 1518, "fragment_mtu": 500}]);
        let p = spec(s.clone()).unwrap();
        // 1480 data bytes in 480 + 480 + 480 + 40: frames of 518, 518, 518, 78.
        assert_eq!(p.streams[0].wire_frame_sizes(), vec![518, 518, 518, 78]);
        let tx = p.ports[0].tx.as_ref().unwrap();
        assert!((tx.rate_fps - 1e6 / (8.0 * (1632.0 + 80.0))).abs() < 1e-9);
        assert_eq!(p.ports[0].max_frame_size, 518);
        assert_eq!(p.ports[1].max_frame_size, 0, "IPv4 may be fragmented again on the way");
        s["streams"][0]["fragment_mtu"] = serde_json::json!(67);
        assert!(spec(s.clone()).unwrap_err().starts_with("streams[0].fragment_mtu: must be 68..="));
        s["streams"][0]["ip_version"] = serde_json::json!(6);
        s["streams"][0]["fragment_mtu"] = serde_json::json!(1000);
        assert!(spec(s.clone()).unwrap_err().contains("1280"));
        s["streams"][0]["fragment_mtu"] = serde_json::json!(1280);
        s["streams"][0]["ipv6_ext_headers"] = serde_json::json!([{"kind": "hop_by_hop"}]);
        assert!(spec(s).unwrap_err().contains("not fragmented at the source"));
    }

    #[test]
    fn minimum_frames() {
        assert_eq!(min_frame_size(4), 64);
        assert_eq!(min_frame_size(6), 84);
    }
}

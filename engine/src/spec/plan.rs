//! The validated trial: what the spec's types become once checked (`validate`).

use super::fragment::fragment_ranges;
use super::types::{Backend, LearningSpec, Protocol};
#[cfg(test)]
use super::types::{DEFAULT_DST_PORT, DEFAULT_SRC_PORT};
use crate::mix::Schedule;
use crate::pace::Pace;
use crate::wire::ext::ExtHeader;
use crate::wire::{ethernet::Mac, ipv4, ipv6, signature, udp, FCS_LEN};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

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
    /// The spec's `tx_run_frames`: the schedule is in runs.
    pub run_frames: Option<u64>,
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
    /// Fields that change from frame to frame; `src_ip`, `dst_ip`,
    /// `src_port` and `dst_port` then hold the walk's first values.
    pub walk: Option<std::sync::Arc<crate::walk::Walk>>,
    /// The IP version the frames arrive as (a translator between: the
    /// spec's `rx_ip_version`); `ip_version()` when nothing translates.
    pub rx_ip_version: u8,
    /// Record each arriving frame's 4-tuple (`tuples.rs`).
    pub learn_tuples: bool,
}

impl StreamPlan {
    pub fn ip_version(&self) -> u8 {
        if self.src_ip.is_ipv4() { 4 } else { 6 }
    }

    /// Whether a translator changes the frames' IP version on the way.
    pub fn translated(&self) -> bool {
        self.rx_ip_version != self.ip_version()
    }

    /// Size [bytes incl. FCS] of a whole frame as it arrives: a translator
    /// swaps a 40-byte IPv6 header for a 20-byte IPv4 one, or back.
    pub fn rx_frame_size(&self) -> usize {
        match (self.ip_version(), self.rx_ip_version) {
            (6, 4) => self.frame_size - (ipv6::HEADER_LEN - ipv4::HEADER_LEN),
            (4, 6) => self.frame_size + (ipv6::HEADER_LEN - ipv4::HEADER_LEN),
            _ => self.frame_size,
        }
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
        let ranges = fragment_ranges(v, self.frame_size - FCS_LEN - eth - ip, mtu);
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
            walk: None,
            rx_ip_version: if src.contains(':') { 6 } else { 4 },
            learn_tuples: false,
        }
    }
}

/// A validated trial.
#[derive(Debug, Clone)]
pub struct Plan {
    pub ports: Vec<PortPlan>,
    pub streams: Vec<StreamPlan>,
    pub drain_s: f64,
    pub drain_until_received: bool,
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

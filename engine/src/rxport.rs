//! A receiving port as the receive loop and the responder see it: its
//! identity (MAC, addresses, gateways, the socket replies leave by), what
//! it counted besides test frames, and the next hops learned.

use crate::ring::RingStats;
use crate::spec::Plan;
use crate::wire::ethernet::Mac;
use serde::Serialize;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::os::unix::io::RawFd;
use std::sync::Mutex;

/// What one port's receiver counted besides per-stream test frames.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct PortRxCounters {
    /// Frames with a valid signature for a stream received on this port.
    pub test_frames: u64,
    /// ARP, Neighbor Discovery, MLD and router discovery frames.
    pub control_frames: u64,
    /// Every other frame, including those counted in the next two fields.
    pub foreign_frames: u64,
    /// Foreign frames carrying the v6bench magic whose signature did not
    /// fit this trial (unknown stream, wrong port, sequence out of range,
    /// or sent before the trial).
    pub bad_signature_frames: u64,
    /// Test frames of a translated stream whose UDP checksum was wrong
    /// (the translator's error): not counted as received.
    pub bad_checksum_frames: u64,
    /// Test frames of a translated stream counted without their checksum
    /// checked: the packet ring copied less than the whole datagram
    /// (`ring::SNAPLEN`; AF_XDP receives whole frames).
    pub checksum_unchecked_frames: u64,
    /// ICMPv4/ICMPv6 error messages (unreachable, time exceeded, …).
    pub icmp_error_frames: u64,
    /// ARP replies and Neighbor Advertisements the engine sent.
    pub replies_sent: u64,
    /// IPv4 and IPv6 fragments of UDP datagrams (`reassembly`); not in
    /// `test_frames` or `foreign_frames`: a whole test frame counts once
    /// in `test_frames`, a whole other datagram once in `foreign_frames`.
    pub fragment_frames: u64,
    /// Fragments that repeated or overlapped one already held: ignored.
    pub duplicate_fragments: u64,
    /// ICMP Echo Requests to the port's own address (answered, below).
    pub echo_requests: u64,
    /// Echo Replies the engine sent to them (the far end of an
    /// `icmp_echo` stream through the DUT, or anyone pinging a port).
    pub echo_replies_sent: u64,
    /// Longest a request waited in the engine before its reply left
    /// (receive ring block and thread wake-up) [ns]; taken out of the
    /// round trip of v6bench requests (below).
    pub echo_hold_max_ns: u64,
    /// Fragmented datagrams given up incomplete, of a stream or of none
    /// known (their first fragment missing).
    pub incomplete_datagrams: u64,
    /// ARP requests, Neighbor Solicitations and Echo Requests from an
    /// address outside the trial's (`LabNets`): not answered. The echo
    /// requests among them are also in `foreign_frames`.
    pub requests_refused: u64,
}

/// The trial's addresses: every port's network (its address and prefix)
/// and every stream's source and destination. The engine answers ARP,
/// Neighbor Solicitations and Echo Requests only from these, so a port
/// never answers a host that is not part of the lab. A Neighbor
/// Solicitation may also come from a link-local address (fe80::/10: a
/// router resolving a port), which never leaves the port's link.
#[derive(Debug, Clone, Default)]
pub struct LabNets {
    nets: Vec<(IpAddr, u8)>,
}

impl LabNets {
    pub fn of(plan: &Plan) -> LabNets {
        let mut nets = Vec::new();
        for p in &plan.ports {
            nets.extend(p.ipv4.map(|a| (IpAddr::V4(a.addr), a.prefix_len)));
            nets.extend(p.ipv6.map(|a| (IpAddr::V6(a.addr), a.prefix_len)));
        }
        for s in &plan.streams {
            for a in [s.src_ip, s.dst_ip] {
                nets.push((a, if a.is_ipv4() { 32 } else { 128 }));
            }
        }
        LabNets { nets }
    }

    /// The given networks (tests).
    #[cfg(test)]
    pub fn new(nets: Vec<(IpAddr, u8)>) -> LabNets {
        LabNets { nets }
    }

    /// `a` lies in one of the trial's networks.
    pub fn contains(&self, a: IpAddr) -> bool {
        self.nets.iter().any(|&(net, len)| match (net, a) {
            (IpAddr::V4(n), IpAddr::V4(a)) => prefix_eq(u128::from(u32::from(n)) << 96, u128::from(u32::from(a)) << 96, len),
            (IpAddr::V6(n), IpAddr::V6(a)) => prefix_eq(u128::from(n), u128::from(a), len),
            _ => false,
        })
    }

    /// A Neighbor Solicitation's source the port may answer: a lab address, or link-local.
    pub fn may_solicit(&self, a: Ipv6Addr) -> bool {
        a.is_unicast_link_local() || self.contains(IpAddr::V6(a))
    }
}

fn prefix_eq(a: u128, b: u128, len: u8) -> bool {
    len == 0 || (a ^ b) >> (128 - u32::from(len.min(128))) == 0
}

/// Next-hop MACs learned per port (IPv4, IPv6).
pub type Learned = Mutex<Vec<(Option<Mac>, Option<Mac>)>>;

/// A receiving port's identity and counters (its ring is kept apart so
/// that frame handling can be tested without sockets).
pub struct RxPort {
    /// Socket for ARP/ND replies; negative = do not reply (tests).
    pub tx_fd: RawFd,
    pub mac: Mac,
    pub ipv4: Option<Ipv4Addr>,
    pub ipv6: Option<Ipv6Addr>,
    pub gateway_ipv4: Option<Ipv4Addr>,
    pub gateway_ipv6: Option<Ipv6Addr>,
    /// Whom the port answers.
    pub lab: LabNets,
    pub counters: PortRxCounters,
    pub ring_stats: RingStats,
}

//! A receiving port as the receive loop and the responder see it: its
//! identity (MAC, addresses, gateways, the socket replies leave by), what
//! it counted besides test frames, and the next hops learned.

use crate::ring::RingStats;
use crate::wire::ethernet::Mac;
use serde::Serialize;
use std::net::{Ipv4Addr, Ipv6Addr};
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
    pub counters: PortRxCounters,
    pub ring_stats: RingStats,
}

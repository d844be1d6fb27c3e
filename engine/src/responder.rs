//! The engine's answers on a port, as a host there would give them: ARP
//! replies and Neighbor Advertisements for the port's own addresses
//! (learning the gateways' MACs on the way), and Echo Replies to Echo
//! Requests to them. The receive loop (`rx.rs`) hands it those frames.
//!
//! Only the lab is answered: a request whose sender is outside the
//! trial's addresses (`LabNets`) is counted (`requests_refused`) and
//! left unanswered.

use crate::ring::RxFrame;
use crate::rxport::{Learned, RxPort};
use crate::sock;
use crate::wire::ethernet::Mac;
use crate::wire::{arp, echo, icmpv6, ipv6, signature};

/// An ARP frame on port `pi` (`p`): learns its gateway's MAC, answers a
/// request for its own address.
pub fn arp(p: &mut RxPort, pi: usize, l3: &[u8], learned: &Learned) -> bool {
    let Some(a) = arp::parse(l3) else { return false };
    p.counters.control_frames += 1;
    if p.gateway_ipv4 == Some(a.sender_ip) {
        learned.lock().expect("learned-MAC lock")[pi].0 = Some(a.sender_mac);
    }
    if a.op == arp::OP_REQUEST && p.ipv4 == Some(a.target_ip) {
        if !p.lab.contains(a.sender_ip.into()) {
            p.counters.requests_refused += 1;
            return true;
        }
        let reply = arp::Arp { op: arp::OP_REPLY, sender_mac: p.mac, sender_ip: a.target_ip, target_mac: a.sender_mac, target_ip: a.sender_ip };
        if p.tx_fd >= 0 && sock::send(p.tx_fd, &arp::frame(a.sender_mac, &reply)).is_ok() {
            p.counters.replies_sent += 1;
        }
    }
    true
}

/// A Neighbor Solicitation or Advertisement on port `pi` (`p`): learns
/// its gateway's MAC, answers a solicitation for its own address.
pub fn nd(p: &mut RxPort, pi: usize, h: &ipv6::Header, msg: &[u8], eth_src: Mac, learned: &Learned) -> bool {
    let Some(nd) = icmpv6::parse_nd(msg) else { return false };
    p.counters.control_frames += 1;
    if h.hop_limit != icmpv6::ND_HOP_LIMIT {
        return true; // RFC 4861 §7.1: ignore
    }
    let from_gateway = p.gateway_ipv6.is_some() && (p.gateway_ipv6 == Some(nd.target) && nd.icmp_type == icmpv6::TYPE_NA || p.gateway_ipv6 == Some(h.src) && nd.icmp_type == icmpv6::TYPE_NS);
    if from_gateway {
        learned.lock().expect("learned-MAC lock")[pi].1 = Some(nd.link_addr.unwrap_or(eth_src));
    }
    if nd.icmp_type == icmpv6::TYPE_NS && Some(nd.target) == p.ipv6 && !h.src.is_unspecified() {
        if !p.lab.may_solicit(h.src) {
            p.counters.requests_refused += 1;
            return true;
        }
        let to = nd.link_addr.unwrap_or(eth_src);
        let na = icmpv6::Nd { icmp_type: icmpv6::TYPE_NA, target: nd.target, link_addr: Some(p.mac), flags: 0x40 | 0x20 };
        if p.tx_fd >= 0 && sock::send(p.tx_fd, &icmpv6::frame(to, p.mac, nd.target, h.src, &na)).is_ok() {
            p.counters.replies_sent += 1;
        }
    }
    true
}

/// An Echo Request to the port's own address from `from` (at
/// upper-layer offset `l4` of the frame): answered with an Echo Reply
/// carrying its data back if `from` is a lab address; otherwise refused
/// and foreign (false). A request longer than the ring copied is answered only if it
/// is a v6bench test frame, whose padding is known (`signature::pad`):
/// the data are rebuilt, and the copied part must match them.
///
/// A v6bench request's reply carries its transmit timestamp moved later
/// by the time the request waited here (from the kernel's receive
/// timestamp to the reply's hand-over), so the sender's round trip is
/// the network's both ways, without the responder's own delay (up to
/// the ring's block timeout, `ring.rs`).
pub fn echo_request(p: &mut RxPort, f: &RxFrame<'_>, l4: usize, from: std::net::IpAddr) -> bool {
    if !p.lab.contains(from) {
        p.counters.requests_refused += 1;
        return false;
    }
    p.counters.echo_requests += 1;
    let mut reply = f.data.to_vec();
    if f.data.len() < f.len {
        let sig_end = l4 + echo::HEADER_LEN + signature::LEN;
        if f.data.len() < sig_end || signature::parse(&f.data[l4 + echo::HEADER_LEN..]).is_none() {
            return true;
        }
        reply.resize(f.len, 0);
        signature::pad(&mut reply[sig_end..]);
        if reply[..f.data.len()] != *f.data {
            return true;
        }
    }
    let sig_at = l4 + echo::HEADER_LEN;
    if let Some(mut sig) = reply.get(sig_at..).and_then(signature::parse) {
        let hold = crate::clock::realtime_ns().saturating_sub(f.rx_ns);
        sig.tx_ns = sig.tx_ns.saturating_add(hold);
        signature::emit(&mut reply[sig_at..sig_at + signature::LEN], sig);
        p.counters.echo_hold_max_ns = p.counters.echo_hold_max_ns.max(hold);
    }
    echo::reply_in_place(&mut reply, l4, p.mac);
    if p.tx_fd >= 0 && sock::send(p.tx_fd, &reply).is_ok() {
        p.counters.echo_replies_sent += 1;
    }
    true
}

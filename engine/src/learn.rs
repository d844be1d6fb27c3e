//! The learning phase (RFC 2544 §23): resolve each sending port's next hop
//! by ARP (RFC 826) and Neighbor Discovery (RFC 4861 §7.2), and let the DUT
//! learn every tester port, before any test frame is sent.
//!
//! Requests go out every `RETRY_MS` until every needed next hop is known or
//! the timeout passes. The replies are read by the receive thread, which
//! records them in `Shared::learned`. Because each request carries the
//! port's own address and MAC, the DUT also creates a neighbour entry for
//! the port (it answers later probes through the receive thread), so the
//! first test frames toward a receive-only port are not held for
//! resolution.

use crate::rx::Shared;
use crate::sock;
use crate::spec::PortPlan;
use crate::wire::ethernet::Mac;
use crate::wire::{arp, icmpv6, ipv6};
use std::os::unix::io::RawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

const RETRY_MS: u64 = 200;

/// The resolved next hops: (IPv4, IPv6) MAC per port; `None` where not needed.
pub type NextHops = Vec<(Option<Mac>, Option<Mac>)>;

fn requests(p: &PortPlan, mac: Mac) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    if let (Some(me), Some(gw)) = (p.ipv4, p.gateway_ipv4) {
        let a = arp::Arp { op: arp::OP_REQUEST, sender_mac: mac, sender_ip: me.addr, target_mac: Mac::default(), target_ip: gw };
        out.push(arp::frame(Mac::BROADCAST, &a));
    }
    if let (Some(me), Some(gw)) = (p.ipv6, p.gateway_ipv6) {
        let group = ipv6::solicited_node(&gw);
        let ns = icmpv6::Nd { icmp_type: icmpv6::TYPE_NS, target: gw, link_addr: Some(mac), flags: 0 };
        out.push(icmpv6::frame(Mac::ipv6_multicast(&group), mac, me.addr, group, &ns));
    }
    out
}

fn missing(ports: &[PortPlan], learned: &NextHops) -> Vec<String> {
    let mut out = Vec::new();
    for (p, l) in ports.iter().zip(learned) {
        if p.tx.is_none() || p.next_hop_mac.is_some() {
            continue;
        }
        if p.sends_ipv4 && l.0.is_none() {
            out.push(format!("no ARP reply from {} on port {:?}", p.gateway_ipv4.map(|g| g.to_string()).unwrap_or_default(), p.name));
        }
        if p.sends_ipv6 && l.1.is_none() {
            out.push(format!("no Neighbor Advertisement from {} on port {:?}", p.gateway_ipv6.map(|g| g.to_string()).unwrap_or_default(), p.name));
        }
    }
    out
}

/// Resolves the next hops of `ports` (with their sockets and MACs).
/// A next hop given in the spec is used as is and not resolved. Requests
/// go out at least once from every port that has an address and gateway.
/// Returns early with an error when `stop` is set (a signal).
pub fn resolve(ports: &[PortPlan], fds: &[RawFd], macs: &[Mac], shared: &Shared, timeout: Duration, stop: &AtomicBool) -> Result<NextHops, String> {
    let deadline = Instant::now() + timeout;
    let reqs: Vec<Vec<Vec<u8>>> = ports.iter().zip(macs).map(|(p, &m)| requests(p, m)).collect();
    loop {
        for (fd, rs) in fds.iter().zip(&reqs) {
            for r in rs {
                // A failed request is retried on the next round.
                let _ = sock::send(*fd, r);
            }
        }
        let round_end = Instant::now() + Duration::from_millis(RETRY_MS);
        loop {
            let learned = shared.learned.lock().expect("learned-MAC lock").clone();
            let miss = missing(ports, &learned);
            if miss.is_empty() {
                return Ok(ports.iter().zip(learned).map(|(p, l)| p.next_hop_mac.map_or(l, |m| (Some(m), Some(m)))).collect());
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(format!("learning failed after {:.1} s: {}", timeout.as_secs_f64(), miss.join("; ")));
            }
            if stop.load(Ordering::Relaxed) {
                return Err("interrupted during learning".into());
            }
            if now >= round_end {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

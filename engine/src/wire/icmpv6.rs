//! ICMPv6 (RFC 4443) Neighbor Solicitation and Advertisement (RFC 4861 §4.3,
//! §4.4), and recognition of ICMPv6 error messages.

use super::checksum;
use super::ethernet::{self, Mac};
use super::ipv6;
use std::net::Ipv6Addr;

pub const TYPE_NS: u8 = 135;
pub const TYPE_NA: u8 = 136;
const OPT_SOURCE_LL: u8 = 1;
const OPT_TARGET_LL: u8 = 2;
/// NS/NA body (type .. target) plus one link-layer address option.
const ND_LEN: usize = 24 + 8;
/// Neighbor Discovery messages are sent and accepted with hop limit 255
/// only (RFC 4861 §7.1.1).
pub const ND_HOP_LIMIT: u8 = 255;

/// True for ICMPv6 error messages (types 1..=127, RFC 4443 §2.1).
pub fn is_error(icmp_type: u8) -> bool {
    (1..=127).contains(&icmp_type)
}

/// A Neighbor Solicitation or Advertisement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Nd {
    pub icmp_type: u8,
    pub target: Ipv6Addr,
    /// The source (NS) or target (NA) link-layer address option, if present.
    pub link_addr: Option<Mac>,
    /// NA flags byte (R 0x80, S 0x40, O 0x20); 0 for NS.
    pub flags: u8,
}

/// A whole Ethernet frame carrying an NS or NA with its link-layer option.
pub fn frame(eth_dst: Mac, eth_src: Mac, ip_src: Ipv6Addr, ip_dst: Ipv6Addr, nd: &Nd) -> Vec<u8> {
    let l3 = ethernet::HEADER_LEN;
    let l4 = l3 + ipv6::HEADER_LEN;
    let mut f = vec![0u8; l4 + ND_LEN];
    ethernet::emit(&mut f, eth_dst, eth_src, ethernet::ETHERTYPE_IPV6);
    ipv6::emit(&mut f[l3..], ip_src, ip_dst, ipv6::NH_ICMPV6, ND_LEN, ND_HOP_LIMIT);
    let m = &mut f[l4..];
    m[0] = nd.icmp_type;
    m[4] = nd.flags;
    m[8..24].copy_from_slice(&nd.target.octets());
    m[24] = if nd.icmp_type == TYPE_NS { OPT_SOURCE_LL } else { OPT_TARGET_LL };
    m[25] = 1; // length in units of 8 octets
    m[26..32].copy_from_slice(&nd.link_addr.unwrap_or(eth_src).0);
    let acc = checksum::sum(ipv6::pseudo_header_sum(ip_src, ip_dst, ipv6::NH_ICMPV6, ND_LEN), m);
    let c = checksum::finish(acc);
    m[2..4].copy_from_slice(&c.to_be_bytes());
    f
}

/// Parses an NS or NA message body (the ICMPv6 message); `None` for other
/// types or malformed messages. The checksum is not verified.
pub fn parse_nd(m: &[u8]) -> Option<Nd> {
    if m.len() < 24 || !(m[0] == TYPE_NS || m[0] == TYPE_NA) || m[1] != 0 {
        return None;
    }
    let target = Ipv6Addr::from(<[u8; 16]>::try_from(&m[8..24]).ok()?);
    let mut link_addr = None;
    let mut opts = &m[24..];
    while opts.len() >= 8 {
        let len = usize::from(opts[1]) * 8;
        if len == 0 || len > opts.len() {
            return None; // RFC 4861 §4.6: a zero-length option is invalid
        }
        if (opts[0] == OPT_SOURCE_LL || opts[0] == OPT_TARGET_LL) && len >= 8 {
            link_addr = Some(Mac(opts[2..8].try_into().ok()?));
        }
        opts = &opts[len..];
    }
    Some(Nd { icmp_type: m[0], target, link_addr, flags: if m[0] == TYPE_NA { m[4] } else { 0 } })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ns_round_trip_and_checksum() {
        let src: Ipv6Addr = "2001:2::2".parse().unwrap();
        let target: Ipv6Addr = "2001:2::1".parse().unwrap();
        let dst = ipv6::solicited_node(&target);
        let nd = Nd { icmp_type: TYPE_NS, target, link_addr: None, flags: 0 };
        let f = frame(Mac::ipv6_multicast(&dst), Mac([2, 0, 0, 0, 0, 2]), src, dst, &nd);
        let m = &f[54..];
        let acc = checksum::sum(ipv6::pseudo_header_sum(src, dst, ipv6::NH_ICMPV6, m.len()), m);
        assert_eq!(checksum::finish(acc), 0);
        let p = parse_nd(m).unwrap();
        assert_eq!(p.target, target);
        assert_eq!(p.link_addr, Some(Mac([2, 0, 0, 0, 0, 2])));
        assert!(parse_nd(&m[..23]).is_none());
        let mut bad = m.to_vec();
        bad[25] = 0;
        assert!(parse_nd(&bad).is_none());
    }
}

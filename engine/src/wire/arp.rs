//! ARP for IPv4 over Ethernet (RFC 826).

use super::ethernet::{self, Mac};
use std::net::Ipv4Addr;

pub const PACKET_LEN: usize = 28;
pub const OP_REQUEST: u16 = 1;
pub const OP_REPLY: u16 = 2;
/// Minimum Ethernet frame without FCS; ARP frames are padded to it.
pub const MIN_FRAME_LEN: usize = 60;

/// A parsed ARP packet for Ethernet/IPv4.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arp {
    pub op: u16,
    pub sender_mac: Mac,
    pub sender_ip: Ipv4Addr,
    pub target_mac: Mac,
    pub target_ip: Ipv4Addr,
}

/// A whole Ethernet frame (padded to 60 bytes) carrying `arp`.
pub fn frame(eth_dst: Mac, arp: &Arp) -> Vec<u8> {
    let mut f = vec![0u8; MIN_FRAME_LEN];
    ethernet::emit(&mut f, eth_dst, arp.sender_mac, ethernet::ETHERTYPE_ARP);
    let p = &mut f[ethernet::HEADER_LEN..];
    p[0..2].copy_from_slice(&1u16.to_be_bytes()); // hardware type Ethernet
    p[2..4].copy_from_slice(&ethernet::ETHERTYPE_IPV4.to_be_bytes());
    p[4] = 6;
    p[5] = 4;
    p[6..8].copy_from_slice(&arp.op.to_be_bytes());
    p[8..14].copy_from_slice(&arp.sender_mac.0);
    p[14..18].copy_from_slice(&arp.sender_ip.octets());
    p[18..24].copy_from_slice(&arp.target_mac.0);
    p[24..28].copy_from_slice(&arp.target_ip.octets());
    f
}

/// Parses the ARP payload of a frame; `None` unless Ethernet/IPv4 ARP.
pub fn parse(p: &[u8]) -> Option<Arp> {
    let p = p.get(..PACKET_LEN)?;
    if p[0..2] != [0, 1] || p[2..4] != [0x08, 0x00] || p[4] != 6 || p[5] != 4 {
        return None;
    }
    Some(Arp {
        op: u16::from_be_bytes([p[6], p[7]]),
        sender_mac: Mac(p[8..14].try_into().ok()?),
        sender_ip: Ipv4Addr::new(p[14], p[15], p[16], p[17]),
        target_mac: Mac(p[18..24].try_into().ok()?),
        target_ip: Ipv4Addr::new(p[24], p[25], p[26], p[27]),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let a = Arp {
            op: OP_REQUEST,
            sender_mac: Mac([2, 0, 0, 0, 0, 1]),
            sender_ip: Ipv4Addr::new(198, 18, 0, 2),
            target_mac: Mac::default(),
            target_ip: Ipv4Addr::new(198, 18, 0, 1),
        };
        let f = frame(Mac::BROADCAST, &a);
        assert_eq!(f.len(), 60);
        assert_eq!(parse(&f[14..]), Some(a));
        assert!(parse(&f[14..41]).is_none());
    }
}

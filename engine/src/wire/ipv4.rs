//! IPv4 header (RFC 791 §3.1), without options.

use super::checksum;
use std::net::Ipv4Addr;

pub const HEADER_LEN: usize = 20;
pub const TOTAL_LEN: std::ops::Range<usize> = 2..4;
pub const IDENT: std::ops::Range<usize> = 4..6;
pub const FLAGS_OFFSET: std::ops::Range<usize> = 6..8;
pub const CHECKSUM: std::ops::Range<usize> = 10..12;
pub const SRC: std::ops::Range<usize> = 12..16;
pub const DST: std::ops::Range<usize> = 16..20;
/// More Fragments flag in the flags/offset word (RFC 791 §3.1).
pub const FLAG_MF: u16 = 0x2000;
pub const PROTO_ICMP: u8 = 1;
pub const PROTO_UDP: u8 = 17;
pub const DEFAULT_TTL: u8 = 64;

/// Writes a 20-byte header with a valid checksum into `buf[..20]`.
/// DF is clear so that a router may fragment (RFC 791 §2.3); `ident` is the
/// Identification field (RFC 6864 §4.1: unique per datagram that may be
/// fragmented).
pub fn emit(buf: &mut [u8], src: Ipv4Addr, dst: Ipv4Addr, proto: u8, payload_len: usize, ident: u16) {
    let total = (HEADER_LEN + payload_len) as u16;
    buf[0] = 0x45; // version 4, IHL 5 words
    buf[1] = 0; // DSCP/ECN
    buf[TOTAL_LEN].copy_from_slice(&total.to_be_bytes());
    buf[IDENT].copy_from_slice(&ident.to_be_bytes());
    buf[6] = 0; // flags (DF clear, MF clear), fragment offset 0
    buf[7] = 0;
    buf[8] = DEFAULT_TTL;
    buf[9] = proto;
    buf[CHECKSUM].copy_from_slice(&[0, 0]);
    buf[SRC].copy_from_slice(&src.octets());
    buf[DST].copy_from_slice(&dst.octets());
    let c = checksum::checksum(&buf[..HEADER_LEN]);
    buf[CHECKSUM].copy_from_slice(&c.to_be_bytes());
}

/// One's-complement sum of the UDP/TCP pseudo-header (RFC 768).
pub fn pseudo_header_sum(src: Ipv4Addr, dst: Ipv4Addr, proto: u8, l4_len: usize) -> u64 {
    let mut acc = checksum::sum(0, &src.octets());
    acc = checksum::sum(acc, &dst.octets());
    acc + u64::from(proto) + l4_len as u64
}

/// A parsed IPv4 header.
#[derive(Debug, Clone, Copy)]
pub struct Header {
    pub proto: u8,
    pub src: Ipv4Addr,
    pub dst: Ipv4Addr,
    pub ident: u16,
    /// Offset of the payload, relative to the start of the IPv4 header.
    pub header_len: usize,
    /// Total Length: header and payload [bytes].
    pub total_len: usize,
    /// Where this fragment's payload lies in the datagram's payload [bytes].
    pub frag_offset: usize,
    /// More Fragments flag.
    pub more_fragments: bool,
}

impl Header {
    /// A fragment of a larger datagram (not a whole datagram).
    pub fn is_fragment(&self) -> bool {
        self.more_fragments || self.frag_offset != 0
    }
}

/// Writes the fragment fields of the header in `buf[..20]`: Total Length,
/// More Fragments, the offset [bytes, a multiple of 8], and a new header
/// checksum. The rest of the header is kept.
pub fn set_fragment(buf: &mut [u8], payload_len: usize, offset: usize, more: bool) {
    debug_assert!(offset.is_multiple_of(8));
    buf[TOTAL_LEN].copy_from_slice(&((HEADER_LEN + payload_len) as u16).to_be_bytes());
    let word = (offset / 8) as u16 | if more { FLAG_MF } else { 0 };
    buf[FLAGS_OFFSET].copy_from_slice(&word.to_be_bytes());
    buf[CHECKSUM].copy_from_slice(&[0, 0]);
    let c = checksum::checksum(&buf[..HEADER_LEN]);
    buf[CHECKSUM].copy_from_slice(&c.to_be_bytes());
}

/// Parses a header at the start of `pkt`; `None` if it is not a well-formed
/// IPv4 header.
pub fn parse(pkt: &[u8]) -> Option<Header> {
    if pkt.len() < HEADER_LEN || pkt[0] >> 4 != 4 {
        return None;
    }
    let header_len = usize::from(pkt[0] & 0x0f) * 4;
    let total = usize::from(u16::from_be_bytes([pkt[2], pkt[3]]));
    if header_len < HEADER_LEN || pkt.len() < header_len || total < header_len {
        return None;
    }
    let word = u16::from_be_bytes([pkt[6], pkt[7]]);
    Some(Header {
        proto: pkt[9],
        src: Ipv4Addr::new(pkt[12], pkt[13], pkt[14], pkt[15]),
        dst: Ipv4Addr::new(pkt[16], pkt[17], pkt[18], pkt[19]),
        ident: u16::from_be_bytes([pkt[4], pkt[5]]),
        header_len,
        total_len: total,
        frag_offset: usize::from(word & 0x1fff) * 8,
        more_fragments: word & FLAG_MF != 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emit_then_parse() {
        let mut b = [0xa5u8; 20];
        emit(&mut b, Ipv4Addr::new(198, 18, 0, 2), Ipv4Addr::new(198, 19, 0, 2), PROTO_UDP, 26, 7);
        assert_eq!(checksum::checksum(&b), 0);
        let h = parse(&b).unwrap();
        assert_eq!(h.proto, PROTO_UDP);
        assert_eq!(h.header_len, 20);
        assert_eq!(h.ident, 7);
        assert!(!h.is_fragment());
        set_fragment(&mut b, 16, 1480, true);
        assert_eq!(checksum::checksum(&b), 0);
        let h = parse(&b).unwrap();
        assert_eq!((h.total_len, h.frag_offset, h.more_fragments, h.ident), (36, 1480, true, 7));
        assert!(h.is_fragment());
    }

    #[test]
    fn parse_rejects_garbage() {
        assert!(parse(&[0x45; 19]).is_none());
        assert!(parse(&[0x60; 20]).is_none());
        let mut b = [0u8; 20];
        b[0] = 0x44; // IHL below 5
        assert!(parse(&b).is_none());
        b[0] = 0x4f; // IHL 60 bytes, only 20 present
        assert!(parse(&b).is_none());
    }
}

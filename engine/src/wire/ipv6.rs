//! IPv6 header (RFC 8200 §3) and the walk over extension headers (§4).

use super::checksum;
use std::net::Ipv6Addr;

pub const HEADER_LEN: usize = 40;
pub const PAYLOAD_LEN: std::ops::Range<usize> = 4..6;
pub const SRC: std::ops::Range<usize> = 8..24;
pub const DST: std::ops::Range<usize> = 24..40;
pub const DEFAULT_HOP_LIMIT: u8 = 64;

pub const NH_HOP_BY_HOP: u8 = 0;
pub const NH_UDP: u8 = 17;
pub const NH_ROUTING: u8 = 43;
pub const NH_FRAGMENT: u8 = 44;
pub const NH_ICMPV6: u8 = 58;
pub const NH_DEST_OPTS: u8 = 60;

/// Writes a 40-byte header into `buf[..40]` (traffic class and flow label 0).
pub fn emit(buf: &mut [u8], src: Ipv6Addr, dst: Ipv6Addr, next_header: u8, payload_len: usize, hop_limit: u8) {
    buf[0] = 0x60;
    buf[1] = 0;
    buf[2] = 0;
    buf[3] = 0;
    buf[PAYLOAD_LEN].copy_from_slice(&(payload_len as u16).to_be_bytes());
    buf[6] = next_header;
    buf[7] = hop_limit;
    buf[SRC].copy_from_slice(&src.octets());
    buf[DST].copy_from_slice(&dst.octets());
}

/// One's-complement sum of the upper-layer pseudo-header (RFC 8200 §8.1).
pub fn pseudo_header_sum(src: Ipv6Addr, dst: Ipv6Addr, next_header: u8, l4_len: usize) -> u64 {
    let mut acc = checksum::sum(0, &src.octets());
    acc = checksum::sum(acc, &dst.octets());
    acc + l4_len as u64 + u64::from(next_header)
}

/// Bytes of a Fragment header (RFC 8200 §4.5).
pub const FRAGMENT_HEADER_LEN: usize = 8;

/// Writes a Fragment header into `buf[..8]`: `next` is the fragmentable
/// part's first header, `offset` [bytes, a multiple of 8] where this
/// fragment lies in it, `more` the M flag.
pub fn emit_fragment_header(buf: &mut [u8], next: u8, offset: usize, more: bool, id: u32) {
    debug_assert!(offset.is_multiple_of(8));
    buf[0] = next;
    buf[1] = 0;
    let word = (offset as u16 & 0xfff8) | u16::from(more);
    buf[2..4].copy_from_slice(&word.to_be_bytes());
    buf[4..8].copy_from_slice(&id.to_be_bytes());
}

/// What a Fragment header says (RFC 8200 §4.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fragment {
    pub id: u32,
    /// Where this fragment lies in the fragmentable part [bytes].
    pub offset: usize,
    /// M flag: more fragments follow.
    pub more: bool,
    /// Offset of the fragment data, relative to the IPv6 header.
    pub data_offset: usize,
}

impl Fragment {
    /// An atomic fragment (offset 0, M = 0) is a whole datagram (RFC 8200 §4.5).
    pub fn is_atomic(&self) -> bool {
        self.offset == 0 && !self.more
    }
}

/// A parsed IPv6 header with its extension header chain walked.
#[derive(Debug, Clone, Copy)]
pub struct Header {
    pub src: Ipv6Addr,
    pub dst: Ipv6Addr,
    pub hop_limit: u8,
    /// Header plus Payload Length [bytes].
    pub total_len: usize,
    /// The upper-layer protocol found after the extension headers.
    pub upper_proto: u8,
    /// Offset of the upper-layer header, relative to the IPv6 header.
    pub upper_offset: usize,
    /// Extension headers walked before the upper layer.
    pub ext_headers: u8,
    /// A Fragment header with a non-zero offset: no upper-layer header here.
    pub non_first_fragment: bool,
    /// The Fragment header, if the chain holds one.
    pub fragment: Option<Fragment>,
}

impl Header {
    /// A fragment of a larger datagram (an atomic fragment is not one).
    pub fn is_fragment(&self) -> bool {
        self.fragment.is_some_and(|f| !f.is_atomic())
    }
}

/// Extension headers walked at most; a longer chain is treated as foreign.
const MAX_EXT_HEADERS: u8 = 32;

/// Parses the header at the start of `pkt` and walks Hop-by-Hop, Routing,
/// Fragment and Destination Options headers (RFC 8200 §4.1 order is not
/// enforced). `None` if malformed or truncated.
pub fn parse(pkt: &[u8]) -> Option<Header> {
    if pkt.len() < HEADER_LEN || pkt[0] >> 4 != 6 {
        return None;
    }
    let mut h = Header {
        src: Ipv6Addr::from(<[u8; 16]>::try_from(&pkt[8..24]).ok()?),
        dst: Ipv6Addr::from(<[u8; 16]>::try_from(&pkt[24..40]).ok()?),
        hop_limit: pkt[7],
        total_len: HEADER_LEN + usize::from(u16::from_be_bytes([pkt[4], pkt[5]])),
        upper_proto: pkt[6],
        upper_offset: HEADER_LEN,
        ext_headers: 0,
        non_first_fragment: false,
        fragment: None,
    };
    loop {
        let off = h.upper_offset;
        match h.upper_proto {
            NH_HOP_BY_HOP | NH_ROUTING | NH_DEST_OPTS => {
                let ext = pkt.get(off..off + 2)?;
                h.upper_proto = ext[0];
                h.upper_offset = off + (usize::from(ext[1]) + 1) * 8;
            }
            NH_FRAGMENT => {
                let ext = pkt.get(off..off + 8)?;
                h.upper_proto = ext[0];
                h.upper_offset = off + FRAGMENT_HEADER_LEN;
                let word = u16::from_be_bytes([ext[2], ext[3]]);
                let f = Fragment {
                    id: u32::from_be_bytes([ext[4], ext[5], ext[6], ext[7]]),
                    offset: usize::from(word & 0xfff8),
                    more: word & 1 != 0,
                    data_offset: h.upper_offset,
                };
                h.non_first_fragment = f.offset != 0;
                h.fragment = Some(f);
            }
            _ => break,
        }
        h.ext_headers += 1;
        if h.ext_headers > MAX_EXT_HEADERS || h.upper_offset > pkt.len() {
            return None;
        }
        if h.non_first_fragment {
            break;
        }
    }
    Some(h)
}

/// The solicited-node multicast address of `addr` (RFC 4291 §2.7.1).
pub fn solicited_node(addr: &Ipv6Addr) -> Ipv6Addr {
    let o = addr.octets();
    Ipv6Addr::new(0xff02, 0, 0, 0, 0, 1, 0xff00 | u16::from(o[13]), u16::from_be_bytes([o[14], o[15]]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walks_extension_headers() {
        let mut p = vec![0u8; 40 + 8 + 8 + 8];
        emit(&mut p, "2001:2::2".parse().unwrap(), "2001:2:0:1::2".parse().unwrap(), NH_HOP_BY_HOP, 24, 64);
        p[40] = NH_DEST_OPTS; // HbH -> DstOpts, length 0 (8 bytes)
        p[48] = NH_FRAGMENT; // DstOpts -> Fragment
        p[56] = NH_UDP; // Fragment -> UDP, offset 0
        let h = parse(&p).unwrap();
        assert_eq!(h.upper_proto, NH_UDP);
        assert_eq!(h.upper_offset, 64);
        assert_eq!(h.ext_headers, 3);
        assert!(!h.non_first_fragment);
        assert!(!h.is_fragment(), "an atomic fragment is a whole datagram");
        emit_fragment_header(&mut p[56..64], NH_UDP, 1448, true, 0xdead_beef);
        let h = parse(&p).unwrap();
        assert!(h.is_fragment() && h.non_first_fragment);
        assert_eq!(h.fragment, Some(Fragment { id: 0xdead_beef, offset: 1448, more: true, data_offset: 64 }));
    }

    #[test]
    fn truncated_chain_is_rejected() {
        let mut p = vec![0u8; 41];
        emit(&mut p, Ipv6Addr::LOCALHOST, Ipv6Addr::LOCALHOST, NH_ROUTING, 1, 64);
        assert!(parse(&p).is_none());
        // A self-referencing chain of maximal length stops.
        let mut p = vec![0u8; 40 + 8 * 40];
        emit(&mut p, Ipv6Addr::LOCALHOST, Ipv6Addr::LOCALHOST, NH_DEST_OPTS, 320, 64);
        for i in 0..40 {
            p[40 + 8 * i] = NH_DEST_OPTS;
        }
        assert!(parse(&p).is_none());
    }

    #[test]
    fn solicited_node_address() {
        let a: Ipv6Addr = "2001:2::1:2:3".parse().unwrap();
        assert_eq!(solicited_node(&a), "ff02::1:ff02:3".parse::<Ipv6Addr>().unwrap());
    }
}

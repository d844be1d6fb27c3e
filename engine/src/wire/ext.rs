//! IPv6 extension headers a test frame can carry (RFC 8200 §4), between the
//! IPv6 header and UDP, in the order given.
//!
//! - `hop_by_hop` and `dest_opts` (§4.3, §4.6): `len` bytes (a multiple of
//!   8, 8..=2048), filled with PadN options, which every node must skip;
//! - `routing0` (RFC 2460 Type 0, deprecated by RFC 5095): Segments Left as
//!   given (0: a router forwards it without acting on it) and its addresses;
//! - `srh` (RFC 8754, routing type 4): the segment list in the header's own
//!   order (`segments[0]` is the last segment, the final destination) and
//!   Segments Left; the frame is sent to `segments[segments_left]`;
//! - `fragment` (§4.5): offset 0, M = 0 (an atomic fragment: a whole
//!   datagram with a Fragment header), with an Identification.
//!
//! Each header's Next Header names the one after it; the last names UDP.

use serde::Deserialize;
use std::net::Ipv6Addr;

use super::ipv6::{NH_DEST_OPTS, NH_FRAGMENT, NH_HOP_BY_HOP, NH_ROUTING};

pub const ROUTING_TYPE_0: u8 = 0;
pub const ROUTING_TYPE_SRH: u8 = 4;
const PAD1: u8 = 0;
const PADN: u8 = 1;
/// Largest options header (Hdr Ext Len 255).
pub const MAX_OPTIONS_LEN: usize = 2048;

fn eight() -> usize {
    8
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum ExtHeader {
    HopByHop {
        #[serde(default = "eight")]
        len: usize,
    },
    DestOpts {
        #[serde(default = "eight")]
        len: usize,
    },
    Routing0 {
        #[serde(default)]
        addresses: Vec<Ipv6Addr>,
        #[serde(default)]
        segments_left: u8,
    },
    Srh {
        segments: Vec<Ipv6Addr>,
        segments_left: u8,
    },
    Fragment {
        #[serde(default)]
        id: u32,
    },
}

impl ExtHeader {
    /// Its Next Header value in the header before it.
    pub fn protocol(&self) -> u8 {
        match self {
            ExtHeader::HopByHop { .. } => NH_HOP_BY_HOP,
            ExtHeader::DestOpts { .. } => NH_DEST_OPTS,
            ExtHeader::Routing0 { .. } | ExtHeader::Srh { .. } => NH_ROUTING,
            ExtHeader::Fragment { .. } => NH_FRAGMENT,
        }
    }

    /// Its length on the wire [bytes].
    pub fn len(&self) -> usize {
        match self {
            ExtHeader::HopByHop { len } | ExtHeader::DestOpts { len } => *len,
            ExtHeader::Routing0 { addresses, .. } => 8 + 16 * addresses.len(),
            ExtHeader::Srh { segments, .. } => 8 + 16 * segments.len(),
            ExtHeader::Fragment { .. } => 8,
        }
    }

    /// Problems with the header, in words (`where` names it).
    pub fn check(&self, at: &str) -> Result<(), String> {
        match self {
            ExtHeader::HopByHop { len } | ExtHeader::DestOpts { len } => {
                if *len < 8 || *len > MAX_OPTIONS_LEN || len % 8 != 0 {
                    return Err(format!("{at}.len: {len} bytes is not a multiple of 8 in 8..={MAX_OPTIONS_LEN}"));
                }
            }
            ExtHeader::Routing0 { addresses, segments_left } => {
                if addresses.len() > 127 || usize::from(*segments_left) > addresses.len() {
                    return Err(format!("{at}: segments_left {segments_left} with {} addresses (at most 127)", addresses.len()));
                }
            }
            ExtHeader::Srh { segments, segments_left } => {
                if segments.is_empty() || segments.len() > 127 || usize::from(*segments_left) >= segments.len() {
                    return Err(format!("{at}: segments_left {segments_left} must index one of the 1..=127 segments (got {})", segments.len()));
                }
            }
            ExtHeader::Fragment { .. } => {}
        }
        Ok(())
    }

    /// Writes the header into `buf[..self.len()]`, naming `next` as the
    /// header after it.
    pub fn emit(&self, buf: &mut [u8], next: u8) {
        let n = self.len();
        buf[..n].fill(0);
        buf[0] = next;
        match self {
            ExtHeader::HopByHop { len } | ExtHeader::DestOpts { len } => {
                buf[1] = (len / 8 - 1) as u8;
                pad(&mut buf[2..*len]);
            }
            ExtHeader::Routing0 { addresses, segments_left } => {
                buf[1] = (2 * addresses.len()) as u8;
                buf[2] = ROUTING_TYPE_0;
                buf[3] = *segments_left;
                for (k, a) in addresses.iter().enumerate() {
                    buf[8 + 16 * k..24 + 16 * k].copy_from_slice(&a.octets());
                }
            }
            ExtHeader::Srh { segments, segments_left } => {
                buf[1] = (2 * segments.len()) as u8;
                buf[2] = ROUTING_TYPE_SRH;
                buf[3] = *segments_left;
                buf[4] = (segments.len() - 1) as u8; // Last Entry
                for (k, a) in segments.iter().enumerate() {
                    buf[8 + 16 * k..24 + 16 * k].copy_from_slice(&a.octets());
                }
            }
            ExtHeader::Fragment { id } => {
                buf[4..8].copy_from_slice(&id.to_be_bytes());
            }
        }
    }

    /// The final destination this header sends the frame to, if it names
    /// one (RFC 8200 §8.1: the upper-layer checksum uses it).
    pub fn final_destination(&self) -> Option<Ipv6Addr> {
        match self {
            ExtHeader::Srh { segments, .. } => segments.first().copied(),
            ExtHeader::Routing0 { addresses, segments_left } if *segments_left > 0 => addresses.last().copied(),
            _ => None,
        }
    }
}

/// Fills an options area with padding options (RFC 8200 §4.2): PadN
/// options of at most 257 bytes, and Pad1 for a single byte left over.
fn pad(area: &mut [u8]) {
    let mut rest = area;
    while !rest.is_empty() {
        if rest.len() == 1 {
            rest[0] = PAD1;
            return;
        }
        let take = rest.len().min(257);
        let take = if rest.len() - take == 1 { take - 1 } else { take };
        rest[0] = PADN;
        rest[1] = (take - 2) as u8;
        rest[2..take].fill(0);
        rest = &mut rest[take..];
    }
}

/// Writes `chain` into `buf` (exactly its total length), the last header
/// naming `upper` as Next Header; returns the protocol of the first header
/// (for the IPv6 header's Next Header), or `upper` for an empty chain.
pub fn emit_chain(chain: &[ExtHeader], buf: &mut [u8], upper: u8) -> u8 {
    let mut off = 0;
    for (k, h) in chain.iter().enumerate() {
        let next = chain.get(k + 1).map_or(upper, ExtHeader::protocol);
        h.emit(&mut buf[off..], next);
        off += h.len();
    }
    chain.first().map_or(upper, ExtHeader::protocol)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::ipv6::NH_UDP;

    #[test]
    fn options_headers_are_padded_to_their_length() {
        for len in [8usize, 16, 264, 272, 2048] {
            let h = ExtHeader::DestOpts { len };
            let mut b = vec![0xaa; len];
            h.emit(&mut b, NH_UDP);
            assert_eq!((b[0], usize::from(b[1])), (NH_UDP, len / 8 - 1));
            // Walk the options: they must exactly fill the header.
            let mut off = 2;
            while off < len {
                off += if b[off] == PAD1 { 1 } else { 2 + usize::from(b[off + 1]) };
            }
            assert_eq!(off, len, "len {len}");
        }
    }

    #[test]
    fn a_chain_links_its_next_headers_and_ends_at_udp() {
        let seg: Ipv6Addr = "2001:2:0:1::2".parse().unwrap();
        let chain = [
            ExtHeader::HopByHop { len: 8 },
            ExtHeader::Routing0 { addresses: vec![], segments_left: 0 },
            ExtHeader::Fragment { id: 7 },
            ExtHeader::DestOpts { len: 8 },
            ExtHeader::Srh { segments: vec![seg, seg], segments_left: 1 },
        ];
        let total: usize = chain.iter().map(ExtHeader::len).sum();
        let mut b = vec![0u8; total];
        assert_eq!(emit_chain(&chain, &mut b, NH_UDP), NH_HOP_BY_HOP);
        assert_eq!([b[0], b[8], b[16], b[24]], [NH_ROUTING, NH_FRAGMENT, NH_DEST_OPTS, NH_ROUTING]);
        assert_eq!(&b[20..24], &7u32.to_be_bytes());
        let srh = &b[32..];
        assert_eq!((srh[0], srh[1], srh[2], srh[3], srh[4]), (NH_UDP, 4, ROUTING_TYPE_SRH, 1, 1));
        assert_eq!(chain[4].final_destination(), Some(seg));
    }

    #[test]
    fn bad_headers_are_refused_with_their_place() {
        assert!(ExtHeader::HopByHop { len: 12 }.check("x").unwrap_err().starts_with("x.len"));
        assert!(ExtHeader::Srh { segments: vec![], segments_left: 0 }.check("x").is_err());
        let a: Ipv6Addr = "2001:2::1".parse().unwrap();
        assert!(ExtHeader::Srh { segments: vec![a], segments_left: 1 }.check("x").is_err());
        assert!(ExtHeader::Routing0 { addresses: vec![a], segments_left: 1 }.check("x").is_ok());
    }
}

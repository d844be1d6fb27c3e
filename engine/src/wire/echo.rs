//! ICMP Echo Request and Reply for both families: ICMPv4 (RFC 792 types 8
//! and 0) and ICMPv6 (RFC 4443 §4.1–4.2, types 128 and 129).
//!
//! Header: type, code 0, checksum, Identifier, Sequence Number (8 bytes),
//! then the data, which a reply carries back unchanged. The ICMPv4
//! checksum covers the message; the ICMPv6 checksum also the pseudo-header
//! (RFC 4443 §2.3). A v6bench echo stream sends the signature as the first
//! data bytes, so the reply names its stream, sequence and transmit time.

use super::checksum;
use super::ethernet::{self, Mac};
use super::{ipv4, ipv6};

pub const HEADER_LEN: usize = 8;
pub const V4_REQUEST: u8 = 8;
pub const V4_REPLY: u8 = 0;
pub const V6_REQUEST: u8 = 128;
pub const V6_REPLY: u8 = 129;
pub const CHECKSUM: std::ops::Range<usize> = 2..4;
pub const IDENT: std::ops::Range<usize> = 4..6;
pub const SEQ: std::ops::Range<usize> = 6..8;

/// The request type of IP `version`.
pub fn request_type(version: u8) -> u8 {
    if version == 4 { V4_REQUEST } else { V6_REQUEST }
}

/// Writes an Echo Request header with a zero checksum into `buf[..8]`.
pub fn emit_request(buf: &mut [u8], version: u8, ident: u16) {
    buf[0] = request_type(version);
    buf[1] = 0;
    buf[CHECKSUM].fill(0);
    buf[IDENT].copy_from_slice(&ident.to_be_bytes());
    buf[SEQ].fill(0);
}

/// Turns a whole Ethernet frame holding an Echo Request (at IP header
/// offset `l3`, upper-layer offset `l4`) into the Echo Reply to it, in
/// place: MACs and IP addresses swapped (the reply leaves from `my_mac`),
/// the type changed, TTL/hop limit 64, checksums computed anew.
pub fn reply_in_place(f: &mut [u8], l4: usize, my_mac: Mac) {
    let l3 = ethernet::HEADER_LEN;
    let (src_mac, dst_mac) = (Mac(f[6..12].try_into().expect("6 bytes")), my_mac);
    f[0..6].copy_from_slice(&src_mac.0);
    f[6..12].copy_from_slice(&dst_mac.0);
    if f[l3] >> 4 == 4 {
        let (a, b) = (f[l3 + 12..l3 + 16].to_vec(), f[l3 + 16..l3 + 20].to_vec());
        f[l3 + 12..l3 + 16].copy_from_slice(&b);
        f[l3 + 16..l3 + 20].copy_from_slice(&a);
        f[l3 + 8] = ipv4::DEFAULT_TTL;
        f[l3 + ipv4::CHECKSUM.start..l3 + ipv4::CHECKSUM.end].fill(0);
        let c = checksum::checksum(&f[l3..l4]);
        f[l3 + ipv4::CHECKSUM.start..l3 + ipv4::CHECKSUM.end].copy_from_slice(&c.to_be_bytes());
        f[l4] = V4_REPLY;
        f[l4 + CHECKSUM.start..l4 + CHECKSUM.end].fill(0);
        let c = checksum::checksum(&f[l4..]);
        f[l4 + CHECKSUM.start..l4 + CHECKSUM.end].copy_from_slice(&c.to_be_bytes());
    } else {
        let (a, b) = (f[l3 + 8..l3 + 24].to_vec(), f[l3 + 24..l3 + 40].to_vec());
        f[l3 + 8..l3 + 24].copy_from_slice(&b);
        f[l3 + 24..l3 + 40].copy_from_slice(&a);
        f[l3 + 7] = ipv6::DEFAULT_HOP_LIMIT;
        f[l4] = V6_REPLY;
        f[l4 + CHECKSUM.start..l4 + CHECKSUM.end].fill(0);
        let src: [u8; 16] = f[l3 + 8..l3 + 24].try_into().expect("16 bytes");
        let dst: [u8; 16] = f[l3 + 24..l3 + 40].try_into().expect("16 bytes");
        let pseudo = ipv6::pseudo_header_sum(src.into(), dst.into(), ipv6::NH_ICMPV6, f.len() - l4);
        let c = checksum::finish(checksum::sum(pseudo, &f[l4..]));
        f[l4 + CHECKSUM.start..l4 + CHECKSUM.end].copy_from_slice(&c.to_be_bytes());
    }
}

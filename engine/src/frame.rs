//! Test-frame templates: built once per stream, stamped per frame.
//!
//! A template holds the whole frame (without FCS) with a zero signature and
//! the checksum sums of everything that does not change. Stamping writes
//! the signature (and for IPv4 the Identification field) and finishes the
//! checksums by adding only the changed words (RFC 1624 style incremental
//! update), so the per-frame cost does not grow with the frame size.

use crate::spec::StreamPlan;
use crate::wire::ethernet::{self, Mac};
use crate::wire::signature::{self, Signature};
use crate::wire::{checksum, ext, ipv4, ipv6, udp, FCS_LEN};
use std::net::IpAddr;

/// A stream's frame template.
#[derive(Debug, Clone)]
pub struct Template {
    pub bytes: Vec<u8>,
    pub stream: u16,
    /// Offset of the UDP header.
    udp_off: usize,
    /// Offset of the signature.
    sig_off: usize,
    /// Checksum sum of the UDP pseudo-header, header and payload with a zero
    /// signature and checksum field.
    udp_acc: u64,
    /// For IPv4: sum of the IPv4 header with zero Identification and checksum.
    ipv4_acc: Option<u64>,
}

impl Template {
    /// Builds the template of `stream` sent from `src_mac` to `dst_mac`.
    pub fn new(stream: &StreamPlan, src_mac: Mac, dst_mac: Mac) -> Template {
        let len = stream.frame_size - FCS_LEN;
        let mut b = vec![0u8; len];
        let l3 = ethernet::HEADER_LEN;
        let (udp_off, ipv4_acc) = match (stream.src_ip, stream.dst_ip) {
            (IpAddr::V4(s), IpAddr::V4(d)) => {
                ethernet::emit(&mut b, dst_mac, src_mac, ethernet::ETHERTYPE_IPV4);
                let l4 = l3 + ipv4::HEADER_LEN;
                ipv4::emit(&mut b[l3..], s, d, ipv4::PROTO_UDP, len - l4, 0);
                b[l3 + ipv4::CHECKSUM.start..l3 + ipv4::CHECKSUM.end].fill(0);
                (l4, Some(checksum::sum(0, &b[l3..l4])))
            }
            (IpAddr::V6(s), IpAddr::V6(d)) => {
                ethernet::emit(&mut b, dst_mac, src_mac, ethernet::ETHERTYPE_IPV6);
                let exts = l3 + ipv6::HEADER_LEN;
                let l4 = exts + stream.ext_headers.iter().map(ext::ExtHeader::len).sum::<usize>();
                let first = ext::emit_chain(&stream.ext_headers, &mut b[exts..l4], ipv6::NH_UDP);
                ipv6::emit(&mut b[l3..], s, d, first, len - exts, ipv6::DEFAULT_HOP_LIMIT);
                (l4, None)
            }
            _ => unreachable!("spec validation keeps both addresses in one family"),
        };
        let udp_len = len - udp_off;
        udp::emit(&mut b[udp_off..], stream.src_port, stream.dst_port, udp_len);
        let sig_off = udp_off + udp::HEADER_LEN;
        signature::pad(&mut b[sig_off + signature::LEN..]);
        let pseudo = match (stream.src_ip, stream.dst_ip) {
            (IpAddr::V4(s), IpAddr::V4(d)) => ipv4::pseudo_header_sum(s, d, ipv4::PROTO_UDP, udp_len),
            (IpAddr::V6(s), IpAddr::V6(d)) => {
                // The checksum covers the final destination (RFC 8200 §8.1).
                let last = stream.ext_headers.iter().find_map(ext::ExtHeader::final_destination).unwrap_or(d);
                ipv6::pseudo_header_sum(s, last, ipv6::NH_UDP, udp_len)
            }
            _ => unreachable!(),
        };
        let udp_acc = checksum::sum(pseudo, &b[udp_off..]);
        Template { bytes: b, stream: stream.index, udp_off, sig_off, udp_acc, ipv4_acc }
    }

    /// Frame length handed to the kernel (frame size without FCS).
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Copies the template into `out` and stamps sequence number `seq` and
    /// transmit time `tx_ns`; returns the frame length.
    #[inline]
    pub fn write(&self, out: &mut [u8], seq: u64, tx_ns: u64) -> usize {
        let n = self.bytes.len();
        out[..n].copy_from_slice(&self.bytes);
        self.stamp(&mut out[..n], seq, tx_ns);
        n
    }

    /// Stamps a frame that already holds this template's bytes.
    #[inline]
    pub fn stamp(&self, f: &mut [u8], seq: u64, tx_ns: u64) {
        let sig = Signature { stream: self.stream, seq, tx_ns };
        let so = self.sig_off;
        signature::emit(&mut f[so..so + signature::LEN], sig);
        let acc = checksum::sum(self.udp_acc, &f[so..so + signature::LEN]);
        let c = checksum::udp_finish(acc);
        f[self.udp_off + udp::CHECKSUM.start..self.udp_off + udp::CHECKSUM.end].copy_from_slice(&c.to_be_bytes());
        if let Some(ip_acc) = self.ipv4_acc {
            let l3 = ethernet::HEADER_LEN;
            let ident = seq as u16; // RFC 6864: unique within the stream's recent datagrams
            f[l3 + ipv4::IDENT.start..l3 + ipv4::IDENT.end].copy_from_slice(&ident.to_be_bytes());
            let c = checksum::finish(ip_acc + u64::from(ident));
            f[l3 + ipv4::CHECKSUM.start..l3 + ipv4::CHECKSUM.end].copy_from_slice(&c.to_be_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{DEFAULT_DST_PORT, DEFAULT_SRC_PORT};

    fn stream(v4: bool, size: usize) -> StreamPlan {
        let (s, d): (IpAddr, IpAddr) = if v4 {
            ("198.18.0.2".parse().unwrap(), "198.19.0.2".parse().unwrap())
        } else {
            ("2001:2::2".parse().unwrap(), "2001:2:0:1::2".parse().unwrap())
        };
        StreamPlan {
            index: 3,
            name: "s".into(),
            tx_port: 0,
            rx_port: 1,
            src_ip: s,
            dst_ip: d,
            src_port: DEFAULT_SRC_PORT,
            dst_port: DEFAULT_DST_PORT,
            frame_size: size,
            share: 1,
            frames: 10,
            ext_headers: vec![],
        }
    }

    fn verify(f: &[u8], v4: bool) {
        let l3 = 14;
        let l4 = if v4 {
            assert_eq!(checksum::checksum(&f[l3..l3 + 20]), 0, "IPv4 header checksum");
            l3 + 20
        } else {
            l3 + 40
        };
        let udp_len = f.len() - l4;
        let pseudo = if v4 {
            ipv4::pseudo_header_sum(
                std::net::Ipv4Addr::new(f[26], f[27], f[28], f[29]),
                std::net::Ipv4Addr::new(f[30], f[31], f[32], f[33]),
                17,
                udp_len,
            )
        } else {
            let s: [u8; 16] = f[22..38].try_into().unwrap();
            let d: [u8; 16] = f[38..54].try_into().unwrap();
            ipv6::pseudo_header_sum(s.into(), d.into(), 17, udp_len)
        };
        assert_eq!(checksum::finish(checksum::sum(pseudo, &f[l4..])), 0, "UDP checksum");
    }

    #[test]
    fn stamped_frames_have_valid_checksums() {
        for (v4, size) in [(true, 64), (true, 128), (true, 1518), (false, 84), (false, 128), (false, 1518), (true, 9216)] {
            let t = Template::new(&stream(v4, size), Mac([2, 0, 0, 0, 0, 1]), Mac([2, 0, 0, 0, 0, 2]));
            let mut buf = vec![0xa5u8; 9216];
            for (seq, ts) in [(0u64, 0u64), (1, 1_700_000_000_000_000_000), (65_537, u64::MAX), (crate::wire::signature::MAX_SEQ, 12345)] {
                let n = t.write(&mut buf, seq, ts);
                assert_eq!(n, size - 4);
                verify(&buf[..n], v4);
                let sig = signature::parse(&buf[n - (size - 4) + t.sig_off..]).unwrap();
                assert_eq!(sig, Signature { stream: 3, seq, tx_ns: ts });
            }
            // Padding pattern directly after the signature, when there is room.
            let pad = &buf[t.sig_off + 18..size - 4];
            assert_eq!(pad.len(), size - 4 - t.sig_off - 18);
            assert!(pad.iter().enumerate().all(|(i, &b)| b == if i % 2 == 0 { 0x55 } else { 0xaa }));
            assert_eq!(buf[size - 4], 0xa5, "nothing written past the frame");
        }
    }
}

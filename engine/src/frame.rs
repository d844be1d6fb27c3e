//! Test-frame templates: built once per stream, stamped per frame.
//!
//! A template holds the whole frame (without FCS) with a zero signature and
//! the checksum sums of everything that does not change. Stamping writes
//! the signature (and for IPv4 the Identification field) and finishes the
//! checksums by adding only the changed words (RFC 1624 style incremental
//! update), so the per-frame cost does not grow with the frame size.
//!
//! A stream with a `fragment_mtu` smaller than its datagrams is sent as
//! fragments (source fragmentation): the whole datagram is stamped as
//! above, then cut into wire frames laid out back to back in the sender's
//! slot. IPv4 fragments carry More Fragments and the offset (RFC 791
//! §2.3); IPv6 fragments a Fragment header (RFC 8200 §4.5). Every fragment
//! but the last carries the most data a fragment of that MTU can hold, a
//! multiple of 8 bytes, as Linux does.

use crate::spec::{Protocol, StreamPlan};
use crate::wire::ethernet::{self, Mac};
use crate::wire::signature::{self, Signature};
use crate::wire::{checksum, echo, ext, ipv4, ipv6, udp, FCS_LEN};
use std::net::IpAddr;
use std::ops::Range;

/// One wire frame of a fragmented datagram.
#[derive(Debug, Clone)]
struct Piece {
    /// Where the frame lies in the datagram's slot.
    out: Range<usize>,
    /// Which bytes of the fragmentable part it carries.
    data: Range<usize>,
    more: bool,
}

/// Where a template's frames change from one frame to the next, for a
/// stamper outside this module (the in-kernel sender, `live.rs`), which
/// must give byte for byte what [`Template::write`] gives.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StampLayout {
    /// Offset of the 48-bit sequence number (big-endian).
    pub seq_off: usize,
    /// Offset of the 64-bit transmit timestamp (big-endian).
    pub tx_ns_off: usize,
    /// Offset of the UDP checksum.
    pub udp_checksum_off: usize,
    /// Unfolded checksum sum of everything the UDP checksum covers but the
    /// sequence number and the timestamp (`checksum::sum`).
    pub udp_acc: u64,
    /// IPv4: offsets of the Identification and the header checksum, and the
    /// header's sum without them.
    pub ipv4: Option<(usize, usize, u64)>,
}

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
    /// Wire frames when fragmented at the source; empty when sent whole.
    pieces: Vec<Piece>,
    /// An ICMP Echo Request rather than UDP: the Sequence Number is
    /// stamped too, and a zero checksum is sent as computed.
    echo: bool,
}

impl Template {
    /// Builds the template of `stream` sent from `src_mac` to `dst_mac`.
    pub fn new(stream: &StreamPlan, src_mac: Mac, dst_mac: Mac) -> Template {
        let len = stream.frame_size - FCS_LEN;
        let mut b = vec![0u8; len];
        let l3 = ethernet::HEADER_LEN;
        let echo = stream.protocol == Protocol::IcmpEcho;
        let (proto4, proto6) = if echo { (ipv4::PROTO_ICMP, ipv6::NH_ICMPV6) } else { (ipv4::PROTO_UDP, ipv6::NH_UDP) };
        let (udp_off, ipv4_acc) = match (stream.src_ip, stream.dst_ip) {
            (IpAddr::V4(s), IpAddr::V4(d)) => {
                ethernet::emit(&mut b, dst_mac, src_mac, ethernet::ETHERTYPE_IPV4);
                let l4 = l3 + ipv4::HEADER_LEN;
                ipv4::emit(&mut b[l3..], s, d, proto4, len - l4, 0);
                b[l3 + ipv4::CHECKSUM.start..l3 + ipv4::CHECKSUM.end].fill(0);
                (l4, Some(checksum::sum(0, &b[l3..l4])))
            }
            (IpAddr::V6(s), IpAddr::V6(d)) => {
                ethernet::emit(&mut b, dst_mac, src_mac, ethernet::ETHERTYPE_IPV6);
                let exts = l3 + ipv6::HEADER_LEN;
                let l4 = exts + stream.ext_headers.iter().map(ext::ExtHeader::len).sum::<usize>();
                let first = ext::emit_chain(&stream.ext_headers, &mut b[exts..l4], proto6);
                ipv6::emit(&mut b[l3..], s, d, first, len - exts, ipv6::DEFAULT_HOP_LIMIT);
                (l4, None)
            }
            _ => unreachable!("spec validation keeps both addresses in one family"),
        };
        let udp_len = len - udp_off;
        if echo {
            echo::emit_request(&mut b[udp_off..], stream.ip_version(), stream.index);
        } else {
            udp::emit(&mut b[udp_off..], stream.src_port, stream.dst_port, udp_len);
        }
        let sig_off = udp_off + udp::HEADER_LEN;
        signature::pad(&mut b[sig_off + signature::LEN..]);
        let pseudo = match (stream.src_ip, stream.dst_ip) {
            // ICMPv4's checksum has no pseudo-header (RFC 792).
            (IpAddr::V4(_), IpAddr::V4(_)) if echo => 0,
            (IpAddr::V4(s), IpAddr::V4(d)) => ipv4::pseudo_header_sum(s, d, ipv4::PROTO_UDP, udp_len),
            (IpAddr::V6(s), IpAddr::V6(d)) => {
                // The checksum covers the final destination (RFC 8200 §8.1; RFC 4443 §2.3).
                let last = stream.ext_headers.iter().find_map(ext::ExtHeader::final_destination).unwrap_or(d);
                ipv6::pseudo_header_sum(s, last, proto6, udp_len)
            }
            _ => unreachable!(),
        };
        let udp_acc = checksum::sum(pseudo, &b[udp_off..]);
        let (head, ranges) = stream.fragments();
        let mut pieces = Vec::with_capacity(ranges.len());
        let mut at = 0;
        let last = ranges.len().saturating_sub(1);
        for (k, data) in ranges.into_iter().enumerate() {
            let n = head + data.len();
            pieces.push(Piece { out: at..at + n, data, more: k < last });
            at += n;
        }
        Template { bytes: b, stream: stream.index, udp_off, sig_off, udp_acc, ipv4_acc, pieces, echo }
    }

    /// The signature a frame of this template carries, read from a copy of
    /// the frame as sent (the kernel's transmit-stamp copy, `txstamp.rs`);
    /// none for another template's frame and for fragments.
    pub fn signature_in(&self, frame: &[u8]) -> Option<Signature> {
        if !self.pieces.is_empty() || frame.len() != self.bytes.len() {
            return None;
        }
        signature::parse(&frame[self.sig_off..]).filter(|s| s.stream == self.stream)
    }

    /// Where frames change, for a UDP template sent whole; `None` for ICMP
    /// Echo and fragmented templates. The frame to start from is
    /// `write(…, 0, 0, 0)`.
    pub fn stamp_layout(&self) -> Option<StampLayout> {
        if self.echo || !self.pieces.is_empty() {
            return None;
        }
        let so = self.sig_off;
        let mut sig = [0u8; signature::LEN];
        signature::emit(&mut sig, Signature { stream: self.stream, seq: 0, tx_ns: 0 });
        let l3 = ethernet::HEADER_LEN;
        Some(StampLayout {
            seq_off: so + signature::SEQ.start,
            tx_ns_off: so + signature::TX_NS.start,
            udp_checksum_off: self.udp_off + udp::CHECKSUM.start,
            udp_acc: checksum::sum(self.udp_acc, &sig),
            ipv4: self.ipv4_acc.map(|acc| (l3 + ipv4::IDENT.start, l3 + ipv4::CHECKSUM.start, acc)),
        })
    }

    /// Length of the whole datagram's frame (frame size without FCS).
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Wire frames per datagram: 1, or the fragments.
    pub fn wire_frames(&self) -> usize {
        self.pieces.len().max(1)
    }

    /// Where wire frame `i` lies in a slot written by `write_wire`.
    pub fn wire_frame(&self, i: usize) -> Range<usize> {
        if self.pieces.is_empty() { 0..self.bytes.len() } else { self.pieces[i].out.clone() }
    }

    /// Bytes of a slot `write_wire` fills: all wire frames back to back.
    pub fn wire_len(&self) -> usize {
        self.pieces.last().map_or(self.bytes.len(), |p| p.out.end)
    }

    /// Copies the template into `out` and stamps sequence number `seq`,
    /// transmit time `tx_ns` and identification `ident` (the IPv4
    /// Identification's low 16 bits); returns the frame length. This is
    /// the whole datagram, never fragmented.
    #[inline]
    pub fn write(&self, out: &mut [u8], seq: u64, tx_ns: u64, ident: u64) -> usize {
        let n = self.bytes.len();
        out[..n].copy_from_slice(&self.bytes);
        self.stamp(&mut out[..n], seq, tx_ns, ident);
        n
    }

    /// Writes the datagram's wire frames back to back into `slot` (frame
    /// `i` at `wire_frame(i)`); a fragmented datagram is first stamped
    /// whole into `scratch` (at least `len()` bytes). `ident` should be
    /// unique among the sending port's recent datagrams to one destination
    /// (RFC 6864 §4.1; RFC 8200 §4.5): the IPv4 Identification takes its
    /// low 16 bits, the IPv6 Fragment header's Identification its low 32.
    #[inline]
    pub fn write_wire(&self, slot: &mut [u8], scratch: &mut [u8], seq: u64, tx_ns: u64, ident: u64) {
        if self.pieces.is_empty() {
            self.write(slot, seq, tx_ns, ident);
            return;
        }
        let n = self.write(scratch, seq, tx_ns, ident);
        let whole = &scratch[..n];
        let l3 = ethernet::HEADER_LEN;
        for p in &self.pieces {
            let f = &mut slot[p.out.clone()];
            if self.ipv4_acc.is_some() {
                let data_at = l3 + ipv4::HEADER_LEN;
                f[..data_at].copy_from_slice(&whole[..data_at]);
                ipv4::set_fragment(&mut f[l3..], p.data.len(), p.data.start, p.more);
                f[data_at..].copy_from_slice(&whole[data_at + p.data.start..data_at + p.data.end]);
            } else {
                let fh = l3 + ipv6::HEADER_LEN;
                let data_at = fh + ipv6::FRAGMENT_HEADER_LEN;
                f[..fh].copy_from_slice(&whole[..fh]);
                let next = f[l3 + 6];
                f[l3 + 6] = ipv6::NH_FRAGMENT;
                f[l3 + ipv6::PAYLOAD_LEN.start..l3 + ipv6::PAYLOAD_LEN.end].copy_from_slice(&((ipv6::FRAGMENT_HEADER_LEN + p.data.len()) as u16).to_be_bytes());
                ipv6::emit_fragment_header(&mut f[fh..data_at], next, p.data.start, p.more, ident as u32);
                f[data_at..].copy_from_slice(&whole[fh + p.data.start..fh + p.data.end]);
            }
        }
    }

    /// Stamps a frame that already holds this template's bytes.
    #[inline]
    pub fn stamp(&self, f: &mut [u8], seq: u64, tx_ns: u64, ident: u64) {
        let sig = Signature { stream: self.stream, seq, tx_ns };
        let so = self.sig_off;
        signature::emit(&mut f[so..so + signature::LEN], sig);
        let acc = checksum::sum(self.udp_acc, &f[so..so + signature::LEN]);
        let c = if self.echo {
            let seq16 = seq as u16;
            f[self.udp_off + echo::SEQ.start..self.udp_off + echo::SEQ.end].copy_from_slice(&seq16.to_be_bytes());
            checksum::finish(acc + u64::from(seq16))
        } else {
            checksum::udp_finish(acc)
        };
        let at = if self.echo { echo::CHECKSUM } else { udp::CHECKSUM };
        f[self.udp_off + at.start..self.udp_off + at.end].copy_from_slice(&c.to_be_bytes());
        if let Some(ip_acc) = self.ipv4_acc {
            let l3 = ethernet::HEADER_LEN;
            let ident = ident as u16;
            f[l3 + ipv4::IDENT.start..l3 + ipv4::IDENT.end].copy_from_slice(&ident.to_be_bytes());
            let c = checksum::finish(ip_acc + u64::from(ident));
            f[l3 + ipv4::CHECKSUM.start..l3 + ipv4::CHECKSUM.end].copy_from_slice(&c.to_be_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    fn stream(v4: bool, size: usize) -> StreamPlan {
        let (s, d) = if v4 { ("198.18.0.2", "198.19.0.2") } else { ("2001:2::2", "2001:2:0:1::2") };
        StreamPlan::for_test(3, s, d, size)
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
                let n = t.write(&mut buf, seq, ts, seq);
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

    #[test]
    fn fragments_carry_the_whole_datagram() {
        for (v4, size, mtu, count) in [(true, 1518, 500, 4), (true, 1518, 68, 31), (false, 1518, 1280, 2), (true, 128, 1500, 1), (false, 9216, 1500, 7)] {
            let mut st = stream(v4, size);
            st.fragment_mtu = Some(mtu);
            let t = Template::new(&st, Mac([2, 0, 0, 0, 0, 1]), Mac([2, 0, 0, 0, 0, 2]));
            assert_eq!(t.wire_frames(), count, "{size} at MTU {mtu}");
            let (mut whole, mut scratch, mut slot) = (vec![0u8; 9216], vec![0u8; 9216], vec![0u8; t.wire_len()]);
            let n = t.write(&mut whole, 9, 77, 0x1_2345_6789);
            t.write_wire(&mut slot, &mut scratch, 9, 77, 0x1_2345_6789);
            let ip = if v4 { 20 } else { 40 };
            let mut data = Vec::new();
            for i in 0..count {
                let f = &slot[t.wire_frame(i)];
                assert!(f.len() - 14 <= mtu, "fragment {i} fits the MTU");
                if count == 1 {
                    assert_eq!(f, &whole[..n]);
                    continue;
                }
                if v4 {
                    assert_eq!(checksum::checksum(&f[14..34]), 0);
                    let h = ipv4::parse(&f[14..]).unwrap();
                    assert_eq!((h.ident, h.frag_offset, h.more_fragments, h.total_len), (0x6789, data.len(), i + 1 < count, f.len() - 14));
                    data.extend_from_slice(&f[34..]);
                } else {
                    let h = ipv6::parse(&f[14..]).unwrap();
                    let fr = h.fragment.unwrap();
                    assert_eq!((fr.id, fr.offset, fr.more, h.total_len), (0x2345_6789, data.len(), i + 1 < count, f.len() - 14));
                    assert_eq!(f[14 + 40], ipv6::NH_UDP, "the fragmentable part starts with UDP");
                    data.extend_from_slice(&f[62..]);
                }
                if i + 1 < count {
                    assert_eq!((f.len() - 14 - ip - if v4 { 0 } else { 8 }) % 8, 0);
                }
            }
            if count > 1 {
                assert_eq!(&data[..], &whole[14 + ip..n], "the fragments' data is the datagram's payload");
            }
        }
    }
}

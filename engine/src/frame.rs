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
use crate::walk::{Field, Kind};
use crate::wire::ethernet::{self, Mac};
use crate::wire::signature::{self, Signature};
use crate::wire::{checksum, echo, ext, ipv4, ipv6, udp, FCS_LEN};
use std::net::IpAddr;
use std::ops::Range;
use std::sync::Arc;

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

/// A field the template's frames walk (`walk.rs`), with each value's
/// checksum sum precomputed.
#[derive(Debug, Clone)]
struct Walked {
    field: Field,
    /// Offset of the field in the frame.
    off: usize,
    /// Each value's folded one's-complement sum, in the field's order.
    sums: Arc<[u16]>,
    /// Takes the template's own value out of a sum: 0xFFFF minus its
    /// folded sum (one's-complement negation).
    minus_base: u64,
    /// An IPv4 address: in the header checksum as well as UDP's.
    in_ipv4_header: bool,
    /// How many values the field has, and 1 / that (`index`).
    count: u64,
    inv_count: f64,
    width: usize,
}

impl Walked {
    fn new(field: &Field, off: usize, template: &[u8], in_ipv4_header: bool) -> Walked {
        let w = field.width;
        let sums: Arc<[u16]> = field.values.chunks_exact(w).map(|v| checksum::fold(checksum::sum(0, v))).collect();
        let minus_base = 0xffff - u64::from(checksum::fold(checksum::sum(0, &template[off..off + w])));
        let count = field.count();
        Walked { field: field.clone(), off, sums, minus_base, in_ipv4_header, count, inv_count: 1.0 / count as f64, width: w }
    }

    /// `seq % count` without a division (a 64-bit `div` takes 35-90
    /// cycles on many x86 cores, a walk's largest cost a frame): the
    /// quotient from a multiplication in f64 is exact to within one for
    /// sequence numbers below 2^53 (they stay below 2^48, the signature's
    /// width), and one correction makes the remainder exact.
    #[inline]
    fn index(&self, seq: u64) -> usize {
        let q = (seq as f64 * self.inv_count) as u64;
        let r = seq.wrapping_sub(q.wrapping_mul(self.count)) as i64;
        let r = if r < 0 { r + self.count as i64 } else if r >= self.count as i64 { r - self.count as i64 } else { r };
        r as usize
    }
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
    /// Fields that change from frame to frame; empty for most streams.
    walk: Vec<Walked>,
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
        let walk = stream.walk.as_ref().map_or_else(Vec::new, |w| {
            let v4 = ipv4_acc.is_some();
            w.fields
                .iter()
                .map(|f| {
                    let off = match (f.kind, v4) {
                        (Kind::SrcIp, true) => l3 + ipv4::SRC.start,
                        (Kind::DstIp, true) => l3 + ipv4::DST.start,
                        (Kind::SrcIp, false) => l3 + ipv6::SRC.start,
                        (Kind::DstIp, false) => l3 + ipv6::DST.start,
                        (Kind::SrcPort, _) => udp_off + udp::SRC_PORT.start,
                        (Kind::DstPort, _) => udp_off + udp::DST_PORT.start,
                    };
                    Walked::new(f, off, &b, v4 && matches!(f.kind, Kind::SrcIp | Kind::DstIp))
                })
                .collect()
        });
        Template { bytes: b, stream: stream.index, udp_off, sig_off, udp_acc, ipv4_acc, pieces, echo, walk }
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
    /// Echo, fragmented and walking templates. The frame to start from is
    /// `write(…, 0, 0, 0)`.
    pub fn stamp_layout(&self) -> Option<StampLayout> {
        if self.echo || !self.pieces.is_empty() || !self.walk.is_empty() {
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

    /// Stamps a frame that already holds this template's bytes: the
    /// signature, the walked fields' values for sequence number `seq`
    /// (`walk.rs`), the IPv4 Identification and the checksums.
    #[inline]
    pub fn stamp(&self, f: &mut [u8], seq: u64, tx_ns: u64, ident: u64) {
        let sig = Signature { stream: self.stream, seq, tx_ns };
        let so = self.sig_off;
        signature::emit(&mut f[so..so + signature::LEN], sig);
        let (mut udp_acc, mut ip_acc) = (self.udp_acc, self.ipv4_acc.unwrap_or(0));
        for w in &self.walk {
            let i = w.index(seq);
            let width = w.width;
            f[w.off..w.off + width].copy_from_slice(&w.field.values[i * width..(i + 1) * width]);
            let delta = u64::from(w.sums[i]) + w.minus_base;
            udp_acc += delta;
            if w.in_ipv4_header {
                ip_acc += delta;
            }
        }
        let acc = checksum::sum(udp_acc, &f[so..so + signature::LEN]);
        let c = if self.echo {
            let seq16 = seq as u16;
            f[self.udp_off + echo::SEQ.start..self.udp_off + echo::SEQ.end].copy_from_slice(&seq16.to_be_bytes());
            checksum::finish(acc + u64::from(seq16))
        } else {
            checksum::udp_finish(acc)
        };
        let at = if self.echo { echo::CHECKSUM } else { udp::CHECKSUM };
        f[self.udp_off + at.start..self.udp_off + at.end].copy_from_slice(&c.to_be_bytes());
        if self.ipv4_acc.is_some() {
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
    fn a_walk_index_is_the_remainder() {
        let max = crate::wire::signature::MAX_SEQ;
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for count in [1u64, 2, 3, 7, 255, 4096, 130_816, 999_983, 1 << 22] {
            let f = Field { kind: Kind::DstPort, width: 2, values: vec![0u8; 2 * count as usize].into() };
            let w = Walked::new(&f, 0, &[0, 0], false);
            let mut seqs: Vec<u64> = vec![0, 1, count - 1, count, count + 1, max, max - 1, max / count * count, max / count * count - 1];
            for k in [1u64, 2, 1000, 1 << 20, max / count] {
                seqs.extend([k * count - 1, k * count, k * count + 1].into_iter().filter(|&s| s <= max));
            }
            for _ in 0..20_000 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                seqs.push(x % (max + 1));
            }
            for seq in seqs {
                assert_eq!(w.index(seq) as u64, seq % count, "seq {seq}, count {count}");
            }
        }
    }

    #[test]
    fn walked_fields_change_and_checksums_stay_valid() {
        use crate::walk::{Order, PortEntry, WalkSpec};
        let any = |_: &IpAddr| true;
        for (v4, size, dst, src) in [
            (true, 64, "0.0.0.0-0.0.0.3", "255.255.255.250-255.255.255.255"),
            (true, 1518, "198.18.255.255-198.19.0.2", "198.18.0.2"),
            (false, 84, "::-::2", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe-ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"),
            (false, 300, "2001:2::ffff-2001:2::1:3", "2001:2::2"),
        ] {
            let w = WalkSpec {
                dst_ip: vec![dst.into()],
                src_ip: vec![src.into()],
                dst_port: vec![PortEntry::Text("65533-65535".into())],
                src_port: vec![PortEntry::One(0), PortEntry::One(1)],
                reply_to: None,
                order: Order::Permuted,
                seed: Some(5),
            }
            .plan("w", if v4 { 4 } else { 6 }, any)
            .unwrap();
            let mut st = stream(v4, size);
            st.walk = Some(Arc::new(w.clone()));
            let t = Template::new(&st, Mac([2, 0, 0, 0, 0, 1]), Mac([2, 0, 0, 0, 0, 2]));
            let mut buf = vec![0u8; 9216];
            for seq in 0..30u64 {
                let n = t.write(&mut buf, seq, 1_700_000_000_000_000_000 + seq, seq);
                verify(&buf[..n], v4);
                let (s_at, d_at) = if v4 { (26..30, 30..34) } else { (22..38, 38..54) };
                let l4 = if v4 { 34 } else { 54 };
                for (kind, at) in [(Kind::SrcIp, s_at), (Kind::DstIp, d_at), (Kind::SrcPort, l4..l4 + 2), (Kind::DstPort, l4 + 2..l4 + 4)] {
                    assert_eq!(&buf[at], w.field(kind).unwrap().value(seq), "{kind:?} of frame {seq}");
                }
            }
        }
    }

    #[test]
    fn replies_go_to_the_learned_tuples_paired_with_valid_checksums() {
        use crate::tuples::TupleLog;
        use crate::walk::WalkSpec;
        for (v4, src) in [(true, "198.19.0.1"), (false, "2001:2::64:1")] {
            let mut log = TupleLog::new(3, if v4 { 4 } else { 6 });
            let me: IpAddr = if v4 { "198.19.0.2".parse().unwrap() } else { "2001:2:0:1::2".parse().unwrap() };
            for (seq, port) in [(0u64, 61_000u16), (1, 1024), (2, 65_535)] {
                log.learn(seq, (src.parse().unwrap(), me), port, 7 + seq as u16);
            }
            let w = WalkSpec { reply_to: Some(log.result().records), ..Default::default() }.plan("w", if v4 { 4 } else { 6 }, |_: &IpAddr| true).unwrap();
            let mut st = stream(v4, 128);
            st.walk = Some(Arc::new(w));
            let t = Template::new(&st, Mac([2, 0, 0, 0, 0, 1]), Mac([2, 0, 0, 0, 0, 2]));
            let mut buf = vec![0u8; 9216];
            for (seq, (port, from)) in [(61_000u16, 7u16), (1024, 8), (65_535, 9), (61_000, 7)].into_iter().enumerate() {
                let n = t.write(&mut buf, seq as u64, 1_700_000_000_000_000_000, seq as u64);
                verify(&buf[..n], v4);
                let (s_at, d_at, l4) = if v4 { (26..30, 30..34, 34) } else { (22..38, 38..54, 54) };
                assert_eq!(buf[s_at].to_vec(), match me {
                    IpAddr::V4(a) => a.octets().to_vec(),
                    IpAddr::V6(a) => a.octets().to_vec(),
                }, "from the learned destination");
                assert_eq!(buf[d_at].to_vec(), match src.parse::<IpAddr>().unwrap() {
                    IpAddr::V4(a) => a.octets().to_vec(),
                    IpAddr::V6(a) => a.octets().to_vec(),
                });
                assert_eq!((u16::from_be_bytes([buf[l4], buf[l4 + 1]]), u16::from_be_bytes([buf[l4 + 2], buf[l4 + 3]])), (from, port), "frame {seq}");
            }
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

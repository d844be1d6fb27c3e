//! The receive loop: one thread polls every port's ring, counts test frames
//! per stream, hands ARP, Neighbor Discovery and Echo Requests for the
//! ports' own addresses to the responder (`responder.rs`, which also learns
//! the next hops' MACs), and counts everything else as foreign. It never panics on malformed input: every parser returns
//! `None` on short or inconsistent frames.

use crate::reassembly::{self, Added, Reassembler};
use crate::responder;
use crate::rxport::{Learned, RxPort};
use crate::ring::{Ring, RingStats, RxFrame};
use crate::stats::StreamCounters;
use crate::wire::ethernet::{self, Mac};
use crate::wire::{checksum, echo, icmpv6, ipv4, ipv6, signature, udp};
use crate::xsk::XskRx;
use std::net::IpAddr;
use std::os::unix::io::RawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// ICMPv4 error types (RFC 792, RFC 1812 §4.3.2.1 obsoletes none of these for our purpose).
fn is_icmpv4_error(t: u8) -> bool {
    matches!(t, 3 | 4 | 5 | 11 | 12)
}

/// What the first fragment of a datagram (or a whole one) carried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FirstPart {
    /// A test frame of this trial: stream index, sequence, transmit time.
    Test { stream: usize, seq: u64, tx_ns: u64 },
    /// The v6bench magic, but not a frame of this trial.
    BadSignature,
    /// Anything else.
    Other,
}

/// State shared between the receiver and the controlling thread.
pub struct Shared {
    pub stop: AtomicBool,
    /// Set once the traffic ended, with the frames each stream must receive
    /// for nothing to be missing (`drain_until_received`).
    pub awaited: std::sync::OnceLock<Vec<u64>>,
    /// Every awaited frame has arrived.
    pub all_received: AtomicBool,
    /// Frames sent before this CLOCK_REALTIME instant [ns] are not of this
    /// trial; `u64::MAX` until the traffic phase begins.
    pub counting_from_ns: AtomicU64,
    pub learned: Learned,
}

/// What a stream looks like to the receiver.
#[derive(Debug, Clone, Copy)]
pub struct StreamKey {
    pub rx_port: usize,
    pub ip_version: u8,
    /// An ICMP echo stream: its frames come back as Echo Replies.
    pub echo: bool,
    /// A translated stream (the spec's `rx_ip_version`): each whole frame's
    /// UDP checksum is checked, since the translator rewrote it (RFC 7915
    /// §4.5, §5.4); a frame that fails is `bad_checksum_frames`, not received.
    pub check_checksum: bool,
}

/// Whether UDP datagram `seg`, from `src` to `dst`, carries a valid
/// checksum: its one's-complement sum with the pseudo-header (the wire's
/// `pseudo_header_sum`) is 0xFFFF. An IPv4 datagram may carry none (0, RFC
/// 768); an IPv6 one must (RFC 8200 §8.1). None when `seg` holds less than
/// the datagram (a packet ring copies `ring::SNAPLEN` bytes).
fn udp_checksum_ok(src: IpAddr, dst: IpAddr, seg: &[u8]) -> Option<bool> {
    let len = usize::from(u16::from_be_bytes([*seg.get(4)?, *seg.get(5)?]));
    let whole = seg.get(..len).filter(|_| len >= udp::HEADER_LEN)?;
    let pseudo = match (src, dst) {
        (IpAddr::V4(_), IpAddr::V4(_)) if whole[6..8] == [0, 0] => return Some(true),
        (IpAddr::V4(s), IpAddr::V4(d)) => ipv4::pseudo_header_sum(s, d, ipv4::PROTO_UDP, len),
        (IpAddr::V6(s), IpAddr::V6(d)) => ipv6::pseudo_header_sum(s, d, ipv6::NH_UDP, len),
        _ => return Some(false),
    };
    Some(checksum::finish(checksum::sum(pseudo, whole)) == 0)
}

/// Classification and counting state of the receiver.
pub struct RxState {
    pub ports: Vec<RxPort>,
    pub keys: Vec<StreamKey>,
    pub streams: Vec<StreamCounters>,
    /// Fragmented datagrams being put together, per receiving port.
    pub reassembly: Vec<Reassembler<FirstPart>>,
}

/// How long the receive thread rests after a pass that found AF_XDP frames.
const XDP_NAP: std::time::Duration = std::time::Duration::from_micros(500);

/// Where a port's frames arrive: its backend's receive half.
pub enum RxQueue {
    /// A packet socket's TPACKET_V3 ring (`ring.rs`).
    Packet(Ring),
    /// The RX rings of the AF_XDP sockets, one a receive queue (`xsk.rs`).
    Xdp(Vec<XskRx>),
}

impl RxQueue {
    fn fds(&self) -> Vec<RawFd> {
        match self {
            RxQueue::Packet(r) => vec![r.fd()],
            RxQueue::Xdp(x) => x.iter().map(XskRx::fd).collect(),
        }
    }

    fn drain(&mut self, f: impl FnMut(RxFrame<'_>)) -> u64 {
        match self {
            RxQueue::Packet(r) => r.drain(f),
            RxQueue::Xdp(x) => {
                let mut f = f;
                x.iter_mut().map(|q| q.drain(&mut f)).sum()
            }
        }
    }

    /// Frames the kernel could not hand to the engine: the ring's drops, or
    /// the AF_XDP sockets' (RX ring full or no free chunk).
    fn take_stats(&self) -> RingStats {
        match self {
            RxQueue::Packet(r) => r.take_stats(),
            RxQueue::Xdp(x) => RingStats { drops: x.iter().map(|q| q.stats()).map(|s| s.rx_dropped + s.rx_ring_full).sum() },
        }
    }
}

/// The receiver: one queue per port (same order as `state.ports`) and the state.
pub struct Receiver {
    pub rings: Vec<RxQueue>,
    pub state: RxState,
    /// The SCHED_FIFO priority it ran at, none: an ordinary thread.
    pub fifo_priority: Option<u8>,
}

impl Receiver {
    /// Runs until `shared.stop` is set, then drains the rings once more and
    /// returns itself with the counts.
    /// With `priority`, the thread runs at SCHED_FIFO when every port
    /// receives through AF_XDP: it then rests after each pass that found
    /// frames, so it cannot hold its CPU. A packet socket's ring has no
    /// such rest, and a receiver with one stays an ordinary thread.
    pub fn run(mut self, shared: Arc<Shared>, cpu: Option<usize>, priority: Option<u8>) -> Result<Receiver, String> {
        if let Some(c) = cpu {
            crate::clock::pin_to_cpu(c)?;
        }
        if let Some(p) = priority.filter(|_| self.rings.iter().all(|r| matches!(r, RxQueue::Xdp(_)))) {
            crate::clock::set_fifo(p)?;
            self.fifo_priority = Some(p);
        }
        let mut fds: Vec<libc::pollfd> = self.rings.iter().flat_map(RxQueue::fds).map(|fd| libc::pollfd { fd, events: libc::POLLIN | libc::POLLERR, revents: 0 }).collect();
        loop {
            let stopping = shared.stop.load(Ordering::Acquire);
            // SAFETY: `fds` is a valid array of pollfd of the length passed.
            unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, 10) };
            let from = shared.counting_from_ns.load(Ordering::Acquire);
            let mut xdp_frames = 0;
            for (i, ring) in self.rings.iter_mut().enumerate() {
                let n = ring.drain(|f| self.state.handle(i, f, from, &shared.learned));
                if matches!(ring, RxQueue::Xdp(_)) {
                    xdp_frames += n;
                }
            }
            self.state.expire_fragments(crate::clock::realtime_ns());
            if stopping {
                break;
            }
            if let Some(awaited) = shared.awaited.get() {
                if !shared.all_received.load(Ordering::Relaxed) && self.state.streams.iter().zip(awaited).all(|(c, &a)| c.rx_frames >= a) {
                    shared.all_received.store(true, Ordering::Release);
                }
            }
            if xdp_frames > 0 {
                // An AF_XDP socket wakes its reader at every receive poll of
                // the driver; at high rates that would keep this thread on
                // the CPU it shares with the sender. Its frames are stamped
                // in XDP, so waiting costs no accuracy; its ring holds 8 ms.
                std::thread::sleep(XDP_NAP);
            }
        }
        self.state.expire_fragments(u64::MAX);
        for (p, r) in self.state.ports.iter_mut().zip(&self.rings) {
            p.ring_stats = r.take_stats();
        }
        Ok(self)
    }
}

impl RxState {
    /// A receiver state for `ports` and `keys` with empty counters.
    pub fn new(ports: Vec<RxPort>, keys: Vec<StreamKey>, streams: Vec<StreamCounters>) -> RxState {
        let reassembly = ports.iter().map(|_| Reassembler::default()).collect();
        RxState { ports, keys, streams, reassembly }
    }

    /// Gives up fragmented datagrams that waited too long for their other
    /// fragments (`reassembly::TIMEOUT_NS`; `u64::MAX`: all) and counts
    /// them incomplete, hence lost.
    pub fn expire_fragments(&mut self, now_ns: u64) {
        for (pi, r) in self.reassembly.iter_mut().enumerate() {
            if now_ns == u64::MAX {
                r.expire_all();
            } else {
                r.expire(now_ns, usize::MAX);
            }
            for d in r.take_given_up() {
                let c = &mut self.ports[pi].counters;
                match d.first {
                    // Fragments repeated after their datagram was whole.
                    Some(FirstPart::Test { stream, seq, .. }) if self.streams[stream].has(seq) => c.duplicate_fragments += u64::from(d.fragments),
                    Some(FirstPart::Test { stream, .. }) => {
                        c.incomplete_datagrams += 1;
                        self.streams[stream].incomplete_frames += 1;
                        self.streams[stream].rx_fragments += u64::from(d.fragments);
                    }
                    _ => c.incomplete_datagrams += 1,
                }
            }
        }
    }

    /// Classifies and counts one frame received on port `pi`.
    pub fn handle(&mut self, pi: usize, f: RxFrame<'_>, from_ns: u64, learned: &Learned) {
        let Some((_, eth_src, ethertype, off)) = ethernet::parse(f.data) else {
            self.ports[pi].counters.foreign_frames += 1;
            return;
        };
        let l3 = &f.data[off..];
        // Bytes of the packet that arrived, beyond what the ring copied.
        let l3_len = f.len.saturating_sub(off);
        let handled = match ethertype {
            ethernet::ETHERTYPE_ARP => responder::arp(&mut self.ports[pi], pi, l3, learned),
            ethernet::ETHERTYPE_IPV4 => self.on_ipv4(pi, &f, l3_len, from_ns),
            ethernet::ETHERTYPE_IPV6 => self.on_ipv6(pi, &f, l3_len, eth_src, from_ns, learned),
            _ => false,
        };
        if !handled {
            self.ports[pi].counters.foreign_frames += 1;
        }
    }

    fn on_ipv4(&mut self, pi: usize, f: &RxFrame<'_>, l3_len: usize, from_ns: u64) -> bool {
        let (l3, rx_ns) = (&f.data[ethernet::HEADER_LEN..], f.rx_ns);
        let Some(h) = ipv4::parse(l3) else { return false };
        if l3_len < h.total_len {
            return false; // truncated: never a test frame
        }
        let l4 = &l3[h.header_len..];
        match h.proto {
            ipv4::PROTO_UDP if h.is_fragment() => {
                let key = reassembly::Key { src: IpAddr::V4(h.src), dst: IpAddr::V4(h.dst), id: u32::from(h.ident) };
                let piece = reassembly::Piece { offset: h.frag_offset, len: h.total_len - h.header_len, more: h.more_fragments };
                self.on_fragment(pi, 4, key, piece, l4, rx_ns, from_ns);
                true
            }
            ipv4::PROTO_UDP => {
                let seg = l4.get(..h.total_len - h.header_len).unwrap_or(l4);
                self.on_udp(pi, 4, seg, (IpAddr::V4(h.src), IpAddr::V4(h.dst)), rx_ns, from_ns)
            }
            ipv4::PROTO_ICMP if h.is_fragment() => false,
            ipv4::PROTO_ICMP => match l4.first() {
                Some(&echo::V4_REPLY) => self.on_echo_reply(pi, 4, l4, rx_ns, from_ns),
                Some(&echo::V4_REQUEST) if Some(h.dst) == self.ports[pi].ipv4 => responder::echo_request(&mut self.ports[pi], f, ethernet::HEADER_LEN + h.header_len, IpAddr::V4(h.src)),
                Some(&t) => {
                    if is_icmpv4_error(t) {
                        self.ports[pi].counters.icmp_error_frames += 1;
                    }
                    false
                }
                None => false,
            },
            _ => false,
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn on_ipv6(&mut self, pi: usize, f: &RxFrame<'_>, l3_len: usize, eth_src: Mac, from_ns: u64, learned: &Learned) -> bool {
        let (l3, rx_ns) = (&f.data[ethernet::HEADER_LEN..], f.rx_ns);
        let Some(h) = ipv6::parse(l3) else { return false };
        if l3_len < h.total_len {
            return false;
        }
        let l4 = &l3[h.upper_offset..];
        if let Some(f) = h.fragment.filter(|_| h.is_fragment()) {
            if h.upper_proto != ipv6::NH_UDP || h.total_len < f.data_offset {
                return false;
            }
            let key = reassembly::Key { src: IpAddr::V6(h.src), dst: IpAddr::V6(h.dst), id: f.id };
            let piece = reassembly::Piece { offset: f.offset, len: h.total_len - f.data_offset, more: f.more };
            self.on_fragment(pi, 6, key, piece, l4, rx_ns, from_ns);
            return true;
        }
        match h.upper_proto {
            ipv6::NH_UDP => {
                let seg = l3.get(h.upper_offset..h.total_len).unwrap_or(l4);
                self.on_udp(pi, 6, seg, (IpAddr::V6(h.src), IpAddr::V6(h.dst)), rx_ns, from_ns)
            }
            ipv6::NH_ICMPV6 => {
                let Some(&t) = l4.first() else { return false };
                if t == echo::V6_REPLY {
                    self.on_echo_reply(pi, 6, l4, rx_ns, from_ns)
                } else if t == echo::V6_REQUEST && Some(h.dst) == self.ports[pi].ipv6 && h.ext_headers == 0 {
                    responder::echo_request(&mut self.ports[pi], f, ethernet::HEADER_LEN + h.upper_offset, IpAddr::V6(h.src))
                } else if t == icmpv6::TYPE_NS || t == icmpv6::TYPE_NA {
                    responder::nd(&mut self.ports[pi], pi, &h, l4, eth_src, learned)
                } else if (130..=143).contains(&t) {
                    // MLD (RFC 2710, 3810) and router discovery/redirect (RFC 4861).
                    self.ports[pi].counters.control_frames += 1;
                    true
                } else {
                    if icmpv6::is_error(t) {
                        self.ports[pi].counters.icmp_error_frames += 1;
                    }
                    false
                }
            }
            _ => false,
        }
    }

    /// What a UDP segment (or the start of one) carries.
    fn classify(&self, pi: usize, ip_version: u8, seg: &[u8], from_ns: u64) -> FirstPart {
        if udp::ports(seg).is_none() {
            return FirstPart::Other;
        }
        self.classify_data(pi, ip_version, false, &seg[udp::HEADER_LEN..], from_ns)
    }

    /// What the data behind a UDP or ICMP echo header carries.
    fn classify_data(&self, pi: usize, ip_version: u8, echo: bool, data: &[u8], from_ns: u64) -> FirstPart {
        let Some(sig) = signature::parse(data) else { return FirstPart::Other };
        let si = usize::from(sig.stream);
        let valid = self.keys.get(si).is_some_and(|k| k.rx_port == pi && k.ip_version == ip_version && k.echo == echo) && self.streams[si].accepts(sig.seq) && sig.tx_ns >= from_ns;
        if valid { FirstPart::Test { stream: si, seq: sig.seq, tx_ns: sig.tx_ns } } else { FirstPart::BadSignature }
    }

    /// Counts a whole datagram by what its (first) UDP bytes carried;
    /// false if it is not a test frame.
    fn count(&mut self, pi: usize, part: FirstPart, rx_ns: u64) -> bool {
        match part {
            FirstPart::Test { stream, seq, tx_ns } => {
                self.streams[stream].record(seq, tx_ns, rx_ns);
                self.ports[pi].counters.test_frames += 1;
                true
            }
            FirstPart::BadSignature => {
                self.ports[pi].counters.bad_signature_frames += 1;
                false
            }
            FirstPart::Other => false,
        }
    }

    /// An Echo Reply: a test frame of an `icmp_echo` stream come back.
    fn on_echo_reply(&mut self, pi: usize, ip_version: u8, msg: &[u8], rx_ns: u64, from_ns: u64) -> bool {
        let Some(data) = msg.get(echo::HEADER_LEN..) else { return false };
        let part = self.classify_data(pi, ip_version, true, data, from_ns);
        self.count(pi, part, rx_ns)
    }

    /// A UDP datagram `seg` (header and data as long as its IP header
    /// says, or what the ring copied of it) between `addrs` (source,
    /// destination); its checksum is summed only for a translated stream.
    fn on_udp(&mut self, pi: usize, ip_version: u8, seg: &[u8], addrs: (IpAddr, IpAddr), rx_ns: u64, from_ns: u64) -> bool {
        let part = self.classify(pi, ip_version, seg, from_ns);
        if let FirstPart::Test { stream, seq, .. } = part {
            if self.keys[stream].check_checksum {
                match udp_checksum_ok(addrs.0, addrs.1, seg) {
                    Some(true) => {}
                    Some(false) => {
                        self.ports[pi].counters.bad_checksum_frames += 1;
                        return true;
                    }
                    None => self.ports[pi].counters.checksum_unchecked_frames += 1,
                }
            }
            if let (Some(log), Some((src_port, dst_port))) = (&mut self.streams[stream].tuples, udp::ports(seg)) {
                log.learn(seq, addrs, src_port, dst_port);
            }
        }
        self.count(pi, part, rx_ns)
    }

    /// A fragment of a UDP datagram: `data` is its data, which starts with
    /// the UDP header in the first fragment. The datagram counts when it
    /// is whole, at the arrival of its last missing fragment.
    #[allow(clippy::too_many_arguments)]
    fn on_fragment(&mut self, pi: usize, ip_version: u8, key: reassembly::Key, piece: reassembly::Piece, data: &[u8], rx_ns: u64, from_ns: u64) {
        self.ports[pi].counters.fragment_frames += 1;
        let first = (piece.offset == 0).then(|| self.classify(pi, ip_version, data, from_ns));
        match self.reassembly[pi].add(key, piece, first, rx_ns) {
            Added::Pending => {}
            Added::Duplicate => self.ports[pi].counters.duplicate_fragments += 1,
            Added::Complete(d) => {
                let part = d.first.unwrap_or(FirstPart::Other);
                if let FirstPart::Test { stream, .. } = part {
                    let s = &mut self.streams[stream];
                    s.rx_fragments += u64::from(d.fragments);
                    s.reassembled_frames += 1;
                }
                if !self.count(pi, part, rx_ns) {
                    self.ports[pi].counters.foreign_frames += 1;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::Template;
    use crate::rxport::PortRxCounters;
    use crate::wire::arp;
    use std::sync::Mutex;
    use crate::spec::StreamPlan;

    const ME: Mac = Mac([0x02, 0x76, 0x36, 0, 0, 2]);

    fn state() -> (RxState, Vec<Template>) {
        let streams = [StreamPlan::for_test(0, "198.18.0.2", "198.19.0.2", 64), StreamPlan::for_test(1, "2001:2::2", "2001:2:0:1::2", 200)];
        let templates = streams.iter().map(|s| Template::new(s, Mac([2, 0, 0, 0, 0, 1]), ME)).collect();
        let st = RxState::new(
            vec![RxPort {
                tx_fd: -1,
                mac: ME,
                ipv4: Some("198.19.0.2".parse().unwrap()),
                ipv6: Some("2001:2:0:1::2".parse().unwrap()),
                gateway_ipv4: None,
                gateway_ipv6: None,
                lab: crate::rxport::LabNets::new(vec![("198.18.0.0".parse().unwrap(), 15), ("2001:2::".parse().unwrap(), 48)]),
                counters: PortRxCounters::default(),
                ring_stats: RingStats::default(),
            }],
            streams.iter().map(|s| StreamKey { rx_port: 0, ip_version: s.rx_ip_version, echo: false, check_checksum: s.translated() }).collect(),
            streams.iter().map(|s| StreamCounters::new(s.frames, crate::mix::LaneOf::single())).collect(),
        );
        (st, templates)
    }

    fn feed(st: &mut RxState, data: &[u8]) {
        let learned: Learned = Mutex::new(vec![(None, None)]);
        st.handle(0, RxFrame { data, len: data.len(), rx_ns: 2_000 }, 1_000, &learned);
    }

    #[test]
    fn every_truncation_of_a_test_frame_is_foreign_never_a_crash() {
        let (mut st, t) = state();
        let mut buf = vec![0u8; 256];
        for tpl in &t {
            let n = tpl.write(&mut buf, 5, 1_500, 5);
            for cut in 0..n {
                // Lengths the frame claims no longer match; the signature may be cut.
                feed(&mut st, &buf[..cut]);
            }
        }
        let c = st.ports[0].counters;
        // A frame shorter than its own IP length field never counts, even
        // with its signature intact.
        assert_eq!(c.test_frames, 0);
        assert_eq!(c.foreign_frames, (60 + 196) as u64);
        assert_eq!(st.streams[0].rx_frames + st.streams[1].rx_frames, 0);
        // The whole frames do count.
        for tpl in &t {
            let n = tpl.write(&mut buf, 5, 1_500, 5);
            feed(&mut st, &buf[..n]);
        }
        assert_eq!(st.ports[0].counters.test_frames, 2);
    }

    #[test]
    fn a_translated_stream_counts_as_the_family_it_arrives_as_with_its_checksum_checked() {
        // IPv6 sent, IPv4 received (NAT64): the translator keeps UDP's data,
        // the signature among it, and rewrites the checksum.
        let (mut st, _) = state();
        let sent = StreamPlan { rx_ip_version: 4, ..StreamPlan::for_test(1, "2001:2::2", "2001:2:0:6464::c613:2", 200) };
        st.keys[1] = StreamKey { rx_port: 0, ip_version: sent.rx_ip_version, echo: false, check_checksum: sent.translated() };
        st.streams[1].tuples = Some(crate::tuples::TupleLog::new(100, 4));
        assert_eq!(sent.rx_frame_size(), 180);
        let arrived = Template::new(&StreamPlan::for_test(1, "198.18.254.1", "198.19.0.2", 180), Mac([2, 0, 0, 0, 0, 1]), ME);
        let native = Template::new(&sent, Mac([2, 0, 0, 0, 0, 1]), ME);
        let mut buf = vec![0u8; 256];
        for seq in 0..4 {
            let n = arrived.write(&mut buf, seq, 1_500, seq);
            feed(&mut st, &buf[..n]);
        }
        let n = arrived.write(&mut buf, 4, 1_500, 4);
        buf[n - 5] ^= 0x01; // a byte of the padding changed on the way: the checksum no longer holds
        feed(&mut st, &buf[..n]);
        let n = native.write(&mut buf, 5, 1_500, 5);
        feed(&mut st, &buf[..n]); // the stream as sent: not how it arrives
        let n = arrived.write(&mut buf, 6, 1_500, 6);
        buf[40..42].copy_from_slice(&[0, 0]); // IPv4 without a UDP checksum (RFC 768): nothing to check
        feed(&mut st, &buf[..n]);
        let c = st.ports[0].counters;
        assert_eq!((st.streams[1].rx_frames, c.test_frames), (5, 5));
        assert_eq!((c.bad_checksum_frames, c.bad_signature_frames, c.checksum_unchecked_frames), (1, 1, 0));
        // What a packet ring cut short is counted, its checksum unchecked.
        let n = arrived.write(&mut buf, 7, 1_500, 7);
        st.handle(0, RxFrame { data: &buf[..n - 20], len: n, rx_ns: 2_000 }, 1_000, &Mutex::new(vec![(None, None)]));
        assert_eq!((st.streams[1].rx_frames, st.ports[0].counters.checksum_unchecked_frames), (6, 1));
        // Learned as they arrived: the translated source, the frames that counted (not the bad checksum).
        let learned = st.streams[1].tuples.as_ref().unwrap().result();
        assert_eq!((learned.count, learned.missing), (6, 94));
        let rep = crate::tuples::replies("r", &learned.records, 4, &|_: &IpAddr| true).unwrap();
        assert_eq!((&rep.dst_ip[..4], &rep.src_ip[..4]), (&[198, 18, 254, 1][..], &[198, 19, 0, 2][..]));
        assert_eq!((&rep.dst_port[..2], &rep.src_port[..2]), (&crate::spec::DEFAULT_SRC_PORT.to_be_bytes()[..], &crate::spec::DEFAULT_DST_PORT.to_be_bytes()[..]));
    }

    #[test]
    fn whole_frames_count_and_foreign_frames_do_not() {
        let (mut st, t) = state();
        let mut buf = vec![0u8; 256];
        for seq in 0..10 {
            let n = t[0].write(&mut buf, seq, 1_500, seq);
            feed(&mut st, &buf[..n]);
        }
        let n = t[0].write(&mut buf, 3, 1_500, 3);
        feed(&mut st, &buf[..n]); // duplicate
        let n = t[0].write(&mut buf, 100, 1_500, 100);
        feed(&mut st, &buf[..n]); // sequence beyond the plan
        let n = t[0].write(&mut buf, 11, 500, 11);
        feed(&mut st, &buf[..n]); // sent before the trial began
        let n = t[1].write(&mut buf, 0, 1_500, 0);
        buf[14] = 0x45; // IPv6 frame claiming to be IPv4: header no longer parses as its stream
        feed(&mut st, &buf[..n]);
        for junk in [&[0xffu8; 14][..], &[0u8; 60][..], &[0x08u8; 100][..]] {
            feed(&mut st, junk);
        }
        let c = st.ports[0].counters;
        assert_eq!(st.streams[0].rx_frames, 10);
        assert_eq!(st.streams[0].duplicate_frames, 1);
        assert_eq!(c.bad_signature_frames, 2);
        assert_eq!(c.test_frames, 11);
        assert_eq!(c.foreign_frames, 6);
    }

    #[test]
    fn arp_for_own_address_is_control_and_learns_gateway() {
        let (mut st, _) = state();
        st.ports[0].gateway_ipv4 = Some("198.19.0.1".parse().unwrap());
        let req = arp::Arp {
            op: arp::OP_REQUEST,
            sender_mac: Mac([2, 0, 0, 0, 0, 9]),
            sender_ip: "198.19.0.1".parse().unwrap(),
            target_mac: Mac::default(),
            target_ip: "198.19.0.2".parse().unwrap(),
        };
        let learned: Learned = Mutex::new(vec![(None, None)]);
        let f = arp::frame(Mac::BROADCAST, &req);
        st.handle(0, RxFrame { data: &f, len: f.len(), rx_ns: 0 }, 0, &learned);
        assert_eq!(st.ports[0].counters.control_frames, 1);
        assert_eq!(learned.lock().unwrap()[0].0, Some(Mac([2, 0, 0, 0, 0, 9])));
    }

    #[test]
    fn fragmented_frames_count_once_whole_and_lost_when_incomplete() {
        let (mut st, _) = state();
        for (si, src, dst, mtu, pieces) in [(0u16, "198.18.0.2", "198.19.0.2", 500, 4), (1, "2001:2::2", "2001:2:0:1::2", 1280, 2)] {
            let plan = StreamPlan { fragment_mtu: Some(mtu), ..StreamPlan::for_test(si, src, dst, 1518) };
            let t = Template::new(&plan, Mac([2, 0, 0, 0, 0, 1]), ME);
            assert_eq!(t.wire_frames(), pieces);
            let (mut slot, mut scratch) = (vec![0u8; t.wire_len()], vec![0u8; 1518]);
            // Datagram 0: last fragment first, one fragment twice.
            t.write_wire(&mut slot, &mut scratch, 0, 1_500, 1000);
            for j in (0..pieces).rev().chain([0]) {
                feed(&mut st, &slot[t.wire_frame(j)]);
            }
            // Datagram 1: its last fragment never arrives.
            t.write_wire(&mut slot, &mut scratch, 1, 1_500, 1001);
            for j in 0..pieces - 1 {
                feed(&mut st, &slot[t.wire_frame(j)]);
            }
            let c = &st.streams[usize::from(si)];
            assert_eq!((c.rx_frames, c.reassembled_frames, c.rx_fragments), (1, 1, pieces as u64), "IPv{}", plan.ip_version());
        }
        st.expire_fragments(u64::MAX);
        let p = st.ports[0].counters;
        assert_eq!((p.test_frames, p.fragment_frames, p.duplicate_fragments, p.incomplete_datagrams, p.foreign_frames), (2, 12, 2, 2, 0));
        for (si, pieces) in [(0, 4), (1, 2)] {
            let c = &st.streams[si];
            assert_eq!((c.rx_frames, c.incomplete_frames, c.rx_fragments), (1, 1, 2 * pieces as u64 - 1));
        }
    }

    #[test]
    fn echo_requests_to_the_port_are_answered_and_replies_count_for_their_stream() {
        for (v, src, dst) in [(4u8, "198.18.0.2", "198.19.0.2"), (6, "2001:2::2", "2001:2:0:1::2")] {
            let (mut st, _) = state();
            let si = if v == 4 { 0 } else { 1 };
            st.keys[si].echo = true;
            let plan = StreamPlan { protocol: crate::spec::Protocol::IcmpEcho, ..StreamPlan::for_test(si as u16, src, dst, 1000) };
            let t = Template::new(&plan, Mac([2, 0, 0, 0, 0, 1]), ME);
            let mut buf = vec![0u8; 1000];
            let n = t.write(&mut buf, 7, 1_500, 7);
            let l4 = 14 + if v == 4 { 20 } else { 40 };
            // The request, copied only in part (a 512-byte ring slot): still answered.
            let learned: Learned = Mutex::new(vec![(None, None)]);
            st.handle(0, RxFrame { data: &buf[..512], len: n, rx_ns: 2_000 }, 1_000, &learned);
            assert_eq!(st.ports[0].counters.echo_requests, 1);
            assert_eq!(st.ports[0].counters.foreign_frames, 0);
            // Its reply: valid checksums, and it counts for the stream.
            let mut reply = buf[..n].to_vec();
            echo::reply_in_place(&mut reply, l4, Mac([2, 0, 0, 0, 0, 9]));
            assert_eq!(reply[l4], if v == 4 { echo::V4_REPLY } else { echo::V6_REPLY });
            if v == 4 {
                assert_eq!(crate::wire::checksum::checksum(&reply[14..34]), 0);
                assert_eq!(crate::wire::checksum::checksum(&reply[34..]), 0);
            } else {
                let s: [u8; 16] = reply[22..38].try_into().unwrap();
                let d: [u8; 16] = reply[38..54].try_into().unwrap();
                let pseudo = ipv6::pseudo_header_sum(s.into(), d.into(), ipv6::NH_ICMPV6, n - l4);
                assert_eq!(crate::wire::checksum::finish(crate::wire::checksum::sum(pseudo, &reply[l4..])), 0);
            }
            feed(&mut st, &reply);
            assert_eq!(st.streams[si].rx_frames, 1, "IPv{v}");
            // A UDP stream's signature in an Echo Reply does not count.
            st.keys[si].echo = false;
            feed(&mut st, &reply);
            assert_eq!(st.ports[0].counters.bad_signature_frames, 1);
        }
    }

    fn is_fragment(frame: &[u8]) -> bool {
        match ethernet::parse(frame) {
            Some((_, _, ethernet::ETHERTYPE_IPV4, off)) => ipv4::parse(&frame[off..]).is_some_and(|h| h.is_fragment()),
            Some((_, _, ethernet::ETHERTYPE_IPV6, off)) => ipv6::parse(&frame[off..]).is_some_and(|h| h.is_fragment()),
            _ => false,
        }
    }

    /// Arbitrary frames on a port never panic the receiver, and each
    /// whole frame is counted exactly once: as a test frame, a control
    /// frame, an answered echo request, or foreign. (Fragments go to the
    /// reassembly and count when their datagram is whole: fed to a
    /// second receiver, which must only survive them.)
    #[test]
    fn arbitrary_frames_never_panic_and_each_is_counted_once() {
        let (mut whole, t) = state();
        let (mut pieces, _) = state();
        let mut rng = crate::fuzz::XorShift::for_test(0x9e37_79b9_7f4a_7c15);
        let mut fed = 0u64;
        let mut buf = vec![0u8; 1600];
        for i in 0..crate::fuzz::cases(200_000) {
            let n = match rng.below(4) {
                0 => {
                    let n = rng.below(300);
                    buf[..n].iter_mut().for_each(|b| *b = rng.next() as u8);
                    n
                }
                1 => {
                    // A header that parses, then noise.
                    let n = 14 + rng.below(200);
                    buf[..n].iter_mut().for_each(|b| *b = rng.next() as u8);
                    let et = [ethernet::ETHERTYPE_ARP, ethernet::ETHERTYPE_IPV4, ethernet::ETHERTYPE_IPV6][rng.below(3)];
                    buf[12..14].copy_from_slice(&et.to_be_bytes());
                    if n > 14 {
                        buf[14] = if et == ethernet::ETHERTYPE_IPV6 { 0x60 } else { 0x45 };
                    }
                    n
                }
                _ => {
                    // A test frame (or one from a far sequence) with a few bytes changed.
                    let tpl = &t[rng.below(t.len())];
                    let n = tpl.write(&mut buf, i % 150, 1_500 + i, i);
                    for _ in 0..1 + rng.below(3) {
                        let at = rng.below(n);
                        buf[at] ^= 1 << rng.below(8);
                    }
                    n - rng.below(3).min(n) * rng.below(2)
                }
            };
            let frame = &buf[..n];
            if is_fragment(frame) {
                feed(&mut pieces, frame);
            } else {
                feed(&mut whole, frame);
                fed += 1;
            }
        }
        let c = whole.ports[0].counters;
        assert_eq!(c.test_frames + c.control_frames + c.foreign_frames + c.echo_requests, fed, "{c:?}");
        assert!(c.foreign_frames > fed / 2, "most of them are foreign: {c:?}");
        assert_eq!(c.fragment_frames, 0);
    }

    #[test]
    fn requests_from_outside_the_lab_are_refused_and_foreign() {
        for (v, src, dst) in [(4u8, "10.0.0.1", "198.19.0.2"), (6, "2001:db8::1", "2001:2:0:1::2")] {
            let (mut st, _) = state();
            let si = if v == 4 { 0 } else { 1 };
            let plan = StreamPlan { protocol: crate::spec::Protocol::IcmpEcho, ..StreamPlan::for_test(si as u16, src, dst, 200) };
            let t = Template::new(&plan, Mac([2, 0, 0, 0, 0, 1]), ME);
            let mut buf = vec![0u8; 200];
            let n = t.write(&mut buf, 7, 1_500, 7);
            feed(&mut st, &buf[..n]);
            let c = st.ports[0].counters;
            assert_eq!((c.echo_requests, c.requests_refused, c.foreign_frames), (0, 1, 1), "IPv{v}");
        }
        // An ARP request for the port's address from outside: control traffic, not answered.
        let (mut st, _) = state();
        let req = arp::Arp { op: arp::OP_REQUEST, sender_mac: Mac([2, 0, 0, 0, 0, 7]), sender_ip: "10.0.0.1".parse().unwrap(),
                             target_mac: Mac::default(), target_ip: "198.19.0.2".parse().unwrap() };
        feed(&mut st, &arp::frame(Mac([0xff; 6]), &req));
        let c = st.ports[0].counters;
        assert_eq!((c.control_frames, c.requests_refused, c.replies_sent), (1, 1, 0));
        // From the lab: answered (here no socket, so only not refused).
        let req = arp::Arp { sender_ip: "198.18.0.1".parse().unwrap(), ..req };
        feed(&mut st, &arp::frame(Mac([0xff; 6]), &req));
        assert_eq!(st.ports[0].counters.requests_refused, 1);
    }
}

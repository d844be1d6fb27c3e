//! Connections learned on receive and answered on send (RFC 9693 §4:
//! the Responder "uses the 4-tuples it learned" from the frames that came
//! through a stateful DUT).
//!
//! A stream with `learn_tuples` records, for each of its frames that
//! arrives, the frame's 4-tuple as it arrived (after the DUT's address
//! and port translation), by the frame's sequence number. The result
//! carries them in sequence order (`learned_tuples`). A stream whose walk
//! has `reply_to` sends frame `k` as the reply to record `k mod n` of such
//! a list: to its source address and port, from its destination address
//! and port. So a reply needs no guess at the port the DUT chose, and
//! frame `k` of the reply stream answers the `k`-th connection learned.
//!
//! The records follow one byte, the IP version the frames arrived as (4
//! or 6). A record is the source and destination address (4 or 16 bytes
//! each), then the source and destination port (2 bytes each), all in
//! network order, records back to back; the text is its base64 (RFC 4648
//! §4).

use base64::Engine as _;
use serde::Serialize;
use std::net::IpAddr;

const PORTS_LEN: usize = 4;

fn address_len(ip_version: u8) -> usize {
    if ip_version == 4 { 4 } else { 16 }
}

/// A learning stream's records, by sequence number (a stream of
/// `planned` ≤ [`MAX_VALUES`] frames).
#[derive(Debug, Clone)]
pub struct TupleLog {
    ip_version: u8,
    record_len: usize,
    records: Vec<u8>,
    known: Vec<bool>,
}

impl TupleLog {
    /// An empty log for a stream of `planned` frames arriving as IPv`rx_ip_version`.
    pub fn new(planned: u64, rx_ip_version: u8) -> TupleLog {
        let record_len = 2 * address_len(rx_ip_version) + PORTS_LEN;
        TupleLog { ip_version: rx_ip_version, record_len, records: vec![0; planned as usize * record_len], known: vec![false; planned as usize] }
    }

    /// Records frame `seq`'s addresses (source, destination) and ports as
    /// it arrived (the caller checked that `seq` belongs to the stream); a
    /// repeat of a frame already recorded changes nothing.
    pub fn learn(&mut self, seq: u64, addrs: (IpAddr, IpAddr), src_port: u16, dst_port: u16) {
        let i = seq as usize;
        let Some(seen) = self.known.get_mut(i) else { return };
        if *seen {
            return;
        }
        let r = &mut self.records[i * self.record_len..(i + 1) * self.record_len];
        let a = (r.len() - PORTS_LEN) / 2;
        for (at, addr) in [(0, addrs.0), (a, addrs.1)] {
            match addr {
                IpAddr::V4(v) if a == 4 => r[at..at + 4].copy_from_slice(&v.octets()),
                IpAddr::V6(v) if a == 16 => r[at..at + 16].copy_from_slice(&v.octets()),
                _ => return, // another family than the stream arrives as: never counted as its frame
            }
        }
        let a = 2 * a;
        r[a..a + 2].copy_from_slice(&src_port.to_be_bytes());
        r[a + 2..].copy_from_slice(&dst_port.to_be_bytes());
        *seen = true;
    }

    /// What the result carries: the known records in sequence order.
    pub fn result(&self) -> LearnedTuples {
        let mut out = vec![self.ip_version];
        for (i, _) in self.known.iter().enumerate().filter(|(_, k)| **k) {
            out.extend_from_slice(&self.records[i * self.record_len..(i + 1) * self.record_len]);
        }
        let count = (out.len() - 1) / self.record_len;
        LearnedTuples { count: count as u64, missing: (self.known.len() - count) as u64, records: base64::engine::general_purpose::STANDARD.encode(out) }
    }
}

/// A stream's `learned_tuples` in the result.
#[derive(Debug, Serialize, Clone)]
pub struct LearnedTuples {
    /// Records: the stream's frames that arrived.
    pub count: u64,
    /// The stream's frames that did not arrive, hence not learned.
    pub missing: u64,
    /// The records, base64 (module docstring).
    pub records: String,
}

/// What a walk's `reply_to` gives a stream, record by record, in network
/// order: destination addresses (`address_len` bytes each, the learned
/// sources), source addresses (the learned destinations), destination
/// ports (the learned source ports) and source ports (the learned
/// destination ports).
#[derive(Debug)]
pub struct Replies {
    pub address_len: usize,
    pub dst_ip: Vec<u8>,
    pub src_ip: Vec<u8>,
    pub dst_port: Vec<u8>,
    pub src_port: Vec<u8>,
}

impl Replies {
    pub fn count(&self) -> usize {
        self.dst_port.len() / 2
    }
}

/// The replies a walk's `reply_to` (`f`) gives an IPv`ip_version`
/// stream; every address must be `allowed`.
pub fn replies(f: &str, text: &str, ip_version: u8, allowed: &impl Fn(&IpAddr) -> bool) -> Result<Replies, String> {
    let text = base64::engine::general_purpose::STANDARD.decode(text.trim()).map_err(|e| format!("{f}: not base64 ({e})"))?;
    let Some((&version, bytes)) = text.split_first() else { return Err(format!("{f}: empty")) };
    if version != ip_version {
        return Err(format!("{f}: records of IPv{version} frames; this stream is IPv{ip_version}"));
    }
    let a = address_len(ip_version);
    let record_len = 2 * a + PORTS_LEN;
    if bytes.is_empty() || bytes.len() % record_len != 0 {
        return Err(format!("{f}: {} bytes are not a whole number of IPv{ip_version} records of {record_len} bytes (at least one)", bytes.len()));
    }
    let n = bytes.len() / record_len;
    let (mut dst_ip, mut src_ip) = (Vec::with_capacity(n * a), Vec::with_capacity(n * a));
    let (mut dst_port, mut src_port) = (Vec::with_capacity(2 * n), Vec::with_capacity(2 * n));
    for (k, r) in bytes.chunks_exact(record_len).enumerate() {
        for at in [0, a] {
            let addr = if a == 4 { IpAddr::from(<[u8; 4]>::try_from(&r[at..at + 4]).expect("4 bytes")) } else { IpAddr::from(<[u8; 16]>::try_from(&r[at..at + 16]).expect("16 bytes")) };
            if !allowed(&addr) {
                return Err(format!("{f}: record {k}'s address {addr} leaves the benchmarking blocks 198.18.0.0/15 and 2001:2::/48; set allow_non_benchmarking_addresses to send there"));
            }
        }
        dst_ip.extend_from_slice(&r[..a]); // the learned source
        src_ip.extend_from_slice(&r[a..2 * a]); // the learned destination
        dst_port.extend_from_slice(&r[2 * a..2 * a + 2]); // the learned source port
        src_port.extend_from_slice(&r[2 * a + 2..]); // the learned destination port
    }
    Ok(Replies { address_len: a, dst_ip, src_ip, dst_port, src_port })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn any(_: &IpAddr) -> bool {
        true
    }

    #[test]
    fn learned_records_come_back_as_replies_paired_in_sequence_order() {
        let ip = |a: &str, b: &str| (a.parse().unwrap(), b.parse().unwrap());
        let mut log = TupleLog::new(4, 4);
        log.learn(2, ip("198.19.0.1", "198.19.0.7"), 40002, 7);
        log.learn(0, ip("198.19.0.1", "198.19.0.5"), 40000, 5);
        log.learn(0, ip("198.19.0.9", "198.19.0.9"), 1, 1); // a duplicate: the first stays
        log.learn(9, ip("198.19.0.1", "198.19.0.1"), 1, 1); // beyond the stream
        log.learn(3, ip("2001:2::1", "2001:2::2"), 1, 1); // not the family the stream arrives as
        let r = log.result();
        assert_eq!((r.count, r.missing), (2, 2));
        let rep = replies("w.reply_to", &r.records, 4, &any).unwrap();
        assert_eq!(rep.count(), 2);
        assert_eq!(rep.dst_ip, vec![198, 19, 0, 1, 198, 19, 0, 1], "the learned sources");
        assert_eq!(rep.src_ip, vec![198, 19, 0, 5, 198, 19, 0, 7], "the learned destinations");
        assert_eq!(rep.dst_port, [40000u16.to_be_bytes(), 40002u16.to_be_bytes()].concat(), "the learned source ports");
        assert_eq!(rep.src_port, [5u16.to_be_bytes(), 7u16.to_be_bytes()].concat(), "the learned destination ports");
    }

    #[test]
    fn ipv6_records_are_36_bytes_after_the_version() {
        let mut log = TupleLog::new(1, 6);
        log.learn(0, ("2001:2::9".parse().unwrap(), "2001:2::8".parse().unwrap()), 1, 2);
        let r = log.result();
        assert_eq!(base64::engine::general_purpose::STANDARD.decode(&r.records).unwrap().len(), 1 + 36);
        assert!(replies("f", &r.records, 4, &any).unwrap_err().contains("f: records of IPv6 frames; this stream is IPv4"));
        let rep = replies("f", &r.records, 6, &any).unwrap();
        assert_eq!((rep.address_len, rep.dst_ip.as_slice()), (16, "2001:2::9".parse::<std::net::Ipv6Addr>().unwrap().octets().as_slice()));
    }

    #[test]
    fn bad_records_are_refused_with_the_field() {
        let bench = |a: &IpAddr| crate::spec::is_benchmarking(a);
        let enc = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
        for (text, want) in [
            ("***".to_string(), "f: not base64"),
            (String::new(), "f: empty"),
            (enc(&[4]), "0 bytes are not a whole number"),
            (enc(&[4, 1, 2, 3]), "3 bytes are not a whole number of IPv4 records of 12 bytes"),
            (enc(&[4, 198, 18, 0, 1, 8, 8, 8, 8, 0, 1, 0, 2]), "f: record 0's address 8.8.8.8 leaves the benchmarking blocks"),
        ] {
            let e = replies("f", &text, 4, &bench).unwrap_err();
            assert!(e.contains(want), "{e}");
        }
    }
}

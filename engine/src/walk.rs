//! Fields a stream walks from frame to frame: destination and source
//! addresses and UDP ports (RFC 2544 §12: traffic to many destination
//! networks; RFC 3222 §3.4: a lookup per frame at the table's depth).
//!
//! A walked field takes the `k mod n`-th of its `n` values in frame `k` of
//! its stream (the frame's sequence number), so each value is sent exactly
//! once per cycle of `n` frames, whatever the lanes, mixes or runs around
//! it. The order is the list's, or a permutation drawn once from a seed
//! (`order: permuted`): the same permutation for every cycle and every run
//! with that seed, unlike a tester that draws each frame's value at random
//! and so repeats some values and misses others within a cycle. Each field
//! walks on its own; fields of different lengths combine as their
//! lengths' common multiple.
//!
//! Values are expanded and permuted when the spec is validated; the
//! template (`frame.rs`) keeps each value's checksum sum beside it, so a
//! frame costs a copy of the value and two additions, not a checksum over
//! the header.

use serde::Deserialize;
use std::net::IpAddr;
use std::sync::Arc;

/// Values one field may walk at most (a 1 M-route IPv4 table fits four times).
pub const MAX_VALUES: u64 = 1 << 22;

/// The spec's `walk` of a stream (`docs/engine-spec.md`).
#[derive(Debug, Deserialize, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct WalkSpec {
    /// Destination addresses: `"A"` or an inclusive range `"A-B"`.
    #[serde(default)]
    pub dst_ip: Vec<String>,
    /// Source addresses, likewise.
    #[serde(default)]
    pub src_ip: Vec<String>,
    /// UDP destination ports: a number, `"P"` or `"P-Q"`.
    #[serde(default)]
    pub dst_port: Vec<PortEntry>,
    /// UDP source ports, likewise.
    #[serde(default)]
    pub src_port: Vec<PortEntry>,
    /// Replies to connections learned on receive (`tuples.rs`): base64
    /// records; frame `k` goes to record `k mod n`'s source address and
    /// port, from its destination address and port. Takes the place of
    /// `dst_ip`, `src_ip`, `dst_port` and `src_port`; sent in the records'
    /// order.
    pub reply_to: Option<String>,
    #[serde(default)]
    pub order: Order,
    /// Seed of the permutation (`order: permuted` only); default 1.
    pub seed: Option<u64>,
}

/// A port entry: a number or a string `"P"` / `"P-Q"`.
#[derive(Debug, Deserialize, Clone)]
#[serde(untagged)]
pub enum PortEntry {
    One(u16),
    Text(String),
}

/// In which order a field's values are sent.
#[derive(Debug, Deserialize, serde::Serialize, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum Order {
    /// As listed, ranges ascending.
    #[default]
    Sequential,
    /// A permutation drawn once from `seed` (Fisher–Yates, splitmix64).
    Permuted,
}

/// Which header field a walk writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    DstIp,
    SrcIp,
    DstPort,
    SrcPort,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::DstIp => "dst_ip",
            Kind::SrcIp => "src_ip",
            Kind::DstPort => "dst_port",
            Kind::SrcPort => "src_port",
        }
    }
}

/// One walked field: its values in sending order, each `width` bytes in
/// network order back to back.
#[derive(Debug, Clone)]
pub struct Field {
    pub kind: Kind,
    pub width: usize,
    pub values: Arc<[u8]>,
}

impl Field {
    pub fn count(&self) -> u64 {
        (self.values.len() / self.width) as u64
    }

    /// The value frame `seq` of the stream carries.
    #[inline]
    pub fn value(&self, seq: u64) -> &[u8] {
        let i = (seq % self.count()) as usize;
        &self.values[i * self.width..(i + 1) * self.width]
    }

    /// The first value sent, as an address (address fields only).
    pub fn first_ip(&self) -> IpAddr {
        let v = self.value(0);
        if self.width == 4 {
            IpAddr::from(<[u8; 4]>::try_from(v).expect("4 bytes"))
        } else {
            IpAddr::from(<[u8; 16]>::try_from(v).expect("16 bytes"))
        }
    }

    /// The first value sent, as a port (port fields only).
    pub fn first_port(&self) -> u16 {
        u16::from_be_bytes([self.value(0)[0], self.value(0)[1]])
    }
}

/// A stream's validated walk.
#[derive(Debug, Clone)]
pub struct Walk {
    pub fields: Vec<Field>,
    pub order: Order,
    pub seed: Option<u64>,
}

impl Walk {
    pub fn field(&self, kind: Kind) -> Option<&Field> {
        self.fields.iter().find(|f| f.kind == kind)
    }
}

impl WalkSpec {
    /// The walk of an IPv`ip_version` stream: every entry parsed and of
    /// the family, ranges expanded, at most [`MAX_VALUES`] a field, then
    /// permuted if asked. `allowed` says whether an address may be sent to
    /// or from (the benchmarking blocks unless the spec allows others).
    pub fn plan(&self, f: &str, ip_version: u8, allowed: impl Fn(&IpAddr) -> bool) -> Result<Walk, String> {
        if self.seed.is_some() && self.order != Order::Permuted {
            return Err(format!("{f}.seed: only used with order \"permuted\""));
        }
        let mut fields = Vec::new();
        if let Some(text) = &self.reply_to {
            if !(self.dst_ip.is_empty() && self.src_ip.is_empty() && self.dst_port.is_empty() && self.src_port.is_empty()) {
                return Err(format!("{f}.reply_to: gives dst_ip, src_ip, dst_port and src_port; not with them"));
            }
            if self.order == Order::Permuted {
                return Err(format!("{f}.reply_to: replies pair each record's fields, so they are sent in the records' order (not \"permuted\")"));
            }
            let r = crate::tuples::replies(&format!("{f}.reply_to"), text, ip_version, &allowed)?;
            if r.count() as u64 > MAX_VALUES {
                return Err(format!("{f}.reply_to: more than {MAX_VALUES} records"));
            }
            fields.push(Field { kind: Kind::DstIp, width: r.address_len, values: r.dst_ip.into() });
            fields.push(Field { kind: Kind::SrcIp, width: r.address_len, values: r.src_ip.into() });
            fields.push(Field { kind: Kind::DstPort, width: 2, values: r.dst_port.into() });
            fields.push(Field { kind: Kind::SrcPort, width: 2, values: r.src_port.into() });
        }
        for (kind, entries) in [(Kind::DstIp, &self.dst_ip), (Kind::SrcIp, &self.src_ip)] {
            if !entries.is_empty() {
                fields.push(address_field(&format!("{f}.{}", kind.name()), kind, entries, ip_version, &allowed)?);
            }
        }
        for (kind, entries) in [(Kind::DstPort, &self.dst_port), (Kind::SrcPort, &self.src_port)] {
            if !entries.is_empty() {
                fields.push(port_field(&format!("{f}.{}", kind.name()), kind, entries)?);
            }
        }
        if fields.is_empty() {
            return Err(format!("{f}: walks nothing (give dst_ip, src_ip, dst_port, src_port or reply_to)"));
        }
        if self.order == Order::Permuted {
            let mut rng = SplitMix64(self.seed.unwrap_or(1));
            for field in &mut fields {
                let mut v = field.values.to_vec();
                permute(&mut v, field.width, &mut rng);
                field.values = v.into();
            }
        }
        let seed = (self.order == Order::Permuted).then(|| self.seed.unwrap_or(1));
        Ok(Walk { fields, order: self.order, seed })
    }
}

fn address_field(f: &str, kind: Kind, entries: &[String], ip_version: u8, allowed: &impl Fn(&IpAddr) -> bool) -> Result<Field, String> {
    let width = if ip_version == 4 { 4 } else { 16 };
    let mut total: u128 = 0;
    let mut ranges = Vec::with_capacity(entries.len());
    for (k, e) in entries.iter().enumerate() {
        let fk = format!("{f}[{k}]");
        let (a, b) = match e.split_once('-') {
            Some((a, b)) => (parse_ip(&fk, a, ip_version)?, parse_ip(&fk, b, ip_version)?),
            None => (parse_ip(&fk, e, ip_version)?, parse_ip(&fk, e, ip_version)?),
        };
        let (lo, hi) = (as_u128(a), as_u128(b));
        if hi < lo {
            return Err(format!("{fk}: {e:?} ends before it starts"));
        }
        // The benchmarking blocks are contiguous: a range whose ends lie in one lies in it.
        for end in [a, b] {
            if !allowed(&end) {
                return Err(format!(
                    "{fk}: {end} leaves the benchmarking blocks 198.18.0.0/15 and 2001:2::/48; set allow_non_benchmarking_addresses to send there"
                ));
            }
        }
        total += hi - lo + 1;
        if total > u128::from(MAX_VALUES) {
            return Err(format!("{f}: more than {MAX_VALUES} values"));
        }
        ranges.push((lo, hi));
    }
    let mut values = Vec::with_capacity(total as usize * width);
    for (lo, hi) in ranges {
        for x in lo..=hi {
            if width == 4 {
                values.extend_from_slice(&(x as u32).to_be_bytes());
            } else {
                values.extend_from_slice(&x.to_be_bytes());
            }
        }
    }
    Ok(Field { kind, width, values: values.into() })
}

/// An address of the stream's family.
fn parse_ip(f: &str, s: &str, ip_version: u8) -> Result<IpAddr, String> {
    let a: IpAddr = s.trim().parse().map_err(|_| format!("{f}: {s:?} is not an IP address"))?;
    if (a.is_ipv4() && ip_version != 4) || (a.is_ipv6() && ip_version != 6) {
        return Err(format!("{f}: {a} is not IPv{ip_version}, as the stream is"));
    }
    Ok(a)
}

fn as_u128(a: IpAddr) -> u128 {
    match a {
        IpAddr::V4(a) => u128::from(u32::from(a)),
        IpAddr::V6(a) => u128::from(a),
    }
}

fn port_field(f: &str, kind: Kind, entries: &[PortEntry]) -> Result<Field, String> {
    let mut values = Vec::new();
    for (k, e) in entries.iter().enumerate() {
        let fk = format!("{f}[{k}]");
        let port = |s: &str| s.trim().parse::<u16>().map_err(|_| format!("{fk}: {s:?} is not a port (0..=65535)"));
        let (lo, hi) = match e {
            PortEntry::One(p) => (*p, *p),
            PortEntry::Text(s) => match s.split_once('-') {
                Some((a, b)) => (port(a)?, port(b)?),
                None => (port(s)?, port(s)?),
            },
        };
        if hi < lo {
            return Err(format!("{fk}: {lo}-{hi} ends before it starts"));
        }
        if (values.len() / 2 + usize::from(hi - lo) + 1) as u64 > MAX_VALUES {
            return Err(format!("{f}: more than {MAX_VALUES} values"));
        }
        for p in lo..=hi {
            values.extend_from_slice(&p.to_be_bytes());
        }
    }
    Ok(Field { kind, width: 2, values: values.into() })
}

/// splitmix64 (Steele, Lea, Flood 2014): a small, fixed, well-mixed
/// generator, so a seed gives the same permutation on every machine.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in 0..n (Lemire's multiply-shift with rejection).
    fn below(&mut self, n: u64) -> u64 {
        loop {
            let m = u128::from(self.next()) * u128::from(n);
            if (m as u64) >= n.wrapping_neg() % n {
                return (m >> 64) as u64;
            }
        }
    }
}

/// Fisher–Yates over `values` of `width` bytes each.
fn permute(values: &mut [u8], width: usize, rng: &mut SplitMix64) {
    let n = values.len() / width;
    for i in (1..n).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        if i != j {
            for b in 0..width {
                values.swap(i * width + b, j * width + b);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(dst: &[&str], order: Order, seed: Option<u64>) -> WalkSpec {
        WalkSpec { dst_ip: dst.iter().map(|s| s.to_string()).collect(), order, seed, ..Default::default() }
    }

    fn any(_: &IpAddr) -> bool {
        true
    }

    #[test]
    fn ranges_expand_in_order() {
        let w = spec(&["198.18.0.254-198.18.1.1", "198.19.0.9"], Order::Sequential, None).plan("w", 4, any).unwrap();
        let f = w.field(Kind::DstIp).unwrap();
        let got: Vec<IpAddr> = (0..6).map(|k| IpAddr::from(<[u8; 4]>::try_from(f.value(k)).unwrap())).collect();
        let want: Vec<IpAddr> = ["198.18.0.254", "198.18.0.255", "198.18.1.0", "198.18.1.1", "198.19.0.9", "198.18.0.254"].iter().map(|s| s.parse().unwrap()).collect();
        assert_eq!(got, want, "a cycle of 5, then again");
    }

    #[test]
    fn a_permutation_visits_each_value_once_a_cycle_and_repeats_by_seed() {
        let walk = |seed| spec(&["2001:2::-2001:2::3e7"], Order::Permuted, seed).plan("w", 6, any).unwrap();
        let a = walk(Some(7));
        let f = a.field(Kind::DstIp).unwrap();
        assert_eq!(f.count(), 1000);
        let cycle: Vec<&[u8]> = (0..1000).map(|k| f.value(k)).collect();
        let mut sorted = cycle.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), 1000, "each value exactly once in a cycle");
        assert!((0..1000).all(|k| f.value(k) == f.value(k + 1000)), "every cycle the same");
        assert_eq!(f.values, walk(Some(7)).field(Kind::DstIp).unwrap().values, "same seed, same order");
        assert_ne!(f.values, walk(Some(8)).field(Kind::DstIp).unwrap().values, "another seed, another order");
        assert_eq!(walk(None).seed, Some(1));
        let in_order = (0..1000).filter(|&k| u128::from_be_bytes(f.value(k).try_into().unwrap()) & 0xffff == k as u128).count();
        assert!(in_order < 20, "a permutation, not the list ({in_order} in place)");
    }

    #[test]
    fn ports_from_numbers_and_ranges() {
        let w = WalkSpec { src_port: vec![PortEntry::One(7), PortEntry::Text("1024-1026".into())], ..Default::default() }.plan("w", 4, any).unwrap();
        let f = w.field(Kind::SrcPort).unwrap();
        assert_eq!((0..5).map(|k| u16::from_be_bytes(f.value(k).try_into().unwrap())).collect::<Vec<_>>(), vec![7, 1024, 1025, 1026, 7]);
    }

    #[test]
    fn errors_name_the_entry() {
        let bench = |a: &IpAddr| crate::spec::is_benchmarking(a);
        for (s, want) in [
            (spec(&["198.18.0.1", "2001:2::1"], Order::Sequential, None), "w.dst_ip[1]: 2001:2::1 is not IPv4"),
            (spec(&["198.18.0.9-198.18.0.1"], Order::Sequential, None), "w.dst_ip[0]: \"198.18.0.9-198.18.0.1\" ends before it starts"),
            (spec(&["198.18.0.1-10.0.0.1"], Order::Sequential, None), "ends before"),
            (spec(&["198.18.0.0-198.19.255.255", "198.18.0.1"], Order::Sequential, Some(3)), "w.seed: only used with order \"permuted\""),
            (spec(&["198.18.0.0-198.19.255.255"; 33], Order::Sequential, None), "w.dst_ip: more than 4194304 values"),
            (spec(&["8.8.8.8"], Order::Sequential, None), "w.dst_ip[0]: 8.8.8.8 leaves the benchmarking blocks"),
            (spec(&["banana"], Order::Sequential, None), "w.dst_ip[0]: \"banana\" is not an IP address"),
            (WalkSpec::default(), "w: walks nothing"),
        ] {
            let e = s.plan("w", 4, bench).unwrap_err();
            assert!(e.contains(want), "{e}");
        }
        let e = WalkSpec { dst_port: vec![PortEntry::Text("9-x".into())], ..Default::default() }.plan("w", 4, any).unwrap_err();
        assert!(e.contains("w.dst_port[0]: \"x\" is not a port"), "{e}");
    }
}

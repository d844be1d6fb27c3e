//! Ethernet II header (IEEE 802.3 clause 3.2.6 framing as used by IP).

use std::fmt;

pub const HEADER_LEN: usize = 14;
pub const DST: std::ops::Range<usize> = 0..6;
pub const SRC: std::ops::Range<usize> = 6..12;
pub const ETHERTYPE: std::ops::Range<usize> = 12..14;

pub const ETHERTYPE_IPV4: u16 = 0x0800;
pub const ETHERTYPE_ARP: u16 = 0x0806;
pub const ETHERTYPE_IPV6: u16 = 0x86dd;

/// A 48-bit MAC address.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Mac(pub [u8; 6]);

impl Mac {
    pub const BROADCAST: Mac = Mac([0xff; 6]);

    /// The engine's own MAC for a port on an interface whose MAC is `iface`:
    /// locally administered unicast 02:76:36 ("v6") followed by the
    /// interface MAC's last three bytes. Frames to it are not for the
    /// tester host's kernel (PACKET_OTHERHOST), so its IP stack never
    /// processes test traffic.
    pub fn engine_port(iface: Mac) -> Mac {
        let m = iface.0;
        Mac([0x02, 0x76, 0x36, m[3], m[4], m[5]])
    }

    /// The IPv6 multicast MAC for a group address (RFC 2464 §7).
    pub fn ipv6_multicast(group: &std::net::Ipv6Addr) -> Mac {
        let o = group.octets();
        Mac([0x33, 0x33, o[12], o[13], o[14], o[15]])
    }
}

impl fmt::Display for Mac {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let m = self.0;
        write!(f, "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}", m[0], m[1], m[2], m[3], m[4], m[5])
    }
}

impl fmt::Debug for Mac {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl std::str::FromStr for Mac {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let parts: Vec<&str> = s.split(':').collect();
        if parts.len() != 6 {
            return Err(format!("MAC address {s:?} must be six hex bytes separated by ':'"));
        }
        let mut m = [0u8; 6];
        for (i, p) in parts.iter().enumerate() {
            m[i] = u8::from_str_radix(p, 16).map_err(|_| format!("MAC address {s:?} has a bad byte {p:?}"))?;
        }
        Ok(Mac(m))
    }
}

/// Writes the header into `buf[..14]`.
pub fn emit(buf: &mut [u8], dst: Mac, src: Mac, ethertype: u16) {
    buf[DST].copy_from_slice(&dst.0);
    buf[SRC].copy_from_slice(&src.0);
    buf[ETHERTYPE].copy_from_slice(&ethertype.to_be_bytes());
}

/// A parsed header: (destination, source, ethertype, payload offset).
/// One IEEE 802.1Q tag is skipped; returns `None` on a short frame.
pub fn parse(frame: &[u8]) -> Option<(Mac, Mac, u16, usize)> {
    if frame.len() < HEADER_LEN {
        return None;
    }
    let dst = Mac(frame[DST].try_into().ok()?);
    let src = Mac(frame[SRC].try_into().ok()?);
    let mut ethertype = u16::from_be_bytes([frame[12], frame[13]]);
    let mut off = HEADER_LEN;
    if ethertype == 0x8100 {
        if frame.len() < HEADER_LEN + 4 {
            return None;
        }
        ethertype = u16::from_be_bytes([frame[16], frame[17]]);
        off += 4;
    }
    Some((dst, src, ethertype, off))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mac_round_trip() {
        let m: Mac = "02:00:5e:10:00:0a".parse().unwrap();
        assert_eq!(m.to_string(), "02:00:5e:10:00:0a");
        assert!("02:00:5e:10:00".parse::<Mac>().is_err());
        assert!("02:00:5e:10:00:zz".parse::<Mac>().is_err());
    }

    #[test]
    fn parse_rejects_short_and_skips_vlan() {
        assert!(parse(&[0u8; 13]).is_none());
        let mut f = [0xa5u8; 18];
        f[12..14].copy_from_slice(&0x8100u16.to_be_bytes());
        f[16..18].copy_from_slice(&0x86ddu16.to_be_bytes());
        assert_eq!(parse(&f).unwrap().2, ETHERTYPE_IPV6);
        assert_eq!(parse(&f).unwrap().3, 18);
        assert!(parse(&f[..16]).is_none());
    }
}

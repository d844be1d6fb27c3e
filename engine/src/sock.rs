//! AF_PACKET sockets and interface facts (packet(7), netdevice(7)).
//!
//! Test frames are sent on a socket bound with protocol 0, which therefore
//! receives nothing; it bypasses the qdisc (PACKET_QDISC_BYPASS) so the
//! engine paces, not the kernel. Frames are received on a second socket
//! with a TPACKET_V3 ring (see `ring`).

use crate::wire::ethernet::Mac;
use std::os::unix::io::{AsRawFd, FromRawFd, OwnedFd, RawFd};

pub const SOL_PACKET: libc::c_int = 263;
pub const PACKET_RX_RING: libc::c_int = 5;
pub const PACKET_STATISTICS: libc::c_int = 6;
pub const PACKET_VERSION: libc::c_int = 10;
pub const PACKET_QDISC_BYPASS: libc::c_int = 20;
pub const PACKET_IGNORE_OUTGOING: libc::c_int = 23;
pub const TPACKET_V3: libc::c_int = 2;
const ETH_P_ALL: u16 = 0x0003;

fn errno(what: &str) -> String {
    format!("{what}: {}", std::io::Error::last_os_error())
}

/// setsockopt with a plain-data value.
pub fn set_opt<T>(fd: RawFd, level: libc::c_int, name: libc::c_int, val: &T, what: &str) -> Result<(), String> {
    // SAFETY: `val` points to a live T of the size passed.
    let r = unsafe { libc::setsockopt(fd, level, name, val as *const T as *const libc::c_void, std::mem::size_of::<T>() as libc::socklen_t) };
    if r != 0 { Err(errno(what)) } else { Ok(()) }
}

/// Facts about an interface, read in its namespace.
#[derive(Debug, Clone)]
pub struct IfInfo {
    pub index: i32,
    pub mac: Mac,
    pub mtu: usize,
    pub up: bool,
    /// The kernel driver ("veth" on the emulated lab), if it says.
    pub driver: Option<String>,
    /// Receive and transmit queues in use (ethtool channels: the driver's
    /// own plus the combined ones); 1 each where the driver does not say.
    pub rx_queues: u32,
    pub tx_queues: u32,
}

fn ifreq(name: &str) -> libc::ifreq {
    // SAFETY: ifreq is plain data; all-zero is a valid value.
    let mut r: libc::ifreq = unsafe { std::mem::zeroed() };
    for (d, s) in r.ifr_name.iter_mut().zip(name.bytes()) {
        *d = s as libc::c_char;
    }
    r
}

fn ioctl(fd: RawFd, req: libc::c_ulong, r: &mut libc::ifreq) -> bool {
    // SAFETY: `r` is a valid ifreq for these SIOCGIF* requests, which only
    // write inside it (SIOCETHTOOL writes the buffer its ifru_data points at,
    // which the caller sizes for the command and keeps alive across the call).
    unsafe { libc::ioctl(fd, req as _, r as *mut libc::ifreq) == 0 }
}

/// Reads index, MAC, MTU and up-state of `name` through socket `fd`.
pub fn if_info(fd: RawFd, name: &str) -> Result<IfInfo, String> {
    let mut r = ifreq(name);
    if !ioctl(fd, libc::SIOCGIFINDEX, &mut r) {
        return Err(format!("unknown interface {name:?}"));
    }
    // SAFETY: SIOCGIFINDEX filled the ifru_ifindex member.
    let index = unsafe { r.ifr_ifru.ifru_ifindex };
    let mut r = ifreq(name);
    if !ioctl(fd, libc::SIOCGIFHWADDR, &mut r) {
        return Err(errno(&format!("interface {name:?}: cannot read MAC")));
    }
    // SAFETY: SIOCGIFHWADDR filled ifru_hwaddr.
    let hw = unsafe { r.ifr_ifru.ifru_hwaddr };
    if hw.sa_family != libc::ARPHRD_ETHER {
        return Err(format!("interface {name:?} is not Ethernet (ARPHRD {})", hw.sa_family));
    }
    let mut mac = [0u8; 6];
    for (d, s) in mac.iter_mut().zip(hw.sa_data.iter()) {
        *d = *s as u8;
    }
    let mut r = ifreq(name);
    if !ioctl(fd, libc::SIOCGIFMTU, &mut r) {
        return Err(errno(&format!("interface {name:?}: cannot read MTU")));
    }
    // SAFETY: SIOCGIFMTU filled ifru_mtu.
    let mtu = unsafe { r.ifr_ifru.ifru_mtu } as usize;
    let mut r = ifreq(name);
    if !ioctl(fd, libc::SIOCGIFFLAGS, &mut r) {
        return Err(errno(&format!("interface {name:?}: cannot read flags")));
    }
    // SAFETY: SIOCGIFFLAGS filled ifru_flags.
    let flags = unsafe { r.ifr_ifru.ifru_flags } as libc::c_int;
    let (rx_queues, tx_queues) = channels(fd, name).unwrap_or((1, 1));
    Ok(IfInfo { index, mac: Mac(mac), mtu, up: flags & libc::IFF_UP != 0 && flags & libc::IFF_RUNNING != 0, driver: driver(fd, name), rx_queues, tx_queues })
}

/// The receive and transmit queues of `name` in use (ETHTOOL_GCHANNELS,
/// `ethtool -l`): its receive-only or transmit-only channels plus the
/// combined ones, at least 1 each; None if the driver does not say.
pub fn channels(fd: RawFd, name: &str) -> Option<(u32, u32)> {
    const ETHTOOL_GCHANNELS: u32 = 0x3c;
    // struct ethtool_channels: cmd, max_rx, max_tx, max_other, max_combined,
    // rx_count, tx_count, other_count, combined_count (u32 each).
    let mut c = [0u32; 9];
    c[0] = ETHTOOL_GCHANNELS;
    let mut r = ifreq(name);
    r.ifr_ifru.ifru_data = c.as_mut_ptr() as *mut libc::c_char;
    if !ioctl(fd, libc::SIOCETHTOOL, &mut r) {
        return None;
    }
    Some(((c[5] + c[8]).max(1), (c[6] + c[8]).max(1)))
}

/// The kernel driver of `name` (ETHTOOL_GDRVINFO), e.g. "veth"; None if
/// the interface does not say.
pub fn driver(fd: RawFd, name: &str) -> Option<String> {
    const ETHTOOL_GDRVINFO: u32 = 0x0000_0003;
    // struct ethtool_drvinfo: u32 cmd, char driver[32], … (196 bytes).
    let mut info = [0u8; 196];
    info[..4].copy_from_slice(&ETHTOOL_GDRVINFO.to_ne_bytes());
    let mut r = ifreq(name);
    r.ifr_ifru.ifru_data = info.as_mut_ptr() as *mut libc::c_char;
    if !ioctl(fd, libc::SIOCETHTOOL, &mut r) {
        return None;
    }
    let d = &info[4..36];
    let end = d.iter().position(|&b| b == 0).unwrap_or(d.len());
    Some(String::from_utf8_lossy(&d[..end]).into_owned())
}

/// An ethtool command whose buffer is `buf` (sized for the command).
fn ethtool(fd: RawFd, name: &str, buf: &mut [u64]) -> bool {
    let mut r = ifreq(name);
    r.ifr_ifru.ifru_data = buf.as_mut_ptr() as *mut libc::c_char;
    ioctl(fd, libc::SIOCETHTOOL, &mut r)
}

/// The driver's statistics of `name` (`ethtool -S`): (name, value) pairs;
/// `None` if the driver has none.
pub fn ethtool_stats(fd: RawFd, name: &str) -> Option<Vec<(String, u64)>> {
    const ETHTOOL_GSTRINGS: u32 = 0x1b;
    const ETHTOOL_GSTATS: u32 = 0x1d;
    const ETHTOOL_GSSET_INFO: u32 = 0x37;
    const ETH_SS_STATS: u32 = 1;
    const GSTRING_LEN: usize = 32;
    let word = |a: u32, b: u32| {
        let mut w = [0u8; 8];
        w[..4].copy_from_slice(&a.to_ne_bytes());
        w[4..].copy_from_slice(&b.to_ne_bytes());
        u64::from_ne_bytes(w)
    };
    // struct ethtool_sset_info: u32 cmd, u32 reserved, u64 sset_mask, u32 data[1].
    let mut info = [word(ETHTOOL_GSSET_INFO, 0), 1 << ETH_SS_STATS, 0];
    if !ethtool(fd, name, &mut info) || info[1] == 0 {
        return None;
    }
    let n = u32::from_ne_bytes(info[2].to_ne_bytes()[..4].try_into().ok()?) as usize;
    // struct ethtool_gstrings: u32 cmd, u32 string_set, u32 len, u8 data[len × 32].
    let mut names = vec![0u64; (12 + n * GSTRING_LEN).div_ceil(8)];
    names[0] = word(ETHTOOL_GSTRINGS, ETH_SS_STATS);
    names[1] = word(n as u32, 0);
    // struct ethtool_stats: u32 cmd, u32 n_stats, u64 data[n].
    let mut stats = vec![0u64; 1 + n];
    stats[0] = word(ETHTOOL_GSTATS, n as u32);
    if !ethtool(fd, name, &mut names) || !ethtool(fd, name, &mut stats) {
        return None;
    }
    let bytes: Vec<u8> = names.iter().flat_map(|w| w.to_ne_bytes()).collect();
    let out = (0..n)
        .map(|i| {
            let s = &bytes[12 + i * GSTRING_LEN..12 + (i + 1) * GSTRING_LEN];
            let s = &s[..s.iter().position(|&b| b == 0).unwrap_or(GSTRING_LEN)];
            (String::from_utf8_lossy(s).into_owned(), stats[1 + i])
        })
        .collect();
    Some(out)
}

/// A raw AF_PACKET socket with no protocol bound yet.
pub fn packet_socket() -> Result<OwnedFd, String> {
    // SAFETY: plain socket(2) call; the fd is owned below.
    let fd = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(errno("cannot open a packet socket (the engine needs root or CAP_NET_RAW)"));
    }
    // SAFETY: `fd` is a fresh descriptor we own.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// A socket for interface ioctls only (`if_info`, `channels`): a UDP
/// socket, whose close is immediate, where a packet socket's close waits
/// for an RCU grace period (`packet_release`'s `synchronize_net`, about
/// 10 ms a port in every trial).
pub fn ioctl_socket() -> Result<OwnedFd, String> {
    // SAFETY: plain socket(2) call; the fd is owned below.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(errno("cannot open a socket for interface queries"));
    }
    // SAFETY: `fd` is a fresh descriptor we own.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Binds `fd` to interface `ifindex` for `protocol` (host order; 0 = none).
pub fn bind(fd: RawFd, ifindex: i32, protocol: u16) -> Result<(), String> {
    // SAFETY: sockaddr_ll is plain data.
    let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
    sll.sll_family = libc::AF_PACKET as u16;
    sll.sll_protocol = protocol.to_be();
    sll.sll_ifindex = ifindex;
    // SAFETY: `sll` is a valid sockaddr_ll of the size passed.
    let r = unsafe { libc::bind(fd, &sll as *const libc::sockaddr_ll as *const libc::sockaddr, std::mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t) };
    if r != 0 { Err(errno("cannot bind packet socket")) } else { Ok(()) }
}

/// A socket that sends on `ifindex` and receives nothing.
pub fn tx_socket(ifindex: i32) -> Result<OwnedFd, String> {
    let s = packet_socket()?;
    let fd = s.as_raw_fd();
    bind(fd, ifindex, 0)?;
    set_opt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &1i32, "PACKET_QDISC_BYPASS")?;
    set_buffer(fd, libc::SO_SNDBUFFORCE, libc::SO_SNDBUF, 4 << 20, "SO_SNDBUF")?;
    Ok(s)
}

/// Sets a socket buffer to `bytes` with `forced` (SO_SNDBUFFORCE or
/// SO_RCVBUFFORCE, which need CAP_NET_ADMIN), falling back to the capped
/// `plain` option.
pub fn set_buffer(fd: RawFd, forced: libc::c_int, plain: libc::c_int, bytes: i32, what: &str) -> Result<(), String> {
    if set_opt(fd, libc::SOL_SOCKET, forced, &bytes, what).is_err() {
        set_opt(fd, libc::SOL_SOCKET, plain, &bytes, what)?;
    }
    Ok(())
}

/// Binds an already configured receive socket to all protocols on `ifindex`.
pub fn bind_rx(fd: RawFd, ifindex: i32) -> Result<(), String> {
    set_opt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &1i32, "PACKET_IGNORE_OUTGOING")?;
    bind(fd, ifindex, ETH_P_ALL)
}

/// Puts the interface in promiscuous mode for as long as `fd` is open
/// (PACKET_ADD_MEMBERSHIP with PACKET_MR_PROMISC, packet(7)).
pub fn promiscuous(fd: RawFd, ifindex: i32) -> Result<(), String> {
    const PACKET_ADD_MEMBERSHIP: libc::c_int = 1;
    const PACKET_MR_PROMISC: libc::c_ushort = 1;
    let mreq = libc::packet_mreq { mr_ifindex: ifindex, mr_type: PACKET_MR_PROMISC, mr_alen: 0, mr_address: [0; 8] };
    set_opt(fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mreq, "PACKET_ADD_MEMBERSHIP (promiscuous)")
}

/// Sends one frame on a bound socket; used for ARP/ND, not at rate.
pub fn send(fd: RawFd, frame: &[u8]) -> Result<(), String> {
    // SAFETY: `frame` is a valid buffer of the length passed.
    let r = unsafe { libc::send(fd, frame.as_ptr() as *const libc::c_void, frame.len(), 0) };
    if r < 0 { Err(errno("send")) } else { Ok(()) }
}

/// Kernel counters of one interface, from /proc/thread-self/net/dev of the
/// calling thread's namespace.
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct IfCounters {
    pub rx_packets: u64,
    pub rx_dropped: u64,
    pub tx_packets: u64,
    pub tx_dropped: u64,
}

impl IfCounters {
    /// Reads the counters of `name`; `None` if it cannot be read.
    pub fn read(name: &str) -> Option<IfCounters> {
        let text = std::fs::read_to_string("/proc/thread-self/net/dev").ok()?;
        Self::parse(&text, name)
    }

    fn parse(text: &str, name: &str) -> Option<IfCounters> {
        for line in text.lines().skip(2) {
            let (n, rest) = line.split_once(':')?;
            if n.trim() != name {
                continue;
            }
            let v: Vec<u64> = rest.split_whitespace().filter_map(|x| x.parse().ok()).collect();
            if v.len() < 16 {
                return None;
            }
            return Some(IfCounters { rx_packets: v[1], rx_dropped: v[3], tx_packets: v[9], tx_dropped: v[11] });
        }
        None
    }

    /// Counts since `before`.
    pub fn since(&self, before: &IfCounters) -> IfCounters {
        IfCounters {
            rx_packets: self.rx_packets.wrapping_sub(before.rx_packets),
            rx_dropped: self.rx_dropped.wrapping_sub(before.rx_dropped),
            tx_packets: self.tx_packets.wrapping_sub(before.tx_packets),
            tx_dropped: self.tx_dropped.wrapping_sub(before.tx_dropped),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_proc_net_dev() {
        let text = "Inter-|   Receive                                                |  Transmit\n face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n    lo: 100 2 0 0 0 0 0 0 100 2 0 0 0 0 0 0\n t1-r1: 6400 100 0 3 0 0 0 0 128 2 0 7 0 0 0 0\n";
        let c = IfCounters::parse(text, "t1-r1").unwrap();
        assert_eq!((c.rx_packets, c.rx_dropped, c.tx_packets, c.tx_dropped), (100, 3, 2, 7));
        assert!(IfCounters::parse(text, "eth9").is_none());
    }
}

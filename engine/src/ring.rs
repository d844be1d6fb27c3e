//! TPACKET_V3 receive ring (packet(7), Documentation/networking/packet_mmap.rst).
//!
//! The kernel copies each received frame (cut to `SNAPLEN` bytes by a
//! one-instruction socket filter) into a block of a shared ring with its
//! software receive timestamp (CLOCK_REALTIME) and original length. User
//! space walks blocks the kernel has handed over and gives them back.
//! Frames the kernel could not place because the ring was full are counted
//! in PACKET_STATISTICS `tp_drops`: the tester's own receive drops.

use crate::sock::{self, SOL_PACKET};
use std::os::unix::io::{AsRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicU32, Ordering};

/// Bytes of each frame copied to user space: enough for Ethernet, VLAN,
/// IPv6 with extension headers, UDP and the signature.
pub const SNAPLEN: u32 = 512;
const BLOCK_SIZE: u32 = 1 << 20;
const BLOCK_NR: u32 = 64;
const FRAME_SIZE: u32 = 2048;
/// A partly filled block is handed over after this long [ms].
const RETIRE_TOV_MS: u32 = 2;
const TP_STATUS_KERNEL: u32 = 0;
const TP_STATUS_USER: u32 = 1;

// struct tpacket_block_desc / tpacket_hdr_v1 offsets.
const BD_STATUS: usize = 8;
const BD_NUM_PKTS: usize = 12;
const BD_FIRST_PKT: usize = 16;
// struct tpacket3_hdr offsets.
const H_NEXT: usize = 0;
const H_SEC: usize = 4;
const H_NSEC: usize = 8;
const H_SNAPLEN: usize = 12;
const H_LEN: usize = 16;
const H_MAC: usize = 24;

#[repr(C)]
struct TpacketReq3 {
    block_size: u32,
    block_nr: u32,
    frame_size: u32,
    frame_nr: u32,
    retire_blk_tov: u32,
    sizeof_priv: u32,
    feature_req_word: u32,
}

#[repr(C)]
struct SockFilter {
    code: u16,
    jt: u8,
    jf: u8,
    k: u32,
}

#[repr(C)]
struct SockFprog {
    len: u16,
    filter: *const SockFilter,
}

/// Kernel receive counters of a packet socket since the last read.
#[derive(Debug, Clone, Copy, Default)]
pub struct RingStats {
    pub drops: u64,
}

/// One received frame as the ring holds it.
pub struct RxFrame<'a> {
    /// The first `min(len, SNAPLEN)` bytes of the frame.
    pub data: &'a [u8],
    /// Length of the whole frame as received (without FCS).
    pub len: usize,
    /// Kernel receive timestamp, ns since the epoch (CLOCK_REALTIME).
    pub rx_ns: u64,
}

/// A mapped receive ring bound to one interface.
pub struct Ring {
    fd: OwnedFd,
    map: *mut u8,
    map_len: usize,
    next_block: u32,
}

// SAFETY: the mapping belongs to this Ring alone and is only touched through &mut self.
unsafe impl Send for Ring {}

impl Ring {
    /// Creates the socket and ring and binds it to `ifindex`; call inside
    /// the interface's namespace.
    pub fn open(ifindex: i32) -> Result<Ring, String> {
        let fd = sock::packet_socket()?;
        let raw = fd.as_raw_fd();
        sock::set_opt(raw, SOL_PACKET, sock::PACKET_VERSION, &sock::TPACKET_V3, "PACKET_VERSION")?;
        let req = TpacketReq3 {
            block_size: BLOCK_SIZE,
            block_nr: BLOCK_NR,
            frame_size: FRAME_SIZE,
            frame_nr: BLOCK_SIZE / FRAME_SIZE * BLOCK_NR,
            retire_blk_tov: RETIRE_TOV_MS,
            sizeof_priv: 0,
            feature_req_word: 0,
        };
        sock::set_opt(raw, SOL_PACKET, sock::PACKET_RX_RING, &req, "PACKET_RX_RING")?;
        let filter = [SockFilter { code: 0x06, jt: 0, jf: 0, k: SNAPLEN }]; // BPF_RET|BPF_K: keep SNAPLEN bytes
        let prog = SockFprog { len: 1, filter: filter.as_ptr() };
        sock::set_opt(raw, libc::SOL_SOCKET, libc::SO_ATTACH_FILTER, &prog, "SO_ATTACH_FILTER")?;
        let map_len = (BLOCK_SIZE * BLOCK_NR) as usize;
        // SAFETY: mapping the ring the kernel just allocated for this socket, with its exact size.
        let map = unsafe { libc::mmap(std::ptr::null_mut(), map_len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED, raw, 0) };
        if map == libc::MAP_FAILED {
            return Err(format!("cannot map receive ring: {}", std::io::Error::last_os_error()));
        }
        let ring = Ring { fd, map: map as *mut u8, map_len, next_block: 0 };
        sock::bind_rx(raw, ifindex)?;
        Ok(ring)
    }

    pub fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    fn block(&self, i: u32) -> *mut u8 {
        // SAFETY: i < BLOCK_NR, so the offset stays inside the mapping.
        unsafe { self.map.add((i * BLOCK_SIZE) as usize) }
    }

    fn status(&self, block: *mut u8) -> &AtomicU32 {
        // SAFETY: block_status is an aligned u32 inside the mapped block; the kernel
        // writes it concurrently, so it is accessed atomically.
        unsafe { &*(block.add(BD_STATUS) as *const AtomicU32) }
    }

    fn read_u32(p: *const u8, off: usize) -> u32 {
        // SAFETY: callers pass offsets inside a block owned by user space (status USER).
        unsafe { std::ptr::read_unaligned(p.add(off) as *const u32) }
    }

    /// Calls `f` for every frame in every block the kernel has handed over,
    /// gives the blocks back, and returns the number of frames seen.
    pub fn drain(&mut self, mut f: impl FnMut(RxFrame<'_>)) -> u64 {
        let mut n = 0u64;
        loop {
            let b = self.block(self.next_block);
            if self.status(b).load(Ordering::Acquire) & TP_STATUS_USER == 0 {
                return n;
            }
            let num = Self::read_u32(b, BD_NUM_PKTS);
            let mut off = Self::read_u32(b, BD_FIRST_PKT) as usize;
            for _ in 0..num {
                if off + 32 > BLOCK_SIZE as usize {
                    break; // a corrupt offset never leads outside the block
                }
                // SAFETY: off < BLOCK_SIZE, checked above.
                let h = unsafe { b.add(off) };
                let snap = Self::read_u32(h, H_SNAPLEN) as usize;
                let len = Self::read_u32(h, H_LEN) as usize;
                // SAFETY: tp_mac is a u16 inside the header checked above.
                let mac = usize::from(unsafe { std::ptr::read_unaligned(h.add(H_MAC) as *const u16) });
                if off + mac + snap <= BLOCK_SIZE as usize {
                    // SAFETY: the frame bytes lie inside this block (checked just above).
                    let data = unsafe { std::slice::from_raw_parts(h.add(mac), snap) };
                    let rx_ns = u64::from(Self::read_u32(h, H_SEC)) * 1_000_000_000 + u64::from(Self::read_u32(h, H_NSEC));
                    f(RxFrame { data, len, rx_ns });
                    n += 1;
                }
                let next = Self::read_u32(h, H_NEXT) as usize;
                if next == 0 {
                    break;
                }
                off += next;
            }
            self.status(b).store(TP_STATUS_KERNEL, Ordering::Release);
            self.next_block = (self.next_block + 1) % BLOCK_NR;
        }
    }

    /// Reads (and thereby resets) the socket's receive counters.
    pub fn take_stats(&self) -> RingStats {
        let mut st = [0u32; 3]; // tpacket_stats_v3: packets (incl. drops), drops, freeze_q_cnt
        let mut len = std::mem::size_of_val(&st) as libc::socklen_t;
        // SAFETY: `st` is large enough for tpacket_stats_v3 and `len` says so.
        let r = unsafe { libc::getsockopt(self.fd(), SOL_PACKET, sock::PACKET_STATISTICS, st.as_mut_ptr() as *mut libc::c_void, &mut len) };
        if r != 0 {
            return RingStats::default();
        }
        RingStats { drops: u64::from(st[1]) }
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly the region mapped in `open`.
        unsafe { libc::munmap(self.map as *mut libc::c_void, self.map_len) };
    }
}

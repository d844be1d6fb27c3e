//! AF_XDP ports (Documentation/networking/af_xdp.rst). Every receive
//! queue of the interface has a receive socket with a UMEM of its own
//! (receive chunks, then transmit chunks, of `CHUNK` bytes each), which
//! owns the UMEM, its fill and completion rings and the RX ring: a frame
//! that reached a queue without a socket would pass to the kernel and go
//! uncounted. A queue the port sends on (one a sender, `tx_queues`) also
//! has a transmit socket (XDP_SHARED_UMEM) with only the TX ring, bound to
//! the same queue, so the kernel hands its frames to that transmit queue.
//! Apart, because poll(2) on a
//! socket with a TX ring transmits in copy mode (the kernel's xsk_poll), and
//! a frame the driver refused inside the receive thread's poll would go
//! uncounted: the receive socket has none, so only the sender's kick sends.
//!
//! - Receive: the XDP program (`bpf.rs`) stamps each frame and redirects it
//!   to the socket; the kernel copies it into a chunk taken from the fill
//!   ring and posts it on the RX ring. The receive thread reads it there and
//!   gives the chunk back to the fill ring. Frames the kernel could not
//!   place (RX ring full, no free chunk) are counted by the socket
//!   (XDP_STATISTICS) and reported as the tester's own receive drops.
//! - Transmit: the sender copies each wire frame into a free chunk, posts
//!   it on the TX ring and kicks the kernel with sendto(2); the chunk comes
//!   back on the completion ring when the kernel is done with it.
//!
//! The receive half (fill and RX rings) belongs to the receive thread, the
//! transmit half (TX and completion rings) to the sender; each ring has one
//! producer and one consumer, so the halves need no lock. Zero-copy is
//! asked for first and copy mode taken when the driver has none (veth).

use crate::bpf::{self, XdpAttachment};
use crate::ring::RxFrame;
use std::os::unix::io::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

const AF_XDP: libc::c_int = 44;
const SOL_XDP: libc::c_int = 283;
const XDP_MMAP_OFFSETS: libc::c_int = 1;
const XDP_RX_RING: libc::c_int = 2;
const XDP_TX_RING: libc::c_int = 3;
const XDP_UMEM_REG: libc::c_int = 4;
const XDP_UMEM_FILL_RING: libc::c_int = 5;
const XDP_UMEM_COMPLETION_RING: libc::c_int = 6;
const XDP_STATISTICS: libc::c_int = 7;
const XDP_SHARED_UMEM: u16 = 1 << 0;
const XDP_COPY: u16 = 1 << 1;
const XDP_ZEROCOPY: u16 = 1 << 2;
const PGOFF_RX_RING: libc::off_t = 0;
const PGOFF_TX_RING: libc::off_t = 0x8000_0000;
const PGOFF_FILL_RING: libc::off_t = 0x1_0000_0000;
const PGOFF_COMPLETION_RING: libc::off_t = 0x1_8000_0000;

/// Bytes per UMEM chunk: one frame, the kernel's 256-byte XDP headroom
/// (where the receive stamp goes) included.
pub const CHUNK: usize = 2048;
/// Largest frame a chunk holds (without FCS).
pub const MAX_FRAME: usize = CHUNK - 256;
/// Receive chunks of a port (the first part of each queue's UMEM, shared
/// out among its queues), and the entries of the fill and RX rings: 8192
/// frames are 8 ms at 1 Mfps, time for the receive thread to come round
/// (`rx.rs`).
const RX_RING: u32 = 8192;
/// Transmit chunks (the rest of the UMEM), and the entries of the TX and
/// completion rings. A chunk comes back only when the kernel frees the
/// frame's skb, which on veth is at the far end of the DUT: 8192 frames in
/// flight cover a DUT queue of 20 ms at 400 kframes/s, about what AF_PACKET's
/// 4-MB send buffer allows. Shared out among the port's senders.
const TX_RING: u32 = 8192;
/// Send buffer of a transmit socket, per transmit chunk. In copy mode each
/// frame in flight is an skb charged to the socket until the far end frees
/// it; with the default buffer (`wmem_default`, 208 KiB) about 90 skbs of a
/// 1518-B frame fill it, fewer than the DUT's input ring (veth: 256), so a
/// DUT slower than the load throttled the sender (no frame lost, the
/// schedule slipped: tester-limited) where a router's input queue drops.
/// Twice a chunk per chunk (the kernel doubles it again for its overhead):
/// the chunks, not the buffer, bound the frames in flight.
const SNDBUF_PER_CHUNK: usize = 2 * CHUNK;
/// Fewest entries of a queue's ring when a port's are shared out.
const MIN_RING: u32 = 1024;
/// Completion ring of a queue that does not send (the UMEM needs one).
const IDLE_COMPLETION_RING: u32 = 64;
/// How long a bind waits for a queue another socket held to be released (EBUSY): the kernel frees a closed
/// socket's buffer pool in deferred work, after the socket's close returned.
const QUEUE_RELEASE_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// A port's `total` ring entries shared out among `parts` queues, as a power of two.
fn share_of(total: u32, parts: u32) -> u32 {
    (total / parts.max(1)).next_power_of_two().clamp(MIN_RING, total)
}
/// Kicks without progress before the sender gives a transmit call up.
const MAX_IDLE_KICKS: u32 = 10_000;

fn errno(what: &str) -> String {
    format!("{what}: {}", std::io::Error::last_os_error())
}

#[repr(C)]
#[derive(Default, Clone, Copy)]
struct RingOffset {
    producer: u64,
    consumer: u64,
    desc: u64,
    flags: u64,
}

#[repr(C)]
#[derive(Default)]
struct MmapOffsets {
    rx: RingOffset,
    tx: RingOffset,
    fr: RingOffset,
    cr: RingOffset,
}

#[repr(C)]
struct UmemReg {
    addr: u64,
    len: u64,
    chunk_size: u32,
    headroom: u32,
    flags: u32,
    tx_metadata_len: u32,
}

#[repr(C)]
struct SockaddrXdp {
    family: u16,
    flags: u16,
    ifindex: u32,
    queue_id: u32,
    shared_umem_fd: u32,
}

/// struct xdp_desc: a frame on the RX or TX ring.
#[repr(C)]
#[derive(Clone, Copy)]
struct Desc {
    addr: u64,
    len: u32,
    options: u32,
}

/// The socket's kernel counters (struct xdp_statistics).
#[repr(C)]
#[derive(Default, Debug, Clone, Copy)]
pub struct XskStats {
    pub rx_dropped: u64,
    pub rx_invalid_descs: u64,
    pub tx_invalid_descs: u64,
    pub rx_ring_full: u64,
    pub rx_fill_ring_empty_descs: u64,
    pub tx_ring_empty_descs: u64,
}

/// What both halves share: the sockets, the UMEM and the ring mappings,
/// released when both halves are gone (the XDP program first).
struct Shared {
    xdp: Option<XdpAttachment>,
    /// The receive socket: owner of the UMEM, fill, completion and RX rings.
    fd: OwnedFd,
    /// The transmit socket: the TX ring only, on the same UMEM; none on a
    /// queue the port does not send on.
    tx_fd: Option<OwnedFd>,
    umem: *mut u8,
    maps: Vec<(*mut libc::c_void, usize)>,
}

// SAFETY: the raw pointers are mappings owned by this struct; each half
// touches only its own rings and chunks (module docstring).
unsafe impl Send for Shared {}
unsafe impl Sync for Shared {}

impl Drop for Shared {
    fn drop(&mut self) {
        self.xdp = None;
        for &(p, len) in &self.maps {
            // SAFETY: each entry is a mapping made in `open`, unmapped once.
            unsafe { libc::munmap(p, len) };
        }
    }
}

/// One mapped ring: producer and consumer indexes and the entries.
struct MapRing {
    producer: *const AtomicU32,
    consumer: *const AtomicU32,
    entries: *mut u8,
    mask: u32,
}

impl MapRing {
    fn map(fd: RawFd, off: &RingOffset, pgoff: libc::off_t, size: u32, entry: usize, shared: &mut Shared, what: &str) -> Result<MapRing, String> {
        let len = off.desc as usize + size as usize * entry;
        // SAFETY: mapping a ring the kernel allocated for this socket, at its documented page offset and size.
        let p = unsafe { libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED | libc::MAP_POPULATE, fd, pgoff) };
        if p == libc::MAP_FAILED {
            return Err(errno(&format!("cannot map the AF_XDP {what} ring")));
        }
        shared.maps.push((p, len));
        let b = p as *mut u8;
        // SAFETY: the offsets come from XDP_MMAP_OFFSETS and lie inside the mapping.
        unsafe {
            Ok(MapRing {
                producer: b.add(off.producer as usize) as *const AtomicU32,
                consumer: b.add(off.consumer as usize) as *const AtomicU32,
                entries: b.add(off.desc as usize),
                mask: size - 1,
            })
        }
    }

    fn producer(&self) -> &AtomicU32 {
        // SAFETY: an aligned u32 inside a live mapping, shared with the kernel.
        unsafe { &*self.producer }
    }

    fn consumer(&self) -> &AtomicU32 {
        // SAFETY: as for `producer`.
        unsafe { &*self.consumer }
    }

    fn u64_at(&self, i: u32) -> *mut u64 {
        // SAFETY: (i & mask) < the ring's entries of 8 bytes (fill and completion rings).
        unsafe { (self.entries as *mut u64).add((i & self.mask) as usize) }
    }

    fn desc_at(&self, i: u32) -> *mut Desc {
        // SAFETY: (i & mask) < the ring's entries of 16 bytes (RX and TX rings).
        unsafe { (self.entries as *mut Desc).add((i & self.mask) as usize) }
    }
}

// SAFETY: a MapRing points into a mapping kept alive by the Arc<Shared> of its owner.
unsafe impl Send for MapRing {}

/// The receive half.
pub struct XskRx {
    shared: Arc<Shared>,
    rx: MapRing,
    fill: MapRing,
}

/// The transmit half.
pub struct XskTx {
    shared: Arc<Shared>,
    tx: MapRing,
    comp: MapRing,
    /// Chunk addresses free for the next frames.
    free: Vec<u64>,
}

/// Whether the kernel copies frames (veth, most drivers) or lets the NIC use the UMEM.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum XskMode {
    Copy,
    ZeroCopy,
}

/// Opens the AF_XDP sockets of a port on `ifindex` (in the calling
/// thread's namespace): a receive socket on each of its `rx_queues` receive
/// queues and a transmit socket on each of the first `tx_queues` of them,
/// and attaches the XDP program that feeds the receive sockets with the
/// port's frames (MAC `mac`), broadcast and multicast. Returns
/// the receive halves (one a receive queue) and the transmit halves (one a
/// sending queue, in queue order).
pub fn open(ifindex: i32, rx_queues: u32, tx_queues: u32, mac: [u8; 6]) -> Result<(Vec<XskRx>, Vec<XskTx>, XskMode), String> {
    if tx_queues > rx_queues {
        return Err(format!("{tx_queues} transmit queues need as many receive queues, the interface has {rx_queues}"));
    }
    let rx_ring = share_of(RX_RING, rx_queues);
    let tx_ring = share_of(TX_RING, tx_queues);
    let mut queues = Vec::with_capacity(rx_queues as usize);
    for q in 0..rx_queues {
        queues.push(open_queue(ifindex, q, rx_ring, (q < tx_queues).then_some(tx_ring))?);
    }
    let mode = queues[0].mode;
    let fds: Vec<RawFd> = queues.iter().map(|q| q.shared.fd.as_raw_fd()).collect();
    queues[0].shared.xdp = Some(bpf::attach(ifindex, &fds, mac)?);
    let (mut rxs, mut txs) = (Vec::new(), Vec::new());
    for q in queues {
        let shared = Arc::new(q.shared);
        if let Some((tx, comp)) = q.tx {
            let free = (rx_ring..rx_ring + tx_ring).map(|i| u64::from(i) * CHUNK as u64).collect();
            txs.push(XskTx { shared: Arc::clone(&shared), tx, comp, free });
        }
        rxs.push(XskRx { shared, rx: q.rx, fill: q.fill });
    }
    Ok((rxs, txs, mode))
}

/// One queue's sockets before they are split into halves.
struct Queue {
    shared: Shared,
    rx: MapRing,
    fill: MapRing,
    /// TX and completion rings, on a queue the port sends on.
    tx: Option<(MapRing, MapRing)>,
    mode: XskMode,
}

/// The sockets of queue `queue`: a receive socket with `rx_ring` receive
/// chunks and, with `tx_ring`, a transmit socket with that many transmit
/// chunks, on one UMEM.
fn open_queue(ifindex: i32, queue: u32, rx_ring: u32, tx_ring: Option<u32>) -> Result<Queue, String> {
    let fd = xdp_socket()?;
    let raw = fd.as_raw_fd();
    let tx_chunks = tx_ring.unwrap_or(0);
    let umem_len = CHUNK * (rx_ring + tx_chunks) as usize;
    // SAFETY: a private anonymous mapping of the stated length.
    let umem = unsafe { libc::mmap(std::ptr::null_mut(), umem_len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_POPULATE, -1, 0) };
    if umem == libc::MAP_FAILED {
        return Err(errno("cannot allocate the AF_XDP UMEM"));
    }
    let mut shared = Shared { xdp: None, fd, tx_fd: None, umem: umem as *mut u8, maps: vec![(umem, umem_len)] };
    let reg = UmemReg { addr: umem as u64, len: umem_len as u64, chunk_size: CHUNK as u32, headroom: 0, flags: 0, tx_metadata_len: 0 };
    crate::sock::set_opt(raw, SOL_XDP, XDP_UMEM_REG, &reg, "XDP_UMEM_REG")?;
    let comp_ring = tx_ring.unwrap_or(IDLE_COMPLETION_RING);
    for (opt, size, what) in [(XDP_UMEM_FILL_RING, rx_ring, "fill"), (XDP_UMEM_COMPLETION_RING, comp_ring, "completion"), (XDP_RX_RING, rx_ring, "RX")] {
        crate::sock::set_opt(raw, SOL_XDP, opt, &size, &format!("AF_XDP {what} ring size"))?;
    }
    let off = offsets(raw)?;
    let rx = MapRing::map(raw, &off.rx, PGOFF_RX_RING, rx_ring, 16, &mut shared, "RX")?;
    let fill = MapRing::map(raw, &off.fr, PGOFF_FILL_RING, rx_ring, 8, &mut shared, "fill")?;
    let comp = MapRing::map(raw, &off.cr, PGOFF_COMPLETION_RING, comp_ring, 8, &mut shared, "completion")?;
    // Every receive chunk starts on the fill ring.
    for i in 0..rx_ring {
        // SAFETY: the fill ring has rx_ring entries; the kernel reads none before bind.
        unsafe { *fill.u64_at(i) = u64::from(i) * CHUNK as u64 };
    }
    fill.producer().store(rx_ring, Ordering::Release);
    let bind = |flags: u16| {
        let a = SockaddrXdp { family: AF_XDP as u16, flags, ifindex: ifindex as u32, queue_id: queue, shared_umem_fd: 0 };
        // SAFETY: `a` is a valid sockaddr_xdp of the size passed.
        unsafe { libc::bind(raw, &a as *const SockaddrXdp as *const libc::sockaddr, std::mem::size_of::<SockaddrXdp>() as libc::socklen_t) == 0 }
    };
    // A queue whose last AF_XDP socket just closed (a trial before this one) stays taken until the kernel's
    // deferred release of its buffer pool runs: bind says EBUSY meanwhile. Seen in 4 of 30 back-to-back runs
    // on a 2-CPU machine (2026-12-01); wait for it, within QUEUE_RELEASE_WAIT.
    let waited_from = std::time::Instant::now();
    let mode = loop {
        if bind(XDP_ZEROCOPY) {
            break XskMode::ZeroCopy;
        }
        if bind(XDP_COPY) {
            break XskMode::Copy;
        }
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EBUSY) || waited_from.elapsed() >= QUEUE_RELEASE_WAIT {
            return Err(format!("cannot bind the AF_XDP socket to queue {queue}: {e}"));
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    let tx = match tx_ring {
        None => None,
        Some(size) => {
            let tx_fd = xdp_socket()?;
            let raw_tx = tx_fd.as_raw_fd();
            crate::sock::set_opt(raw_tx, SOL_XDP, XDP_TX_RING, &size, "AF_XDP TX ring size")?;
            let sndbuf = i32::try_from(size as usize * SNDBUF_PER_CHUNK).unwrap_or(i32::MAX);
            crate::sock::set_buffer(raw_tx, libc::SO_SNDBUFFORCE, libc::SO_SNDBUF, sndbuf, "AF_XDP SO_SNDBUF")?;
            let tx = MapRing::map(raw_tx, &offsets(raw_tx)?.tx, PGOFF_TX_RING, size, 16, &mut shared, "TX")?;
            let shared_addr = SockaddrXdp { family: AF_XDP as u16, flags: XDP_SHARED_UMEM, ifindex: ifindex as u32, queue_id: queue, shared_umem_fd: raw as u32 };
            // SAFETY: a valid sockaddr_xdp of the size passed.
            if unsafe { libc::bind(raw_tx, &shared_addr as *const SockaddrXdp as *const libc::sockaddr, std::mem::size_of::<SockaddrXdp>() as libc::socklen_t) } != 0 {
                return Err(errno(&format!("cannot bind the transmit AF_XDP socket of queue {queue} to the receive socket's UMEM")));
            }
            shared.tx_fd = Some(tx_fd);
            Some((tx, comp))
        }
    };
    Ok(Queue { shared, rx, fill, tx, mode })
}

fn xdp_socket() -> Result<OwnedFd, String> {
    // SAFETY: plain socket(2); the descriptor is owned below.
    let raw = unsafe { libc::socket(AF_XDP, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) };
    if raw < 0 {
        return Err(errno("cannot open an AF_XDP socket (kernel without CONFIG_XDP_SOCKETS, or not root)"));
    }
    // SAFETY: a fresh descriptor nobody else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(raw) })
}

fn offsets(fd: RawFd) -> Result<MmapOffsets, String> {
    let mut off = MmapOffsets::default();
    let mut len = std::mem::size_of::<MmapOffsets>() as libc::socklen_t;
    // SAFETY: `off` is large enough for xdp_mmap_offsets and `len` says so.
    if unsafe { libc::getsockopt(fd, SOL_XDP, XDP_MMAP_OFFSETS, &mut off as *mut MmapOffsets as *mut libc::c_void, &mut len) } != 0 {
        return Err(errno("XDP_MMAP_OFFSETS"));
    }
    Ok(off)
}

impl XskRx {
    /// Receive chunks of this queue, the first part of its UMEM: one a fill-ring entry.
    fn rx_chunks(&self) -> usize {
        self.fill.mask as usize + 1
    }

    /// The receive socket, which has no TX ring: polling it never transmits.
    pub fn fd(&self) -> RawFd {
        self.shared.fd.as_raw_fd()
    }

    /// Calls `f` for every received frame, gives the chunks back to the
    /// kernel, and returns the number of frames seen. Each frame's
    /// `rx_ns` is the XDP program's monotonic stamp moved to
    /// CLOCK_REALTIME by the clocks' offset read now
    /// (`clock::realtime_minus_monotonic_ns`).
    pub fn drain(&mut self, mut f: impl FnMut(RxFrame<'_>)) -> u64 {
        let prod = self.rx.producer().load(Ordering::Acquire);
        let cons = self.rx.consumer().load(Ordering::Relaxed);
        if prod == cons {
            return 0;
        }
        let offset_ns = crate::clock::realtime_minus_monotonic_ns();
        let fill_prod = self.fill.producer().load(Ordering::Relaxed);
        let mut i = cons;
        while i != prod {
            // SAFETY: entries between consumer and producer are the kernel's finished descriptors.
            let d = unsafe { *self.rx.desc_at(i) };
            let (addr, len) = (d.addr as usize, d.len as usize);
            let chunk = addr - addr % CHUNK;
            if addr + len <= CHUNK * self.rx_chunks() && addr - chunk >= bpf::META_LEN {
                // SAFETY: [addr - 8, addr + len) lies in the receive half of the UMEM (checked above).
                let (data, stamp) = unsafe {
                    (std::slice::from_raw_parts(self.shared.umem.add(addr), len), std::ptr::read_unaligned(self.shared.umem.add(addr - bpf::META_LEN) as *const u64))
                };
                f(RxFrame { data, len, rx_ns: (stamp as i64 + offset_ns) as u64 });
            }
            // SAFETY: the fill ring has room for every chunk taken from it.
            unsafe { *self.fill.u64_at(fill_prod.wrapping_add(i.wrapping_sub(cons))) = chunk as u64 };
            i = i.wrapping_add(1);
        }
        let n = prod.wrapping_sub(cons);
        self.rx.consumer().store(prod, Ordering::Release);
        self.fill.producer().store(fill_prod.wrapping_add(n), Ordering::Release);
        u64::from(n)
    }

    /// The socket's counters since it was opened.
    pub fn stats(&self) -> XskStats {
        let mut st = XskStats::default();
        let mut len = std::mem::size_of::<XskStats>() as libc::socklen_t;
        // SAFETY: `st` is large enough for xdp_statistics and `len` says so.
        unsafe { libc::getsockopt(self.fd(), SOL_XDP, XDP_STATISTICS, &mut st as *mut XskStats as *mut libc::c_void, &mut len) };
        st
    }
}

/// What one transmit call did.
#[derive(Debug, Default)]
pub struct Handed {
    /// Frames the kernel took (sent or dropped), from the first.
    pub taken: usize,
    /// Indexes (among the frames passed) of those the driver dropped.
    pub refused: Vec<usize>,
}

impl XskTx {
    /// Takes back the chunks the kernel has finished with.
    fn reclaim(&mut self) {
        let prod = self.comp.producer().load(Ordering::Acquire);
        let mut cons = self.comp.consumer().load(Ordering::Relaxed);
        while cons != prod {
            // SAFETY: entries between consumer and producer are completed chunk addresses.
            self.free.push(unsafe { *self.comp.u64_at(cons) });
            cons = cons.wrapping_add(1);
        }
        self.comp.consumer().store(cons, Ordering::Release);
    }

    /// Copies `frames` into chunks, posts them and kicks the kernel until it
    /// has taken every one; a driver that drops a frame (a veth whose far
    /// end is full) makes the kick return EBUSY after taking it. Fewer are
    /// posted when chunks are short; an error when the kernel takes none
    /// for `MAX_IDLE_KICKS` kicks.
    pub fn send(&mut self, frames: &[libc::iovec]) -> Result<Handed, String> {
        self.reclaim();
        let n = frames.len().min(self.free.len());
        let prod = self.tx.producer().load(Ordering::Relaxed);
        let start = self.tx.consumer().load(Ordering::Acquire);
        for (k, f) in frames[..n].iter().enumerate() {
            let addr = self.free.pop().expect("counted above");
            let len = f.iov_len.min(MAX_FRAME);
            // SAFETY: the chunk at `addr` is ours (off the free list) and holds MAX_FRAME bytes;
            // the source is a live frame of `len` bytes.
            unsafe {
                std::ptr::copy_nonoverlapping(f.iov_base as *const u8, self.shared.umem.add(addr as usize), len);
                *self.tx.desc_at(prod.wrapping_add(k as u32)) = Desc { addr, len: len as u32, options: 0 };
            }
        }
        let end = prod.wrapping_add(n as u32);
        self.tx.producer().store(end, Ordering::Release);
        let mut out = Handed::default();
        let mut idle = 0;
        let tx_fd = self.shared.tx_fd.as_ref().expect("a transmit half has a transmit socket").as_raw_fd();
        loop {
            let taken = self.tx.consumer().load(Ordering::Acquire).wrapping_sub(start) as usize;
            out.taken = taken;
            if taken >= n {
                break;
            }
            // SAFETY: a kick with no data (sendto(2) on an AF_XDP socket).
            let r = unsafe { libc::sendto(tx_fd, std::ptr::null(), 0, libc::MSG_DONTWAIT, std::ptr::null(), 0) };
            let after = self.tx.consumer().load(Ordering::Acquire).wrapping_sub(start) as usize;
            if r < 0 {
                match std::io::Error::last_os_error().raw_os_error() {
                    Some(libc::EBUSY) if after > 0 => out.refused.push(after - 1),
                    Some(libc::EAGAIN) | Some(libc::EBUSY) | Some(libc::ENOBUFS) | Some(libc::EINTR) => {}
                    _ => return Err(errno("AF_XDP transmit")),
                }
            }
            if after == taken {
                idle += 1;
                if idle >= MAX_IDLE_KICKS {
                    return Err(format!("AF_XDP transmit: the kernel took {taken} of {n} frames and then none for {MAX_IDLE_KICKS} kicks"));
                }
                std::thread::yield_now();
            } else {
                idle = 0;
            }
        }
        out.taken = n;
        Ok(out)
    }
}

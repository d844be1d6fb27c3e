//! The XDP program of an AF_XDP port, loaded with bpf(2) and no library.
//!
//! The program is 32 instructions, written out below. A unicast frame for
//! another MAC than the port's own goes to the kernel (XDP_PASS): on a
//! port shared with another station (a BGP speaker on a macvlan of an
//! external lab's port, v6bench's `lab/bgp_speaker.py`) that station keeps
//! its traffic during a trial; the engine would only count it foreign.
//! Every other frame (the port's own, broadcast and multicast: ARP and ND
//! among them) is stamped with `bpf_ktime_get_ns()` (CLOCK_MONOTONIC) in 8
//! bytes of XDP metadata just before the frame, then redirected to the
//! AF_XDP socket of its receive queue (`bpf_redirect_map` on an XSKMAP); a
//! queue with no socket passes the frame to the kernel (XDP_PASS, the map
//! lookup's fallback).
//! The stamp is taken in the driver's receive poll, before the kernel's
//! own receive stamp would be (`__netif_receive_skb`), so it is at least as
//! close to the wire as AF_PACKET's.
//!
//! The program is attached with a BPF link (BPF_LINK_CREATE), which the
//! kernel detaches when the link's descriptor closes: when the engine exits,
//! however it exits, nothing stays attached to the interface.
//!
//! The bpf(2) calls, the instruction encoding and the array map here are
//! also what the in-kernel sender (`live.rs`) builds its program from.

use std::os::unix::io::{AsRawFd, FromRawFd, OwnedFd, RawFd};

const BPF_MAP_CREATE: libc::c_long = 0;
const BPF_MAP_LOOKUP_ELEM: libc::c_long = 1;
const BPF_MAP_UPDATE_ELEM: libc::c_long = 2;
const BPF_PROG_LOAD: libc::c_long = 5;
const BPF_PROG_TEST_RUN: libc::c_long = 10;
const BPF_LINK_CREATE: libc::c_long = 28;
const BPF_MAP_TYPE_ARRAY: u32 = 2;
/// BPF_PROG_TEST_RUN sends the frames an XDP program passes on (`live.rs`).
const BPF_F_TEST_XDP_LIVE_FRAMES: u32 = 1 << 1;
const BPF_MAP_TYPE_XSKMAP: u32 = 17;
const BPF_PROG_TYPE_XDP: u32 = 6;
const BPF_XDP: u32 = 37;
/// XDP_FLAGS_DRV_MODE: the driver's own XDP hook (veth has one), never the
/// generic hook, which would run after the skb is built.
const XDP_FLAGS_DRV_MODE: u32 = 1 << 2;
/// Size of the attribute buffer handed to bpf(2) (larger than any command's part used here).
const ATTR_LEN: usize = 128;
/// Bytes of metadata the program writes before each frame.
pub const META_LEN: usize = 8;

fn bpf(cmd: libc::c_long, attr: &mut [u8; ATTR_LEN]) -> Result<RawFd, std::io::Error> {
    // SAFETY: `attr` is a zero-padded bpf_attr of the size passed; every
    // pointer written into it refers to memory alive across the call.
    let r = unsafe { libc::syscall(libc::SYS_bpf, cmd, attr.as_mut_ptr(), ATTR_LEN as libc::c_uint) };
    if r < 0 { Err(std::io::Error::last_os_error()) } else { Ok(r as RawFd) }
}

fn put_u32(a: &mut [u8; ATTR_LEN], off: usize, v: u32) {
    a[off..off + 4].copy_from_slice(&v.to_ne_bytes());
}

fn put_u64(a: &mut [u8; ATTR_LEN], off: usize, v: u64) {
    a[off..off + 8].copy_from_slice(&v.to_ne_bytes());
}

fn owned(fd: RawFd) -> OwnedFd {
    // SAFETY: `fd` was just returned by bpf(2) and is owned by nobody else.
    unsafe { OwnedFd::from_raw_fd(fd) }
}

/// One eBPF instruction (struct bpf_insn).
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct Insn {
    pub code: u8,
    pub regs: u8, // dst in the low nibble, src in the high one
    pub off: i16,
    pub imm: i32,
}

pub const fn insn(code: u8, dst: u8, src: u8, off: i16, imm: i32) -> Insn {
    Insn { code, regs: dst | (src << 4), off, imm }
}

// Opcodes used (linux/bpf.h, bpf_common.h): 64-bit ALU, loads, stores, jumps.
pub const MOV64_X: u8 = 0xbf;
pub const MOV64_K: u8 = 0xb7;
pub const ADD64_K: u8 = 0x07;
pub const ADD64_X: u8 = 0x0f;
pub const SUB64_X: u8 = 0x1f;
pub const MUL64_X: u8 = 0x2f;
pub const DIV64_K: u8 = 0x37;
pub const AND64_K: u8 = 0x57;
pub const XOR64_K: u8 = 0xa7;
pub const LSH64_K: u8 = 0x67;
pub const RSH64_K: u8 = 0x77;
/// Byte swap to big-endian (BPF_ALU | BPF_END | BPF_TO_BE); imm is the width in bits.
pub const TO_BE: u8 = 0xdc;
pub const LDX_W: u8 = 0x61;
pub const LDX_H: u8 = 0x69;
pub const LDX_B: u8 = 0x71;
/// 32-bit move of an immediate (BPF_ALU | BPF_MOV | BPF_K): the upper half is zeroed.
pub const MOV32_K: u8 = 0xb4;
pub const LDX_DW: u8 = 0x79;
pub const STX_H: u8 = 0x6b;
pub const STX_DW: u8 = 0x7b;
pub const ST_B: u8 = 0x72;
pub const ST_H: u8 = 0x6a;
pub const ST_W: u8 = 0x62;
pub const ST_DW: u8 = 0x7a;
pub const JEQ_K: u8 = 0x15;
pub const JNE_K: u8 = 0x55;
pub const JNE_X: u8 = 0x5d;
pub const JGT_X: u8 = 0x2d;
pub const JGE_X: u8 = 0x3d;
pub const CALL: u8 = 0x85;
pub const EXIT: u8 = 0x95;
pub const LD_IMM64: u8 = 0x18;
pub const PSEUDO_MAP_FD: u8 = 1;
// Helpers.
pub const MAP_LOOKUP_ELEM: i32 = 1;
pub const KTIME_GET_NS: i32 = 5;
const REDIRECT_MAP: i32 = 51;
const XDP_ADJUST_META: i32 = 54;
// struct xdp_md field offsets.
const MD_DATA: i16 = 0;
const MD_DATA_END: i16 = 4;
const MD_DATA_META: i16 = 8;
const MD_RX_QUEUE: i16 = 16;
pub const XDP_DROP: i32 = 1;
const XDP_PASS: i32 = 2;
pub const XDP_TX: i32 = 3;

/// Where the stamping part begins; a frame for the engine jumps there.
const STAMP: i16 = 14;
/// Where the program returns XDP_PASS: a unicast frame for another MAC.
const PASS: i16 = 30;

/// The program, with the XSKMAP's descriptor in its map load and the
/// port's MAC in its comparison.
fn program(map_fd: RawFd, mac: [u8; 6]) -> [Insn; 32] {
    let mac_lo = u32::from_le_bytes([mac[0], mac[1], mac[2], mac[3]]) as i32; // the first 4 bytes, as loaded
    let mac_hi = i32::from(u16::from_le_bytes([mac[4], mac[5]]));
    [
        insn(MOV64_X, 6, 1, 0, 0),                   // 0: r6 = ctx
        insn(LDX_W, 2, 6, MD_DATA, 0),               // 1: r2 = data
        insn(LDX_W, 3, 6, MD_DATA_END, 0),           // 2: r3 = data_end
        insn(MOV64_X, 4, 2, 0, 0),                   // 3: r4 = data
        insn(ADD64_K, 4, 0, 0, 6),                   // 4: r4 += 6
        insn(JGT_X, 4, 3, STAMP - 6, 0),             // 5: shorter than a MAC: goto 14 (the engine counts it foreign)
        insn(LDX_B, 5, 2, 0, 0),                     // 6: r5 = first byte of the destination MAC
        insn(AND64_K, 5, 0, 0, 1),                   // 7: r5 &= 1 (the group bit)
        insn(JNE_K, 5, 0, STAMP - 9, 0),             // 8: broadcast or multicast: goto 14
        insn(LDX_W, 5, 2, 0, 0),                     // 9: r5 = destination MAC bytes 0-3
        insn(MOV32_K, 4, 0, 0, mac_lo),              // 10: r4 = the port's, zero-extended
        insn(JNE_X, 5, 4, PASS - 12, 0),             // 11: another MAC: goto 30
        insn(LDX_H, 5, 2, 4, 0),                     // 12: r5 = destination MAC bytes 4-5
        insn(JNE_K, 5, 0, PASS - 14, mac_hi),        // 13: another MAC: goto 30
        insn(MOV64_K, 2, 0, 0, -(META_LEN as i32)),  // 14: r2 = -8 (r1 is still ctx)
        insn(CALL, 0, 0, 0, XDP_ADJUST_META),        // 15: r0 = bpf_xdp_adjust_meta(ctx, -8)
        insn(JNE_K, 0, 0, 7, 0),                     // 16: no room: goto 24 (frame unstamped)
        insn(CALL, 0, 0, 0, KTIME_GET_NS),           // 17: r0 = now (monotonic ns)
        insn(LDX_W, 2, 6, MD_DATA_META, 0),          // 18: r2 = data_meta
        insn(LDX_W, 3, 6, MD_DATA, 0),               // 19: r3 = data
        insn(MOV64_X, 4, 2, 0, 0),                   // 20: r4 = data_meta
        insn(ADD64_K, 4, 0, 0, META_LEN as i32),     // 21: r4 += 8
        insn(JGT_X, 4, 3, 1, 0),                     // 22: if r4 > data goto 24 (the verifier's bound)
        insn(STX_DW, 2, 0, 0, 0),                    // 23: *(u64 *)data_meta = now
        insn(LDX_W, 2, 6, MD_RX_QUEUE, 0),           // 24: r2 = rx_queue_index
        insn(LD_IMM64, 1, PSEUDO_MAP_FD, 0, map_fd), // 25: r1 = &xskmap
        insn(0, 0, 0, 0, 0),                         // 26: (second half of the 64-bit load)
        insn(MOV64_K, 3, 0, 0, XDP_PASS),            // 27: r3 = XDP_PASS if the queue has no socket
        insn(CALL, 0, 0, 0, REDIRECT_MAP),           // 28: r0 = bpf_redirect_map(&xskmap, queue, XDP_PASS)
        insn(EXIT, 0, 0, 0, 0),                      // 29: return r0
        insn(MOV64_K, 0, 0, 0, XDP_PASS),            // 30: r0 = XDP_PASS (another station's frame)
        insn(EXIT, 0, 0, 0, 0),                      // 31: return r0
    ]
}

/// Loads an XDP program named `name` (at most 15 bytes); the verifier's
/// log is in the error.
pub fn load_xdp(insns: &[Insn], name: &str) -> Result<OwnedFd, String> {
    let license = b"GPL\0";
    let mut log = vec![0u8; 64 * 1024];
    let mut a = [0u8; ATTR_LEN];
    put_u32(&mut a, 0, BPF_PROG_TYPE_XDP);
    put_u32(&mut a, 4, insns.len() as u32);
    put_u64(&mut a, 8, insns.as_ptr() as u64);
    put_u64(&mut a, 16, license.as_ptr() as u64);
    put_u32(&mut a, 24, 1); // log_level
    put_u32(&mut a, 28, log.len() as u32);
    put_u64(&mut a, 32, log.as_mut_ptr() as u64);
    let n = name.len().min(15);
    a[48..48 + n].copy_from_slice(&name.as_bytes()[..n]);
    put_u32(&mut a, 68, BPF_XDP); // expected_attach_type
    bpf(BPF_PROG_LOAD, &mut a).map(owned).map_err(|e| {
        let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
        format!("the kernel refused the XDP program: {e}: {}", String::from_utf8_lossy(&log[..end]).trim())
    })
}

/// A one-entry BPF array map of `value_len` bytes, shared between a program
/// and the engine.
pub struct ArrayMap {
    fd: OwnedFd,
    value_len: usize,
}

impl ArrayMap {
    pub fn new(value_len: usize) -> Result<ArrayMap, String> {
        let mut a = [0u8; ATTR_LEN];
        put_u32(&mut a, 0, BPF_MAP_TYPE_ARRAY);
        put_u32(&mut a, 4, 4);
        put_u32(&mut a, 8, value_len as u32);
        put_u32(&mut a, 12, 1);
        let fd = owned(bpf(BPF_MAP_CREATE, &mut a).map_err(|e| format!("cannot create a BPF array map (bpf(2) needs root or CAP_BPF): {e}"))?);
        Ok(ArrayMap { fd, value_len })
    }

    pub fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    fn call(&self, cmd: libc::c_long, value: *const u8) -> Result<(), String> {
        let key = 0u32;
        let mut a = [0u8; ATTR_LEN];
        put_u32(&mut a, 0, self.fd.as_raw_fd() as u32);
        put_u64(&mut a, 8, &key as *const u32 as u64);
        put_u64(&mut a, 16, value as u64);
        bpf(cmd, &mut a).map(|_| ()).map_err(|e| format!("bpf map: {e}"))
    }

    /// Writes the entry (`value` must be the map's value length).
    pub fn write(&self, value: &[u8]) -> Result<(), String> {
        assert_eq!(value.len(), self.value_len);
        self.call(BPF_MAP_UPDATE_ELEM, value.as_ptr())
    }

    /// Reads the entry.
    pub fn read(&self) -> Result<Vec<u8>, String> {
        let mut v = vec![0u8; self.value_len];
        self.call(BPF_MAP_LOOKUP_ELEM, v.as_mut_ptr())?;
        Ok(v)
    }
}

/// Runs XDP program `prog` `repeat` times on `frame` (BPF_PROG_TEST_RUN).
/// `live`: in live-frames mode, where a frame the program returns XDP_TX
/// for is sent out of interface `ifindex` (of the calling thread's network
/// namespace), flushed every `batch` runs; otherwise `out` receives the
/// frame as the program left it. Returns the program's last return value.
pub fn test_run(prog: RawFd, frame: &[u8], ifindex: i32, repeat: u32, live: Option<u32>, out: Option<&mut [u8]>) -> Result<u32, std::io::Error> {
    // struct xdp_md as context: data, data_end, data_meta, ingress_ifindex, rx_queue_index, egress_ifindex.
    let mut ctx = [0u32; 6];
    ctx[1] = frame.len() as u32;
    ctx[3] = ifindex as u32;
    let mut a = [0u8; ATTR_LEN];
    put_u32(&mut a, 0, prog as u32);
    put_u32(&mut a, 8, frame.len() as u32);
    put_u64(&mut a, 16, frame.as_ptr() as u64);
    if let Some(o) = out {
        put_u32(&mut a, 12, o.len() as u32);
        put_u64(&mut a, 24, o.as_mut_ptr() as u64);
    }
    put_u32(&mut a, 32, repeat);
    put_u32(&mut a, 40, std::mem::size_of_val(&ctx) as u32);
    put_u64(&mut a, 48, ctx.as_ptr() as u64);
    if let Some(batch) = live {
        put_u32(&mut a, 64, BPF_F_TEST_XDP_LIVE_FRAMES);
        put_u32(&mut a, 72, batch);
    }
    bpf(BPF_PROG_TEST_RUN, &mut a)?;
    Ok(u32::from_ne_bytes(a[4..8].try_into().expect("4 bytes")))
}

/// An XDP program attached to one interface, redirecting to one socket.
pub struct XdpAttachment {
    _map: OwnedFd,
    _prog: OwnedFd,
    _link: OwnedFd,
}

/// Loads the program (for a port of MAC `mac`), puts the AF_XDP socket of each receive queue in its
/// map (`xsk_fds[q]` at queue q), and attaches it to `ifindex` in the
/// calling thread's network namespace (driver mode). Everything is
/// released when the result is dropped.
pub fn attach(ifindex: i32, xsk_fds: &[RawFd], mac: [u8; 6]) -> Result<XdpAttachment, String> {
    let mut a = [0u8; ATTR_LEN];
    put_u32(&mut a, 0, BPF_MAP_TYPE_XSKMAP);
    put_u32(&mut a, 4, 4); // key: queue index
    put_u32(&mut a, 8, 4); // value: socket descriptor
    put_u32(&mut a, 12, xsk_fds.len().max(1) as u32);
    let map = owned(bpf(BPF_MAP_CREATE, &mut a).map_err(|e| format!("cannot create an XSKMAP (bpf(2) needs root or CAP_BPF): {e}"))?);

    let prog = load_xdp(&program(map.as_raw_fd(), mac), "v6b_xsk_rx")?;

    for (queue, &fd) in xsk_fds.iter().enumerate() {
        let mut a = [0u8; ATTR_LEN];
        let key = queue as u32;
        let value = fd as u32;
        put_u32(&mut a, 0, map.as_raw_fd() as u32);
        put_u64(&mut a, 8, &key as *const u32 as u64);
        put_u64(&mut a, 16, &value as *const u32 as u64);
        bpf(BPF_MAP_UPDATE_ELEM, &mut a).map_err(|e| format!("cannot put the AF_XDP socket of queue {queue} in the XSKMAP: {e}"))?;
    }

    let mut a = [0u8; ATTR_LEN];
    put_u32(&mut a, 0, prog.as_raw_fd() as u32);
    put_u32(&mut a, 4, ifindex as u32);
    put_u32(&mut a, 8, BPF_XDP);
    put_u32(&mut a, 12, XDP_FLAGS_DRV_MODE);
    let link = owned(bpf(BPF_LINK_CREATE, &mut a).map_err(|e| {
        format!("cannot attach XDP in driver mode: {e} (another XDP program attached, a driver without XDP, or an MTU too large for single-buffer XDP)")
    })?);
    Ok(XdpAttachment { _map: map, _prog: prog, _link: link })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jumps_land_where_their_comments_say() {
        let p = program(3, [0x02, 0x11, 0x22, 0x33, 0x44, 0x55]);
        let target = |i: usize| i as i16 + 1 + p[i].off;
        for i in [5, 8] {
            assert_eq!(target(i), STAMP, "insn {i}");
        }
        for i in [11, 13] {
            assert_eq!(target(i), PASS, "insn {i}");
        }
        for i in [16, 22] {
            assert_eq!(target(i), 24, "insn {i}");
        }
        assert_eq!((p[10].imm as u32).to_le_bytes(), [0x02, 0x11, 0x22, 0x33]);
        assert_eq!(p[13].imm, 0x5544);
        assert_eq!(p[25].imm, 3);
        assert_eq!(p[25].regs >> 4, PSEUDO_MAP_FD);
        assert_eq!((p[30].code, p[30].imm, p[31].code), (MOV64_K, XDP_PASS, EXIT));
        assert_eq!(std::mem::size_of::<Insn>(), 8);
    }
}

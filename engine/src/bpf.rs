//! The XDP program of an AF_XDP port, loaded with bpf(2) and no library.
//!
//! The program is 17 instructions, written out below: it stamps every frame
//! with `bpf_ktime_get_ns()` (CLOCK_MONOTONIC) in 8 bytes of XDP metadata
//! just before the frame, then redirects it to the AF_XDP socket of its
//! receive queue (`bpf_redirect_map` on an XSKMAP); a queue with no socket
//! passes the frame to the kernel (XDP_PASS, the map lookup's fallback).
//! The stamp is taken in the driver's receive poll, before the kernel's
//! own receive stamp would be (`__netif_receive_skb`), so it is at least as
//! close to the wire as AF_PACKET's.
//!
//! The program is attached with a BPF link (BPF_LINK_CREATE), which the
//! kernel detaches when the link's descriptor closes: when the engine exits,
//! however it exits, nothing stays attached to the interface.

use std::os::unix::io::{AsRawFd, FromRawFd, OwnedFd, RawFd};

const BPF_MAP_CREATE: libc::c_long = 0;
const BPF_MAP_UPDATE_ELEM: libc::c_long = 2;
const BPF_PROG_LOAD: libc::c_long = 5;
const BPF_LINK_CREATE: libc::c_long = 28;
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
#[derive(Clone, Copy)]
#[repr(C)]
struct Insn {
    code: u8,
    regs: u8, // dst in the low nibble, src in the high one
    off: i16,
    imm: i32,
}

const fn insn(code: u8, dst: u8, src: u8, off: i16, imm: i32) -> Insn {
    Insn { code, regs: dst | (src << 4), off, imm }
}

// Opcodes used (linux/bpf.h, bpf_common.h).
const MOV64_X: u8 = 0xbf;
const MOV64_K: u8 = 0xb7;
const ADD64_K: u8 = 0x07;
const LDX_W: u8 = 0x61;
const STX_DW: u8 = 0x7b;
const JNE_K: u8 = 0x55;
const JGT_X: u8 = 0x2d;
const CALL: u8 = 0x85;
const EXIT: u8 = 0x95;
const LD_IMM64: u8 = 0x18;
const PSEUDO_MAP_FD: u8 = 1;
// Helpers.
const KTIME_GET_NS: i32 = 5;
const REDIRECT_MAP: i32 = 51;
const XDP_ADJUST_META: i32 = 54;
// struct xdp_md field offsets.
const MD_DATA: i16 = 0;
const MD_DATA_META: i16 = 8;
const MD_RX_QUEUE: i16 = 16;
const XDP_PASS: i32 = 2;

/// The program, with the XSKMAP's descriptor in its map load.
fn program(map_fd: RawFd) -> [Insn; 17] {
    [
        insn(MOV64_X, 6, 1, 0, 0),                   // 0: r6 = ctx
        insn(MOV64_K, 2, 0, 0, -(META_LEN as i32)),  // 1: r2 = -8
        insn(CALL, 0, 0, 0, XDP_ADJUST_META),        // 2: r0 = bpf_xdp_adjust_meta(ctx, -8)
        insn(JNE_K, 0, 0, 7, 0),                     // 3: no room: goto 11 (frame unstamped)
        insn(CALL, 0, 0, 0, KTIME_GET_NS),           // 4: r0 = now (monotonic ns)
        insn(LDX_W, 2, 6, MD_DATA_META, 0),          // 5: r2 = data_meta
        insn(LDX_W, 3, 6, MD_DATA, 0),               // 6: r3 = data
        insn(MOV64_X, 4, 2, 0, 0),                   // 7: r4 = data_meta
        insn(ADD64_K, 4, 0, 0, META_LEN as i32),     // 8: r4 += 8
        insn(JGT_X, 4, 3, 1, 0),                     // 9: if r4 > data goto 11 (the verifier's bound)
        insn(STX_DW, 2, 0, 0, 0),                    // 10: *(u64 *)data_meta = now
        insn(LDX_W, 2, 6, MD_RX_QUEUE, 0),           // 11: r2 = rx_queue_index
        insn(LD_IMM64, 1, PSEUDO_MAP_FD, 0, map_fd), // 12: r1 = &xskmap
        insn(0, 0, 0, 0, 0),                         // 13: (second half of the 64-bit load)
        insn(MOV64_K, 3, 0, 0, XDP_PASS),            // 14: r3 = XDP_PASS if the queue has no socket
        insn(CALL, 0, 0, 0, REDIRECT_MAP),           // 15: r0 = bpf_redirect_map(&xskmap, queue, XDP_PASS)
        insn(EXIT, 0, 0, 0, 0),                      // 16: return r0
    ]
}

/// An XDP program attached to one interface, redirecting to one socket.
pub struct XdpAttachment {
    _map: OwnedFd,
    _prog: OwnedFd,
    _link: OwnedFd,
}

/// Loads the program, puts `xsk_fd` in its map at `queue`, and attaches
/// it to `ifindex` in the calling thread's network namespace (driver
/// mode). Everything is released when the result is dropped.
pub fn attach(ifindex: i32, queue: u32, xsk_fd: RawFd) -> Result<XdpAttachment, String> {
    let mut a = [0u8; ATTR_LEN];
    put_u32(&mut a, 0, BPF_MAP_TYPE_XSKMAP);
    put_u32(&mut a, 4, 4); // key: queue index
    put_u32(&mut a, 8, 4); // value: socket descriptor
    put_u32(&mut a, 12, queue + 1);
    let map = owned(bpf(BPF_MAP_CREATE, &mut a).map_err(|e| format!("cannot create an XSKMAP (bpf(2) needs root or CAP_BPF): {e}"))?);

    let insns = program(map.as_raw_fd());
    let license = b"GPL\0";
    let mut log = vec![0u8; 16 * 1024];
    let mut a = [0u8; ATTR_LEN];
    put_u32(&mut a, 0, BPF_PROG_TYPE_XDP);
    put_u32(&mut a, 4, insns.len() as u32);
    put_u64(&mut a, 8, insns.as_ptr() as u64);
    put_u64(&mut a, 16, license.as_ptr() as u64);
    put_u32(&mut a, 24, 1); // log_level
    put_u32(&mut a, 28, log.len() as u32);
    put_u64(&mut a, 32, log.as_mut_ptr() as u64);
    a[48..48 + 10].copy_from_slice(b"v6b_xsk_rx");
    put_u32(&mut a, 68, BPF_XDP); // expected_attach_type
    let prog = owned(bpf(BPF_PROG_LOAD, &mut a).map_err(|e| {
        let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
        format!("the kernel refused the XDP program: {e}: {}", String::from_utf8_lossy(&log[..end]).trim())
    })?);

    let mut a = [0u8; ATTR_LEN];
    let key = queue;
    let value = xsk_fd as u32;
    put_u32(&mut a, 0, map.as_raw_fd() as u32);
    put_u64(&mut a, 8, &key as *const u32 as u64);
    put_u64(&mut a, 16, &value as *const u32 as u64);
    bpf(BPF_MAP_UPDATE_ELEM, &mut a).map_err(|e| format!("cannot put the AF_XDP socket in the XSKMAP: {e}"))?;

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
    fn jumps_land_on_the_redirect() {
        let p = program(3);
        for (i, x) in p.iter().enumerate() {
            if x.code == JNE_K || x.code == JGT_X {
                assert_eq!(i as i16 + 1 + x.off, 11, "insn {i}");
            }
        }
        assert_eq!(p[12].imm, 3);
        assert_eq!(p[12].regs >> 4, PSEUDO_MAP_FD);
        assert_eq!(std::mem::size_of::<Insn>(), 8);
    }
}

"""Holds an interface's receive queue 0 with an AF_XDP socket of its own
(copy mode, nothing attached) until a line or end of file on stdin, then
closes it and exits. Run inside the interface's namespace:
``python3 xsk_holder.py IFNAME``; prints "held" once bound.

Written with ctypes against the kernel's AF_XDP ABI (linux/if_xdp.h), not
with the engine's code, so a test can take a queue from the engine the way
another process (or the kernel's deferred release of one) does."""

import ctypes
import mmap
import socket
import struct
import sys

AF_XDP, SOL_XDP = 44, 283
XDP_RX_RING, XDP_UMEM_REG, XDP_UMEM_FILL_RING, XDP_UMEM_COMPLETION_RING = 2, 4, 5, 6
XDP_COPY = 1 << 1
CHUNK, CHUNKS = 2048, 64


def main(ifname: str) -> None:
    libc = ctypes.CDLL(None, use_errno=True)

    def check(rc: int, what: str) -> int:
        if rc < 0:
            err = ctypes.get_errno()
            raise OSError(err, f"{what}: {__import__('os').strerror(err)}")
        return rc

    fd = check(libc.socket(AF_XDP, socket.SOCK_RAW, 0), "socket(AF_XDP)")
    umem = mmap.mmap(-1, CHUNK * CHUNKS)
    addr = ctypes.addressof(ctypes.c_char.from_buffer(umem))
    reg = struct.pack("QQIIII", addr, CHUNK * CHUNKS, CHUNK, 0, 0, 0)
    check(libc.setsockopt(fd, SOL_XDP, XDP_UMEM_REG, reg, len(reg)), "XDP_UMEM_REG")
    for opt in (XDP_UMEM_FILL_RING, XDP_UMEM_COMPLETION_RING, XDP_RX_RING):
        size = ctypes.c_uint32(CHUNKS)
        check(libc.setsockopt(fd, SOL_XDP, opt, ctypes.byref(size), 4), f"ring {opt}")
    sxdp = struct.pack("HHIII", AF_XDP, XDP_COPY, socket.if_nametoindex(ifname), 0, 0)
    check(libc.bind(fd, sxdp, len(sxdp)), f"bind to {ifname} queue 0")
    print("held", flush=True)
    sys.stdin.readline()
    libc.close(fd)


if __name__ == "__main__":
    main(sys.argv[1])

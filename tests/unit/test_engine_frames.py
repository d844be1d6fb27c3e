"""Byte-exact test frames, checked against independent decoders (scapy, tshark).

The engine writes the frames a spec would send to a pcap; scapy builds the
same frames from the RFC field definitions on its own, and tshark validates
every IPv4 header and UDP checksum.
"""

from __future__ import annotations

import ipaddress
import shutil
import struct
import subprocess

import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether
from scapy.packet import Raw
from scapy.utils import rdpcap

from v6bench import engine
from v6bench.engine.local import write_frames

SRC_MAC = "02:00:5e:00:00:01"
DST_MAC = "02:00:5e:00:00:02"
TS0 = 1_700_000_000_123_456_789
RATE_FPS = 1000


def spec(ip_version: int, frame_size: int, shares=(1,)) -> dict:
    return {
        "spec_version": 3,
        "netns_prefix": "no",
        "frame_count": 1000,
        "ports": [
            {"name": "a", "interface": "x0", "netns": "none", "mac": SRC_MAC, "next_hop_mac": DST_MAC,
             "ipv4": "198.18.0.2/24", "ipv6": "2001:2::2/64", "tx_rate": {"fps": RATE_FPS}},
            {"name": "b", "interface": "x1", "netns": "none", "ipv4": "198.19.0.2/24", "ipv6": "2001:2:0:1::2/64"},
        ],
        "streams": [
            {"tx_port": "a", "rx_port": "b", "ip_version": ip_version, "frame_size": frame_size, "share": s}
            for s in shares
        ],
    }


def expected(ip_version: int, frame_size: int, stream: int, seq: int, ts: int, dst: str | None = None,
             sport: int = 0xC020) -> bytes:
    """The frame as the RFCs define it, built by scapy alone (to ``dst``
    from UDP port ``sport`` where a walk put others)."""
    sig = struct.pack("!HH", 0x7636, stream) + seq.to_bytes(6, "big") + ts.to_bytes(8, "big")
    l3 = 20 if ip_version == 4 else 40
    pad_len = frame_size - 4 - 14 - l3 - 8 - len(sig)
    pad = bytes(0x55 if i % 2 == 0 else 0xAA for i in range(pad_len))
    if ip_version == 4:
        ip = IP(src="198.18.0.2", dst=dst or "198.19.0.2", id=seq & 0xFFFF, flags=0, ttl=64, tos=0)
    else:
        ip = IPv6(src="2001:2::2", dst=dst or "2001:2:0:1::2", hlim=64, tc=0, fl=0)
    return bytes(Ether(src=SRC_MAC, dst=DST_MAC) / ip / UDP(sport=sport, dport=7) / Raw(sig + pad))


CASES = [(4, 64), (4, 128), (4, 1518), (6, 84), (6, 128), (6, 1518), (4, 9216), (6, 9216)]


@pytest.mark.parametrize("ip_version,frame_size", CASES)
def test_frames_are_byte_exact(tmp_path, ip_version, frame_size):
    pcap = tmp_path / "f.pcap"
    write_frames(spec(ip_version, frame_size), pcap, count=3, timestamp_ns=TS0)
    pkts = rdpcap(str(pcap))
    assert len(pkts) == 3
    for seq, p in enumerate(pkts):
        raw = bytes(p)
        assert len(raw) == frame_size - 4, "frame size includes the FCS the NIC appends"
        ts = TS0 + seq * (1_000_000_000 // RATE_FPS)
        assert raw == expected(ip_version, frame_size, 0, seq, ts)
        # Checksums: scapy recomputes them from scratch.
        rebuilt = Ether(raw)
        if ip_version == 4:
            del rebuilt[IP].chksum
        del rebuilt[UDP].chksum
        assert bytes(Ether(bytes(rebuilt))) == raw


def addresses(first: str, last: str) -> list[str]:
    a, b = ipaddress.ip_address(first), ipaddress.ip_address(last)
    return [str(a + i) for i in range(int(b) - int(a) + 1)]


WALKS = {4: (["198.19.5.250-198.19.6.9", "198.18.77.1"], addresses("198.19.5.250", "198.19.6.9") + ["198.18.77.1"]),
         6: (["2001:2:0:1::fffe-2001:2:0:1::1:7", "2001:2:0:ffff::1"],
             addresses("2001:2:0:1::fffe", "2001:2:0:1::1:7") + ["2001:2:0:ffff::1"])}


def walked(tmp_path, ip_version: int, frame_size: int, seed: int, count: int) -> list[tuple[str, int, bytes]]:
    """(destination, UDP source port, frame) of the first ``count`` frames of a walking stream."""
    s = spec(ip_version, frame_size)
    s["streams"][0]["walk"] = {"dst_ip": WALKS[ip_version][0], "src_port": ["1024-1030"], "order": "permuted", "seed": seed}
    pcap = tmp_path / f"walk-{seed}.pcap"
    write_frames(s, pcap, count=count, timestamp_ns=TS0)
    out = []
    for p in rdpcap(str(pcap)):
        layer = IP if ip_version == 4 else IPv6
        out.append((p[layer].dst, p[UDP].sport, bytes(p)))
    return out


@pytest.mark.parametrize("ip_version,frame_size", [(4, 64), (4, 1518), (6, 84), (6, 512)])
def test_a_walk_is_byte_exact_and_visits_each_destination_once_a_cycle(tmp_path, ip_version, frame_size):
    """Each frame is scapy's frame to the destination and from the port
    the walk gave it (checksums computed by scapy alone); the first cycle
    holds every destination once, the second repeats it, the seed repeats
    the order and another seed changes it."""
    want = WALKS[ip_version][1]
    n = len(want)
    frames = walked(tmp_path, ip_version, frame_size, 11, 2 * n)
    for seq, (dst, sport, raw) in enumerate(frames):
        ts = TS0 + seq * (1_000_000_000 // RATE_FPS)
        assert raw == expected(ip_version, frame_size, 0, seq, ts, dst=dst, sport=sport)
    dsts = [d for d, _, _ in frames]
    assert sorted(dsts[:n], key=ipaddress.ip_address) == sorted(want, key=ipaddress.ip_address) and dsts[n:] == dsts[:n]
    assert dsts[:n] != want, "permuted, not in list order"
    assert [sp for _, sp, _ in frames[:7]] != list(range(1024, 1031)) and sorted(sp for _, sp, _ in frames[:7]) == list(range(1024, 1031))
    assert [d for d, _, _ in walked(tmp_path, ip_version, frame_size, 11, n)] == dsts[:n]
    assert [d for d, _, _ in walked(tmp_path, ip_version, frame_size, 12, n)] != dsts[:n]


def test_mix_interleaves_exact_shares(tmp_path):
    pcap = tmp_path / "mix.pcap"
    s = spec(4, 128, shares=(90, 10))
    s["streams"][1]["ip_version"] = 6
    write_frames(s, pcap, count=100)
    versions = [6 if IPv6 in p else 4 for p in rdpcap(str(pcap))]
    for w in range(0, 100, 10):
        assert versions[w : w + 10].count(6) == 1, versions[w : w + 10]
    # Per-stream sequence numbers count up independently.
    seqs6 = [int.from_bytes(bytes(p[UDP].payload)[4:10], "big") for p in rdpcap(str(pcap)) if IPv6 in p]
    assert seqs6 == list(range(10))


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark is not installed (make test installs it)")
def test_tshark_validates_every_checksum(tmp_path):
    pcap = tmp_path / "all.pcap"
    s = spec(4, 64)
    s["streams"] = [
        {"tx_port": "a", "rx_port": "b", "ip_version": v, "frame_size": n, "share": 1}
        for v, n in CASES
    ]
    write_frames(s, pcap, count=64)
    out = subprocess.run(
        ["tshark", "-r", str(pcap), "-o", "ip.check_checksum:TRUE", "-o", "udp.check_checksum:TRUE",
         "-T", "fields", "-e", "frame.len", "-e", "ip.checksum.status", "-e", "udp.checksum.status"],
        capture_output=True, text=True, check=True,
    ).stdout.splitlines()
    assert len(out) == 64
    for line in out:
        length, ip_status, udp_status = (line.split("\t") + ["", ""])[:3]
        assert udp_status == "1", f"bad UDP checksum: {line!r}"  # 1 = Good
        assert ip_status in ("1", ""), f"bad IPv4 checksum: {line!r}"
    assert {int(line.split("\t")[0]) for line in out} == {n - 4 for _, n in CASES}


SID, FINAL = "2001:2::1", "2001:2:0:1::2"


def scapy_ext(name: str):
    """seed 000's extension headers, built by scapy from RFC 8200/8754 fields."""
    from scapy.layers.inet6 import (IPv6ExtHdrDestOpt, IPv6ExtHdrFragment, IPv6ExtHdrHopByHop, IPv6ExtHdrRouting,
                                    IPv6ExtHdrSegmentRouting, PadN)

    hbh = IPv6ExtHdrHopByHop(options=[PadN(optdata=b"\0" * 4)])
    dst = IPv6ExtHdrDestOpt(options=[PadN(optdata=b"\0" * 4)])
    rh0 = IPv6ExtHdrRouting(type=0, segleft=0, addresses=[FINAL])
    frag = IPv6ExtHdrFragment(offset=0, m=0, id=0x76360001)
    if name == "srh":
        return IPv6ExtHdrSegmentRouting(addresses=[FINAL, SID], segleft=1, lastentry=1)
    layers = {"hbh": [hbh], "dst": [dst], "rh0": [rh0], "frag": [frag], "chain": [hbh, rh0, frag, dst],
              "dst20": [dst] * 20}[name]
    out = layers[0].copy()
    for layer in layers[1:]:
        out = out / layer.copy()
    return out


@pytest.mark.parametrize("name", ["hbh", "dst", "rh0", "srh", "frag", "chain", "dst20"])
def test_extension_headers_are_byte_exact(tmp_path, name):
    from v6bench.core import ext_headers

    frame_size = 1280  # seed 000 held its extension-header frames at 1280 bytes
    s = spec(6, frame_size)
    s["streams"][0]["ipv6_ext_headers"] = ext_headers.headers(name, SID, FINAL)
    pcap = tmp_path / "x.pcap"
    write_frames(s, pcap, count=2, timestamp_ns=TS0)
    for seq, p in enumerate(rdpcap(str(pcap))):
        raw = bytes(p)
        assert len(raw) == frame_size - 4
        sig = struct.pack("!HH", 0x7636, 0) + seq.to_bytes(6, "big") + (TS0 + seq * 1_000_000).to_bytes(8, "big")
        pad_len = frame_size - 4 - 14 - 40 - ext_headers.LENGTHS[name] - 8 - len(sig)
        pad = bytes(0x55 if i % 2 == 0 else 0xAA for i in range(pad_len))
        want = Ether(src=SRC_MAC, dst=DST_MAC) / IPv6(src="2001:2::2", dst=SID if name == "srh" else FINAL, hlim=64) \
            / scapy_ext(name) / UDP(sport=0xC020, dport=7) / Raw(sig + pad)
        assert raw == bytes(want), name


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark is not installed (make test installs it)")
def test_tshark_reads_the_extension_headers_and_checks_udp(tmp_path):
    from v6bench.core import ext_headers

    s = spec(6, 1280)
    s["streams"] = [{"tx_port": "a", "rx_port": "b", "ip_version": 6, "frame_size": 1280, "share": 1,
                     "ipv6_ext_headers": ext_headers.headers(n, SID, FINAL)} for n in ext_headers.PRESETS]
    pcap = tmp_path / "x.pcap"
    write_frames(s, pcap, count=len(ext_headers.PRESETS))
    out = subprocess.run(["tshark", "-r", str(pcap), "-o", "udp.check_checksum:TRUE", "-T", "fields",
                          "-e", "udp.checksum.status", "-e", "ipv6.routing.segleft", "-e", "ipv6.dst"],
                         capture_output=True, text=True, check=True).stdout.splitlines()
    assert len(out) == len(ext_headers.PRESETS)
    for line, name in zip(out, ext_headers.PRESETS):
        status = line.split("\t")[0]
        assert status == "1", f"{name}: bad UDP checksum: {line!r}"


FRAGMENT_CASES = [(4, 1518, 500), (4, 1518, 68), (4, 9216, 1500), (6, 1518, 1280), (6, 9216, 1500)]


@pytest.mark.parametrize("ip_version,frame_size,mtu", FRAGMENT_CASES)
def test_source_fragments_match_scapys_fragmenter_and_reassemble(tmp_path, ip_version, frame_size, mtu):
    """Fragmentation at the source (``fragment_mtu``): the engine's fragments
    are byte for byte scapy's own fragmenter's (RFC 791 §2.3, RFC 8200
    §4.5), scapy reassembles them into the whole test frame, and their
    sizes are those :mod:`v6bench.trial.path` plans with."""
    from scapy.layers.inet import fragment
    from scapy.layers.inet6 import IPv6ExtHdrFragment, defragment6, fragment6
    from scapy.layers.inet import defragment

    from v6bench.lab.model.mtu import parse
    from v6bench.trial.path import LabPath

    s = spec(ip_version, frame_size)
    s["streams"][0]["fragment_mtu"] = mtu
    pcap = tmp_path / "f.pcap"
    write_frames(s, pcap, count=2, timestamp_ns=TS0)
    got = [bytes(p) for p in rdpcap(str(pcap))]
    first = Ether(expected(ip_version, frame_size, 0, 0, TS0))
    if ip_version == 4:
        mine = [bytes(Ether(src=SRC_MAC, dst=DST_MAC) / f) for f in fragment(first[IP], fragsize=mtu - 20)]
        whole = defragment(rdpcap(str(pcap)))
        assert [bytes(w[IP]) for w in whole] == [bytes(Ether(expected(4, frame_size, 0, q, TS0 + q * 1_000_000))[IP]) for q in (0, 1)]
    else:
        ip = first[IPv6]
        mine = [bytes(Ether(src=SRC_MAC, dst=DST_MAC) / f)
                for f in fragment6(IPv6(src=ip.src, dst=ip.dst, hlim=64) / IPv6ExtHdrFragment(id=0) / ip.payload, mtu)]
        frags = [p[IPv6] for p in rdpcap(str(pcap)) if p[IPv6ExtHdrFragment].id == 0]
        assert bytes(defragment6(frags)) == bytes(ip)
    assert got[: len(mine)] == mine
    assert len(got) == 2 * len(mine)
    # The planner's arithmetic: the sender's link has this MTU.
    path = LabPath.build("a", 1e9, parse(f"t1-r1={mtu},r1-t2=9198") if mtu >= 1280 else parse(f"all=9198,t1-r1={mtu}"))
    assert path.source_mtu(ip_version, frame_size) == (mtu if ip_version == 4 else min(mtu, 9198))
    assert path.wire_frames(ip_version, frame_size)[0] == [len(f) + 4 for f in mine]


@pytest.mark.parametrize("ip_version,frame_size", [(4, 64), (4, 1500), (6, 84), (6, 1500)])
def test_icmp_echo_requests_are_byte_exact(tmp_path, ip_version, frame_size):
    """An ``icmp_echo`` stream (``--icmp-echo``): ICMPv4 type 8 / ICMPv6 type
    128 with Identifier = stream index, Sequence Number = sequence mod 2^16
    and the signature as the first data bytes, as scapy builds them."""
    from scapy.layers.inet import ICMP
    from scapy.layers.inet6 import ICMPv6EchoRequest

    s = spec(ip_version, frame_size)
    s["streams"][0].update(protocol="icmp_echo", rx_port="a", dst_ip="198.18.0.1" if ip_version == 4 else "2001:2::1")
    pcap = tmp_path / "e.pcap"
    write_frames(s, pcap, count=2, timestamp_ns=TS0)
    for seq, p in enumerate(rdpcap(str(pcap))):
        ts = TS0 + seq * (1_000_000_000 // RATE_FPS)
        sig = struct.pack("!HH", 0x7636, 0) + seq.to_bytes(6, "big") + ts.to_bytes(8, "big")
        l3 = 20 if ip_version == 4 else 40
        pad = bytes(0x55 if i % 2 == 0 else 0xAA for i in range(frame_size - 4 - 14 - l3 - 8 - len(sig)))
        if ip_version == 4:
            want = Ether(src=SRC_MAC, dst=DST_MAC) / IP(src="198.18.0.2", dst="198.18.0.1", id=seq, flags=0, ttl=64) \
                / ICMP(type=8, id=0, seq=seq) / Raw(sig + pad)
        else:
            want = Ether(src=SRC_MAC, dst=DST_MAC) / IPv6(src="2001:2::2", dst="2001:2::1", hlim=64) \
                / ICMPv6EchoRequest(id=0, seq=seq) / Raw(sig + pad)
        assert bytes(p) == bytes(want)


def test_icmp_echo_streams_need_their_replies_at_the_sender():
    s = spec(4, 128)
    s["streams"][0].update(protocol="icmp_echo", dst_ip="198.18.0.1")
    with pytest.raises(engine.EngineError, match="rx_port: the Echo Replies of an icmp_echo stream come back"):
        write_frames(s, "/dev/null", count=1, timestamp_ns=TS0)

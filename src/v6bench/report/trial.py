"""The readable form of a trial result (``v6bench trial`` without ``--json``)."""

from __future__ import annotations

from ..core.rates import format_link_speed
from .text import align


def _us(ns: float | None) -> str:
    return "-" if ns is None else f"{ns / 1000:.1f}"


def _pct(ratio: float | None) -> str:
    return "-" if ratio is None else f"{ratio * 100:.1f} %"


def pauses(r: dict) -> list[str]:
    """A line per sending port whose schedule slipped after a stall (the
    engine's ``after_stall: slip``): the DUT saw a pause there, no burst."""
    out = []
    for p in (r.get("engine") or {}).get("ports", []):
        tx = p.get("tx") or {}
        if tx.get("slips"):
            out.append(f"sender {p['name']} paused {tx['slipped_ns'] / 1e6:.3f} ms in {tx['slips']} stall(s) "
                       f"(longest {tx['max_slip_ns'] / 1e6:.3f} ms): its schedule slipped, the DUT saw pauses, no bursts")
    return out


def render(r: dict) -> str:
    lab = r["lab"]
    plan = lab["cpu_plan"]
    lines = [
        f"lab: topology {lab['topology']}, {format_link_speed(lab['link_speed_bps'])} links, MTU {lab['mtu']}, "
        f"{plan['arrangement']} CPUs (tester tx {','.join(map(str, plan['tester_tx']))} rx {plan['tester_rx']}, "
        f"DUT {','.join(map(str, plan['dut']))}); tester and DUT share this machine"
        + (" (temporary lab)" if lab["temporary"] else ""),
        f"trial: mix {r['mix']} (IPv4/IPv6), {r['frame_size']}-byte frames, {r['rate']} = "
        f"{r['rate_per_direction_fps']:,.0f} frames/s per " + ("sending port" if r.get("mesh") else "direction")
        + f", {r['duration_s']:g} s, "
        + (f"{r['mesh']} mesh (senders started within {r['mesh_start_spread_s'] * 1e3:.2f} ms)" if r.get("mesh")
           else "bidirectional" if r["bidirectional"] else "unidirectional")
        + (f", ICMP echo to {r['icmp_echo']} (latency is the round trip)" if r.get("icmp_echo") else ""),
        "",
    ]
    lines += align(_stream_rows(r))
    floor = r.get("tester_latency_floor")
    lead = (f", {_us(floor['tx_stamp_lead_ns'])} µs of it from stamping to the driver"
            if floor and floor.get("tx_stamp_lead_ns") is not None else "")
    lines.append(f"the tester's own latency floor: {_us(floor['floor_ns'])} ± {_us(floor['stddev_ns'])} µs at "
                 f"{floor['frame_size']} B (self-test{lead}): delays at that level are the tester's" if floor else
                 "the tester's own latency floor: unknown (no self-test consulted)")
    lines.append("")
    lines.append(f"offered {r['offered_fps']:,.0f} frames/s of {r['intended_fps']:,.0f} intended (all directions)")
    lines += pauses(r)
    for s in r["streams"]:
        f = s.get("fragments")
        if f:
            sent = f"sent as {f['per_frame']} fragments each, " if f["tx_fragments"] else "sent whole, "
            lines.append(f"fragments {s['direction']} IPv{s['ip_version']}: {sent}{f['rx_fragments']:,} received "
                         f"({f['rx_fragments_per_s']:,.0f}/s), {f['reassembled_frames']:,} frames whole, "
                         f"{f['incomplete_frames']:,} incomplete")
    lines += restabilized_lines(r)
    lines += _dut_cpu_lines(r)
    clat = r["dut"].get("clat")
    lines += translator_lines(clat) + translator_lines(r["dut"].get("translator"), plat=bool(clat))
    if r["status"] != "completed":
        lines.append(f"status: {r['status']}")
    if r["tester_limited"]:
        lines.append("TESTER LIMITED: this trial says nothing about the DUT:")
        lines += [f"  - {reason}" for reason in r["tester_limited_reasons"]]
    else:
        lines.append("tester_limited: no")
    if r.get("suspect_reasons"):
        lines.append("SUSPECT DELAYS: counts hold, latency does not:")
        lines += [f"  - {reason}" for reason in r["suspect_reasons"]]
    return "\n".join(lines)


def _stream_rows(r: dict) -> list[tuple[str, ...]]:
    """The table of streams: frames, loss, order and delays [µs] each, and the total."""
    header = ("direction", "IP", "tx frames", "rx frames", "lost", "loss", "reord", "dup",
              "lat min", "p50", "p99", "p99.9", "max µs")
    rows = [header]
    for s in r["streams"]:
        lat = s["latency_ns"] or {}
        rows.append((s["direction"], f"IPv{s['ip_version']}" + (f">{s['rx_ip_version']}" if "rx_ip_version" in s else ""), f"{s['tx_frames']:,}", f"{s['rx_frames']:,}",
                     f"{s['lost_frames']:,}", f"{s['loss_ratio'] * 100:.3f} %", f"{s['reordered_frames']:,}",
                     f"{s['duplicate_frames']:,}", _us(lat.get("min")), _us(lat.get("p50")), _us(lat.get("p99")),
                     _us(lat.get("p999")), _us(lat.get("max"))))
    rows.append(("total", "", f"{r['tx_frames']:,}", f"{r['rx_frames']:,}", f"{r['lost_frames']:,}",
                 f"{r['loss_ratio'] * 100:.3f} %", "", "", "", "", "", "", ""))
    return rows


def restabilized_lines(r: dict) -> list[str]:
    """The incomplete datagrams earlier trials left in the DUT, waited out before this one (``restabilized``)."""
    w = r.get("restabilized")
    if not w:
        return []
    held = ", ".join(f"{name} {h['datagrams']:,} ({h['bytes'] / 1e6:.1f} MB)" for name, h in w["routers"].items())
    return [f"before the trial: the DUT held incomplete datagrams of earlier trials ({held}); waited "
            f"{w['waited_s']:.1f} s for them to expire (RFC 2544 §23)"]


def _dut_cpu_lines(r: dict) -> list[str]:
    """What the DUT's CPU did while traffic flowed, or why it was not read."""
    lines: list[str] = []
    routers = r["dut"]["routers"]
    cpu = [f"{x['name']} {_pct(x['busy_ratio'])} " + ("of all its CPUs (SNMP, "  # an external DUT's own load
           f"{x.get('cpu_source')} over {x.get('window_s')} s)" if x.get("busy_basis") == "box" else "of a CPU")
           for x in routers]
    if cpu and any(x["busy_ratio"] is not None for x in routers):
        lines.append("DUT CPU while traffic flowed: " + ", ".join(cpu))
    elif routers and routers[0].get("busy_basis") == "box":
        lines.append(f"DUT CPU: not read ({routers[0].get('cpu_why') or r['dut'].get('telemetry')})")
    elif cpu:
        lines.append("DUT CPU: not measured (inline arrangement: the routers' work runs in the tester's sender)")
    return lines


def translator_lines(t: dict | None, plat: bool = False) -> list[str]:
    """A translator's own account of a trial (``dut.translator``, R1's NAT64
    or with ``plat`` 464XLAT's PLAT; ``dut.clat``, its CLAT): what went
    into and came out of it, and its sessions."""
    if not t:
        return []
    name = "CLAT (stateless, R1)" if t["mode"] == "clat" else \
        "PLAT (stateful NAT64, R2)" if plat else f"{t['mode']} NAT64"
    line = (f"translator ({name}): {t['into_frames']:,} frames in, {t['out_frames']:,} out"
            + ("" if t["running"] else "; NOT RUNNING after the trial"))
    if t["mode"] == "stateful":
        line += (f"; connections tracked {t['sessions_before']:,} before, {t['sessions']:,} after"
                 + (f", {t['new_sessions']:,} opened by its source NAT" if t.get("new_sessions") is not None else ""))
    return [line]

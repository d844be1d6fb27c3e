"""The DUT's own telemetry over SNMP (v2c, or v3 with the USM of RFC 3414):
its CPU load and the IF-MIB counters of the ports cabled to the tester.

The agent is read with Net-SNMP's ``snmpget`` and ``snmpbulkwalk`` (Debian
package ``snmp``), numeric OIDs only (no MIB files needed), inside the
namespace the lab file names if any. The community and v3 secrets go to
the tools in a private configuration file (``SNMPCONFPATH``), never on a
command line another user could read in ``ps``.

What is read (OIDs in :data:`CPU_SOURCES` and :data:`IF_COUNTERS`):

- **CPU**, from the first source the agent answers (``cpu = "auto"``) or
  the one the file names:

  ============== ============================================== ==========================
  source         objects                                        kind
  ============== ============================================== ==========================
  ucd            UCD-SNMP-MIB ssCpuRawUser/Nice/System/Idle/     tick counters (Net-SNMP:
                 Wait/Kernel/Interrupt/SoftIRQ/Steal             Linux, BSDs, MikroTik, VyOS)
                 (.1.3.6.1.4.1.2021.11.50-56, 61, 64)
  cisco          CISCO-PROCESS-MIB cpmCPUTotal5secRev            % over 5 s, per CPU
  juniper        JUNIPER-MIB jnxOperatingCPU                     % per component (busiest)
  host-resources HOST-RESOURCES-MIB hrProcessorLoad (RFC 2790)   % over 1 min, per CPU
  ============== ============================================== ==========================

- **IF-MIB counters** (RFC 2863) of each DUT port: the 64-bit packet and
  octet counters (ifHC*) and the 32-bit discards and errors.

An agent refreshes what it serves on its own clock (Net-SNMP: CPU ticks
every 5 s, interface counters after 3 s), so a reading is as old as that
refresh. v6bench therefore reads the counters before a trial and again
``counter_refresh_s`` after the trial's last frame, and takes the CPU from
readings polled during the trial (:func:`cpu_over_window`).
"""

from __future__ import annotations

from typing import Any

import os
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from ...core.errors import LabError
from .lab_file import SnmpSpec

SYS_DESCR = "1.3.6.1.2.1.1.1.0"
SYS_NAME = "1.3.6.1.2.1.1.5.0"
SYS_UPTIME = "1.3.6.1.2.1.1.3.0"
IF_NAME = "1.3.6.1.2.1.31.1.1.1.1"
IF_DESCR = "1.3.6.1.2.1.2.2.1.2"
IF_HIGH_SPEED = "1.3.6.1.2.1.31.1.1.1.15"

#: IF-MIB counters read per DUT port: name → (column OID, bits).
IF_COUNTERS = {
    "in_octets": ("1.3.6.1.2.1.31.1.1.1.6", 64),
    "in_ucast_pkts": ("1.3.6.1.2.1.31.1.1.1.7", 64),
    "in_multicast_pkts": ("1.3.6.1.2.1.31.1.1.1.8", 64),
    "in_broadcast_pkts": ("1.3.6.1.2.1.31.1.1.1.9", 64),
    "out_octets": ("1.3.6.1.2.1.31.1.1.1.10", 64),
    "out_ucast_pkts": ("1.3.6.1.2.1.31.1.1.1.11", 64),
    "out_multicast_pkts": ("1.3.6.1.2.1.31.1.1.1.12", 64),
    "out_broadcast_pkts": ("1.3.6.1.2.1.31.1.1.1.13", 64),
    "in_discards": ("1.3.6.1.2.1.2.2.1.13", 32),
    "in_errors": ("1.3.6.1.2.1.2.2.1.14", 32),
    "out_discards": ("1.3.6.1.2.1.2.2.1.19", 32),
    "out_errors": ("1.3.6.1.2.1.2.2.1.20", 32),
}

UCD_TICKS = {"user": "1.3.6.1.4.1.2021.11.50.0", "nice": "1.3.6.1.4.1.2021.11.51.0",
             "system": "1.3.6.1.4.1.2021.11.52.0", "idle": "1.3.6.1.4.1.2021.11.53.0",
             "wait": "1.3.6.1.4.1.2021.11.54.0", "kernel": "1.3.6.1.4.1.2021.11.55.0",
             "interrupt": "1.3.6.1.4.1.2021.11.56.0", "softirq": "1.3.6.1.4.1.2021.11.61.0",
             "steal": "1.3.6.1.4.1.2021.11.64.0"}


@dataclass(frozen=True)
class CpuSource:
    """``table``: the column walked for a gauge in % (None for ``ucd``'s
    counters); ``averaging_s``: the time a gauge averages over; ``combine``:
    ``mean`` of the rows (one a CPU) or ``max`` (the busiest component)."""

    name: str
    description: str
    table: str | None = None
    averaging_s: float = 0.0
    combine: str = "mean"

    def readable_s(self, poll_interval_s: float) -> float:
        """The shortest traffic [s] from which :func:`cpu_over_window` gives
        this source's figure when it is polled every ``poll_interval_s``:
        two updates of ``ucd``'s counters (:data:`NET_SNMP_READABLE_S`), or a
        gauge's averaging time and one poll after it."""
        return NET_SNMP_READABLE_S if self.table is None else self.averaging_s + poll_interval_s


#: The CPU sources, in the order ``auto`` tries them.
CPU_SOURCES = {
    "ucd": CpuSource("ucd", "UCD-SNMP-MIB ssCpuRaw* tick counters"),
    "cisco": CpuSource("cisco", "CISCO-PROCESS-MIB cpmCPUTotal5secRev", "1.3.6.1.4.1.9.9.109.1.1.1.1.6", 5.0),
    "juniper": CpuSource("juniper", "JUNIPER-MIB jnxOperatingCPU (busiest component)", "1.3.6.1.4.1.2636.3.1.13.1.8",
                         0.0, "max"),
    "host-resources": CpuSource("host-resources", "HOST-RESOURCES-MIB hrProcessorLoad (1-minute average)",
                                "1.3.6.1.2.1.25.3.3.1.2", 60.0),
}


#: The shortest traffic in which Net-SNMP's CPU counters (updated every 5 s) change twice [s].
NET_SNMP_READABLE_S = 12.0


class Agent:
    """One SNMP agent, read with Net-SNMP's tools. Every request is
    bounded: ``timeout_s`` a try, one retry, and a process time limit."""

    def __init__(self, spec: SnmpSpec) -> None:
        self.spec = spec
        self._dir = tempfile.TemporaryDirectory(prefix="v6bench-snmp-")
        conf = Path(self._dir.name, "snmp.conf")
        fd = os.open(conf, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(_client_conf(spec))

    def close(self) -> None:
        self._dir.cleanup()

    def __enter__(self) -> "Agent":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _run(self, tool: str, args: list[str]) -> list[tuple[str, str | None]]:
        s = self.spec
        host = f"udp6:[{s.host}]:{s.port}" if ":" in s.host else f"udp:{s.host}:{s.port}"
        cmd = [tool, "-m", "", "-On", "-Oq", "-Oe", "-Ot", "-t", f"{s.timeout_s:g}", "-r", "1", host, *args]
        if s.netns:
            cmd = ["ip", "netns", "exec", s.netns, *cmd]
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "SNMPCONFPATH": self._dir.name,
               "MIBS": "", "HOME": self._dir.name}
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=4 * s.timeout_s + 10)
        except FileNotFoundError:
            raise LabError(f"{tool} is missing: install Debian's snmp package (make setup does)") from None
        except subprocess.TimeoutExpired:
            raise LabError(f"SNMP agent {s.host}:{s.port}: {tool} did not finish") from None
        if p.returncode != 0:
            why = (p.stderr.strip().splitlines() or ["failed"])[-1]
            raise LabError(f"SNMP agent {s.host}:{s.port}" + (f" (netns {s.netns})" if s.netns else "") + f": {why}")
        return _parse(p.stdout)

    def get(self, oids: list[str]) -> dict[str, str | None]:
        """The values of ``oids`` (None where the agent has no such object)."""
        out: dict[str, str | None] = {}
        for i in range(0, len(oids), 40):  # a PDU of 40 varbinds fits any agent's message size
            out.update(dict(self._run("snmpget", oids[i:i + 40])))
        return {o: out.get(o) for o in oids}

    def walk(self, oid: str) -> dict[str, str]:
        """The rows under ``oid``: row index (the OID's tail) → value."""
        rows = self._run("snmpbulkwalk", ["-Cr25", oid])
        return {o[len(oid) + 1:]: v for o, v in rows if o.startswith(oid + ".") and v is not None}


def _client_conf(s: SnmpSpec) -> str:
    lines = [f"defVersion {s.version}"]
    if s.version == "2c":
        lines.append(f"defCommunity {s.community}")
    else:
        lines += [f"defSecurityName {s.user}", f"defSecurityLevel {s.security_level}"]
        if s.auth_password:
            lines += [f"defAuthType {s.auth_protocol}", f"defAuthPassphrase {s.auth_password}"]
        if s.priv_password:
            lines += [f"defPrivType {s.priv_protocol}", f"defPrivPassphrase {s.priv_password}"]
    return "\n".join(lines) + "\n"


_MISSING = ("No Such Object", "No Such Instance", "No more variables")


def _parse(text: str) -> list[tuple[str, str | None]]:
    """``snmpget -On -Oq`` lines (``.1.3.6… value``) → (OID without the
    leading dot, value without quotes; None for a missing object). A
    quoted string may run over several lines."""
    out: list[tuple[str, str | None]] = []
    open_quote = False
    for line in text.splitlines():
        if open_quote:
            oid, value = out[-1]
            open_quote = not line.endswith('"')
            out[-1] = (oid, (value or "") + "\n" + (line if open_quote else line[:-1]))
            continue
        if not line.startswith("."):
            continue
        oid, _, value = line.partition(" ")
        value = value.strip()
        if any(value.startswith(m) for m in _MISSING):
            out.append((oid[1:], None))
        elif value.startswith('"'):
            open_quote = len(value) == 1 or not value.endswith('"')
            out.append((oid[1:], value[1:] if open_quote else value[1:-1]))
        else:
            out.append((oid[1:], value))
    return out


def interface_indexes(agent: Agent, wanted: list[str | int]) -> dict[str | int, int]:
    """The ifIndex of each DUT port named in the lab file: by ifName, else
    ifDescr; a number is an ifIndex already (it must exist)."""
    names = agent.walk(IF_NAME)
    # ifDescr is walked only if a port is not found by ifName (or an ifIndex is not in ifName's rows).
    found = set(names.values()) | {int(i) for i in names}
    descrs = agent.walk(IF_DESCR) if any(w not in found for w in wanted) else {}
    out: dict[str | int, int] = {}
    for w in wanted:
        if isinstance(w, int):
            if str(w) not in names and str(w) not in descrs:
                raise LabError(f"the DUT's agent has no interface with ifIndex {w}")
            out[w] = w
            continue
        hits = [i for i, n in names.items() if n == w] or [i for i, d in descrs.items() if d == w]
        if not hits:
            known = ", ".join(sorted(set(names.values()) or set(descrs.values())))
            raise LabError(f"the DUT's agent has no interface named {w!r} (ifName or ifDescr; it has {known})")
        out[w] = int(hits[0])
    return out


def read_counters(agent: Agent, indexes: dict[str | int, int]) -> dict[str, dict[str, int | None]]:
    """Each port's IF-MIB counters (:data:`IF_COUNTERS`), keyed by the name the lab file gives it."""
    oids = [f"{col}.{i}" for i in indexes.values() for col, _ in IF_COUNTERS.values()]
    values = agent.get(oids)
    return {str(name): {k: _int(values[f"{col}.{i}"]) for k, (col, _) in IF_COUNTERS.items()}
            for name, i in indexes.items()}


def counter_delta(before: dict[str, int | None], after: dict[str, int | None]) -> dict[str, int | None]:
    """After less before, per counter, across one wrap of its width (a
    32-bit discard counter wraps)."""
    out = {}
    for k, (_, bits) in IF_COUNTERS.items():
        a, b = after.get(k), before.get(k)
        out[k] = None if a is None or b is None else (a - b) % (1 << bits)
    return out


def _int(v: str | None) -> int | None:
    try:
        return int(v) if v is not None else None
    except ValueError:
        return None


def find_cpu_source(agent: Agent, wanted: str) -> CpuSource | None:
    """The source named, or with ``auto`` the first the agent answers; None for ``none``."""
    if wanted == "none":
        return None
    for name in CPU_SOURCES if wanted == "auto" else (wanted,):
        src = CPU_SOURCES[name]
        try:
            found = read_cpu(agent, src) is not None
        except LabError:
            found = False
        if found:
            return src
    if wanted == "auto":
        return None
    raise LabError(f"the DUT's agent does not answer the CPU source {wanted!r} ({CPU_SOURCES[wanted].description})")


def read_cpu(agent: Agent, src: CpuSource) -> dict[str, Any] | None:
    """One reading: ``{"ticks": {…}}`` for ``ucd``, ``{"pct": …, "rows": n}``
    for a gauge; None if the agent has none of it."""
    if src.table is None:
        values = agent.get(list(UCD_TICKS.values()))
        ticks = {k: _int(values[o]) for k, o in UCD_TICKS.items()}
        return {"ticks": ticks} if ticks["idle"] is not None else None
    rows = [v for v in (_int(x) for x in agent.walk(src.table).values()) if v is not None]
    if not rows:
        return None
    return {"pct": (max(rows) if src.combine == "max" else sum(rows) / len(rows)), "rows": len(rows)}


def busy_ticks(ticks: dict[str, int | None]) -> tuple[int, int]:
    """(busy, total) ticks: total is user, nice, the kernel's time, idle,
    wait and steal; busy is total less idle and wait.

    The kernel's time depends on how the agent fills ssCpuRawSystem (UCD-SNMP-MIB
    allows combinations): Net-SNMP on Linux gives /proc/stat's system alone
    and the interrupt and softirq ticks apart (ssCpuRawKernel 0), so all
    three are added, and a router that forwards in softirq is not counted
    idle; on the BSDs it gives system = kernel + interrupt (ssCpuRawKernel
    non-zero), so system alone. Absent objects count 0."""
    t = {k: ticks.get(k) or 0 for k in UCD_TICKS}
    kernel_side = t["system"] if t["kernel"] else t["system"] + t["interrupt"] + t["softirq"]
    total = t["user"] + t["nice"] + kernel_side + t["idle"] + t["wait"] + t["steal"]
    return total - t["idle"] - t["wait"], total


class Poller:
    """Reads the CPU source every ``interval_s`` on a thread while a trial
    runs (a context manager); stops at exit, and by itself after
    ``limit_s`` whatever happens. ``samples``: (unix time [s], reading)."""

    def __init__(self, agent: Agent, src: CpuSource, interval_s: float, limit_s: float) -> None:
        self.agent, self.src, self.interval_s, self.limit_s = agent, src, interval_s, limit_s
        self.samples: list[tuple[float, dict[str, Any]]] = []
        self.errors: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="snmp-poller", daemon=True)

    def _loop(self) -> None:
        end = time.monotonic() + self.limit_s
        while not self._stop.is_set() and time.monotonic() < end:
            t0 = time.time()
            try:
                r = read_cpu(self.agent, self.src)
                if r is not None:
                    self.samples.append(((t0 + time.time()) / 2, r))
            except LabError as e:
                self.errors.append(str(e))
            self._stop.wait(max(0.0, self.interval_s - (time.time() - t0)))

    def __enter__(self) -> "Poller":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def cpu_over_window(src: CpuSource, samples: list[tuple[float, dict[str, Any]]], start_s: float, end_s: float) -> dict[str, Any]:
    """The DUT's CPU load [% of its CPUs] while the traffic flowed
    (``start_s`` to ``end_s``, unix time), from the polled ``samples``.

    - ``ucd`` (counters): the agent updates its counters now and then
      (Net-SNMP every 5 s); a value that changed between two polls was
      taken between them. The load is busy over total ticks between the
      first and the last update seen wholly inside the window (the poll
      before the first update at or after ``start_s``, the poll of the last
      at or before ``end_s``): two updates at least, or None.
    - gauges: the mean of the polls inside the window taken once the
      gauge's averaging time into the traffic had passed, or None.

    Returns ``{"pct", "resolution_pct", "source", "over_s",
    "between_unix_s", "samples", "why"}`` (``why`` says why ``pct`` is
    None; ``resolution_pct``: one tick of the counters over the ticks
    between the updates used, or a gauge's 1 %). ``between_unix_s`` bounds
    the figure's window: for counters ``[[a, b], [c, d]]``, the first update
    used was taken between the polls at ``a`` and ``b`` and the last between
    ``c`` and ``d``; for gauges ``[[a, a], [d, d]]``, the first and last
    poll averaged (a poll is stamped at the middle of its request).
    """
    out: dict[str, Any] = {"source": src.name, "pct": None, "resolution_pct": None, "over_s": None, "between_unix_s": None,
           "samples": len(samples), "why": None}
    if src.table is None:
        updates = []  # (unix time of the poll before it, of the poll that saw it, ticks)
        for (t_prev, prev), (t, cur) in zip(samples, samples[1:]):
            if cur["ticks"] != prev["ticks"] and t_prev >= start_s and t <= end_s:
                updates.append((t_prev, t, cur["ticks"]))
        if len(updates) < 2:
            out["why"] = (f"the agent updated its CPU counters {len(updates)} time(s) inside the {end_s - start_s:.1f}-s "
                          "traffic window; two are needed (Net-SNMP updates every 5 s: use trials of "
                          f"{NET_SNMP_READABLE_S:g} s or more)")
            return out
        (b0, t0), (b1, t1) = busy_ticks(updates[0][2]), busy_ticks(updates[-1][2])
        if t1 <= t0:
            out["why"] = "the agent's CPU counters did not advance"
            return out
        out.update(pct=round(100 * (b1 - b0) / (t1 - t0), 2), resolution_pct=100 / (t1 - t0),
                   over_s=round(updates[-1][1] - updates[0][1], 2),
                   between_unix_s=[[round(updates[0][0], 3), round(updates[0][1], 3)],
                                   [round(updates[-1][0], 3), round(updates[-1][1], 3)]])
        return out
    polled = [(t, r["pct"]) for t, r in samples if start_s + src.averaging_s <= t <= end_s]
    inside = [pct for _, pct in polled]
    if not inside:
        out["why"] = (f"no reading inside the traffic window after the source's {src.averaging_s:g}-s averaging "
                      f"({end_s - start_s:.1f} s of traffic)")
        return out
    out.update(pct=round(sum(inside) / len(inside), 2), resolution_pct=1.0,
               over_s=round(end_s - start_s - src.averaging_s, 2),
               between_unix_s=[[round(polled[0][0], 3)] * 2, [round(polled[-1][0], 3)] * 2])
    return out

"""NAT64 on a VM router: Jool in the guest's kernel (``[dut] nat64`` with
``router = "vm"``), the same translator as :mod:`..model.translation` describes
with the same addresses, built by Jool instead of TAYGA (no commands run
here: the guest's startup script runs these lines, lab/vm/vm_config.py);
464XLAT's CLAT and PLAT likewise (:func:`xlat_commands`).

- ``stateless``: SIIT Jool (RFC 7915) in netfilter mode, pool6
  :data:`~..model.translation.PREFIX`, and one EAMT entry (RFC 7757) mapping t1's
  IPv6 address to :data:`~..model.translation.STATIC_V4`, as TAYGA's ``map``.
- ``stateful``: NAT64 Jool (RFC 6146) in netfilter mode, pool6 the same,
  pool4 R1's address on t2's side with UDP ports :data:`POOL4_PORTS`
  (Jool's default range, above the ports RFC 4814's walks take through a
  DUT that keeps state, so R1's NAT44 on the same address never meets
  them). Jool keeps its own sessions (its BIB), not the kernel's
  connection tracking.

Jool counts what it does (``jool stats display``): ``JSTAT_SUCCESS`` the
packets it translated, ``JSTAT_RECEIVED6``/``4`` every packet its hook
saw (native ones too), ``JSTAT_SESSIONS`` the sessions it holds.
"""

from __future__ import annotations

from typing import Any

from ..model import translation, xlat
from ..model.topology import Topology

#: The Jool instance's name in the guest.
INSTANCE = "v6bench"
#: Stateful Jool's UDP ports on R1's address (Jool's default pool4 range).
POOL4_PORTS = (61001, 65535)
#: The counters a trial records, by Jool's names.
STATS = ("JSTAT_SUCCESS", "JSTAT_RECEIVED6", "JSTAT_RECEIVED4", "JSTAT_SESSIONS", "JSTAT_BIB_ENTRIES")


def program(mode: str) -> str:
    """The guest's command for ``mode``: ``jool_siit`` or ``jool``."""
    return "jool_siit" if mode == "stateless" else "jool"


def setup_commands(mode: str, t1_ipv6: str, r1_t2_ipv4: str) -> list[list[str]]:
    """The commands that make R1 translate in ``mode`` (module docstring);
    ``t1_ipv6`` is t1's IPv6 address, ``r1_t2_ipv4`` R1's on t2's side."""
    jool = program(mode)
    out = [[jool, "instance", "add", INSTANCE, "--netfilter", "--pool6", str(translation.PREFIX)]]
    if mode == "stateless":
        out.append([jool, "-i", INSTANCE, "eamt", "add", f"{translation.STATIC_V4}/32", f"{t1_ipv6}/128"])
    else:
        out.append([jool, "-i", INSTANCE, "pool4", "add", r1_t2_ipv4, "{}-{}".format(*POOL4_PORTS), "--udp"])
    return out


def xlat_commands(topo: Topology, router: str) -> list[list[str]]:
    """464XLAT on VM routers (:mod:`.xlat`): SIIT Jool as the CLAT on R1
    (pool6 the NAT64 prefix, one EAMT entry mapping t1's IPv4 address to
    its CLAT address), NAT64 Jool as the PLAT on R2 (pool4 R2's address
    toward t2, as :func:`setup_commands`), and the routes past them."""
    if router == "r1":
        t1_v4 = topo.node("t1").interfaces[0].ipv4.split("/")[0]
        out = [["jool_siit", "instance", "add", INSTANCE, "--netfilter", "--pool6", str(translation.PREFIX)],
               ["jool_siit", "-i", INSTANCE, "eamt", "add", f"{t1_v4}/32", f"{xlat.clat_address(t1_v4)}/128"]]
    else:
        out = setup_commands("stateful", "", topo.node(router).interface(f"{router}-t2").ipv4.split("/")[0])
    return out + [["ip", *r] for r in xlat.routes(topo)[router]]


def translators(nat64: str, xlat_mode: str) -> list[tuple[str, str, str]]:
    """The Jools a VM lab's DUT runs, as (router, mode, the trial record's key): R1's NAT64
    (``translator``), or 464XLAT's PLAT on R2 (``translator``) and CLAT on R1 (``clat``)."""
    if nat64:
        return [("r1", nat64, "translator")]
    return [("r2", "stateful", "translator"), ("r1", "stateless", "clat")] if xlat_mode else []


def stats_command(mode: str) -> list[str]:
    return [program(mode), "-i", INSTANCE, "stats", "display", "--all", "--csv", "--no-headers"]


def parse_stats(text: str) -> dict[str, int]:
    """``stats display --csv``'s lines (``NAME,VALUE``) as numbers, the
    counters of :data:`STATS` only (0 where Jool has none)."""
    seen = {}
    for line in text.splitlines():
        name, _, value = line.strip().partition(",")
        if name in STATS and value.strip().isdigit():
            seen[name] = int(value)
    return {k: seen.get(k, 0) for k in STATS}


def translated(mode: str, before: dict[str, Any] | None, after: dict[str, Any] | None) -> dict[str, Any]:
    """Jool over one trial (the trial's ``dut.translator``, beside TAYGA's
    record of the namespace router): ``out_frames`` the packets it
    translated, ``seen_frames`` every packet its hook saw, and (stateful)
    its sessions before and after the trial."""
    out: dict[str, Any] = {"mode": mode, "implementation": "jool", "running": after is not None}
    if before is None or after is None:
        return out
    out.update(out_frames=after["JSTAT_SUCCESS"] - before["JSTAT_SUCCESS"],
               seen_frames=sum(after[k] - before[k] for k in ("JSTAT_RECEIVED6", "JSTAT_RECEIVED4")))
    if mode == "stateful":
        out.update(sessions_before=before["JSTAT_SESSIONS"], sessions=after["JSTAT_SESSIONS"])
    return out

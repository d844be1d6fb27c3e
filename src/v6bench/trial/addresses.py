"""Many source and destination addresses (``addresses = N``,
core/frames.Traffic.addresses), as draft-lencse-bmwg-multiple-ip-addresses
recommends beside RFC 4814's ports: t1's frames come from the first N
addresses of the range every lab routes toward t1
(lab/model/topology.SOURCES) and go to the first N of the range routed
toward t2 (``DESTINATIONS``); t2's frames, back, the other way round.
The engine walks each field in a permutation drawn from the trial's seed
(``walk.order = "permuted"``), frame k the (k mod N)-th value of each.

How many distinct flows a stream made is counted from what the engine
reports it walked (:func:`distinct_flows`): frame k carries value
(k mod nᵢ) of each walked field i, so the 4-tuples repeat with the
fields' least common multiple L, and within L they are all different
(each field's values are), so a stream of F frames made min(F, L).
"""

from __future__ import annotations

import math
from typing import Any

from ..engine.spec import Walk
from ..lab.model.topology import DESTINATIONS, SOURCES, Subnet


def _range(subnet: Subnet, version: int, n: int) -> str:
    """The first ``n`` addresses of ``subnet``'s IPv``version`` network, as the engine's ``"A-B"``."""
    net = subnet.ipv4 if version == 4 else subnet.ipv6
    first = net.network_address
    return f"{first}-{first + (n - 1)}"


def walk(version: int, n: int, tx_port: str, seed: int | None) -> Walk:
    """The addresses a stream of IPv``version`` from ``tx_port`` walks, N of
    each, in the permutation of ``seed`` (None: the engine's default)."""
    src, dst = (SOURCES, DESTINATIONS) if tx_port == "t1" else (DESTINATIONS, SOURCES)
    return Walk(src_ip=(_range(src, version, n),), dst_ip=(_range(dst, version, n),), order="permuted",
                seed=seed if seed is not None else 1)


def record(n: int) -> dict[str, Any]:
    """What a trial with ``n`` addresses stores of them (``addresses``)."""
    return {"count": n, **{f"{name}_ipv{v}": _range(subnet, v, n) for name, subnet in
                           (("sources", SOURCES), ("destinations", DESTINATIONS)) for v in (4, 6)}}


def distinct_flows(stream: dict[str, Any]) -> int | None:
    """The distinct 4-tuples an engine result's ``stream`` sent (module
    docstring); None if it walked nothing."""
    w = stream.get("walk")
    if not w:
        return None
    lengths = [int(w[k]) for k in ("src_ip", "dst_ip", "src_port", "dst_port") if w.get(k)]
    return min(int(stream["tx_frames"]), math.lcm(*lengths))


"""The DUT's configuration beyond forwarding, as nftables rule sets.

``limit_fps`` makes a DUT of known capacity (the check of every throughput
search): in R1's forward path, each input interface gets
``limit rate over N/second burst N/40 packets drop``, so R1 forwards at
most N frames/s per direction (plus a 25-ms bucket), both IP versions
together. More configurations (ACLs, NAT)
come with issue 5. The rule set is applied with ``nft -f -`` inside the
router's namespace and recorded with every result (:func:`rulesets`).
"""

from __future__ import annotations

import subprocess
from dataclasses import asdict, dataclass

from ..params import check
from . import nsctl

TABLE = "v6bench"


@dataclass(frozen=True)
class DutConfig:
    limit_fps: int = 0

    def __post_init__(self) -> None:
        check(0 <= self.limit_fps <= 100_000_000, "limit_fps", f"{self.limit_fps} is outside 0..100000000 frames/s")

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict | None) -> "DutConfig":
        return cls(**(d or {}))

    def describe(self) -> str:
        return f"limit {self.limit_fps:,} frames/s per direction" if self.limit_fps else "plain forwarding"


def burst_frames(limit_fps: int) -> int:
    """The limiter's bucket: 25 ms of traffic at the limit (at least 5, nft's
    default). A software router takes frames in batches after each wake-up,
    and a stall of a VM's vCPU delivers all that arrived meanwhile at once: a
    5-frame bucket would drop them and make the DUT's capacity a fraction of
    N, and a 10-ms one still did after the stalls of 10–25 ms seen on a
    2-vCPU VM. With 25 ms, a trial of D seconds passes up to N + N/40/D
    frames/s (+1.25 % for 2-s trials)."""
    return max(5, limit_fps // 40)


def ruleset(cfg: DutConfig, router: str, interfaces: list[str]) -> str | None:
    """The nftables text for ``router`` (None if it needs none)."""
    if not cfg.limit_fps or router != "r1":
        return None
    burst = burst_frames(cfg.limit_fps)
    rules = "\n".join(f'    iifname "{i}" limit rate over {cfg.limit_fps}/second burst {burst} packets drop' for i in interfaces)
    return (f"table inet {TABLE} {{\n  chain forward {{\n    type filter hook forward priority filter; policy accept;\n"
            f"{rules}\n  }}\n}}\n")


def _nft(args: list[str], text: str | None = None) -> str:
    r = subprocess.run(["nft", *args], input=text, capture_output=True, text=True, timeout=30)
    if r.returncode != 0:
        raise RuntimeError(f"nft {' '.join(args)}: {r.stderr.strip()}")
    return r.stdout


def apply(netns: str, text: str) -> None:
    """Loads ``text`` into ``netns`` (replacing our table if present)."""
    nsctl.run_in(netns, lambda: _nft(["-f", "-"], f"table inet {TABLE}\ndelete table inet {TABLE}\n" + text))


def rulesets(nodes: list[dict]) -> dict[str, str]:
    """``nft list ruleset`` of every router, as it is now."""
    return {n["name"]: nsctl.run_in(n["netns"], lambda: _nft(["list", "ruleset"])) for n in nodes if n["role"] == "dut"}

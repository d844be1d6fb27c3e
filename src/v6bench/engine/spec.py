"""The engine's trial spec as types (``docs/engine-spec.md``, version
:data:`SPEC_VERSION`): what the Python side may ask of the engine, frozen,
turned into the engine's JSON by :meth:`TrialSpec.to_json`.

Fields and defaults are the engine's; a field left at None (or False) is
left out of the JSON, so the engine's own default applies. The engine
validates every spec again (``v6bench-engine check``); the golden-JSON
tests (tests/unit/test_engine_seam.py) hold the two sides together.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

#: The spec version this module writes.
SPEC_VERSION = 3
AFTER_STALL = ("catch_up", "slip")
WALK_ORDERS = ("sequential", "permuted")


@dataclass(frozen=True)
class RateStep:
    """``rate_step``: after ``after_s`` seconds of traffic the port sends at ``fps``."""

    after_s: float
    fps: float


@dataclass(frozen=True)
class Port:
    """One tester port; it sends at ``tx_fps`` frames/s (``tx_rate``) if given."""

    name: str
    interface: str
    netns: str | None = None
    ipv4: str | None = None
    ipv6: str | None = None
    gateway_ipv4: str | None = None
    gateway_ipv6: str | None = None
    backend: str | None = None
    tx_fps: float | None = None
    #: One CPU, or one per sender thread (``tx_queues``).
    tx_cpu: int | tuple[int, ...] | None = None
    tx_queues: int | None = None
    rate_step: RateStep | None = None
    #: The streams in runs: each share unit this many frames in a row (engine/src/mix.rs ``Schedule::runs``).
    tx_run_frames: int | None = None

    @property
    def sends(self) -> bool:
        return self.tx_fps is not None

    def to_json(self) -> dict:
        out = _plain(self, skip=("tx_fps", "tx_cpu", "rate_step"))
        if self.tx_fps is not None:
            out["tx_rate"] = {"fps": self.tx_fps}
        if self.tx_cpu is not None:
            out["tx_cpu"] = list(self.tx_cpu) if isinstance(self.tx_cpu, tuple) else self.tx_cpu
        if self.rate_step is not None:
            out["rate_step"] = {"after_s": self.rate_step.after_s, "fps": self.rate_step.fps}
        return out


@dataclass(frozen=True)
class Walk:
    """``walk``: the addresses and UDP ports a stream takes in turn, frame
    ``k`` the ``k mod n``-th of each field's ``n`` values (engine/src/walk.rs).
    Addresses are ``"A"`` or inclusive ranges ``"A-B"``; ports numbers or
    ``"P-Q"``. ``permuted`` sends each field in one permutation drawn from
    ``seed`` (the engine's default 1), the same every cycle. ``reply_to``:
    a stream's ``learned_tuples`` records (base64, engine/src/tuples.rs),
    frame ``k`` answering record ``k mod n``: to its source address and
    port, from its destination address and port (in place of ``dst_ip``,
    ``src_ip``, ``dst_port`` and ``src_port``, in the records' order)."""

    dst_ip: tuple[str, ...] = ()
    src_ip: tuple[str, ...] = ()
    dst_port: tuple[int | str, ...] = ()
    src_port: tuple[int | str, ...] = ()
    order: str = "sequential"
    seed: int | None = None
    reply_to: str | None = None

    def __post_init__(self) -> None:
        if not (self.dst_ip or self.src_ip or self.dst_port or self.src_port or self.reply_to):
            raise ValueError("a walk walks at least one of dst_ip, src_ip, dst_port, src_port, reply_to")
        if self.reply_to is not None and (self.dst_ip or self.src_ip or self.dst_port or self.src_port
                                          or self.order != "sequential"):
            raise ValueError("a walk's reply_to gives dst_ip, src_ip, dst_port and src_port, in the records' order")
        if self.order not in WALK_ORDERS:
            raise ValueError(f"walk order {self.order!r} is not one of {WALK_ORDERS}")
        if self.seed is not None and self.order != "permuted":
            raise ValueError("a walk's seed is for order 'permuted'")

    def to_json(self) -> dict:
        out = {f.name: list(getattr(self, f.name)) for f in fields(self)
               if f.name in ("dst_ip", "src_ip", "dst_port", "src_port") and getattr(self, f.name)}
        return {**out, "order": self.order, **({} if self.seed is None else {"seed": self.seed}),
                **({} if self.reply_to is None else {"reply_to": self.reply_to})}


@dataclass(frozen=True)
class Stream:
    """One stream of test frames from ``tx_port`` to ``rx_port``."""

    name: str
    tx_port: str
    rx_port: str
    ip_version: int
    frame_size: int
    share: int = 1
    #: Fragment at the source to this IP MTU (the path does not carry the frames whole).
    fragment_mtu: int | None = None
    #: ``icmp_echo`` instead of UDP test frames (None: udp).
    protocol: str | None = None
    dst_ip: str | None = None
    #: The UDP source port (None: the engine's default, 0xC020); a family's second flow has its own
    #: (core/frames.FLOW_SRC_PORT), so that a DUT can scope a scenario to it.
    src_port: int | None = None
    #: The engine's ``ipv6_ext_headers`` list (core/ext_headers.py).
    ipv6_ext_headers: tuple[dict, ...] | None = None
    #: Destinations (and sources, ports) that change from frame to frame.
    walk: Walk | None = None
    #: The IP version the frames arrive as, where a translator (NAT64, SIIT) swaps the header (None: ``ip_version``).
    rx_ip_version: int | None = None
    #: Record each arriving frame's source address and ports (``learned_tuples`` in the result), for a
    #: stream that answers the connections a stateful DUT made of them (:attr:`Walk.reply_to`).
    learn_tuples: bool = False

    def to_json(self) -> dict:
        out = _plain(self, skip=("ipv6_ext_headers", "walk"))
        if self.ipv6_ext_headers is not None:
            out["ipv6_ext_headers"] = list(self.ipv6_ext_headers)
        if self.walk is not None:
            out["walk"] = self.walk.to_json()
        return out


#: The engine's pause after learning when a spec gives none [s] (``learning.settle_s``, docs/engine-spec.md).
DEFAULT_SETTLE_S = 0.5


@dataclass(frozen=True)
class TrialSpec:
    """One trial: its ports and streams, and ``duration_s`` of traffic or
    ``frame_count`` frames per sending port (exactly one)."""

    ports: tuple[Port, ...]
    streams: tuple[Stream, ...]
    duration_s: float | None = None
    frame_count: int | None = None
    drain_s: float | None = None
    #: End the drain once every frame offered has arrived (``drain_s`` the most it waits; docs/engine-spec.md).
    drain_until_received: bool = False
    #: The pause after learning before the traffic (the engine's ``learning.settle_s``; None: its default,
    #: :data:`DEFAULT_SETTLE_S`).
    learning_settle_s: float | None = None
    rx_cpu: int | None = None
    rx_priority: int | None = None
    tester_limited_backlog_frames: int | None = None
    after_stall: str | None = None
    export_histograms: bool = False
    tx_stamp_check: bool = False
    #: The lab's namespaces: every port's ``netns`` must start with it (the engine refuses others).
    netns_prefix: str | None = None
    #: Ports in this machine's own namespace (an external lab's declared interfaces) and addresses
    #: outside the benchmarking blocks (an external lab that allows them): refused by the engine without these.
    allow_root_netns: bool = False
    allow_non_benchmarking_addresses: bool = False
    spec_version: int = SPEC_VERSION

    def __post_init__(self) -> None:
        if (self.duration_s is None) == (self.frame_count is None):
            raise ValueError("a trial spec gives exactly one of duration_s and frame_count")
        if self.after_stall is not None and self.after_stall not in AFTER_STALL:
            raise ValueError(f"after_stall {self.after_stall!r} is not one of {AFTER_STALL}")
        names = [p.name for p in self.ports]
        for s in self.streams:
            if s.tx_port not in names or s.rx_port not in names:
                raise ValueError(f"stream {s.name}: its ports are not the spec's")

    def to_json(self) -> dict:
        """The engine's JSON (docs/engine-spec.md)."""
        out = {"spec_version": self.spec_version,
               **_plain(self, skip=("spec_version", "ports", "streams", "learning_settle_s"))}
        if self.learning_settle_s is not None:
            out["learning"] = {"settle_s": self.learning_settle_s}
        return {**out, "ports": [p.to_json() for p in self.ports], "streams": [s.to_json() for s in self.streams]}

    def port(self, name: str) -> Port:
        return next(p for p in self.ports if p.name == name)

    def with_ports(self, change) -> "TrialSpec":
        """The spec with ``change(port)`` in place of every port."""
        return replace(self, ports=tuple(change(p) for p in self.ports))


def _plain(obj, skip: tuple[str, ...]) -> dict:
    """``obj``'s fields but ``skip``, without those at None or False."""
    return {f.name: getattr(obj, f.name) for f in fields(obj)
            if f.name not in skip and getattr(obj, f.name) is not None and getattr(obj, f.name) is not False}

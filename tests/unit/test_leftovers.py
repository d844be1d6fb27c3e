"""Waiting out the incomplete datagrams a router holds from an earlier
trial (lab/emulated/leftovers.py), on a clock of its own: what it reads
of ``/proc``, that it waits until none is left and says what was held
and for how long, and that it gives up past the reassembly timeout."""

from __future__ import annotations

import pytest

from v6bench.core.errors import LabError
from v6bench.lab.emulated import leftovers

#: ``cat`` of leftovers.FILES on a router of this machine (2026-12-02, R2 of a 464XLAT lab after a search).
READ = """sockets: used 1
TCP: inuse 0 orphan 0 tw 0 alloc 1 mem 376
UDP: inuse 0 mem 0
UDPLITE: inuse 0
RAW: inuse 0
FRAG: inuse 2107 memory 4196632
TCP6: inuse 0
UDP6: inuse 0
UDPLITE6: inuse 0
RAW6: inuse 0
FRAG6: inuse 3 memory 6000
30
60
"""


def text(v4: int, v6: int = 0) -> str:
    return READ.replace("inuse 2107 memory 4196632", f"inuse {v4} memory {v4 * 1992}").replace(
        "inuse 3 memory 6000", f"inuse {v6} memory {v6 * 2000}")


class Clock:
    """A clock that moves only when slept on."""

    def __init__(self) -> None:
        self.now_s = 100.0

    def __call__(self) -> float:
        return self.now_s

    def sleep(self, s: float) -> None:
        self.now_s += s


def reader(texts: list[str]):
    """Returns each of ``texts`` in turn, then the last again."""
    it = iter(texts)
    last = [texts[-1]]

    def read() -> str:
        last[0] = next(it, last[0])
        return last[0]
    return read


def test_parse_adds_ipv4_and_ipv6_queues_and_takes_the_longer_timeout():
    assert leftovers.parse(READ) == leftovers.Held(2110, 4202632, 60.0)
    assert leftovers.parse(text(0)) == leftovers.Held(0, 0, 60.0)


def test_parse_refuses_what_is_not_the_four_files():
    with pytest.raises(LabError, match="two timeouts"):
        leftovers.parse("FRAG: inuse 0 memory 0\n")


def test_nothing_held_is_none_and_waits_not():
    clock = Clock()
    assert leftovers.wait_out({"r1": reader([text(0)]), "r2": reader([text(0)])}, clock.sleep, clock) is None
    assert clock.now_s == 100.0


def test_waits_until_every_router_holds_none_and_says_what_each_held():
    clock = Clock()
    out = leftovers.wait_out({"r1": reader([text(0)]), "r2": reader([text(5, 1), text(5), text(2), text(0)])},
                             clock.sleep, clock)
    assert out == {"routers": {"r2": {"datagrams": 6, "bytes": 5 * 1992 + 2000}}, "waited_s": 3 * leftovers.POLL_S}


def test_gives_up_past_the_longest_timeout_and_names_the_router():
    clock = Clock()
    with pytest.raises(LabError, match=r"waiting 63 s.*\(r2: 4\): something else sends the DUT fragments"):
        leftovers.wait_out({"r1": reader([text(0)]), "r2": reader([text(4)])}, clock.sleep, clock)
    assert 60 + leftovers.MARGIN_S <= clock.now_s - 100.0 < 60 + leftovers.MARGIN_S + leftovers.POLL_S

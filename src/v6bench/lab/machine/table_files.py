"""The forwarding tables' files on this machine, kept in the run
directory's ``tables/`` whatever kind of lab takes the table (loaded into
the emulated lab's routers, lab/emulated/fib_load.py; announced over BGP
to an external lab's DUT, lab/external/bgp_speaker.py): the table as a
prefix list (:func:`table_file`, generated once from its name and seed,
:mod:`v6bench.fib`), and the destinations the trials walk
(:func:`destinations`): one address inside each of ``n`` prefixes a
family, where that prefix is the longest match."""

from __future__ import annotations

import ipaddress
import json
from pathlib import Path

from ...fib import destinations as fib_destinations
from ...fib import generate, prefix_list, shapes
from ...fib.generate import Table
from ..model.site import Site

#: Destinations a family sampled to tell when a table is learnt: by the kernel's route lookup in the
#: emulated lab's routers, by probe frames through an external DUT (trial/fib_learning.py).
SAMPLE = 64


def table_file(site: Site, name: str, seed: int) -> Path:
    """The table as a prefix list, generated once per run directory."""
    path = site.run_dir / "tables" / f"{name}-seed{seed}.txt"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        prefix_list.write(generate.table(shapes.table_kind(name), seed), tmp)
        tmp.replace(path)
    return path


def destinations_file(site: Site, name: str, seed: int, n: int) -> Path:
    return site.run_dir / "tables" / f"{name}-seed{seed}-dest{n}.json"


def destinations(site: Site, name: str, seed: int, n: int, table: Table | None = None) -> dict[int, tuple[str, ...]]:
    """``n`` destinations a family of table ``name`` (seed ``seed``), as
    text, kept beside the table (:func:`destinations_file`: the same every
    time); ``table``: the table already read, so it is not read again."""
    path = destinations_file(site, name, seed, n)
    if path.exists():
        return {int(k): tuple(v) for k, v in json.loads(path.read_text()).items()}
    table = table or prefix_list.read(table_file(site, name, seed))
    out = {}
    for version, routes in ((4, table.ipv4), (6, table.ipv6)):
        out[version] = tuple(str(ipaddress.ip_address(a)) for a in fib_destinations.destinations(routes, n, seed))
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(out))
    tmp.replace(path)  # whole or not at all: a cut-short write is never read back
    return out

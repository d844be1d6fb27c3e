"""A campaign as checked, frozen types: its run order (:class:`Design`),
each test's matrix (:class:`Matrix`) and test (:class:`TestSpec`), each
scenario's lab and DUT (:class:`Scenario`), and the :class:`Campaign`
(campaign/spec.py parses a file into them; campaign/fitting.py checks
each test on the labs it runs on)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..core.frames import Mix, Traffic
from ..lab.model.dut import DutConfig
from ..lab.model.spec import LabSpec
from ..methods import throughput


@dataclass(frozen=True)
class Design:
    """The run order: ``randomized`` repetition blocks (seeded), or the
    file's order (each point's repetitions one after the other)."""

    order: str = "randomized"
    #: The shuffle's seed; None: drawn when a run starts (and recorded with it).
    seed: int | None = None
    #: Sequential: each test of two blocks or more runs its blocks, then one block more at a time up to
    #: ``max_blocks`` while a comparison drawn from it is undecided (campaign/looks.py, report/sequential.py).
    sequential: bool = False
    max_blocks: int | None = None
    #: A comparison whose interval lies within ± this [% of A] is decided (no difference beyond it).
    precision_pct: float | None = None

    def blocks(self, given: int) -> int:
        """The most blocks a test given ``given`` runs: ``max_blocks`` in a
        sequential design for a test of two or more (a description, one
        block, runs once), else ``given``."""
        if self.sequential and self.max_blocks and given >= 2:
            return max(given, self.max_blocks)
        return given


@dataclass(frozen=True)
class Matrix:
    """A test's points: mixes × frame sizes × directions, each run in
    ``blocks`` repetition blocks (the ``[matrix] repeat`` key, ``[[test]]
    blocks``: one repetition of every point a block, interleaved with the
    other points; a test kind's own ``repeat`` is trials inside one test);
    ``drain_s``: how long a trial waits for its last frames [s]."""

    mixes: tuple[Mix, ...]
    frame_sizes: tuple[int, ...]
    directions: tuple[str, ...]
    blocks: int
    drain_s: float
    #: The pause between the engine's learning and its traffic [s] (RFC 2544 §23); None: the engine's default.
    settle_s: float | None = None


@dataclass(frozen=True)
class TestSpec:
    index: int
    kind: str
    params: Any
    matrix: Matrix
    throughput_search: throughput.Params
    #: Extension headers or ICMP echo instead of plain UDP frames (core/frames.py).
    traffic: Traffic = Traffic()


@dataclass(frozen=True)
class Scenario:
    """One lab and DUT configuration of a campaign and the tests (by index)
    that run on it. A campaign without ``[[scenario]]`` has one, named ""."""

    name: str
    lab: LabSpec
    dut: DutConfig
    tests: tuple[int, ...]
    #: An A/A control: the same lab and DUT as the scenario named here, compared with it like any two series.
    control_of: str = ""
    #: The scenario this one's series are compared with (report/scenario_pairs._reference); "": the run's first.
    compare_with: str = ""


@dataclass(frozen=True)
class Campaign:
    name: str
    path: str
    text: str
    sha256: str
    lab: LabSpec
    dut: DutConfig
    selftest_when: str
    selftest_frame_sizes: tuple[int, ...]
    tests: tuple[TestSpec, ...] = field(default=())
    scenarios: tuple[Scenario, ...] = field(default=())
    design: Design = Design()

    @property
    def trial_frames(self) -> tuple[tuple[int, ...], int, tuple[str | None, ...]]:
        """What the tester's self-tests must cover for this campaign (selftest.ensure): its tests' frame sizes,
        the largest link MTU of its scenarios, and their CPU arrangements (one self-test each)."""
        return (tuple(fs for t in self.tests for fs in t.matrix.frame_sizes),
                max(sc.lab.mtu.largest for sc in self.scenarios),
                tuple(dict.fromkeys(sc.lab.cpu_arrangement for sc in self.scenarios)))

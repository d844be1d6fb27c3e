"""Every trial of a campaign run written to the store as it ends, and an
interrupted attempt's trials replayed: a point that was in flight when
the run stopped is run again, but the trials its attempt already
recorded are answered from the store, not repeated, as long as the
procedure asks for the same trials in the same order (every search here
is deterministic given its trial results)."""

from __future__ import annotations

from typing import Callable

from ..core.tester import ConnectionTester, Measurement, Tester
from ..store.db import Store


class Recorder:
    """A :class:`Tester` that writes every trial to the store as it ends.

    ``replay``: the trials test ``test_id`` recorded in an interrupted
    attempt (seq 0, 1, …). While the calls match them they are answered
    from the store and stay where they are; at the first call that does
    not match, the attempt's remaining trials are deleted (they answered
    calls this attempt does not make) and trials are measured from there.
    Each trial is in the database once, in the test's own row.
    """

    def __init__(self, tester: Tester, store: Store, test_id: int, replay: list[dict]) -> None:
        self.tester, self.store, self.test_id, self.replay = tester, store, test_id, list(replay)
        self.line_fps = tester.line_fps
        self.seq = 0
        self.replayed = 0

    def _call(self, call: str, args: dict, fn: Callable[[], Measurement]) -> Measurement:
        if self.replay and self.replay[0]["call"] == call and self.replay[0]["call_args"] == args:
            r = self.replay.pop(0)
            m = Measurement(r["duration_s"], r["intended_fps"], r["offered_fps"], r["tx_frames"], r["rx_frames"],
                            bool(r["tester_limited"]), r["result"], tuple(r["streams"]), r["extra"] or {})
            self.replayed += 1
        else:
            if self.replay:
                self.store.delete_trials(self.test_id, from_seq=self.seq)
                self.replay = []
            m = fn()
            self.store.add_trial(self.test_id, self.seq, call, args, m)
        self.seq += 1
        return m

    def measure(self, duration_s: float, load_fps: float) -> Measurement:
        return self._call("measure", {"duration_s": duration_s, "load_fps": load_fps},
                          lambda: self.tester.measure(duration_s, load_fps))

    def burst(self, frames: int) -> Measurement:
        return self._call("burst", {"frames": frames}, lambda: self.tester.burst(frames))

    def step(self, duration_s: float, load_fps: float, after_s: float, then_fps: float) -> Measurement:
        return self._call("step", {"duration_s": duration_s, "load_fps": load_fps, "after_s": after_s, "then_fps": then_fps},
                          lambda: self.tester.step(duration_s, load_fps, after_s, then_fps))

    def mesh(self, pattern: str, duration_s: float, load_fps: float) -> Measurement:
        return self._call("mesh", {"pattern": pattern, "duration_s": duration_s, "load_fps": load_fps},
                          lambda: self.tester.mesh(pattern, duration_s, load_fps))

    def reset(self, duration_s: float, load_fps: float, at_s: float, kind: str) -> Measurement:
        return self._call("reset", {"duration_s": duration_s, "load_fps": load_fps, "at_s": at_s, "kind": kind},
                          lambda: self.tester.reset(duration_s, load_fps, at_s, kind))

    def connections(self) -> ConnectionTester:
        """The tester's RFC 9693 phases, each ``open`` and ``validate``
        stored as a trial of this test. They are never replayed: a phase's
        outcome depends on the table the DUT holds, which a replay would
        not rebuild, so an interrupted attempt's trials are deleted and
        the test measured again from its first."""
        if self.replay:
            self.store.delete_trials(self.test_id, from_seq=self.seq)
            self.replay = []
        return _RecordedConnections(self, self.tester.connections())


class _RecordedConnections:
    """A :class:`ConnectionTester` whose phases a :class:`Recorder` stores."""

    def __init__(self, recorder: Recorder, tester: ConnectionTester) -> None:
        self.recorder, self.tester = recorder, tester

    def clear(self) -> None:
        self.tester.clear()

    def tear_down(self) -> float:
        return self.tester.tear_down()

    def hold(self, timeout_s: float) -> float | None:
        return self.tester.hold(timeout_s)

    def open(self, connections: int, rate_fps: float) -> Measurement:
        return self.recorder._call("open", {"connections": connections, "rate_fps": rate_fps},
                                   lambda: self.tester.open(connections, rate_fps))

    def validate(self, connections: int, rate_fps: float) -> Measurement:
        return self.recorder._call("validate", {"connections": connections, "rate_fps": rate_fps},
                                   lambda: self.tester.validate(connections, rate_fps))

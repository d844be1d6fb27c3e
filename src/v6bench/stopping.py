"""How a command learns that it must stop: Ctrl-C, SIGTERM, SIGHUP.

Each of the three signals raises ``KeyboardInterrupt`` in the command's
main thread, so every ``with`` block and ``finally`` on the way out runs
(the temporary lab is removed, the engine is stopped). Python can lose
that exception: when the signal lands while the interpreter runs a
callback whose exceptions it ignores (a weak reference's callback, a
hook after ``fork``, a ``__del__``), it prints "Exception ignored" and
carries on as if nothing had happened. Measured: one Ctrl-C in ten that
arrived while a lab was being built was lost that way, and the trial then
ran its full duration.

So the handler also records the request, and the places that wait long
(the engine's run, :func:`v6bench.engine.run_trial`) call :func:`check`,
which raises ``KeyboardInterrupt`` again while a stop is pending. A
process forked from the command (pyroute2 forks helpers to enter
namespaces and ends them with SIGTERM) inherits the handler and just
exits, never unwinding into the command's cleanup.
"""

from __future__ import annotations

import os
import signal
import threading

#: The signals that stop a command.
SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

_requested = threading.Event()
_main_pid = os.getpid()


def _handler(signum, frame) -> None:  # noqa: ARG001
    if os.getpid() != _main_pid:
        os._exit(128 + signum)
    _requested.set()
    raise KeyboardInterrupt


def install() -> None:
    """Makes SIGINT, SIGTERM and SIGHUP stop this process (call from the
    main thread, once, as a command starts)."""
    global _main_pid
    _main_pid = os.getpid()
    _requested.clear()
    for s in SIGNALS:
        signal.signal(s, _handler)


def requested() -> bool:
    """Whether a stop signal arrived since :func:`install`."""
    return _requested.is_set()


def check() -> None:
    """Raises ``KeyboardInterrupt`` when a stop was requested: for a signal
    whose exception Python lost (see the module's docstring)."""
    if _requested.is_set():
        raise KeyboardInterrupt

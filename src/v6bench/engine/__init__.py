"""The packet engine seen from Python: the trial spec and result as
versioned types (:mod:`.spec`, :mod:`.result`), the tester host that
runs it (:mod:`.tester_host`: this machine, :mod:`.local`) and the trials
run there (:mod:`.process`). The engine itself is ``engine/`` (Rust)."""

from .local import binary, kill_recorded, process_start_ticks, write_frames
from .process import run_rr, run_trial, version
from .result import RESULT_VERSION
from .spec import SPEC_VERSION
from .tester_host import EngineError

__all__ = ["EngineError", "RESULT_VERSION", "SPEC_VERSION", "binary", "kill_recorded", "process_start_ticks", "run_rr",
           "run_trial", "version", "write_frames"]

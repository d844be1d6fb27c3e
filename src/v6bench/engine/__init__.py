"""The packet engine seen from Python: the trial spec and result as
versioned types (:mod:`.spec`, :mod:`.result`) and the process that runs
it (:mod:`.process`). The engine itself is ``engine/`` (Rust)."""

from .process import EngineError, binary, kill_recorded, process_start_ticks, run_rr, run_trial, version, write_frames
from .result import RESULT_VERSION
from .spec import SPEC_VERSION

__all__ = ["EngineError", "RESULT_VERSION", "SPEC_VERSION", "binary", "kill_recorded", "process_start_ticks", "run_rr",
           "run_trial", "version", "write_frames"]

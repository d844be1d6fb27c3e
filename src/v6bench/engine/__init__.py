"""The packet engine seen from Python: the trial spec and result as
versioned types (:mod:`.spec`, :mod:`.result`), the tester host that
runs it (:mod:`.tester_host`: this machine, :mod:`.local`) and the trials
run there (:mod:`.process`). The engine itself is ``engine/`` (Rust).
Everything above ``engine/`` reaches the engine through what this
package exports, which goes through the tester host; the local host's
own parts (:mod:`.local`: its binary, the ``frames`` command) are for
tests and benchmarks on this machine."""

from .process import program_sha256, run_rr, run_trial, stop_recorded, version
from .result import RESULT_VERSION
from .spec import SPEC_VERSION
from .tester_host import EngineError

__all__ = ["EngineError", "RESULT_VERSION", "SPEC_VERSION", "program_sha256", "run_rr", "run_trial", "stop_recorded",
           "version"]

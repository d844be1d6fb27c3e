"""The ``v6bench`` command line: parses, dispatches, prints, exits.

One module per command group (``lab``, ``trial``, ``test``/``run``,
``results``/``report``/``selftest``/``version``, ``compare``/``trend``, ``table``), each adding its parsers
and a ``command_run`` function; ``options.py`` declares every option as a
field of a test definition, ``render.py`` what is printed.

Exit statuses: 0 done; 2 bad input or a lab that cannot be built or used
(one line on stderr, naming the option); 1 the engine or the system
failed; 130 interrupted (Ctrl-C or SIGTERM), after cleaning up.
"""

from __future__ import annotations

import argparse
import re
import sys

from .. import engine, selftest, stopping
from ..core.errors import UsageError, V6benchError
from ..lab.model.site import Site
from . import compare, lab, results, table, test, trial

#: The command groups, in the order of ``v6bench --help``.
GROUPS = (lab, trial, test, results, compare, table)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, exit 2
        print(f"{self.prog}: error: {one_line(message)}", file=sys.stderr)
        raise SystemExit(2)


def parser() -> argparse.ArgumentParser:
    p = _Parser(prog="v6bench", description="Benchmark what IPv6 costs a router (RFC 2544, 5180, 8219).")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for group in GROUPS:
        group.add(sub, _Parser)
    return p


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def one_line(text: str) -> str:
    """An error as one line: characters an input put in it that would
    break or hide the line (controls, line separators) written as escapes."""
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in text)


def _parse(argv: list[str] | None) -> argparse.Namespace:
    """The arguments; an option the command does not take is refused
    naming it, and for ``test KIND`` saying which kinds take it."""
    p = parser()
    args, extra = p.parse_known_args(argv)
    if extra and not re.match(r"--?[A-Za-z]", extra[0]):  # a value no option takes: after a switch, or a second positional
        given = list(sys.argv[1:] if argv is None else argv)
        switches = _switches(p, args)
        after = [given[i - 1] for i in range(1, len(given)) if given[i] == extra[0] and given[i - 1] in switches]
        p.error(f"{extra[0]!r}: " + (f"{after[0]} is a switch and takes no value" if after else "a value no option takes"))
    if extra:
        flag = next((x for x in extra if re.match(r"--?[A-Za-z]", x)), extra[0])
        where = f"v6bench {args.command}" + (f" {args.kind}" if args.command == "test" else "")
        others = [k for k in test_kinds_taking(p, flag.split("=")[0])] if args.command == "test" else []
        also = f" (it is an option of {', '.join(others)})" if others else ""
        p.error(f"{as_typed(flag)}: {where} takes no such option{also}")
    return args


def as_typed(word: str) -> str:
    """A word of the command line as an error names it: an option name
    (``--mix``, ``-b``) bare, anything else quoted as typed (``'-b:'``,
    ``'--mix=x'``), so that the ``: `` after it cannot be read as part of it."""
    return word if re.fullmatch(r"--?[A-Za-z0-9][A-Za-z0-9-]*", word) else repr(word)


def _switches(p: argparse.ArgumentParser, args: argparse.Namespace) -> set[str]:
    """The options of the command given that take no value."""
    sub = _subparsers(p)[args.command]
    if getattr(args, "kind", None):
        sub = _subparsers(sub)[args.kind]
    return {f for a in sub._actions if a.nargs == 0 for f in a.option_strings}


def test_kinds_taking(p: argparse.ArgumentParser, flag: str) -> list[str]:
    """The test kinds whose parser takes ``flag``."""
    test_parser = _subparsers(p)["test"]
    return [name for name, kp in _subparsers(test_parser).items() if flag in kp._option_string_actions]


def _subparsers(p: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in p._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def main(argv: list[str] | None = None) -> int:
    stopping.install()
    args = _parse(argv)
    try:
        if getattr(args, "selftest", None) not in (None, *selftest.WHEN):
            raise UsageError(f"{args.selftest!r} is not one of {', '.join(selftest.WHEN)}", "V6BENCH_SELFTEST")
        return args.command_run(Site.from_env(), args, _say)
    except UsageError as e:
        options = getattr(args, "options", None)
        print(f"v6bench: error: {one_line(options.render(e) if options else str(e))}", file=sys.stderr)
        return e.exit_status
    except V6benchError as e:
        print(f"v6bench: error: {one_line(str(e))}", file=sys.stderr)
        return e.exit_status
    except engine.EngineError as e:
        print(f"v6bench: error: engine: {one_line(str(e))}", file=sys.stderr)
        return 2 if e.bad_input else 1
    except KeyboardInterrupt:
        print("v6bench: interrupted; the lab's temporary parts were removed", file=sys.stderr)
        return 130

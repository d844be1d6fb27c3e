"""The errors v6bench shows to its user, and the exit status of each.

Every error a user can cause or fix prints one line and exits 2; the
command line (``cli/``) is the only place that turns them into exits.

A :class:`UsageError` names the field of the test definition it is about
as a path (``("test", 2, "mixes", 0)``), not as the command-line option or
file key that gave it: a campaign file renders the path as
``test[2].mixes[0]``, the command line as the option that set the field
(``--mix``). Code that checks a part of a definition raises with the field
relative to that part; code that checks the whole places it with
:meth:`UsageError.at`.
"""

from __future__ import annotations

import json
import re

Field = tuple[str | int, ...]


class V6benchError(Exception):
    """A failure with a one-line message for the user."""

    exit_status = 1


class UsageError(V6benchError):
    """Bad input: an option, a value, a file. Exit status 2.

    ``field``: the path of the definition field at fault (empty if the
    error is about no one field); ``message``: the problem, without the field.
    """

    exit_status = 2

    def __init__(self, message: str, field: Field | str = ()) -> None:
        self.message = message
        self.field: Field = (field,) if isinstance(field, str) else tuple(field)
        super().__init__(message)

    def at(self, *prefix: str | int) -> "UsageError":
        """The same error seen from ``prefix``'s level: its field is ``prefix + field``."""
        return type(self)(self.message, (*prefix, *self.field))

    def __str__(self) -> str:
        return f"{field_path(self.field)}: {self.message}" if self.field else self.message


class Refused(UsageError):
    """A point the DUT cannot be measured at with its test's settings,
    found while measuring it (RFC 9693's preliminary phase: the DUT did not
    pass every frame). ``v6bench trial`` stops with it (exit status 2); a
    run stores the point's test ``failed`` with the reason and goes on with
    its other points (campaign/runner.py), so a long campaign is not lost to
    one point."""


class LabError(V6benchError):
    """The lab cannot be built, found, locked or used. Exit status 2."""

    exit_status = 2


def field_path(field: Field) -> str:
    """A field path as a file names it: ``test[2].mixes[0]``; a key that
    is not a bare TOML key is quoted as TOML quotes it (``lab."a b"``)."""
    out = ""
    for part in field:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            key = part if _BARE_KEY.fullmatch(part) else json.dumps(part)
            out += f".{key}" if out else key
    return out


#: A TOML bare key (TOML 1.0 "Keys").
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")

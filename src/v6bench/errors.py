"""The errors v6bench shows to its user, and the exit status of each.

Every error a user can cause or fix prints one line and exits 2; the
command line (``cli.py``) is the only place that turns them into exits.
"""

from __future__ import annotations


class V6benchError(Exception):
    """A failure with a one-line message for the user."""

    exit_status = 1


class UsageError(V6benchError):
    """Bad input: an option, a value, a file. Exit status 2."""

    exit_status = 2


class LabError(V6benchError):
    """The lab cannot be built, found, locked or used. Exit status 2."""

    exit_status = 2

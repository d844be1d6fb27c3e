"""Test parameters from a campaign table or the command line, checked
field by field into a frozen dataclass.

Every field is typed (int, float, str, bool, or a tuple of one of them);
an unknown key or a value of the wrong type is a :class:`UsageError` that
names the field (``("test", 2, "trial_duration_s")``: "expected a number,
got 'x'"). Range checks live in each class's ``__post_init__``, through
:func:`check`. The fields of each class are the keys a campaign file
takes and, through ``cli/options.py``, the options of the command line.
"""

from __future__ import annotations

import dataclasses
import typing
from typing import Any, TypeVar

from .errors import Field, UsageError

T = TypeVar("T")


def _coerce(kind: Any, value: Any, where: Field) -> Any:
    origin = typing.get_origin(kind)
    if origin is tuple:
        (inner, _) = typing.get_args(kind)
        if not isinstance(value, (list, tuple)):
            value = [value]
        return tuple(_coerce(inner, v, (*where, i)) for i, v in enumerate(value))
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        args = [a for a in typing.get_args(kind) if a is not type(None)]
        return None if value is None else _coerce(args[0], value, where)
    if kind is bool:
        if isinstance(value, bool):
            return value
        raise UsageError(f"expected true or false, got {value!r}", where)
    if kind is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise UsageError(f"expected a whole number, got {value!r}", where)
    if kind is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        raise UsageError(f"expected a number, got {value!r}", where)
    if kind is str:
        if isinstance(value, str):
            return value
        raise UsageError(f"expected a string, got {value!r}", where)
    raise TypeError(f"unsupported parameter type {kind}")


def parse(cls: type[T], values: dict, where: Field) -> T:
    """``cls(**values)`` with every key known and every value of its type;
    errors name their field under ``where``."""
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(values) - names)
    if unknown:
        raise UsageError(f"unknown key (known: {', '.join(sorted(names))})", (*where, unknown[0]))
    kwargs = {k: _coerce(hints[k], v, (*where, k)) for k, v in values.items()}
    try:
        return cls(**kwargs)
    except UsageError as e:
        raise e.at(*where) from None


def only_keys(d: dict, known: tuple[str, ...], where: Field = ()) -> None:
    """Every key of TOML table ``d`` is one of ``known``; else a
    :class:`UsageError` naming the first unknown key under ``where``."""
    for k in d:
        if k not in known:
            raise UsageError(f"unknown key (known: {', '.join(known)})", (*where, k))


def subtable(d: dict, key: str, where: Field = ()) -> dict:
    """Table ``d``'s table ``key`` (empty if absent); a
    :class:`UsageError` at ``where`` + ``key`` if it is not a table."""
    v = d.get(key, {})
    if not isinstance(v, dict):
        raise UsageError("expected a table", (*where, key))
    return v


def check(ok: bool, field: str, message: str) -> None:
    """Raises ``UsageError(message, field)`` unless ``ok``; :func:`parse` places the field."""
    if not ok:
        raise UsageError(message, field)

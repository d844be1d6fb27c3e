"""Test parameters from a campaign table or the command line, checked
field by field into a frozen dataclass.

Every field is typed (int, float, str, bool, or a tuple of one of them);
an unknown key or a value of the wrong type is a :class:`UsageError` that
names the field, ``tests[2].trial_duration_s: expected a number, got 'x'``.
Range checks live in each class's ``__post_init__``.
"""

from __future__ import annotations

import dataclasses
import typing
from typing import Any, TypeVar

from .errors import UsageError

T = TypeVar("T")


def _coerce(kind: Any, value: Any, where: str) -> Any:
    origin = typing.get_origin(kind)
    if origin is tuple:
        (inner, _) = typing.get_args(kind)
        if not isinstance(value, (list, tuple)):
            value = [value]
        return tuple(_coerce(inner, v, f"{where}[{i}]") for i, v in enumerate(value))
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        args = [a for a in typing.get_args(kind) if a is not type(None)]
        return None if value is None else _coerce(args[0], value, where)
    if kind is bool:
        if isinstance(value, bool):
            return value
        raise UsageError(f"{where}: expected true or false, got {value!r}")
    if kind is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        raise UsageError(f"{where}: expected a whole number, got {value!r}")
    if kind is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        raise UsageError(f"{where}: expected a number, got {value!r}")
    if kind is str:
        if isinstance(value, str):
            return value
        raise UsageError(f"{where}: expected a string, got {value!r}")
    raise TypeError(f"unsupported parameter type {kind}")


def parse(cls: type[T], values: dict, where: str) -> T:
    """``cls(**values)`` with every key known and every value of its type."""
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(values) - names)
    if unknown:
        raise UsageError(f"{where}.{unknown[0]}: unknown key (known: {', '.join(sorted(names))})")
    kwargs = {k: _coerce(hints[k], v, f"{where}.{k}") for k, v in values.items()}
    try:
        return cls(**kwargs)
    except UsageError as e:
        raise UsageError(f"{where}.{e}") from None


def check(ok: bool, field: str, message: str) -> None:
    """Raises ``UsageError("FIELD: MESSAGE")`` unless ``ok``; :func:`parse` prefixes the place."""
    if not ok:
        raise UsageError(f"{field}: {message}")

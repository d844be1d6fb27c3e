"""The engine's trial result (``docs/trial-result.md``, version
:data:`RESULT_VERSION`): checked on arrival for its version and for the
fields the Python side reads, so a mismatched engine is one clear error,
never a ``KeyError`` in the middle of a campaign."""

from __future__ import annotations

#: The result version this module reads.
RESULT_VERSION = 2
#: Top-level fields every trial result carries, and their JSON types.
FIELDS = {
    "result_version": int, "engine_version": str, "status": str, "started_at_unix_ns": int, "traffic_s": (int, float),
    "tester_limited": bool, "tester_limited_reasons": list, "ports": list, "streams": list, "totals": dict,
}
TOTALS = ("tx_frames", "rx_frames", "lost_frames")


def problem(result: dict) -> str | None:
    """Why ``result`` is not a trial result of :data:`RESULT_VERSION`, or None."""
    if not isinstance(result, dict):
        return "not a JSON object"
    if result.get("result_version") != RESULT_VERSION:
        return f"result_version {result.get('result_version')!r}, this v6bench reads {RESULT_VERSION}"
    for name, kind in FIELDS.items():
        if not isinstance(result.get(name), kind) or (kind is int and isinstance(result.get(name), bool)):
            return f"{name}: missing or not {getattr(kind, '__name__', 'a number')}"
    for name in TOTALS:
        if not isinstance(result["totals"].get(name), int):
            return f"totals.{name}: missing or not a whole number"
    return None


def take_learned_tuples(result: dict) -> dict[str, str]:
    """Each ``learn_tuples`` stream's records (base64, engine/src/tuples.rs),
    by stream name, taken out of ``result``, whose streams keep
    ``learned_tuples.count`` and ``.missing``: a stored trial keeps its
    counts, not the 4-tuples (megabytes for a million connections)."""
    out = {}
    for s in result.get("streams", []):
        learned = s.get("learned_tuples")
        if learned and "records" in learned:
            out[s["name"]] = learned.pop("records")
    return out

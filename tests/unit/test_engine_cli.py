"""The engine's command line: clear errors, exit statuses, plans."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from test_engine_frames import spec

from v6bench import engine


def run(engine_bin, *args, stdin: str | None = None):
    return subprocess.run([str(engine_bin), *args], input=stdin, capture_output=True, text=True, timeout=30)


def test_version_reports_formats(engine_bin):
    r = run(engine_bin, "version")
    assert r.returncode == 0
    v = json.loads(r.stdout)
    assert v["spec_version"] == engine.SPEC_VERSION and v["result_version"] == 1


def test_unparseable_spec_is_bad_input(engine_bin):
    r = run(engine_bin, "check", stdin="{not json")
    assert r.returncode == 2
    assert r.stderr.startswith("v6bench-engine: error: trial spec:")
    assert r.stderr.count("\n") == 1, "one clear line, no backtrace"


def test_frame_too_small_names_the_field(engine_bin):
    r = run(engine_bin, "check", stdin=json.dumps(spec(6, 80)))
    assert r.returncode == 2
    assert "streams[0].frame_size: 80 bytes" in r.stderr and "84" in r.stderr


def test_unknown_field_and_rate_errors(engine_bin):
    s = spec(4, 64)
    s["ports"][0]["tx_rate"] = {"fps": 10, "l2_bps": 5}
    r = run(engine_bin, "check", stdin=json.dumps(s))
    assert r.returncode == 2 and "ports[0].tx_rate: give exactly one of" in r.stderr
    s = spec(4, 64)
    s["streams"][0]["frame_sise"] = 64
    r = run(engine_bin, "check", stdin=json.dumps(s))
    assert r.returncode == 2 and "unknown field `frame_sise`" in r.stderr


def test_check_plans_exact_per_stream_counts(engine_bin):
    s = spec(4, 128, shares=(90, 10))
    s["streams"][1]["ip_version"] = 6
    r = run(engine_bin, "check", stdin=json.dumps(s))
    assert r.returncode == 0, r.stderr
    plan = json.loads(r.stdout)
    assert [st["frames"] for st in plan["streams"]] == [900, 100]
    assert plan["ports"][0]["schedule_window"] == 10


def test_non_benchmarking_destination_refused(engine_bin):
    s = spec(4, 64)
    s["streams"][0]["dst_ip"] = "10.0.0.1"
    r = run(engine_bin, "check", stdin=json.dumps(s))
    assert r.returncode == 2 and "benchmarking blocks" in r.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to compare namespaces")
def test_root_namespace_refused(engine_bin):
    s = spec(4, 64)
    for p in s["ports"]:
        del p["netns"]
        p["interface"] = "lo"
    r = run(engine_bin, "run", stdin=json.dumps(s))
    assert r.returncode == 1
    assert "root network namespace" in r.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to open namespaces")
def test_unknown_namespace_is_a_clear_error(engine_bin):
    s = spec(4, 64)
    s["ports"][0]["netns"] = "no-such-ns"
    r = run(engine_bin, "run", stdin=json.dumps(s))
    assert r.returncode == 1
    assert 'network namespace "no-such-ns" not found' in r.stderr


def test_a_namespace_outside_the_lab_is_refused(engine_bin):
    s = spec(4, 64)
    s["ports"][0]["netns"] = "other"
    r = run(engine_bin, "check", stdin=json.dumps(s))
    assert r.returncode == 2 and "ports[0].netns: \"other\" is not one of the lab's namespaces" in r.stderr

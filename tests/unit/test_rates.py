"""Rate texts and line-rate arithmetic (RFC 5180 App. A.1)."""

import pytest

from v6bench.core.errors import UsageError
from v6bench.core.rates import line_rate_fps, parse_link_speed, parse_rate


def test_reference_line_rates():
    assert round(line_rate_fps(10e9, 64)) == 14_880_952
    assert round(line_rate_fps(10e9, 1518)) == 812_744  # 812,743.8
    assert round(line_rate_fps(100e6, 64)) == 148_810


@pytest.mark.parametrize("text,fps", [
    ("20000fps", 20000), ("20kpps", 20000), ("20KFPS", 20000), ("1.5Mpps", 1.5e6),
    ("50%", 0.5 * 1e9 / (8 * 148)),
    ("30Mbps", 30e6 / (8 * 148)), ("30Mbps:l2", 30e6 / (8 * 128)), ("1Gbps", 1e9 / (8 * 148)),
])
def test_rate_units(text, fps):
    assert parse_rate(text).fps(128, 1e9) == pytest.approx(fps)


@pytest.mark.parametrize("bad", ["fast", "10", "-5fps", "0fps", "120%", "5fps:l2", "10 Mbit"])
def test_bad_rates(bad):
    with pytest.raises(UsageError, match="^rate: "):
        parse_rate(bad)


def test_link_speeds():
    assert parse_link_speed("100M") == 100e6 and parse_link_speed("1g") == 1e9 and parse_link_speed("10Gbps") == 10e9
    with pytest.raises(UsageError, match="^link_speed: "):
        parse_link_speed("40G")

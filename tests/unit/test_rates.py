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
    assert parse_rate(text).fps(128, line_rate_fps(1e9, 128)) == pytest.approx(fps)


def test_percent_is_of_the_paths_line_rate():
    """One meaning of "% of line" (core/rates.py): the path's line rate,
    with a tunnel's overhead and the fragments a frame becomes; 100 % is
    what the path carries, not a load its narrowest link drops."""
    from v6bench.lab.model.mtu import Mtus
    from v6bench.lab.model.mtu import parse as parse_mtu
    from v6bench.lab.model.tunnel import TUNNELS
    from v6bench.trial.path import LabPath
    from v6bench.trial.request import make_request
    tunnel = LabPath.build("b", 100e6, Mtus(), TUNNELS["6in4"])  # IPv6 frames take 50 bytes more on r1-r2
    assert make_request("0/100", 1400, "100%", 1, False).check_against(tunnel) == pytest.approx(100e6 / ((1400 + 20 + 50) * 8))
    assert make_request("0/100", 1400, "50%", 1, False).check_against(tunnel) == pytest.approx(100e6 / ((1400 + 20 + 50) * 8) / 2)
    assert make_request("100/0", 1400, "100%", 1, False).check_against(tunnel) == pytest.approx(line_rate_fps(100e6, 1400))
    fragments = LabPath.build("b", 1e9, parse_mtu("all=1500,r1-r2=1300"))  # a 1518-byte IPv4 frame is two on r1-r2
    full = make_request("100/0", 1518, "100%", 1, False).check_against(fragments)
    assert full == pytest.approx(fragments.line_fps(1518, 100, False)) and full < line_rate_fps(1e9, 1518)
    assert make_request("100/0", 1518, "10000fps", 1, False).check_against(fragments) == 10000  # frames/s stay as given


@pytest.mark.parametrize("bad", ["fast", "10", "-5fps", "0fps", "120%", "5fps:l2", "10 Mbit"])
def test_bad_rates(bad):
    with pytest.raises(UsageError, match="^rate: "):
        parse_rate(bad)


def test_link_speeds():
    assert parse_link_speed("100M") == 100e6 and parse_link_speed("1g") == 1e9 and parse_link_speed("10Gbps") == 10e9
    with pytest.raises(UsageError, match="^link_speed: "):
        parse_link_speed("40G")

"""Trial requests: mixes, frame sizes, rates against the lab (no root)."""

import pytest

from v6bench.lab.model.mtu import Mtus
from v6bench.lab.model.mtu import parse as parse_mtu
from v6bench.trial.path import LabPath
from v6bench.core.errors import UsageError
from v6bench.trial.request import make_request, parse_mix


@pytest.mark.parametrize("text,v4,v6", [("100/0", 100, 0), ("90/10", 90, 10), ("50/50", 50, 50), ("0/100", 0, 100)])
def test_mixes(text, v4, v6):
    m = parse_mix(text)
    assert (m.ipv4_pct, m.ipv6_pct) == (v4, v6)


@pytest.mark.parametrize("bad", ["90/20", "90", "a/b", "90/10/0", "-10/110"])
def test_bad_mixes(bad):
    with pytest.raises(UsageError, match="^mix: "):
        parse_mix(bad)


def test_ipv6_needs_84_byte_frames():
    with pytest.raises(UsageError, match="^frame_size: 78 bytes .* IPv4 and IPv6"):
        make_request("90/10", 78, "1kfps", 1, False)
    make_request("100/0", 64, "1kfps", 1, False)
    with pytest.raises(UsageError, match="^frame_size: "):
        make_request("100/0", 63, "1kfps", 1, False)


def test_rate_above_line_rate_and_mtu():
    req = make_request("50/50", 128, "900kfps", 1, False)
    with pytest.raises(UsageError, match=r"above line rate .*\(844,595 frames/s\)"):
        req.check_against(LabPath.build("a", 1e9, Mtus()))
    assert req.check_against(LabPath.build("a", 10e9, Mtus())) == 900_000
    # IPv6 cannot cross a link below 1280 bytes; IPv4 is fragmented there.
    small = LabPath.build("b", 1e9, parse_mtu("r1-r2=500"))
    with pytest.raises(UsageError, match="IPv6 cannot cross link r1-r2"):
        make_request("50/50", 1518, "1kfps", 1, False).check_against(small)
    assert make_request("100/0", 1518, "1kfps", 1, False).check_against(small) == 1000
    # Fragments lower the line rate: 1518 B over 500 B MTU is 4 frames on r1-r2.
    with pytest.raises(UsageError, match="fragments and tunnel included"):
        make_request("100/0", 1518, "80kfps", 1, False).check_against(small)


def test_duration_bounds():
    with pytest.raises(UsageError, match="^duration_s: "):
        make_request("50/50", 128, "1kfps", 0, False)

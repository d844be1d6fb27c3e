"""Link MTUs (`--mtu`) and what frames become along the path (trial/path.py)."""

import pytest

from v6bench.core.errors import UsageError
from v6bench.lab.model.mtu import Mtus, parse
from v6bench.trial.path import LabPath, fragment_data


def test_mtu_forms():
    assert parse("1500") == Mtus(1500)
    m = parse("all=9000, r2-r1=1280,t1-r1=576")
    assert m.of("r1", "r2") == m.of("r2", "r1") == 1280
    assert m.of("t1", "r1") == 576 and m.of("r2", "t2") == 9000
    assert str(m) == "all=9000,r1-r2=1280,t1-r1=576"
    assert parse(m.to_json()) == m and Mtus.from_json(1500) == Mtus()
    assert parse("r1-r2=68").all_bytes == 1500


@pytest.mark.parametrize("text,message", [
    ("r1-r2=67", "r1-r2=67 is outside 68..9198"),
    ("all=9199", "all=9199 is outside"),
    ("all=1000", "leaves no link for IPv6"),
    ("r1=500", "is not BYTES, all=BYTES or LINK=BYTES"),
    ("r1-r2=500,r2-r1=600", "link r1-r2 is given twice"),
    ("jumbo", "is not BYTES"),
])
def test_bad_mtus_say_why(text, message):
    with pytest.raises(UsageError, match=message):
        parse(text)


def test_links_must_exist():
    from v6bench.lab.model.topology import parse_topology
    topo = parse_topology("a")
    with pytest.raises(UsageError, match="no link r1-r2; its links are r1-t2, t1-r1"):
        parse("r1-r2=500").check([(a.node, b.node) for a, b in topo.links()])


def test_ipv4_is_fragmented_by_routers_and_again_on_smaller_links():
    # seed 000 Fig. 16: MTU 68 on R1-R2 makes 31 fragments of a 1518-byte frame.
    path = LabPath.build("b", 1e9, parse("r1-r2=68"))
    frames = path.wire_frames(4, 1518)
    assert frames[0] == [1518] and len(frames[1]) == 31 and frames[2] == frames[1]
    assert path.source_mtu(4, 1518) is None
    # Fragmented first at the source to 1000, then each fragment again to 500.
    path = LabPath.build("b", 1e9, parse("t1-r1=1000,r1-r2=500"))
    # 1480 data bytes: 976 + 504 at the source; 480 + 480 + 16 and 480 + 24 after R1.
    assert path.wire_frames(4, 1518) == [[38 + 976, 38 + 504], [518, 518, 38 + 16, 518, 38 + 24], [518, 518, 54, 518, 62]]
    assert fragment_data(1480, 20, 1500) == [1480]
    assert fragment_data(1480, 20, 500) == [480, 480, 480, 40]


def test_ipv6_is_fragmented_at_the_source_to_the_path_mtu():
    path = LabPath.build("b", 1e9, parse("all=9000,r1-r2=1280"))
    assert path.source_mtu(6, 1518) == 1280 and path.source_mtu(6, 1298) is None
    assert path.wire_frames(6, 1518) == [[18 + 48 + 1232, 18 + 48 + 1460 - 1232]] * 3
    assert path.problem(6, 1518) is None
    assert "cannot cross link r1-r2" in LabPath.build("b", 1e9, parse("r1-r2=1279")).problem(6, 128)


def test_fragments_lower_the_paths_line_rate():
    plain = LabPath.build("b", 1e9, Mtus()).line_fps(1518, 100)
    assert plain == pytest.approx(1e9 / (8 * 1538))
    small = LabPath.build("b", 1e9, parse("r1-r2=500")).line_fps(1518, 100)
    assert small == pytest.approx(1e9 / (8 * (3 * 538 + 98)))

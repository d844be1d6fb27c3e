"""CPU arrangements for machine sizes (no root)."""

import pytest

from v6bench.core.errors import UsageError
from v6bench.lab.model.cpus import plan


def test_split_keeps_tester_and_dut_apart_from_two_cpus():
    for n in range(2, 9):
        p = plan("split", tuple(range(n)))
        assert not p.shared
        assert set(p.tester_tx) | {p.tester_rx} | set(p.dut_cpus) <= set(range(n))
    assert plan(None, (0, 1)).arrangement == "split"
    p = plan("split", (0, 1))
    assert (p.tester_tx, p.tester_rx, p.dut_cpus) == ((0,), 0, (1,))
    assert [plan("split", tuple(range(6))).router_cpu(k) for k in range(4)] == [3, 4, 5, 3]


def test_sender_cpus_are_dealt_out_so_a_port_sending_alone_gets_them_all():
    big = plan("split", tuple(range(6)))  # senders c0, c1
    assert big.tester_link_queues == 2
    assert big.sender_cpus(0, 1) == (0, 1), "unidirectional: both sender CPUs, a sender on each"
    assert [big.sender_cpus(i, 2) for i in range(2)] == [(0,), (1,)], "bidirectional: one each"
    assert [big.sender_cpus(i, 4) for i in range(4)] == [(0,), (1,), (0,), (1,)], "a mesh: shared in turn"
    small = plan("split", (0, 1))
    assert small.tester_link_queues == 1 and small.sender_cpus(0, 1) == (0,) and small.sender_cpus(1, 2) == (0,)


def test_one_cpu_is_inline_and_shared():
    p = plan(None, (3,))
    assert p.arrangement == "inline" and p.shared
    with pytest.raises(UsageError, match="split needs 2 CPUs"):
        plan("split", (3,))


def test_inline_runs_the_dut_in_the_sender():
    p = plan("inline", (0, 1))
    assert p.dut_cpus == p.tester_tx and p.tester_rx == 1


def test_the_receive_thread_shares_the_fifo_priority_of_the_tester_napi_threads():
    """In split the tester's NAPI threads run at SCHED_FIFO 1 on the receive
    CPU, and so does the engine's receive thread; inline has no NAPI threads."""
    from v6bench.lab.model.cpus import FIFO_PRIORITY

    assert plan("split", (0, 1)).tester_rx_priority == FIFO_PRIORITY == 1
    assert plan("split", tuple(range(6))).tester_rx_priority == FIFO_PRIORITY
    assert plan("inline", (0, 1)).tester_rx_priority is None


def test_unknown_arrangement():
    with pytest.raises(UsageError, match="^cpu_arrangement: "):
        plan("magic", (0, 1))

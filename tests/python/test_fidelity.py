"""Fidelity checks of the core against exact hand computations and closed forms."""

import math

import numpy as np
import pytest

import sharebuf
from conftest import star

PS = 1e-12


def tx_ps(nbytes, bps):
    return -(-nbytes * 8 * 10**12 // bps)  # ceil, as the engine rounds serialization up


def lone_flow_fct_ps(size, mss, hdr, init_cwnd, rate_bps, delay_ps, handshake=True):
    """Exact FCT of one TCP flow over host -> switch -> host on an idle star with equal link
    rates: handshake, per-hop store-and-forward serialization, propagation, and slow start
    (every ACK releases two segments), written independently of the engine."""
    s = lambda b: tx_ps(b, rate_bps)  # noqa: E731
    hop = lambda b: s(b) + delay_ps  # noqa: E731  # one link: serialize + propagate
    t = 0
    if handshake:
        t = 2 * hop(hdr) + 2 * hop(hdr)  # SYN there, SYN-ACK back
    sizes = [min(mss, size - o) for o in range(0, size, mss)]
    n = len(sizes)
    # Release time of each segment at the sender.
    release = [None] * n
    for i in range(min(init_cwnd, n)):
        release[i] = t
    nic_free = t + (s(hdr) if handshake else 0)  # the handshake's final ACK goes first
    depart, arrive_rx, ack_at_tx = [0] * n, [0] * n, [0] * n
    sw_free = 0  # the switch port towards the receiver (store-and-forward)
    for i in range(n):
        if release[i] is None:
            # Slow start: the ACK of segment j (1-based) lets segments up to 2j + W go.
            j = math.ceil((i + 1 - init_cwnd) / 2)
            release[i] = ack_at_tx[j - 1]
        start = max(release[i], nic_free)
        depart[i] = start + s(sizes[i] + hdr)
        nic_free = depart[i]
        # link to the switch, then the switch port (busy while it forwards a longer
        # predecessor: a short tail segment waits), then the link to the host
        sw_start = max(depart[i] + delay_ps, sw_free)
        sw_free = sw_start + s(sizes[i] + hdr)
        arrive_rx[i] = sw_free + delay_ps
        ack_at_tx[i] = arrive_rx[i] + 2 * hop(hdr)  # ACKs never queue: they are shorter than data
    return arrive_rx[-1]


@pytest.mark.parametrize("size,handshake", [(1000, True), (14480, True), (100_000, True), (300_000, True), (100_000, False)])
def test_lone_flow_fct_matches_hand_computation(size, handshake):
    sc = star(hosts=2, delay_us=1.0)
    sc["transport"] = {"cc": "newreno", "mss_bytes": 1448, "header_bytes": 54, "init_cwnd_packets": 10, "handshake": handshake}
    sc["workload"] = [{"kind": "flows", "flows": [{"src": 0, "dst": 1, "size_bytes": size, "start_s": 0.0}]}]
    res = sharebuf.run(sc)
    f = res.flows.iloc[0]
    expect_ps = lone_flow_fct_ps(size, 1448, 54, 10, 10**10, 10**6, handshake)
    # Exact to the picosecond (times go through float seconds in the table: allow 1 ps).
    assert abs(f.fct_s - expect_ps * PS) <= 1.5e-12, (f.fct_s, expect_ps * PS)
    # The papers' ideal FCT is base RTT (propagation) + size / host rate; sharebuf's own ideal is
    # a lower bound, reached exactly when the flow fits its initial window (test_slowdown.py).
    assert f.ideal_fct_paper_s == pytest.approx(4e-6 + size * 8 / 1e10, abs=1e-12)
    assert f.ideal_fct_s <= f.fct_s + 1e-15
    assert res.summary["drops_total"] == 0


def _dt_ports(n_ports, alpha, buffer_bytes=1_000_000, ms=10, scheme="dt"):
    """N egress ports of a star, each fed by two constant-rate senders at line rate."""
    hosts = 3 * n_ports
    sc = star(hosts=hosts, buffer_bytes=buffer_bytes, alpha=[alpha])
    sc["max_ms"] = ms
    sc["output"] = {"buffer_sample_us": 10, "queue_sample_us": 10}
    flows = []
    for p in range(n_ports):
        dst = 2 * n_ports + p
        flows += [{"src": 2 * p, "dst": dst, "rate_gbps": 10, "stop_ms": ms}, {"src": 2 * p + 1, "dst": dst, "rate_gbps": 10, "stop_ms": ms}]
    sc["workload"] = [{"kind": "cbr", "flows": flows}]
    return sc, [2 * n_ports + p for p in range(n_ports)]


@pytest.mark.parametrize("alpha,n", [(1.0, 1), (1.0, 2), (0.5, 4), (2.0, 3), (0.25, 6), (8.0, 2)])
def test_dt_steady_state_per_queue(alpha, n):
    B = 1_000_000
    sc, ports = _dt_ports(n, alpha, B)
    q = sharebuf.run(sc).queue_occupancy
    late = q[q.time_s >= 0.005]
    expect = alpha * B / (1 + n * alpha)
    for p in ports:
        got = late[late.port == p].bytes.mean()
        assert got == pytest.approx(expect, rel=0.05), (p, got, expect)
    # Ports without overload stay empty.
    idle = late[~late.port.isin(ports)].bytes
    assert idle.max() == 0


def test_contract_star_cbr_runs_and_matches_dt():
    from conftest import EXAMPLES

    res = sharebuf.run(EXAMPLES / "contract-star-cbr.toml")
    q = res.queue_occupancy
    late = q[q.time_s >= 0.01]
    # Two congested ports (4 and 5), alpha = 1: each holds B/3 (a TCP flow adds little).
    for p in (4, 5):
        assert late[late.port == p].bytes.mean() == pytest.approx(1e6 / 3, rel=0.05)
    assert len(res.flows) == 5
    assert set(res.tables) >= {"flows", "queries", "buffer", "queue_occupancy", "cbr"}


def test_dctcp_queue_around_k_full_utilization():
    K = 60_000
    n_flows, size = 4, 4_000_000
    sc = star(hosts=n_flows + 1, buffer_bytes=4_000_000, delay_us=5.0)
    sc["max_ms"] = 100
    sc["switch"]["ecn_k_bytes"] = K
    sc["transport"] = {"cc": "dctcp"}
    sc["output"] = {"buffer_sample_us": 10, "queue_sample_us": 10}
    sc["workload"] = [{"kind": "flows", "flows": [{"src": i, "dst": n_flows, "size_bytes": size, "start_s": 0.0} for i in range(n_flows)]}]
    res = sharebuf.run(sc)
    fl = res.flows
    assert fl.finished.all() and res.summary["drops_total"] == 0
    # Utilization of the bottleneck: wire bytes over the time the flows were active.
    wire = n_flows * size * (1448 + 54) / 1448
    handshake_s = 4 * (5e-6 + 54 * 8 / 1e10)  # SYN and SYN-ACK, two links each
    busy_s = fl.end_s.max() - handshake_s
    util = wire * 8 / 1e10 / busy_s
    assert 0.95 <= util <= 1.0, util
    q = res.queue_occupancy
    port_q = q[(q.port == n_flows) & (q.time_s > 2e-3) & (q.time_s < fl.end_s.min() - 1e-3)].bytes
    # DCTCP holds the queue around K: mean within [0.6 K, 1.6 K], and it oscillates.
    assert 0.6 * K <= port_q.mean() <= 1.6 * K, port_q.mean()
    assert port_q.min() < K < port_q.max()

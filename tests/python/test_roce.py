"""The RoCE transport (transport.kind = "roce", docs/lossless.md §3 and "The RoCE transport"):
exact line-rate pacing, DCQCN driven by CNPs from dequeue (RED) marking under PFC, and clear
errors. Go-back-N after a loss is checked against a hand timeline in transport/roce.rs."""

import numpy as np
import pytest

import sharebuf
from conftest import star

WIRE = 1448 + 54          # a full-size data packet on the wire (B)
T_US = WIRE * 8 / 10e3    # its serialization at 10 Gbps: 1.2016 us


def _roce(sc, **transport):
    sc["transport"] = {"kind": "roce", "cc": "dcqcn", "handshake": False, **transport}
    return sc


def test_lone_flow_finishes_at_size_over_rate_plus_propagation_and_serialization():
    """100 full packets on an idle 10 Gbps star, 1 us links. Paced at line rate on the wire size,
    the sender's packets leave back to back: packet k at k·T; the last leaves the host at 100·T,
    crosses the switch (store and forward: one more T) and two 1 us links. FCT = (100 + 1)·T + 2 us
    = 121.3616 + 2 = 123.3616 us, exactly (picosecond times)."""
    sc = _roce(star(hosts=2, buffer_bytes=1_000_000, delay_us=1.0))
    sc["max_ms"] = 5
    sc["workload"] = [{"kind": "flows", "flows": [{"src": 0, "dst": 1, "size_bytes": 100 * 1448, "start_s": 0.0}]}]
    r = sharebuf.run(sc)
    assert r.flows.finished.all()
    assert round(r.flows.fct_s.iloc[0] * 1e12) == 101 * 1_201_600 + 2_000_000
    assert r.summary["roce"] == {"nacks": 0, "cnps": 0}
    assert r.flows.retransmits.sum() == 0


# Two DCQCN RoCE flows at 10 Gbps line rate into one 10 Gbps port of a star (1 us links),
# priority 3 lossless, step marking at dequeue (red_kmin = red_kmax = 30 000 B, p = 1: a packet
# is marked when more than 30 000 B stay queued after it left), α updated every 10 us and the
# decrease checked every 40 us (CNPs arrive every 2.4 us per flow, so α stays exactly 1 and each
# decrease halves the rate: R_C·(1 − α/2)).
#
# By hand: both flows' packets reach the switch two per T = 1.2016 us from 2.2016 us; after the
# n-th departure (at 2.2016 + n·T) n + 1 packets stay queued, so the first marked packet
# (21 × 1 502 = 31 542 B > 30 000 B stay behind... after it) leaves at n = 19 or 20: ≈ 25.0–26.2 us,
# reaches the receiver 2.2 us later, and its CNP (a 54 B ACK) the sender ≈ 2.09 us after that:
# t0 ≈ 29.3–30.5 us (the other flow's first CNP one packet later). First decrease at t0 + 40.001
# ≈ 69.3–71.7 us: each flow 5 Gbps, together exactly line rate: its packets reach the queue one
# paced gap (≤ 2.4 us) plus 2.2 us later, so the queue stops growing at ≈ 74–78 us, at ≈
# 1.25 B/ns × (t − 2.2 us) ≈ 90–95 KB, and stays flat for τ_dec = 40 us; the second decrease
# (2.5 Gbps each) drains it at 5 Gbps, the third (1.25 each) at 7.5 Gbps.

def _two_flows(buffer_bytes=500_000, flows=2, size=10**9, max_ms=0.4):
    sc = _roce(star(hosts=flows + 1, buffer_bytes=buffer_bytes, delay_us=1.0, nq=4),
               cc_params={"alpha_interval_us": 10, "decrease_interval_us": 40})
    sc["max_ms"] = max_ms
    sc["switch"].update(lossless_priorities=[3], red_kmin_bytes=30_000, red_kmax_bytes=30_000, red_pmax=1.0)
    sc["output"] = {"buffer_sample_us": 1, "queue_sample_us": 1}
    sc["workload"] = [{"kind": "flows", "priority": 3,
                       "flows": [{"src": i, "dst": flows, "size_bytes": size, "start_s": 0.0} for i in range(flows)]}]
    return sharebuf.run(sc)


def _slope_gbps(t_us, b, lo, hi):
    m = (t_us > lo) & (t_us < hi)
    return np.polyfit(t_us[m], b[m], 1)[0] * 8 / 1e3


def test_dcqcn_over_roce_first_decrease_matches_the_hand_computation():
    r = _two_flows()
    assert r.summary["drops_total"] == 0
    assert r.summary["pfc"]["lossless_drops"] == 0
    ro = r.summary["roce"]
    assert ro["nacks"] == 0 and ro["cnps"] > 0
    assert r.summary["packets"]["ecn_marked"] >= ro["cnps"]
    q = r.queue_occupancy
    q = q[(q.port == 2) & (q.queue == 3)]
    t, b = q.time_s.values * 1e6, q.bytes.values.astype(float)
    peak = b.max()
    p0, p1 = t[b == peak].min(), t[b == peak].max()
    assert _slope_gbps(t, b, 5, 60) == pytest.approx(10.0, rel=0.02)
    assert 73 <= p0 <= 79, p0
    assert peak == pytest.approx(1.25e3 * (p0 - 2.2), rel=0.02), (peak, p0)
    assert 88_000 <= peak <= 97_000, peak
    # Flat at exactly line rate (5 + 5 Gbps) for τ_dec = 40 us (± 3 us), then drains at 5 and 7.5.
    assert p1 - p0 == pytest.approx(40.0, abs=3.0), (p0, p1)
    assert _slope_gbps(t, b, p0 + 5, p1 - 5) == pytest.approx(0.0, abs=0.2)
    assert _slope_gbps(t, b, p1 + 2, p1 + 38) == pytest.approx(-5.0, rel=0.03)
    assert _slope_gbps(t, b, p1 + 42, p1 + 78) == pytest.approx(-7.5, rel=0.03)


def test_roce_incast_under_pfc_pauses_and_loses_nothing():
    """Four RoCE flows of 300 KB at line rate into one port, buffer 150 KB, marking off the
    path's way (kmin = kmax = 1 MB): the PFC threshold is reached, the senders are paused, and
    nothing is lost (no NACK, no retransmission); 1.2 MB leave the port at line rate (≈ 0.99 ms)."""
    sc = _roce(star(hosts=5, buffer_bytes=150_000, delay_us=1.0, nq=4))
    sc["max_ms"] = 5
    sc["switch"].update(lossless_priorities=[3], red_kmin_bytes=1_000_000, red_kmax_bytes=1_000_000, red_pmax=1.0)
    sc["workload"] = [{"kind": "flows", "priority": 3,
                       "flows": [{"src": i, "dst": 4, "size_bytes": 300_000, "start_s": 0.0} for i in range(4)]}]
    r = sharebuf.run(sc)
    assert r.summary["drops_total"] == 0
    assert r.flows.finished.all()
    assert r.summary["roce"] == {"nacks": 0, "cnps": 0}
    assert r.flows.retransmits.sum() == 0
    assert r.summary["pfc"]["pauses_received"] >= 4
    assert r.flows.fct_s.max() == pytest.approx(4 * 300_000 * WIRE / 1448 * 8 / 10e9, rel=0.02)


@pytest.mark.parametrize("transport, switch, match", [
    ({"cc": "newreno"}, {}, "transport.cc = 'newreno'"),
    ({"handshake": True}, {}, "transport.handshake = true"),
    ({}, {"red_kmin_bytes": 10}, "red_kmax_bytes, red_pmax"),
    ({}, {"red_kmin_bytes": 10, "red_kmax_bytes": 5, "red_pmax": 0.1}, "red_kmin_bytes = 10 above"),
    ({}, {"red_kmin_bytes": 1, "red_kmax_bytes": 5, "red_pmax": 0.1, "ecn_k_bytes": 3}, "choose one ECN marking"),
])
def test_bad_roce_keys_are_clear_errors(transport, switch, match):
    sc = _roce(star(hosts=2), **transport)
    sc["switch"].update(switch)
    sc["workload"] = [{"kind": "flows", "flows": [{"src": 0, "dst": 1, "size_bytes": 1000, "start_s": 0.0}]}]
    with pytest.raises(Exception, match=match):
        sharebuf.run(sc)


def test_nack_interval_needs_roce():
    sc = star(hosts=2)
    sc["transport"] = {"cc": "newreno", "nack_interval_us": 10}
    sc["workload"] = [{"kind": "flows", "flows": [{"src": 0, "dst": 1, "size_bytes": 1000, "start_s": 0.0}]}]
    with pytest.raises(Exception, match="nack_interval_us needs transport.kind"):
        sharebuf.run(sc)


# ---- A workload's own transport (`transport = "roce"` beside TCP workloads)

def _mixed_star(rdma_transport):
    """Host 0 -> 1 on RoCE (priority 3, lossless) and host 2 -> 3 on Cubic (priority 1), on one
    star: the two flows share no port, so neither can change the other."""
    sc = star(hosts=4, buffer_bytes=1_000_000, delay_us=1.0, nq=4)
    sc["max_ms"] = 5
    sc["switch"]["lossless_priorities"] = [3]
    sc["transport"] = {"cc": "cubic"}
    rdma = {"kind": "flows", "name": "rdma", "priority": 3, "cc": "dcqcn", "handshake": False,
            "flows": [{"src": 0, "dst": 1, "size_bytes": 100 * 1448, "start_s": 0.0}]}
    if rdma_transport:
        rdma["transport"] = rdma_transport
    sc["workload"] = [{"kind": "flows", "name": "tcp", "priority": 1,
                       "flows": [{"src": 2, "dst": 3, "size_bytes": 300 * 1448, "start_s": 0.0}]}, rdma]
    return sharebuf.run(sc)


def test_a_roce_workload_beside_tcp_runs_each_flow_on_its_own_transport():
    """The RoCE flow finishes exactly as a lone RoCE flow, (100 + 1)·T + 2 us (the first test:
    paced at line rate, no window, no handshake), and the Cubic flow exactly as in the same run
    with every flow on TCP: per-workload kinds change nothing else."""
    mixed, tcp_only = _mixed_star("roce"), _mixed_star(None)
    f = mixed.flows.set_index("workload")
    assert mixed.flows.finished.all()
    assert round(f.loc["rdma", "fct_s"] * 1e12) == 101 * 1_201_600 + 2_000_000
    assert f.loc["tcp", "fct_s"] == tcp_only.flows.set_index("workload").loc["tcp", "fct_s"]
    assert mixed.summary["roce"] == {"nacks": 0, "cnps": 0}
    assert "roce" not in tcp_only.summary


def test_a_roce_workload_recovers_by_go_back_n():
    """Two RoCE flows (priority 1, lossy here) into one port of a star with a 30 KB buffer, beside
    a Cubic flow on another port: the switch drops, and the RoCE flows recover by NACK and go-back-N
    (counted NACKs, resent packets), which only the RoCE receiver sends; the TCP flow finishes."""
    sc = star(hosts=5, buffer_bytes=30_000, delay_us=1.0)
    sc["max_ms"] = 20
    sc["transport"] = {"cc": "cubic"}
    sc["workload"] = [
        {"kind": "flows", "name": "tcp", "flows": [{"src": 3, "dst": 4, "size_bytes": 100_000, "start_s": 0.0}]},
        {"kind": "flows", "name": "rdma", "transport": "roce", "cc": "dcqcn", "handshake": False,
         "flows": [{"src": i, "dst": 2, "size_bytes": 200 * 1448, "start_s": 0.0} for i in (0, 1)]}]
    r = sharebuf.run(sc)
    assert r.summary["drops_total"] > 0
    assert r.summary["roce"]["nacks"] > 0
    f = r.flows.set_index("workload")
    assert f.loc["rdma", "retransmits"].sum() > 0
    assert f.loc["tcp", "finished"]


@pytest.mark.parametrize("wl, match", [
    ({"cc": "cubic"}, r"workload\[0\]\.cc = 'cubic': not allowed for workload\[0\]\.transport = 'roce'; allowed: dcqcn"),
    ({}, r"transport\.cc = 'cubic': not allowed for workload\[0\]\.transport = 'roce'; allowed: dcqcn"),
    ({"cc": "dcqcn", "handshake": True}, r"workload\[0\]\.handshake = true: not allowed with workload\[0\]\.transport = 'roce'"),
    ({"cc": "dcqcn", "transport": "udp"}, r"transport"),
])
def test_bad_workload_transport_is_a_clear_error(wl, match):
    sc = star(hosts=2, buffer_bytes=1_000_000)
    sc["transport"] = {"cc": "cubic"}
    sc["workload"] = [{"kind": "flows", "transport": "roce", "flows": [{"src": 0, "dst": 1, "size_bytes": 1000, "start_s": 0.0}], **wl}]
    with pytest.raises(Exception, match=match):
        sharebuf.run(sc)

"""CBM and BSHARE (delay-based buffer sharing) in the packet simulator.

Independent predictions: the fluid steady state of ``sharebuf.analysis`` (BSHARE Eq. 6-8) and
the target delay θ = α·(B − Q)/(c_p·C) (BSHARE Eq. 1 / CBM Eq. 1) computed here by hand.

Fluid model note: BSHARE's analysis (Eq. 9) assumes a congested queue holds θ·C bytes, i.e. its
packets arrive at the port rate C. A FIFO whose packets arrive at rate r > C and leave (sent or
dropped at dequeue) once they are θ old holds r·θ bytes. So a queue fed at r = k·C behaves in the
analysis as a queue with α' = k·α; we pass α' to ``steady_state``. The CBR senders below run at
line rate, so k is the number of senders of the port.
"""

import sys
from pathlib import Path

import pytest

import sharebuf
from sharebuf.analysis import steady_state
from sharebuf.analysis.model import QueueSpec

sys.path.insert(0, str(Path(__file__).parent))
from conftest import star  # noqa: E402

B = 1_000_000
C_BPS = 10e9
PKT = 1502  # wire bytes of a CBR packet


def _ports(scheme, senders, bm=None, ms=10, stop_ms=None):
    """One egress port per entry of `senders`, fed by that many line-rate CBR senders."""
    n_src = sum(senders)
    sc = star(hosts=n_src + len(senders), buffer_bytes=B, scheme=scheme)
    sc["switch"]["bm"].update(bm or {})
    sc["max_ms"] = ms
    sc["output"] = {"buffer_sample_us": 10, "queue_sample_us": 10}
    flows, src, dsts = [], 0, []
    for p, k in enumerate(senders):
        dst = n_src + p
        dsts.append(dst)
        for _ in range(k):
            flows.append({"src": src, "dst": dst, "rate_gbps": 10, "stop_ms": stop_ms or ms})
            src += 1
    sc["workload"] = [{"kind": "cbr", "flows": flows}]
    return sc, dsts


CASES = [
    # scheme, senders per port, bm params, c_p of the analysis ("queues": all congested
    # queues of the priority count; "one": c_p = 1 for each, BSHARE's literal 0.9·B rule, which
    # is no longer the default)
    ("cbm", [2], {}, "queues"),
    ("cbm", [2, 3], {}, "queues"),
    ("cbm", [3, 3, 2], {"alpha": 0.25}, "queues"),
    ("bshare", [2, 3], {"congested": "buffer"}, "one"),
    ("bshare", [2, 3], {}, "queues"),  # default: the §IV definition (1/c_p split)
]


@pytest.mark.parametrize("scheme,senders,bm,cp", CASES)
def test_steady_state_matches_analysis(scheme, senders, bm, cp):
    alpha = bm.get("alpha", 0.5)
    sc, dsts = _ports(scheme, senders, bm)
    res = sharebuf.run(sc)
    assert res.summary["drops"]["bm_threshold"] == 0 and res.summary["drops"]["buffer_full"] == 0
    q = res.queue_occupancy
    late = q[q.time_s >= 0.004]
    # c_p = 1 for every queue is modelled by giving each queue its own priority label.
    specs = [QueueSpec(port=i, priority=(i if cp == "one" else 0), alpha=alpha * k) for i, k in enumerate(senders)]
    pred = steady_state(scheme, B, specs).occupancies_bytes
    for d, want in zip(dsts, pred):
        got = late[late.port == d].bytes.mean()
        assert got == pytest.approx(want, rel=0.05), (scheme, senders, d, got, want)


@pytest.mark.parametrize("scheme,k", [("cbm", 2), ("bshare", 3)])
def test_no_packet_older_than_theta(scheme, k):
    """One congested queue (c_p = 1 under both rules), fed at k·C: the head-of-line packet is
    q/(k·C) old, which must not exceed θ(B − Q) plus one packet time; all excess leaves as
    dequeue drops."""
    alpha = 0.5
    sc, (dst,) = _ports(scheme, [k], ms=12, stop_ms=10)
    res = sharebuf.run(sc)
    q = res.queue_occupancy
    qq = q[(q.port == dst) & (q.time_s <= 0.0099)]
    r = k * C_BPS / 8  # arrival rate, bytes/s
    age = qq.bytes / r
    theta = alpha * (B - qq.bytes) / (C_BPS / 8)  # θ = α(B − Q)/(c_p·C), Q = this queue
    pkt_time = PKT / (C_BPS / 8)
    excess = (age - theta).max()
    # Bound: θ + one packet time; plus one more packet time because q/r only estimates the
    # head's age to within the packets that arrived together (k senders in phase).
    assert excess <= 2 * pkt_time, (excess, pkt_time)
    # The bound is tight: the queue does reach θ (within two packet times).
    assert excess >= -2 * pkt_time
    s = res.summary
    assert s["drops"]["buffer_full"] == 0 and s["drops"]["bm_threshold"] == 0
    assert s["drops"]["bm_dequeue"] > 0
    assert s["bytes"]["dropped"] == s["drops"]["bm_dequeue"] * PKT
    cbr = res.cbr
    assert (cbr.sent_bytes - cbr.delivered_bytes).sum() == s["bytes"]["dropped"]
    # Delivered = the port's rate over the 10 ms plus the queue left at the stop, which drains
    # without dequeue drops (θ grows as fast as the remaining packets age), within 1%.
    assert cbr.delivered_bytes.sum() == pytest.approx(C_BPS / 8 * 0.010 + qq.bytes.iloc[-1], rel=0.01)


def test_min_bytes_suspends_dequeue_drops():
    """With MinBytes above the buffer size nothing is dropped at dequeue (Algorithm 1 line 8):
    the scheme degenerates to complete sharing, the queue fills B and packets wait ≈ B/(2C),
    far beyond θ."""
    sc, (dst,) = _ports("cbm", [2], {"min_bytes": 2 * B}, ms=6)
    res = sharebuf.run(sc)
    s = res.summary
    assert s["drops"]["bm_dequeue"] == 0 and s["drops"]["buffer_full"] > 0
    q = res.queue_occupancy
    late = q[(q.port == dst) & (q.time_s >= 0.003)].bytes
    assert late.mean() == pytest.approx(B, rel=0.01)
    # θ at this occupancy would be ~0: the head is ~B/(2C) = 400 µs old.
    assert (late / (2 * C_BPS / 8)).min() > 0.39e-3


def test_unscheduled_packets_get_the_larger_alpha():
    """TCP packets in a flow's first `unscheduled_bytes` carry UNSCHED and face α_unsched.
    With α = 0.001 (θ ≈ 0.8 µs at an empty buffer) a 60 KB TCP burst sharing a port with a 2×C
    CBR overload loses packets when α_unsched = α, and none with the default α_unsched = 1024."""
    out = {}
    for au in (0.001, 1024.0):
        sc, (dst,) = _ports("cbm", [2], {"alpha": 0.001, "alpha_unscheduled": au, "min_bytes": 0}, ms=8)
        sc["topology"]["hosts"] += 1
        sc["transport"] = {"cc": "newreno", "unscheduled_bytes": 100_000, "init_cwnd_packets": 64, "min_rto_us": 1000}
        sc["workload"].append({"kind": "flows", "flows": [{"src": 3, "dst": dst, "size_bytes": 60_000, "start_s": 0.002}]})
        res = sharebuf.run(sc)
        out[au] = res
    fl_small, fl_big = out[0.001].flows, out[1024.0].flows
    assert fl_big.finished.all() and fl_small.finished.all()
    # The CBR packets (never UNSCHED) are dropped at dequeue in both runs.
    assert out[1024.0].summary["drops"]["bm_dequeue"] > 0
    # The TCP flow's FCT: with α_unsched = 1024 no loss, so ≈ 60 KB at 10 Gb/s (48 µs) plus the
    # handshake: under 200 µs. With α_unsched = α it loses packets and waits ≥ one RTO (1 ms).
    fct = lambda f: f.end_s.iloc[0] - f.start_s.iloc[0]
    assert fct(fl_big) < 200e-6, fct(fl_big)
    assert fct(fl_small) > 1e-3, fct(fl_small)

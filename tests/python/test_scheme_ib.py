"""Cisco Intelligent Buffer (IB): DT + Approximate Fair Drop (+ DPP, headroom).

Independent predictions: with AFD active, a port fed by two line-rate CBR elephants and one
slow CBR mouse delivers C·T in total; AFD (nexus mode) protects the mouse and holds the queue at
Q_ref; the ABM-code mode (per-queue AFD, notes §2) drops the mouse as much as the elephants, and
its controller turns on when M_fair, driven by the PI law from 4e6, falls to 15·M (computed here
from the measured queue).
"""

import sys
from pathlib import Path

import pytest

import sharebuf

sys.path.insert(0, str(Path(__file__).parent))
from conftest import star  # noqa: E402

B = 1_000_000
C = 10e9 / 8  # bytes/s
STOP_MS = 15


def _mix(bm, mouse_gbps=0.3):
    sc = star(hosts=4, buffer_bytes=B, scheme="ib")
    sc["switch"]["bm"].update(bm)
    sc["max_ms"] = 20
    sc["output"] = {"buffer_sample_us": 10, "queue_sample_us": 10}
    flows = [{"src": i, "dst": 3, "rate_gbps": 10, "stop_ms": STOP_MS} for i in range(2)]
    flows.append({"src": 2, "dst": 3, "rate_gbps": mouse_gbps, "stop_ms": STOP_MS})
    sc["workload"] = [{"kind": "cbr", "flows": flows}]
    res = sharebuf.run(sc)
    cbr = res.cbr.sort_values("src")
    loss = 1 - cbr.delivered_bytes.values / cbr.sent_bytes.values
    q = res.queue_occupancy
    return res, loss, q[q.port == 3]


def test_afd_drops_elephants_not_the_mouse():
    res, loss, q = _mix({})
    # Mouse (0.3 Gb/s, 563 KB < etrap 1 MiB): never an elephant, never AFD-dropped.
    assert loss[2] == 0.0
    # Elephants share what the mouse leaves: each delivers (C·T − mouse)/2, within 2%.
    sent = res.cbr.sent_bytes.values
    mouse = sent[res.cbr.src.values == 2][0]
    want_each = (C * STOP_MS / 1000 - mouse) / 2
    for got in res.cbr[res.cbr.src < 2].delivered_bytes:
        assert got == pytest.approx(want_each, rel=0.02)
    assert loss[0] == pytest.approx(1 - want_each / sent[0], abs=0.02)
    # AFD's PI controller holds the queue at Q_ref = 100 KB (below DT's α·B/(1+α) = 333 KB).
    late = q[(q.time_s >= 0.006) & (q.time_s < 0.0145)].bytes
    assert late.mean() == pytest.approx(100_000, rel=0.1)
    # Without AFD (and DPP/headroom) it is plain DT: the queue sits at α·B/(1+α) = 333 KB.
    _, _, q2 = _mix({"afd": False, "headroom_bytes": 0, "dpp": False})
    late2 = q2[(q2.time_s >= 0.006) & (q2.time_s < 0.0145)].bytes
    assert late2.mean() == pytest.approx(B * 0.5 / 1.5, rel=0.05)


def test_abm_code_mode_per_queue_afd():
    res, loss, q = _mix({"mode": "abm_code"})
    # Per-queue AFD: no elephant trap, so the mouse is dropped too (a large fraction).
    assert loss[2] > 0.15
    # Before AFD turns on the queue sits at the DT level α·B/(1+α) (α = 0.5).
    dt_level = B * 0.5 / 1.5
    early = q[(q.time_s >= 0.001) & (q.time_s < 0.004)].bytes
    assert early.mean() == pytest.approx(dt_level, rel=0.02)
    # Hand-check of the controller (notes §2): every 50 µs window,
    #   M_fair <- max(0, M_fair − 1.8(Q_now − 100 KB) + 1.7(Q_old − 100 KB)), M_fair0 = 4e6, Q_old0 = 0;
    # drops start once M_fair < 15·M (M ≈ 2 senders · 50 µs · 10 Gb/s / 1502 B ≈ 83 packets).
    qs = q.set_index("time_s").bytes
    mfair, qold, t_on = 4e6, 0.0, None
    m = 2 * 50e-6 * C / 1502
    for k in range(1, 300):
        t = k * 50e-6
        qnow = float(qs[qs.index <= t + 1e-9].iloc[-1])
        mfair = max(0.0, mfair - 1.8 * (qnow - 100_000) + 1.7 * (qold - 100_000))
        qold = qnow
        if mfair < 15 * m:
            t_on = t
            break
    assert t_on is not None and 4e-3 < t_on < 10e-3, t_on
    # Once on, the queue falls below the DT level by up to a window's worth of drain
    # (50 µs · C = 62.5 KB) for the first time, within 0.25 ms of the predicted onset.
    below = q[(q.bytes < dt_level - 40_000) & (q.time_s > 0.001)]
    assert len(below) > 0
    assert below.time_s.iloc[0] == pytest.approx(t_on, abs=0.25e-3)
    # And never below DT − 1.2 windows of drain (bang-bang between p = 1 and p = 0).
    late = q[(q.time_s >= t_on + 1e-3) & (q.time_s < 0.0145)].bytes
    assert late.min() >= dt_level - 1.2 * 50e-6 * C

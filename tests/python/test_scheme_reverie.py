"""Reverie (docs/schemes/reverie.md, docs/lossless.md §4): the steady state of its threshold on a
star against the fixed point by hand, and its lossless side through PFC. The filter's step
response and the PFC decisions on the filtered ingress counters are checked by hand in the
engine's unit tests (`bm::reverie::tests`)."""

import pytest

import sharebuf
from conftest import star
from test_lossless import WIRE, _incast

B = 1_000_000
S = 1448 + 54  # a CBR packet on the wire (mss + header)


def _overload(n_ports, ms=10, **bm):
    """n_ports congested ports on a 10 Gbps star, one queue per port: port k receives 10 Gb/s CBR
    from two hosts (2:1 overload) from 0 to `ms`; no reverse traffic. Queue samples every 10 us."""
    sc = star(hosts=3 * n_ports, buffer_bytes=B, nq=1, scheme="reverie")
    sc["switch"]["bm"] = {"scheme": "reverie", **bm}
    sc["max_ms"] = ms
    sc["output"] = {"buffer_sample_us": 10, "queue_sample_us": 10}
    sc["workload"] = [{"kind": "cbr", "flows": [{"src": n_ports + 2 * k + j, "dst": k, "rate_gbps": 10, "stop_ms": ms} for k in range(n_ports) for j in (0, 1)]}]
    q = sharebuf.run(sc).queue_occupancy
    return q[(q.time_s >= 5e-3) & (q.port < n_ports)].groupby("port").bytes.mean()


@pytest.mark.parametrize("n", [1, 2, 4])
def test_threshold_fixed_point_without_filter_lag(n):
    """With every queue of the N congested ones at q̄ = q (γ = 0: the filter is the queue after each
    departure) a packet is admitted iff q + s ≤ (B − N·q)/N, so each queue settles at
    q* = (B/N − s)/2 (α = 1, n_p = N: every queue is above 20 KiB), one packet either side:
    N = 1, 2, 4 → 499 249, 249 249, 124 249 B (DT with α = 1 would hold B/(1 + N))."""
    want = (B / n - S) / 2
    for port, mean in _overload(n, gamma=0.0).items():
        assert abs(mean - want) <= S, (port, mean, want)


def test_threshold_fixed_point_with_the_default_filter():
    """γ = 0.999 (the runs' value, integer filter). One congested queue: its own growth lowers its
    threshold 1:1, so it stays at q* = (B − s)/2 within 1 % although q̄ lags. With N = 2 and 4 the
    filter lets each queue overshoot while its neighbours' lower the threshold only by 1/N of
    their growth; the queues cycle and their mean sits above q* (measured +6 % and +11 %, see
    docs/schemes/reverie.md, "Fixed point"): bounded here between q* − s and q* + 15 %."""
    (mean,) = _overload(1).tolist()
    assert mean == pytest.approx((B - S) / 2, rel=0.01)
    for n in (2, 4):
        want = (B / n - S) / 2
        for port, mean in _overload(n).items():
            assert want - S <= mean <= 1.15 * want, (n, port, mean, want)


def test_lossless_incast_under_reverie_loses_nothing():
    """The 8 → 1 lossless incast of test_lossless under Reverie: nothing dropped or retransmitted,
    every sender NIC paused and resumed as often, the headroom within its limit, and the 1 MB
    delivered at the receiver's line rate (0.83 ms, 2 %)."""
    r = _incast(bm={"scheme": "reverie"})
    p = r.summary["pfc"]
    assert r.summary["drops_total"] == 0 and p["lossless_drops"] == 0 and p["headroom_overflows"] == 0
    assert r.flows.finished.all() and r.flows.retransmits.sum() == 0
    assert r.flows.fct_s.max() == pytest.approx(8 * 125_000 * WIRE / 1448 * 8 / 10e9, rel=0.02)
    hosts = [row for row in p["ports"] if row["node"] < 8]
    assert len(hosts) == 8 and all(row["pauses_received"] >= 1 and row["resumes_received"] == row["pauses_received"] for row in hosts)
    assert all(row["max_headroom_bytes"] <= row["headroom_limit_bytes"] for row in p["ports"])


def test_bad_reverie_keys_are_clear_errors():
    with pytest.raises(sharebuf.ScenarioError, match=r"switch\.bm\.gamma = 1\.5.*allowed: 0 <= gamma < 1"):
        _overload(1, ms=1, gamma=1.5)
    with pytest.raises(sharebuf.ScenarioError, match=r"switch\.bm\.filter = 'float'.*allowed: integer, real"):
        _overload(1, ms=1, filter="float")
    with pytest.raises(sharebuf.ScenarioError, match=r"switch\.bm\.beta: unknown parameter for 'reverie'"):
        _overload(1, ms=1, beta=1)
    with pytest.raises(sharebuf.ScenarioError, match=r"switch\.pfc_alpha_ingress = 2.*not used by switch\.bm\.scheme = 'reverie'"):
        _incast(bm={"scheme": "reverie"}, pfc_alpha_ingress=2.0)


def _burst(bm):
    """16 hosts send 10 Gb/s CBR for 30 us each to host 0 of a 10 Gbps star with 1 MB of buffer: 400
    packets of 1 502 B (25 per sender) into one idle queue, ~16 times faster than it drains."""
    sc = star(hosts=17, buffer_bytes=B, nq=1)
    sc["switch"]["bm"] = bm
    sc["max_ms"] = 2
    sc["workload"] = [{"kind": "cbr", "flows": [{"src": s, "dst": 0, "rate_gbps": 10, "stop_ms": 0.03} for s in range(1, 17)]}]
    r = sharebuf.run(sc)
    return r.summary["drops_total"], r.summary["buffer"]["per_switch"]["switch0"]["peak_bytes"]


def test_a_burst_into_an_idle_queue_is_absorbed():
    """Burst absorption as a deterministic consequence of the filter (docs/lossless.md §4, item 3).
    DT (α = 1) admits while q + s ≤ B − q, so the queue peaks at 333 packets (500 166 B; a 334th
    would need 501 668 ≤ 499 834) and the rest of the burst beyond what drains meanwhile is
    dropped. Reverie's q̄ moves only at the ~25 departures during the burst, by (1 − γ)(q − q̄) each,
    so q̄ ≤ 25 · 0.001 · 600 800 ≈ 15 KB while B − Q stays above 436 KB: nothing is refused and the
    queue peaks at the whole burst less those departures, (400 − 25) · 1 502 = 563 250 B."""
    dt_drops, dt_peak = _burst({"scheme": "dt", "alpha": 1.0})
    assert dt_peak == 333 * S
    assert 40 <= dt_drops <= 44, dt_drops  # 400 − 333 − the ~25 packets sent meanwhile
    rv_drops, rv_peak = _burst({"scheme": "reverie"})
    assert rv_drops == 0
    assert abs(rv_peak - (400 - 25) * S) <= 2 * S, rv_peak

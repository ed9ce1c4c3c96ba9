"""FB and FBA (FB.md §4, §5.2) in the packet simulator, against the fluid model.

Queues are pinned with constant-rate senders (two at line rate per congested port, as
test_fidelity._dt_ports); predictions come from FB Eq. 2/12–14 via sharebuf.analysis.
"""

import pytest
from conftest import star

import sharebuf
from sharebuf.analysis import QueueSpec, steady_state

B = 2_000_000
LINE = 10  # Gb/s


def _pinned(scheme, bm, ports, nq=2, ms=3.0, buffer_bytes=B, extra_hosts=0, switch=None):
    """`ports` = [priority, ...] per congested port; each port gets two line-rate CBR senders."""
    n = len(ports)
    hosts = 3 * n + extra_hosts
    sc = star(hosts=hosts, buffer_bytes=buffer_bytes, nq=nq, scheme=scheme)
    sc["switch"]["bm"].update(bm)
    sc["switch"].update(switch or {})
    sc["max_ms"] = ms
    sc["output"] = {"buffer_sample_us": 10, "queue_sample_us": 10}
    flows = []
    for i, prio in enumerate(ports):
        dst = 2 * n + i
        flows += [{"src": 2 * i + k, "dst": dst, "rate_gbps": LINE, "stop_ms": ms, "priority": prio} for k in range(2)]
    sc["workload"] = [{"kind": "cbr", "flows": flows}]
    return sc, [2 * n + i for i in range(n)]


def _late_means(res, t0_s=0.0015):
    q = res.queue_occupancy
    late = q[q.time_s >= t0_s]
    return late.groupby(["port", "queue"]).bytes.mean()


@pytest.mark.parametrize("n_low", [1, 3, 6])
def test_fb_priority_share_independent_of_congested_queues(n_low):
    """FB.md Fig. 3 / §4.1 / Eq. 12–15: n_low low-priority queues (α_L = 1) and one high (α_H = 2),
    one per port. FB: the low priority holds B·α_L/(1+α_L+α_H) whatever n_low (≤ B·α_L/(1+α_L)),
    the high queue B·α_H/(1+α_L+α_H). DT with the same α: the high queue shrinks as n_low grows."""
    aL, aH = 1.0, 2.0
    prios = [0] * n_low + [1]
    specs = [QueueSpec(port=i, priority=p, alpha=aH if p else aL) for i, p in enumerate(prios)]
    for scheme, bm in (("fb", {"alpha": [aL, aH], "high": [0, 1]}), ("dt", {"alpha": [aL, aH]})):
        sc, ports = _pinned(scheme, bm, prios)
        m = _late_means(sharebuf.run(sc))
        pred = steady_state(scheme, B, specs)
        for p, st in zip(ports, pred.queues):
            got = m[(p, st.spec.priority)]
            assert got == pytest.approx(st.occupancy_bytes, rel=0.05), (scheme, p, got, st.occupancy_bytes)
        low = sum(m[(p, 0)] for p in ports[:-1])
        high = m[(ports[-1], 1)]
        if scheme == "fb":
            # Closed forms, independent of n_low (FB §4.1).
            assert low == pytest.approx(B * aL / (1 + aL + aH), rel=0.05)
            assert high == pytest.approx(B * aH / (1 + aL + aH), rel=0.05)
            assert low <= B * aL / (1 + aL)
        else:
            assert high == pytest.approx(B * aH / (1 + n_low * aL + aH), rel=0.05)


@pytest.mark.parametrize("prios,alphas", [([0, 0, 0, 1, 2], [0.5, 1.0, 2.0]), ([0, 0, 1, 1, 1, 2, 3, 3], [0.5, 1.0, 2.0, 4.0])])
def test_fb_n_priorities_matches_analysis(prios, alphas):
    """Issue #11 must-show 1, FB App. A.5 (n priorities) with App. A.3 Eq. 12–14: one queue per
    port, queue index = priority, α_p per priority, N_p counted per priority. The steady state of
    `sharebuf.analysis.steady_state("fb", ...)` (and its closed form with γ = 1 and one α per
    priority: priority p holds B·α_p/(1 + Σ_p α_p) however many of its queues are congested,
    Eq. 11/15) matches the simulation within 5% per queue and per priority."""
    n = len(alphas)
    specs = [QueueSpec(port=i, priority=p, alpha=alphas[p]) for i, p in enumerate(prios)]
    sc, ports = _pinned("fb", {"alpha": alphas, "priority": list(range(n))}, prios, nq=n)
    m = _late_means(sharebuf.run(sc))
    pred = steady_state("fb", B, specs)
    for port, st in zip(ports, pred.queues):
        got = m[(port, st.spec.priority)]
        assert got == pytest.approx(st.occupancy_bytes, rel=0.05), (port, got, st.occupancy_bytes)
    s = sum(alphas)
    for p in range(n):
        got = sum(m[(port, p)] for port, q in zip(ports, prios) if q == p)
        closed = B * alphas[p] / (1 + s)
        assert pred.per_priority_bytes[p] == pytest.approx(closed, rel=1e-9)
        assert got == pytest.approx(closed, rel=0.05), (p, got, closed)


def test_fb_total_bounded_while_dt_grows_toward_B():
    """One priority, α = 0.5: FB's total stays at B·α/(1+α) for 1..8 congested queues
    (FB §4.1 bound), DT's total is B·nα/(1+nα) (FB Eq. 2), growing toward B."""
    a = 0.5
    totals = {}
    for scheme in ("fb", "dt"):
        for n in (1, 2, 4, 8):
            # FB with one queue per port defaults to the single-queue classifier: use one class.
            bm = {"alpha": a, "mode": "multi"} if scheme == "fb" else {"alpha": a}
            sc, ports = _pinned(scheme, bm, [0] * n, nq=1)
            m = _late_means(sharebuf.run(sc))
            tot = sum(m[(p, 0)] for p in ports)
            pred = steady_state(scheme, B, [QueueSpec(port=i, alpha=a) for i in range(n)])
            assert tot == pytest.approx(pred.occupancy_bytes, rel=0.05), (scheme, n, tot)
            totals[(scheme, n)] = tot
    for n in (1, 2, 4, 8):
        assert totals[("fb", n)] == pytest.approx(B * a / (1 + a), rel=0.05)
        assert totals[("dt", n)] == pytest.approx(B * n * a / (1 + n * a), rel=0.05)
    assert totals[("dt", 8)] > 0.75 * B > 2 * totals[("fb", 8)]


@pytest.mark.parametrize("sched,weights,shares", [("drr", [1, 3], (0.25, 0.75)), ("rr", [], (0.5, 0.5))])
def test_fb_gamma_splits_priority_by_dequeue_rate(sched, weights, shares):
    """FB §4.1: two low-priority queues (α 0.5) on one port, each fed at line rate. γ = the
    scheduler's share (DRR 1:3 -> 1/4, 3/4; RR -> 1/2 each), N_low = 2:
    q_c = B·ω_c/(1+Σω), ω_c = α·γ_c/2 (FB Eq. 14). DT ignores the dequeue rate."""
    hosts = 3
    sw = {"scheduler": sched}
    if weights:
        sw["drr_weights"] = weights
    for scheme in ("fb", "dt"):
        sc = star(hosts=hosts, buffer_bytes=B, nq=2, scheme=scheme)
        sc["switch"]["bm"]["alpha"] = 0.5
        sc["switch"].update(sw)
        sc["max_ms"] = 3
        sc["output"] = {"buffer_sample_us": 10, "queue_sample_us": 10}
        sc["workload"] = [{"kind": "cbr", "flows": [{"src": k, "dst": 2, "rate_gbps": LINE, "stop_ms": 3, "priority": k} for k in range(2)]}]
        m = _late_means(sharebuf.run(sc))
        specs = [QueueSpec(port=0, priority=0, alpha=0.5, share=s) for s in shares]
        pred = steady_state(scheme, B, specs)
        for c, st in enumerate(pred.queues):
            assert m[(2, c)] == pytest.approx(st.occupancy_bytes, rel=0.05), (scheme, c, m[(2, c)], st.occupancy_bytes)
    # Hand check of the DRR case: FB 0.05·B and 0.15·B; DT α·B/(1+2α) = 0.25·B each.
    if sched == "drr":
        assert pred.queues[0].occupancy_bytes == pytest.approx(B * 0.5 / (1 + 2 * 0.5))
        fb = steady_state("fb", B, specs)
        assert [q.occupancy_bytes for q in fb.queues] == pytest.approx([0.05 * B, 0.15 * B])


def _burst(scheme, bm, n_long=8, n_burst=4, burst_us=300, t_long_ms=1.0, t_burst_ms=1.5, ms=3.0, buffer_bytes=1_000_000):
    """n_long ports pinned by low-priority CBR from t_long; at t_burst, n_burst senders send at
    line rate (high priority) for burst_us into an idle port. Returns (burst loss, result)."""
    hosts = 3 * n_long + n_burst + 1
    sc = star(hosts=hosts, buffer_bytes=buffer_bytes, nq=2, scheme=scheme)
    sc["switch"]["bm"].update(bm)
    sc["max_ms"] = ms
    sc["output"] = {"buffer_sample_us": 10, "queue_sample_us": 10}
    flows = []
    for p in range(n_long):
        flows += [{"src": 2 * p + k, "dst": 2 * n_long + p, "rate_gbps": LINE, "start_ms": t_long_ms, "stop_ms": ms - 0.5, "priority": 0} for k in range(2)]
    bdst = hosts - 1
    flows += [{"src": 3 * n_long + k, "dst": bdst, "rate_gbps": LINE, "start_ms": t_burst_ms, "stop_ms": t_burst_ms + burst_us / 1000, "priority": 1} for k in range(n_burst)]
    sc["workload"] = [{"kind": "cbr", "flows": flows}]
    res = sharebuf.run(sc)
    c = res.cbr
    b = c[c.dst == bdst]
    return 1 - b.delivered_bytes.sum() / b.sent_bytes.sum(), res


ALPHAS = {"alpha": [0.5, 20]}  # FB §6: α_L = 0.5, α_H = 20, DT configured the same


def test_fb_absorbs_bursts_better_than_dt_multi_queue():
    """FB §3/§6 (Fig. 5c, Fig. 8a): with 8 ports held by long low-priority flows, a 4:1
    high-priority burst into an idle port. DT (same α) leaves only B/(1+8·0.5) = 200 kB free;
    FB bounds the low priority to B·α_L/(1+α_L) and keeps 2/3 of B free."""
    fb250, _ = _burst("fb", {**ALPHAS, "high": [0, 1]}, burst_us=250)
    dt250, res = _burst("dt", ALPHAS, burst_us=250)
    fb300, _ = _burst("fb", {**ALPHAS, "high": [0, 1]}, burst_us=300)
    dt300, _ = _burst("dt", ALPHAS, burst_us=300)
    # Measured: FB 0.5% / 11.9%, DT 9.0% / 19.7% of the burst dropped.
    assert fb250 < 0.02 and dt250 > 0.06
    assert dt300 - fb300 > 0.05
    assert res.summary["drops"].get("bm_threshold", 0) > 0


def test_fb_single_queue_classifier_absorbs_incast():
    """FB §4.1 single-queue deployment (§6 'single-queue'): one queue per port, the switch marks
    the first 21 kB of each flow high (α_H = 20), later bytes low (α_L = 0.5). 8 ports held by
    long CBR flows, then 16 senders each send one 20 kB message to an idle port (a 16:1 incast).
    FB absorbs it; DT with α = 0.5 (the paper's single-queue DT) or even α = 20 cannot."""
    n_long, n_burst = 8, 16
    hosts = 3 * n_long + n_burst + 1
    bdst = hosts - 1
    loss = {}
    for name, scheme, bm in (("fb", "fb", {}), ("dt0.5", "dt", {"alpha": 0.5}), ("dt20", "dt", {"alpha": 20})):
        sc = star(hosts=hosts, buffer_bytes=1_000_000, nq=1, scheme=scheme)
        sc["switch"]["bm"].update(bm)
        sc["max_ms"] = 3
        flows = []
        for p in range(n_long):
            flows += [{"src": 2 * p + k, "dst": 2 * n_long + p, "rate_gbps": LINE, "stop_ms": 2.5} for k in range(2)]
        dur_ms = 20_000 * 8 / (LINE * 1e9) * 1e3
        flows += [{"src": 3 * n_long + k, "dst": bdst, "rate_gbps": LINE, "start_ms": 1.0, "stop_ms": 1.0 + dur_ms} for k in range(n_burst)]
        sc["workload"] = [{"kind": "cbr", "flows": flows}]
        c = sharebuf.run(sc).cbr
        b = c[c.dst == bdst]
        loss[name] = 1 - b.delivered_bytes.sum() / b.sent_bytes.sum()
    # Measured: FB 0%, DT(0.5) 66%, DT(20) 50%.
    assert loss["fb"] < 0.01
    assert loss["dt0.5"] > 0.4 and loss["dt20"] > 0.3


def test_fba_converges_to_fb_and_to_dt():
    """FB §5.2: FBA = DT whose α is reset every interval to α_c·γ/N_p. Long flows start at 1 ms,
    the burst at 1.5 ms. Interval 1 µs: FBA ≈ FB. Interval ≥ 1 ms (no update between the start
    of the long flows and the end of the burst): exactly DT with α_c."""
    kw = {"burst_us": 300}
    fb, _ = _burst("fb", {**ALPHAS, "high": [0, 1]}, **kw)
    dt, _ = _burst("dt", ALPHAS, **kw)
    fba = {iv: _burst("fba", {**ALPHAS, "high": [0, 1], "interval_us": iv}, **kw) for iv in (1, 100, 1000, 1_000_000)}
    loss = {iv: r[0] for iv, r in fba.items()}
    # Measured: FB 11.9%, FBA(1 µs) 11.9%, FBA(100 µs) 11.7%, FBA(1 ms) = FBA(1 s) = DT 19.7%.
    assert loss[1] == pytest.approx(fb, abs=0.01)
    assert loss[100] == pytest.approx(fb, abs=0.02)
    assert loss[1000] == pytest.approx(dt, abs=1e-9)
    assert loss[1_000_000] == pytest.approx(dt, abs=1e-9)
    assert dt - fb > 0.05
    # Occupancy before the burst (1.2–1.45 ms): FB's low-priority total B·α_L/(1+α_L) = 333 kB
    # for short intervals, DT's B·8α_L/(1+8α_L) = 800 kB when α is never updated.
    def pre_burst_total(res):
        q = res.queue_occupancy
        w = q[(q.time_s >= 0.0012) & (q.time_s <= 0.00145)]
        return w.groupby("time_s").bytes.sum().mean()
    assert pre_burst_total(fba[1][1]) == pytest.approx(1e6 * 0.5 / 1.5, rel=0.05)
    assert pre_burst_total(fba[100][1]) == pytest.approx(1e6 * 0.5 / 1.5, rel=0.05)
    assert pre_burst_total(fba[1_000_000][1]) == pytest.approx(1e6 * 4 / 5, rel=0.05)


def _pisa_incast(bm):
    """examples/schemes/dtpy.toml's incast (8 × 400 kB into one 10 Gb/s port, 200 kB buffer,
    2 RR queues per port) with half of the senders in each queue (N_low = 2, γ = 1/2 on the
    incast port), α_L = 0.6 (not a power of two, so that `pow2` changes thresholds: with 0.5,
    N_low ∈ {1, 2} and γ ∈ {1, 1/2} every ω is a power of two and the shift is exact)."""
    import tomllib
    from conftest import EXAMPLES

    d = tomllib.loads((EXAMPLES / "schemes" / "dtpy.toml").read_text())
    d["switch"]["bm"] = {"alpha_low": 0.6, **bm}
    for i, f in enumerate(d["workload"][0]["flows"]):
        f["priority"] = i % 2
    return d


def _same_run(a, b):
    return (a.flows.equals(b.flows) and a.buffer.equals(b.buffer) and a.summary["drops"] == b.summary["drops"]
            and a.summary["bytes"] == b.summary["bytes"])


def test_fb_pisa_exact_equals_fb_on_incast_with_drops():
    """Issue #11 must-show 2, FB.md §5.1: `fb_pisa` with a zero sync period and exact arithmetic
    (sync_period_us = 0, gamma_count = false, pow2 = false, no alpha_levels) gives ideal FB's flow
    table, buffer samples and drop counts exactly, on a run with threshold drops. Each
    approximation alone changes them (so the comparison can fail)."""
    fb = sharebuf.run(_pisa_incast({"scheme": "fb"}))
    exact = {"scheme": "fb_pisa", "sync_period_us": 0, "gamma_count": False, "pow2": False}
    hw = sharebuf.run(_pisa_incast(exact))
    print("drops", fb.summary["drops"])
    assert fb.summary["drops"]["bm_threshold"] > 100
    assert fb.flows.end_s.notna().all()
    assert _same_run(fb, hw)
    for k, v in (("sync_period_us", 20), ("gamma_count", True), ("pow2", True), ("alpha_levels", [1.0])):
        other = sharebuf.run(_pisa_incast({**exact, k: v}))
        print(k, other.summary["drops"])
        assert not _same_run(fb, other), k

"""Tests of sharebuf.analysis against the papers' worked examples, hand computations and the
numerical integrator. Pure Python: no simulator core needed."""

import argparse
import json
import math
import random

import pytest

from sharebuf.analysis import (
    QueueSpec as Q,
    abm_burst_tolerance_bytes,
    abm_drain_time_bound_s,
    abm_max_priority_bytes,
    abm_min_priority_bytes,
    advise_abm_alpha,
    advise_fb_alpha,
    build_transient,
    burst_tolerance,
    closed_form_burst,
    dt_burst_tolerance_bytes,
    dt_threshold_bytes,
    fb_burst_bytes,
    fb_max_occupancy_bytes,
    fb_min_remaining_bytes,
    fb_t1_case1_s,
    fb_t1_case2_s,
    integrate_burst,
    omegas,
    steady_state,
)
from sharebuf.analysis import cli as acli

EXACT = dict(abs=1e-9)


def occ(res):
    return [round(x, 9) for x in res.occupancies_bytes]


# ----------------------------------------------------------------------------- FB worked examples
class TestFbWorkedExamples:
    """FB §2.2, §2.3 (Fig. 4) and §3 (Fig. 5): a 60-packet buffer (1 'byte' = 1 packet here)."""

    def test_s22_dt_in_action(self):
        before = steady_state("dt", 60, [Q(port=1, priority=0, alpha=1)])
        assert occ(before) == [30.0] and before.remaining_bytes == pytest.approx(30, **EXACT)
        assert before.queues[0].threshold_bytes == pytest.approx(30, **EXACT)
        after = steady_state("dt", 60, [Q(port=1, priority=0, alpha=1), Q(port=2, priority=1, alpha=2)])
        assert occ(after) == [15.0, 30.0] and after.remaining_bytes == pytest.approx(15, **EXACT)

    def test_s23_fig4a_no_minimum_guarantee(self):
        qs = [Q(port=1, priority=1, alpha=2)] + [Q(port=p, priority=0, alpha=1) for p in (2, 3, 4)]
        r = steady_state("dt", 60, qs)
        assert occ(r) == [20.0, 10.0, 10.0, 10.0]
        assert r.remaining_bytes == pytest.approx(10, **EXACT)
        assert r.per_priority_bytes == {0: pytest.approx(30, **EXACT), 1: pytest.approx(20, **EXACT)}

    def test_s23_fig4b_and_4c_dt_burst(self):
        bg = [Q(port=2, priority=0, alpha=1) for _ in range(5)]  # five classes sharing port 2
        r = steady_state("dt", 60, bg)
        assert occ(r) == [10.0] * 5 and r.remaining_bytes == pytest.approx(10, **EXACT)
        # 5:1 high-priority incast (r = 5 port rates) into port 1, α = 2: drops start at 8 packets
        sysm = build_transient("dt", 60, bg, Q(port=1, priority=1, alpha=2), burst_rate_gbps=50, link_gbps=10)
        cf = closed_form_burst(sysm)
        assert cf.case == "case2" and cf.queue_bytes == pytest.approx(8.0, **EXACT)
        assert integrate_burst(sysm).queue_bytes == pytest.approx(8.0, rel=1e-5)
        paper = dt_burst_tolerance_bytes(buffer_bytes=60, burst_rate=5, alpha_burst=2,
                                         background_alphas=[1] * 5, background_drains=[0.2] * 5)
        assert paper == (2, pytest.approx(8.0, **EXACT))
        # the burst's steady-state allocation by Eq. 6 is 2*60/(1+5+2) = 15 (the paper says "~17")
        assert steady_state("dt", 60, bg + [Q(port=1, priority=1, alpha=2)]).queues[-1].occupancy_bytes == \
            pytest.approx(15.0, **EXACT)

    def test_s3_fig5a_fb_bounds_low_priority(self):
        qs = [Q(port=1, priority=1, alpha=2)] + [Q(port=p, priority=0, alpha=1) for p in (2, 3, 4)]
        r = steady_state("fb", 60, qs)
        assert occ(r) == [30.0, 5.0, 5.0, 5.0]
        assert r.per_priority_bytes == {0: pytest.approx(15, **EXACT), 1: pytest.approx(30, **EXACT)}
        # FB Eq. 4 is tight here: B(αL+αH)/(1+αL+αH) = 45
        assert r.occupancy_bytes == pytest.approx(fb_max_occupancy_bytes(60, {0: 1, 1: 2}), **EXACT)
        assert fb_min_remaining_bytes(60, {0: 1, 1: 2}) == pytest.approx(15, **EXACT)

    def test_s3_fig5b_six_packets_per_queue(self):
        bg = [Q(port=2, priority=0, alpha=1) for _ in range(5)]
        # FB's Fig. 5b number (6 packets each) is n_p counted as congested *ports* of the priority
        assert occ(steady_state("fb", 60, bg, np_mode="ports")) == [6.0] * 5
        # Eq. 3 read literally (n_p = 5 congested queues, γ = 1/5) gives 2 each
        assert occ(steady_state("fb", 60, bg)) == [2.0] * 5

    def test_s3_fig5c_burst_reaches_steady_state(self):
        bg = [Q(port=2, priority=0, alpha=1) for _ in range(5)]
        burst = Q(port=1, priority=1, alpha=2)
        sysm = build_transient("fb", 60, bg, burst, burst_rate_gbps=50, link_gbps=10)
        cf = closed_form_burst(sysm)
        steady = steady_state("fb", 60, bg + [burst]).queues[-1].occupancy_bytes
        # "the buffer can reach steady state fast enough to avoid transient drops"
        assert cf.case == "case1" and cf.queue_bytes == pytest.approx(steady, **EXACT) and steady == pytest.approx(37.5)
        # with the 6-packet reading the burst drops at 24 packets, before its steady state (30)
        cf6 = closed_form_burst(build_transient("fb", 60, bg, burst, burst_rate_gbps=50, link_gbps=10, np_mode="ports"))
        assert cf6.queue_bytes == pytest.approx(24.0, **EXACT)


# ----------------------------------------------------------------------------- steady state, hand cases
class TestSteadyState:
    def test_dt_eq6_and_formula(self):
        assert dt_threshold_bytes(1000, 1, {1.0: 3}) == pytest.approx(250, **EXACT)
        assert dt_threshold_bytes(1000, 2, [(2.0, 1), (0.5, 4)]) == pytest.approx(2000 / 5, **EXACT)
        for a, n in [(0.5, 1), (1, 4), (8, 3), (14, 10)]:
            r = steady_state("dt", 1e6, [Q(port=p, alpha=a) for p in range(n)])
            assert r.queues[0].occupancy_bytes == pytest.approx(a * 1e6 / (1 + n * a), rel=1e-12)
            assert r.occupancy_bytes == pytest.approx(1e6 * n * a / (1 + n * a), rel=1e-12)

    def test_abm_lemma2_hand(self):
        # port 0: priorities 0 and 1 (γ = 1/2 each); port 1: priority 0 (γ = 1); all α = 1
        qs = [Q(port=0, priority=0, alpha=1), Q(port=0, priority=1, alpha=1), Q(port=1, priority=0, alpha=1)]
        assert omegas("abm", qs) == pytest.approx([0.25, 0.5, 0.5])
        r = steady_state("abm", 1000, qs, link_gbps=8)
        R = 1000 / 2.25
        assert r.remaining_bytes == pytest.approx(R, rel=1e-12)
        assert r.thresholds_bytes == pytest.approx([0.25 * R, 0.5 * R, 0.5 * R], rel=1e-12)
        assert r.per_priority_bytes[0] == pytest.approx(0.75 * R, rel=1e-12)
        # drain time q/(γ b): b = 1e9 bytes/s
        assert r.queues[0].drain_time_s == pytest.approx(0.25 * R / (0.5 * 1e9), rel=1e-12)

    def test_bshare_eq6_to_8_hand(self):
        qs = [Q(port=0, priority=0, alpha=1), Q(port=0, priority=1, alpha=1), Q(port=1, priority=0, alpha=1)]
        r = steady_state("cbm", 1000, qs)  # alias of bshare
        assert r.scheme == "bshare"
        assert r.omega_sum == pytest.approx(2.0)
        assert r.occupancy_bytes == pytest.approx(1000 * 2 / 3, rel=1e-12)      # Eq. 6
        assert r.remaining_bytes == pytest.approx(1000 / 3, rel=1e-12)          # Eq. 7
        assert r.thresholds_bytes == pytest.approx([500 / 3, 1000 / 3, 500 / 3])  # Eq. 8

    def test_fb_classes_weighted_fairness(self):
        # two low-priority classes α 1 and 3 on separate ports: split 1:3 of the priority's share
        qs = [Q(port=0, priority=0, alpha=1), Q(port=1, priority=0, alpha=3)]
        r = steady_state("fb", 1000, qs)
        assert r.queues[1].occupancy_bytes == pytest.approx(3 * r.queues[0].occupancy_bytes, rel=1e-12)
        assert r.occupancy_bytes == pytest.approx(1000 * 2 / 3, rel=1e-12)

    def test_cs_and_empty(self):
        r = steady_state("cs", 1000, [Q(port=0), Q(port=1)])
        assert r.occupancy_bytes == 1000 and r.remaining_bytes == 0 and occ(r) == [500.0, 500.0]
        e = steady_state("dt", 1000, [])
        assert e.remaining_bytes == 1000 and e.occupancy_bytes == 0

    def test_errors_name_parameter(self):
        with pytest.raises(ValueError, match=r"buffer_bytes=-1.*> 0"):
            steady_state("dt", -1, [Q(port=0)])
        with pytest.raises(ValueError, match=r"scheme='lqd'.*allowed"):
            steady_state("lqd", 10, [Q(port=0)])
        with pytest.raises(ValueError, match=r"alpha=0"):
            Q(port=0, alpha=0)
        with pytest.raises(ValueError, match=r"share=1.5"):
            Q(port=0, share=1.5)
        with pytest.raises(ValueError, match=r"port 0 add up to 1.2"):
            steady_state("abm", 10, [Q(port=0, share=0.6), Q(port=0, priority=1, share=0.6)])
        with pytest.raises(ValueError, match=r"np_mode='x'"):
            steady_state("fb", 10, [Q(port=0)], np_mode="x")


# ----------------------------------------------------------------------------- bounds
class TestBounds:
    def test_hand_values(self):
        assert abm_min_priority_bytes(1000, {0: 1, 1: 3}, 0) == pytest.approx(200)
        assert abm_min_priority_bytes(1000, {0: 1, 1: 3}, 1) == pytest.approx(600)
        assert abm_max_priority_bytes(1000, 3) == pytest.approx(750)
        assert abm_drain_time_bound_s(1e6, 1, 10) == pytest.approx(400e-6, rel=1e-12)
        assert fb_max_occupancy_bytes(1e6, {0: 0.5, 1: 20}) == pytest.approx(1e6 * 20.5 / 21.5)
        with pytest.raises(ValueError, match="priority=7"):
            abm_min_priority_bytes(1000, {0: 1}, 7)


# ----------------------------------------------------------------------------- closed forms by hand
class TestClosedForms:
    def test_dt_eq8_case2_hand(self):
        # two α=1 queues sharing one port (0.5 each), burst α=1 at r=5 on an idle port
        p = dt_burst_tolerance_bytes(buffer_bytes=1e6, burst_rate=5, alpha_burst=1,
                                     background_alphas=[1, 1], background_drains=[0.5, 0.5])
        assert p.case == 2 and p.queue_bytes == pytest.approx(1e6 / (3 * (1 + 3 / 4)), rel=1e-12)
        gen = closed_form_burst(build_transient("dt", 1e6, [Q(port=0), Q(port=0, priority=1)], Q(port=1, priority=2),
                                                burst_rate_gbps=50, link_gbps=10))
        assert gen.case == "case2" and gen.queue_bytes == pytest.approx(p.queue_bytes, rel=1e-12)

    def test_dt_eq6_case1_hand(self):
        p = dt_burst_tolerance_bytes(buffer_bytes=1e6, burst_rate=2, alpha_burst=1,
                                     background_alphas=[0.25], background_drains=[1])
        assert p == (1, pytest.approx(1e6 / 2.25, rel=1e-12))

    def test_abm_eq10_eq11_hand(self):
        bg = [(0.5, 4)]  # one priority, 4 congested ports, γ = 1
        p1 = abm_burst_tolerance_bytes(buffer_bytes=1e6, burst_rate=3, alpha_burst=0.5, background=bg, aggregate_drain=4)
        assert p1 == (1, pytest.approx(0.5e6 / 2.0, rel=1e-12))
        p2 = abm_burst_tolerance_bytes(buffer_bytes=1e6, burst_rate=20, alpha_burst=0.5, background=bg, aggregate_drain=4)
        assert p2.case == 2 and p2.queue_bytes == pytest.approx(0.5e6 / (1.5 * (1 + 0.5 * 15 / 19)), rel=1e-12)
        for r, p in ((3, p1), (20, p2)):  # exact in this γ = 1 configuration
            g = burst_tolerance("abm", 1e6, [Q(port=i, alpha=0.5) for i in range(4)], Q(port=4, priority=1, alpha=0.5),
                                burst_rate_gbps=10 * r, link_gbps=10)
            assert g.queue_bytes == pytest.approx(p.queue_bytes, rel=1e-12)

    def test_abm_eq10_lower_bound_with_shared_ports(self):
        # two priorities sharing a port (γ = 1/2): Lemma 1 is loose, Eq. 10 is a lower bound
        bg = [Q(port=0, priority=0, alpha=0.5), Q(port=0, priority=1, alpha=0.5)]
        g = burst_tolerance("abm", 1e6, bg, Q(port=1, priority=2, alpha=0.5), burst_rate_gbps=20, link_gbps=10)
        p = abm_burst_tolerance_bytes(buffer_bytes=1e6, burst_rate=2, alpha_burst=0.5, background=[(0.5, 1), (0.5, 1)],
                                      aggregate_drain=1)
        assert g.case == "case1" and p.case == 1
        assert p.queue_bytes == pytest.approx(0.5e6 / (1 + 1.5), rel=1e-12)      # Σα = 1.5
        assert g.queue_bytes == pytest.approx(0.5e6 / (1 + 0.5 + 0.5), rel=1e-12)  # Σω = 0.5
        assert p.queue_bytes < g.queue_bytes

    def test_fb_eq34_eq40_hand(self):
        b = 1.25e8  # 1 Gbps in bytes/s
        t1 = fb_t1_case1_s(buffer_bytes=1e6, link_gbps=1, burst_rate=3, alpha_high=20, alpha_low=0.5)
        assert t1 == pytest.approx(20e6 / (2 * 21.5) / b, rel=1e-12)
        t2 = fb_t1_case2_s(buffer_bytes=1e6, link_gbps=1, burst_rate=10, alpha_high=20, alpha_low=0.5)
        assert t2 == pytest.approx(20e6 / (1.5 * (9 + 20 * 8)) / b, rel=1e-12)
        assert fb_burst_bytes(10, t2, 1) == pytest.approx(10 * b * t2)
        for r, t in ((3, t1), (10, t2)):  # the general solver agrees (one low queue, one port)
            g = burst_tolerance("fb", 1e6, [Q(port=0, alpha=0.5)], Q(port=1, priority=1, alpha=20),
                                burst_rate_gbps=r, link_gbps=1)
            assert g.first_drop_s == pytest.approx(t, rel=1e-12)
            assert g.arrived_bytes == pytest.approx(fb_burst_bytes(r, t, 1), rel=1e-12)

    def test_mixed_regime_rejected_by_paper_form(self):
        with pytest.raises(ValueError, match="mixed regime"):
            dt_burst_tolerance_bytes(buffer_bytes=1e6, burst_rate=3, alpha_burst=1,
                                     background_alphas=[1, 1], background_drains=[1, 0.05])

    def test_duration(self):
        sysm = build_transient("dt", 1e6, [Q(port=0)], Q(port=1, priority=1), burst_rate_gbps=40, link_gbps=10)
        cf = closed_form_burst(sysm)
        short = closed_form_burst(sysm, duration_s=cf.first_drop_s / 2)
        assert short.fully_absorbed and short.absorbed_bytes == pytest.approx(cf.arrived_bytes / 2)
        long = integrate_burst(sysm, duration_s=cf.first_drop_s * 2)
        assert long.fully_absorbed is False and long.absorbed_bytes == pytest.approx(cf.arrived_bytes, rel=1e-5)

    def test_cs(self):
        sysm = build_transient("cs", 1e6, [Q(port=0)], Q(port=1, priority=1), burst_rate_gbps=20, link_gbps=10)
        assert closed_form_burst(sysm).first_drop_s == 0.0
        assert integrate_burst(sysm).first_drop_s == 0.0
        empty = build_transient("cs", 1e6, [], Q(port=1), burst_rate_gbps=20, link_gbps=10)
        assert integrate_burst(empty).first_drop_s == pytest.approx(closed_form_burst(empty).first_drop_s, rel=1e-5)
        assert closed_form_burst(empty).queue_bytes == pytest.approx(1e6)


# ----------------------------------------------------------------------------- integrator vs closed form
def _random_config(rng: random.Random):
    scheme = rng.choice(["dt", "abm", "fb", "bshare"])
    n_ports = rng.randint(1, 5)
    bg = []
    for p in range(n_ports):
        for k in range(rng.randint(1, 3)):
            bg.append(Q(port=p, priority=rng.randint(0, 2), alpha=round(rng.uniform(0.1, 4), 3)))
    # burst: usually an idle port, sometimes an already congested port (affected set G_e)
    port = n_ports if rng.random() < 0.7 else rng.randrange(n_ports)
    burst = Q(port=port, priority=rng.randint(0, 3), alpha=round(rng.uniform(0.2, 8), 3))
    B = rng.choice([60.0, 1e5, 1e6, 4e6])
    link = rng.choice([1.0, 10.0, 100.0])
    r = rng.uniform(1.2, 20.0)
    return scheme, B, bg, burst, r * link, link


def test_integrator_matches_closed_form_on_random_configurations():
    rng = random.Random(20240601)
    compared, cases = 0, set()
    tried = 0
    while compared < 30 and tried < 200:
        tried += 1
        scheme, B, bg, burst, rate, link = _random_config(rng)
        sysm = build_transient(scheme, B, bg, burst, burst_rate_gbps=rate, link_gbps=link)
        cf = closed_form_burst(sysm)
        if not cf.applies or math.isinf(cf.first_drop_s):
            continue
        it = integrate_burst(sysm)
        assert it.first_drop_s == pytest.approx(cf.first_drop_s, rel=1e-2), (scheme, B, bg, burst, rate, link)
        assert it.queue_bytes == pytest.approx(cf.queue_bytes, rel=1e-2)
        assert it.arrived_bytes == pytest.approx(cf.arrived_bytes, rel=1e-2)
        assert it.case == cf.case
        compared += 1
        cases.add(cf.case)
    assert compared >= 20
    assert {"case1", "case2"} <= cases


def test_integrator_follows_regime_change_closed_form_cannot():
    # burst joins a congested port: the old queue's share halves (G_e) and, with a slow burst,
    # it meets its threshold again before the first drop -> closed form flags it, integrator runs on
    sysm = build_transient("abm", 1e6, [Q(port=0, alpha=1)], Q(port=0, priority=1, alpha=1),
                           burst_rate_gbps=6, link_gbps=10)
    cf = closed_form_burst(sysm)
    assert cf.applies is False and "G_e" in cf.reason
    it = integrate_burst(sysm)
    assert math.isfinite(it.first_drop_s) and it.queue_bytes > 0


# ----------------------------------------------------------------------------- properties
def test_dt_allocation_vanishes_abm_fb_keep_theorem1_floor():
    B, aH, aL = 1e6, 2.0, 1.0
    floor = abm_min_priority_bytes(B, {0: aL, 1: aH}, 1)
    ceiling = abm_max_priority_bytes(B, aH)
    prev = math.inf
    for n in (1, 2, 5, 10, 50, 200, 1000):
        qs = [Q(port=0, priority=1, alpha=aH)] + [Q(port=p, priority=0, alpha=aL) for p in range(1, n + 1)]
        dt = steady_state("dt", B, qs).per_priority_bytes[1]
        assert dt < prev
        prev = dt
        for s in ("abm", "fb", "bshare"):
            v = steady_state(s, B, qs).per_priority_bytes[1]
            assert floor * (1 - 1e-12) <= v <= ceiling
    assert prev < 0.01 * B < floor  # DT: high priority starved by 1000 low-priority queues


def test_abm_drain_time_within_theorem3_and_lemma1():
    rng = random.Random(7)
    full_port_checked = 0
    for _ in range(300):
        alpha_of = {p: rng.uniform(0.05, 10) for p in range(3)}  # ABM: one α per priority
        qs = [Q(port=rng.randrange(6), priority=(p := rng.randrange(3)), alpha=alpha_of[p])
              for _ in range(rng.randint(1, 12))]
        B, link = rng.uniform(1e4, 1e7), rng.choice([1, 10, 25, 100])
        r = steady_state("abm", B, qs, link_gbps=link)
        for q in r.queues:
            same = [x for x in r.queues if x.spec.priority == q.spec.priority]
            gbar = sum(x.share for x in same) / len(same)
            # generalized Theorem 3 always holds
            assert q.drain_time_s <= abm_drain_time_bound_s(B, q.spec.alpha, link, mean_share=gbar) * (1 + 1e-12)
            if all(x.share == 1.0 for x in same):  # Theorem 3's premise: the priority has whole ports
                assert q.drain_time_s <= abm_drain_time_bound_s(B, q.spec.alpha, link) * (1 + 1e-12)
                full_port_checked += 1
        for p in {q.priority for q in qs}:  # Lemma 1: Σ_i ω_p^i <= α_p
            assert sum(q.omega for q in r.queues if q.spec.priority == p) <= alpha_of[p] * (1 + 1e-12)
    assert full_port_checked > 50


def test_abm_theorem3_needs_full_ports():
    # one queue of priority 0 (α = 4) sharing its port with three others: γ = 1/4.
    # Γ = α·(B−Q)/b with B−Q = B/(1 + 4·(1/4) + 3·(1/4)) > B/(1+α): Theorem 3 as printed is exceeded
    qs = [Q(port=0, priority=0, alpha=4)] + [Q(port=0, priority=k, alpha=1) for k in (1, 2, 3)]
    r = steady_state("abm", 1e6, qs, link_gbps=10)
    gamma_t = 4 * (1e6 / (1 + 1 + 0.75)) / 1.25e9
    assert r.queues[0].drain_time_s == pytest.approx(gamma_t, rel=1e-12)
    assert r.queues[0].drain_time_s > abm_drain_time_bound_s(1e6, 4, 10)
    assert r.queues[0].drain_time_s <= abm_drain_time_bound_s(1e6, 4, 10, mean_share=0.25)


# ----------------------------------------------------------------------------- advisor
class TestAdvisor:
    def test_fb_case2_matches_eq7(self):
        a = advise_fb_alpha(buffer_bytes=1e6, link_gbps=10, burst_rate_gbps=50, burst_duration_s=50e-6)
        assert a.alpha_low_max_no_transient_loss == pytest.approx(1 / 3)      # Eq. 5
        assert a.alpha_low_max == pytest.approx(1e6 / (3 * 62500) - 1)       # Eq. 6
        assert a.alpha_low == 0.5 and a.case == "case2"
        assert a.alpha_high_min_eq7 == pytest.approx(1 / (1e6 / (4 * 62500 * 1.5) - 0.75))  # Eq. 7
        assert a.alpha_high_min == pytest.approx(a.alpha_high_min_eq7, rel=1e-12)
        assert a.possible and a.verified_first_drop_s == pytest.approx(50e-6, rel=1e-9)

    def test_fb_case1_eq7_is_not_enough(self):
        a = advise_fb_alpha(buffer_bytes=1e6, link_gbps=10, burst_rate_gbps=50, burst_duration_s=50e-6, alpha_low=0.25)
        assert a.case == "case1"
        assert a.alpha_high_min == pytest.approx(250000 / (800000 - 62500 * 3.2))
        assert a.alpha_high_min_eq7 == pytest.approx(1 / (3.2 - 0.75))
        assert a.verified_first_drop_s == pytest.approx(50e-6, rel=1e-9)
        worse = burst_tolerance("fb", 1e6, [Q(port=0, alpha=0.25)], Q(port=1, priority=1, alpha=a.alpha_high_min_eq7),
                                burst_rate_gbps=50, link_gbps=10)
        assert worse.first_drop_s < 50e-6  # Eq. 7's α_H drops part of the burst in case 1

    def test_fb_impossible(self):
        a = advise_fb_alpha(buffer_bytes=1e5, link_gbps=10, burst_rate_gbps=50, burst_duration_s=50e-6)
        assert not a.possible and "impossible" in a.reason
        b = advise_fb_alpha(buffer_bytes=1e6, link_gbps=10, burst_rate_gbps=50, burst_duration_s=50e-6, alpha_low=5)
        assert not b.possible and "alpha_low_max" in b.reason

    def test_abm_inverse(self):
        a = advise_abm_alpha(min_share={0: 0.2, 1: 0.3})
        assert a.alphas == {0: pytest.approx(0.4), 1: pytest.approx(0.6)}
        assert a.min_share == {0: pytest.approx(0.2), 1: pytest.approx(0.3)}
        assert advise_abm_alpha(max_share={2: 0.5}).alphas == {2: pytest.approx(1.0)}
        m = advise_abm_alpha(min_share={0: 0.2}, max_share={1: 0.5})
        assert m.alphas[0] == pytest.approx(0.5) and m.min_share[0] == pytest.approx(0.2)
        assert m.max_share[1] == pytest.approx(0.5)
        assert not advise_abm_alpha(min_share={0: 0.6, 1: 0.5}).possible
        assert not advise_abm_alpha(min_share={0: 0.5}, max_share={0: 0.4}).possible
        d = advise_abm_alpha(max_drain_time_s={0: 100e-6}, buffer_bytes=1e6, link_gbps=10)
        assert d.alphas[0] == pytest.approx(0.125 / 0.875)
        assert d.drain_time_bound_s[0] == pytest.approx(100e-6)


# ----------------------------------------------------------------------------- CLI
def _run_cli(argv):
    parser = argparse.ArgumentParser(prog="sharebuf")
    sub = parser.add_subparsers(dest="command", required=True)
    acli.register(sub)
    args = parser.parse_args(argv)
    return args.func(args)


def test_cli_steady_state_json(capsys):
    rc = _run_cli(["analyze", "steady-state", "--scheme", "fb", "--buffer-bytes", "60", "--json",
                   "--queue", "port=1,priority=1,alpha=2", "--queue", "port=2,priority=0,alpha=1,count=3"])
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    assert [q["occupancy_bytes"] for q in out[0]["queues"]] == pytest.approx([30, 5, 5, 5])


def test_cli_toml_input_and_table(tmp_path, capsys):
    f = tmp_path / "s.toml"
    f.write_text('scheme = "dt"\nbuffer_bytes = 60\n[[queue]]\nport = 2\nalpha = 1\ncount = 5\n')
    assert _run_cli(["analyze", "steady-state", "--input", str(f)]) == 0
    out = capsys.readouterr().out
    assert "DT steady state" in out and "remaining B-Q = 10 B" in out


def test_cli_bad_input_returns_2(capsys):
    rc = _run_cli(["analyze", "steady-state", "--buffer-bytes", "-5", "--queue", "port=0"])
    err = capsys.readouterr().err
    assert rc == 2 and err.startswith("error: buffer_bytes=") and err.count("\n") == 1
    rc = _run_cli(["analyze", "steady-state", "--buffer-bytes", "10", "--queue", "prt=0"])
    assert rc == 2 and "unknown key" in capsys.readouterr().err
    rc = _run_cli(["analyze", "burst-tolerance"])
    assert rc == 2 and "--out" in capsys.readouterr().err


def test_cli_burst_tolerance_writes_figures(tmp_path, capsys):
    rc = _run_cli(["analyze", "burst-tolerance", "--out", str(tmp_path), "--points", "12"])
    assert rc == 0
    for stem in ("abm_fig5", "fb_fig11"):
        for ext in ("png", "pdf", "csv"):
            assert (tmp_path / f"{stem}.{ext}").stat().st_size > 0
    assert "burst tolerance" in capsys.readouterr().out


def test_cli_single_burst_and_advise(capsys):
    rc = _run_cli(["analyze", "burst-tolerance", "--scheme", "dt", "--buffer-bytes", "60", "--link-gbps", "10",
                   "--queue", "port=2,alpha=1", "--queue", "port=2,alpha=1,priority=1", "--burst", "port=1,priority=2,alpha=2",
                   "--burst-rate-gbps", "50", "--json"])
    assert rc == 0
    res = json.loads(capsys.readouterr().out)
    assert res[0]["method"] == "closed-form" and res[1]["method"] == "integrator"
    assert res[1]["queue_bytes"] == pytest.approx(res[0]["queue_bytes"], rel=1e-4)
    rc = _run_cli(["advise", "alpha", "--buffer-bytes", "1e6", "--link-gbps", "10", "--burst-rate-gbps", "50",
                   "--burst-duration-s", "50e-6", "--json"])
    assert rc == 0 and json.loads(capsys.readouterr().out)["alpha_high_min"] == pytest.approx(0.5217391304, rel=1e-9)
    rc = _run_cli(["advise", "alpha", "--buffer-bytes", "1e5", "--link-gbps", "10", "--burst-rate-gbps", "50",
                   "--burst-duration-s", "50e-6"])
    assert rc == 1 and "impossible" in capsys.readouterr().out
    rc = _run_cli(["advise", "alpha", "--scheme", "abm", "--min-share", "0=0.2,1=0.3"])
    assert rc == 0 and "0.4" in capsys.readouterr().out
    rc = _run_cli(["advise", "alpha", "--scheme", "fb", "--buffer-bytes", "1e6"])
    assert rc == 2 and "--link-gbps" in capsys.readouterr().err

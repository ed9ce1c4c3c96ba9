"""Pooled tails, the bootstrap interval and the three verdicts (repro.samples, repro.verdict),
and the authors' simulator as a column (repro.ns3dc)."""
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sharebuf.repro import list_figures, ns3dc, verdict
from sharebuf.repro.samples import RunFlows, Sample, nearest_rank, pooled_value, resampled_tables
from sharebuf.repro.spec import Claim

ROOT = Path(__file__).resolve().parents[2]


def _c(**kw):
    return Claim(**{"id": "c", "panel": "a", "text": "t", **kw})


def _runflows(slowdowns, timeouts=None, incast=False, query=None):
    n = len(slowdowns)
    f = pd.DataFrame(dict(size_bytes=np.full(n, 50_000), workload="incast" if incast else "web", finished=True,
                          fct_s=np.ones(n) * 1e-3, start_s=np.zeros(n), slowdown=np.asarray(slowdowns, dtype=float),
                          timeouts=np.asarray(timeouts if timeouts is not None else np.zeros(n), dtype=int),
                          query_id=np.asarray(query if query is not None else np.full(n, -1))))
    return RunFlows(f, None, {"incast"}, end_s=1.0)


def test_pooled_tail_is_the_percentile_of_the_pooled_flows():
    rng = np.random.default_rng(3)
    a, b = rng.exponential(2, 300), rng.exponential(2, 500) + 1
    runs = {1: _runflows(a), 2: _runflows(b)}
    # nearest rank on the concatenation, computed here by sorting
    both = np.sort(np.concatenate([a, b]))
    assert pooled_value(runs, "slowdown.p99.short") == both[math.ceil(0.99 * 800) - 1]
    assert pooled_value(runs, "n.short") == 800
    # a run-level metric is the mean over seeds
    assert pooled_value({1: 3.0, 2: 5.0}, "drops") == 4.0
    # one seed: the run's own value
    assert pooled_value({1: runs[1]}, "slowdown.p99.short") == nearest_rank(a, 0.99)


def test_timeout_fractions_per_class_and_per_query():
    # 4 queries of 3 responses; one response of query 2 and all of query 3 waited out an RTO
    q = np.repeat([0, 1, 2, 3], 3)
    to = np.zeros(12, dtype=int)
    to[[7, 9, 10, 11]] = 1
    rf = _runflows(np.ones(12), to, incast=True, query=q)
    assert rf.sample("rto_pct.incast").value() == pytest.approx(100 * 4 / 12)
    assert rf.sample("rto_pct.queries").value() == pytest.approx(100 * 2 / 4)


def test_cluster_resample_draws_whole_queries():
    vals = np.arange(12, dtype=float)
    s = Sample(vals, "p99", clusters=np.repeat([5, 1, 9, 2], 3))
    for seed in range(20):
        r = s.resample(np.random.default_rng(seed))
        assert len(r) == 12
        # every drawn value comes with its two query-mates, in whole groups of 3
        groups = {int(v) // 3 for v in r}
        counts = {g: int(np.sum((r // 3) == g)) for g in groups}
        assert all(c % 3 == 0 for c in counts.values())


def test_bootstrap_is_deterministic_and_paired():
    rng = np.random.default_rng(1)
    runs = {sd: _runflows(rng.exponential(2, 400)) for sd in (1, 2, 3)}
    pts = {("A", 1.0): runs, ("B", 1.0): runs}  # the same flows under two names
    t1 = resampled_tables(pts, "slowdown.p99.short", B=50, key="f")
    t2 = resampled_tables(pts, "slowdown.p99.short", B=50, key="f")
    assert t1 == t2
    # paired: the same seeds and the same flow draws for every series, so A/B is exactly 1
    assert all(t["A"][1.0] == t["B"][1.0] for t in t1)
    assert len({t["A"][1.0] for t in t1}) > 5  # and the draws do vary


def test_three_verdicts():
    c = _c(rule="ratio", series="A", others=["B"], max=0.5)
    assert verdict.decide(c, 0.3, (0.2, 0.45)) == "holds"
    assert verdict.decide(c, 0.7, (0.55, 0.9)) == "fails"
    assert verdict.decide(c, 0.45, (0.3, 0.8)) == "inconclusive"
    assert verdict.decide(c, math.nan, (math.nan, math.nan)) == "inconclusive"
    two = _c(rule="ratio", series="A", others=["B"], min=0.9, max=1.1)
    assert verdict.decide(two, 1.0, (0.95, 1.05)) == "holds"
    assert verdict.decide(two, 1.0, (0.8, 1.2)) == "inconclusive"  # straddles both bounds
    assert verdict.decide(two, 1.5, (1.2, 1.8)) == "fails"
    mono = _c(rule="monotone", series="A", inversions=1)
    assert verdict.accepted(mono) == (-math.inf, 1.0)
    assert verdict.decide(mono, 1, (0, 1)) == "holds" and verdict.decide(mono, 2, (1, 3)) == "inconclusive"
    assert verdict.decide(mono, 2, (2, 3)) == "fails"
    assert verdict.accepted(_c(rule="lowest", series="A", others=["B"])) == (-math.inf, 1.0)


def test_a_knife_edge_tail_is_inconclusive_and_a_clear_one_is_not():
    """B's p99 is ~1 in most seeds and ~100 where ~1% of its flows time out: A/B at max 0.5 is
    decided by which seeds are drawn, so it is inconclusive; against C, whose p99 is a timeout in
    every seed, it holds."""
    rng = np.random.default_rng(7)
    A = {sd: _runflows(1 + rng.random(400)) for sd in range(1, 6)}
    B, C = {}, {}
    for sd in range(1, 6):
        b = 1 + rng.random(400)
        if sd in (2, 4):
            b[:6] = 100.0  # 1.5% of the flows wait out a timeout
        B[sd] = _runflows(b)
        c = 1 + rng.random(400)
        c[:8] = 100.0
        C[sd] = _runflows(c)
    pts = {("A", 1.0): A, ("B", 1.0): B, ("C", 1.0): C}
    edge = verdict.judge(_c(rule="ratio", series="A", others=["B"], max=0.5), pts, "slowdown.p99.short", key="k")
    assert edge["verdict"] == "inconclusive", edge
    lo, hi = edge["interval"]
    assert lo < 0.5 < hi
    clear = verdict.judge(_c(rule="ratio", series="A", others=["C"], max=0.5), pts, "slowdown.p99.short", key="k")
    assert clear["verdict"] == "holds" and clear["interval"][1] < 0.05


def test_fixed_figures_have_a_point_interval():
    r = verdict.judge_fixed(_c(rule="value", series="A", at=1.0, max=2.0), {"A": {1.0: 1.5}})
    assert r["verdict"] == "holds" and r["interval"] == [1.5, 1.5]


# ----------------------------------------------------------------------------- ns3dc as a column
def test_ns3dc_fct_files_read_as_flows():
    """The θ class of ns3dc's Fig. 8 run at 60% Cubic load, recomputed here from the raw file."""
    spec = list_figures()["abm-fig8"]
    path = ROOT / "bench/ns3dc/results/fig8/fct-abm.txt"
    rf = ns3dc.read_fct(path, spec, start_window_ms=150)
    raw = pd.read_csv(path, sep=r"\s+")
    raw = raw[raw.flowstart < 150e3]
    inc = raw[raw.incast == 1]
    sd = np.sort(inc.fct.to_numpy() / (80e3 + inc.flowsize.to_numpy() * 8 / 10))
    assert rf.sample("slowdown.p99.incast.power").value() == pytest.approx(sd[math.ceil(0.99 * len(sd)) - 1])
    assert rf.sample("rto_pct.incast").value() == pytest.approx(100 * float((inc.fct >= 10e6).mean()))
    assert rf.sample("n.short.cubic").value() == int(((raw.incast == 0) & (raw.priority == 1) & (raw.flowsize < 100_000)).sum())
    # incast responses of one query share its flowstart: the queries are the clusters
    assert len(np.unique(rf.sample("slowdown.p99.incast").clusters)) == inc.flowstart.nunique()


@pytest.mark.parametrize("fid", ["abm-fig8", "abm-fig12"])
def test_ns3dc_column_covers_the_claims_it_ran(fid):
    spec = list_figures()[fid]
    pts, missing = ns3dc.points(spec, root=ROOT)
    assert missing == []
    xs = spec.scale("quick").x_values or spec.x.values
    covered = {c.id: ns3dc.covered(c, pts, xs) for c in spec.claims}
    # ns3dc ran one or two x values: claims at those x are covered, rules over every x are not
    assert {cid for cid, (ok, _) in covered.items() if ok} == {"abm-fig8": {"abm-cuts-dctcp", "abm-cuts-theta", "abm-level-cubic"},
                                                              "abm-fig12": {"a-1000"}}[fid]
    for c in spec.claims:
        ok, others = covered[c.id]
        if not ok:
            continue
        metric = next(p for p in spec.panels if p.id == c.panel).metric
        sub = {k: v for k, v in pts.items() if k[0] in (c.series, *others)}
        r = verdict.judge(c.model_copy(update=dict(others=others)), sub, metric, key="t", B=50)
        assert r["verdict"] in verdict.VERDICTS and math.isfinite(r["measured"])


def test_verdicts_side_by_side():
    assert verdict.combined("fails", "fails") == "fails in sharebuf and in the authors' simulator too"
    assert verdict.combined("holds", "fails") == "sharebuf differs from the authors' simulator"
    assert verdict.combined("fails", "holds") == "sharebuf differs from the authors' simulator"
    assert verdict.combined("holds", None) == ""
    assert verdict.combined("inconclusive", "fails") == "inconclusive in sharebuf, fails in the authors' simulator"
    assert verdict.combined("inconclusive", "inconclusive") == "inconclusive in sharebuf and in the authors' simulator"


@pytest.mark.parametrize("field,value,msg", [("start_window_ms", -1, "greater than 0"), ("files", [], "at least 1 item"),
                                             ("series", "XYZ", "series 'XYZ' is not one of")])
def test_a_malformed_ns3dc_table_is_refused(field, value, msg):
    from sharebuf.repro.spec import FigureSpec

    d = list_figures()["abm-fig12"].model_dump()
    d["ns3dc"]["runs"][0][field] = value
    with pytest.raises(ValueError, match=msg):
        FigureSpec.model_validate(d)

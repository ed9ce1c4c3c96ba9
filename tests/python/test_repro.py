"""sharebuf repro: every figure spec resolves, the claim rules compute what they say, a figure
runs end to end at a tiny scale, and a killed run resumes without re-running or duplicating."""

import json
import math
import subprocess
import sys

import pandas as pd
import pytest

from sharebuf import executor
from sharebuf import repro
from sharebuf import sweep as sweep_mod
from sharebuf.repro import claims
from sharebuf.repro.metrics import nearest_rank, validate_metric
from sharebuf.repro.spec import Claim, points

CATALOG = {
    "fb-fig2", "fb-fig3", "fb-fig4", "fb-fig5", "fb-fig7", "fb-fig8", "fb-fig9", "fb-fig10b", "fb-fig11",
    "fab-fig2", "fab-fig3",
    "abm-fig3", "abm-fig4", "abm-fig5", "abm-fig6", "abm-fig7", "abm-fig8", "abm-fig9", "abm-fig10", "abm-fig11", "abm-fig12",
    "cbm-fig1",
    "bshare-fig2", "bshare-fig3", "bshare-fig4", "bshare-fig5",
}


def test_every_spec_resolves():
    specs = repro.list_figures()
    assert CATALOG <= set(specs)
    for fid, s in specs.items():
        assert s.sources and s.panels and s.description
        if s.simulated:
            for p in s.panels:
                assert validate_metric(p.metric) is None, (fid, p.metric)
            for scale in ("quick", "full"):
                pts = points(s, scale)
                assert len(pts) == s.n_runs(scale) > 0
            # Every point of the quick scale is a valid scenario with a known scheme and transport.
            keys = {sweep_mod.run_key(sc) for _, _, _, sc in points(s, "quick")}
            assert len(keys) == s.n_runs("quick"), f"{fid}: two points resolve to the same run"


def test_shared_runs_have_the_same_key():
    """abm-fig9's Cubic runs are abm-fig7's DT and ABM runs (content addressing)."""
    specs = repro.list_figures()
    k7 = {(sr, x): sweep_mod.run_key(sc) for sr, x, _, sc in points(specs["abm-fig7"], "quick")}
    k9 = {(sr, x): sweep_mod.run_key(sc) for sr, x, _, sc in points(specs["abm-fig9"], "quick")}
    for x in specs["abm-fig7"].x.values:
        assert k9[("Cubic DT", x)] == k7[("DT", x)]
        assert k9[("Cubic ABM", x)] == k7[("ABM", x)]
        assert k9[("DCTCP DT", x)] != k7[("DT", x)]


def _c(**kw):
    return Claim(id="t", panel="a", text="t", **kw)


def test_claim_rules_on_a_hand_table():
    t = {"A": {1.0: 2.0, 2.0: 3.0, 3.0: 1.0}, "B": {1.0: 4.0, 2.0: 4.0, 3.0: 10.0}, "C": {1.0: 8.0, 2.0: 2.0, 3.0: 10.0}}
    # ratio to each other series at x = 1: max(2/4, 2/8) = 0.5
    r = claims.evaluate(_c(rule="ratio", series="A", others=["B", "C"], at=1.0, max=0.5), t)
    assert r["measured"] == 0.5 and r["holds"]
    # ratio to the mean at x = 2: 3 / 3 = 1.0 > 0.9
    r = claims.evaluate(_c(rule="ratio", series="A", others=["B", "C"], combine="mean", at=2.0, max=0.9), t)
    assert r["measured"] == 1.0 and not r["holds"]
    # mean over x of A/mean(B, C): (2/6 + 3/3 + 1/10) / 3
    r = claims.evaluate(_c(rule="ratio", series="A", others=["B", "C"], combine="mean", at="mean", max=1), t)
    assert math.isclose(r["measured"], (1 / 3 + 1 + 0.1) / 3)
    # A is not monotone: one inversion (3 -> 1)
    r = claims.evaluate(_c(rule="monotone", series="A", direction="nondecreasing"), t)
    assert r["measured"] == 1 and not r["holds"]
    assert claims.evaluate(_c(rule="monotone", series="A", direction="nondecreasing", inversions=1), t)["holds"]
    # ordered B -> C decreasing: violated at x = 1 (4 -> 8) and x = 3 (10 -> 10, not strict)
    r = claims.evaluate(_c(rule="ordered", series="B", others=["C"], direction="decreasing"), t)
    assert r["measured"] == 2
    # spread at x = 3: 10 / 1
    assert claims.evaluate(_c(rule="spread", series="A", others=["B", "C"], at=3.0, min=5), t)["measured"] == 10
    # lowest: A / min(B, C) worst over x = max(0.5, 1.5, 0.1) = 1.5 -> not always the lowest
    r = claims.evaluate(_c(rule="lowest", series="A", others=["B", "C"]), t)
    assert r["measured"] == 1.5 and not r["holds"]
    # a claim at an x that was not run has no measured value and does not hold
    r = claims.evaluate(_c(rule="ratio", series="A", others=["B"], at=9.0, max=1), t)
    assert math.isnan(r["measured"]) and not r["holds"]
    # two-sided bounds: every value must lie in [min, max]; the one below min decides
    # (A/B over x = 0.5, 0.75, 0.1: 0.1 < 0.3 fails although the largest, 0.75, is inside)
    r = claims.evaluate(_c(rule="ratio", series="A", others=["B"], at="all", min=0.3, max=0.8), t)
    assert r["measured"] == 0.1 and not r["holds"]
    # ... and per other series at one x (A/B = 0.5, A/C = 0.25 at x = 1)
    r = claims.evaluate(_c(rule="ratio", series="A", others=["B", "C"], at=1.0, min=0.3, max=0.6), t)
    assert r["measured"] == 0.25 and not r["holds"]
    assert claims.evaluate(_c(rule="ratio", series="A", others=["B", "C"], at=1.0, min=0.2, max=0.6), t)["measured"] == 0.5


def test_new_claim_rules_on_a_hand_table():
    t = {"A": {1.0: 2.0, 2.0: 3.0, 3.0: 8.0}, "B": {1.0: 4.0, 2.0: 2.0, 3.0: 10.0}}
    # growth: last x / first x = 8 / 2; range: max / min over x = 8 / 2
    r = claims.evaluate(_c(rule="growth", series="A", min=4.0), t)
    assert r["measured"] == 4.0 and r["holds"]
    assert not claims.evaluate(_c(rule="growth", series="A", min=4.01), t)["holds"]
    assert claims.evaluate(_c(rule="range", series="B", max=5.0), t)["measured"] == 5.0
    # diff: worst |A − B| over x = |8 − 10| = 2 (x = 1: 2, x = 2: 1)
    r = claims.evaluate(_c(rule="diff", series="A", others=["B"], max=2.0), t)
    assert r["measured"] == 2.0 and r["holds"]
    # at = "any": the best x; A/B = 0.5, 1.5, 0.8 -> 0.5 (worst, at = all: 1.5)
    assert claims.evaluate(_c(rule="ratio", series="A", others=["B"], at="any", max=0.6), t)["measured"] == 0.5
    assert claims.evaluate(_c(rule="ratio", series="A", others=["B"], max=0.6), t)["measured"] == 1.5


def _seed_points():
    """A figure's points, series A and B at x = 1, 2, seeds 1-3: ratio A/B is 0.25 at x = 1 in
    every seed; at x = 2 it is 2/4 = 0.5 (seed 1), 3/4 = 0.75 (seed 2), 1/4 = 0.25 (seed 3), and
    on the mean over seeds (2 + 3 + 1)/3 / 4 = 0.5."""
    a = {(1, 1.0): 1.0, (1, 2.0): 2.0, (2, 1.0): 1.0, (2, 2.0): 3.0, (3, 1.0): 1.0, (3, 2.0): 1.0}
    rows = [dict(figure="f", series="A", x=x, seed=sd, m=v) for (sd, x), v in a.items()]
    rows += [dict(figure="f", series="B", x=x, seed=sd, m=4.0) for sd in (1, 2, 3) for x in (1.0, 2.0)]
    return pd.DataFrame(rows)


def test_per_seed_verdicts_next_to_the_mean():
    from sharebuf.repro import report

    ft = _seed_points()
    # The mean holds (worst over x 0.5 ≤ 0.5) but seed 2 does not (0.75).
    r = claims.evaluate_points(_c(rule="ratio", series="A", others=["B"], at="all", max=0.5), ft, "m")
    assert r["holds"] and r["measured"] == 0.5
    assert (r["seeds_holding"], r["seeds_total"]) == (2, 3)
    assert r["measured_by_seed"] == {"1": 0.5, "2": 0.75, "3": 0.25}
    # The reverse: at x = 2 with max 0.4 the mean fails (0.5) and seed 3 alone holds (0.25).
    r2 = claims.evaluate_points(_c(rule="ratio", series="A", others=["B"], at=2.0, max=0.4), ft, "m")
    assert not r2["holds"] and r2["measured"] == 0.5
    assert (r2["seeds_holding"], r2["seeds_total"]) == (1, 3)
    assert r2["measured_by_seed"] == {"1": 0.5, "2": 0.75, "3": 0.25}
    # A count rule per seed: 'increasing' (rel_tol 0) holds for A's 1 -> 2 (seed 1), 1 -> 3 (seed 2)
    # and the mean's 1 -> 2; seed 3's flat 1 -> 1 is one inversion.
    r3 = claims.evaluate_points(_c(rule="monotone", series="A", direction="increasing"), ft, "m")
    assert r3["holds"] and (r3["seeds_holding"], r3["seeds_total"]) == (2, 3)
    assert r3["measured_by_seed"] == {"1": 0.0, "2": 0.0, "3": 1.0}
    # One seed: exactly evaluate()'s result on the mean table, no per-seed keys.
    one = ft[ft.seed == 2]
    c = _c(rule="ratio", series="A", others=["B"], at="all", max=0.5)
    assert claims.evaluate_points(c, one, "m") == claims.evaluate(c, report.series_table(one, "m"))
    assert "seeds_total" not in claims.evaluate_points(c, one, "m")
    # claims.md: the "seeds" columns and the per-seed values only with more than one seed.
    f = dict(scale="quick", seeds=[1, 2, 3], claims=[r, r2])
    md = report.claims_md({"f": f}, {})
    assert "| verdict | seeds holding | per seed | rests on | why |" in md
    assert "| holds | 2/3 | s1 0.5, s2 0.75, s3 0.25 |" in md and "| **fails** | 1/3 | s1 0.5, s2 0.75, s3 0.25 |" in md
    assert "claims: 1 hold, 1 fail, 0 inconclusive." in md
    f1 = dict(scale="quick", seeds=[2], claims=[claims.evaluate_points(c, one, "m")])
    md1 = report.claims_md({"f": f1}, {})
    assert "seeds holding" not in md1 and "| claim | panel | paper | measured [95% interval] | rule | verdict | rests on | why |" in md1
    assert "Scale `quick`, seeds [2]; claims: 0 hold, 1 fail, 0 inconclusive.\n" in md1


def test_per_seed_verdicts_end_to_end(tmp_path):
    """abm-fig3 (a tiny packet simulation) with two seeds: claims.json carries per-seed verdicts,
    each seed's measured value is the drain-time ratio of that seed's own runs."""
    res = repro.reproduce(["abm-fig3"], tmp_path, seeds=[1, 2], jobs=1, log=lambda *a: None)
    pts = pd.read_parquet(tmp_path / "points.parquet")
    cj = json.loads((tmp_path / "claims.json").read_text())["abm-fig3"]
    c = cj["claims"][0]
    assert cj["seeds"] == [1, 2] and c == res["abm-fig3"][0]
    assert c["seeds_total"] == 2 and c["seeds_holding"] == sum(2.9 <= v <= 3.1 for v in c["measured_by_seed"].values())
    for sd in (1, 2):
        g = pts[pts.seed == sd]
        d = dict(zip(g.series, g["queue.drain_us"]))
        assert math.isclose(c["measured_by_seed"][str(sd)], d["i1: 3 RR queues"] / d["i2: 1 queue"], rel_tol=1e-12)
    assert f"| {c['seeds_holding']}/2 |" in (tmp_path / "claims.md").read_text()


def test_per_x_overrides_and_constant_series():
    """[x.set] and series x_set change several keys at one x; a constant series runs once and is
    reported at every x (the DT bar of ABM Fig. 12)."""
    specs = repro.list_figures()
    f10 = specs["abm-fig10"]
    pts = {(sr, x): sc for sr, x, _, sc in points(f10, "quick")}
    sc = pts[("Cubic DT (code α)", 5)]
    assert sc["switch"]["queues_per_port"] == 5
    assert sc["switch"]["bm"]["alpha"] == [1, 0.5, 0.5, 0.5, 0.125]
    ws = [w for w in sc["workload"] if w["kind"] == "poisson"]
    assert [w["priority"] for w in ws] == [1, 2, 3, 4] and math.isclose(sum(w["load"] for w in ws), 0.4)
    assert [w["priority"] for w in sc["workload"] if w["kind"] == "incast"] == [4]
    assert pts[("Cubic DT", 5)]["switch"]["bm"]["alpha"] == 0.5
    bad = f10.model_dump()
    bad["x"]["set"] = {"9": {"switch.queues_per_port": 9}}
    with pytest.raises(ValueError, match=r"9 is not one of the x values"):
        type(f10).model_validate(bad)
    f12 = specs["abm-fig12"]
    dt = [(x, seed) for sr, x, seed, _ in points(f12, "quick") if sr == "DT"]
    seeds = f12.scale("quick").seeds
    assert dt == [(f12.scale("quick").x_values[0], s) for s in seeds]  # one x, every seed
    assert f12.n_runs("quick") == (4 + 4 + 1) * len(seeds)


def test_toy_figures_match_hand_computations(tmp_path):
    """FB Figs. 2, 4, 5 and FAB Fig. 2 in the fluid model against the papers' and the catalog's
    exact numbers (every input stated, or the catalog's stated assumption r = 5)."""
    ids = ["fb-fig2", "fb-fig4", "fb-fig5", "fab-fig2"]
    res = repro.reproduce(ids, tmp_path, log=lambda *a: None)
    pts = pd.read_parquet(tmp_path / "points.parquet")

    def v(fid, series, x, col="packets"):
        return pts[(pts.figure == fid) & (pts.series == series) & (pts.x == x)][col].item()

    r = 5.0
    assert math.isclose(v("fb-fig2", "DT: Q2 (high, α = 2)", 1), 60 * (r - 1) / (3 * r - 5), rel_tol=1e-9)  # 24
    assert math.isclose(v("fb-fig2", "DT: Q1 (low, α = 1)", 2), 15, rel_tol=1e-9)
    assert math.isclose(v("fb-fig4", "4a: remaining", 0), 10, rel_tol=1e-9)
    assert math.isclose(v("fb-fig4", "4bc: high burst (port 1)", 1), 8, rel_tol=1e-9)  # the paper's 8 packets
    assert math.isclose(v("fb-fig4", "4bc: high burst (port 1)", 2), 2 * 60 / 8, rel_tol=1e-9)
    assert all(math.isclose(v("fb-fig5", "FB: high queue", n, "high_packets"), 30, rel_tol=1e-9) for n in range(1, 11))
    assert math.isclose(v("fb-fig5", "5bc: low 1 (port 2)", 0), 2, rel_tol=1e-9)  # α/N_p·γ·R = 1/25·50
    assert math.isclose(v("fb-fig5", "5bc N_p per port: low 1 (port 2)", 0), 6, rel_tol=1e-9)
    assert math.isclose(v("fab-fig2", "FAB: port 1 (long)", 0), 0.1 * 180 / 1.1, rel_tol=1e-9)
    assert math.isclose(v("fab-fig2", "DT: port 1 (long)", 0), 60, rel_tol=1e-9)
    for fid in ids:
        assert all(c["holds"] for c in res[fid]), fid


def test_abm_fig3_drain_time_ratio_in_a_packet_simulation(tmp_path):
    """ABM Fig. 3 as a tiny packet simulation: a queue sharing its port with two other RR queues
    drains 3× slower than an equal-length queue alone (catalog check 3.0 ± 0.1)."""
    res = repro.reproduce(["abm-fig3"], tmp_path, jobs=1, log=lambda *a: None)
    pts = pd.read_parquet(tmp_path / "points.parquet")
    d = dict(zip(pts.series, pts["queue.drain_us"]))
    # both queues grow at 0.667 Gbps for 10 ms: ≈ 833 KB; alone it drains at 10 Gbps in ≈ 667 µs
    assert 640 <= d["i2: 1 queue"] <= 690
    assert abs(d["i1: 3 RR queues"] / d["i2: 1 queue"] - 3.0) <= 0.1
    assert res["abm-fig3"][0]["holds"]


def test_uplink_throughput_and_fct_metrics_on_a_hand_run(tmp_path):
    """throughput.uplink_pct, fct.*_ms (unfinished flows count until the end) and retransmits.*
    on a hand-made run directory."""
    from sharebuf.repro.metrics import run_metrics

    (tmp_path / "summary.json").write_text(json.dumps({"drops_total": 0, "flows": {"unfinished": 1}, "sim_s": 2.0}))
    flows = pd.DataFrame(dict(
        src=[0, 1, 0, 2], dst=[2, 3, 1, 3], size_bytes=[1_000_000, 2_000, 3_000, 50_000],
        received_bytes=[1_000_000, 2_000, 3_000, 10_000], start_s=[0.0, 0.5, 0.2, 0.9],
        fct_s=[0.4, 0.01, 0.002, None], finished=[True, True, True, False], workload=["w", "w", "w", "q"],
        retransmits=[0, 3, 1, 5], slowdown=[2.0, 3.0, 1.5, None]))
    flows.to_parquet(tmp_path / "flows.parquet")
    sc = {"topology": {"servers_per_leaf": 2, "leaves": 2, "spines": 1, "links_per_leaf_spine": 1, "host_link_gbps": 1.0},
          "arrivals_until_ms": 1000}
    m = run_metrics(tmp_path, ["throughput.uplink_pct", "fct.p50_ms.all", "fct.p99_ms.incast", "retransmits.short"], {"q"}, sc)
    # inter-leaf non-incast flows: 0->2 (1 MB, done by 0.4 s) and 1->3 (2 KB, done by 0.51 s); 0->1 is intra-leaf.
    # capacity: 2 leaves x 1 uplink of 2 Gbps (full bisection) x 1 s
    assert math.isclose(m["throughput.uplink_pct"], 100 * (1_000_000 + 2_000) * 8 / (2 * 2e9 * 1.0))
    assert math.isclose(m["fct.p50_ms.all"], 10.0)  # nearest rank of (400, 10, 2) ms
    assert math.isclose(m["fct.p99_ms.incast"], (2.0 - 0.9) * 1e3)  # unfinished: end − start
    assert m["retransmits.short"] == 4


def test_nearest_rank_percentile():
    x = list(range(1, 101))
    import numpy as np

    assert nearest_rank(np.array(x, dtype=float), 0.99) == 99
    assert nearest_rank(np.array(x, dtype=float), 0.999) == 100
    assert nearest_rank(np.array([5.0]), 0.5) == 5


def test_analytical_figures_match_their_closed_forms(tmp_path):
    res = repro.reproduce(["fb-fig3", "abm-fig4"], tmp_path, log=lambda *a: None)
    pts = pd.read_parquet(tmp_path / "points.parquet")
    # FB Fig. 3: R = 60/(1 + 2 + N); high = 2R, low = N R.
    f3 = pts[pts.figure == "fb-fig3"]
    for n in range(0, 11):
        hi = f3[(f3.series == "high priority") & (f3.x == n)].buffer_packets.item()
        lo = f3[(f3.series == "low priority (sum)") & (f3.x == n)].buffer_packets.item()
        assert math.isclose(hi, 2 * 60 / (3 + n), rel_tol=1e-9)
        assert math.isclose(lo, n * 60 / (3 + n), rel_tol=1e-9)
    # ABM Fig. 4 (Eq. 6): B − Q = B / (1 + n α); T_AF = α_AF B / (1 + α_AF + n α_BE).
    f4 = pts[pts.figure == "abm-fig4"]
    assert math.isclose(f4[(f4.series == "α = 0.5") & (f4.x == 8)].remaining_fraction.item(), 1 / 5, rel_tol=1e-9)
    assert math.isclose(f4[(f4.series == "AF threshold") & (f4.x == 4)].threshold_fraction.item(), 1 / 4, rel_tol=1e-9)
    assert all(c["holds"] for c in res["fb-fig3"] + res["abm-fig4"])
    assert (tmp_path / "fb-fig3.png").stat().st_size > 10_000


@pytest.fixture(scope="module")
def tiny_fig7(tmp_path_factory):
    out = tmp_path_factory.mktemp("fig7")
    res = repro.reproduce(["abm-fig7"], out, scale="tiny", jobs=1, log=lambda *a: None)
    return out, res


def test_abm_fig7_end_to_end_at_tiny_scale(tiny_fig7):
    out, res = tiny_fig7
    spec = repro.list_figures()["abm-fig7"]
    allpts = pd.read_parquet(out / "points.parquet")
    pts = allpts[~allpts.pooled]
    assert len(pts) == spec.n_runs("tiny") == 15
    assert set(pts.series) == {"DT", "FAB", "CS", "IB", "ABM"}
    # one pooled row per point; with one seed it equals the seed's row, and its seed is null
    pooled = allpts[allpts.pooled]
    assert len(pooled) == 15 and pooled.seed.isna().all() and (pooled.seeds == 1).all()
    m = pts.merge(pooled, on=["series", "x"], suffixes=("", "_pooled"))
    for col in ("slowdown.p99.incast", "rto_pct.incast", "n.short", "drops"):
        assert (m[col] == m[f"{col}_pooled"]).all(), col
    for p in spec.panels:
        assert pts[p.metric].notna().all(), p.metric
    assert (pts["slowdown.p99.incast"] >= 1).all()
    # CS may fill the whole buffer; DT (α = 0.5) cannot hold more than α/(1+α) = 1/3 of it in one queue,
    # but several ports may: CS's p99 occupancy is the highest.
    cs = pts[pts.series == "CS"]["buffer.p99_pct"].max()
    assert cs >= pts[pts.series == "DT"]["buffer.p99_pct"].max()
    for name in ("abm-fig7.png", "abm-fig7.pdf", "claims.md", "claims.json"):
        assert (out / name).stat().st_size > 500
    cj = json.loads((out / "claims.json").read_text())["abm-fig7"]
    assert len(cj["claims"]) == len(spec.claims)
    assert all(c["measured"] is not None for c in cj["claims"]), "every claim gets a measured value"
    assert all(c["verdict"] in ("holds", "fails", "inconclusive") and len(c["interval"]) == 2 for c in cj["claims"])
    assert "| claim | panel | paper | measured [95% interval] | rule | verdict |" in (out / "claims.md").read_text()


def test_killed_repro_resumes_without_rerunning(tiny_fig7, tmp_path):
    import shutil

    out, _ = tiny_fig7
    copy = tmp_path / "resume"
    shutil.copytree(out, copy)
    before = pd.read_parquet(copy / "points.parquet")
    # As if killed: one run missing, one left half-written, the table gone.
    runs = sorted((copy / "runs").iterdir())
    shutil.rmtree(runs[0])
    (copy / "runs" / f".{runs[1].name}.partial-x").mkdir()
    (copy / "points.parquet").unlink()
    ran = []
    orig = executor.run_one
    try:
        executor.run_one = lambda sc, d: (ran.append(d), orig(sc, d))[1]
        repro.reproduce(["abm-fig7"], copy, scale="tiny", jobs=1, log=lambda *a: None)
    finally:
        executor.run_one = orig
    assert [p.split("/")[-1] for p in ran] == [runs[0].name]
    after = pd.read_parquet(copy / "points.parquet")
    assert len(after) == len(before)
    cols = ["series", "x", "seed", "slowdown.p99.incast", "slowdown.p99.short", "buffer.p99_pct"]
    pd.testing.assert_frame_equal(after[cols].sort_values(["series", "x"]).reset_index(drop=True),
                                  before[cols].sort_values(["series", "x"]).reset_index(drop=True))
    # Another figure into the same directory keeps abm-fig7's rows.
    repro.reproduce(["fb-fig3"], copy, log=lambda *a: None)
    both = pd.read_parquet(copy / "points.parquet")
    assert set(both.figure) == {"abm-fig7", "fb-fig3"} and (both.figure == "abm-fig7").sum() == len(before)


def test_cli_list_and_errors():
    out = subprocess.run([sys.executable, "-m", "sharebuf", "repro", "list"], capture_output=True, text=True)
    assert out.returncode == 0
    for fid in CATALOG:
        assert fid in out.stdout
    bad = subprocess.run([sys.executable, "-m", "sharebuf", "repro", "abm-fig99", "--out", "x"], capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.startswith("error:") and "abm-fig7" in bad.stderr and "Traceback" not in bad.stderr


def test_paper_topology_is_one_flag_away():
    """ABM figures default to the code's 2 x 32 leaf-spine; --topology paper gives the paper text's
    8 leaves x 32 servers and 8 spines with the same 4:1 oversubscription and buffer per port."""
    from sharebuf.config import load_scenario, resolve

    spec = repro.list_figures()["abm-fig7"]
    code = points(spec, "quick")[0][3]
    paper = points(spec, "quick", None, dict(repro.PAPER_TOPOLOGY))[0][3]
    assert (code["topology"]["leaves"], code["topology"]["spines"], code["topology"]["links_per_leaf_spine"]) == (2, 2, 4)
    assert (paper["topology"]["leaves"], paper["topology"]["spines"], paper["topology"]["links_per_leaf_spine"]) == (8, 8, 1)
    rc, rp = (resolve(*load_scenario(d)[:2]) for d in (code, paper))
    assert rc["switch"]["buffer_bytes"] == rp["switch"]["buffer_bytes"] == 3_932_160
    with pytest.raises(Exception, match="allowed: code, paper"):
        repro.reproduce(["abm-fig7"], "/nonexistent", topology="leafy")


def test_ns3dc_profile_reaches_every_abm_run():
    """The ABM specs set profile = "ns3dc": every key of the profile must reach each planned run's
    scenario (a full dump of the base scenario used to pin sharebuf's defaults, so only Cubic's
    cc_params applied); `--set profile=none` must give sharebuf's defaults back."""
    from sharebuf.config import PROFILES, cc_param_applies, cc_param_owners, load_scenario
    from sharebuf.scenario.profiles import BM_PARAM_APPLIES

    def get(s, dotted):
        cur = s
        for part in dotted.split("."):
            cur = cur.get(part) if isinstance(cur, dict) else getattr(cur, part)
        return cur

    prof = PROFILES["ns3dc"]
    checked = 0
    for fid, spec in repro.list_figures().items():
        if not spec.simulated or spec.scenario.set.get("profile") != "ns3dc":
            continue
        for _, _, _, d in points(spec, "quick"):
            s = load_scenario(d)[0]
            for k, v in prof.items():
                if not cc_param_applies(k, s.transport.cc):
                    continue
                if any(k == sk or k.startswith(sk + ".") for sk in {**spec.scenario.set}):
                    continue  # the spec sets this key itself
                if k in BM_PARAM_APPLIES:  # a scheme's own parameter: exactly where that scheme runs
                    bm = s.switch.bm.model_dump()
                    leaf = k.rsplit(".", 1)[1]
                    assert bm.get(leaf) == (v if BM_PARAM_APPLIES[k](bm) else None), (fid, k, bm)
                    checked += 1
                    continue
                assert get(s, k) == v, (fid, k, get(s, k), v)
                checked += 1
            # a workload with its own Cubic gets the profile's Cubic parameters too (abm-fig8's class)
            for w in s.workload:
                if getattr(w, "cc", None) == "cubic":
                    for k, v in prof.items():
                        if "cubic" in cc_param_owners(k):
                            assert w.cc_params[k.rsplit(".", 1)[1]] == v, (fid, w.name, k)
                            checked += 1
    assert checked > 1000  # abm-fig6..12 at quick scale: hundreds of runs x 9 keys
    d = points(repro.list_figures()["abm-fig7"], "quick", None, {"profile": "none"})[0][3]
    s = load_scenario(d)[0]
    assert (s.topology.ecmp_hash, s.switch.device_queue_packets, s.host.nic_qdisc, s.transport.recovery) == ("salted", 0, "fifo", "rfc6675")


def test_ablate_variants_and_errors():
    """Every key of the ns3dc profile is in exactly one ablation group; the variants are full,
    none, one leave-one-out and one add-one per group; unknown figures, claims and keys are one
    clear error each."""
    from sharebuf.config import PROFILES
    from sharebuf.errors import ScenarioError
    from sharebuf.repro import ablate as ab

    gs = ab.groups("ns3dc")
    keys = [k for ks in gs.values() for k in ks]
    assert sorted(keys) == sorted(PROFILES["ns3dc"]) and len(keys) == len(set(keys))
    assert set(gs["cubic_ca"]) == {"transport.cc_params.cnt_clamp_segments", "transport.cc_params.reno_friendly",
                                   "transport.cc_params.window_unit"}
    assert set(gs["host_nic"]) == {"host.nic_qdisc", "host.device_queue_packets"}
    assert set(gs["loss_exit"]) == {"transport.loss_exit_acked", "transport.cc_params.slow_start_cap"}
    vs = ab.variants("ns3dc")
    assert [v.name for v in vs] == ["full", "none", *(f"-{g}" for g in gs), *(f"+{g}" for g in gs)]
    every = frozenset(keys)
    for v in vs[2:]:
        g = v.name[1:]
        assert v.keys == (every - set(gs[g]) if v.kind == "drop" else frozenset(gs[g]))
        assert v.reference == ("full" if v.kind == "drop" else "none")
    assert [v.name for v in ab.variants("ns3dc", only=["transport.recovery", "host_nic"], add_one=False)] == \
        ["full", "none", "-recovery", "-host_nic"]
    with pytest.raises(ScenarioError, match=r"--only 'ecmp': not a group or key of profile 'ns3dc'; allowed: ecmp_hash"):
        ab.variants("ns3dc", only=["ecmp"])
    with pytest.raises(ScenarioError, match=r"claim 'a-51' is not a claim of abm-fig7; allowed: a-12.5-dt-fab-ib"):
        ab.ablate("abm-fig7", ["a-51"], "/nonexistent", log=lambda *a: None)
    with pytest.raises(ScenarioError, match="figure id 'abm-fig77' is not known"):
        ab.ablate("abm-fig77", ["a-50"], "/nonexistent", log=lambda *a: None)
    with pytest.raises(ScenarioError, match="abm-fig3 sets no profile"):
        ab.ablate("abm-fig3", ["x"], "/nonexistent", log=lambda *a: None)
    bad = subprocess.run([sys.executable, "-m", "sharebuf", "repro", "abm-fig7", "--claim", "a-50", "--out", "x"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "are options of `sharebuf repro ablate FIGURE`" in bad.stderr


def test_ablate_verdicts_come_from_the_variant_runs(tiny_fig7, tmp_path):
    """`repro ablate` at the tiny scale on abm-fig7 a-50 (ABM's incast p99 / each other scheme's
    at 50%), for the recovery key: the full variant reuses the figure's runs; each variant's runs
    carry exactly the keys it names; its measured value is the ratio of nearest-rank p99s
    recomputed here from the runs' flows, its interval and verdict are the figure's for `full`
    (the same bootstrap draws) and follow the claim's bound for every variant, and the % of
    incast responses that waited out an RTO is counted here from the flows."""
    import shutil
    import tomllib

    import numpy as np

    from sharebuf.repro import ablate as ab

    out = tmp_path / "abl"
    shutil.copytree(tiny_fig7[0] / "runs", out / "runs")
    ran = []
    orig = executor.run_one
    try:
        executor.run_one = lambda sc, d: (ran.append(d), orig(sc, d))[1]
        res = ab.ablate("abm-fig7", ["a-50"], out, scale="tiny", only=["recovery"], jobs=1, log=lambda *a: None)
    finally:
        executor.run_one = orig
    r = res["a-50"]
    rows = {row["variant"]: row for row in r["rows"]}
    assert list(rows) == ["full", "none", "-recovery", "+recovery"]
    assert len(ran) == 3 * 5  # 5 series at x = 0.5, three new variants; full is the figure's own runs
    fig = {c["id"]: c for c in json.loads((tiny_fig7[0] / "claims.json").read_text())["abm-fig7"]["claims"]}
    assert math.isclose(rows["full"]["measured"], fig["a-50"]["measured"], rel_tol=1e-12)
    assert rows["full"]["interval"] == pytest.approx(fig["a-50"]["interval"], rel=1e-12)
    assert rows["full"]["verdict"] == fig["a-50"]["verdict"]
    want = {"full": ("ns3dc", "prr", 100), "none": ("none", "rfc6675", 0),
            "-recovery": ("none", "rfc6675", 100), "+recovery": ("none", "prr", 0)}
    claim = next(c for c in repro.list_figures()["abm-fig7"].claims if c.id == "a-50")
    for name, row in rows.items():
        p99 = {}
        rto = {}
        assert len(row["runs"]) == 5
        for key in row["runs"]:
            rd = out / "runs" / f"run-{key}"
            sc = tomllib.loads((rd / "scenario.toml").read_text())
            assert (sc["profile"], sc["transport"]["recovery"], sc["switch"]["device_queue_packets"]) == want[name], name
            assert sc["topology"]["ecmp_hash"] == ("salted" if name in ("none", "+recovery") else "same")
            f = pd.read_parquet(rd / "flows.parquet")
            inc = f[f.workload == "incast"]
            s = np.sort(inc[inc.finished].slowdown_paper.to_numpy())
            series = {"dt": "DT", "fab": "FAB", "cs": "CS", "ib": "IB", "abm": "ABM"}[sc["switch"]["bm"]["scheme"]]
            p99[series] = s[math.ceil(0.99 * len(s)) - 1]
            rto[series] = (int((inc.timeouts > 0).sum()), len(inc))
        ratio = max(p99["ABM"] / p99[o] for o in ("DT", "FAB", "CS", "IB"))
        assert math.isclose(row["measured"], ratio, rel_tol=1e-12), name
        lo, hi = row["interval"]
        assert lo <= ratio <= hi, name
        assert row["verdict"] == ("holds" if hi <= claim.max else "fails" if lo > claim.max else "inconclusive"), name
        ref = {"full": None, "none": None}.get(name, rows["full" if name[0] == "-" else "none"]["verdict"])
        assert row["flips"] == (None if ref is None else row["verdict"] != ref), name
        for sr in p99:
            assert math.isclose(row[f"ABM @ 50" if sr == "ABM" else f"{sr} @ 50"], p99[sr], rel_tol=1e-12)
            assert math.isclose(row[f"rto_pct.incast {sr}"], 100 * rto[sr][0] / rto[sr][1], rel_tol=1e-12)
            assert row[f"n.incast {sr}"] == rto[sr][1]
    md = (out / "ablate-abm-fig7.md").read_text()
    assert "| variant | measured | interval | verdict | flips | ABM @ 50 |" in md and "| +recovery |" in md


def test_ablate_tables_keep_variants_run_before():
    """A claim ablated again with fewer variants (--only, --no-add-one) keeps the rows of the others,
    in variant order; a change of scale, seeds or x replaces the table."""
    from sharebuf.repro.ablate import _merge

    def res(names, scale="quick", val=1.0):
        return dict(scale=scale, seeds=[1], x=[0.5], groups={}, metric="m", profile="ns3dc",
                    rows=[dict(variant=n, measured=val) for n in names])

    old = res(["full", "none", "-ecmp_hash", "-recovery", "+ecmp_hash"])
    new = res(["full", "none", "-host_nic", "+host_nic"], val=2.0)
    m = _merge(old, new)
    assert [r["variant"] for r in m["rows"]] == ["full", "none", "-ecmp_hash", "-host_nic", "-recovery", "+ecmp_hash", "+host_nic"]
    assert [r["measured"] for r in m["rows"]] == [2.0, 2.0, 1.0, 2.0, 1.0, 1.0, 2.0]
    assert _merge(res(["full", "-ecmp_hash"], scale="tiny"), new) == new


def test_profile_cubic_params_reach_a_workloads_own_cubic():
    """A workload with its own cc = "cubic" runs its own cc_params, so the ns3dc profile's Cubic keys
    must be filled there (unless the workload sets them), reported as workload[i].cc_params.X, and
    stripped again when the profile changes; a workload with another cc gets none of them (a DCTCP
    workload gets the profile's DCTCP key instead)."""
    from sharebuf.config import apply_profile, profile_key

    d = {"profile": "ns3dc", "transport": {"cc": "dctcp"}, "workload": [
        {"kind": "poisson", "cc": "cubic"},
        {"kind": "poisson", "cc": "cubic", "cc_params": {"cnt_clamp_segments": 7}},
        {"kind": "poisson", "cc": "dctcp"},
        {"kind": "poisson"}]}
    out, applied = apply_profile(d)
    assert out["workload"][0]["cc_params"] == {"cnt_clamp_segments": 20, "reno_friendly": False, "slow_start_cap": "none",
                                                     "window_unit": "segments"}
    assert out["workload"][1]["cc_params"] == {"cnt_clamp_segments": 7, "reno_friendly": False, "slow_start_cap": "none",
                                                     "window_unit": "segments"}
    assert out["workload"][2]["cc_params"] == {"loss_ssthresh": "ns3", "window_unit": "segments"} and "cc_params" not in out["workload"][3]
    assert "transport.cc_params.cnt_clamp_segments" not in applied  # transport.cc is DCTCP
    assert applied["transport.cc_params.loss_ssthresh"] == "ns3"
    assert applied["workload[0].cc_params.cnt_clamp_segments"] == 20
    assert "workload[1].cc_params.cnt_clamp_segments" not in applied
    assert profile_key("workload[1].cc_params.reno_friendly") == "transport.cc_params.reno_friendly"
    assert d["workload"][0] == {"kind": "poisson", "cc": "cubic"}  # the input is not modified
    # the repro's profile sweep: abm-fig8 with profile=none drops the filled keys, keeps none of them
    spec = repro.list_figures()["abm-fig8"]
    full = points(spec, "quick")[0][3]
    none = points(spec, "quick", None, {"profile": "none"})[0][3]
    from sharebuf.config import load_scenario
    assert load_scenario(full)[0].workload[0].cc_params == {"cnt_clamp_segments": 20, "reno_friendly": False, "slow_start_cap": "none",
                                                     "window_unit": "segments"}
    assert load_scenario(none)[0].workload[0].cc_params == {}

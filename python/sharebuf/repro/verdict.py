"""Three verdicts for a claim: holds, fails or inconclusive.

A claim's *measured* value is its rule (:func:`.claims.evaluate`) on the figure's pooled table:
tails on the flows of all seeds pooled, run-level metrics averaged over seeds. Its *interval* is
the central 95% of the same rule over :func:`.samples.resampled_tables`' bootstrap draws (seeds
drawn with replacement, and flows — incast responses with their query — within each drawn run).
The rule accepts a range of the measured value (``min``..``max``, or at most ``inversions``):

* **holds** when the whole interval lies in that range;
* **fails** when the whole interval lies outside it;
* **inconclusive** otherwise: the run-to-run noise, at these seeds and this scale, covers both
  answers (a tail that ~1% of timeouts decides, a ratio at its bound).

Why this interval: the noise that moves a tail verdict is of two kinds — which seed's workload
draw it is (a few incast queries colliding with a long flow's slow start), and how few flows a
p99 rests on. Drawing seeds captures the first, drawing flows (by query for incast responses,
whose timeouts come together) the second; drawing the same seeds for every series keeps schemes
paired on the same workload draws, as the runs are. With one seed only the second kind is left,
and a run-level metric (drops, occupancy) then has a point interval.
"""

from __future__ import annotations

import math
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from .claims import evaluate
from .samples import B_DEFAULT, COVERAGE, pooled_value, resampled_tables, tail_class
from .spec import Claim

VERDICTS = ("holds", "fails", "inconclusive")


def accepted(c: Claim) -> Tuple[float, float]:
    """The range of measured values for which the claim's rule holds."""
    if c.rule in ("monotone", "ratio_trend", "ordered"):
        return -math.inf, float(c.inversions)
    lo = -math.inf if c.min is None else c.min
    hi = (1.0 if c.rule == "lowest" else math.inf) if c.max is None else c.max
    return lo, hi


def interval(draws: Sequence[float]) -> Tuple[float, float]:
    """The central ``COVERAGE`` interval of the finite draws (NaN, NaN without any)."""
    v = np.asarray([d for d in draws if d is not None and math.isfinite(d)], dtype=float)
    if len(v) == 0:
        return math.nan, math.nan
    a = (1 - COVERAGE) / 2
    lo, hi = np.quantile(v, [a, 1 - a], method="inverted_cdf")
    return float(lo), float(hi)


def decide(c: Claim, measured: float, lohi: Tuple[float, float]) -> str:
    lo_ok, hi_ok = accepted(c)
    lo, hi = lohi
    if not math.isfinite(measured) or not (math.isfinite(lo) and math.isfinite(hi)):
        return "inconclusive"
    if lo_ok <= lo and hi <= hi_ok:
        return "holds"
    if hi < lo_ok or lo > hi_ok:
        return "fails"
    return "inconclusive"


Points = Dict[Tuple[str, float], Dict[int, object]]


def table(points: Points, metric: str) -> Dict[str, Dict[float, float]]:
    out: Dict[str, Dict[float, float]] = {}
    for (series, x), runs in points.items():
        out.setdefault(series, {})[float(x)] = pooled_value(runs, metric)
    return out


def judge(c: Claim, points: Points, metric: str, key: str, B: int = B_DEFAULT,
          x_values: Optional[Sequence[float]] = None) -> dict:
    """The claim on a figure's points ({(series, x): {seed: RunFlows or value}}): the measured
    value on the pooled table, its interval and the verdict (``x_values``: see
    :func:`.samples.resampled_tables`)."""
    r = evaluate(c, table(points, metric))
    draws = [evaluate(c, t)["measured"] for t in resampled_tables(points, metric, B, key=key, x_values=x_values)]
    lohi = interval(draws)
    r.update(interval=list(lohi), verdict=decide(c, r["measured"], lohi))
    r["holds"] = r["verdict"] == "holds"
    return r


def judge_fixed(c: Claim, tab: Dict[str, Dict[float, float]]) -> dict:
    """A deterministic figure (closed form, toy): the interval is the value itself."""
    r = evaluate(c, tab)
    m = r["measured"]
    r.update(interval=[m, m], verdict=decide(c, m, (m, m)) if math.isfinite(m) else "fails")
    r["holds"] = r["verdict"] == "holds"
    return r


def claim_points(c: Claim, xs: Sequence[float]) -> List[float]:
    """The x values a claim looks at."""
    if c.at in ("all", "mean", "any", None) or c.rule in ("monotone", "ratio_trend", "ordered", "growth", "range"):
        return list(xs)
    return [x for x in xs if math.isclose(float(x), float(c.at), rel_tol=1e-9)]


def evidence(c: Claim, metric: str, pooled_rows, series_names: Optional[Sequence[str]] = None) -> List[dict]:
    """What the claim's value rests on, per series at its x values (pooled rows of points.parquet):
    the flows its class's percentiles rest on, the % of them that waited out a retransmission
    timeout, and the drops per run by cause (mean over seeds)."""
    cls = tail_class(metric)
    out = []
    names = list(series_names or [c.series, *c.others])
    if pooled_rows is None or len(pooled_rows) == 0:
        return out
    xs = sorted(set(pooled_rows.x))
    at = claim_points(c, xs)
    for name in names:
        g = pooled_rows[(pooled_rows.series == name) & pooled_rows.x.isin(at)]
        if g.empty:
            continue
        e = dict(series=name, x=[float(v) for v in g.x], seeds=int(g.seeds.max()) if "seeds" in g else None)
        if cls is not None:
            base = cls if cls != "queries" else None
            if base is not None and f"n.{base}" in g:
                e["flows"] = [float(v) for v in g[f"n.{base}"]]
            rk = f"rto_pct.{cls}"
            if rk in g:
                e["rto_pct"] = [float(v) for v in g[rk]]
        if "drops" in g:
            e["drops"] = [float(v) for v in g["drops"]]
            causes = {k.split(".", 1)[1]: [float(v) for v in g[k]] for k in g.columns
                      if k.startswith("drops.") and g[k].fillna(0).to_numpy().any()}
            if causes:
                e["drops_by_cause"] = causes
        out.append(e)
    return out


def combined(sharebuf: str, ns3dc: Optional[str]) -> str:
    """The verdict next to the authors' simulator's on the same claim."""
    if ns3dc is None:
        return ""
    if sharebuf == ns3dc == "fails":
        return "fails in sharebuf and in the authors' simulator too"
    if sharebuf == ns3dc == "holds":
        return "holds in sharebuf and in the authors' simulator"
    if {sharebuf, ns3dc} == {"holds", "fails"}:
        return "sharebuf differs from the authors' simulator"
    if sharebuf == ns3dc:
        return f"{sharebuf} in sharebuf and in the authors' simulator"
    return f"{sharebuf} in sharebuf, {ns3dc} in the authors' simulator"


__all__ = ["VERDICTS", "accepted", "interval", "decide", "judge", "judge_fixed", "evidence", "combined", "table"]

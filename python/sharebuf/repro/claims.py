"""Check rules for the papers' claims, evaluated on the mean over seeds of each (series, x)
(:func:`evaluate_points`: and, with more than one seed, on each seed alone).

Every rule yields a *measured* number and whether it holds:

* ``ratio``: y(series) / y(others) at ``at`` — ``combine = "each"`` reports the worst (largest,
  or smallest when only ``min`` is given; with both ``min`` and ``max``, the smallest if it is
  below ``min``, else the largest) ratio over the other series, ``mean`` the ratio to their
  mean, ``min``/``max`` the ratio to their min/max. ``at = "all"``: the worst over every x;
  ``at = "mean"``: the mean over x of the per-x ratio. Holds iff min ≤ measured ≤ max.
* ``within``: |y(series)/y(other) − 1| over the others (worst), holds iff ≤ max.
* ``diff``: |y(series) − y(other)| over the others (worst), holds iff ≤ max (percentage points:
  "throughput within 5 points of DT").
* ``value``: y(series) at ``at``; holds iff min ≤ measured ≤ max.
* ``at = "any"`` (ratio, lowest, within, value, spread): the best x instead of the worst ("up to
  34.73% below ABM": the smallest ratio over x must be ≤ max).
* ``monotone``: y(series) over x must move in ``direction``; measured = number of inversions
  (steps against it by more than ``rel_tol``), holds iff ≤ ``inversions``.
* ``ratio_trend``: the same, applied to y(series)/mean(y(others)) over x.
* ``ordered``: at every x, the series [series, *others] must move in ``direction`` along that list
  (e.g. DT's tolerance decreasing as more ports are congested); measured = the number of x where
  some step goes against it by more than ``rel_tol``; holds iff ≤ ``inversions``.
* ``spread``: max/min of y over [series, *others] at ``at`` (worst over x for "all"); holds iff
  min ≤ measured ≤ max (e.g. buffer states that do or do not converge).
* ``lowest``: y(series) / min(y(others)) at ``at`` (worst over x for "all"); holds iff ≤ max
  (default 1: strictly the lowest or tied).
* ``growth``: y(series) at the largest x / y(series) at the smallest x (e.g. "rises ≥ 2× from the
  lowest to the highest load"); holds iff min ≤ measured ≤ max.
* ``range``: max / min of y(series) over x ("varies ≤ 1.5× across loads"); holds iff
  min ≤ measured ≤ max.
"""

from __future__ import annotations

import math
from typing import Dict, List

import numpy as np

from .spec import Claim


def _y(table: Dict[str, Dict[float, float]], series: str, x) -> float:
    return table.get(series, {}).get(x, math.nan)


def _xs(table, series: str, others: List[str]) -> List:
    xs = sorted(table.get(series, {}))
    return [x for x in xs if all(x in table.get(o, {}) for o in others)]


def _worst(vals: List[float], c: Claim) -> float:
    """The value that decides a bound check over several values (per other series, per x): with
    both ``min`` and ``max``, the lowest if it is below ``min``, else the highest; with only
    ``min``, the lowest; otherwise the highest."""
    if c.min is not None and c.max is not None:
        return min(vals) if min(vals) < c.min else max(vals)
    return min(vals) if (c.max is None and c.min is not None) else max(vals)


def _ratio_at(table, c: Claim, x) -> float:
    y = _y(table, c.series, x)
    ys = [_y(table, o, x) for o in c.others]
    if c.combine == "mean":
        return y / float(np.mean(ys))
    rs = [y / v if v else math.inf for v in ys]
    if c.combine == "min":
        return y / min(ys)
    if c.combine == "max":
        return y / max(ys)
    return _worst(rs, c)


def _inversions(seq: List[float], direction: str, rel_tol: float) -> int:
    n = 0
    for a, b in zip(seq, seq[1:]):
        if any(math.isnan(v) for v in (a, b)):
            continue
        tol = rel_tol * max(abs(a), abs(b))
        if direction in ("increasing", "nondecreasing") and b < a - tol:
            n += 1
        elif direction in ("decreasing", "nonincreasing") and b > a + tol:
            n += 1
        elif direction == "increasing" and b <= a and tol == 0:
            n += 1
        elif direction == "decreasing" and b >= a and tol == 0:
            n += 1
    return n


def evaluate(c: Claim, table: Dict[str, Dict[float, float]]) -> dict:
    """``table[series][x]`` = the claim's panel metric (mean over seeds)."""
    measured = math.nan
    try:
        if c.rule in ("ratio", "lowest", "within", "diff", "value", "spread"):
            xs = _xs(table, c.series, c.others)
            if c.at not in ("all", "mean", "any", None):
                xs = [x for x in xs if math.isclose(float(x), float(c.at), rel_tol=1e-9)]
            if c.rule == "ratio":
                vals = [_ratio_at(table, c, x) for x in xs]
            elif c.rule == "lowest":
                vals = [_y(table, c.series, x) / min(_y(table, o, x) for o in c.others) for x in xs]
            elif c.rule == "spread":
                vals = [max(v) / min(v) for v in ([_y(table, n, x) for n in [c.series, *c.others]] for x in xs)]
            elif c.rule == "within":
                vals = [max(abs(_y(table, c.series, x) / _y(table, o, x) - 1) for o in c.others) for x in xs]
            elif c.rule == "diff":
                vals = [max(abs(_y(table, c.series, x) - _y(table, o, x)) for o in c.others) for x in xs]
            else:
                vals = [_y(table, c.series, x) for x in xs]
            if vals:
                if c.at == "mean":
                    measured = float(np.mean(vals))
                elif c.at == "any":
                    measured = float(max(vals)) if c.max is None and c.min is not None else float(min(vals))
                else:
                    measured = float(_worst(vals, c))
        elif c.rule in ("growth", "range"):
            ys = [(x, _y(table, c.series, x)) for x in sorted(table.get(c.series, {}))]
            ys = [(x, v) for x, v in ys if not math.isnan(v)]
            if len(ys) >= 2:
                vals = [v for _, v in ys]
                measured = vals[-1] / vals[0] if c.rule == "growth" else max(vals) / min(vals)
        elif c.rule in ("monotone", "ratio_trend"):
            xs = _xs(table, c.series, c.others)
            if c.rule == "monotone":
                seq = [_y(table, c.series, x) for x in xs]
            else:
                seq = [_y(table, c.series, x) / float(np.mean([_y(table, o, x) for o in c.others])) for x in xs]
            measured = float(_inversions(seq, c.direction, c.rel_tol)) if len(seq) >= 2 else math.nan
        elif c.rule == "ordered":
            xs = _xs(table, c.series, c.others)
            names = [c.series, *c.others]
            measured = float(sum(_inversions([_y(table, n, x) for n in names], c.direction, c.rel_tol) > 0 for x in xs)) if xs else math.nan
    except (ZeroDivisionError, ValueError):
        measured = math.nan
    if c.rule == "ordered":
        ok = not math.isnan(measured) and measured <= c.inversions
        rule = f"{' → '.join([c.series, *c.others])} {c.direction} at every x; x values violating it ≤ {c.inversions}"
    elif c.rule in ("monotone", "ratio_trend"):
        ok = not math.isnan(measured) and measured <= c.inversions
        rule = f"{c.direction} in x, ≤ {c.inversions} inversion(s)" + (f" (steps within {c.rel_tol:.0%} ignored)" if c.rel_tol else "")
    else:
        lo = -math.inf if c.min is None else c.min
        hi = (1.0 if c.rule == "lowest" else math.inf) if c.max is None else c.max
        ok = not math.isnan(measured) and lo <= measured <= hi
        rule = _describe(c, lo, hi)
    return dict(id=c.id, panel=c.panel, text=c.text, paper_value=c.paper_value, measured=measured, rule=rule,
                holds=bool(ok), why=c.why)


def evaluate_points(c: Claim, ft, metric: str) -> dict:
    """:func:`evaluate` on figure points ``ft`` (a points.parquet frame of one figure), on the mean
    over seeds of ``metric``; with more than one seed in ``ft``, the same rule also on each seed's
    points alone, added as ``seeds_total``, ``seeds_holding`` (how many seeds it holds in) and
    ``measured_by_seed`` ({seed as a string: measured}, seeds ascending). With one seed the result
    is exactly :func:`evaluate`'s."""
    from .report import series_table

    r = evaluate(c, series_table(ft, metric))
    seeds = sorted({int(s) for s in ft["seed"]}) if "seed" in getattr(ft, "columns", ()) else []
    if len(seeds) > 1:
        per = {s: evaluate(c, series_table(ft[ft["seed"] == s], metric)) for s in seeds}
        r["seeds_total"] = len(seeds)
        r["seeds_holding"] = sum(p["holds"] for p in per.values())
        r["measured_by_seed"] = {str(s): p["measured"] for s, p in per.items()}
    return r


def _describe(c: Claim, lo: float, hi: float) -> str:
    what = {
        "ratio": f"{c.series} / {('mean' if c.combine == 'mean' else c.combine)}({', '.join(c.others)})",
        "lowest": f"{c.series} / min({', '.join(c.others)})",
        "within": f"|{c.series} / each({', '.join(c.others)}) − 1|",
        "diff": f"|{c.series} − each({', '.join(c.others)})|",
        "value": c.series,
        "spread": f"max/min over ({', '.join([c.series, *c.others])})",
        "growth": f"{c.series} at the largest x / at the smallest x",
        "range": f"max/min of {c.series} over x",
    }[c.rule]
    if c.rule in ("growth", "range"):
        bounds = " and ".join(b for b in ([f"≥ {lo:g}"] if lo > -math.inf else []) + ([f"≤ {hi:g}"] if hi < math.inf else []))
        return f"{what} {bounds}".strip()
    at = {"all": "at every x (worst)", "mean": "mean over x", "any": "at some x (best)", None: "at every x"}.get(c.at, f"at x = {c.at}")
    bounds = " and ".join(b for b in ([f"≥ {lo:g}"] if lo > -math.inf else []) + ([f"≤ {hi:g}"] if hi < math.inf else []))
    return f"{what} {at} {bounds}".strip()

"""Reproduce the evaluation figures of the five papers, with their claims checked.

>>> from sharebuf import repro
>>> repro.list_figures()                       # id -> FigureSpec
>>> repro.reproduce(["abm-fig7"], out="figs", scale="quick")

Each figure is one declarative spec (``repro/figures/<id>.toml``, see :mod:`.spec`). Packet
simulations run content-addressed (:func:`sharebuf.executor.run_many`) under ``DIR/runs/run-<hash>/``.
``DIR/points.parquet`` holds one row per run (figure, series, x, seed, metrics, wall time;
``pooled`` false) and one per point (``pooled`` true, ``seed`` null, ``seeds`` runs): tails and
timeout fractions on the flows of all seeds pooled, other metrics averaged (:mod:`.samples`).
``DIR/<id>.png|pdf`` is the figure laid out like the paper's (pooled lines, a band for the seed
spread); ``DIR/claims.json|md`` every claim with the paper's value, the measured value with its
95% interval, the verdict — holds, fails or inconclusive (:mod:`.verdict`) —, each seed alone,
what it rests on, and the authors' simulator where a side-by-side run exists (:mod:`.ns3dc`).
"""

from __future__ import annotations

import json
import math
import os
import tempfile
import time
from pathlib import Path
from typing import Dict, List, Optional, Sequence

from ..errors import ScenarioError
from .spec import SCALES, FigureSpec, load_specs

__all__ = ["list_figures", "reproduce", "estimate_cpu_s", "point_rows", "SCALES"]


#: The ABM paper's text topology (ABM.md §4.1), for ``topology = "paper"``.
PAPER_TOPOLOGY = {"topology.leaves": 8, "topology.spines": 8, "topology.links_per_leaf_spine": 1}
TOPOLOGIES = ("code", "paper")


def list_figures() -> Dict[str, FigureSpec]:
    return load_specs()


def _select(ids: Sequence[str]) -> List[FigureSpec]:
    specs = load_specs()
    if not ids or list(ids) == ["all"]:
        return list(specs.values())
    out = []
    for i in ids:
        if i not in specs:
            raise ScenarioError(f"repro: figure id '{i}' is not known; `sharebuf repro list` lists {len(specs)}: {', '.join(specs)}")
        out.append(specs[i])
    return out


#: Wall seconds per simulated second of arrivals on one core, measured on the ABM evaluation
#: setup (abm-eval, Cubic, 40% load): used only for the CPU-time estimate printed before a run.
_WALL_PER_ARRIVAL_S = 8.0


def estimate_cpu_s(specs: Sequence[FigureSpec], scale: str, seeds: Optional[List[int]] = None) -> float:
    total = 0.0
    for s in specs:
        if not s.simulated:
            continue
        sc = s.scale(scale)
        arr = sc.set.get("arrivals_until_ms", s.scenario.set.get("arrivals_until_ms", 500)) / 1e3
        n = s.n_runs(scale) if seeds is None else s.n_runs(scale) // max(1, len(sc.seeds)) * len(seeds)
        total += n * arr * _WALL_PER_ARRIVAL_S
    return total


def _atomic_write(path: Path, write) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    os.close(fd)
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def reproduce(ids: Sequence[str], out, *, scale: str = "quick", seeds: Optional[List[int]] = None,
              jobs: Optional[int] = None, use_ray: bool = False, ray_address: Optional[str] = None,
              overrides: Optional[dict] = None, topology: str = "code", progress: bool = False, log=print) -> dict:
    """Reproduce figures ``ids`` into ``out``; returns {figure id: [claim results]}.

    ``topology``: for the ABM-family figures (base scenario ``abm-eval``), ``"code"`` is the
    topology that produced the published numbers (the ABM code's 2 leaves x 32 servers, 2 spines
    x 4 links) and ``"paper"`` the one the ABM paper's text describes (8 leaves x 32 servers,
    8 spines, one link each: the same 4:1 oversubscription and 9.6 KB per port per Gbps)."""
    import pandas as pd

    from . import analytic, report, verdict
    from ..executor import run_key, run_many
    from .metrics import validate_metric
    from .spec import points

    if scale not in SCALES:
        raise ScenarioError(f"--scale {scale!r}: allowed: {', '.join(SCALES)}")
    if topology not in TOPOLOGIES:
        raise ScenarioError(f"--topology {topology!r}: allowed: {', '.join(TOPOLOGIES)}")
    specs = _select(ids)
    for s in specs:
        for p in s.panels:
            if s.simulated and (why := validate_metric(p.metric)):
                raise ScenarioError(f"figure {s.id} panel {p.id}: metric '{p.metric}' unknown; allowed: {why}")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    runs_dir = out / "runs"
    # Plan every run of every figure first (validates them all before anything runs).
    plan = {}
    for s in specs:
        if s.simulated:
            extra = dict(PAPER_TOPOLOGY) if topology == "paper" and s.scenario.base == "abm-eval" else {}
            pts = points(s, scale, seeds, {**extra, **(overrides or {})})
            plan[s.id] = [(series, x, seed, sc, run_key(sc)) for series, x, seed, sc in pts]
    jobs_list = [(key, sc) for rows in plan.values() for (_, _, _, sc, key) in rows]
    unique = {k for k, _ in jobs_list}
    todo = [k for k in unique if not (runs_dir / f"run-{k}" / "summary.json").is_file()]
    if jobs_list:
        log(f"{len(unique)} runs ({len(unique) - len(todo)} already done), scale {scale}; "
            f"estimated CPU time {estimate_cpu_s(specs, scale, seeds) / 60:.1f} min")
    run_many(jobs_list, runs_dir, jobs=jobs, use_ray=use_ray, ray_address=ray_address, progress=progress, label="repro")
    rows = []
    results = {}
    for s in specs:
        t0 = time.perf_counter()
        if s.simulated:
            keep: dict = {}
            wanted = [p.metric for p in s.panels]
            seed_rows = point_rows(s, scale, plan[s.id], runs_dir, wanted + [m for w in wanted for m in _evidence_metrics(w)], keep=keep)
            prows = pooled_rows(seed_rows, keep)
            frows = seed_rows + prows
            results[s.id] = judge_claims(s, seed_rows, prows, keep)
            del keep
        else:
            frows = [dict(figure=s.id, seed=0, pooled=False, run="", wall_s=time.perf_counter() - t0, **r)
                     for r in analytic.generate(s)]
            ft = pd.DataFrame(frows)
            results[s.id] = [verdict.judge_fixed(c, report.series_table(ft, _metric(s, c))) for c in s.claims]
        rows += frows
    table = pd.DataFrame(rows)
    if "seed" in table:
        table["seed"] = table["seed"].astype("Int64")
    pfile = out / "points.parquet"
    if pfile.exists():
        old = pd.read_parquet(pfile)
        old = old[~old.figure.isin([s.id for s in specs])]
        table = pd.concat([old, table], ignore_index=True)
    _atomic_write(pfile, lambda tmp: table.to_parquet(tmp, index=False))
    for s in specs:
        report.draw(s, table[table.figure == s.id], out)
    cfile = out / "claims.json"
    allc = json.loads(cfile.read_text()) if cfile.exists() else {}
    for s in specs:
        allc[s.id] = dict(scale=scale, seeds=(seeds or s.scale(scale).seeds) if s.simulated else [], claims=results[s.id])
    _atomic_write(cfile, lambda tmp: Path(tmp).write_text(json.dumps(_clean(allc), indent=2) + "\n"))
    _atomic_write(out / "claims.md", lambda tmp: Path(tmp).write_text(report.claims_md(allc, load_specs())))
    return results


def _metric(s: FigureSpec, c) -> str:
    return next(p for p in s.panels if p.id == c.panel).metric


def point_rows(s: FigureSpec, scale: str, planned, runs_dir: Path, wanted: Sequence[str], keep: Optional[dict] = None) -> List[dict]:
    """One row per (run, reported x) of figure ``s``: ``planned`` is a list of (series, x, seed,
    scenario dict, run key) whose runs are complete under ``runs_dir``; a ``constant`` series'
    run is reported at every x of the scale. Columns: figure, series, x, seed, pooled (False),
    run, wall_s, cpu_s (the run's CPU seconds; its wall time for runs that predate the record) and the metrics ``wanted`` (plus :data:`.metrics.STANDARD`). With ``keep`` (a
    dict), each run's flows behind the pooled metrics go in ``keep[(series, x, seed)]``."""
    from .metrics import STANDARD, incast_workloads, load_run

    rows = []
    for series, x, seed, sc, key in planned:
        rd = Path(runs_dir) / f"run-{key}"
        m, rf = load_run(rd, wanted, incast_workloads(sc), sc)
        if keep is not None:
            rf.slim([*STANDARD, *wanted])
        summ = json.loads((rd / "summary.json").read_text())
        wall, cpu = summ["wall_s"], summ.get("cpu_s", summ["wall_s"])
        sr = next(q for q in s.series if q.name == series)
        for xr in (s.scale(scale).x_values or s.x.values) if sr.constant else [x]:
            rows.append(dict(figure=s.id, series=series, x=float(xr), seed=seed, pooled=False, run=key, wall_s=wall, cpu_s=cpu, **m))
            if keep is not None:
                keep[(series, float(xr), int(seed))] = rf
    return rows


def _by_point(seed_rows: List[dict], keep: dict, metric: str) -> dict:
    """{(series, x): {seed: RunFlows}} for a pooled metric, {(series, x): {seed: value}} otherwise."""
    from .samples import pooled

    pts: dict = {}
    for r in seed_rows:
        k = (r["series"], r["x"])
        pts.setdefault(k, {})[int(r["seed"])] = keep[(r["series"], r["x"], int(r["seed"]))] if pooled(metric) else r.get(metric, math.nan)
    return pts


def pooled_rows(seed_rows: List[dict], keep: dict) -> List[dict]:
    """One row per (series, x): the flow metrics on the flows of all seeds pooled, the others
    averaged over seeds; ``seed`` is null, ``pooled`` True, ``seeds`` counts the runs."""
    from .samples import pooled_value

    if not seed_rows:
        return []
    metrics = [k for k in seed_rows[0] if k not in ("figure", "series", "x", "seed", "pooled", "run", "wall_s", "cpu_s")]
    out: dict = {}
    for r in seed_rows:
        row = out.setdefault((r["series"], r["x"]), dict(figure=r["figure"], series=r["series"], x=r["x"], seed=None, pooled=True,
                                                         run="", wall_s=0.0, cpu_s=0.0, seeds=0))
        row["wall_s"] += r["wall_s"]
        row["cpu_s"] += r.get("cpu_s", r["wall_s"])
        row["seeds"] += 1
    for m in metrics:
        for k, runs in _by_point(seed_rows, keep, m).items():
            out[k][m] = pooled_value(runs, m)
    return list(out.values())


def judge_claims(s: FigureSpec, seed_rows: List[dict], prows: List[dict], keep: dict) -> List[dict]:
    """Every claim of a packet figure: measured on the pooled points, its interval and verdict
    (:mod:`.verdict`), each seed alone, what it rests on, and the authors' simulator where a
    side-by-side run exists."""
    import pandas as pd

    from . import claims as claims_mod, ns3dc, verdict

    ft = pd.DataFrame(seed_rows)
    prow = pd.DataFrame(prows)
    npts, missing = ns3dc.points(s)
    xs = sorted({float(x) for x in ft.x})
    res = []
    for c in s.claims:
        metric = _metric(s, c)
        r = verdict.judge(c, _by_point(seed_rows, keep, metric), metric, key=f"{s.id}|{c.id}")
        # each seed alone: claims.evaluate_points' per-seed verdicts
        r.update({k: v for k, v in claims_mod.evaluate_points(c, ft, metric).items()
                  if k in ("seeds_total", "seeds_holding", "measured_by_seed")})
        r["evidence"] = verdict.evidence(c, metric, prow)
        if s.ns3dc is not None:
            r["ns3dc"] = _ns3dc_claim(s, c, metric, npts, missing, xs)
            if r["ns3dc"].get("verdict"):
                r["verdict_vs_ns3dc"] = verdict.combined(r["verdict"], r["ns3dc"]["verdict"])
        res.append(r)
    return res


def _ns3dc_claim(s: FigureSpec, c, metric: str, npts: dict, missing: List[str], xs: List[float]) -> dict:
    """The claim on ns3dc's runs (its other series limited to those ns3dc ran)."""
    import pandas as pd

    from . import ns3dc, verdict
    from .samples import pooled, pooled_value

    if not pooled(metric):
        # fct files hold flows only: a run-level metric (occupancy, drops, throughput) is not in them
        return dict(covered=False, missing=[], not_in_fct=True)
    ok, others = ns3dc.covered(c, npts, xs)
    if not ok:
        return dict(covered=False, missing=missing)
    cc = c.model_copy(update=dict(others=others))
    pts = {k: v for k, v in npts.items() if k[0] in (c.series, *others)}
    r = verdict.judge(cc, pts, metric, key=f"{s.id}|{c.id}|ns3dc")
    prow = pd.DataFrame([dict(series=k[0], x=k[1], seeds=len(v), **{m: pooled_value(v, m) for m in _evidence_metrics(metric)})
                         for k, v in pts.items()])
    return dict(covered=True, series=[c.series, *others], measured=r["measured"], interval=r["interval"],
                verdict=r["verdict"], evidence=verdict.evidence(cc, metric, prow), runs=len({i for v in pts.values() for i in v}),
                command=next((run.command for run in s.ns3dc.runs if run.command), ""), missing=missing)


def _evidence_metrics(metric: str) -> List[str]:
    from .samples import tail_class

    cls = tail_class(metric)
    if cls is None:
        return []
    if cls == "queries":
        return ["rto_pct.queries"]
    return [f"n.{cls}", f"rto_pct.{cls}"]


def _clean(o):
    """NaN/inf become null: claims.json stays strict JSON."""
    if isinstance(o, dict):
        return {k: _clean(v) for k, v in o.items()}
    if isinstance(o, list):
        return [_clean(v) for v in o]
    if isinstance(o, float) and not math.isfinite(o):
        return None
    return o

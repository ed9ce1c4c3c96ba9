"""Reproduce the evaluation figures of the five papers, with their claims checked.

>>> from sharebuf import repro
>>> repro.list_figures()                       # id -> FigureSpec
>>> repro.reproduce(["abm-fig7"], out="figs", scale="quick")

Each figure is one declarative spec (``repro/figures/<id>.toml``, see :mod:`.spec`). Packet
simulations run content-addressed (:func:`sharebuf.sweep.run_many`) under ``DIR/runs/run-<hash>/``; ``DIR/points.parquet``
holds one row per run (figure, series, x, seed, metrics, wall time), ``DIR/<id>.png|pdf`` the
figure laid out like the paper's, ``DIR/claims.json|md`` every claim with the paper's value, the
measured value, the rule and whether it holds (on the mean over seeds; with several seeds also how
many seeds it holds in alone and the value each seed measures).
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

    from . import analytic, claims as claims_mod, report
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
            rows += point_rows(s, scale, plan[s.id], runs_dir, [p.metric for p in s.panels])
        else:
            for r in analytic.generate(s):
                rows.append(dict(figure=s.id, seed=0, run="", wall_s=time.perf_counter() - t0, **r))
    table = pd.DataFrame(rows)
    pfile = out / "points.parquet"
    if pfile.exists():
        old = pd.read_parquet(pfile)
        old = old[~old.figure.isin([s.id for s in specs])]
        table = pd.concat([old, table], ignore_index=True)
    _atomic_write(pfile, lambda tmp: table.to_parquet(tmp, index=False))
    for s in specs:
        ft = table[table.figure == s.id]
        res = []
        for c in s.claims:
            panel = next(p for p in s.panels if p.id == c.panel)
            res.append(claims_mod.evaluate_points(c, ft, panel.metric))
        results[s.id] = res
        report.draw(s, ft, out)
    cfile = out / "claims.json"
    allc = json.loads(cfile.read_text()) if cfile.exists() else {}
    for s in specs:
        allc[s.id] = dict(scale=scale, seeds=seeds or s.scale(scale).seeds, claims=results[s.id])
    _atomic_write(cfile, lambda tmp: Path(tmp).write_text(json.dumps(_clean(allc), indent=2) + "\n"))
    _atomic_write(out / "claims.md", lambda tmp: Path(tmp).write_text(report.claims_md(allc, load_specs())))
    return results


def point_rows(s: FigureSpec, scale: str, planned, runs_dir: Path, wanted: Sequence[str]) -> List[dict]:
    """One row per (run, reported x) of figure ``s``: ``planned`` is a list of (series, x, seed,
    scenario dict, run key) whose runs are complete under ``runs_dir``; a ``constant`` series'
    run is reported at every x of the scale. Columns: figure, series, x, seed, run, wall_s and
    the metrics ``wanted`` (plus :func:`.metrics.run_metrics`'s standard set)."""
    from .metrics import incast_workloads, run_metrics

    rows = []
    for series, x, seed, sc, key in planned:
        rd = Path(runs_dir) / f"run-{key}"
        m = run_metrics(rd, wanted, incast_workloads(sc), sc)
        wall = json.loads((rd / "summary.json").read_text())["wall_s"]
        sr = next(q for q in s.series if q.name == series)
        for xr in (s.scale(scale).x_values or s.x.values) if sr.constant else [x]:
            rows.append(dict(figure=s.id, series=series, x=float(xr), seed=seed, run=key, wall_s=wall, **m))
    return rows


def _clean(o):
    """NaN/inf become null: claims.json stays strict JSON."""
    if isinstance(o, dict):
        return {k: _clean(v) for k, v in o.items()}
    if isinstance(o, list):
        return [_clean(v) for v in o]
    if isinstance(o, float) and not math.isfinite(o):
        return None
    return o

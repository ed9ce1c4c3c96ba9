"""Metrics of one run, as the papers define them (figures.md §6 "Common definitions").

Names are ``<family>.<stat>.<class>[.<workload>]``:

* ``slowdown.{p50,p95,p99,p999,mean}.{incast,short,long,all}[.<workload>]`` — FCT slowdown with the
  papers' ideal FCT (base RTT + size·8 / host link rate; column ``slowdown_paper`` when the run
  has it, else ``slowdown``). Classes: ``incast`` = responses of incast workloads; ``short`` =
  other flows < 100,000 B; ``long`` = other flows ≥ 1,000,000 B; ``all`` = every non-incast flow.
  A workload suffix restricts to that workload (multi-class figures). Percentiles are
  ``sorted[ceil(n·p)−1]`` as the ABM code's ``sorted[int(n·p)−1]`` up to rounding (nearest-rank).
* ``buffer.{p99,mean,max}_pct[.leaf|.all]`` — shared-buffer occupancy of the leaf switches (default)
  in % of the buffer, over the sampled time series (ABM code: leaf 0 sampled every 30 µs).
* ``throughput.long_gbps`` — mean goodput of finished long flows (size·8 / FCT).
* ``qct.{mean,p99}_ms`` — query completion time of incast queries.
* ``drops`` — packets dropped; ``unfinished`` — flows not finished by the horizon.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Dict, Iterable, Optional

import numpy as np

SHORT_BYTES = 100_000
LONG_BYTES = 1_000_000
PCTS = {"p50": 0.50, "p95": 0.95, "p99": 0.99, "p999": 0.999}


def nearest_rank(x: np.ndarray, p: float) -> float:
    """The p-quantile as ``sorted(x)[ceil(n·p) − 1]`` (NaN for no data)."""
    if len(x) == 0:
        return math.nan
    s = np.sort(x)
    return float(s[max(0, math.ceil(len(s) * p - 1e-9) - 1)])


def _stat(x: np.ndarray, stat: str) -> float:
    if stat == "mean":
        return float(x.mean()) if len(x) else math.nan
    if stat not in PCTS:
        raise KeyError(stat)
    return nearest_rank(x, PCTS[stat])


def incast_workloads(scenario: dict) -> set:
    """Names of the incast workloads of a scenario dict (their flows are the incast class)."""
    return {w.get("name") or w["kind"] for w in scenario.get("workload", []) if w.get("kind") == "incast"}


def run_metrics(run_dir: Path, wanted: Iterable[str], incast_names: set) -> Dict[str, float]:
    """Compute the metrics named in ``wanted`` (plus a standard set) for the run in ``run_dir``;
    flows of the workloads ``incast_names`` form the incast class."""
    import pyarrow.parquet as pq

    run_dir = Path(run_dir)
    summary = json.loads((run_dir / "summary.json").read_text())
    flows = pq.read_table(run_dir / "flows.parquet").to_pandas()
    col = "slowdown_paper" if "slowdown_paper" in flows.columns else "slowdown"
    fin = flows[flows.finished]
    is_inc = fin.workload.isin(incast_names)
    classes = {
        "incast": fin[is_inc],
        "short": fin[~is_inc & (fin.size_bytes < SHORT_BYTES)],
        "long": fin[~is_inc & (fin.size_bytes >= LONG_BYTES)],
        "all": fin[~is_inc],
    }
    out: Dict[str, float] = {"drops": float(summary["drops_total"]), "unfinished": float(summary["flows"]["unfinished"])}
    std = [f"slowdown.{s}.{c}" for s in ("p50", "p99") for c in ("incast", "short", "long")]
    for name in dict.fromkeys([*std, *wanted]):
        fam, _, rest = name.partition(".")
        if fam == "slowdown":
            parts = rest.split(".")
            stat, cls = parts[0], parts[1]
            df = classes[cls]
            if len(parts) > 2:
                df = df[df.workload == ".".join(parts[2:])] if cls != "incast" else fin[fin.workload == ".".join(parts[2:])]
            out[name] = _stat(df[col].to_numpy(dtype=float), stat)
        elif fam == "buffer":
            out[name] = _buffer(run_dir, summary, rest)
        elif fam == "throughput":
            lf = classes["long"]
            out[name] = float((lf.size_bytes * 8 / lf.fct_s).mean() / 1e9) if len(lf) else math.nan
        elif fam == "qct":
            q = pq.read_table(run_dir / "queries.parquet").to_pandas()
            x = q[q.finished].qct_s.to_numpy(dtype=float) * 1e3
            out[name] = _stat(x, rest.split("_")[0])
        elif name not in out:
            raise KeyError(name)
    return out


def _buffer(run_dir: Path, summary: dict, rest: str) -> float:
    import pyarrow.parquet as pq

    stat, _, where = rest.partition(".")
    where = where or "leaf"
    b = pq.read_table(run_dir / "buffer.parquet").to_pandas()
    per = summary["buffer"]["per_switch"]
    if where == "leaf":
        names = [n for n in per if n.startswith("leaf")] or list(per)
    elif where == "all":
        names = list(per)
    else:
        names = [where]
    sel = b[b.switch.isin(names)]
    if sel.empty:
        return math.nan
    pct = 100.0 * sel.occupancy_bytes.to_numpy(dtype=float) / np.array([per[s]["buffer_bytes"] for s in sel.switch])
    if stat == "p99_pct":
        return nearest_rank(pct, 0.99)
    if stat == "mean_pct":
        return float(pct.mean())
    if stat == "max_pct":
        return float(pct.max())
    raise KeyError(f"buffer.{rest}")


def validate_metric(name: str) -> Optional[str]:
    """None if ``name`` is a metric this module computes, else why not."""
    fam, _, rest = name.partition(".")
    if fam == "slowdown":
        p = rest.split(".")
        if len(p) < 2 or p[0] not in (*PCTS, "mean") or p[1] not in ("incast", "short", "long", "all"):
            return "slowdown.<p50|p95|p99|p999|mean>.<incast|short|long|all>[.<workload>]"
        return None
    if fam == "buffer":
        stat = rest.partition(".")[0]
        return None if stat in ("p99_pct", "mean_pct", "max_pct") else "buffer.<p99_pct|mean_pct|max_pct>[.leaf|.all|.<switch>]"
    if name == "throughput.long_gbps" or name in ("qct.mean_ms", "qct.p99_ms", "drops", "unfinished"):
        return None
    return "one of slowdown.*, buffer.*, throughput.long_gbps, qct.mean_ms, qct.p99_ms, drops, unfinished"

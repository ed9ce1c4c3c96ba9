"""Metrics of one run, as the papers define them (figures.md §6 "Common definitions").

Names are ``<family>.<stat>.<class>[.<workload>]``:

* ``slowdown.{p10,p50,p70,p90,p95,p99,p999,mean}.{incast,short,long,all}[.<workload>]`` — FCT slowdown with the
  papers' ideal FCT (base RTT + size·8 / host link rate; column ``slowdown_paper`` when the run
  has it, else ``slowdown``). Classes: ``incast`` = responses of incast workloads; ``short`` =
  other flows < 100,000 B; ``long`` = other flows ≥ 1,000,000 B; ``all`` = every non-incast flow.
  A workload suffix restricts to that workload (multi-class figures). Percentiles are
  ``sorted[ceil(n·p)−1]`` as the ABM code's ``sorted[int(n·p)−1]`` up to rounding (nearest-rank).
* ``buffer.{p99,mean,max}_pct[.leaf|.all]`` — shared-buffer occupancy of the leaf switches (default)
  in % of the buffer, over the sampled time series (ABM code: leaf 0 sampled every 30 µs).
* ``throughput.long_gbps`` — mean goodput of finished long flows (size·8 / FCT).
* ``throughput.uplink_pct`` — carried load in the arrival window T = ``arrivals_until_ms``: payload
  bytes the non-incast inter-leaf flows delivered before T (each flow's bytes spread evenly over
  its FCT), ×8, over (leaves × a leaf's uplink capacity × T), in % (FB's "THP (%)", which
  follows the offered load). Needs the run's scenario.
* ``qct.{mean,p99}_ms`` — query completion time of incast queries.
* ``fct.{p10,p50,p70,p90,p95,p99,p999,mean}_ms.<class>[.<workload>]`` — absolute FCT in ms, as FAB
  and FB's testbed report it; a flow unfinished at the end counts with FCT = end of the run −
  its start (FAB §3).
* ``retransmits.<class>[.<workload>]`` — segments retransmitted by the flows of a class (every
  flow, finished or not): the per-class count of data-packet losses (FAB Fig. 3b/3d "drops from
  short flows"; a spurious retransmission would count too).
* ``rto_flows.<class>[.<workload>]`` — flows of a class (every flow, finished or not) that took at
  least one retransmission timeout: an incast p99 far above queueing delay is an RTO when more
  than 1% of the incast flows took one.
* ``rto_pct.<class>[.<workload>]`` — % of a class's flows (every flow, finished or not) that
  waited out at least one retransmission timeout; ``rto_pct.queries`` — % of incast queries with
  at least one such response. Next to a p99: when ≥ 1% of the class timed out, the p99 is a
  timeout.
* ``n.<class>[.<workload>]`` — finished flows of a class: what its percentiles rest on.
* ``drops.<cause>`` — packets dropped for that cause (``bm_threshold``, ``buffer_full``, ...).
* ``queue.drain_us`` — from ``queue_occupancy.parquet`` (needs ``output.queue_sample_us``): for
  each (switch, port, queue), the time from its last sample at its peak to its first later
  empty sample; the largest over queues (ABM Fig. 3's drain time).
* ``drops`` — packets dropped; ``unfinished`` — flows not finished by the horizon.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Dict, Iterable, Optional

import numpy as np

from ..classes import LONG_MIN_BYTES as LONG_BYTES, SHORT_MAX_BYTES as SHORT_BYTES, class_masks  # one definition
from . import samples
from .samples import PCTS, RunFlows, nearest_rank  # noqa: F401  (nearest_rank: one definition, re-exported)

CLASSES = ("incast", "short", "long", "all")


def incast_workloads(scenario: dict) -> set:
    """Names of the incast workloads of a scenario dict (their flows are the incast class)."""
    return {w.get("name") or w["kind"] for w in scenario.get("workload", []) if w.get("kind") == "incast"}


def _classes(df, incast_names: set) -> Dict[str, object]:
    is_inc = df.workload.isin(incast_names).to_numpy()
    m = class_masks(df.size_bytes.to_numpy(), is_inc)
    return {**{k: df[v] for k, v in m.items()}, "all": df[~is_inc]}


def _leaf_spine(scenario: dict):
    from ..scenario.topology import LeafSpine

    t = scenario.get("topology", {})
    if t.get("kind", "leaf_spine") != "leaf_spine":
        raise KeyError("throughput.uplink_pct needs a leaf_spine topology")
    return LeafSpine(**{"kind": "leaf_spine", **t})


#: Computed for every run: the classes' median and tail, the timeouts and flows behind them.
STANDARD = [*(f"slowdown.{s}.{c}" for s in ("p50", "p99") for c in ("incast", "short", "long")),
            *(f"rto_pct.{c}" for c in ("incast", "short", "long", "queries")), *(f"n.{c}" for c in ("incast", "short", "long"))]


def run_metrics(run_dir: Path, wanted: Iterable[str], incast_names: set, scenario: Optional[dict] = None) -> Dict[str, float]:
    """Compute the metrics named in ``wanted`` (plus :data:`STANDARD`) for the run in ``run_dir``;
    flows of the workloads ``incast_names`` form the incast class; ``scenario`` (the run's
    scenario dict) is needed by ``throughput.uplink_pct``."""
    return load_run(run_dir, wanted, incast_names, scenario)[0]


def load_run(run_dir: Path, wanted: Iterable[str], incast_names: set, scenario: Optional[dict] = None):
    """(:func:`run_metrics`' dict, the run's :class:`.samples.RunFlows` for pooling)."""
    import pyarrow.parquet as pq

    run_dir = Path(run_dir)
    summary = json.loads((run_dir / "summary.json").read_text())
    flows = pq.read_table(run_dir / "flows.parquet").to_pandas()
    col = "slowdown_paper" if "slowdown_paper" in flows.columns else "slowdown"
    fin = flows[flows.finished]
    classes = _classes(fin, incast_names)
    out: Dict[str, float] = {"drops": float(summary["drops_total"]), "unfinished": float(summary["flows"]["unfinished"])}
    for cause, k in (summary.get("drops") or {}).items():
        out[f"drops.{cause}"] = float(k)
    queries = None
    if (run_dir / "queries.parquet").is_file():
        queries = pq.read_table(run_dir / "queries.parquet").to_pandas()
    rf = RunFlows(flows, queries, incast_names, float(summary["sim_s"]), col)
    for name in dict.fromkeys([*STANDARD, *wanted]):
        fam, _, rest = name.partition(".")
        if samples.pooled(name):
            out[name] = rf.sample(name).value()
        elif fam in ("retransmits", "rto_flows"):
            m = rf.mask(rest.split("."))  # every flow of the class, finished or not
            col_v = flows.retransmits.to_numpy() if fam == "retransmits" else (flows.timeouts.to_numpy() > 0)
            out[name] = float(col_v[m].sum())
        elif name == "throughput.uplink_pct":
            if scenario is None:
                raise KeyError(f"{name} needs the run's scenario")
            topo = _leaf_spine(scenario)
            df = _classes(flows, incast_names)["all"]
            inter = df[(df.src // topo.servers_per_leaf) != (df.dst // topo.servers_per_leaf)]
            window_s = float(scenario.get("arrivals_until_ms") or scenario.get("max_ms")) / 1e3
            uplink_gbps = topo.spines * topo.links_per_leaf_spine * topo.fabric_gbps()
            cap = topo.leaves * uplink_gbps * 1e9 * window_s
            # bytes each flow delivered inside the window, its delivery spread evenly over its FCT
            fct = inter.fct_s.where(inter.finished, float(summary["sim_s"]) - inter.start_s).to_numpy(dtype=float)
            frac = np.clip((window_s - inter.start_s.to_numpy(dtype=float)) / np.maximum(fct, 1e-12), 0.0, 1.0)
            out[name] = 100.0 * float((inter.received_bytes.to_numpy(dtype=float) * frac).sum()) * 8 / cap
        elif name == "queue.drain_us":
            out[name] = _drain_us(run_dir)
        elif fam == "buffer":
            out[name] = _buffer(run_dir, summary, rest)
        elif name == "throughput.long_gbps":
            lf = classes["long"]
            out[name] = float((lf.size_bytes * 8 / lf.fct_s).mean() / 1e9) if len(lf) else math.nan
        elif name not in out:
            raise KeyError(name)
    return out, rf


def _drain_us(run_dir: Path) -> float:
    import pyarrow.parquet as pq

    f = run_dir / "queue_occupancy.parquet"
    if not f.is_file():
        raise KeyError("queue.drain_us needs queue samples: set output.queue_sample_us > 0")
    q = pq.read_table(f).to_pandas().sort_values("time_s", kind="stable")
    best = math.nan
    for _, g in q.groupby(["switch", "port", "queue"]):
        b = g.bytes.to_numpy(dtype=float)
        t = g.time_s.to_numpy(dtype=float)
        if b.max() <= 0:
            continue
        i = len(b) - 1 - int(np.argmax(b[::-1]))  # last sample at the peak
        empty = np.flatnonzero(b[i:] == 0)
        if len(empty):
            d = (t[i + empty[0]] - t[i]) * 1e6
            best = d if math.isnan(best) else max(best, d)
    return best


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
    stats = "|".join([*PCTS, "mean"])
    if fam == "slowdown":
        p = rest.split(".")
        if len(p) < 2 or p[0] not in (*PCTS, "mean") or p[1] not in CLASSES:
            return f"slowdown.<{stats}>.<incast|short|long|all>[.<workload>]"
        return None
    if fam == "fct":
        p = rest.split(".")
        if len(p) < 2 or not p[0].endswith("_ms") or p[0][:-3] not in (*PCTS, "mean") or p[1] not in CLASSES:
            return f"fct.<{stats}>_ms.<incast|short|long|all>[.<workload>]"
        return None
    if fam in ("retransmits", "rto_flows", "n"):
        return None if rest.split(".")[0] in CLASSES else f"{fam}.<incast|short|long|all>[.<workload>]"
    if fam == "rto_pct":
        return None if rest == "queries" or rest.split(".")[0] in CLASSES else "rto_pct.<incast|short|long|all|queries>[.<workload>]"
    if fam == "drops" and rest:
        return None
    if fam == "buffer":
        stat = rest.partition(".")[0]
        return None if stat in ("p99_pct", "mean_pct", "max_pct") else "buffer.<p99_pct|mean_pct|max_pct>[.leaf|.all|.<switch>]"
    if name in ("throughput.long_gbps", "throughput.uplink_pct", "queue.drain_us", "qct.mean_ms", "qct.p99_ms", "drops", "unfinished"):
        return None
    return ("one of slowdown.*, fct.*, retransmits.*, rto_flows.*, rto_pct.*, n.*, drops.<cause>, buffer.*, throughput.long_gbps, throughput.uplink_pct, "
            "queue.drain_us, qct.mean_ms, qct.p99_ms, drops, unfinished")

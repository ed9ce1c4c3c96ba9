"""The flows behind a figure's tail metrics: pooled over seeds, and resampled for an interval.

A tail such as an incast p99 rests on the few flows above it, and whether ~1% of the responses
wait out a retransmission timeout decides it: one seed's p99 says little. So every metric that a
set of flows (or queries) defines — ``slowdown.*``, ``fct.*``, ``qct.*``, ``rto_pct.*`` and the
count ``n.*`` — is computed on the flows of all seeds of a point pooled together, and per seed for
the spread. Every other metric (drops, buffer occupancy, throughput, ...) is one number per run;
its pooled value is the mean over seeds.

:func:`resampled_tables` is the two-level bootstrap behind a claim's interval
(:mod:`.verdict`): seeds are drawn with replacement — the same draw for every series and x of the
figure, so schemes are compared on the same workload draws, as the runs are — and within each
drawn run its flows are drawn with replacement; an incast response is drawn with its query (the
responses of one query time out together), every other flow alone. The resample's value is the
metric on the pooled draw, and the claim's rule on the resampled figure gives one draw of its
measured value. The random numbers are fixed by the figure, so a render is deterministic.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass, field
from typing import Dict, Hashable, List, Optional, Sequence, Tuple

import numpy as np

from ..classes import class_masks

PCTS = {"p10": 0.10, "p50": 0.50, "p70": 0.70, "p90": 0.90, "p95": 0.95, "p99": 0.99, "p999": 0.999}
#: Metric families computed on pooled flows (or queries); the rest are one number per run.
POOLED_FAMILIES = ("slowdown", "fct", "qct", "rto_pct", "n")
#: Resamples per claim interval, and the interval's coverage.
B_DEFAULT = 200
COVERAGE = 0.95


def nearest_rank(x: np.ndarray, p: float) -> float:
    """The p-quantile as ``sorted(x)[ceil(n·p) − 1]`` (NaN for no data)."""
    if len(x) == 0:
        return math.nan
    k = max(0, math.ceil(len(x) * p - 1e-9) - 1)
    return float(np.partition(np.asarray(x, dtype=float), k)[k])


def pooled(name: str) -> bool:
    """True for a metric computed on pooled flows (or queries)."""
    return name.partition(".")[0] in POOLED_FAMILIES


@dataclass
class Sample:
    """The values a pooled metric is computed on for one run, with the cluster (query) of each."""

    values: np.ndarray
    stat: str  # a PCTS key, "mean", "pct" (100 × mean of 0/1 values) or "count"
    clusters: Optional[np.ndarray] = None
    _groups: Optional[Tuple[np.ndarray, np.ndarray, np.ndarray]] = field(default=None, repr=False)

    def value(self) -> float:
        return stat(self.values, self.stat)

    def resample(self, rng: np.random.Generator) -> np.ndarray:
        n = len(self.values)
        if n == 0:
            return self.values
        if self.clusters is None:
            return self.values[rng.integers(0, n, n)]
        if self._groups is None:
            order = np.argsort(self.clusters, kind="stable")
            _, starts, counts = np.unique(self.clusters[order], return_index=True, return_counts=True)
            self._groups = (self.values[order], starts, counts)
        vals, starts, counts = self._groups
        pick = rng.integers(0, len(starts), len(starts))
        lens = counts[pick]
        offs = np.repeat(starts[pick] - (np.cumsum(lens) - lens), lens) + np.arange(int(lens.sum()))
        return vals[offs]


def stat(x: np.ndarray, how: str) -> float:
    if how == "count":
        return float(len(x))
    if len(x) == 0:
        return math.nan
    if how == "mean":
        return float(np.mean(x))
    if how == "pct":
        return 100.0 * float(np.mean(x))
    return nearest_rank(x, PCTS[how])


class RunFlows:
    """The flows (and queries) of one run, by class, for the pooled metrics.

    ``flows``: a frame with ``size_bytes``, ``workload``, ``finished``, ``timeouts``, ``fct_s``,
    ``start_s``, ``query_id`` (-1 or NaN outside incast) and the slowdown column ``slowdown_col``;
    ``queries``: ``qct_s`` and ``finished`` per query, or None; ``end_s``: the run's end (an
    unfinished flow's FCT counts up to it)."""

    def __init__(self, flows, queries, incast_names: set, end_s: float, slowdown_col: str = "slowdown"):
        self.flows = flows
        self.queries = queries
        self.incast_names = set(incast_names)
        self.end_s = float(end_s)
        self.col = slowdown_col
        self._cache: Dict[str, Sample] = {}
        is_inc = flows.workload.isin(self.incast_names).to_numpy()
        m = class_masks(flows.size_bytes.to_numpy(), is_inc)
        self._masks = {**m, "all": ~is_inc}
        self._fin = flows.finished.to_numpy(dtype=bool)
        q = flows.query_id.to_numpy(dtype=float) if "query_id" in flows.columns else np.full(len(flows), np.nan)
        self._query = np.where(np.isfinite(q) & (q >= 0), q, -1).astype(np.int64)

    def mask(self, parts: Sequence[str]) -> np.ndarray:
        """Flows (finished or not) of class ``parts[0]``, of workload ``parts[1:]`` if given."""
        cls = parts[0]
        if cls not in self._masks:
            raise KeyError(cls)
        m = self._masks[cls]
        if len(parts) > 1:
            wl = ".".join(parts[1:])
            w = (self.flows.workload == wl).to_numpy()
            m = w if cls == "incast" else (m & w)
        return m

    def _clusters(self, m: np.ndarray, parts: Sequence[str]) -> Optional[np.ndarray]:
        if parts[0] != "incast":
            return None
        q = self._query[m]
        # a flow without a query id is a cluster of its own
        own = np.arange(len(q)) + (int(q.max()) + 1 if len(q) else 0)
        return np.where(q >= 0, q, own)

    def slim(self, keep: Sequence[str]) -> "RunFlows":
        """Keep only the samples of the pooled metrics ``keep`` (computing them now) and let the
        flows go: a figure's runs are held in memory until its claims are judged."""
        for name in keep:
            if pooled(name):
                self.sample(name)
        self.flows = self.queries = None
        self._masks = self._fin = self._query = None
        return self

    def sample(self, name: str) -> Sample:
        """The sample behind pooled metric ``name`` (see :func:`pooled`)."""
        if name in self._cache:
            return self._cache[name]
        fam, _, rest = name.partition(".")
        parts = rest.split(".")
        if fam == "slowdown":
            m = self.mask(parts[1:]) & self._fin
            s = Sample(self.flows[self.col].to_numpy(dtype=float)[m], parts[0], self._clusters(m, parts[1:]))
        elif fam == "n":
            m = self.mask(parts) & self._fin
            s = Sample(np.zeros(int(m.sum())), "count")
        elif fam == "fct":
            m = self.mask(parts[1:])
            fct = np.where(self._fin, self.flows.fct_s.to_numpy(dtype=float),
                           self.end_s - self.flows.start_s.to_numpy(dtype=float))
            s = Sample(fct[m] * 1e3, parts[0].rsplit("_", 1)[0], self._clusters(m, parts[1:]))
        elif fam == "rto_pct" and "timeouts" not in self.flows.columns:
            s = Sample(np.zeros(0), "pct")  # no timeouts recorded: unknown, not zero
        elif fam == "rto_pct":
            if parts == ["queries"]:
                inc = self._masks["incast"]
                q = self._query[inc]
                to = self.flows.timeouts.to_numpy()[inc] > 0
                ids, inv = np.unique(q[q >= 0], return_inverse=True)
                hit = np.zeros(len(ids), dtype=float)
                np.maximum.at(hit, inv, to[q >= 0].astype(float))
                s = Sample(hit, "pct")
            else:
                m = self.mask(parts)
                s = Sample((self.flows.timeouts.to_numpy()[m] > 0).astype(float), "pct", self._clusters(m, parts))
        elif fam == "qct":
            if self.queries is None:
                s = Sample(np.zeros(0), "mean")
            else:
                q = self.queries[self.queries.finished]
                s = Sample(q.qct_s.to_numpy(dtype=float) * 1e3, rest.split("_")[0])
        else:
            raise KeyError(name)
        self._cache[name] = s
        return s


def tail_class(metric: str) -> Optional[str]:
    """The flow class (with its workload) a flow metric is about: ``slowdown.p99.short.cubic`` ->
    ``short.cubic``; ``qct.*`` -> ``queries``; None for run-level metrics."""
    fam, _, rest = metric.partition(".")
    if fam in ("slowdown", "fct"):
        return ".".join(rest.split(".")[1:])
    if fam in ("rto_pct", "n", "retransmits", "rto_flows"):
        return rest
    if fam == "qct":
        return "queries"
    return None


Point = Tuple[str, float]  # (series, x)


def pooled_value(runs: Dict[int, object], metric: str) -> float:
    """``metric`` over the runs of one point ({seed: RunFlows for pooled metrics, else float})."""
    if pooled(metric):
        samples = [r.sample(metric) for r in runs.values() if r is not None]
        if not samples:
            return math.nan
        return stat(np.concatenate([s.values for s in samples]), samples[0].stat)
    vals = np.array([v for v in runs.values() if v is not None and not math.isnan(v)], dtype=float)
    return float(vals.mean()) if len(vals) else math.nan


def resampled_tables(points: Dict[Point, Dict[int, object]], metric: str, B: int = B_DEFAULT,
                     key: Hashable = "", x_values: Optional[Sequence[float]] = None) -> List[Dict[str, Dict[float, float]]]:
    """B bootstrap draws of the figure's table {series: {x: metric}} (see the module doc).

    ``points``: {(series, x): {seed: RunFlows}} for a pooled metric, {(series, x): {seed: value}}
    for a run-level one. ``key`` (e.g. the figure id) fixes the random numbers; ``x_values``
    (default: the x of ``points``) numbers the x the flow draws are keyed by, so a subset of a
    figure's points given its figure's x values is drawn exactly as within the figure."""
    seeds = sorted({s for runs in points.values() for s in runs})
    tables: List[Dict[str, Dict[float, float]]] = [dict() for _ in range(B)]
    if not seeds:
        return tables
    base = zlib.crc32(f"{key}|{metric}".encode())
    draws = np.random.default_rng([base, len(seeds)]).integers(0, len(seeds), size=(B, len(seeds)))
    xs = {float(x): i for i, x in enumerate(sorted({float(v) for v in (x_values if x_values is not None else [x for _, x in points])}))}
    is_pooled = pooled(metric)
    for (series, x), runs in points.items():
        row = [math.nan] * B
        if is_pooled:
            samples = {s: r.sample(metric) for s, r in runs.items() if r is not None}
            how = next(iter(samples.values())).stat if samples else "mean"
            for b in range(B):
                parts = []
                for j, si in enumerate(draws[b]):
                    smp = samples.get(seeds[si])
                    if smp is None:
                        continue
                    # the same generator for every series at this (draw, x): paired resamples
                    parts.append(smp.resample(np.random.default_rng([base, b, j, xs[float(x)]])))
                row[b] = stat(np.concatenate(parts), how) if parts else math.nan
        else:
            vals = np.array([math.nan if runs.get(s) is None else runs[s] for s in seeds], dtype=float)
            for b in range(B):
                v = vals[draws[b]]
                v = v[~np.isnan(v)]
                row[b] = float(v.mean()) if len(v) else math.nan
        for b in range(B):
            tables[b].setdefault(series, {})[float(x)] = row[b]
    return tables

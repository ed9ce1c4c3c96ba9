"""Tune scenario parameters by simulation: ``sharebuf tune SCENARIO --param KEY=LOW..HIGH ...``.

An optimizer (Optuna's TPE with a fixed seed) proposes points, the sweep engine
(:func:`sharebuf.executor.run_many`, content-addressed ``run-<hash>/`` directories) runs them in
batches of ``jobs``, and each finished run gives the objective and the constraint metrics.

>>> from sharebuf.tune import tune
>>> r = tune("examples/tune-alpha.toml", {"switch.bm.alpha[2]": (0.25, 16.0)}, "slowdown_p99.incast",
...          constraints=["class_gbps_mean.long>=0.98*ref"], trials=8, log=True, out="runs/tune")
>>> r.best_params, r.best_value

Design (docs/tune.md):

* **Reproducible.** The proposals depend only on the scenario, the parameters and ranges, the
  seed, the number of trials, the startup count and the batch size (``jobs``): the same
  command proposes the same points, whatever the machine or the number of Ray workers.
* **Resumable.** The study is rebuilt at every start: the seeded sampler proposes the same
  points again, and :func:`run_many` reuses every run directory that is complete, so a
  re-started tune replays its finished trials into the study without running them again.
* **Startup phase.** The first ``startup`` trials are a randomly shifted Halton sequence (a
  quasi-random design that covers the box evenly; in log space with ``log``), TPE proposes the
  rest. TPE's own startup draws independent uniform points, which at a budget of a few trials
  can leave most of a range unexplored.
* **Constraints** ``METRIC<=VALUE`` / ``METRIC>=VALUE``; VALUE is a number, ``ref`` or
  ``F*ref``: the metric of a reference run (the scenario with the ``reference`` overrides,
  run once). They reach TPE through ``constraints_func`` (Optuna's constrained TPE); the best
  trial is the best *feasible* one.
"""

from __future__ import annotations

import copy
import json
import math
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from .classes import CLASSES
from .errors import ScenarioError
from .executor import metrics_row, run_key, run_many
from .scenario.load import apply_sets, scenario_dict
from .scenario.overrides import set_path

#: Columns of the sweep table that every run has (executor.metrics_row), besides the per-workload and per-class ones.
BASE_METRICS = ("flows", "flows_finished", "drops", "buffer_mean_bytes", "buffer_p99_bytes", "qct_p99_s", "sim_s", "events", "wall_s")
#: Per-class throughput, computed from flows.parquet (tune only; see :func:`class_throughput`).
GBPS_PREFIX = "class_gbps_mean."

_PARAM = re.compile(r"^\s*([^=\s]+)\s*=\s*(\S+?)\s*\.\.\s*(\S+)\s*$")
_CONSTRAINT = re.compile(r"^\s*([A-Za-z0-9_.\[\]-]+)\s*(<=|>=)\s*(\S+)\s*$")
_REF = re.compile(r"^(?:([0-9.eE+-]+)\s*\*\s*)?ref(?:\s*\*\s*([0-9.eE+-]+))?$")


@dataclass
class Param:
    key: str
    low: float
    high: float
    log: bool = False


@dataclass
class Constraint:
    text: str
    metric: str
    op: str                    # "<=" or ">="
    value: Optional[float]     # a number, or None when relative to the reference
    factor: float = 1.0        # VALUE = factor * ref

    def bound(self, ref: Optional[Dict[str, Any]]) -> float:
        if self.value is not None:
            return self.value
        r = None if ref is None else ref.get(self.metric)
        if r is None or (isinstance(r, float) and math.isnan(r)):
            raise ScenarioError(f"--constraint {self.text!r}: the reference run has no value of {self.metric}")
        return self.factor * float(r)

    def violation(self, m: Optional[float], ref: Optional[Dict[str, Any]]) -> float:
        """Optuna's convention: <= 0 when satisfied. A missing metric violates it."""
        if m is None or (isinstance(m, float) and math.isnan(m)):
            return float("inf")
        b = self.bound(ref)
        return float(m - b) if self.op == "<=" else float(b - m)


def parse_param(text: str, log: bool = False) -> Param:
    m = _PARAM.match(text)
    example = "e.g. 'switch.bm.alpha[2]=0.25..16'"
    if not m:
        raise ScenarioError(f"--param {text!r}: expected KEY=LOW..HIGH, {example}")
    key, lo, hi = m.groups()
    try:
        low, high = float(lo), float(hi)
    except ValueError:
        raise ScenarioError(f"--param {text!r}: LOW and HIGH must be numbers, {example}") from None
    if not (math.isfinite(low) and math.isfinite(high)) or not low < high:
        raise ScenarioError(f"--param {text!r}: need finite LOW < HIGH, got {lo}..{hi}")
    if log and low <= 0:
        raise ScenarioError(f"--param {text!r}: --log needs LOW > 0, got {lo}")
    return Param(key, low, high, log)


def parse_constraint(text: str) -> Constraint:
    m = _CONSTRAINT.match(text)
    if not m:
        raise ScenarioError(f"--constraint {text!r}: expected METRIC<=VALUE or METRIC>=VALUE, VALUE a number, 'ref' or "
                            f"'F*ref' (e.g. 'class_gbps_mean.long>=0.98*ref')")
    metric, op, rhs = m.groups()
    try:
        return Constraint(text, metric, op, float(rhs))
    except ValueError:
        pass
    r = _REF.match(rhs)
    if not r:
        raise ScenarioError(f"--constraint {text!r}: VALUE {rhs!r} is not a number, 'ref' or 'F*ref'")
    f = r.group(1) or r.group(2) or "1"
    try:
        factor = float(f)
    except ValueError:
        raise ScenarioError(f"--constraint {text!r}: factor {f!r} is not a number") from None
    return Constraint(text, metric, op, None, factor)


def metric_names(d: dict) -> List[str]:
    """Every metric a tune can optimize or constrain for scenario dict ``d``: the sweep table's
    columns (docs/sweeps.md) and ``class_gbps_mean.<class>``."""
    names = list(BASE_METRICS)
    for w in d.get("workload") or []:
        n = w.get("name")
        if n:
            names += [f"slowdown_p50.{n}", f"slowdown_p99.{n}"]
    for c in CLASSES:
        names += [f"class_slowdown_p50.{c}", f"class_slowdown_p99.{c}", f"{GBPS_PREFIX}{c}"]
    return names


def check_metric(name: str, d: dict, flag: str) -> None:
    allowed = metric_names(d)
    if name not in allowed:
        raise ScenarioError(f"{flag} {name!r}: unknown metric; allowed: {', '.join(allowed)}")


def class_throughput(run_dir: Union[str, Path], sim_s: float) -> Dict[str, float]:
    """Mean per-flow throughput (Gb/s) of each flow class: received bytes x 8 over the flow's
    duration (its FCT if it finished, else start to the end of the simulation). Unfinished
    flows count, so a setting that starves long flows cannot look better by not finishing them."""
    import numpy as np
    import pandas as pd

    from .classes import flow_classes

    f = pd.read_parquet(Path(run_dir) / "flows.parquet", columns=["size_bytes", "start_s", "fct_s", "query_id", "received_bytes", "finished"])
    dur = np.where(f["finished"].to_numpy(), f["fct_s"].fillna(0).to_numpy(), sim_s - f["start_s"].to_numpy())
    rate = np.divide(f["received_bytes"].to_numpy() * 8.0, dur * 1e9, out=np.full(len(f), np.nan), where=dur > 0)
    out = {}
    for c, m in flow_classes(f).items():
        x = rate[m & ~np.isnan(rate)]
        out[f"{GBPS_PREFIX}{c}"] = float(x.mean()) if len(x) else float("nan")
    return out


def run_metrics(summary: dict, run_dir: Optional[Union[str, Path]]) -> Dict[str, Any]:
    """The metrics of one run: the sweep table's row (one place: executor.metrics_row) and the per-class throughput."""
    row = metrics_row(summary)
    if run_dir is not None:
        row.update(class_throughput(run_dir, summary["sim_s"]))
    return row


def _halton(i: int, base: int) -> float:
    f, r = 1.0, 0.0
    while i > 0:
        f /= base
        r += f * (i % base)
        i //= base
    return r


_PRIMES = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37)


def startup_points(params: Sequence[Param], n: int, seed: int) -> List[Dict[str, float]]:
    """``n`` points of a Halton sequence with a seeded random shift (Cranley–Patterson rotation),
    mapped onto the box (log-uniformly for ``log`` parameters)."""
    import numpy as np

    if len(params) > len(_PRIMES):
        raise ScenarioError(f"tune: at most {len(_PRIMES)} --param")
    shift = np.random.default_rng(seed).random(len(params))
    pts = []
    for i in range(1, n + 1):
        pt = {}
        for j, p in enumerate(params):
            u = (_halton(i, _PRIMES[j]) + shift[j]) % 1.0
            if p.log:
                pt[p.key] = float(math.exp(math.log(p.low) + u * (math.log(p.high) - math.log(p.low))))
            else:
                pt[p.key] = float(p.low + u * (p.high - p.low))
        pts.append(pt)
    return pts


def grid_points(params: Sequence[Param], n: int) -> List[Dict[str, float]]:
    """A full grid of at most ``n`` points (the same number per parameter, ends included,
    log-spaced for ``log`` parameters): the baseline a tune is compared with (docs/tune.md)."""
    import itertools

    import numpy as np

    k = max(1, int(math.floor(n ** (1.0 / len(params)) + 1e-9)))
    axes = [np.geomspace(p.low, p.high, k) if p.log else np.linspace(p.low, p.high, k) for p in params]
    return [dict(zip([p.key for p in params], map(float, c))) for c in itertools.product(*axes)]


@dataclass
class TuneResult:
    trials: Any                          # pandas DataFrame (trials.parquet)
    best: Optional[Dict[str, Any]]       # the best feasible trial's row, or None
    reference: Optional[Dict[str, Any]]  # the reference run's metrics
    out: Optional[Path]
    study: Any = field(default=None, repr=False)

    @property
    def best_params(self) -> Optional[Dict[str, float]]:
        return None if self.best is None else {k: self.best[k] for k in self.best.get("_param_keys", [])}

    @property
    def best_value(self) -> Optional[float]:
        return None if self.best is None else self.best["value"]


def _dry_run(d: dict) -> None:
    """Build the engine for ``d`` and simulate 1 ns: the scheme and the engine check every
    parameter (e.g. unknown ``switch.bm`` keys) before any trial runs. ~3 ms."""
    from .runner import run

    d = copy.deepcopy(d)
    d["max_ms"] = d["arrivals_until_ms"] = 1e-6
    run(d, out=None, progress=False)


class _Setup:
    """Validated inputs shared by :func:`tune` and :func:`evaluate`."""

    def __init__(self, scenario, params, objective, constraints, reference, sets, out, seeds=None):
        self.base = scenario_dict(scenario, sets)
        if seeds is not None and (not seeds or not all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in seeds)):
            raise ScenarioError(f"--seeds {seeds!r}: expected non-negative integers, e.g. 1,2,3")
        self.seeds = list(seeds) if seeds else None
        self.params = params
        for p in params:
            for v in (p.low, p.high):
                d = copy.deepcopy(self.base)
                try:
                    set_path(d, p.key, v)
                    _dry_run(d)
                except ScenarioError as e:
                    raise ScenarioError(f"--param {p.key}={p.low:g}..{p.high:g}: at {v:g}: {e}") from None
        if len({p.key for p in params}) != len(params):
            raise ScenarioError("tune: a --param key is given twice")
        check_metric(objective, self.base, "--objective")
        for c in constraints:
            check_metric(c.metric, self.base, "--constraint")
        self.objective = objective
        self.constraints = constraints
        self.out = Path(out) if out is not None else None
        self.ref_dict = None
        if reference is not None or any(c.value is None for c in constraints):
            try:
                self.ref_dict = apply_sets(copy.deepcopy(self.base), reference or {})
                _dry_run(self.ref_dict)
            except ScenarioError as e:
                msg = str(e).replace("--set ", "--reference ", 1)
                raise ScenarioError(msg if msg.startswith("--reference") else f"--reference: {msg}") from None

    def scenario_at(self, point: Dict[str, float]) -> dict:
        d = copy.deepcopy(self.base)
        for k, v in point.items():
            set_path(d, k, v)
        return d

    def run(self, dicts: List[dict], jobs, use_ray, ray_address) -> List[Dict[str, Any]]:
        """Metrics of each scenario dict; with ``seeds``, the mean over one run per seed
        (a metric missing in one seed's run, e.g. no finished flow, makes the mean NaN)."""
        import numpy as np

        groups = []
        for d in dicts:
            runs = []
            for s in self.seeds or [None]:
                e = d if s is None else {**copy.deepcopy(d), "seed": int(s)}
                runs.append((run_key(e), e))
            groups.append(runs)
        items = [kd for g in groups for kd in g]
        done = run_many(items, self.out, jobs=int(jobs or 1), use_ray=use_ray, ray_address=ray_address)
        rows = []
        for g in groups:
            ms = [run_metrics(done[k], (self.out / f"run-{k}") if self.out is not None else None) for k, _ in g]
            m = ms[0] if len(ms) == 1 else {
                name: float(np.mean([np.nan if x.get(name) is None else float(x[name]) for x in ms])) for name in ms[0]}
            rows.append({**m, "run_dir": ",".join(f"run-{k}" for k, _ in g), "reused": all(not done.ran.get(k, False) for k, _ in g)})
        return rows

    def judge(self, m: Dict[str, Any], ref: Optional[Dict[str, Any]]) -> Tuple[Optional[float], List[float], bool]:
        v = m.get(self.objective)
        v = None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)
        viol = [c.violation(m.get(c.metric), ref) for c in self.constraints]
        return v, viol, v is not None and all(x <= 0 for x in viol)


def _row(i: int, point, m, value, viol, feasible, setup: _Setup, source: str) -> Dict[str, Any]:
    row = {"trial": i, "source": source, **point, "value": value, "feasible": feasible}
    for c, x in zip(setup.constraints, viol):
        row[f"violation[{c.text}]"] = x
    row.update({k: v for k, v in m.items() if not k.startswith("_")})
    return row


def _atomic(path: Path, write) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}-", suffix=path.suffix, dir=path.parent)
    os.close(fd)
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _best(rows: List[dict], direction: str) -> Optional[dict]:
    ok = [r for r in rows if r["feasible"]]
    if not ok:
        return None
    sign = 1.0 if direction == "minimize" else -1.0
    return min(ok, key=lambda r: (sign * r["value"], r["trial"]))


def tune(scenario: Union[str, Path, dict, None], params: Dict[str, Tuple[float, float]], objective: str, *,
         direction: str = "minimize", constraints: Sequence[str] = (), reference: Optional[Dict[str, Any]] = None,
         trials: int = 20, jobs: Optional[int] = None, use_ray: bool = False, ray_address: Optional[str] = None,
         seed: int = 0, log: bool = False, startup: Optional[int] = None, sets: Optional[Dict[str, Any]] = None,
         seeds: Optional[Sequence[int]] = None, out: Union[str, Path, None] = None, progress: bool = False) -> TuneResult:
    """Tune ``params`` (key -> (low, high)) of ``scenario`` for ``objective``; see the module doc.

    ``jobs``: trials proposed and run together (a batch; default 1), as worker processes or Ray
    tasks (``use_ray``). ``startup``: quasi-random trials before TPE (default: half the budget,
    between 2 and 10). ``reference``: overrides of the reference run (``ref`` in constraints).
    ``seeds``: run every trial (and the reference) once per scenario seed and use the mean of each metric.
    Writes ``trials.parquet``, ``best.toml``, ``search.png`` and ``tune.json`` to ``out``."""
    try:
        import optuna
    except ImportError:
        raise ScenarioError("sharebuf tune needs Optuna: pip install 'sharebuf[tune]'") from None
    if direction not in ("minimize", "maximize"):
        raise ScenarioError(f"tune: direction {direction!r}: allowed: minimize, maximize")
    if not isinstance(trials, int) or trials < 1:
        raise ScenarioError(f"--trials {trials!r}: need an integer >= 1")
    batch = int(jobs or 1)
    if batch < 1:
        raise ScenarioError(f"--jobs {jobs!r}: need an integer >= 1")
    if not params:
        raise ScenarioError("tune: give at least one --param KEY=LOW..HIGH")
    plist = [p if isinstance(p, Param) else Param(k, float(p[0]), float(p[1]), log) for k, p in params.items()]
    plist = [parse_param(f"{p.key}={p.low!r}..{p.high!r}", p.log) for p in plist]
    cons = [parse_constraint(c) for c in constraints]
    n_start = startup if startup is not None else min(10, max(2, trials // 2))
    if not isinstance(n_start, int) or n_start < 0:
        raise ScenarioError(f"--startup {startup!r}: need an integer >= 0")
    setup = _Setup(scenario, plist, objective, cons, reference, sets, out, seeds)

    ref = None
    if setup.ref_dict is not None:
        ref = setup.run([setup.ref_dict], jobs, use_ray, ray_address)[0]

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    dists = {p.key: optuna.distributions.FloatDistribution(p.low, p.high, log=p.log) for p in plist}

    # Optuna >= 5: constraints are set on the trial (Trial.set_constraint); before: constraints_func.
    per_trial = hasattr(optuna.trial.Trial, "set_constraint")

    def constraints_func(t):
        return t.user_attrs.get("violations", [0.0] * len(cons))

    sampler = optuna.samplers.TPESampler(seed=seed, n_startup_trials=n_start, multivariate=len(plist) > 1, constant_liar=batch > 1,
                                         constraints_func=constraints_func if cons and not per_trial else None)
    study = optuna.create_study(direction=direction, sampler=sampler)
    for pt in startup_points(plist, min(n_start, trials), seed):
        study.enqueue_trial(pt)
    rows: List[dict] = []
    bar = task = None
    if progress:
        from .executor import progress_bar

        bar, task = progress_bar(trials, "tune")
    try:
        i = 0
        while i < trials:
            k = min(batch, trials - i)
            asked = [study.ask(dists) for _ in range(k)]
            points = [{p.key: float(t.params[p.key]) for p in plist} for t in asked]
            metrics = setup.run([setup.scenario_at(pt) for pt in points], jobs, use_ray, ray_address)
            for t, pt, m in zip(asked, points, metrics):
                value, viol, feasible = setup.judge(m, ref)
                t.set_user_attr("violations", [min(x, 1e300) for x in viol])
                if per_trial:
                    for c, x in zip(cons, viol):
                        t.set_constraint(c.text, min(x, 1e300))
                t.set_user_attr("run_dir", m["run_dir"])
                if value is None:
                    study.tell(t, state=optuna.trial.TrialState.FAIL)
                else:
                    study.tell(t, value)
                rows.append(_row(t.number, pt, m, value, viol, feasible, setup, "startup" if t.number < n_start else "tpe"))
                if bar:
                    bar.advance(task)
            i += k
            if setup.out is not None:
                _write_table(setup.out / "trials.parquet", rows)
    finally:
        if bar:
            bar.stop()
    import pandas as pd

    table = pd.DataFrame(rows)
    best = _best(rows, direction)
    if best is not None:
        best = {**best, "_param_keys": [p.key for p in plist]}
    res = TuneResult(trials=table, best=best, reference=ref, out=setup.out, study=study)
    if setup.out is not None:
        _write_outputs(res, setup, plist, direction, seed, n_start, batch)
    return res


def evaluate(scenario, params: Dict[str, Tuple[float, float]], objective: str, points: List[Dict[str, float]], *,
             direction: str = "minimize", constraints: Sequence[str] = (), reference: Optional[Dict[str, Any]] = None,
             jobs: Optional[int] = None, log: bool = False, sets=None, seeds=None, out=None) -> TuneResult:
    """Run given points (e.g. :func:`grid_points`) with the same metrics, constraints and
    reference as :func:`tune`: the baseline a tune is compared with."""
    plist = [parse_param(f"{k}={lo!r}..{hi!r}", log) for k, (lo, hi) in params.items()]
    cons = [parse_constraint(c) for c in constraints]
    setup = _Setup(scenario, plist, objective, cons, reference, sets, out, seeds)
    ref = setup.run([setup.ref_dict], jobs, False, None)[0] if setup.ref_dict is not None else None
    rows = []
    metrics = setup.run([setup.scenario_at(pt) for pt in points], jobs, False, None)
    for i, (pt, m) in enumerate(zip(points, metrics)):
        value, viol, feasible = setup.judge(m, ref)
        rows.append(_row(i, pt, m, value, viol, feasible, setup, "given"))
    import pandas as pd

    best = _best(rows, direction)
    if best is not None:
        best = {**best, "_param_keys": [p.key for p in plist]}
    return TuneResult(trials=pd.DataFrame(rows), best=best, reference=ref, out=setup.out)


def _write_table(path: Path, rows: List[dict]) -> None:
    import pandas as pd

    t = pd.DataFrame(rows)
    _atomic(path, lambda p: t.to_parquet(p, index=False))


def _write_outputs(res: TuneResult, setup: _Setup, plist: List[Param], direction: str, seed: int, n_start: int, batch: int) -> None:
    out = setup.out
    _write_table(out / "trials.parquet", res.trials.to_dict("records"))
    (out / "best.toml").unlink(missing_ok=True)
    if res.best is not None:
        src = out / res.best["run_dir"].split(",")[0] / "scenario.toml"
        head = (f"# sharebuf tune: best feasible trial {res.best['trial']} of {len(res.trials)}: "
                f"{setup.objective} = {res.best['value']:.6g} ({direction})"
                + (f", mean over seeds {setup.seeds} (this file: seed {setup.seeds[0]})" if setup.seeds else "") + "\n"
                + "".join(f"#   {p.key} = {res.best[p.key]!r}\n" for p in plist)
                + f"# run: sharebuf run {out / 'best.toml'}\n")
        text = src.read_text()
        _atomic(out / "best.toml", lambda p: Path(p).write_text(head + text))
    info = {"objective": setup.objective, "direction": direction, "seed": seed, "scenario_seeds": setup.seeds, "startup": n_start, "batch": batch,
            "params": [{"key": p.key, "low": p.low, "high": p.high, "log": p.log} for p in plist],
            "constraints": [c.text for c in setup.constraints],
            "reference": None if res.reference is None else {k: v for k, v in res.reference.items() if not k.startswith("_")},
            "best": None if res.best is None else {k: v for k, v in res.best.items() if not k.startswith("_")}}
    _atomic(out / "tune.json", lambda p: Path(p).write_text(json.dumps(info, indent=2, default=float) + "\n"))
    from .figures import plot_search

    plot_search(res.trials, setup.objective, [p.key for p in plist], direction, out / "search.png", logs={p.key: p.log for p in plist})

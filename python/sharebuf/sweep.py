"""Parameter sweeps: run the cartesian product of scenario values (and seeds) on this
machine's cores, or on a Ray cluster, and collect one table row per run.

>>> import sharebuf.sweep as sw
>>> table = sw.sweep("default", {"switch.bm.scheme": ["dt", "abm"],
...                              "workload[1].request_fraction_of_buffer": [0.25, 0.5]},
...                  seeds=[1, 2], out="runs/alpha")
>>> table.groupby("switch.bm.scheme")["slowdown_p99.incast"].mean()

Keys are dotted scenario paths; ``workload[i]`` indexes the workload list. Every
combination is validated before anything runs. Each run writes its own directory, named by a
hash of its resolved engine spec (``run-<12 hex>``), atomically; a sweep started again into the
same directory re-runs only what has no complete directory (resume after a crash or Ctrl-C).
The sweep writes ``sweep.parquet`` (one row per distinct run: the swept values, the seed and
the main summary metrics).

``--set KEY=VALUE`` (:func:`add_set_argument`, :func:`parse_sets`, :func:`scenario_dict`) uses
the same dotted keys to override single values of a scenario before a run or a sweep.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Union

from .config import absolute_file_inputs, engine_spec_json, load_scenario, parse_scenario, resolve, strip_profile_keys
from .errors import ScenarioError

_PART = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(?:\[(\d+)\])?$")


def set_path(d: dict, key: str, value: Any) -> None:
    """Set ``key`` (e.g. ``switch.bm.alpha`` or ``workload[1].load``) in a scenario dict."""
    parts = key.split(".")
    cur: Any = d
    for n, part in enumerate(parts):
        m = _PART.match(part)
        if not m:
            raise ScenarioError(f"sweep key '{key}': '{part}' is not a key name (use a.b.c or workload[i].x)")
        name, idx = m.group(1), m.group(2)
        last = n == len(parts) - 1
        if idx is None:
            if last:
                cur[name] = value
                return
            cur = cur.setdefault(name, {})
            if not isinstance(cur, dict):
                raise ScenarioError(f"sweep key '{key}': '{name}' is not a table")
        else:
            lst = cur.get(name)
            i = int(idx)
            if not isinstance(lst, list) or i >= len(lst):
                size = len(lst) if isinstance(lst, list) else 0
                raise ScenarioError(f"sweep key '{key}': '{name}' has {size} entries, index {i} is out of range")
            if last:
                lst[i] = value
                return
            cur = lst[i]


def parse_value(tok: str) -> Any:
    """One value: JSON (numbers, true/false, lists, quoted strings), else a TOML value (inline
    tables such as ``{scheme = "dt", alpha = 0.5}``, single-quoted strings), else a bare string."""
    try:
        return json.loads(tok)
    except json.JSONDecodeError:
        pass
    if tok[:1] in "{['":
        from .config import tomllib

        try:
            return tomllib.loads("v = " + tok)["v"]
        except tomllib.TOMLDecodeError:
            pass
    return tok


def parse_values(text: str) -> List[Any]:
    """``'[1, 2]'`` (JSON list) or ``'dt,abm'`` / ``'0.25,0.5'`` (comma list, numbers parsed)."""
    text = text.strip()
    if text.startswith("["):
        try:
            v = json.loads(text)
        except json.JSONDecodeError as e:
            raise ScenarioError(f"sweep values {text!r}: not a JSON list ({e})") from None
        if not isinstance(v, list) or not v:
            raise ScenarioError(f"sweep values {text!r}: need a non-empty JSON list")
        return v
    out: List[Any] = []
    for tok in text.split(","):
        tok = tok.strip()
        if not tok:
            raise ScenarioError(f"sweep values {text!r}: empty value")
        out.append(parse_value(tok))
    return out


# ----------------------------------------------------------------------------- --set
SET_HELP = ("override one scenario value, with the dotted keys of sweep --grid: switch.bm.scheme=abm, "
            "'workload[1].request_fraction_of_buffer=0.75', 'switch.bm.alpha=[1,0.5]' (repeatable)")


def add_set_argument(parser) -> None:
    """``--set KEY=VALUE`` (repeatable) for any command that runs a scenario."""
    parser.add_argument("--set", action="append", dest="sets", metavar="KEY=VALUE", default=None, help=SET_HELP)


def parse_sets(items: Optional[Sequence[str]]) -> Dict[str, Any]:
    """``["switch.bm.scheme=abm", ...]`` -> ``{"switch.bm.scheme": "abm", ...}`` (values as in :func:`parse_value`)."""
    sets: Dict[str, Any] = {}
    for item in items or []:
        k, eq, v = item.partition("=")
        if not eq or not k.strip() or not v.strip():
            raise ScenarioError(f"--set {item!r}: expected KEY=VALUE, e.g. switch.bm.scheme=abm")
        sets[k.strip()] = parse_value(v.strip())
    return sets


def _scenario_base(scenario: Union[str, Path, dict, None]):
    sc, base, name = load_scenario(scenario)
    # Keys a profile sets stay unset unless the scenario set them, so a changed (or swept) `profile` applies.
    d = strip_profile_keys(sc, sc.model_dump(exclude_none=True, exclude_defaults=False))
    absolute_file_inputs(d, base)  # relative file names resolve against the scenario's directory
    d["name"] = name
    return sc, d


def apply_sets(d: dict, sets: Optional[Dict[str, Any]]) -> dict:
    """Apply ``--set`` overrides to a scenario dict in order, validating after each one so
    that an error names the key and value at fault."""
    for k, v in (sets or {}).items():
        set_path(d, k, v)
        try:
            parse_scenario(d)
        except ScenarioError as e:
            raise ScenarioError(f"--set {k}={json.dumps(v)}: {e}") from None
    return d


def scenario_dict(scenario: Union[str, Path, dict, None], sets: Optional[Dict[str, Any]] = None) -> dict:
    """A scenario (TOML path, bundled name or dict) as a validated dict, ``sets`` applied."""
    return apply_sets(_scenario_base(scenario)[1], sets)


def _metrics(summary: dict) -> Dict[str, Any]:
    row: Dict[str, Any] = {
        "flows": summary["flows"]["total"],
        "flows_finished": summary["flows"]["finished"],
        "drops": summary["drops_total"],
        "buffer_mean_bytes": summary["buffer"]["mean_bytes"],
        "buffer_p99_bytes": summary["buffer"]["p99_bytes"],
        "qct_p99_s": summary["queries"]["qct_p99_s"],
        "sim_s": summary["sim_s"],
        "events": summary["events"],
        "wall_s": summary["wall_s"],
    }
    for name, v in summary["slowdown"].items():
        row[f"slowdown_p50.{name}"] = v["p50"]
        row[f"slowdown_p99.{name}"] = v["p99"]
    for name, v in summary.get("slowdown_by_class", {}).items():
        row[f"class_slowdown_p50.{name}"] = v["p50"]
        row[f"class_slowdown_p99.{name}"] = v["p99"]
    return row


def _run_one(scenario: dict, out_dir: Optional[str]) -> dict:
    from .runner import run

    res = run(scenario, out=out_dir, progress=False)
    return res.summary


def plan(scenario: Union[str, Path, dict, None], grid: Dict[str, Sequence[Any]], seeds: Optional[Sequence[int]] = None):
    """Expand the grid into validated scenario dicts: a list of (params, scenario)."""
    sc, base_dict = _scenario_base(scenario)
    keys = list(grid)
    for k in keys:
        if not isinstance(grid[k], (list, tuple)) or not grid[k]:
            raise ScenarioError(f"sweep key '{k}': needs a non-empty list of values")
    seeds = list(seeds) if seeds else [sc.seed]
    runs = []
    for combo in itertools.product(*(grid[k] for k in keys)):
        for seed in seeds:
            d = copy.deepcopy(base_dict)
            params = dict(zip(keys, combo))
            for k, v in params.items():
                set_path(d, k, v)
            d["seed"] = int(seed)
            try:
                parse_scenario(d)
            except ScenarioError as e:
                raise ScenarioError(f"sweep point {params} seed {seed}: {e}") from None
            runs.append(({**params, "seed": int(seed)}, d))
    return runs


def run_key(scenario: dict) -> str:
    """Content address of a run: a hash of its resolved engine spec (and the sharebuf version)."""
    return _spec_key(resolve(parse_scenario(scenario), Path.cwd()))


def _spec_key(spec: dict) -> str:
    from . import __version__

    return hashlib.sha256(f"{__version__}\n{engine_spec_json(spec)}".encode()).hexdigest()[:12]


class SweepInterrupted(KeyboardInterrupt):
    """Ctrl-C during a sweep; the message says what was kept and how to resume."""


def _progress_bar(total: int, label: str):
    from rich.console import Console
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                               TimeRemainingColumn)

    bar = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("runs"),
                   TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(), console=Console(stderr=True), transient=True)
    bar.start()
    return bar, bar.add_task(label, total=total)


class RunResults(dict):
    """key -> summary of every run; ``ran[key]`` is True for the runs this call executed."""

    def __init__(self):
        super().__init__()
        self.ran: Dict[str, bool] = {}


def _check_memory(uniq: Dict[str, dict], label: str) -> tuple:
    """Refuse, before anything runs, a point too large for this machine's memory; return
    (estimated bytes per run key, the limit) for :func:`_check_parallel_memory`."""
    from .memory import available_memory_bytes, check_memory

    limit = available_memory_bytes()
    est = {}
    for k, d in uniq.items():
        est[k] = check_memory(resolve(parse_scenario(d), Path.cwd()),
                              f"{label} run-{k} (scenario '{d.get('name', 'scenario')}', seed {d.get('seed')})", limit=limit)
    return est, limit


def _check_parallel_memory(est: Dict[str, int], todo: Sequence[str], workers: int, limit: Optional[int], label: str) -> None:
    """Refuse ``workers`` local processes when the runs they may hold at once (the ``workers``
    largest estimates among the runs still to do: each process takes its own memory) exceed the
    limit, naming the largest ``--jobs`` that fits."""
    from .memory import LIMIT_ENV, _fmt

    if limit is None or workers <= 1:
        return
    big = sorted((est[k] for k in todo), reverse=True)
    peak = sum(big[:workers])
    if peak <= limit:
        return
    fits, acc = 0, 0
    for b in big:
        if acc + b > limit:
            break
        acc += b
        fits += 1
    raise ScenarioError(
        f"{label} --jobs {workers}: {workers} runs at once need about {_fmt(peak)} of memory (the {workers} largest of "
        f"{len(todo)} runs to do, {_fmt(big[0])} the largest; each worker process holds its own run); the limit is "
        f"{_fmt(limit)} (available memory, or ${LIMIT_ENV}); allowed: --jobs {max(fits, 1)} or fewer, or smaller runs")


def run_many(items: Sequence[tuple], out_path: Optional[Path], *, jobs: Optional[int] = None, use_ray: bool = False,
             ray_address: Optional[str] = None, progress: bool = False, label: str = "sweep") -> RunResults:
    """Run each (key, scenario dict) into ``out_path/run-<key>/`` (content-addressed: a run whose
    directory is complete is reused, a half-written one left by a killed worker is removed), on
    local processes or Ray tasks, with one progress bar. Ctrl-C stops the workers and raises
    :class:`SweepInterrupted` saying what was kept. Used by ``sweep``, ``compare`` and ``repro``."""
    res = RunResults()
    uniq: Dict[str, dict] = {}
    for k, d in items:
        uniq.setdefault(k, d)
    keys = list(uniq)
    dirs = {k: (str(out_path / f"run-{k}") if out_path else None) for k in keys}
    est, limit = _check_memory(uniq, label)
    if out_path is not None and out_path.is_dir():
        from .results import remove_stale_partials

        remove_stale_partials(out_path, "run-*")  # left by a killed worker: never complete
        for k in keys:
            f = Path(dirs[k]) / "summary.json"
            if f.is_file():
                res[k] = json.loads(f.read_text())
                res.ran[k] = False
    todo = [k for k in keys if k not in res]
    if todo and not use_ray:  # Ray places tasks by its own resources
        _check_parallel_memory(est, todo, min(jobs or os.cpu_count() or 1, len(todo)), limit, label)
    bar = task = None
    if progress and todo:
        reused = len(keys) - len(todo)
        bar, task = _progress_bar(len(todo), label + (f" ({reused} done before)" if reused else ""))
    ex = None

    def finish(k, summary):
        res[k] = summary
        res.ran[k] = True
        if bar:
            bar.advance(task)

    try:
        if not todo:
            pass
        elif use_ray:
            try:
                import ray
            except ImportError:
                raise ScenarioError("--ray needs Ray: pip install 'sharebuf[cluster]'") from None
            if not ray.is_initialized():
                ray.init(address=ray_address, ignore_reinit_error=True, log_to_driver=False)
            remote = ray.remote(_run_one)
            refs = {remote.remote(uniq[k], dirs[k]): k for k in todo}
            pending = list(refs)
            try:
                while pending:
                    ready, pending = ray.wait(pending, num_returns=1)
                    finish(refs[ready[0]], ray.get(ready[0]))
            except KeyboardInterrupt:
                for r in pending:
                    ray.cancel(r, force=True)
                raise
        elif (jobs or os.cpu_count() or 1) == 1:
            for k in todo:  # in this process: no pool to start, and tests can observe the runs
                finish(k, _run_one(uniq[k], dirs[k]))
        else:
            from concurrent.futures import ProcessPoolExecutor, as_completed  # not at start-up (issue 10)

            ex = ProcessPoolExecutor(max_workers=min(jobs or os.cpu_count() or 1, len(todo)))
            futs = {ex.submit(_run_one, uniq[k], dirs[k]): k for k in todo}
            for f in as_completed(futs):
                finish(futs[f], f.result())
    except KeyboardInterrupt:
        if ex is not None:
            ex.shutdown(wait=True, cancel_futures=True)
            ex = None
        n = len(res)
        where = f"kept in {out_path}/; run the same command again to run only the rest" if out_path else "not kept (no --out)"
        raise SweepInterrupted(f"{n} of {len(keys)} runs finished, {where}") from None
    finally:
        if ex is not None:
            ex.shutdown(wait=True, cancel_futures=True)
        if bar:
            bar.stop()
    return res


def sweep(scenario: Union[str, Path, dict, None], grid: Dict[str, Sequence[Any]], *, seeds: Optional[Sequence[int]] = None,
          out: Union[str, Path, None] = None, jobs: Optional[int] = None, ray_address: Optional[str] = None,
          use_ray: bool = False, progress: bool = False, label: str = "sweep"):
    """Run every point of ``grid`` (× ``seeds``) and return a pandas DataFrame, one row per run.

    ``jobs``: worker processes on this machine (default: all cores). ``use_ray``: run the points
    as Ray tasks instead (``ray_address`` of a cluster, or a local Ray). ``out``: directory for
    the runs' results (``run-<hash>/``) and ``sweep.parquet``; runs whose directory is already
    complete there are reused, not re-run. ``table.attrs["ran"]`` / ``["reused"]`` count them.
    """
    import pandas as pd

    from .memory import available_memory_bytes, check_memory

    planned = plan(scenario, grid, seeds)
    runs, keys, seen = [], [], set()
    limit = available_memory_bytes()
    for params, d in planned:  # the same resolved run twice (e.g. a repeated value) runs once
        spec = resolve(parse_scenario(d), Path.cwd())
        check_memory(spec, f"sweep point {params}", limit=limit)  # every point before anything runs
        k = _spec_key(spec)
        if k not in seen:
            seen.add(k)
            runs.append((params, d))
            keys.append(k)
    out_path = Path(out) if out is not None else None
    done = run_many(list(zip(keys, (d for _, d in runs))), out_path, jobs=jobs, use_ray=use_ray, ray_address=ray_address,
                    progress=progress, label=label)
    summaries = [done[k] for k in keys]
    todo = [k for k in keys if done.ran.get(k)]
    rows = []
    for i, ((params, _), s) in enumerate(zip(runs, summaries)):
        rows.append({"run": i, **{k: (json.dumps(v) if isinstance(v, (list, dict)) else v) for k, v in params.items()},
                     **_metrics(s), "run_dir": f"run-{keys[i]}"})
    table = pd.DataFrame(rows)
    if out_path is not None:
        out_path.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".sweep-", suffix=".parquet", dir=out_path)
        os.close(fd)
        table.to_parquet(tmp, index=False)
        os.replace(tmp, out_path / "sweep.parquet")
    table.attrs.update(ran=len(todo), reused=len(runs) - len(todo))
    return table


def _fname(y: str, x: str) -> str:
    """A plot's file name from two column names: only [A-Za-z0-9._-], no leading dot, and at most
    ~150 characters (a long name is cut and made unique by a hash), so it stays in its directory."""
    def clean(t: str) -> str:
        c = re.sub(r"[^A-Za-z0-9._-]+", "_", str(t)).strip("_.") or "_"
        return c if len(c) <= 64 else c[:52] + "-" + hashlib.sha256(str(t).encode()).hexdigest()[:10]

    return f"{clean(y)}-vs-{clean(x)}.png"


def plot(table_or_dir, x: str, y: str, hue: Optional[str] = None, out: Union[str, Path, None] = None, logy: bool = False):
    """Plot metric ``y`` against swept key ``x`` (mean over seeds, min–max band), one line
    per value of ``hue``. Returns the output path (PNG, and PDF beside it)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import pandas as pd

    if isinstance(table_or_dir, (str, Path)):
        d = Path(table_or_dir)
        table = pd.read_parquet(d / "sweep.parquet" if d.is_dir() else d)
        default_out = (d if d.is_dir() else d.parent) / _fname(y, x)
    else:
        table, default_out = table_or_dir, Path(_fname(y, x))
    for col in [x, y] + ([hue] if hue else []):
        if col not in table.columns:
            raise ScenarioError(f"plot: column '{col}' not in the sweep table; columns: {', '.join(map(str, table.columns))}")
    fig, ax = plt.subplots(figsize=(6, 4))
    groups = table.groupby(hue) if hue else [(None, table)]
    for label, g in groups:
        agg = g.groupby(x)[y].agg(["mean", "min", "max"]).reset_index()
        xs = agg[x].astype(str) if agg[x].dtype == object else agg[x]
        ax.plot(xs, agg["mean"], marker="o", label=None if label is None else f"{hue}={label}")
        ax.fill_between(xs, agg["min"], agg["max"], alpha=0.2)
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    if logy:
        ax.set_yscale("log")
    if hue:
        ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    path = Path(out) if out else default_out
    fig.savefig(path, dpi=150)
    fig.savefig(path.with_suffix(".pdf"))
    plt.close(fig)
    return path

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

The runs go through :mod:`sharebuf.executor` (content-addressed runs, memory checks, local
processes or Ray, resume, progress), as ``compare``, ``repro`` and ``tune`` do. The dotted keys
and their values are :mod:`sharebuf.scenario.overrides`' grammar, that of ``--set KEY=VALUE``.
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
from typing import Any, Dict, Optional, Sequence, Union

from .errors import ScenarioError
from .executor import SweepInterrupted, metrics_row, run_key, run_many, spec_key
from .scenario.engine_spec import resolve
from .scenario.load import parse_scenario, scenario_base, scenario_dict
from .scenario.overrides import add_set_argument, parse_sets, parse_values, set_path


def plan(scenario: Union[str, Path, dict, None], grid: Dict[str, Sequence[Any]], seeds: Optional[Sequence[int]] = None):
    """Expand the grid into validated scenario dicts: a list of (params, scenario)."""
    sc, base_dict = scenario_base(scenario)
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
        k = spec_key(spec)
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
                     **metrics_row(s), "run_dir": f"run-{keys[i]}"})
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


#: Names that moved (the ``--set`` grammar, the executor), still importable from here.
__all__ = ["sweep", "plan", "plot", "SweepInterrupted", "add_set_argument", "parse_sets", "parse_values", "scenario_dict",
           "set_path", "run_key", "run_many"]

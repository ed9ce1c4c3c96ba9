"""Parameter sweeps: run the cartesian product of scenario values (and seeds) on this
machine's cores, or on a Ray cluster, and collect one table row per run.

>>> import sharebuf.sweep as sw
>>> table = sw.sweep("default", {"switch.bm.scheme": ["dt", "abm"],
...                              "workload[1].request_fraction_of_buffer": [0.25, 0.5]},
...                  seeds=[1, 2], out="runs/alpha")
>>> table.groupby("switch.bm.scheme")["slowdown_p99.incast"].mean()

Keys are dotted scenario paths; ``workload[i]`` indexes the workload list. Every
combination is validated before anything runs. Each run writes its own directory
(``run-0000`` ...) and the sweep writes ``sweep.parquet`` (one row per run: the swept values,
the seed and the main summary metrics).
"""

from __future__ import annotations

import copy
import itertools
import json
import os
import re
import tempfile
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Union

from .config import load_scenario, parse_scenario, strip_profile_keys
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
        try:
            out.append(json.loads(tok))
        except json.JSONDecodeError:
            out.append(tok)
    return out


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
    return row


def _run_one(scenario: dict, out_dir: Optional[str]) -> dict:
    from .runner import run

    res = run(scenario, out=out_dir, progress=False)
    return res.summary


def plan(scenario: Union[str, Path, dict, None], grid: Dict[str, Sequence[Any]], seeds: Optional[Sequence[int]] = None):
    """Expand the grid into validated scenario dicts: a list of (params, scenario)."""
    sc, base, name = load_scenario(scenario)
    # Keys a profile sets stay unset unless the scenario set them, so a swept `profile` applies.
    base_dict = strip_profile_keys(sc, sc.model_dump(exclude_none=True, exclude_defaults=False))
    # Relative file names (CDFs, flow files) resolve against the scenario's directory.
    for w in base_dict.get("workload", []):
        for k in ("cdf", "file"):
            if isinstance(w.get(k), str) and not Path(w[k]).is_absolute() and (base / w[k]).exists():
                w[k] = str(base / w[k])
    base_dict["name"] = name
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
          use_ray: bool = False, progress: bool = False):
    """Run every point of ``grid`` (× ``seeds``) and return a pandas DataFrame, one row per run.

    ``jobs``: worker processes on this machine (default: all cores). ``use_ray``: run the points
    as Ray tasks instead (``ray_address`` of a cluster, or a local Ray). ``out``: directory for
    the runs' results and ``sweep.parquet``.
    """
    import pandas as pd

    runs = plan(scenario, grid, seeds)
    out_path = Path(out) if out is not None else None
    dirs = [str(out_path / f"run-{i:04d}") if out_path else None for i in range(len(runs))]
    summaries: List[Optional[dict]] = [None] * len(runs)
    bar = None
    if progress:
        from rich.progress import Progress

        bar = Progress(transient=True)
        bar.start()
        task = bar.add_task("sweep", total=len(runs))
    try:
        if use_ray:
            try:
                import ray
            except ImportError:
                raise ScenarioError("--ray needs Ray: pip install 'sharebuf[cluster]'") from None
            if not ray.is_initialized():
                ray.init(address=ray_address, ignore_reinit_error=True, log_to_driver=False)
            remote = ray.remote(_run_one)
            refs = {remote.remote(d, od): i for i, ((_, d), od) in enumerate(zip(runs, dirs))}
            pending = list(refs)
            while pending:
                done, pending = ray.wait(pending, num_returns=1)
                summaries[refs[done[0]]] = ray.get(done[0])
                if bar:
                    bar.advance(task)
        else:
            with ProcessPoolExecutor(max_workers=jobs or os.cpu_count() or 1) as ex:
                futs = {ex.submit(_run_one, d, od): i for i, ((_, d), od) in enumerate(zip(runs, dirs))}
                for f in as_completed(futs):
                    summaries[futs[f]] = f.result()
                    if bar:
                        bar.advance(task)
    finally:
        if bar:
            bar.stop()
    rows = []
    for i, ((params, _), s) in enumerate(zip(runs, summaries)):
        rows.append({"run": i, **{k: (json.dumps(v) if isinstance(v, (list, dict)) else v) for k, v in params.items()}, **_metrics(s)})
    table = pd.DataFrame(rows)
    if out_path is not None:
        out_path.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".sweep-", suffix=".parquet", dir=out_path)
        os.close(fd)
        table.to_parquet(tmp, index=False)
        os.replace(tmp, out_path / "sweep.parquet")
    return table


def _fname(y: str, x: str) -> str:
    clean = lambda t: re.sub(r"[^A-Za-z0-9._-]+", "_", t).strip("_")  # noqa: E731
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

"""Figures of a single run (``sharebuf plot RUN_DIR``) and of a scheme comparison
(``sharebuf compare``): PNG and PDF, matplotlib with the Agg backend."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Union

import numpy as np

from .classes import CLASSES, flow_classes
from .errors import ScenarioError

#: How many of the busiest ports ``plot_run`` draws.
BUSIEST_PORTS = 6


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    fig.savefig(path.with_suffix(".pdf"))
    _plt().close(fig)
    return path


def _cdf(ax, x, label):
    x = np.sort(np.asarray(x, dtype=float))
    if len(x):
        ax.plot(x, np.arange(1, len(x) + 1) / len(x), label=f"{label} (n={len(x)})", drawstyle="steps-post")


def _cdf_axes(ax, title):
    ax.set_xscale("log")
    ax.set_xlabel("slowdown (FCT / ideal FCT)")
    ax.set_ylabel("CDF")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8)


def is_run_dir(d: Path) -> bool:
    return (d / "summary.json").is_file() and (d / "flows.parquet").is_file()


def plot_run(run_dir: Union[str, Path], out: Union[str, Path, None] = None) -> Path:
    """Buffer occupancy over time per switch, queue occupancy of the busiest ports (if the run
    sampled queues: ``output.queue_sample_us``), slowdown CDF per workload and per class.
    Returns the PNG path (``RUN_DIR/run.png`` by default; a PDF beside it)."""
    import pandas as pd

    d = Path(run_dir)
    if not is_run_dir(d):
        raise ScenarioError(f"plot: '{d}' is not a run directory (no summary.json and flows.parquet)")
    plt = _plt()
    summary = json.loads((d / "summary.json").read_text())
    sw_names = list(summary["buffer"]["per_switch"])  # in switch-index order
    flows = pd.read_parquet(d / "flows.parquet")
    buf = pd.read_parquet(d / "buffer.parquet")
    qo = pd.read_parquet(d / "queue_occupancy.parquet") if (d / "queue_occupancy.parquet").is_file() else None
    fig, axes = plt.subplots(2, 2, figsize=(11, 7.5))
    ax = axes[0, 0]
    for sw, g in buf.groupby("switch", sort=True):
        ax.plot(g.time_s * 1e3, g.occupancy_bytes / 1e3, lw=0.8, label=sw)
    ax.set(xlabel="time (ms)", ylabel="occupancy (KB)", title="shared buffer occupancy per switch")
    ax.grid(alpha=0.3)
    if len(buf):
        ax.legend(fontsize=8)
    ax = axes[0, 1]
    if qo is not None and len(qo):
        top = qo.groupby(["switch", "port"])["bytes"].mean().nlargest(BUSIEST_PORTS).index
        for sw, port in top:
            g = qo[(qo.switch == sw) & (qo.port == port)].groupby("time_s")["bytes"].sum()
            name = sw_names[sw] if sw < len(sw_names) else f"switch {sw}"
            ax.plot(g.index * 1e3, g.values / 1e3, lw=0.8, label=f"{name} port {port}")
        ax.legend(fontsize=8)
        ax.set_title(f"queue occupancy of the {len(top)} busiest ports (all queues)")
    else:
        ax.text(0.5, 0.5, "no queue samples:\nrun with --set output.queue_sample_us=100", ha="center", va="center", transform=ax.transAxes)
        ax.set_title("queue occupancy of the busiest ports")
    ax.set(xlabel="time (ms)", ylabel="occupancy (KB)")
    ax.grid(alpha=0.3)
    done = flows[flows.finished]
    ax = axes[1, 0]
    for w, g in done.groupby("workload", sort=False):
        _cdf(ax, g.slowdown, w)
    _cdf_axes(ax, "slowdown per workload")
    ax = axes[1, 1]
    masks = flow_classes(done)
    for c, label in CLASSES.items():
        _cdf(ax, done.slowdown[masks[c]], label)
    _cdf_axes(ax, "slowdown per class")
    fig.suptitle(f"{summary['scenario']} (seed {summary['seed']}): {d}")
    return _save(fig, Path(out) if out else d / "run.png")


def plot_compare(out_dir: Union[str, Path], runs, schemes: Sequence[str], out: Union[str, Path, None] = None) -> Path:
    """One slowdown CDF per class (one line per scheme, all seeds pooled) and the buffer
    occupancy over time of the busiest switch (first seed). ``runs``: the sweep table."""
    import pandas as pd

    plt = _plt()
    base = Path(out_dir)
    fig, axes = plt.subplots(1, len(CLASSES) + 1, figsize=(4.2 * (len(CLASSES) + 1), 3.8))
    first_seed = runs["seed"].min()
    for s in schemes:
        rows = runs[runs["switch.bm.scheme"] == s]
        flows = pd.concat([pd.read_parquet(base / r / "flows.parquet") for r in rows.run_dir], ignore_index=True)
        done = flows[flows.finished]
        masks = flow_classes(done)
        for ax, c in zip(axes, CLASSES):
            _cdf(ax, done.slowdown[masks[c]], s)
        r0 = rows[rows.seed == first_seed].run_dir.iloc[0]
        buf = pd.read_parquet(base / r0 / "buffer.parquet")
        if len(buf):
            busiest = buf.groupby("switch")["occupancy_bytes"].mean().idxmax()
            g = buf[buf.switch == busiest]
            axes[-1].plot(g.time_s * 1e3, g.occupancy_bytes / 1e3, lw=0.7, label=f"{s} ({busiest})")
    for ax, (c, label) in zip(axes, CLASSES.items()):
        _cdf_axes(ax, label)
    ax = axes[-1]
    ax.set(xlabel="time (ms)", ylabel="occupancy (KB)", title=f"buffer of the busiest switch, seed {first_seed}")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return _save(fig, Path(out) if out else base / "compare.png")


__all__: List[str] = ["plot_run", "plot_compare", "is_run_dir"]


def plot_search(table, objective: str, keys: List[str], direction: str, path: Path, logs: Optional[Dict[str, bool]] = None) -> Path:
    """Objective vs trial (running best of the feasible trials as a line) and vs each parameter;
    infeasible trials as red crosses."""
    plt = _plt()
    n = 1 + len(keys)
    fig, axes = plt.subplots(1, n, figsize=(4.2 * n, 3.6), squeeze=False)
    axes = axes[0]
    ok = table["feasible"].to_numpy(dtype=bool)
    y = table["value"].astype(float).to_numpy()
    x = table["trial"].to_numpy()
    ax = axes[0]
    ax.scatter(x[ok], y[ok], s=22, label="feasible")
    ax.scatter(x[~ok], y[~ok], s=28, marker="x", color="tab:red", label="infeasible")
    best = np.full(len(y), np.nan)
    cur = np.nan
    for i in range(len(y)):
        if ok[i] and not np.isnan(y[i]):
            cur = y[i] if np.isnan(cur) else (min(cur, y[i]) if direction == "minimize" else max(cur, y[i]))
        best[i] = cur
    ax.step(x, best, where="post", color="k", lw=1, label="best feasible")
    ax.set_xlabel("trial")
    ax.set_ylabel(objective)
    ax.legend(fontsize=7)
    for ax, k in zip(axes[1:], keys):
        xv = table[k].astype(float).to_numpy()
        ax.scatter(xv[ok], y[ok], s=22)
        ax.scatter(xv[~ok], y[~ok], s=28, marker="x", color="tab:red")
        if (logs or {}).get(k):
            ax.set_xscale("log")
        ax.set_xlabel(k)
        ax.set_ylabel(objective)
    for ax in axes:
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)
    return path

"""Figures (matplotlib, laid out like the paper's: one panel per sub-figure), the claims table
and the index page of ``repro all``."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Dict

import numpy as np

from .spec import FigureSpec


def series_table(ft, metric: str) -> Dict[str, Dict[float, float]]:
    """{series: {x: mean over seeds of metric}} for one figure's points."""
    out: Dict[str, Dict[float, float]] = {}
    if metric not in ft.columns:
        return out
    for (series, x), g in ft.groupby(["series", "x"]):
        v = g[metric].to_numpy(dtype=float)
        v = v[~np.isnan(v)]
        out.setdefault(series, {})[float(x)] = float(v.mean()) if len(v) else math.nan
    return out


def _match(patterns, names):
    """Panel series: exact names or glob patterns ("a: *"); default all, in order."""
    import fnmatch

    if not patterns:
        return names
    return [n for n in names if any(fnmatch.fnmatchcase(n, p) for p in patterns)]


def draw(spec: FigureSpec, ft, out: Path) -> list:
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    n = len(spec.panels)
    rows, cols = spec.layout or (1, n)
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.4 * rows), squeeze=False)
    order = [s.name for s in spec.series] or list(dict.fromkeys(ft.series))
    xs_scale = spec.x.display_scale if spec.x else 1.0
    for ax, panel in zip(axes.flat, spec.panels):
        names = _match(panel.series, order + [n for n in dict.fromkeys(ft.series) if n not in order])
        if panel.metric not in ft.columns:
            ax.set_visible(False)
            continue
        for i, name in enumerate(names):
            g = ft[ft.series == name]
            if g.empty:
                continue
            agg = g.groupby("x")[panel.metric].agg(["mean", "min", "max"]).reset_index().sort_values("x")
            x = agg["x"].to_numpy() * xs_scale
            y = agg["mean"].to_numpy(dtype=float)
            y = np.where(np.isfinite(y), y, np.nan)
            if panel.bars:
                ax.bar([i], [y[0]], label=name)
                continue
            marker = "o" if len(x) <= 12 else None
            ax.plot(x, y, marker=marker, label=name)
            if (agg["max"] > agg["min"]).any():
                ax.fill_between(x, agg["min"], agg["max"], alpha=0.15)
        if panel.bars:
            ax.set_xticks(range(len(names)), names, rotation=30)
        else:
            ax.set_xlabel(panel.x_label or (spec.x.label if spec.x else spec.x_label))
            if spec.x and spec.x.log:
                ax.set_xscale("log")
        ax.set_ylabel(panel.label)
        if panel.log:
            ax.set_yscale("log")
        ax.set_title(f"({panel.id}) {panel.title}".strip())
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    fig.suptitle(f"{spec.paper} {spec.figure}: {spec.title}  [sharebuf, {spec.kind}]", fontsize=10)
    fig.tight_layout()
    paths = [out / f"{spec.id}.png", out / f"{spec.id}.pdf"]
    for p in paths:
        fig.savefig(p, dpi=110)
    plt.close(fig)
    return paths


def _fmt(v) -> str:
    if v is None:
        return "—"
    if isinstance(v, str):
        return v
    if isinstance(v, float) and math.isnan(v):
        return "n/a"
    return f"{v:.3g}"


def _figure_md(fid: str, f: dict, spec, image: bool) -> list:
    title = f"{spec.paper} {spec.figure}: {spec.title}" if spec else fid
    held = sum(c["holds"] for c in f["claims"])
    # Per-seed verdicts (claims.evaluate_points) exist only when the figure ran more than one seed.
    per_seed = any("seeds_total" in c for c in f["claims"])
    every = (f" (mean over seeds); held in every seed alone {sum(c.get('seeds_holding') == c.get('seeds_total') for c in f['claims'])}"
             if per_seed else "")
    lines = [f"## {fid} — {title}", "", f"{spec.description if spec else ''} Scale `{f['scale']}`, seeds {f['seeds']}; "
             f"claims held {held} of {len(f['claims'])}{every}.", ""]
    if image:
        lines += [f"![{fid}]({fid}.png)", ""]
    if not f["claims"]:
        return lines + ["(no numeric claims)", ""]
    if per_seed:
        lines += ["| claim | panel | paper | measured | rule | holds | seeds | measured per seed | why |",
                  "|---|---|---|---|---|---|---|---|---|"]
    else:
        lines += ["| claim | panel | paper | measured | rule | holds | why |", "|---|---|---|---|---|---|---|"]
    for c in f["claims"]:
        seeds = (f" {_seeds_held(c)} | {_per_seed(c)} |" if per_seed else "")
        lines.append(f"| {c['text']} | {c['panel']} | {_fmt(c['paper_value'])} | {_fmt(c['measured'])} | {c['rule']} | "
                     f"{'yes' if c['holds'] else '**no**'} |{seeds} {c['why']} |")
    return lines + [""]


def _seeds_held(c: dict) -> str:
    """"2/3": the seeds a claim holds in alone, of those run ("—" without per-seed verdicts)."""
    return f"{c['seeds_holding']}/{c['seeds_total']}" if "seeds_total" in c else "—"


def _per_seed(c: dict) -> str:
    """The measured value of each seed alone, ascending seeds: "s1 0.52, s2 0.61"."""
    return ", ".join(f"s{s} {_fmt(v)}" for s, v in c.get("measured_by_seed", {}).items()) or "—"


def _count(allc: dict):
    return sum(c["holds"] for f in allc.values() for c in f["claims"]), sum(len(f["claims"]) for f in allc.values())


def claims_md(allc: dict, specs: Dict[str, FigureSpec]) -> str:
    held, total = _count(allc)
    lines = ["# Claims checked", "", f"Claims held: **{held} of {total}**.", ""]
    for fid, f in allc.items():
        lines += _figure_md(fid, f, specs.get(fid), image=False)
    return "\n".join(lines) + "\n"


def index_md(allc: dict, specs: Dict[str, FigureSpec], wall_s: float, scale: str) -> str:
    held, total = _count(allc)
    lines = ["# sharebuf reproductions", "", f"Scale `{scale}`, {len(allc)} figures, wall time {wall_s / 60:.1f} min. "
             f"Claims held: **{held} of {total}**.", ""]
    per: dict = {}
    for fid, f in allc.items():
        p = specs[fid].paper if fid in specs else "?"
        h, t = per.get(p, (0, 0))
        per[p] = (h + sum(c["holds"] for c in f["claims"]), t + len(f["claims"]))
    lines += ["| paper | claims held |", "|---|---|"] + [f"| {p} | {h} / {t} |" for p, (h, t) in per.items()] + [""]
    for fid, f in allc.items():
        lines += _figure_md(fid, f, specs.get(fid), image=True)
    return "\n".join(lines) + "\n"

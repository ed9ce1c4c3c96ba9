"""Figures (matplotlib, laid out like the paper's: one panel per sub-figure), the claims table
and the index page of ``repro all``."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Dict, Optional, Sequence

import numpy as np

from .spec import FigureSpec


def series_table(ft, metric: str) -> Dict[str, Dict[float, float]]:
    """{series: {x: mean over seeds of metric}} for one figure's per-seed points (pooled rows,
    if any, are left out)."""
    out: Dict[str, Dict[float, float]] = {}
    if metric not in ft.columns:
        return out
    if "pooled" in ft.columns:
        ft = ft[~ft["pooled"].fillna(False).astype(bool)]
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
        pooled_col = ft["pooled"].fillna(False).astype(bool) if "pooled" in ft.columns else None
        rto = _rto_column(panel.metric)
        marked = False
        for i, name in enumerate(names):
            g = ft[ft.series == name]
            if g.empty:
                continue
            per = g[~pooled_col[g.index]] if pooled_col is not None else g
            pool = g[pooled_col[g.index]] if pooled_col is not None else g.iloc[0:0]
            spread = per.groupby("x")[panel.metric].agg(["mean", "min", "max"]).reset_index().sort_values("x")
            if not pool.empty:
                line = pool.sort_values("x")
                x, y = line["x"].to_numpy() * xs_scale, line[panel.metric].to_numpy(dtype=float)
            else:
                line = spread.rename(columns={"mean": panel.metric})
                x, y = spread["x"].to_numpy() * xs_scale, spread["mean"].to_numpy(dtype=float)
            y = np.where(np.isfinite(y), y, np.nan)
            if panel.bars:
                ax.bar([i], [y[0]], label=name)
                if len(spread) and spread["max"].iloc[0] > spread["min"].iloc[0]:
                    ax.errorbar([i], [y[0]], yerr=[[y[0] - spread["min"].iloc[0]], [spread["max"].iloc[0] - y[0]]], fmt="none", color="k", lw=1)
                continue
            marker = "o" if len(x) <= 12 else None
            (ln,) = ax.plot(x, y, marker=marker, label=name)
            if (spread["max"] > spread["min"]).any():
                ax.fill_between(spread["x"].to_numpy() * xs_scale, spread["min"], spread["max"], alpha=0.15, color=ln.get_color())
            if rto is not None and rto[0] in line.columns:
                hit = line[rto[0]].to_numpy(dtype=float) >= rto[1]
                if hit.any():
                    ax.scatter(x[hit], y[hit], marker="x", s=60, color="k", zorder=5)
                    marked = True
        if marked:
            ax.annotate(f"×: ≥ {rto[1]:g}% of the class timed out", xy=(0.01, 0.01), xycoords="axes fraction", fontsize=6)
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


def _rto_column(metric: str):
    """(rto column, threshold %) for a tail panel: a p99 is a timeout once ≥ 1% of its class
    waited one out (p99.9: 0.1%)."""
    fam, _, rest = metric.partition(".")
    parts = rest.split(".")
    if fam not in ("slowdown", "fct") or len(parts) < 2:
        return None
    p = parts[0].replace("_ms", "")
    thr = {"p99": 1.0, "p999": 0.1, "p95": 5.0, "p90": 10.0}.get(p)
    return None if thr is None else (f"rto_pct.{'.'.join(parts[1:])}", thr)


def _fmt(v) -> str:
    if v is None:
        return "—"
    if isinstance(v, str):
        return v
    if isinstance(v, float) and math.isnan(v):
        return "n/a"
    return f"{v:.3g}"


VERDICT_MD = {"holds": "holds", "fails": "**fails**", "inconclusive": "*inconclusive*"}


def _verdict(c: dict) -> str:
    return c.get("verdict") or ("holds" if c.get("holds") else "fails")


def _interval(c: dict) -> str:
    iv = c.get("interval")
    if not iv or iv[0] is None or iv[1] is None or (isinstance(iv[0], float) and math.isnan(iv[0])):
        return _fmt(c.get("measured"))
    if iv[0] == iv[1] == c.get("measured"):
        return _fmt(c.get("measured"))
    return f"{_fmt(c.get('measured'))} [{_fmt(iv[0])}, {_fmt(iv[1])}]"


def _span(vals, fmt) -> str:
    vals = [v for v in (vals or []) if v is not None and not (isinstance(v, float) and math.isnan(v))]
    if not vals:
        return ""
    lo, hi = min(vals), max(vals)
    return fmt(lo) if lo == hi else f"{fmt(lo)}–{fmt(hi)}"


def _evidence_md(ev) -> str:
    """"ABM: 4,320 flows, RTO 0%; drops 512 (bm_threshold 512)" per series, ranges over x."""
    parts = []
    for e in ev or []:
        bits = []
        if e.get("flows") is not None:
            bits.append(f"{_span(e['flows'], lambda v: f'{v:,.0f}')} flows")
        if e.get("rto_pct") is not None:
            bits.append(f"RTO {_span(e['rto_pct'], lambda v: f'{v:.2g}')}%")
        if e.get("drops") is not None:
            causes = ", ".join(f"{k} {_span(v, lambda u: f'{u:,.0f}')}" for k, v in e.get("drops_by_cause", {}).items())
            bits.append(f"drops {_span(e['drops'], lambda v: f'{v:,.0f}')}" + (f" ({causes})" if causes else ""))
        if bits:
            parts.append(f"{e['series']}: " + ", ".join(bits))
    return "; ".join(parts)


def _ns3dc_md(c: dict) -> str:
    n = c.get("ns3dc")
    if not n:
        return ""
    if not n.get("covered"):
        if n.get("not_in_fct"):
            return "not in its fct files (flows only)"
        return "fct files not found" if n.get("missing") else "no run at this claim's x values"
    who = f" ({', '.join(n['series'])})" if n.get("series") else ""
    return (f"{_interval(n)}{who}: {VERDICT_MD[n['verdict']]}; {_evidence_md(n.get('evidence'))}"
            + (f" — {c['verdict_vs_ns3dc']}" if c.get("verdict_vs_ns3dc") else ""))


def _counts(claims) -> Dict[str, int]:
    out = {v: 0 for v in VERDICT_MD}
    for c in claims:
        out[_verdict(c)] += 1
    return out


def _counts_md(k: Dict[str, int]) -> str:
    return f"{k['holds']} hold, {k['fails']} fail, {k['inconclusive']} inconclusive"


def _figure_md(fid: str, f: dict, spec, image: bool) -> list:
    title = f"{spec.paper} {spec.figure}: {spec.title}" if spec else fid
    per_seed = any("seeds_total" in c for c in f["claims"])
    has_ns3dc = any("ns3dc" in c for c in f["claims"])
    runs = f"Scale `{f['scale']}`, seeds {f['seeds']}" if f.get("seeds") else "Deterministic (no seeds)"
    lines = [f"## {fid} — {title}", "", f"{spec.description if spec else ''} {runs}; claims: {_counts_md(_counts(f['claims']))}.", ""]
    if image:
        lines += [f"![{fid}]({fid}.png)", ""]
    if not f["claims"]:
        return lines + ["(no numeric claims)", ""]
    head = ["claim", "panel", "paper", "measured [95% interval]", "rule", "verdict"]
    if per_seed:
        head += ["seeds holding", "per seed"]
    head += ["rests on"] + (["the authors' simulator (ns3dc)"] if has_ns3dc else []) + ["why"]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for c in f["claims"]:
        cells = [c["text"], c["panel"], _fmt(c["paper_value"]), _interval(c), c["rule"], VERDICT_MD[_verdict(c)]]
        if per_seed:
            cells += [_seeds_held(c), _per_seed(c)]
        cells += [_evidence_md(c.get("evidence"))] + ([_ns3dc_md(c)] if has_ns3dc else []) + [c.get("why", "")]
        lines.append("| " + " | ".join(str(x).replace("|", "\\|") for x in cells) + " |")
    return lines + [""]


def _seeds_held(c: dict) -> str:
    """"2/3": the seeds a claim holds in alone, of those run ("—" without per-seed verdicts)."""
    return f"{c['seeds_holding']}/{c['seeds_total']}" if "seeds_total" in c else "—"


def _per_seed(c: dict) -> str:
    """The measured value of each seed alone, ascending seeds: "s1 0.52, s2 0.61"."""
    return ", ".join(f"s{s} {_fmt(v)}" for s, v in c.get("measured_by_seed", {}).items()) or "—"


def _count(allc: dict) -> Dict[str, int]:
    return _counts([c for f in allc.values() for c in f["claims"]])


def claims_md(allc: dict, specs: Dict[str, FigureSpec]) -> str:
    k = _count(allc)
    lines = ["# Claims checked", "", f"Claims: **{_counts_md(k)}** of {sum(k.values())}.", ""]
    for fid, f in allc.items():
        lines += _figure_md(fid, f, specs.get(fid), image=False)
    return "\n".join(lines) + "\n"


def index_md(allc: dict, specs: Dict[str, FigureSpec], wall_s: float, scale: str) -> str:
    k = _count(allc)
    lines = ["# sharebuf reproductions", "", f"Scale `{scale}`, {len(allc)} figures, wall time {wall_s / 60:.1f} min. "
             f"Claims: **{_counts_md(k)}** of {sum(k.values())}.", ""]
    lines += paper_table(allc, specs) + [""]
    for fid, f in allc.items():
        lines += _figure_md(fid, f, specs.get(fid), image=True)
    return "\n".join(lines) + "\n"


def paper_table(allc: dict, specs: Dict[str, FigureSpec], wall_by_paper: Optional[Dict[str, float]] = None,
                cpu_by_paper: Optional[Dict[str, float]] = None, estimated: Sequence[str] = ()) -> list:
    """Claims holding / failing / inconclusive per paper, with the wall time of each paper's
    command and the CPU time of its runs (each distinct run counted once), when given; a paper in
    ``estimated`` has its wall time marked *est.*"""
    per: Dict[str, list] = {}
    for fid, f in allc.items():
        per.setdefault(specs[fid].paper if fid in specs else "?", []).extend(f["claims"])
    wall, cpu = bool(wall_by_paper), bool(cpu_by_paper)
    lines = ["| paper | claims | hold | fail | inconclusive |" + (" wall time |" if wall else "") + (" CPU time of its runs |" if cpu else ""),
             "|---|---|---|---|---|" + ("---|" if wall else "") + ("---|" if cpu else "")]
    for p, cl in per.items():
        k = _counts(cl)
        lines.append(f"| {p} | {len(cl)} | {k['holds']} | {k['fails']} | {k['inconclusive']} |"
                     + (f" {_duration(wall_by_paper.get(p, 0))}{' *est.*' if p in estimated else ''} |" if wall else "")
                     + (f" {_duration(cpu_by_paper.get(p, 0))} |" if cpu else ""))
    return lines


def _duration(s: float) -> str:
    return f"{s / 60:.1f} min" if s >= 60 else f"{s:.0f} s"


def cpu_by_paper(points, specs: Dict[str, FigureSpec]) -> Dict[str, float]:
    """CPU seconds of the distinct runs behind each paper's figures (points.parquet's per-run
    rows; a run two papers share counts with the first)."""
    seen, out = set(), {}
    rows = points[~points["pooled"].fillna(False).astype(bool)] if "pooled" in points.columns else points
    for fid in specs:
        g = rows[(rows.figure == fid) & (rows.run != "")].drop_duplicates("run")
        g = g[~g.run.isin(seen)]
        seen |= set(g.run)
        p = specs[fid].paper
        cpu = g["cpu_s"].fillna(g["wall_s"]) if "cpu_s" in g else g["wall_s"]
        out[p] = out.get(p, 0.0) + float(cpu.sum())
    return out

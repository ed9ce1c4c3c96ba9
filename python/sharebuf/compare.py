"""Compare buffer-management schemes on one scenario: ``sharebuf compare SCENARIO --schemes dt,abm``.

Each scheme runs with its documented defaults (``[switch.bm]`` is replaced by ``scheme = X``;
``--set switch.bm.KEY=V`` still applies to every scheme), for every seed, on the sweep engine
(parallel or Ray, resumable in the same ``--out``). The table puts the schemes side by side:
per metric the mean over seeds and its spread (min–max); a difference from the first scheme
is *marked* when the two seed ranges do not overlap (every seed of one scheme is better than
every seed of the other), i.e. it is larger than the seed-to-seed spread.

>>> from sharebuf.compare import compare
>>> c = compare("default", ["dt", "abm"], seeds=[1, 2, 3], out="runs/cmp")
>>> c.table          # one row per (metric, scheme): mean, min, max, seeds, marked
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Union

from .classes import CLASSES
from .errors import ScenarioError
from .scenario.load import scenario_dict
from .sweep import sweep

#: (sweep column, label, scale, format); lower is better for every metric.
METRICS = [m for c, label in CLASSES.items() for m in
           [(f"class_slowdown_{q}.{c}", f"{label} slowdown {q}", 1.0, "{:.2f}") for q in ("p50", "p99")]
           # next to the tail: the % of the class that waited out a retransmission timeout (a p99 is a
           # timeout once it is >= 1)
           + [(f"class_rto_pct.{c}", f"{label} % that timed out", 1.0, "{:.2f}")]] + [
    ("qct_p99_s", "query completion p99 (ms)", 1e3, "{:.2f}"),
    ("drops", "drops (packets)", 1.0, "{:.0f}"),
    ("buffer_p99_bytes", "buffer occupancy p99 (KB)", 1e-3, "{:.0f}"),
]
SCHEME_KEY = "switch.bm.scheme"


@dataclass
class Comparison:
    table: Any            # pandas: metric, label, scheme, mean, min, max, seeds, marked
    runs: Any             # pandas: the sweep table (one row per scheme x seed)
    schemes: List[str]
    out: Optional[Path]
    #: Caveats about how a scheme ran on this scenario (printed under the table, kept in compare.md).
    notes: List[str] = field(default_factory=list)

    def render(self) -> List[List[str]]:
        """Rows of strings: header, then one row per metric (mean [min–max], '*' if marked)."""
        rows = [["metric"] + self.schemes]
        for col, label, _, fmt in METRICS:
            t = self.table[self.table.metric == col]
            if t.empty or t["mean"].isna().all():
                continue
            cells = []
            for s in self.schemes:
                r = t[t.scheme == s].iloc[0]
                if r["mean"] != r["mean"]:  # NaN: no finished flow of this class
                    cells.append("-")
                    continue
                cell = fmt.format(r["mean"])
                if r["seeds"] > 1:
                    cell += f" [{fmt.format(r['min'])}–{fmt.format(r['max'])}]"
                cells.append(cell + (" *" if r["marked"] else ""))
            rows.append([label] + cells)
        return rows

    def markdown(self) -> str:
        rows = self.render()
        lines = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * len(rows[0])]
        lines += ["| " + " | ".join(r) + " |" for r in rows[1:]]
        notes = "".join(f"\n- {n}" for n in self.notes)
        return "\n".join(lines) + "\n\n" + FOOTNOTE.format(base=self.schemes[0]) + "\n" + (f"\nNotes:{notes}\n" if notes else "")


FOOTNOTE = ("mean over seeds [min–max]; * = differs from {base} by more than the seed-to-seed spread "
            "(the two ranges do not overlap; needs >= 2 seeds)")


def check_schemes(schemes: Sequence[str]) -> List[str]:
    from . import _core

    allowed = _core.schemes()
    out = [s.strip() for s in schemes if s.strip()]
    bad = [s for s in out if s not in allowed]
    if bad or not out:
        raise ScenarioError(f"--schemes {','.join(schemes)!r}: unknown scheme {bad[0] if bad else '(none)'!r}; allowed: {', '.join(allowed)}")
    if len(set(out)) != len(out):
        raise ScenarioError(f"--schemes {','.join(schemes)!r}: a scheme is given twice")
    return out


def scheme_notes(d: dict, schemes: Sequence[str]) -> List[str]:
    """Caveats that change how a scheme's column should be read on scenario ``d`` (after --set)."""
    notes = []
    bm, sw = d["switch"]["bm"], d["switch"]
    for s in schemes:
        if s not in ("fb", "fba", "fb_pisa") or "high" in bm or "alpha" in bm:
            continue
        multi = bm.get("mode", "multi" if sw.get("queues_per_port", 1) > 1 else "single") == "multi"
        if multi:
            notes.append(f"{s}: no queue is marked high priority (switch.bm.high), so incast responses are in FB's low class: "
                         f"a congested queue gets α_L/N_p of the free buffer (α_L = {bm.get('alpha_low', 0.5)}, N_p = the congested "
                         f"low-priority queues of the switch), less than DT gives it, and bursts are dropped. FB protects the bursts "
                         f"of a high class (α_H = {bm.get('alpha_high', 20)}): mark the incast's queue high, or try FB's single-queue "
                         f"mode (flow-size classifier): sharebuf run SCENARIO --set switch.bm.scheme={s} --set switch.bm.mode=single")
    return notes


def summarize(runs, schemes: Sequence[str]):
    """Per metric and scheme: mean, min, max over seeds, and whether it differs from the first
    scheme by more than the seed-to-seed spread (disjoint min–max ranges, >= 2 seeds each)."""
    import pandas as pd

    rows = []
    for col, label, scale, _ in METRICS:
        if col not in runs.columns:
            continue
        stats = {}
        for s in schemes:
            x = runs.loc[runs[SCHEME_KEY] == s, col].astype(float).dropna() * scale
            stats[s] = (float(x.mean()) if len(x) else float("nan"), float(x.min()) if len(x) else float("nan"),
                        float(x.max()) if len(x) else float("nan"), int(len(x)))
        b = stats[schemes[0]]
        for s in schemes:
            m, lo, hi, n = stats[s]
            marked = s != schemes[0] and n > 1 and b[3] > 1 and (lo > b[2] or hi < b[1])
            rows.append(dict(metric=col, label=label, scheme=s, mean=m, min=lo, max=hi, seeds=n, marked=bool(marked)))
    return pd.DataFrame(rows)


def compare(scenario: Union[str, Path, dict, None], schemes: Sequence[str], *, seeds: Optional[Sequence[int]] = None,
            sets: Optional[Dict[str, Any]] = None, out: Union[str, Path, None] = None, jobs: Optional[int] = None,
            use_ray: bool = False, ray_address: Optional[str] = None, progress: bool = False, figure: bool = True) -> Comparison:
    """Run ``scenario`` under each scheme (documented defaults) and seed; write ``compare.parquet``,
    ``compare.md``, ``sweep.parquet``, the run directories and ``compare.png``/``.pdf`` to ``out``."""
    schemes = check_schemes(schemes)
    if SCHEME_KEY in (sets or {}):
        raise ScenarioError(f"--set {SCHEME_KEY}: compare takes the schemes from --schemes")
    d = scenario_dict(scenario)
    d["switch"]["bm"] = {"scheme": schemes[0]}
    d = scenario_dict(d, sets)  # --set after the reset: switch.bm.* keys apply to every scheme
    runs = sweep(d, {SCHEME_KEY: schemes}, seeds=seeds, out=out, jobs=jobs, use_ray=use_ray,
                 ray_address=ray_address, progress=progress, label="compare")
    out_path = Path(out) if out is not None else None
    c = Comparison(table=summarize(runs, schemes), runs=runs, schemes=schemes, out=out_path, notes=scheme_notes(d, schemes))
    if out_path is not None:
        _atomic_write(out_path / "compare.parquet", lambda p: c.table.to_parquet(p, index=False))
        _atomic_write(out_path / "compare.md", lambda p: Path(p).write_text(c.markdown()))
        if figure:
            from .figures import plot_compare

            plot_compare(out_path, runs, schemes)
    return c


def _atomic_write(path: Path, write) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}-", suffix=path.suffix, dir=path.parent)
    os.close(fd)
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


__all__ = ["compare", "Comparison", "METRICS", "summarize", "check_schemes"]

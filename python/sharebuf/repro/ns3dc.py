"""The ABM authors' simulator (ns3dc) as a column of the claims table.

A figure spec's ``[ns3dc]`` table lists ns3dc runs of the figure's setup (fct files, one per seed,
committed with the command lines that made them under ``bench/ns3dc/results/``). Their flows are
read into the same :class:`.samples.RunFlows` as sharebuf's runs, so every claim those runs cover
is evaluated by the same rule, pooled and resampled the same way.

An fct file has one row per *finished* flow (``time flowsize fct basefct slowdown basertt
flowstart priority incast``, times in ns except ``flowstart`` in µs): a flow ns3dc did not finish
is absent. Slowdown is ns3dc's: fct / (base RTT + size·8 / host link). ns3dc reports no
retransmission timeouts; a flow whose FCT is at least ns3dc's minimum RTO (10 ms) is counted as
having waited one out. Incast responses of one query share its ``flowstart``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Dict, List, Optional, Tuple

import numpy as np

from .samples import RunFlows
from .spec import FigureSpec

#: ns3dc's minimum (and initial) RTO: an FCT at least this long waited one out.
MIN_RTO_S = 10e-3


def repo_root() -> Optional[Path]:
    """The repository checkout whose ``bench/ns3dc/results`` holds the fct files: ``$SHAREBUF_REPO``,
    else the working directory or one above it, else the checkout this package runs from (an
    editable install); None when there is none (an installed package run elsewhere)."""
    import os

    def is_repo(p: Path) -> bool:
        return (p / "bench" / "ns3dc").is_dir() and (p / "python" / "sharebuf").is_dir()

    env = os.environ.get("SHAREBUF_REPO")
    if env:
        return Path(env) if is_repo(Path(env)) else None
    for start in (Path.cwd().resolve(), Path(__file__).resolve()):
        for p in (start, *start.parents):
            if is_repo(p):
                return p
    return None


def read_fct(path: Path, spec: FigureSpec, start_window_ms: Optional[float] = None) -> RunFlows:
    import pandas as pd

    ref = spec.ns3dc
    d = pd.read_csv(path, sep=r"\s+")
    if start_window_ms is not None:
        d = d[d["flowstart"] < start_window_ms * 1e3]
    inc = d["incast"].to_numpy() == 1
    wl = np.array([ref.workloads.get(str(int(p)), f"priority{int(p)}") for p in d["priority"]], dtype=object)
    wl[inc] = ref.incast_workload
    fct_s = d["fct"].to_numpy(dtype=float) * 1e-9
    size = d["flowsize"].to_numpy(dtype=np.int64)
    ideal = ref.base_rtt_us * 1e-6 + size * 8 / (ref.link_gbps * 1e9)
    _, qid = np.unique(d["flowstart"].to_numpy(dtype=float), return_inverse=True)
    flows = pd.DataFrame(dict(
        size_bytes=size, workload=wl, finished=True, fct_s=fct_s, start_s=d["flowstart"].to_numpy(dtype=float) * 1e-6,
        slowdown=fct_s / ideal, timeouts=(fct_s >= MIN_RTO_S).astype(np.int64), retransmits=np.nan,
        query_id=np.where(inc, qid, -1)))
    return RunFlows(flows, None, {ref.incast_workload}, end_s=float(d["time"].max()) if len(d) else 0.0)


def points(spec: FigureSpec, root: Optional[Path] = None) -> Tuple[Dict[Tuple[str, float], Dict[int, RunFlows]], List[str]]:
    """ns3dc's runs of a figure as {(series, x): {seed index: RunFlows}}, and the files missing
    (a checkout without bench/ns3dc, or a path that does not exist)."""
    out: Dict[Tuple[str, float], Dict[int, RunFlows]] = {}
    missing: List[str] = []
    if spec.ns3dc is None:
        return out, missing
    root = root or repo_root()
    for r in spec.ns3dc.runs:
        for i, f in enumerate(r.files):
            p = (root / f) if root is not None else None
            if p is None or not p.is_file():
                missing.append(f)
                continue
            out.setdefault((r.series, float(r.x)), {})[i + 1] = read_fct(p, spec, r.start_window_ms)
    return out, missing


def covered(c, pts, xs) -> Tuple[bool, List[str]]:
    """Whether ns3dc's runs cover the claim: its series at every x it looks at among the figure's
    ``xs`` (a rule over x needs all of them), with at least one of its other series; and which of
    its other series they have."""
    from .verdict import claim_points

    need = claim_points(c, sorted(float(x) for x in xs))
    have = {}
    for s, x in pts:
        have.setdefault(s, set()).add(float(x))
    if not need or not set(need) <= have.get(c.series, set()):
        return False, []
    others = [o for o in c.others if set(need) <= have.get(o, set())]
    return (not c.others or bool(others)), others

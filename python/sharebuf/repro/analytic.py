"""Point generators of the analytical and toy figures, registered by name.

Each takes the spec's ``args`` and returns rows ``{"series", "x", <metric>: value}``; the
claims are then checked on these rows like on simulation points. The numbers come from the
analysis toolkit (:mod:`sharebuf.analysis`), which its own tests check against the fluid
integrator and the packet simulator.
"""

from __future__ import annotations

import math
from typing import Callable, Dict, List

from ..analysis.model import QueueSpec
from ..analysis.steady_state import steady_state
from ..errors import ScenarioError
from .spec import FigureSpec

Rows = List[dict]


def _ss(scheme: str, B: float, queues: List[QueueSpec]):
    return steady_state(scheme, B, queues)


def dt_allocation_vs_congested(buffer_bytes: float, alphas: List[float], n_max: int, alpha_af: float, alpha_be: float) -> Rows:
    """ABM Fig. 4 (DT, Eq. 6). Top: B − Q with n congested queues of one α (one curve per α).
    Bottom: the threshold of one congested AF queue (α_AF) as n_BE queues (α_BE) become congested."""
    rows = []
    for a in alphas:
        for n in range(1, n_max + 1):
            st = _ss("dt", buffer_bytes, [QueueSpec(port=i, priority=0, alpha=a) for i in range(n)])
            rows.append(dict(series=f"α = {a:g}", x=n, remaining_fraction=st.remaining_bytes / buffer_bytes))
    for n in range(0, n_max + 1):
        qs = [QueueSpec(port=0, priority=0, alpha=alpha_af)] + [QueueSpec(port=1 + i, priority=1, alpha=alpha_be) for i in range(n)]
        st = _ss("dt", buffer_bytes, qs)
        rows.append(dict(series="AF threshold", x=n, threshold_fraction=st.queues[0].threshold_bytes / buffer_bytes))
    return rows


def dt_priority_split(buffer_packets: float, alpha_high: float, alpha_low: float, n_max: int) -> Rows:
    """FB Fig. 3 (DT, Eq. 1–2): one congested high-priority queue and N congested low-priority
    queues; buffer held by the high queue and by the low queues together (packets)."""
    rows = []
    for n in range(0, n_max + 1):
        qs = [QueueSpec(port=0, priority=1, alpha=alpha_high)] + [QueueSpec(port=1 + i, priority=0, alpha=alpha_low) for i in range(n)]
        st = _ss("dt", buffer_packets, qs)
        hi = st.queues[0].occupancy_bytes
        lo = sum(q.occupancy_bytes for q in st.queues[1:])
        rows.append(dict(series="high priority", x=n, buffer_packets=hi))
        rows.append(dict(series="low priority (sum)", x=n, buffer_packets=lo))
    return rows


def _panels_rows(panels, metric: str) -> Rows:
    rows = []
    for pan in panels:
        for c in pan.curves:
            for r, v in zip(c.rate_ratio, c.tolerance_bytes):
                rows.append({"series": f"{pan.key}: {c.label}", "x": float(r), metric: (v / 1e6 if math.isfinite(v) else math.nan)})
    return rows


def abm_fig5(rates_max: float = 20.0, n_rates: int = 60, **kw) -> Rows:
    """ABM Fig. 5 (a)–(d): burst tolerance (MB) vs burst rate, from the fluid model."""
    import numpy as np

    from ..analysis.plots import abm_fig5_panels

    return _panels_rows(abm_fig5_panels(rates_ratio=np.linspace(1.05, rates_max, n_rates), **kw), "tolerance_mb")


def fb_fig11(rates_max: float = 20.0, n_rates: int = 60, **kw) -> Rows:
    """FB Fig. 11 (a)–(d): burst absorbed before the first drop (MB) vs burst rate."""
    import numpy as np

    from ..analysis.plots import fb_fig11_panels

    return _panels_rows(fb_fig11_panels(rates_ratio=np.linspace(1.05, rates_max, n_rates), **kw), "absorbed_mb")


GENERATORS: Dict[str, Callable[..., Rows]] = {
    "dt_allocation_vs_congested": dt_allocation_vs_congested,
    "dt_priority_split": dt_priority_split,
    "abm_fig5": abm_fig5,
    "fb_fig11": fb_fig11,
}


def generate(spec: FigureSpec) -> Rows:
    g = GENERATORS.get(spec.generator)
    if g is None:
        raise ScenarioError(f"figure {spec.id}: generator '{spec.generator}' unknown; allowed: {', '.join(GENERATORS)}")
    try:
        return g(**spec.args)
    except TypeError as e:
        raise ScenarioError(f"figure {spec.id}: bad generator arguments: {e}") from None

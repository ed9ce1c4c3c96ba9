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


def _queues(items: List[dict]) -> List[QueueSpec]:
    return [QueueSpec(port=int(q["port"]), priority=int(q.get("priority", 0)), alpha=float(q["alpha"]),
                      share=q.get("share")) for q in items]


def fluid_toy(buffer: float, cases: List[dict], burst_rate: float = 5.0, sweeps: List[dict] = ()) -> Rows:
    """The papers' toy examples (FB Figs. 2, 4, 5; FAB Fig. 2) in the fluid model, in packets and
    port rates (any consistent units work: every port drains 1, a burst queue receives
    ``burst_rate``).

    ``cases``: ``{name, scheme, np_mode?, background: [{label, port, priority, alpha}], burst: [...]}``
    (``burst = []``: the steady state only).
    Rows (metric ``packets``, series ``"<name>: <label>"`` and ``"<name>: remaining"``) at three
    stages x: 0 = steady state of the background before the burst (:func:`steady_state`),
    1 = the burst queue's first drop (:func:`closed_form_burst` on :func:`build_transient`;
    a background queue that tracks its falling threshold is at ω·R, one that cannot is at
    q0 − μ·t1), 2 = steady state with every queue congested. Metric ``first_drop_t`` at x = 1:
    t1 in units of one packet time of a port.
    ``sweeps``: ``{name, scheme, np_mode?, high: {port, priority, alpha}, low: {priority, alpha},
    n_max, same_port}``: the high queue's steady-state share as 1..n_max low queues congest
    (each on its own port, or all on one port if ``same_port``), metric ``high_packets``, x = n.
    """
    from ..analysis.burst import build_transient, closed_form_burst

    rows: Rows = []
    for c in cases:
        scheme, np_mode, name = c["scheme"], c.get("np_mode", "queues"), c["name"]
        bg, bu = _queues(c["background"]), _queues(c["burst"])
        labels = [q["label"] for q in c["background"]] + [q["label"] for q in c["burst"]]
        before = steady_state(scheme, buffer, bg, np_mode=np_mode)
        after = steady_state(scheme, buffer, bg + bu, np_mode=np_mode)
        for lab, st in zip(labels, before.queues):
            rows.append(dict(series=f"{name}: {lab}", x=0, packets=st.occupancy_bytes))
        rows.append(dict(series=f"{name}: remaining", x=0, packets=before.remaining_bytes))
        if not bu:
            continue
        sysm = build_transient(scheme, buffer, bg, bu, burst_rate_gbps=burst_rate, link_gbps=1.0, np_mode=np_mode)
        res = closed_form_burst(sysm)
        if not res.applies:
            raise ScenarioError(f"fluid_toy case '{name}': the closed form does not apply ({res.reason})")
        t1 = res.first_drop_s
        if math.isfinite(t1):
            R1 = sysm.initial_remaining_bytes - res.qdot_bytes_per_s * t1
            for i, lab in enumerate(labels[:len(bg)]):
                q = max(sysm.omega[i] * R1, sysm.initial_bytes[i] - sysm.drain_bytes_per_s[i] * t1)
                if not math.isfinite(q):  # complete sharing: no threshold to track
                    continue
                rows.append(dict(series=f"{name}: {lab}", x=1, packets=q))
            rows.append(dict(series=f"{name}: {labels[len(bg) + res.burst_index]}", x=1, packets=res.queue_bytes))
            rows.append(dict(series=f"{name}: remaining", x=1, packets=R1))
            rows.append(dict(series=f"{name}: first drop", x=1, first_drop_t=t1 * sysm.port_rate_bytes_per_s))
        for lab, st in zip(labels, after.queues):
            rows.append(dict(series=f"{name}: {lab}", x=2, packets=st.occupancy_bytes))
        rows.append(dict(series=f"{name}: remaining", x=2, packets=after.remaining_bytes))
    for sw in sweeps:
        hi = _queues([sw["high"]])[0]
        for n in range(1, int(sw["n_max"]) + 1):
            lows = [QueueSpec(port=(hi.port + 1 if sw.get("same_port") else hi.port + 1 + i), priority=int(sw["low"].get("priority", 0)),
                              alpha=float(sw["low"]["alpha"])) for i in range(n)]
            st = steady_state(sw["scheme"], buffer, [hi] + lows, np_mode=sw.get("np_mode", "queues"))
            rows.append(dict(series=sw["name"], x=n, high_packets=st.queues[0].occupancy_bytes))
    return rows


GENERATORS: Dict[str, Callable[..., Rows]] = {
    "fluid_toy": fluid_toy,
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

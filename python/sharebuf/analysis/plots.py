"""Burst-tolerance curves: ABM Fig. 5 (a)–(d) and FB Fig. 11 (a)–(d).

Each panel plots the burst tolerance against the burst arrival rate (normalized to the port
bandwidth) for several buffer states, computed with :func:`closed_form_burst` (which the tests
check against the numerical integrator). matplotlib is imported lazily with the Agg backend.

ABM Fig. 5: background queues of α = 0.5 (ABM §4.1), one priority per queue of a port (ABM's
model: a priority has one queue per port), round-robin shares; the burst is a new priority on an
idle port. Tolerance = the burst queue's length at the first drop, (r − μ)·τ (ABM Eq. 7–8, 10–11).
  (a) DT vs number of congested ports     (b) DT vs number of congested queues per port
  (c) ABM vs number of congested ports    (d) ABM vs number of congested queues per port

FB Fig. 11 (FB App. A.5 / §6 parameters: B = 1 MB, 1 Gbps, α_L = 0.5, α_H = 20): background
low-priority queues (several classes of the same low priority per port in the 4-queue panels),
high-priority burst on an idle port. Tolerance = r·t1 (FB Eq. 42).
  (a) DT, single queue per port   (b) FB, single queue   (c) DT, 4 queues   (d) FB, 4 queues
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np

from .burst import build_transient, closed_form_burst
from .model import QueueSpec, check_positive

ABM_DEFAULT_BUFFER_BYTES = 3_932_160  # 9.6 KB/port/Gbps × 40 ports × 10 Gbps (ABM §4.1)
FB_DEFAULT_BUFFER_BYTES = 1_000_000   # FB §6.2 / App. A.5


@dataclass
class Curve:
    label: str
    rate_ratio: np.ndarray        # burst rate / port bandwidth
    tolerance_bytes: np.ndarray   # inf where the burst never drops


@dataclass
class Panel:
    key: str
    title: str
    scheme: str
    metric: str                   # "queue" ((r−μ)·t1) or "arrived" (r·t1)
    curves: list[Curve] = field(default_factory=list)


def default_rates(max_ratio: float = 20.0, n: int = 150) -> np.ndarray:
    """Burst rates from just above the port rate to ``max_ratio`` × the port rate."""
    m = check_positive("max_ratio", max_ratio)
    if m <= 1.05:
        raise ValueError(f"max_ratio={max_ratio!r} must be > 1.05 (a burst at or below line rate never queues)")
    return np.linspace(1.05, m, int(n))


def burst_tolerance_curve(
    scheme: str,
    buffer_bytes: float,
    background: Sequence[QueueSpec],
    burst: QueueSpec,
    rates_ratio: Sequence[float],
    *,
    link_gbps: float,
    metric: str = "queue",
    np_mode: str = "queues",
) -> np.ndarray:
    """Burst tolerance (bytes) of one buffer state for each burst rate (× the port bandwidth)."""
    if metric not in ("queue", "arrived"):
        raise ValueError(f"metric={metric!r} is not supported; allowed: queue, arrived")
    out = []
    for r in rates_ratio:
        res = closed_form_burst(build_transient(scheme, buffer_bytes, background, burst,
                                                burst_rate_gbps=float(r) * link_gbps, link_gbps=link_gbps,
                                                np_mode=np_mode))
        if math.isinf(res.first_drop_s):
            out.append(math.inf)
        else:
            out.append(res.queue_bytes if metric == "queue" else res.arrived_bytes)
    return np.asarray(out, dtype=float)


def _ports_state(n_ports: int, k: int, alpha: float, distinct_priorities: bool) -> list[QueueSpec]:
    return [QueueSpec(port=p, priority=(j if distinct_priorities else 0), alpha=alpha)
            for p in range(n_ports) for j in range(k)]


def abm_fig5_panels(
    *,
    buffer_bytes: float = ABM_DEFAULT_BUFFER_BYTES,
    link_gbps: float = 10.0,
    alpha: float = 0.5,
    alpha_burst: float = 0.5,
    ports: Sequence[int] = (1, 2, 4, 8, 16),
    queues_per_port: Sequence[int] = (1, 2, 4, 8),
    ports_for_queue_panels: int = 1,
    rates_ratio: Sequence[float] | None = None,
) -> list[Panel]:
    """Series of ABM Fig. 5 (a)–(d)."""
    rates = np.asarray(default_rates() if rates_ratio is None else rates_ratio, dtype=float)
    panels = []
    for key, scheme, vary in (("a", "dt", "ports"), ("b", "dt", "queues"), ("c", "abm", "ports"), ("d", "abm", "queues")):
        name = scheme.upper()
        title = (f"({key}) {name}: congested ports" if vary == "ports"
                 else f"({key}) {name}: queues per port ({ports_for_queue_panels} port)")
        panel = Panel(key, title, scheme, "queue")
        values = ports if vary == "ports" else queues_per_port
        for v in values:
            n, k = (int(v), 1) if vary == "ports" else (int(ports_for_queue_panels), int(v))
            bg = _ports_state(n, k, alpha, distinct_priorities=True)
            burst = QueueSpec(port=n, priority=k, alpha=alpha_burst)
            tol = burst_tolerance_curve(scheme, buffer_bytes, bg, burst, rates, link_gbps=link_gbps, metric="queue")
            label = f"{n} port{'s' if n > 1 else ''}" if vary == "ports" else f"{k} queue{'s' if k > 1 else ''}/port"
            panel.curves.append(Curve(label, rates, tol))
        panels.append(panel)
    return panels


def fb_fig11_panels(
    *,
    buffer_bytes: float = FB_DEFAULT_BUFFER_BYTES,
    link_gbps: float = 1.0,
    alpha_low: float = 0.5,
    alpha_high: float = 20.0,
    ports: Sequence[int] = (1, 2, 4, 8, 16),
    queues_per_port: int = 4,
    rates_ratio: Sequence[float] | None = None,
    np_mode: str = "queues",
) -> list[Panel]:
    """Series of FB Fig. 11 (a)–(d)."""
    rates = np.asarray(default_rates() if rates_ratio is None else rates_ratio, dtype=float)
    panels = []
    for key, scheme, k in (("a", "dt", 1), ("b", "fb", 1), ("c", "dt", queues_per_port), ("d", "fb", queues_per_port)):
        title = f"({key}) {'Dynamic Thresholds' if scheme == 'dt' else 'FB'} ({'single queue' if k == 1 else f'{k} queues'})"
        panel = Panel(key, title, scheme, "arrived")
        for n in ports:
            bg = _ports_state(int(n), int(k), alpha_low, distinct_priorities=False)
            burst = QueueSpec(port=int(n), priority=1, alpha=alpha_high)
            tol = burst_tolerance_curve(scheme, buffer_bytes, bg, burst, rates, link_gbps=link_gbps,
                                        metric="arrived", np_mode=np_mode)
            panel.curves.append(Curve(f"{n} congested port{'s' if n > 1 else ''}", rates, tol))
        panels.append(panel)
    return panels


def write_panels_csv(panels: Sequence[Panel], path: str | Path) -> Path:
    """Write the series as CSV: panel, scheme, metric, curve, rate_ratio, tolerance_bytes."""
    p = Path(path)
    with p.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["panel", "scheme", "metric", "curve", "rate_ratio", "tolerance_bytes"])
        for pan in panels:
            for c in pan.curves:
                for r, v in zip(c.rate_ratio, c.tolerance_bytes):
                    w.writerow([pan.key, pan.scheme, pan.metric, c.label, f"{r:.6g}", f"{v:.9g}"])
    return p


def write_figure(panels: Sequence[Panel], out_dir: str | Path, stem: str, *, suptitle: str = "",
                 link_gbps: float | None = None) -> list[Path]:
    """Draw the panels as a 2×2 figure and save ``stem``.png and ``stem``.pdf in ``out_dir``."""
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    fig, axes = plt.subplots(2, 2, figsize=(11, 8), sharey=True)
    for ax, pan in zip(axes.flat, panels):
        for c in pan.curves:
            y = np.where(np.isfinite(c.tolerance_bytes), c.tolerance_bytes, np.nan) / 1e6
            ax.plot(c.rate_ratio, y, label=c.label)
        xl = "burst arrival rate (× port rate" + (f" = {link_gbps:g} Gbps)" if link_gbps else ")")
        ax.set_xlabel(xl)
        ax.set_ylabel("burst tolerance (MB)" if pan.metric == "queue" else "burst absorbed before first drop (MB)")
        if pan.metric == "arrived":  # r·t1 grows like 1/(r − 1) near the line rate
            ax.set_yscale("log")
        ax.set_title(pan.title)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    if suptitle:
        fig.suptitle(suptitle)
    fig.tight_layout()
    paths = [out / f"{stem}.png", out / f"{stem}.pdf"]
    for p in paths:
        fig.savefig(p)
    plt.close(fig)
    return paths

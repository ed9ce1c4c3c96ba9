"""Fluid steady state of a shared buffer under DT, FB, ABM, BSHARE/CBM and CS.

All threshold schemes share one closed form (every congested queue sits at its threshold):

    Q       = B·W / (1 + W)          (DT: FB Eq. 2;  FB Eq. 12;  ABM Eq. 15;  BSHARE Eq. 6)
    B − Q   = B / (1 + W)            (FB Eq. 13;  ABM Eq. 16;  BSHARE Eq. 7)
    T_i     = B·ω_i / (1 + W)        (DT: ABM Eq. 6;  FB Eq. 14;  ABM Eq. 17;  BSHARE Eq. 8)

with W = Σ_i ω_i and ω_i from :func:`sharebuf.analysis.model.omegas`.

CS (complete sharing) has no per-queue threshold: congested queues fill the whole buffer
(Q = B) and the split between queues is not determined by the scheme (it depends on arrival
history). We report an equal split as a documented convention.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Sequence

from .model import (
    QueueSpec,
    check_positive,
    gbps_to_bytes_per_s,
    normalize_scheme,
    omegas,
    scheduler_shares,
    validate_queues,
)


@dataclass(frozen=True)
class QueueState:
    """Steady state of one congested queue."""

    spec: QueueSpec
    omega: float            # threshold factor ω (T = ω (B − Q)); inf for CS
    share: float            # scheduler share γ used (fraction of the port bandwidth)
    threshold_bytes: float  # T_i
    occupancy_bytes: float  # q_i (= T_i for threshold schemes)
    drain_time_s: float | None  # q_i / (γ_i · b), if link_gbps was given


@dataclass(frozen=True)
class SteadyState:
    """Fluid steady state for one scheme and one set of congested queues."""

    scheme: str
    buffer_bytes: float
    queues: tuple[QueueState, ...]
    omega_sum: float               # W = Σ ω_i
    occupancy_bytes: float         # Q
    remaining_bytes: float         # B − Q
    per_priority_bytes: dict[int, float] = field(default_factory=dict)
    link_gbps: float | None = None

    @property
    def thresholds_bytes(self) -> list[float]:
        return [q.threshold_bytes for q in self.queues]

    @property
    def occupancies_bytes(self) -> list[float]:
        return [q.occupancy_bytes for q in self.queues]


def steady_state(
    scheme: str,
    buffer_bytes: float,
    queues: Sequence[QueueSpec],
    *,
    link_gbps: float | None = None,
    np_mode: str = "queues",
) -> SteadyState:
    """Fluid steady state (every congested queue at its threshold).

    scheme:       "dt", "fb", "abm", "bshare" (or "cbm") or "cs".
    buffer_bytes: shared buffer B (> 0).
    queues:       the congested queues (may be empty: then Q = 0, B − Q = B).
    link_gbps:    port bandwidth b, only used to report per-queue drain times q/(γ b).
    np_mode:      how n_p is counted for FB/ABM/BSHARE (see ``model.congested_counts``).
    """
    s = normalize_scheme(scheme)
    B = check_positive("buffer_bytes", buffer_bytes)
    qs = validate_queues(queues)
    rate = gbps_to_bytes_per_s(check_positive("link_gbps", link_gbps)) if link_gbps is not None else None
    om = omegas(s, qs, np_mode)
    gam = scheduler_shares(qs) if qs else []

    if s == "cs":
        if qs:
            occ = [B / len(qs)] * len(qs)
            thr = [B] * len(qs)  # every queue may grow to the whole buffer
            Q = B
        else:
            occ, thr, Q = [], [], 0.0
        W = math.inf if qs else 0.0
    else:
        W = float(sum(om))
        R = B / (1.0 + W)
        thr = [w * R for w in om]
        occ = list(thr)
        Q = B * W / (1.0 + W)

    states = []
    per_prio: dict[int, float] = defaultdict(float)
    for q, w, g, t, o in zip(qs, om, gam, thr, occ):
        dtime = o / (g * rate) if rate is not None else None
        states.append(QueueState(spec=q, omega=w, share=g, threshold_bytes=t, occupancy_bytes=o, drain_time_s=dtime))
        per_prio[q.priority] += o
    return SteadyState(
        scheme=s,
        buffer_bytes=B,
        queues=tuple(states),
        omega_sum=W,
        occupancy_bytes=Q,
        remaining_bytes=B - Q,
        per_priority_bytes=dict(sorted(per_prio.items())),
        link_gbps=link_gbps,
    )


def dt_threshold_bytes(buffer_bytes: float, alpha: float, alpha_counts: dict[float, int] | Sequence[tuple[float, int]]) -> float:
    """ABM Eq. 6: DT's steady-state threshold α_p·B / (1 + Σ_p n_p·α_p).

    alpha_counts: the congested queues as {α_p: n_p} or [(α_p, n_p), ...] (including the queue itself).
    """
    B = check_positive("buffer_bytes", buffer_bytes)
    a = check_positive("alpha", alpha)
    items = alpha_counts.items() if isinstance(alpha_counts, dict) else alpha_counts
    total = 0.0
    for ap, n in items:
        check_positive("alpha_counts alpha", ap)
        if int(n) != n or n < 0:
            raise ValueError(f"alpha_counts count={n!r} must be a non-negative integer")
        total += ap * n
    return a * B / (1.0 + total)

"""Numerical fluid integrator of the multi-queue shared buffer during a burst.

Independent of the closed forms: it makes no assumption about which queues track their
thresholds. Each time step of length dt:

1. every queue drains at its service rate μ_i (never below empty);
2. every queue is offered a_i·dt (background queues are saturated: a_i = ∞) and admits as much
   as fits under its threshold T_i = ω_i·(B − Q_new) evaluated at the *end* of the step
   (implicit: the remaining buffer R = B − Q_new solves R + Σ_i q_i(R) = B exactly, q_i(R)
   piecewise linear in R), or, for CS, under the buffer size;
3. the first step in which a burst queue is offered more than it may admit contains the first
   drop; that step is bisected until the drop time is known to ``rel_tol``.

Because the update is implicit in the thresholds, a queue whose threshold falls faster than it
can drain automatically stays above its threshold and drains at μ_i, and one that can keep up
tracks the threshold exactly.
"""

from __future__ import annotations

import math

import numpy as np

from .model import check_positive
from .transient import BurstResult, TransientSystem, finish_result


def _remaining_after_step(B: float, om: np.ndarray, qp: np.ndarray, cap: np.ndarray) -> tuple[float, np.ndarray]:
    """Solve R + Σ q_i(R) = B with q_i(R) = max(0, min(max(ω_i R, q'_i), q'_i + c_i)).

    q'_i = queue after departures (may be negative when arrivals must refill it), c_i = offer.
    Returns R and the queue lengths.
    """

    def qs(R: float | np.ndarray) -> np.ndarray:
        R = np.asarray(R, dtype=float)
        t = np.multiply.outer(R, om) if R.ndim else R * om
        return np.maximum(0.0, np.minimum(np.maximum(t, qp), qp + cap))

    with np.errstate(invalid="ignore", divide="ignore"):
        bps = np.concatenate([qp / om, (qp + cap) / om])
    bps = bps[np.isfinite(bps) & (bps > 0) & (bps < B)]
    grid = np.unique(np.concatenate([[0.0, B], bps]))
    h = grid + qs(grid).sum(axis=-1) - B  # increasing in R
    k = int(np.searchsorted(h, 0.0))
    if k == 0:
        R = 0.0
    elif k >= grid.size:
        R = B
    else:
        r0, r1, h0, h1 = grid[k - 1], grid[k], h[k - 1], h[k]
        R = r0 + (r1 - r0) * (-h0) / (h1 - h0) if h1 != h0 else r0
    return float(R), qs(R)


def _step(sysm: dict, q: np.ndarray, dt: float) -> tuple[np.ndarray, float, bool]:
    """Advance by dt. Returns new queues, remaining buffer, and whether a burst queue was clipped."""
    B = sysm["B"]
    mu, a, om, new = sysm["mu"], sysm["a"], sysm["om"], sysm["new"]
    qp = q - mu * dt
    cap = np.where(np.isinf(a), B, a * dt)  # a saturated queue can be offered at most the buffer
    if sysm["cs"]:
        want = np.maximum(0.0, qp + cap)
        if float(want.sum()) <= B:
            return want, B - float(want.sum()), False
        free = max(0.0, B - float(np.maximum(qp, 0.0).sum()))
        x = cap * (free / float(cap.sum()))
        qn = np.maximum(0.0, qp + x)
        return qn, B - float(qn.sum()), bool(np.any(new & (x < cap - 1e-12 * B)))
    R, qn = _remaining_after_step(B, om, qp, cap)
    want = np.maximum(0.0, qp + cap)
    clipped = bool(np.any(new & (qn < want - 1e-12 * B)))
    return qn, R, clipped


def integrate_burst(
    system: TransientSystem,
    *,
    duration_s: float | None = None,
    t_max_s: float | None = None,
    steps: int = 2000,
    rel_tol: float = 1e-7,
    record: bool = False,
) -> BurstResult:
    """Integrate the fluid system from t = 0 until the first drop of a burst queue.

    duration_s: optional burst duration (the burst stops arriving afterwards; integration ends).
    t_max_s:    horizon; default the largest possible first-drop time, max_j ω_j·B/(r − μ_j)
                (a burst queue can never hold more than ω_j·B).
    steps:      number of time steps over the horizon (the hit step is then bisected).
    record:     keep the trajectory (times, queue lengths, remaining buffer) in ``result.trace``.
    """
    if int(steps) != steps or steps < 10:
        raise ValueError(f"steps={steps!r} must be an integer >= 10")
    check_positive("rel_tol", rel_tol)
    B = system.buffer_bytes
    om = np.asarray(system.omega, dtype=float)
    mu = np.asarray(system.drain_bytes_per_s, dtype=float)
    a = np.asarray(system.arrival_bytes_per_s, dtype=float)
    new = np.asarray(system.is_burst, dtype=bool)
    q = np.asarray(system.initial_bytes, dtype=float).copy()
    cs = system.scheme == "cs"
    sysm = {"B": B, "mu": mu, "a": a, "om": om, "new": new, "cs": cs}
    growth = a[new] - mu[new]
    r_burst = float(a[new].max())

    if t_max_s is None:
        with np.errstate(divide="ignore"):
            cap_w = np.ones_like(om[new]) if cs else np.minimum(om[new], 1.0)
            tmax = np.where(growth > 0, cap_w * B / np.where(growth > 0, growth, 1.0), 0.0)
        t_max = float(tmax.max()) * (1 + 1e-6)
        if t_max <= 0:  # no burst queue can ever build up
            t_max = B / float(mu.max() if mu.size else 1.0)
    else:
        t_max = check_positive("t_max_s", t_max_s)
    if duration_s is not None:
        t_max = min(t_max, check_positive("duration_s", duration_s))
    dt = t_max / steps

    times, traj, rem = ([0.0], [q.copy()], [B - q.sum()]) if record else (None, None, None)
    t = 0.0
    hit_t = None
    qdot = 0.0
    if cs and system.n_background > 0 and float(q.sum()) >= B * (1 - 1e-12):
        hit_t = 0.0  # full buffer, saturated competitors: the very first burst byte is at risk
    while hit_t is None and t < t_max * (1 - 1e-12):
        h = min(dt, t_max - t)
        qn, R, clipped = _step(sysm, q, h)
        if clipped:
            lo, hi = 0.0, h
            while hi - lo > rel_tol * max(t + lo, h * 1e-3):
                mid = 0.5 * (lo + hi)
                if _step(sysm, q, mid)[2]:
                    hi = mid
                else:
                    lo = mid
            if lo > 0:
                q_lo, _, _ = _step(sysm, q, lo)
                qdot = float((q_lo.sum() - q.sum()) / lo)
                q = q_lo
            hit_t = t + lo
            break
        qdot = float((qn.sum() - q.sum()) / h)
        q, t = qn, t + h
        if record:
            times.append(t)
            traj.append(q.copy())
            rem.append(R)

    # which background queues that started at their threshold (G_ne) still track it at the end
    R_end = B - float(q.sum())
    q0 = np.asarray(system.initial_bytes, dtype=float)
    R0 = B - float(q0.sum())
    with np.errstate(invalid="ignore"):
        old = ~new & (q0 <= om * R0 + 1e-9 * B)
    if cs:
        case = "cs"
    else:
        at_thr = np.isclose(q[old], om[old] * R_end, rtol=1e-6, atol=1e-9 * B)
        case = "case1" if at_thr.all() else ("case2" if not at_thr.any() else "mixed")
    trace = None
    if record:
        trace = {"time_s": np.asarray(times), "queue_bytes": np.asarray(traj), "remaining_bytes": np.asarray(rem)}
    if hit_t is None:
        res = BurstResult("integrator", "never" if duration_s is None else case, math.inf, None, 0.0, 0.0, qdot,
                          trace=trace)
        return finish_result(res, duration_s, r_burst)
    idx_new = np.flatnonzero(new)
    # the burst queue that drops first: the one closest to its threshold
    if cs:
        j = int(np.argmax(growth))
    else:
        gap = om[idx_new] * R_end - q[idx_new]
        j = int(np.argmin(gap))
    i = int(idx_new[j])
    res = BurstResult("integrator", case, hit_t, j, float(q[i]), float(a[i]) * hit_t, qdot, trace=trace)
    return finish_result(res, duration_s, float(a[i]))

"""Isolation and drain-time bounds (ABM Theorems 1–3, FB Eq. 4 / Eq. 15, BSHARE Eq. 11/13/14).

These hold for any buffer state because Σ_i ω_p^i ≤ α_p (ABM Lemma 1, FB Eq. 11, BSHARE Eq. 4).
They do not hold for DT, whose per-priority allocation falls toward 0 as the number of
congested queues of other priorities grows (ABM Eq. 6, FB Fig. 3).
"""

from __future__ import annotations

from typing import Mapping

from .model import check_positive, gbps_to_bytes_per_s


def _alphas(alphas: Mapping[int, float]) -> dict[int, float]:
    if not isinstance(alphas, Mapping) or not alphas:
        raise ValueError(f"alphas={alphas!r} must be a non-empty mapping priority -> alpha")
    return {p: check_positive(f"alphas[{p}]", a) for p, a in alphas.items()}


def abm_min_priority_bytes(buffer_bytes: float, alphas: Mapping[int, float], priority: int) -> float:
    """ABM Theorem 1 (isolation, minimum guarantee): B_p^min = B·α_p / (1 + Σ_{p∈P} α_p).

    alphas: α of every priority that may use the buffer (P); for FB use each priority's
    largest class α (FB Eq. 11/15). Also BSHARE Eq. 11.
    """
    B = check_positive("buffer_bytes", buffer_bytes)
    a = _alphas(alphas)
    if priority not in a:
        raise ValueError(f"priority={priority!r} is not in alphas (priorities: {sorted(a)})")
    return B * a[priority] / (1.0 + sum(a.values()))


def abm_max_priority_bytes(buffer_bytes: float, alpha: float) -> float:
    """ABM Theorem 2 (isolation, preventing monopoly): B_p^max = B·α_p / (1 + α_p). Also BSHARE Eq. 13."""
    B = check_positive("buffer_bytes", buffer_bytes)
    a = check_positive("alpha", alpha)
    return B * a / (1.0 + a)


def abm_drain_time_bound_s(buffer_bytes: float, alpha: float, link_gbps: float, mean_share: float = 1.0) -> float:
    """ABM Theorem 3 (bounded drain time): Γ ≤ B·α_p / ((1 + α_p)·b). Also BSHARE Eq. 14.

    The paper's proof uses Σ_i Σ_p ω_p^i ≥ α_p, which holds when every congested queue of
    priority p has its whole port (γ = 1). In general the steady-state drain time of a queue of
    priority p is α_p·(B − Q)/(n_p·b) with B − Q ≤ B/(1 + α_p·γ̄_p), γ̄_p the mean scheduler share
    of the priority's congested queues, so

        Γ ≤ B·α_p / ((1 + α_p·γ̄_p)·b),

    which is Theorem 3 for ``mean_share`` = γ̄_p = 1 (the default) and can be up to (1 + α_p)
    times larger when the priority's queues share their ports (γ̄_p < 1).
    """
    B = check_positive("buffer_bytes", buffer_bytes)
    a = check_positive("alpha", alpha)
    b = gbps_to_bytes_per_s(check_positive("link_gbps", link_gbps))
    g = check_positive("mean_share", mean_share)
    if g > 1:
        raise ValueError(f"mean_share={mean_share!r} must be in (0, 1]")
    return B * a / ((1.0 + a * g) * b)


def fb_max_occupancy_bytes(buffer_bytes: float, alphas: Mapping[int, float]) -> float:
    """FB Eq. 4: B_oc ≤ B·Σ_p α_p / (1 + Σ_p α_p), α_p the largest class α of priority p
    (with two priorities: B(α_L+α_H)/(1+α_L+α_H))."""
    B = check_positive("buffer_bytes", buffer_bytes)
    s = sum(_alphas(alphas).values())
    return B * s / (1.0 + s)


def fb_min_remaining_bytes(buffer_bytes: float, alphas: Mapping[int, float]) -> float:
    """FB Eq. 15: Remaining ≥ B / (1 + Σ_p α_max^p)."""
    B = check_positive("buffer_bytes", buffer_bytes)
    return B / (1.0 + sum(_alphas(alphas).values()))

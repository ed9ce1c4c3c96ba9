"""Transient burst tolerance: the fluid system at t = 0 and its closed-form solution.

Set-up (ABM §2.3/§3.2 and App. A.4–A.8, FB App. A.4–A.5): the buffer is in the steady state of a
set of congested *background* queues; at t = 0 a burst of rate r starts to arrive at one or
more initially empty *burst* queues. From t = 0+ on, every queue's ω (threshold factor) and
drain rate take their new values (n_p and the port's scheduler shares now include the burst
queues). Background queues are saturated (their arrival rate exceeds whatever they are allowed),
so each either *tracks* its falling threshold or, when the threshold falls faster than the
queue can drain, *drains* at its full service rate above the threshold. The burst tolerance is
what the burst queue holds when it first reaches its threshold (the first drop).

:func:`closed_form_burst` solves this exactly while the set of tracking/draining queues does
not change before the first drop (the regime of ABM Theorems 4–5 / FB Eq. 32 and Eq. 39,
generalized to a mix of tracking and draining queues). The paper-specific closed forms are
:func:`dt_burst_tolerance_bytes` (ABM Eq. 6–8), :func:`abm_burst_tolerance_bytes`
(ABM Eq. 10–11) and :func:`fb_t1_case1_s` / :func:`fb_t1_case2_s` (FB Eq. 33–34 / 39–40).
"""

from __future__ import annotations

import math
from typing import NamedTuple, Sequence

import numpy as np

from .integrator import integrate_burst
from .model import (
    QueueSpec,
    check_positive,
    gbps_to_bytes_per_s,
    normalize_scheme,
    omegas,
    scheduler_shares,
    validate_queues,
)
from .steady_state import steady_state
from .transient import BurstResult, TransientSystem, finish_result


def _as_list(burst: QueueSpec | Sequence[QueueSpec]) -> list[QueueSpec]:
    if isinstance(burst, QueueSpec):
        return [burst]
    out = list(validate_queues(burst, "burst", allow_empty=False))
    return out


def build_transient(
    scheme: str,
    buffer_bytes: float,
    background: Sequence[QueueSpec],
    burst: QueueSpec | Sequence[QueueSpec],
    *,
    burst_rate_gbps: float,
    link_gbps: float,
    np_mode: str = "queues",
) -> TransientSystem:
    """Build the t = 0+ system for ``scheme``.

    background:      congested queues in steady state before the burst (their occupancy is the
                     steady state of :func:`steady_state`).
    burst:           the initially empty queue(s) the burst arrives at, each at burst_rate_gbps.
    burst_rate_gbps: arrival rate r of the burst at each burst queue.
    link_gbps:       port bandwidth b (all ports equal, as in ABM/FB).
    """
    s = normalize_scheme(scheme)
    B = check_positive("buffer_bytes", buffer_bytes)
    bg = list(validate_queues(background, "background"))
    bu = _as_list(burst)
    b = gbps_to_bytes_per_s(check_positive("link_gbps", link_gbps))
    r = gbps_to_bytes_per_s(check_positive("burst_rate_gbps", burst_rate_gbps))
    before = steady_state(s, B, bg, np_mode=np_mode)
    all_q = bg + bu
    om_after = omegas(s, all_q, np_mode)
    om_before = omegas(s, bg, np_mode) + [math.nan] * len(bu)
    g_after = scheduler_shares(all_q)
    q0 = [qs.occupancy_bytes for qs in before.queues] + [0.0] * len(bu)
    return TransientSystem(
        scheme=s,
        buffer_bytes=B,
        port_rate_bytes_per_s=b,
        omega=tuple(om_after),
        omega_before=tuple(om_before),
        drain_bytes_per_s=tuple(g * b for g in g_after),
        arrival_bytes_per_s=tuple([math.inf] * len(bg) + [r] * len(bu)),
        initial_bytes=tuple(q0),
        is_burst=tuple([False] * len(bg) + [True] * len(bu)),
        specs=tuple(all_q),
    )


def _solve_qdot(A: float, omega: np.ndarray, mu: np.ndarray) -> tuple[float, np.ndarray]:
    """Solve x + Σ_i min(ω_i x, μ_i) = A for x (strictly increasing, piecewise linear).

    Returns x and the mask of queues that track their threshold (ω_i x ≤ μ_i).
    """
    if omega.size == 0:
        return A, np.zeros(0, dtype=bool)
    bp = mu / omega  # queue i tracks iff x <= bp_i
    order = np.argsort(bp)
    W_rest = float(omega.sum())
    drained = 0.0
    lo = -math.inf
    for k in range(order.size + 1):
        x = (A - drained) / (1.0 + W_rest)
        hi = bp[order[k]] if k < order.size else math.inf
        if lo < x <= hi or (k == 0 and x <= hi):
            return x, bp >= x
        if k < order.size:
            i = order[k]
            W_rest -= omega[i]
            drained += mu[i]
            lo = hi
    raise AssertionError("unreachable: f is strictly increasing")  # pragma: no cover


def closed_form_burst(system: TransientSystem, *, duration_s: float | None = None) -> BurstResult:
    """Exact first-drop time of the linear regime that starts at t = 0+.

    Background queues start above their new threshold (the affected set G_e, ABM/FB App. A.4)
    drain at their service rate; the others (G_ne) track their threshold if it falls no faster
    than they can drain and drain at full rate otherwise; burst queues grow at r − μ. Then
    Q̇ = x solves x + Σ_{G_ne} min(ω_i x, μ_i) = Σ_new (r − μ_j) − Σ_{G_e} μ_i, and the burst
    queue j drops first at  t1 = ω_j R0 / ((r − μ_j) + ω_j x),  R0 = B − Q(0)
    (FB Eq. 32 for case 1, Eq. 39 for case 2; ABM Eq. 29 and 39).
    ``applies`` is False if some G_e queue would meet its threshold before t1.
    """
    sysm = system
    B = sysm.buffer_bytes
    om = np.asarray(sysm.omega, dtype=float)
    mu = np.asarray(sysm.drain_bytes_per_s, dtype=float)
    a = np.asarray(sysm.arrival_bytes_per_s, dtype=float)
    q0 = np.asarray(sysm.initial_bytes, dtype=float)
    new = np.asarray(sysm.is_burst, dtype=bool)
    R0 = B - float(q0.sum())
    growth = np.where(new, a - mu, 0.0)
    r_burst = float(a[new].max())

    if sysm.scheme == "cs":
        tot = float(np.clip(growth[new], 0.0, None).sum())
        if tot <= 0:
            return finish_result(BurstResult("closed-form", "never", math.inf, None, 0.0, 0.0, 0.0), duration_s, r_burst)
        if sysm.n_background > 0:  # saturated background keeps the buffer full: immediate drop
            t1 = 0.0
        else:
            t1 = R0 / tot
        j = int(np.argmax(np.where(new, growth, -math.inf))) - sysm.n_background
        g = float(growth[sysm.n_background + j])
        ai = float(a[sysm.n_background + j])
        return finish_result(BurstResult("closed-form", "cs", t1, j, g * t1, ai * t1, tot), duration_s, r_burst)

    old = ~new
    tol = 1e-9 * B
    Ge = old & (q0 > om * R0 + tol)
    Gne = old & ~Ge
    A = float(np.clip(growth[new], 0.0, None).sum()) - float(mu[Ge].sum())
    x, track = _solve_qdot(A, om[Gne], mu[Gne])
    x = float(x)
    n_track = int(track.sum())
    if n_track == int(Gne.sum()):
        case = "case1"
    elif n_track == 0:
        case = "case2"
    else:
        case = "mixed"

    t1s = np.full(new.sum(), math.inf)
    for k, i in enumerate(np.flatnonzero(new)):
        g = a[i] - mu[i]
        if g <= 0:
            continue
        den = g + om[i] * x
        if den > 0:
            t1s[k] = om[i] * R0 / den
    j = int(np.argmin(t1s))
    t1 = float(t1s[j])
    i_new = int(np.flatnonzero(new)[j])
    g = max(0.0, float(a[i_new] - mu[i_new]))

    applies, reason = True, ""
    for i in np.flatnonzero(Ge):
        gap0 = q0[i] - om[i] * R0
        closing = mu[i] - om[i] * x
        if closing > 0:
            t_meet = gap0 / closing
            if t_meet < t1 * (1 - 1e-12):
                applies = False
                reason = (f"background queue {int(i)} (affected set G_e) meets its threshold at "
                          f"t={t_meet:.6g}s before the first drop at t={t1:.6g}s; the regime changes")
                break
    if math.isinf(t1):
        case = "never" if applies else case
        return finish_result(BurstResult("closed-form", case, math.inf, None, 0.0, 0.0, x, applies, reason), duration_s, r_burst)
    return finish_result(
        BurstResult("closed-form", case, t1, j, g * t1, float(a[i_new]) * t1, x, applies, reason), duration_s,
        float(a[i_new]))


# ---------------------------------------------------------------------------------------------
# Paper-specific closed forms. Rates are normalized to the port bandwidth (r, μ in units of b);
# buffer sizes in bytes, results in bytes, so no link rate is needed.
# ---------------------------------------------------------------------------------------------


class PaperBurst(NamedTuple):
    case: int          # 1 or 2
    queue_bytes: float  # (r − μ_b)·τ, the burst queue's length at the first drop


def _case_of(ratios_track: Sequence[bool]) -> int:
    if all(ratios_track):
        return 1
    if not any(ratios_track):
        return 2
    raise ValueError("background queues are neither all tracking nor all draining at this rate "
                     "(mixed regime); the paper's two-case closed form does not apply — use closed_form_burst")


def dt_burst_tolerance_bytes(
    *,
    buffer_bytes: float,
    burst_rate: float,
    alpha_burst: float,
    background_alphas: Sequence[float],
    background_drains: Sequence[float],
    burst_drain: float = 1.0,
) -> PaperBurst:
    """DT burst tolerance, ABM §2.3 Eq. 6–8 (and FB §2.3's Fig. 4c example).

    burst_rate, background_drains, burst_drain: normalized to the port bandwidth.
    Case 1 (every background threshold falls slower than its queue drains): the burst gets its
    new steady-state allocation  α_b·B / (1 + Σα + α_b)  (Eq. 6 with the burst queue counted).
    Case 2: Eq. 8,  α_b·B / ((1 + Σα)·(1 + α_b·((r − μ_b) − μ)/(r − μ_b))),  μ = Σ drains.
    """
    B = check_positive("buffer_bytes", buffer_bytes)
    r = check_positive("burst_rate", burst_rate)
    ab = check_positive("alpha_burst", alpha_burst)
    mb = check_positive("burst_drain", burst_drain)
    al = [check_positive("background_alphas", v) for v in background_alphas]
    dr = [check_positive("background_drains", v) for v in background_drains]
    if len(al) != len(dr):
        raise ValueError(f"background_alphas has {len(al)} entries but background_drains has {len(dr)}; must match")
    if r <= mb:
        raise ValueError(f"burst_rate={r!r} must exceed burst_drain={mb!r} for a burst queue to build up")
    W = sum(al)
    mu = sum(dr)
    q1 = (r - mb) / (1 + W)          # Q̇ if every background queue tracks
    q2 = (r - mb) - mu               # Q̇ if every background queue drains at full rate
    track1 = [a * q1 <= d for a, d in zip(al, dr)]
    if all(track1):
        return PaperBurst(1, ab * B / (1 + W + ab))
    _case_of([a * q2 <= d for a, d in zip(al, dr)] + [False])  # raises on a mixed regime
    return PaperBurst(2, ab * B / ((1 + W) * (1 + ab * ((r - mb) - mu) / (r - mb))))


def abm_burst_tolerance_bytes(
    *,
    buffer_bytes: float,
    burst_rate: float,
    alpha_burst: float,
    background: Sequence[tuple[float, int]],
    aggregate_drain: float,
    n_burst: int = 1,
    burst_drain: float = 1.0,
) -> PaperBurst:
    """ABM burst tolerance, ABM §3.2 Eq. 10 (case 1) and Eq. 11 (case 2).

    background:      one (α_p, n_p) pair per priority congested before the burst (the burst's
                     priority must not be among them).
    aggregate_drain: μ, the summed normalized drain rate of the background queues.
    n_burst:         n_p of the burst's priority after the burst (1 for a single burst queue).
    burst_drain:     μ_b/b of the burst queue.
    Uses Lemma 1's worst case Σ_i ω_p^i = α_p, exact when every congested queue has its whole
    port (γ = 1); otherwise a lower bound on the fluid model's tolerance.
      Eq. 10:  ω_b·B / (1 + Σ_{p∈P} α_p)           (P including the burst's priority)
      Eq. 11:  ω_b·B / ((1 + Σ α_p)·(1 + ω_b·((r − μ_b) − μ)/(r − μ_b)))   (P before the burst)
    with ω_b = α_b·(1/n_b)·μ_b.
    """
    B = check_positive("buffer_bytes", buffer_bytes)
    r = check_positive("burst_rate", burst_rate)
    ab = check_positive("alpha_burst", alpha_burst)
    mb = check_positive("burst_drain", burst_drain)
    mu = check_positive("aggregate_drain", aggregate_drain, allow_zero=True)
    if int(n_burst) != n_burst or n_burst < 1:
        raise ValueError(f"n_burst={n_burst!r} must be a positive integer")
    bg = [(check_positive("background alpha", a), int(n)) for a, n in background]
    if any(n < 1 for _, n in bg):
        raise ValueError("background n_p must be >= 1")
    if r <= mb:
        raise ValueError(f"burst_rate={r!r} must exceed burst_drain={mb!r} for a burst queue to build up")
    wb = ab / n_burst * mb
    S = sum(a for a, _ in bg)
    q1 = (r - mb) / (1 + S)
    # ABM: γ_i/ω_i = n_p/α_p for every queue of priority p, so tracking is per priority.
    if all(a / n * q1 <= 1 for a, n in bg):
        return PaperBurst(1, wb * B / (1 + S + wb))
    q2 = (r - mb) - mu
    _case_of([a / n * q2 <= 1 for a, n in bg] + [False])  # raises on a mixed regime
    return PaperBurst(2, wb * B / ((1 + S) * (1 + wb * ((r - mb) - mu) / (r - mb))))


def fb_t1_case1_s(
    *,
    buffer_bytes: float,
    link_gbps: float,
    burst_rate: float,
    alpha_high: float,
    alpha_low: float,
    n_priority: int = 1,
    gamma: float = 1.0,
    n_new: int = 1,
) -> float:
    """FB App. A Eq. 33–34: time to the first drop in case 1 (low-priority queues track).

        t1 = ω·B / ((r − γ)·(1 + α_L + ω·|S_new|)),   ω = α_H·(1/N_p)·γ

    with Σ_{S_old} ω = α_L (Eq. 11's worst case, exact with one low-priority queue per port).
    Rates normalized to the port bandwidth; returns seconds.
    """
    B = check_positive("buffer_bytes", buffer_bytes)
    b = gbps_to_bytes_per_s(check_positive("link_gbps", link_gbps))
    r = check_positive("burst_rate", burst_rate)
    g = check_positive("gamma", gamma)
    if r <= g:
        return math.inf
    w = check_positive("alpha_high", alpha_high) / n_priority * g
    aL = check_positive("alpha_low", alpha_low, allow_zero=True)
    return w * B / ((r - g) * (1 + aL + w * n_new)) / b


def fb_t1_case2_s(
    *,
    buffer_bytes: float,
    link_gbps: float,
    burst_rate: float,
    alpha_high: float,
    alpha_low: float,
    num_congested_ports: int = 1,
    n_priority: int = 1,
    gamma: float = 1.0,
    n_new: int = 1,
) -> float:
    """FB App. A Eq. 39–40: time to the first drop in case 2 (low-priority queues drain at line rate).

        t1 = ω·B / ((1 + α_L)·((r − γ) + ω·(−NUM + |S_new|·(r − γ)))),   ω = α_H·(1/N_p)·γ

    NUM: number of congested ports before the burst (their total drain rate). Returns seconds
    (inf if the denominator is not positive, i.e. the buffer never fills).
    """
    B = check_positive("buffer_bytes", buffer_bytes)
    b = gbps_to_bytes_per_s(check_positive("link_gbps", link_gbps))
    r = check_positive("burst_rate", burst_rate)
    g = check_positive("gamma", gamma)
    if r <= g:
        return math.inf
    w = check_positive("alpha_high", alpha_high) / n_priority * g
    aL = check_positive("alpha_low", alpha_low, allow_zero=True)
    den = (1 + aL) * ((r - g) + w * (-num_congested_ports + n_new * (r - g)))
    return math.inf if den <= 0 else w * B / den / b


def fb_burst_bytes(burst_rate: float, t1_s: float, link_gbps: float) -> float:
    """FB/ABM App. A Eq. 42: Burst = r·t1 (bytes arrived before the first drop)."""
    return check_positive("burst_rate", burst_rate) * gbps_to_bytes_per_s(check_positive("link_gbps", link_gbps)) * t1_s


def burst_tolerance(
    scheme: str,
    buffer_bytes: float,
    background: Sequence[QueueSpec],
    burst: QueueSpec | Sequence[QueueSpec],
    *,
    burst_rate_gbps: float,
    link_gbps: float,
    np_mode: str = "queues",
    duration_s: float | None = None,
    method: str = "closed-form",
) -> BurstResult:
    """Burst tolerance of a buffer state: build the t = 0+ system and solve it.

    method: "closed-form" (:func:`closed_form_burst`) or "integrator"
    (:func:`sharebuf.analysis.integrator.integrate_burst`).
    """
    system = build_transient(scheme, buffer_bytes, background, burst, burst_rate_gbps=burst_rate_gbps,
                             link_gbps=link_gbps, np_mode=np_mode)
    if method == "closed-form":
        return closed_form_burst(system, duration_s=duration_s)
    if method == "integrator":
        return integrate_burst(system, duration_s=duration_s)
    raise ValueError(f"method={method!r} is not supported; allowed: closed-form, integrator")

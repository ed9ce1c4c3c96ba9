"""α advisor: FB's burst-absorption guarantee (FB Eq. 5–7 / App. A Eq. 41, 43, 44) and the
inverse of ABM's isolation and drain-time bounds (ABM Theorems 1–3)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Mapping

from .bounds import abm_drain_time_bound_s, abm_max_priority_bytes, abm_min_priority_bytes
from .burst import build_transient, closed_form_burst
from .model import QueueSpec, check_positive, gbps_to_bytes_per_s


@dataclass(frozen=True)
class FbAlphaAdvice:
    """Result of :func:`advise_fb_alpha`. Rates are also given normalized (r = rate / link)."""

    buffer_bytes: float
    link_gbps: float
    burst_rate_gbps: float
    burst_duration_s: float
    num_congested_ports: int
    rate_ratio: float
    alpha_low_max_no_transient_loss: float  # FB Eq. 5 / Eq. 41 (inf: any α_L)
    alpha_low_max: float                    # FB Eq. 6 / Eq. 43 (strict upper limit; inf: any α_L)
    alpha_low: float                        # the α_L used for α_H
    alpha_high_min_eq7: float | None        # FB Eq. 7 / Eq. 44 (case-2 formula) for alpha_low
    alpha_high_min: float | None            # smallest α_H in the fluid model, case-aware
    case: str                               # regime of the worst-case buffer state at this rate
    possible: bool
    reason: str = ""
    verified_first_drop_s: float | None = None  # closed-form t1 at (alpha_low, alpha_high_min)


def advise_fb_alpha(
    *,
    buffer_bytes: float,
    link_gbps: float,
    burst_rate_gbps: float,
    burst_duration_s: float,
    alpha_low: float | None = None,
    num_congested_ports: int = 1,
) -> FbAlphaAdvice:
    """Largest α_L and smallest α_H for which FB absorbs a burst (rate r, duration t) without drops.

    Worst-case buffer state (FB App. A.5): ``num_congested_ports`` low-priority queues, one per
    port (γ = 1, Σω_L = α_L), and a high-priority burst on an otherwise idle port (γ = 1).
    NUM = 1 is FB's worst case and gives the paper's equations:

      Eq. 5 (41):  α_L ≤ NUM / (r − (NUM + 1))           no transient loss (case 1 at rate r);
                   from Eq. 26 (Eq. 41 prints 1/(r − (NUM+1)); both are 1/(r − 2) at NUM = 1)
      Eq. 6 (43):  α_L < B / ((r − NUM − 1)·t·b) − 1      some finite α_H absorbs the burst
      Eq. 7 (44):  α_H > 1 / ( B / ((r−1)·t·b·(1+α_L)) − (r−NUM−1)/(r−1) )

    Eq. 7 is the case-2 formula. When α_L satisfies Eq. 5 the low queues track their thresholds
    (case 1) and drain more slowly, so ``alpha_high_min`` is computed from the exact regime:
    α_H ≥ t·b·(r−1) / (R0 − t·b·x), with R0 = B/(1+α_L) and x = dQ/dt / b of that regime.
    ``possible`` is False when no α setting exists (e.g. a burst larger than the buffer).
    alpha_low: default FB §6's 0.5 if it is below the Eq. 6 limit, else half that limit.
    """
    B = check_positive("buffer_bytes", buffer_bytes)
    C = check_positive("link_gbps", link_gbps)
    R = check_positive("burst_rate_gbps", burst_rate_gbps)
    t = check_positive("burst_duration_s", burst_duration_s)
    if int(num_congested_ports) != num_congested_ports or num_congested_ports < 1:
        raise ValueError(f"num_congested_ports={num_congested_ports!r} must be a positive integer")
    NUM = int(num_congested_ports)
    b = gbps_to_bytes_per_s(C)
    r = R / C
    tb = t * b  # burst duration expressed in bytes of port capacity

    # Eq. 26 with Σ_{G_ne} γ = NUM and Σ ω = α_L; equals Eq. 5/41's 1/(r − 2) for NUM = 1
    a_nt = math.inf if r <= NUM + 1 else NUM / (r - (NUM + 1))
    a_max = math.inf if r <= NUM + 1 else B / ((r - NUM - 1) * tb) - 1.0
    base = dict(buffer_bytes=B, link_gbps=C, burst_rate_gbps=R, burst_duration_s=t, num_congested_ports=NUM,
                rate_ratio=r, alpha_low_max_no_transient_loss=a_nt, alpha_low_max=a_max)

    if alpha_low is None:
        aL = 0.5 if 0.5 < a_max else (a_max / 2 if a_max > 0 else 0.0)
    else:
        aL = check_positive("alpha_low", alpha_low)
    if r <= 1:
        return FbAlphaAdvice(**base, alpha_low=aL if aL > 0 else 0.5, alpha_high_min_eq7=0.0, alpha_high_min=0.0,
                             case="never", possible=True,
                             reason="r <= 1: the burst drains as fast as it arrives and never queues")
    g = r - 1.0
    if (r - 1) * tb >= B:
        return FbAlphaAdvice(**base, alpha_low=aL, alpha_high_min_eq7=None, alpha_high_min=None, case="-",
                             possible=False,
                             reason=f"impossible: the burst needs (r-1)*t*b = {(r - 1) * tb:.6g} bytes > buffer {B:.6g}")
    if a_max <= 0:
        return FbAlphaAdvice(**base, alpha_low=aL, alpha_high_min_eq7=None, alpha_high_min=None, case="-",
                             possible=False, reason=f"impossible: Eq. 6 gives alpha_low_max = {a_max:.6g} <= 0")
    if aL <= 0 or aL >= a_max:
        return FbAlphaAdvice(**base, alpha_low=aL, alpha_high_min_eq7=None, alpha_high_min=None, case="-",
                             possible=False,
                             reason=f"impossible: alpha_low={aL:.6g} must be < alpha_low_max={a_max:.6g} (Eq. 6)")

    # Eq. 7 / 44 (case 2, NUM general)
    den7 = B / (g * tb * (1 + aL)) - (r - NUM - 1) / g
    aH7 = 1.0 / den7 if den7 > 0 else None

    # exact regime of the worst-case state: NUM low queues, ω = α_L/NUM each, drain 1 each
    R0 = B / (1 + aL)
    x1 = g / (1 + aL)  # every low queue tracks
    if (aL / NUM) * x1 <= 1.0:
        case, x = "case1", x1
    else:
        case, x = "case2", g - NUM
    den = R0 - tb * x
    if den <= 0:
        return FbAlphaAdvice(**base, alpha_low=aL, alpha_high_min_eq7=aH7, alpha_high_min=None, case=case,
                             possible=False,
                             reason=f"impossible with alpha_low={aL:.6g}: the remaining buffer shrinks to 0 "
                                    f"before the burst ends ({case})")
    aH = tb * g / den
    # verify with the closed-form engine on the same buffer state
    bg = [QueueSpec(port=p, priority=0, alpha=aL) for p in range(NUM)]
    burst = QueueSpec(port=NUM, priority=1, alpha=aH)
    res = closed_form_burst(build_transient("fb", B, bg, burst, burst_rate_gbps=R, link_gbps=C))
    return FbAlphaAdvice(**base, alpha_low=aL, alpha_high_min_eq7=aH7, alpha_high_min=aH, case=case, possible=True,
                         verified_first_drop_s=res.first_drop_s)


@dataclass(frozen=True)
class AbmAlphaAdvice:
    """Result of :func:`advise_abm_alpha`: α per priority and the guarantees they give."""

    alphas: dict[int, float]
    min_share: dict[int, float]   # Theorem 1 floor / B
    max_share: dict[int, float]   # Theorem 2 ceiling / B
    possible: bool
    reason: str = ""
    drain_time_bound_s: dict[int, float] = field(default_factory=dict)  # Theorem 3 (needs B and link)


def _shares(name: str, m: Mapping[int, float] | None) -> dict[int, float]:
    if m is None:
        return {}
    if not isinstance(m, Mapping):
        raise ValueError(f"{name}={m!r} must be a mapping priority -> fraction of the buffer")
    out = {}
    for p, v in m.items():
        x = check_positive(f"{name}[{p}]", v)
        if x >= 1:
            raise ValueError(f"{name}[{p}]={v!r} must be in (0, 1) (a fraction of the buffer)")
        out[int(p)] = x
    return out


def advise_abm_alpha(
    *,
    min_share: Mapping[int, float] | None = None,
    max_share: Mapping[int, float] | None = None,
    max_drain_time_s: Mapping[int, float] | None = None,
    buffer_bytes: float | None = None,
    link_gbps: float | None = None,
) -> AbmAlphaAdvice:
    """Invert ABM Theorems 1–3: α per priority from desired buffer shares (fractions of B).

    max_share only:  α_p = x_p / (1 − x_p)                (Theorem 2 with equality)
    max_drain_time:  α_p ≤ y / (1 − y), y = Γ·b / B        (Theorem 3; needs buffer_bytes, link_gbps)
    min_share:       the smallest α meeting every floor,   α_p = m_p·(1 + F) / (1 − M)
                     (Theorem 1 with equality; M = Σ m_p, F = Σ α of the priorities without a floor).
    A priority with a floor and a ceiling gets the floor's α, which must not exceed the ceiling's;
    ``possible`` is False otherwise or when Σ m_p ≥ 1.
    """
    mins = _shares("min_share", min_share)
    maxs = _shares("max_share", max_share)
    caps: dict[int, float] = {p: x / (1 - x) for p, x in maxs.items()}
    if max_drain_time_s:
        if buffer_bytes is None or link_gbps is None:
            raise ValueError("max_drain_time_s needs buffer_bytes and link_gbps")
        B = check_positive("buffer_bytes", buffer_bytes)
        b = gbps_to_bytes_per_s(check_positive("link_gbps", link_gbps))
        for p, d in max_drain_time_s.items():
            y = check_positive(f"max_drain_time_s[{p}]", d) * b / B
            if y < 1:
                caps[int(p)] = min(caps.get(int(p), math.inf), y / (1 - y))
    prios = sorted(set(mins) | set(caps))
    if not prios:
        raise ValueError("give at least one of min_share, max_share, max_drain_time_s")
    for p in mins:
        if p in maxs and mins[p] >= maxs[p]:
            return AbmAlphaAdvice({}, {}, {}, False, f"impossible: min_share[{p}]={mins[p]} >= max_share[{p}]={maxs[p]}")
    M = sum(mins.values())
    if M >= 1:
        return AbmAlphaAdvice({}, {}, {}, False, f"impossible: the minimum shares add up to {M:.6g} >= 1")
    fixed = {p: caps[p] for p in prios if p not in mins}
    F = sum(fixed.values())
    alphas = dict(fixed)
    for p, m in mins.items():
        alphas[p] = m * (1 + F) / (1 - M)
    bad = [p for p in mins if p in caps and alphas[p] > caps[p] * (1 + 1e-12)]
    alphas = dict(sorted(alphas.items()))
    floors = {p: abm_min_priority_bytes(1.0, alphas, p) for p in alphas}
    ceils = {p: abm_max_priority_bytes(1.0, a) for p, a in alphas.items()}
    drains = {}
    if buffer_bytes is not None and link_gbps is not None:
        drains = {p: abm_drain_time_bound_s(buffer_bytes, a, link_gbps) for p, a in alphas.items()}
    if bad:
        p = bad[0]
        return AbmAlphaAdvice(alphas, floors, ceils, False,
                              f"impossible: priority {p} needs alpha={alphas[p]:.6g} for its floor but its "
                              f"ceiling allows at most {caps[p]:.6g}", drains)
    return AbmAlphaAdvice(alphas, floors, ceils, True, "", drains)

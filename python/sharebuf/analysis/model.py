"""Shared fluid-model vocabulary: queue specs, schemes and the per-queue threshold factor ω.

Every threshold-based scheme analysed here has a per-queue threshold of the form

    T_i(t) = ω_i · (B − Q(t))

(ABM App. A Eq. 12–13, FB Eq. 8–9, BSHARE Eq. 2–3; DT is ω_i = α_i, ABM App. A intro).
This module is the one home for computing ω_i from a set of congested queues.

Units: buffer sizes in bytes, link rates in Gbps (converted with :func:`gbps_to_bytes_per_s`),
scheduler shares and burst rates *normalized* to the port bandwidth (dimensionless), as in
the papers' fluid models.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from typing import Iterable, Sequence

#: Schemes understood by the analysis toolkit. "cbm" is an alias of "bshare" (same threshold).
SCHEMES: tuple[str, ...] = ("dt", "fb", "abm", "bshare", "cs")
SCHEME_ALIASES: dict[str, str] = {"cbm": "bshare"}
NP_MODES: tuple[str, ...] = ("queues", "ports")

_SHARE_EPS = 1e-9


def gbps_to_bytes_per_s(gbps: float) -> float:
    """Convert a rate in Gbit/s to bytes/s."""
    return gbps * 1e9 / 8.0


def normalize_scheme(scheme: str) -> str:
    """Return the canonical scheme name or raise ``ValueError`` naming the allowed values."""
    if not isinstance(scheme, str):
        raise ValueError(f"scheme={scheme!r} is not a string; allowed: {', '.join(SCHEMES)} (or 'cbm')")
    s = scheme.strip().lower()
    s = SCHEME_ALIASES.get(s, s)
    if s not in SCHEMES:
        raise ValueError(f"scheme={scheme!r} is not supported; allowed: {', '.join(SCHEMES)} (or 'cbm')")
    return s


def check_positive(name: str, value: float, *, allow_zero: bool = False, allow_inf: bool = False) -> float:
    """Validate a positive finite number; raise ``ValueError`` naming parameter, value and rule."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name}={value!r} is not a number; must be a {'non-negative' if allow_zero else 'positive'} number") from None
    if math.isnan(v) or (math.isinf(v) and not allow_inf):
        raise ValueError(f"{name}={value!r} must be a finite number")
    if v < 0 or (v == 0 and not allow_zero):
        raise ValueError(f"{name}={value!r} must be {'>= 0' if allow_zero else '> 0'}")
    return v


@dataclass(frozen=True)
class QueueSpec:
    """One congested queue of the fluid model.

    port:      egress port index (queues on the same port share its bandwidth).
    priority:  priority (ABM) / priority group (FB) the queue belongs to; n_p counts per priority.
    alpha:     the α of the queue's class / priority (> 0).
    share:     scheduler share γ = μ/b, the queue's drain rate normalized to the port bandwidth,
               in (0, 1]. ``None`` means "equal split among the congested queues of the port"
               (round robin, the assumption of ABM §3.1 and FB §5.1).
    """

    port: int
    priority: int = 0
    alpha: float = 1.0
    share: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.port, int) or isinstance(self.port, bool) or self.port < 0:
            raise ValueError(f"port={self.port!r} must be a non-negative integer")
        if not isinstance(self.priority, int) or isinstance(self.priority, bool) or self.priority < 0:
            raise ValueError(f"priority={self.priority!r} must be a non-negative integer")
        check_positive("alpha", self.alpha)
        if self.share is not None:
            s = check_positive("share", self.share)
            if s > 1.0 + _SHARE_EPS:
                raise ValueError(f"share={self.share!r} must be in (0, 1] (fraction of the port bandwidth)")


def validate_queues(queues: Sequence[QueueSpec], name: str = "queues", *, allow_empty: bool = True) -> tuple[QueueSpec, ...]:
    qs = tuple(queues)
    if not allow_empty and not qs:
        raise ValueError(f"{name} is empty; at least one congested queue is required")
    for q in qs:
        if not isinstance(q, QueueSpec):
            raise ValueError(f"{name} must contain QueueSpec objects, got {type(q).__name__}")
    return qs


def scheduler_shares(queues: Sequence[QueueSpec]) -> list[float]:
    """γ for every queue: explicit ``share`` or an equal split of what the port has left.

    Raises ``ValueError`` if the explicit shares of one port add up to more than 1.
    """
    by_port: dict[int, list[int]] = defaultdict(list)
    for i, q in enumerate(queues):
        by_port[q.port].append(i)
    out = [0.0] * len(queues)
    for port, idx in by_port.items():
        fixed = sum(queues[i].share for i in idx if queues[i].share is not None)
        if fixed > 1.0 + 1e-6:
            raise ValueError(f"share: explicit shares on port {port} add up to {fixed:.6g}; must be <= 1")
        free = [i for i in idx if queues[i].share is None]
        left = max(0.0, 1.0 - fixed)
        for i in idx:
            if queues[i].share is not None:
                out[i] = float(queues[i].share)
        if free:
            if left <= _SHARE_EPS:
                raise ValueError(
                    f"share: port {port} has no bandwidth left for queues without an explicit share "
                    f"(explicit shares sum to {fixed:.6g})")
            for i in free:
                out[i] = left / len(free)
    return out


def congested_counts(queues: Sequence[QueueSpec], np_mode: str = "queues") -> list[int]:
    """n_p of each queue's priority.

    np_mode="queues": number of congested queues of the priority (ABM Eq. 9, FB Eq. 3/8, BSHARE c_p).
    np_mode="ports":  number of distinct ports with a congested queue of the priority. This is the
                      reading that reproduces FB §3's Fig. 5b number (6 packets per queue); the two
                      coincide whenever a priority has at most one queue per port (ABM's model).
    """
    if np_mode not in NP_MODES:
        raise ValueError(f"np_mode={np_mode!r} is not supported; allowed: {', '.join(NP_MODES)}")
    if np_mode == "queues":
        counts: dict[int, int] = defaultdict(int)
        for q in queues:
            counts[q.priority] += 1
        return [counts[q.priority] for q in queues]
    ports: dict[int, set[int]] = defaultdict(set)
    for q in queues:
        ports[q.priority].add(q.port)
    return [len(ports[q.priority]) for q in queues]


def omegas(scheme: str, queues: Sequence[QueueSpec], np_mode: str = "queues") -> list[float]:
    """Per-queue threshold factor ω_i with T_i = ω_i (B − Q).

    dt:      ω = α                                   (DT, ABM Eq. 5 / FB Eq. 1)
    abm, fb: ω = α · (1/n_p) · γ                     (ABM Eq. 9/13, FB Eq. 3/9)
    bshare:  ω = α / c_p                             (BSHARE Eq. 3, length-equivalent of the delay
                                                      threshold θ = α(B−Q)/(c_p C), Eq. 8)
    cs:      ω = +inf (a queue may take all the remaining buffer).
    """
    s = normalize_scheme(scheme)
    qs = validate_queues(queues)
    if s == "dt":
        return [float(q.alpha) for q in qs]
    if s == "cs":
        return [math.inf for _ in qs]
    n = congested_counts(qs, np_mode)
    if s == "bshare":
        return [q.alpha / k for q, k in zip(qs, n)]
    g = scheduler_shares(qs)
    return [q.alpha / k * gi for q, k, gi in zip(qs, n, g)]


def replicate(template: QueueSpec, ports: Iterable[int]) -> list[QueueSpec]:
    """Copies of ``template`` on each of ``ports`` (convenience for symmetric buffer states)."""
    return [QueueSpec(port=p, priority=template.priority, alpha=template.alpha, share=template.share) for p in ports]

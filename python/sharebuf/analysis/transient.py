"""The fluid system right after a burst starts and the result of solving it: the types the
closed form (:mod:`.burst`) and the integrator (:mod:`.integrator`) share."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from .model import QueueSpec, check_positive


@dataclass(frozen=True)
class TransientSystem:
    """The fluid system right after a burst starts (t = 0+). Bytes, bytes/s, seconds.

    Index order: the background queues first, then the burst queues.
    ``arrival_bytes_per_s`` is +inf for (saturated) background queues.
    """

    scheme: str
    buffer_bytes: float
    port_rate_bytes_per_s: float
    omega: tuple[float, ...]
    omega_before: tuple[float, ...]
    drain_bytes_per_s: tuple[float, ...]
    arrival_bytes_per_s: tuple[float, ...]
    initial_bytes: tuple[float, ...]
    is_burst: tuple[bool, ...]
    specs: tuple[QueueSpec, ...] = ()

    @property
    def n_background(self) -> int:
        return sum(1 for b in self.is_burst if not b)

    @property
    def initial_remaining_bytes(self) -> float:
        return self.buffer_bytes - sum(self.initial_bytes)


@dataclass(frozen=True)
class BurstResult:
    """When the burst queue first hits its threshold and how much it absorbed until then.

    case:                "case1" (every unaffected background queue tracks its threshold,
                         ABM A.6 / FB A.4.1), "case2" (none does, ABM A.7 / FB A.4.2), "mixed"
                         (some do), "cs" (complete sharing) or "never" (the burst never drops).
    first_drop_s:        t1, time of the first drop (inf if never within the horizon).
    burst_index:         index (among the burst queues) of the queue that drops first.
    queue_bytes:         that queue's length at t1, (r − μ)·t1: burst tolerance as in
                         ABM Eq. 7–8 and 10–11.
    arrived_bytes:       r·t1, burst tolerance as defined in ABM Eq. 42 / FB Eq. 42.
    qdot_bytes_per_s:    dQ/dt during the regime (closed form) or at the last step (integrator).
    applies:             False if the closed form's regime assumption breaks before t1.
    reason:              why it does not apply.
    absorbed_bytes, fully_absorbed: only with a burst duration: r·min(t1, duration), t1 ≥ duration.
    """

    method: str
    case: str
    first_drop_s: float
    burst_index: int | None
    queue_bytes: float
    arrived_bytes: float
    qdot_bytes_per_s: float
    applies: bool = True
    reason: str = ""
    duration_s: float | None = None
    absorbed_bytes: float | None = None
    fully_absorbed: bool | None = None
    trace: dict | None = field(default=None, repr=False)


def finish_result(res: BurstResult, duration_s: float | None, rate_bytes_per_s: float) -> BurstResult:
    """``res`` with what a burst of ``duration_s`` absorbed (unchanged without a duration)."""
    if duration_s is None:
        return res
    d = check_positive("duration_s", duration_s)
    return dataclasses.replace(
        res, duration_s=d, absorbed_bytes=rate_bytes_per_s * min(d, res.first_drop_s),
        fully_absorbed=res.first_drop_s >= d)

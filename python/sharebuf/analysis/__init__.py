"""sharebuf.analysis — fluid-model analysis of shared-buffer management (pure Python).

Steady state (DT, FB, ABM, BSHARE/CBM, CS), isolation and drain-time bounds, transient burst
tolerance (closed forms and a numerical fluid integrator), burst-tolerance curves and an α
advisor. See docs/analysis.md for every equation and its source. Nothing here needs the
compiled simulator core; matplotlib is only imported when a figure is drawn.
"""

from .advisor import AbmAlphaAdvice, FbAlphaAdvice, advise_abm_alpha, advise_fb_alpha
from .bounds import (
    abm_drain_time_bound_s,
    abm_max_priority_bytes,
    abm_min_priority_bytes,
    fb_max_occupancy_bytes,
    fb_min_remaining_bytes,
)
from .burst import (
    BurstResult,
    PaperBurst,
    TransientSystem,
    abm_burst_tolerance_bytes,
    build_transient,
    burst_tolerance,
    closed_form_burst,
    dt_burst_tolerance_bytes,
    fb_burst_bytes,
    fb_t1_case1_s,
    fb_t1_case2_s,
)
from .integrator import integrate_burst
from .model import (
    NP_MODES,
    SCHEMES,
    QueueSpec,
    congested_counts,
    gbps_to_bytes_per_s,
    normalize_scheme,
    omegas,
    replicate,
    scheduler_shares,
)
from .plots import Curve, Panel, abm_fig5_panels, burst_tolerance_curve, fb_fig11_panels, write_figure, write_panels_csv
from .steady_state import QueueState, SteadyState, dt_threshold_bytes, steady_state

__all__ = [
    "AbmAlphaAdvice", "BurstResult", "Curve", "FbAlphaAdvice", "NP_MODES", "Panel", "PaperBurst", "QueueSpec",
    "QueueState", "SCHEMES", "SteadyState", "TransientSystem",
    "abm_burst_tolerance_bytes", "abm_drain_time_bound_s", "abm_fig5_panels", "abm_max_priority_bytes",
    "abm_min_priority_bytes", "advise_abm_alpha", "advise_fb_alpha", "build_transient", "burst_tolerance",
    "burst_tolerance_curve", "closed_form_burst", "congested_counts", "dt_burst_tolerance_bytes", "dt_threshold_bytes",
    "fb_burst_bytes", "fb_fig11_panels", "fb_max_occupancy_bytes", "fb_min_remaining_bytes", "fb_t1_case1_s",
    "fb_t1_case2_s", "gbps_to_bytes_per_s", "integrate_burst", "normalize_scheme", "omegas", "replicate",
    "scheduler_shares", "steady_state", "write_figure", "write_panels_csv",
]

"""Cross-check the fluid steady state against the packet simulator (needs the compiled core).

Star topology, one switch, DT with one queue per port. N egress ports are congested: each gets
two CBR senders at line rate (2× overload), so every congested queue sits at its DT threshold.
The fluid model predicts every congested queue at α·B/(1 + N·α) (ABM Eq. 6, FB Eq. 2/14).
We compare the mean occupancy of each congested queue over the second half of the run with
that prediction, within 5%.
"""

import pytest

pytest.importorskip("sharebuf._core")

import sharebuf  # noqa: E402
from sharebuf.analysis import QueueSpec, steady_state  # noqa: E402

RUN_MS = 30
BUFFER_BYTES = 1_000_000
LINK_GBPS = 10


def _scenario(alpha: float, n_congested: int) -> dict:
    # hosts 0..N-1 receive (port p of switch 0 leads to host p); hosts N..3N-1 send, two per receiver
    hosts = 3 * n_congested
    flows = []
    for p in range(n_congested):
        for k in range(2):
            flows.append(dict(src=n_congested + 2 * p + k, dst=p, rate_gbps=LINK_GBPS, start_ms=0, stop_ms=RUN_MS))
    return {
        "seed": 1,
        "max_ms": RUN_MS,
        "topology": {"kind": "star", "hosts": hosts, "link_gbps": LINK_GBPS, "link_delay_us": 1},
        "switch": {"buffer_bytes": BUFFER_BYTES, "queues_per_port": 1, "bm": {"scheme": "dt", "alpha": [alpha]}},
        "transport": {"cc": "newreno"},
        "workload": [{"kind": "cbr", "priority": 0, "flows": flows}],
        "output": {"buffer_sample_us": 10, "queue_sample_us": 10},
    }


@pytest.mark.parametrize("alpha,n_congested", [(1.0, 1), (0.5, 2), (1.0, 4), (2.0, 3)])
def test_dt_steady_state_matches_packet_sim(alpha, n_congested):
    res = sharebuf.run(_scenario(alpha, n_congested))
    df = res.queue_occupancy
    assert {"time_s", "switch", "port", "queue", "bytes"} <= set(df.columns)
    late = df[(df["switch"] == 0) & (df["time_s"] >= RUN_MS / 2 / 1e3)]
    predicted = steady_state("dt", BUFFER_BYTES, [QueueSpec(port=p, alpha=alpha) for p in range(n_congested)])
    # hand check of the prediction: α·B/(1+Nα)
    expected = alpha * BUFFER_BYTES / (1 + n_congested * alpha)
    assert predicted.queues[0].occupancy_bytes == pytest.approx(expected, rel=1e-12)
    for p in range(n_congested):
        q = late[(late["port"] == p) & (late["queue"] == 0)]["bytes"]
        assert len(q) > 100, f"too few samples for port {p}"
        assert q.mean() == pytest.approx(predicted.queues[p].occupancy_bytes, rel=0.05), (
            f"alpha={alpha} N={n_congested} port {p}: sim mean {q.mean():.0f} B vs fluid {expected:.0f} B")
    # the uncongested (sender-facing) ports hold nothing
    idle = late[(late["port"] >= n_congested) & (late["queue"] == 0)]["bytes"]
    if len(idle):
        assert idle.mean() < 0.01 * expected

import copy
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def star(hosts=4, gbps=10.0, delay_us=1.0, buffer_bytes=1_000_000, nq=1, scheme="dt", alpha=None, **extra):
    """A star scenario dict; tests add workloads and tweak sections."""
    sc = {
        "seed": 1,
        "max_ms": 20,
        "topology": {"kind": "star", "hosts": hosts, "link_gbps": gbps, "link_delay_us": delay_us},
        "switch": {"buffer_bytes": buffer_bytes, "queues_per_port": nq, "bm": {"scheme": scheme}},
        "transport": {"cc": "newreno"},
        "workload": [],
        "output": {"buffer_sample_us": 10},
    }
    if alpha is not None:
        sc["switch"]["bm"]["alpha"] = alpha
    for k, v in extra.items():
        sc[k] = v
    return copy.deepcopy(sc)


def two_port_overload(buffer_bytes, scheme):
    """A 6-host star, one queue per port: port 0 overloaded 2:1 by 10 Gb/s CBR from t = 0, port 1
    from t = 2 ms, both until 6 ms; queue and buffer samples every 10 us."""
    sc = star(hosts=6, buffer_bytes=buffer_bytes, nq=1, scheme=scheme)
    sc["max_ms"] = 6
    sc["output"] = {"buffer_sample_us": 10, "queue_sample_us": 10}
    flows = [{"src": s, "dst": 0, "rate_gbps": 10, "stop_ms": 6} for s in (2, 3)]
    flows += [{"src": s, "dst": 1, "rate_gbps": 10, "start_ms": 2, "stop_ms": 6} for s in (4, 5)]
    sc["workload"] = [{"kind": "cbr", "flows": flows}]
    return sc


@pytest.fixture
def star_scenario():
    return star

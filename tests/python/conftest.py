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


@pytest.fixture
def star_scenario():
    return star

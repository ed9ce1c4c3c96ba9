"""Per-workload (per-class) transports."""

import sharebuf
from conftest import star


def _two_classes(cc_override):
    sc = star(hosts=3, buffer_bytes=2_000_000, delay_us=5.0)
    sc["max_ms"] = 100
    sc["switch"].update(queues_per_port=2, ecn_k_bytes=60_000)
    sc["switch"]["bm"]["alpha"] = [1.0, 1.0]
    a = {"kind": "flows", "name": "a", "priority": 1, "flows": [{"src": 0, "dst": 2, "size_bytes": 3_000_000, "start_s": 0.0}]}
    if cc_override:
        a["cc"] = cc_override
    b = {"kind": "flows", "name": "b", "priority": 1, "flows": [{"src": 1, "dst": 2, "size_bytes": 3_000_000, "start_s": 0.0}]}
    sc["workload"] = [a, b]
    return sc


def test_workload_cc_overrides_the_transport_default():
    plain = sharebuf.run(_two_classes(None))
    mixed = sharebuf.run(_two_classes("dctcp"))
    # NewReno is not ECN-capable: nothing is marked. With workload "a" on DCTCP, its packets
    # are ECT and get marked at K, and DCTCP keeps it from losing packets at the shared queue.
    assert plain.summary["packets"]["ecn_marked"] == 0
    assert mixed.summary["packets"]["ecn_marked"] > 50
    f = mixed.flows.set_index("workload")
    assert f.loc["a", "finished"] and f.loc["b", "finished"]
    assert f.loc["a", "retransmits"] <= f.loc["b", "retransmits"]


def test_unknown_workload_cc_is_a_clear_error():
    import pytest

    sc = _two_classes("warp")
    with pytest.raises(sharebuf.ScenarioError, match=r"workload\[0\]\.cc = 'warp'.*allowed: .*cubic"):
        sharebuf.run(sc)

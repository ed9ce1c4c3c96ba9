"""Conservation of packets and buffer accounting on the contract leaf-spine scenario."""

import numpy as np
import pytest

import sharebuf
from conftest import EXAMPLES


@pytest.fixture(scope="module")
def leaf_spine_incast():
    import tomllib

    sc = tomllib.loads((EXAMPLES / "contract-leaf-spine.toml").read_text())
    # Heavier incast so that the buffer overflows and drops happen.
    sc["workload"][1].update(request_fraction_of_buffer=1.5, queries_per_s_per_host=200)
    sc["switch"]["buffer_bytes"] = 1_000_000
    sc["arrivals_until_ms"] = 10
    return sc, sharebuf.run(sc)


def test_bytes_sent_equal_delivered_plus_dropped_plus_in_flight(leaf_spine_incast):
    sc, res = leaf_spine_incast
    s = res.summary
    assert s["drops_total"] > 0, "the scenario must overflow the buffer"
    b = s["bytes"]
    assert b["sent"] == b["delivered"] + b["dropped"] + b["in_flight_at_end"]
    p = s["packets"]
    assert p["sent"] == p["delivered"] + s["drops_total"] + p["in_flight_at_end"]


def test_occupancy_within_bounds_and_pools_empty_after_drain(leaf_spine_incast):
    sc, res = leaf_spine_incast
    s = res.summary
    assert not s["hit_max_time"] and s["flows"]["unfinished"] == 0
    B = sc["switch"]["buffer_bytes"]
    occ = res.buffer.occupancy_bytes
    assert occ.min() >= 0 and occ.max() <= B
    for name, v in s["buffer"]["per_switch"].items():
        assert 0 < v["peak_bytes"] <= B, name
        assert v["final_bytes"] == 0, f"{name} holds {v['final_bytes']} B after the drain"
    assert s["packets"]["in_flight_at_end"] == 0


def test_every_flow_and_query_finishes_with_consistent_times(leaf_spine_incast):
    _, res = leaf_spine_incast
    f = res.flows
    assert (f.fct_s > f.ideal_fct_s).all()
    assert np.allclose(f.end_s - f.start_s, f.fct_s)
    q = res.queries
    assert len(q) > 0 and q.finished.all()
    # A query completes when its last response does.
    last = f.dropna(subset=["query_id"]).groupby("query_id").end_s.max()
    assert np.allclose(q.set_index("query_id").end_s.loc[last.index], last)
    # Incast responses come from the other leaf (16 responders, one per server).
    resp = f.dropna(subset=["query_id"])
    assert (resp.groupby("query_id").size() == 16).all()
    assert ((resp.src // 16) != (resp.dst // 16)).all()

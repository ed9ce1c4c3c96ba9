"""Workload generators: offered load, the ABM code's load definition, incast structure,
explicit flow files, and independent random streams."""

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import sharebuf
from sharebuf.config import cdf_mean_bytes, read_cdf


def _leaf_spine(workloads, arrivals_ms, spl=16, links=1, fabric=None):
    topo = {"kind": "leaf_spine", "leaves": 2, "spines": 2, "servers_per_leaf": spl, "links_per_leaf_spine": links}
    if fabric:
        topo["fabric_link_gbps"] = fabric
    # Generation only: the run stops at once, every generated flow is still reported.
    return {"seed": 3, "max_ms": 1e-6, "arrivals_until_ms": arrivals_ms, "topology": topo,
            "switch": {"buffer_bytes": 1_000_000}, "workload": workloads, "output": {"buffer_sample_us": 0}}


def test_websearch_offered_load_matches_target():
    res = sharebuf.run(_leaf_spine([{"kind": "poisson", "cdf": "websearch", "load": 0.4}], 2000))
    f = res.flows
    hosts = 32
    load = f.size_bytes.sum() * 8 / (2.0 * hosts * 10e9)
    assert load == pytest.approx(0.4, rel=0.05), load
    # Inter-leaf destinations only.
    assert ((f.src // 16) != (f.dst // 16)).all()
    # Sizes follow the CDF: its median interpolates to 73 KB between (50 KB, 0.4) and (80 KB, 0.53).
    pts = read_cdf("websearch", None, "cdf")
    assert cdf_mean_bytes(pts) == pytest.approx(1_711_222.5)
    assert np.median(f.size_bytes) == pytest.approx(50_000 + 30_000 * (0.5 - 0.4) / 0.13, rel=0.05)


def test_uplink_load_definition_is_the_abm_codes():
    # ABM code: lambda = load * 80G / (8 * avg_cdf * 32) = 182.6 * load flows/s per server.
    wl = [{"kind": "poisson", "cdf": "websearch", "load": 0.4, "load_definition": "uplink"}]
    res = sharebuf.run(_leaf_spine(wl, 2000, spl=32, links=4, fabric=10))
    per_host_per_s = len(res.flows) / (64 * 2.0)
    assert per_host_per_s == pytest.approx(182.6 * 0.4, rel=0.04), per_host_per_s


def test_incast_queries_have_the_right_shape_and_rate():
    wl = [{"kind": "incast", "request_bytes": 1_000_000, "fan_in": 16, "queries_per_s_per_host": 50}]
    res = sharebuf.run(_leaf_spine(wl, 1000))
    q, f = res.queries, res.flows
    assert len(q) / (32 * 1.0) == pytest.approx(50, rel=0.06)
    per_query = f.groupby("query_id")
    assert (per_query.size() == 16).all()
    assert (per_query.src.nunique() == 16).all()                      # distinct responders
    assert (f.size_bytes == 62_500).all()                             # request / fan_in
    assert (per_query.start_s.nunique() == 1).all()                   # all at the query time
    assert ((f.src // 16) != (f.dst // 16)).all()                     # from the other leaf
    assert (q.size_bytes == 1_000_000).all()


def test_flow_file_parquet_with_priorities(tmp_path):
    t = pa.table({"id": [0, 1, 2], "src": [0, 1, 2], "dst": [3, 3, 0], "size_bytes": [10_000, 20_000, 5_000],
                  "start_s": [0.0, 0.0001, 0.0002], "priority": [0, 1, 1]})
    pq.write_table(t, tmp_path / "flows.parquet")
    sc = {"seed": 1, "max_ms": 50, "topology": {"kind": "star", "hosts": 4},
          "switch": {"buffer_bytes": 1_000_000, "queues_per_port": 2}, "workload": [{"kind": "flows", "file": str(tmp_path / "flows.parquet")}]}
    f = sharebuf.run(sc).flows
    assert f.finished.all()
    assert f.priority.tolist() == [0, 1, 1]
    assert f.size_bytes.tolist() == [10_000, 20_000, 5_000]
    assert f.start_s.tolist() == pytest.approx([0.0, 0.0001, 0.0002])


def test_adding_a_workload_does_not_change_another_ones_draws():
    ws = {"kind": "poisson", "cdf": "websearch", "load": 0.3}
    a = sharebuf.run(_leaf_spine([ws], 200)).flows
    b = sharebuf.run(_leaf_spine([ws, {"kind": "poisson", "cdf": "hadoop", "load": 0.2, "name": "extra"}], 200)).flows
    b = b[b.workload == "poisson"]
    assert len(a) > 500
    assert a.size_bytes.tolist() == b.size_bytes.tolist()
    assert a.start_s.tolist() == b.start_s.tolist()

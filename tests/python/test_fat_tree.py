"""Fat-tree topology through the Python front end: keys, errors, and a lone flow's FCT."""

import pytest

import sharebuf
from sharebuf.config import load_scenario, resolve

FT = {"kind": "fat_tree", "k": 4, "host_link_gbps": 10, "edge_agg_link_gbps": 40, "agg_core_link_gbps": 100,
      "link_delay_us": 1, "edge_agg_link_delay_us": 2, "agg_core_link_delay_us": 3}


def scenario(topo=None, workload=None, **extra):
    sc = {"seed": 1, "max_ms": 10, "topology": dict(FT, **(topo or {})),
          "switch": {"buffer_bytes": 1_000_000, "bm": {"scheme": "dt"}},
          "transport": {"cc": "newreno", "mss_bytes": 1000, "header_bytes": 50},
          "workload": workload or [], "output": {"buffer_sample_us": 0}}
    sc.update(extra)
    return sc


def test_resolve_defaults_and_tier_keys():
    sc, base, _ = load_scenario({"topology": {"kind": "fat_tree"}, "switch": {"buffer_kb_per_port_per_gbps": 9.6}})
    t = resolve(sc, base)["topology"]
    assert t == dict(kind="fat_tree", k=4, hosts_per_edge=2, host_link_bps=10**10, edge_agg_link_bps=10**10,
                     agg_core_link_bps=10**10, host_link_delay_ps=10**7, edge_agg_link_delay_ps=10**7,
                     agg_core_link_delay_ps=10**7, ecmp_hash="salted")
    # Edge switch: 2 hosts + 2 uplinks at 10 Gbps = 40 Gbps x 9.6 KB.
    assert resolve(sc, base)["switch"]["buffer_bytes"] == int(9.6 * 1024 * 40)
    # hosts_per_edge = 4 with k = 4 and the default (host-rate) uplinks: 40 Gbps of hosts over
    # 2 x 10 Gbps, oversubscribed 2:1; the edge's buffer basis is 4 x 10 + 2 x 10 = 60 Gbps.
    sc, base, _ = load_scenario(scenario({"hosts_per_edge": 4, "edge_agg_link_gbps": None, "agg_core_link_gbps": None},
                                         switch={"buffer_kb_per_port_per_gbps": 9.6, "bm": {"scheme": "dt"}}))
    r = resolve(sc, base)
    t = r["topology"]
    assert (t["hosts_per_edge"], t["edge_agg_link_bps"], t["agg_core_link_bps"]) == (4, 10**10, 10**10)
    assert r["switch"]["buffer_bytes"] == int(9.6 * 1024 * 60)


@pytest.mark.parametrize("key,value,needle", [("k", 5, "multiple of 2"), ("k", 0, "greater than or equal to 2"),
                                              ("k", 34, "less than or equal to 32"),
                                              ("hosts_per_edge", 0, "greater than or equal to 1"),
                                              ("bogus", 1, "unknown key 'bogus'")])
def test_bad_keys_name_key_and_value(key, value, needle):
    with pytest.raises(sharebuf.ScenarioError) as e:
        load_scenario(scenario({key: value}))
    msg = str(e.value)
    assert key in msg and needle in msg and "topology" in msg, msg


def test_uplink_load_definition_uses_edge_uplinks():
    wl = [{"kind": "poisson", "cdf": "websearch", "load": 0.5, "load_definition": "uplink"},
          {"kind": "poisson", "cdf": "websearch", "load": 0.5}]
    sc, base, _ = load_scenario(scenario({"hosts_per_edge": 4, "edge_agg_link_gbps": 10}, wl))
    w = resolve(sc, base)["workloads"]
    # uplink: 2 x 10 Gbps shared by 4 hosts = 5 Gbps per host, half the host definition's 10.
    assert w[0]["rate_per_host_per_s"] == pytest.approx(w[1]["rate_per_host_per_s"] / 2, rel=1e-12)
    assert w[0]["destinations"] == "all_to_all"


def test_lone_flow_across_pods_fct_by_hand():
    """Host 0 -> host 15 (pod 0 -> pod 3), 2,500 B in 1,000 B segments, handshake on.
    Handshake: 2 x (108 ns + 12 us) + 40 ns = 24.256 us; data: the first packet reaches the
    last 10G link at 1,428 ns + 11 us, which then sends 2,650 wire bytes (2.12 us), + 1 us:
    15.548 us. FCT = 39.804 us (the Rust test fat_tree.rs derives it packet by packet)."""
    wl = [{"kind": "flows", "flows": [{"src": 0, "dst": 15, "size_bytes": 2500, "start_s": 0.001}]}]
    res = sharebuf.run(scenario(workload=wl))
    f = res.flows.iloc[0]
    assert f.fct_s * 1e6 == pytest.approx(39.804, abs=1e-6)  # 1 ps
    assert f.ideal_fct_s == f.fct_s
    assert res.summary["flows"]["unfinished"] == 0
    assert list(res.summary["buffer"]["per_switch"])[:1] == ["edge0"]

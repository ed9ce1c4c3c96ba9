"""Lossless priorities and PFC (docs/lossless.md §2, §6): an incast on a lossless priority loses
nothing, pauses reach the senders' NICs, and the headroom used matches a hand count."""

import pytest

import sharebuf
from conftest import star

WIRE = 1448 + 54  # a full-size data packet on the wire (B)


def _incast(n=8, delay_us=1.0, lossless=True, buffer_bytes=400_000, **switch):
    """n senders → host n on a 10 Gbps star, priority 3 of 4 queues, DT α = 1; each flow is one
    125 KB initial window (100 segments), so every sender sends back to back at line rate."""
    sc = star(hosts=n + 1, buffer_bytes=buffer_bytes, delay_us=delay_us, nq=4)
    sc["max_ms"] = 20
    sc["transport"] = {"cc": "newreno", "handshake": False, "init_cwnd_packets": 100}
    sc["workload"] = [{"kind": "flows", "priority": 3,
                       "flows": [{"src": i, "dst": n, "size_bytes": 125_000, "start_s": 0.0} for i in range(n)]}]
    if lossless:
        sc["switch"]["lossless_priorities"] = [3]
    sc["switch"].update(switch)
    return sharebuf.run(sc)


def test_lossy_incast_drops_and_lossless_incast_loses_nothing():
    lossy = _incast(lossless=False)
    assert lossy.summary["drops_total"] > 100, lossy.summary["drops_total"]
    assert "pfc" not in lossy.summary
    r = _incast()
    assert r.summary["drops_total"] == 0
    assert r.flows.finished.all()
    assert r.flows.retransmits.sum() == 0
    p = r.summary["pfc"]
    assert p["lossless_drops"] == 0 and p["headroom_overflows"] == 0
    # All 8 × 125 KB delivered at the receiver's line rate: 1 MB of payload, 691 full-size
    # packets + 8 tails ≈ 0.83 ms (within 2 %).
    assert r.flows.fct_s.max() == pytest.approx(8 * 125_000 * WIRE / 1448 * 8 / 10e9, rel=0.02)
    # Pauses reach the senders: every sender NIC (hosts 0..7) received pauses and as many
    # resumes, and was paused for a while; every switch port facing a sender sent them.
    hosts = {row["node"]: row for row in p["ports"] if row["node"] < 8}
    assert sorted(hosts) == list(range(8))
    for h, row in hosts.items():
        assert row["pauses_received"] >= 1 and row["resumes_received"] == row["pauses_received"], row
        assert row["paused_us"] > 10, row
    sw = [row for row in p["ports"] if row["node"] >= 9]
    assert len(sw) == 8 and all(row["pauses_sent"] >= 1 for row in sw)
    assert p["pauses_sent"] == p["pauses_received"] == sum(row["pauses_received"] for row in hosts.values())
    # The same rows as a table, written as pfc.parquet.
    t = r.pfc
    assert len(t) == len(p["ports"]) and int(t.pauses_sent.sum()) == p["pauses_sent"]
    assert (t.paused_ps / 1e6).round(4).tolist() == [round(row["paused_us"], 4) for row in p["ports"]]


@pytest.mark.parametrize("delay_us, packets", [(1.0, 3), (2.0, 5), (3.0, 7)])
def test_headroom_used_matches_the_hand_count(delay_us, packets):
    """A pause stops the upstream NIC one link delay after XOFF, after the packet it is sending.

    By hand (10 Gbps: a packet is 1.2016 us on the wire, the 64 B frame 0.0512 us): packet k
    crosses the PFC threshold when it has arrived, at t_x; its sender started k at
    t_x − d − 1.2016 and sends back to back, so packet k + j starts at t_x − d + (j − 1)·1.2016.
    The frame leaves once the ACK on the wire towards the sender (≤ 54 B, 0.0432 us) is done and
    reaches the sender at t_p ∈ [t_x + d + 0.0512, t_x + d + 0.0944]; the sender's NIC starts no
    packet after t_p. The packets that reach headroom are k and every k + j started before t_p:
    j ≤ 2 at d = 1 us, j ≤ 4 at 2 us, j ≤ 6 at 3 us (k + 6 starts at t_x + 3.008 < t_p). With 8
    senders an ingress port's packets leave the queue every 9.6 us, so in some pause cycle none
    leaves in between: the most headroom used is 3, 5, 7 packets. The documented bound
    2·r·d/8 + 3·M + 64 (no device FIFO) is 7 070, 9 570, 12 070 B, the default headroom."""
    r = _incast(delay_us=delay_us)
    p = r.summary["pfc"]
    sw = [row for row in p["ports"] if row["node"] >= 9]
    bound = int(2 * 10e9 * delay_us * 1e-6 / 8) + 3 * WIRE + 64
    assert {row["headroom_limit_bytes"] for row in sw} == {bound}
    assert max(row["max_headroom_bytes"] for row in sw) == packets * WIRE
    assert all(row["max_headroom_bytes"] <= bound for row in sw)
    assert r.summary["drops_total"] == 0 and p["headroom_overflows"] == 0


def test_bad_lossless_keys_are_clear_errors():
    with pytest.raises(sharebuf.ScenarioError, match=r"lossless_priorities: priority 5 has no queue of its own; allowed: 0\.\.3"):
        _incast(lossless=False, lossless_priorities=[5])
    with pytest.raises(sharebuf.ScenarioError, match=r"lossless_priorities"):
        _incast(lossless=False, lossless_priorities=[9])
    with pytest.raises(sharebuf.ScenarioError, match=r"pfc_headroom_bytes = 5000: below the headroom .* allowed: >= 7070"):
        _incast(pfc_headroom_bytes=5000)
    with pytest.raises(sharebuf.ScenarioError, match=r"pfc_xon_bytes.* need switch\.lossless_priorities"):
        _incast(lossless=False, pfc_xon_bytes=100)


def test_lossy_scenario_records_no_pfc_key():
    """Off by default: a lossy scenario's resolved scenario.toml and engine spec name no PFC key."""
    from sharebuf.runner import load_scenario
    from sharebuf.scenario.engine_spec import resolve

    sc, base, _ = load_scenario(star(), None)
    assert not any(k.startswith(("lossless", "pfc")) for k in sc.switch.model_dump(exclude_none=True))
    assert "pfc" not in resolve(sc, base)["switch"]


@pytest.mark.parametrize("scheduler", ["rr", "sp", "drr", "rr_strict0"])
def test_lossy_traffic_beside_lossless_loses_only_lossy_packets(scheduler):
    """8 senders each send 125 KB on lossless priority 3 and 60 KB on lossy priority 1 to one
    host at once: the lossy class drops (and retransmits), the lossless one never does, under
    every scheduler (a paused queue is skipped, keeping its turn); all flows finish."""
    n = 8
    sc = star(hosts=n + 1, buffer_bytes=400_000, delay_us=1.0, nq=4)
    sc["max_ms"] = 20
    sc["switch"].update(scheduler=scheduler, lossless_priorities=[3])
    if scheduler == "drr":
        sc["switch"]["drr_weights"] = [1, 1, 1, 1]
    sc["transport"] = {"cc": "newreno", "handshake": False, "init_cwnd_packets": 100}
    sc["workload"] = [
        {"kind": "flows", "name": "lossless", "priority": 3, "flows": [{"src": i, "dst": n, "size_bytes": 125_000, "start_s": 0.0} for i in range(n)]},
        {"kind": "flows", "name": "lossy", "priority": 1, "flows": [{"src": i, "dst": n, "size_bytes": 60_000, "start_s": 0.0} for i in range(n)]},
    ]
    r = sharebuf.run(sc)
    rtx = r.flows.groupby("workload").retransmits.sum()
    assert r.summary["drops_total"] > 0 and rtx["lossy"] > 0
    assert rtx["lossless"] == 0
    assert r.summary["pfc"]["lossless_drops"] == 0 and r.summary["pfc"]["headroom_overflows"] == 0
    assert r.flows.finished.all()


def _leaf_spine_incast(lossless):
    """2 leaves × 4 hosts, 1 spine, every link 10 Gbps and 1 us; hosts 0–3 (leaf 0) and 5–7
    (leaf 1) each send a 125 KB window on priority 3 to host 4 (leaf 1). Nodes: hosts 0–7,
    leaves 8 and 9, spine 10."""
    sc = {"seed": 1, "max_ms": 30,
          "topology": {"kind": "leaf_spine", "leaves": 2, "spines": 1, "servers_per_leaf": 4, "links_per_leaf_spine": 1,
                       "host_link_gbps": 10, "fabric_link_gbps": 10, "link_delay_us": 1},
          "switch": {"buffer_bytes": 300_000, "queues_per_port": 4, "bm": {"scheme": "dt"}},
          "transport": {"cc": "newreno", "handshake": False, "init_cwnd_packets": 100},
          "workload": [{"kind": "flows", "priority": 3,
                        "flows": [{"src": i, "dst": 4, "size_bytes": 125_000, "start_s": 0.0} for i in (0, 1, 2, 3, 5, 6, 7)]}]}
    if lossless:
        sc["switch"]["lossless_priorities"] = [3]
    return sharebuf.run(sc)


def test_pauses_propagate_hop_by_hop_on_a_leaf_spine():
    """Leaf 1's uplink pauses the spine, whose full ingress from leaf 0 pauses leaf 0's uplink,
    whose full ingress ports pause hosts 0–3: every sender's NIC is paused, nothing is lost, and
    the 7 × 125 KB leave at host 4's line rate (875 KB with headers at 10 Gbps: 0.726 ms, 2 %).
    Lossy, the same incast drops."""
    assert _leaf_spine_incast(False).summary["drops_total"] > 100
    r = _leaf_spine_incast(True)
    p = r.summary["pfc"]
    assert r.summary["drops_total"] == 0 and p["lossless_drops"] == 0 and p["headroom_overflows"] == 0
    assert r.flows.finished.all() and r.flows.retransmits.sum() == 0
    assert r.flows.fct_s.max() == pytest.approx(7 * 125_000 * WIRE / 1448 * 8 / 10e9, rel=0.02)
    rows = p["ports"]
    rx = {(row["node"], row["local"]): row for row in rows if row["pauses_received"]}
    tx = {(row["node"], row["local"]): row for row in rows if row["pauses_sent"]}
    assert {n for n, _ in rx if n < 8} == {0, 1, 2, 3, 5, 6, 7}, "every sender NIC paused"
    assert any(n == 10 for n, _ in rx), "the spine's port towards leaf 1 paused"
    assert any(n == 8 for n, _ in rx), "leaf 0's uplink paused"
    assert any(n == 10 for n, _ in tx) and any(n == 9 for n, _ in tx) and any(n == 8 for n, _ in tx)
    for row in rows:
        assert row["resumes_received"] == row["pauses_received"] and row["resumes_sent"] == row["pauses_sent"], row
        assert row["max_headroom_bytes"] <= row["headroom_limit_bytes"], row


@pytest.mark.parametrize("scheme", ["cs", "cp", "dt", "fab", "ib", "fb", "fba", "abm", "abm_approx", "cbm", "bshare", "lqd", "credence", "reverie"])
def test_no_scheme_drops_a_lossless_packet(scheme):
    """Every scheme decides only lossy packets: its admission, its push-out (LQD, Credence) and its
    dequeue drop (CBM, BShare's sojourn rule) never take a lossless packet. 8 senders, 125 KB on
    lossless priority 3 and 60 KB on lossy priority 1 each, to one host (invariants on)."""
    n = 8
    sc = star(hosts=n + 1, buffer_bytes=400_000, delay_us=1.0, nq=4, scheme=scheme)
    if scheme in ("cs", "cp", "lqd", "credence", "reverie"):
        sc["switch"]["bm"] = {"scheme": scheme, **({"prediction": "none"} if scheme == "credence" else {})}
    sc["max_ms"] = 30
    sc["switch"]["lossless_priorities"] = [3]
    sc["debug"] = {"check_invariants": True}
    sc["transport"] = {"cc": "newreno", "handshake": False, "init_cwnd_packets": 100}
    sc["workload"] = [
        {"kind": "flows", "name": "lossless", "priority": 3, "flows": [{"src": i, "dst": n, "size_bytes": 125_000, "start_s": 0.0} for i in range(n)]},
        {"kind": "flows", "name": "lossy", "priority": 1, "flows": [{"src": i, "dst": n, "size_bytes": 60_000, "start_s": 0.0} for i in range(n)]},
    ]
    r = sharebuf.run(sc)
    f = r.flows
    assert r.summary["pfc"]["lossless_drops"] == 0 and r.summary["pfc"]["headroom_overflows"] == 0
    ll = f[f.workload == "lossless"]
    assert ll.finished.all() and ll.retransmits.sum() == 0
    assert r.summary["drops_total"] > 0, "the lossy class does drop"

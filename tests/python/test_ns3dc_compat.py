"""Matching the ABM authors' ns-3 simulator (issue 15): ECMP hash, per-port device FIFO,
IP-payload buffer accounting, the `ns3dc` profile, and incast replay. Each test asserts a
number against a hand computation or a closed form."""

import copy

import pytest

import sharebuf
from conftest import star
from sharebuf.config import PROFILES, ScenarioError, parse_scenario, resolve
from test_fidelity import lone_flow_fct_ps

SEG = 1500  # CBR packet bytes in the burst tests
T_SEG_PS = SEG * 8 * 100  # 1500 B at 10 Gbps = 1.2 us


def ns3dc_fabric(ecmp_hash, servers_per_leaf=16, **switch):
    """The ns3dc topology shape (2 leaves, 2 spines, 4 links per leaf-spine, 10G everywhere)
    with inter-leaf websearch traffic heavy enough to queue at salted spines."""
    return {
        "seed": 3,
        "max_ms": 300,
        "arrivals_until_ms": 15,
        "topology": {"kind": "leaf_spine", "leaves": 2, "spines": 2, "servers_per_leaf": servers_per_leaf,
                     "links_per_leaf_spine": 4, "host_link_gbps": 10, "fabric_link_gbps": 10, "link_delay_us": 10,
                     "ecmp_hash": ecmp_hash},
        "switch": {"buffer_bytes": 4_000_000, "queues_per_port": 2, "bm": {"scheme": "dt", "alpha": [1, 0.5]}, **switch},
        "transport": {"cc": "newreno", "mss_bytes": 1400, "header_bytes": 54, "init_cwnd_packets": 10},
        "workload": [{"kind": "poisson", "cdf": "websearch", "load": 0.7, "load_definition": "host", "destinations": "inter_leaf"}],
        "output": {"buffer_sample_us": 0},
    }


# ----------------------------------------------------------------------------- 1. ECMP
def test_ecmp_same_hash_leaves_spines_empty():
    """One hash at every switch: spine downlink (s, j) carries exactly what uplink (s, j)
    carried, at the same rate, so a spine port never holds more than the packets that overlap
    through store-and-forward (a data packet still serializing when a shorter ACK behind it has
    arrived): at most 3 full packets. Salted: spine downlinks merge 4 uplinks and queue."""
    peaks = {}
    for mode in ("salted", "same"):
        s = sharebuf.run(ns3dc_fabric(mode), quiet=True).summary
        peaks[mode] = max(v["peak_bytes"] for k, v in s["buffer"]["per_switch"].items() if k.startswith("spine"))
        assert s["flows"]["unfinished"] == 0
    assert peaks["same"] <= 3 * 1454, peaks
    assert peaks["salted"] >= 50 * 1454, peaks


def test_ecmp_hash_is_validated():
    sc = ns3dc_fabric("polarized")
    with pytest.raises(ScenarioError, match=r"topology.ecmp_hash = 'polarized'.*salted.*same.*flow"):
        parse_scenario(sc)


def flow_hash_fabric(tmp_path, rows, header="id,src,dst,size_bytes,start_s,ecmp_hash,ecmp_hash_reverse"):
    csv = tmp_path / "flows.csv"
    csv.write_text(header + "\n" + "\n".join(rows) + "\n")
    sc = ns3dc_fabric("flow", servers_per_leaf=2)
    sc["workload"] = [{"kind": "flows", "name": "one", "file": str(csv)}]
    sc["output"] = {"buffer_sample_us": 0, "queue_sample_us": 1}
    return sc


def test_ecmp_flow_hashes_pick_the_uplink(tmp_path):
    """`ecmp_hash = "flow"`: a flow's data take uplink ecmp_hash % 8 of its leaf (local port
    servers + index, spine-major), its ACKs uplink ecmp_hash_reverse % 8 of the other leaf. Two
    flows from leaf 0 to leaf 1 with data hashes 13 and 21 (both % 8 = 5) share leaf 0's port
    2 + 5 = 7, the only uplink of leaf 0 that queues; their ACKs (hashes 6 and 30, % 8 = 6) can
    queue only at leaf 1's port 8. (The engine test `sim::ecmp_flow_tests` checks every port's
    bytes.)"""
    sc = flow_hash_fabric(tmp_path, ["0,0,2,300000,0,13,6", "1,1,3,300000,0,21,30"])
    out = tmp_path / "run"
    sharebuf.run(sc, quiet=True, out=out)
    import pandas as pd
    q = pd.read_parquet(out / "queue_occupancy.parquet")
    busy = q[(q.bytes > 0) & (q.port >= 2)].groupby(["switch", "port"]).bytes.max()
    # the data path: leaf 0 port 7 -> spine 1 (switch 3) port 4 + 13 % 4 = 5 to leaf 1 (no more
    # than the store-and-forward overlap of 3 packets there); the ACKs: leaf 1 port 8 -> spine 1 port 2
    assert set(busy.index) <= {(0, 7), (3, 5), (1, 8), (3, 2)}, busy
    assert (0, 7) in busy.index and busy[(0, 7)] > 100_000  # two 10G flows into one 10G uplink
    assert busy.get((3, 5), 0) <= 3 * 1454


def test_ecmp_flow_hash_columns_are_checked(tmp_path):
    sc = flow_hash_fabric(tmp_path, ["0,0,2,3000,0,13,"])
    with pytest.raises(ScenarioError, match=r"row 1 \(line 2\), column 'ecmp_hash_reverse' = '': allowed: a value when the other"):
        sharebuf.run(sc, quiet=True)
    sc = flow_hash_fabric(tmp_path, ["0,0,2,3000,0,13,4294967296"])
    with pytest.raises(ScenarioError, match=r"column 'ecmp_hash_reverse' = '4294967296': allowed: empty or an integer 0..4294967295"):
        sharebuf.run(sc, quiet=True)
    sc = flow_hash_fabric(tmp_path, ["0,0,2,3000,0"], header="id,src,dst,size_bytes,start_s")
    with pytest.raises(Exception, match=r"topology.ecmp_hash = 'flow': flow 0 \(workload 'one', 0 -> 2\) has no ecmp_hash"):
        sharebuf.run(sc, quiet=True)


def spine_alias_fabric(spine_buffer, scheme="dt"):
    """2 leaves x 2 servers, one spine, one link per leaf-spine pair, 10 Gbps, 100 KB per switch,
    DT (alpha 1), one queue per port: host 1 (leaf 0, through the spine) and host 2 (leaf 1)
    each send 10 Gbps of CBR to host 3 (leaf 1's port 1) for 2 ms. The spine's port toward leaf 1
    has the spine-local index 1 * 1 + 0 = 1, ns3dc's port id, which is also leaf 1's port to
    host 3."""
    return {"seed": 1, "max_ms": 4,
            "topology": {"kind": "leaf_spine", "leaves": 2, "spines": 1, "servers_per_leaf": 2, "links_per_leaf_spine": 1,
                         "host_link_gbps": 10, "fabric_link_gbps": 10, "link_delay_us": 1},
            "switch": {"buffer_bytes": 100_000, "queues_per_port": 1, "bm": {"scheme": scheme, "alpha": 1},
                       "spine_buffer": spine_buffer},
            "transport": {"cc": "newreno"},
            "workload": [{"kind": "cbr", "flows": [{"src": 1, "dst": 3, "rate_gbps": 10, "stop_ms": 2},
                                                   {"src": 2, "dst": 3, "rate_gbps": 10, "stop_ms": 2}]}],
            "output": {"buffer_sample_us": 0, "drop_log": True}}


def test_spine_buffer_leaf_aliased_admits_spine_packets_by_the_leafs_aliased_port():
    """ns3dc's spine-buffer aliasing (switch.spine_buffer = "leaf_aliased"). 20 Gbps into host 3's
    10 Gbps port: leaf 1's queue to host 3 fills to DT's threshold (alpha (B - Q) = Q: 50 KB) and
    about half of 2 ms of 20 Gbps (1,667 packets of 1,500 B, less the 33 the queue keeps) drops.
    With the spine's own pool its port toward leaf 1 carries 10 Gbps into a 10 Gbps link and never
    queues: every drop is at leaf 1. Aliased, that port is admitted against leaf 1's queue to host
    3, which sits at its threshold: host 1's packets drop at the spine, about half of the drops,
    and the total stays the same (the queue is full either way)."""
    drops = {}
    for mode in ("own", "leaf_aliased"):
        r = sharebuf.run(spine_alias_fabric(mode), quiet=True)
        d = r.drops
        at_spine = d[(d["node_kind"] == "switch") & (d["node"] == 2)]  # switches: leaf0, leaf1, spine0
        drops[mode] = (len(d), len(at_spine), set(at_spine["flow_id"]))
        assert r.summary["buffer"]["per_switch"]["leaf1"]["peak_bytes"] <= 50_000
    n_own, spine_own, _ = drops["own"]
    n_alias, spine_alias, flows = drops["leaf_aliased"]
    assert 1_600 <= n_own <= 1_640 and spine_own == 0
    assert abs(n_alias - n_own) <= 0.01 * n_own
    assert 0.4 * n_alias <= spine_alias <= 0.6 * n_alias and flows == {0}


def test_spine_buffer_leaf_aliased_clear_errors():
    """Only on a leaf-spine, with ns3dc's arrival-time schemes; named in the engine spec only where
    it acts (the profile sets it for every run)."""
    from sharebuf.scenario.engine_spec import switch
    sc = spine_alias_fabric("leaf_aliased", scheme="lqd")
    assert "spine_buffer" not in switch(parse_scenario(sc), None)
    sc["switch"]["bm"] = {"scheme": "abm"}
    assert switch(parse_scenario(sc), None)["spine_buffer"] == "leaf_aliased"
    st = star(hosts=4)
    st["switch"]["spine_buffer"] = "leaf_aliased"
    assert "spine_buffer" not in switch(parse_scenario(st), None)
    sc["switch"]["spine_buffer"] = "shared"
    with pytest.raises(ScenarioError, match=r"switch\.spine_buffer = 'shared': Input should be 'own' or 'leaf_aliased'"):
        parse_scenario(sc)


# ----------------------------------------------------------------------------- 2. device FIFO
def two_cbr_into_one(n_per_source, device_queue_packets, buffer_bytes=1_000_000, alpha=8.0):
    """Hosts 0 and 1 each send n packets of 1500 B at 10 Gbps to host 2 (star, 10G links): the
    port to host 2 receives 2 packets per 1.2 us and sends 1."""
    sc = star(hosts=3, buffer_bytes=buffer_bytes, alpha=alpha)
    sc["switch"]["device_queue_packets"] = device_queue_packets
    stop_ms = n_per_source * T_SEG_PS / 1e9 - 1e-6  # exactly n departures: t = 0, 1.2 us, ...
    sc["workload"] = [{"kind": "cbr", "flows": [
        {"src": s, "dst": 2, "rate_gbps": 10, "stop_ms": stop_ms, "packet_bytes": SEG} for s in (0, 1)]}]
    sc["output"] = {"buffer_sample_us": 0}
    return sharebuf.run(sc, quiet=True).summary


def test_device_fifo_burst_bypasses_shared_buffer():
    """Burst into an idle port. After k arrival instants (2 packets each) the port has sent
    k - 1 and is sending one, so 2k - k = k packets wait; at most n = 80 (the burst's end).
    Without a device FIFO all wait in the shared buffer: peak 80 x 1500 B (the last arrival
    pair counts both before one leaves: the engine counts at enqueue). With a 100-packet
    device FIFO every waiting packet is below the buffer: a packet is in the pool only for the
    instant between its enqueue and its move down, so the peak is one packet. With a 30-packet
    FIFO, 30 of them are outside: the peak drops by exactly 30 packets."""
    n = 80
    none, big, small = (two_cbr_into_one(n, d)["buffer"]["per_switch"]["switch0"]["peak_bytes"] for d in (0, 100, 30))
    assert none == n * SEG
    assert big == SEG
    assert small == (n - 30) * SEG


def test_device_fifo_backlog_costs_no_events():
    """The device FIFO is a FIFO with no buffer manager, so a packet's departure is fixed when it
    enters it and the port needs no wake-up while only the device holds a backlog. The burst
    above: each of the 2n packets costs one constant-rate send and two arrivals (switch, host),
    exactly 6n events with a 100-packet device FIFO; without one, the switch port also wakes
    at the end of each transmission with packets queued behind it, 2n - 1 times."""
    n = 80
    assert two_cbr_into_one(n, 100)["events"] == 6 * n
    assert two_cbr_into_one(n, 0)["events"] == 6 * n + 2 * n - 1


def test_device_fifo_overloaded_port_holds_threshold_plus_n():
    """An overloaded port under DT (alpha = 1, one queue, B = 150,000 B): the buffer-manager
    queue settles at the DT threshold, q + 1500 <= B - q, i.e. q <= 74,250 -> 50 packets
    (75,000 B), with or without the device FIFO; the 100 packets in the device FIFO are extra,
    so exactly 100 fewer packets are dropped."""
    n = 2000
    a = two_cbr_into_one(n, 0, buffer_bytes=150_000, alpha=1.0)
    b = two_cbr_into_one(n, 100, buffer_bytes=150_000, alpha=1.0)
    assert a["buffer"]["per_switch"]["switch0"]["peak_bytes"] == 75_000
    assert b["buffer"]["per_switch"]["switch0"]["peak_bytes"] == 75_000
    assert a["drops_total"] - b["drops_total"] == 100
    assert a["packets"]["delivered"] + a["drops_total"] == 2 * n == b["packets"]["delivered"] + b["drops_total"]


@pytest.mark.parametrize("size", [14_480, 300_000])
def test_device_fifo_lone_flow_fct_unchanged(size):
    """A FIFO below a FIFO changes no departure time: a lone flow's FCT is the exact hand
    computation of test_fidelity with or without the device FIFO."""
    for dev in (0, 100):
        sc = star(hosts=2, delay_us=1.0)
        sc["switch"]["device_queue_packets"] = dev
        sc["transport"] = {"cc": "newreno", "mss_bytes": 1448, "header_bytes": 54, "init_cwnd_packets": 10}
        sc["workload"] = [{"kind": "flows", "flows": [{"src": 0, "dst": 1, "size_bytes": size, "start_s": 0.0}]}]
        f = sharebuf.run(sc, quiet=True).flows.iloc[0]
        assert round(f.fct_s * 1e12) == lone_flow_fct_ps(size, 1448, 54, 10, 10**10, 10**6, True)


def test_device_fifo_default_is_byte_identical():
    """device_queue_packets = 0 and buffer_accounting = "wire" are today's model: the same flows,
    byte for byte, as a scenario that does not name them."""
    base = ns3dc_fabric("salted")
    base["topology"].pop("ecmp_hash")
    explicit = copy.deepcopy(base)
    explicit["topology"]["ecmp_hash"] = "salted"
    explicit["switch"].update(device_queue_packets=0, buffer_accounting="wire")
    explicit["profile"] = "none"
    a, b = sharebuf.run(base, quiet=True), sharebuf.run(explicit, quiet=True)
    assert a.tables["flows"].equals(b.tables["flows"])


# ----------------------------------------------------------------------------- 3. IP-payload accounting
def test_ip_payload_accounting_counts_1432_per_segment():
    """ns-3 queue discs count the IP payload: 1400 B payload + 54 B headers (20 IP + 20 TCP +
    12 TS + 2 PPP) on the wire is 1432 B in the buffer. The burst test above with 1500 B wire
    packets: 80 waiting packets hold 80 x 1478 B."""
    n = 80
    sc_peak = {}
    for acct in ("wire", "ip_payload"):
        sc = star(hosts=3, buffer_bytes=1_000_000, alpha=8.0)
        sc["switch"]["buffer_accounting"] = acct
        stop_ms = n * T_SEG_PS / 1e9 - 1e-6
        sc["workload"] = [{"kind": "cbr", "flows": [{"src": s, "dst": 2, "rate_gbps": 10, "stop_ms": stop_ms, "packet_bytes": SEG} for s in (0, 1)]}]
        sc["output"] = {"buffer_sample_us": 0}
        sc_peak[acct] = sharebuf.run(sc, quiet=True).summary["buffer"]["per_switch"]["switch0"]["peak_bytes"]
    assert sc_peak["wire"] == n * 1500
    assert sc_peak["ip_payload"] == n * (1500 - 22)


def test_ip_payload_needs_headers():
    sc = star(hosts=2)
    sc["switch"]["buffer_accounting"] = "ip_payload"
    sc["transport"] = {"cc": "newreno", "header_bytes": 10}
    sc["workload"] = [{"kind": "flows", "flows": [{"src": 0, "dst": 1, "size_bytes": 1000, "start_s": 0.0}]}]
    with pytest.raises(ScenarioError, match=r"switch.buffer_accounting = 'ip_payload'.*header_bytes >= 22.*10"):
        sharebuf.run(sc, quiet=True)


# ----------------------------------------------------------------------------- 6. profile
def test_profile_sets_defaults_under_user_keys():
    sc = ns3dc_fabric("salted")  # the user's own ecmp_hash wins over the profile's
    sc["profile"] = "ns3dc"
    p = parse_scenario(sc)
    assert p.topology.ecmp_hash == "salted"
    assert p.switch.device_queue_packets == 100
    assert p.switch.buffer_accounting == "ip_payload"
    assert p.transport.max_rto_us == 60e6
    rep = p.profile_report()
    assert rep["name"] == "ns3dc"
    assert "topology.ecmp_hash" not in rep["set"]
    assert rep["set"]["switch.device_queue_packets"] == 100
    spec = resolve(p, None)
    assert spec["switch"]["device_queue_packets"] == 100 and spec["transport"]["max_rto_ps"] == 60 * 10**12
    # one flag away: sharebuf's own defaults
    sc["profile"] = "none"
    q = parse_scenario(sc)
    assert q.switch.device_queue_packets == 0 and q.switch.buffer_accounting == "wire" and q.profile_report()["set"] == {}


def test_profile_shows_in_summary_and_rejects_unknown():
    sc = star(hosts=2)
    sc["profile"] = "ns3dc"
    sc["workload"] = [{"kind": "flows", "flows": [{"src": 0, "dst": 1, "size_bytes": 1000, "start_s": 0.0}]}]
    s = sharebuf.run(sc, quiet=True).summary
    assert s["profile"]["name"] == "ns3dc"
    # star() runs NewReno under DT: the profile's congestion-control parameters (transport.cc_params.*)
    # and ABM's empty-poll credit are not applied
    assert s["profile"]["set"] == {k: v for k, v in PROFILES["ns3dc"].items()
                                   if not k.startswith("transport.cc_params.") and k != "switch.bm.empty_poll_credit_bytes"}
    sc["profile"] = "ns3"
    with pytest.raises(ScenarioError, match=r"profile = 'ns3': unknown profile; allowed: none, ns3dc"):
        parse_scenario(sc)


def test_profile_gives_cubic_ns3_congestion_avoidance():
    """With transport.cc = "cubic" the profile sets ns-3.39 TcpCubic's congestion avoidance
    (CntClamp 20, no Reno-friendly region; the window arithmetic is checked by
    cc::cubic::tests::no_loss_cnt_clamp_grows_one_segment_per_20_acks); a scenario's own value
    wins; a bad value is one clear error naming the key."""
    sc = star(hosts=2)
    sc["profile"] = "ns3dc"
    sc["transport"] = {"cc": "cubic", "cc_params": {"reno_friendly": True}}
    p = parse_scenario(sc)
    assert p.transport.cc_params == {"reno_friendly": True, "cnt_clamp_segments": 20, "slow_start_cap": "none",
                                     "window_unit": "segments"}
    assert p.profile_report()["set"]["transport.cc_params.cnt_clamp_segments"] == 20
    assert "transport.cc_params.reno_friendly" not in p.profile_report()["set"]
    sc["transport"] = {"cc": "cubic", "cc_params": {"cnt_clamp_segments": 2.5}}
    sc["workload"] = [{"kind": "flows", "flows": [{"src": 0, "dst": 1, "size_bytes": 1000, "start_s": 0.0}]}]
    with pytest.raises(Exception, match=r"transport.cc_params.cnt_clamp_segments = 2.5: must be a whole number in 0..=255"):
        sharebuf.run(sc, quiet=True)


def test_profile_gives_dctcp_ns3_loss_response_and_no_host_marking():
    """With transport.cc = "dctcp" the profile sets ns-3.39 TcpDctcp's loss response
    (loss_ssthresh = "ns3": cwnd (1 - alpha/2) at a loss or a timeout, no floor; the arithmetic is
    checked by cc::dctcp::tests::loss_ssthresh_alpha_follows_ns3_and_half_is_rfc8257) and no Cubic keys;
    host NICs do not step-mark (ns3dc's servers run FqCoDel). Two DCTCP flows from one host into a
    K = 10 KB switch: the profile's host NIC marks nothing, sharebuf's default ("switch" K) marks."""
    sc = star(hosts=3)
    sc["profile"] = "ns3dc"
    sc["transport"] = {"cc": "dctcp", "init_cwnd_packets": 40}
    sc["switch"] = {"buffer_bytes": 1_000_000, "ecn_k_bytes": 10_000}
    sc["workload"] = [{"kind": "flows", "flows": [{"src": 0, "dst": 2, "size_bytes": 200_000, "start_s": 0.0},
                                                  {"src": 0, "dst": 1, "size_bytes": 200_000, "start_s": 0.0}]}]
    p = parse_scenario(sc)
    assert p.transport.cc_params == {"loss_ssthresh": "ns3", "window_unit": "segments"}
    assert p.host.nic_ecn_k_bytes == "none"
    assert resolve(p, None)["host"]["nic_ecn_k_bytes"] is None
    prof = sharebuf.run(sc, quiet=True).summary
    sc["profile"] = "none"
    assert parse_scenario(sc).transport.cc_params == {}
    assert resolve(parse_scenario(sc), None)["host"]["nic_ecn_k_bytes"] == 10_000
    dflt = sharebuf.run(sc, quiet=True).summary
    assert prof["packets"]["ecn_marked_at_nics"] == 0 < dflt["packets"]["ecn_marked_at_nics"]
    sc["profile"] = "ns3dc"
    sc["transport"]["cc_params"] = {"loss_ssthresh": "third"}
    with pytest.raises(Exception, match=r"loss_ssthresh = 'third': not allowed; allowed: half, alpha"):
        sharebuf.run(sc, quiet=True)


def test_profile_fits_preopened_initial_window(tmp_path):
    """ns3dc's incast responses start with InitialCwnd = size / 1400 + 1 segments (the window
    arithmetic: transport::tcp::tests::preopened_init_cwnd_fit_is_size_over_mss_plus_one). A lone
    pre-opened 30 KB response with init_cwnd_packets = 10: one round trip under the profile (21
    segments in the first window: the FCT of a lone flow with a 22-segment initial window), and
    sharebuf's own slow start from 10 segments without it (both hand-computed, test_fidelity)."""
    csv = tmp_path / "incast.csv"
    csv.write_text("id,src,dst,size_bytes,start_s,priority,query,handshake\n0,0,1,30000,0.0,1,0,false\n")
    sc = star(hosts=2, delay_us=10.0)
    sc["transport"] = {"cc": "newreno", "mss_bytes": 1400, "header_bytes": 54, "init_cwnd_packets": 10}
    sc["workload"] = [{"kind": "flows", "name": "incast", "file": str(csv), "handshake": False}]
    fct = {}
    for prof in ("ns3dc", "none"):
        sc["profile"] = prof
        fct[prof] = sharebuf.run(sc, quiet=True).flows.fct_s[0]
    assert parse_scenario({**sc, "profile": "ns3dc"}).transport.preopened_init_cwnd == "fit"
    assert round(fct["ns3dc"] * 1e12) == lone_flow_fct_ps(30000, 1400, 54, 22, 10**10, 10**7, False)
    assert round(fct["none"] * 1e12) == lone_flow_fct_ps(30000, 1400, 54, 10, 10**10, 10**7, False)
    assert fct["none"] > fct["ns3dc"]


def test_profile_holds_the_first_flight_to_the_syn_ack_window(tmp_path):
    """ns-3's sender takes the SYN-ACK's window unscaled (65,535 B) as its receive window until the
    receiver's first ACK (TcpSocketBase::DoForwardUp, RFC 7323): a pre-opened 92,160 B response
    with the "fit" window (66 segments of 1400 B) sends 46 (64,400 B) at once and the other 20 when
    the ACK of the first arrives (the engine's rule, hand-computed:
    transport::tcp::tests::syn_ack_window_holds_the_first_flight_until_the_first_ack). On an idle
    star with 30 us links that ACK is back before the NIC has sent the 46, so the FCT below is
    computed by hand (store-and-forward, ACKs unqueued, as test_fidelity's lone flow); without
    the window all 66 go back to back. A bad value is one clear error."""
    size, mss, hdr, rate, delay = 92_160, 1400, 54, 10**10, 30 * 10**6
    s = lambda b: b * 8 * 10**12 // rate  # noqa: E731
    sizes = [min(mss, size - o) for o in range(0, size, mss)]

    def fct_ps(first_flight):
        nic = sw = 0
        arrive, ack = [], []
        for i, b in enumerate(sizes):
            release = 0 if i < first_flight else ack[0]
            nic = max(release, nic) + s(b + hdr)
            sw = max(nic + delay, sw) + s(b + hdr)
            arrive.append(sw + delay)
            ack.append(arrive[-1] + 2 * (s(hdr) + delay))
        return arrive[-1]

    csv = tmp_path / "incast.csv"
    csv.write_text(f"id,src,dst,size_bytes,start_s,priority,query,handshake\n0,0,1,{size},0.0,1,0,false\n")
    sc = star(hosts=2, delay_us=30.0)
    sc["transport"] = {"cc": "newreno", "mss_bytes": mss, "header_bytes": hdr, "preopened_init_cwnd": "fit"}
    sc["workload"] = [{"kind": "flows", "name": "incast", "file": str(csv), "handshake": False}]
    fct = {}
    for prof in ("ns3dc", "none"):
        sc["profile"] = prof
        fct[prof] = round(sharebuf.run(sc, quiet=True).flows.fct_s[0] * 1e12)
    assert parse_scenario({**sc, "profile": "ns3dc"}).transport.syn_ack_window_bytes == 65535
    assert parse_scenario({**sc, "profile": "none"}).transport.syn_ack_window_bytes == "none"
    assert fct["ns3dc"] == fct_ps(46) and fct["none"] == fct_ps(66)
    assert fct["ns3dc"] - fct["none"] > 40 * 10**6  # the 20 wait for a round trip
    sc["transport"]["syn_ack_window_bytes"] = 0
    with pytest.raises(ScenarioError, match="syn_ack_window_bytes"):
        parse_scenario(sc)
    sc["transport"]["syn_ack_window_bytes"] = mss - 1  # no segment would ever fit
    with pytest.raises(ScenarioError, match="syn_ack_window_bytes = 1399: below transport.mss_bytes = 1400"):
        sharebuf.run(sc, quiet=True)


def test_profile_leaves_lost_retransmissions_to_the_timer():
    """ns-3.39 never resends a retransmitted segment before its RTO (TcpTxBuffer::NextSeg); the
    profile sets lost_retransmission = "rto" (the engine's behaviour both ways:
    transport::tcp::tests::lost_retransmission_detected_or_left_to_the_timer); sharebuf's default
    detects it from SACKs of later data; a bad value is one clear error."""
    sc = star(hosts=2)
    sc["profile"] = "ns3dc"
    assert parse_scenario(sc).transport.lost_retransmission == "rto"
    sc["profile"] = "none"
    assert parse_scenario(sc).transport.lost_retransmission == "detect"
    sc["transport"] = {"cc": "newreno", "lost_retransmission": "rack"}
    with pytest.raises(ScenarioError, match="lost_retransmission"):
        parse_scenario(sc)


def test_profile_resends_the_window_tail_in_recovery():
    """ns-3.39's NextSeg rule 3 lacks RFC 6675's (1.b): in SACK recovery, once no hole is left and
    no new data, it resends the un-SACKed data above the highest SACKed byte in order. The profile
    sets recovery_tail = "resend" (the engine's behaviour both ways, hand-computed:
    transport::tcp::tests::recovery_tail_resent_in_recovery_or_left_to_the_timer); sharebuf's
    default leaves that tail to the timer; the key reaches the engine only when set; a bad value is
    one clear error."""
    from sharebuf.scenario.engine_spec import transport
    sc = star(hosts=2)
    sc["profile"] = "ns3dc"
    assert parse_scenario(sc).transport.recovery_tail == "resend"
    assert transport(parse_scenario(sc))["recovery_tail"] == "resend"
    sc["profile"] = "none"
    assert parse_scenario(sc).transport.recovery_tail == "rto"
    assert "recovery_tail" not in transport(parse_scenario(sc))
    sc["transport"] = {"cc": "newreno", "recovery_tail": "tlp"}
    with pytest.raises(ScenarioError, match="recovery_tail"):
        parse_scenario(sc)


def test_profile_starts_no_recovery_in_cwr():
    """ns-3.39's TcpSocketBase::DupAck counts duplicate ACKs in CA_CWR but starts no recovery
    there. The profile sets cwr_dupacks = "ns3" (the engine's behaviour both ways, hand-computed:
    transport::tcp::tests::cwr_dupacks_start_recovery_or_wait_as_ns3); sharebuf's default starts
    recovery; the key reaches the engine only when set and a flow is ECN-capable (so Cubic runs
    keep their spec); a bad value and a run without SACK are clear errors."""
    from sharebuf.scenario.engine_spec import transport
    sc = star(hosts=2)
    sc["profile"] = "ns3dc"
    assert parse_scenario(sc).transport.cwr_dupacks == "ns3"
    assert "cwr_dupacks" not in transport(parse_scenario(sc))          # newreno: never in CWR
    sc["transport"] = {"cc": "dctcp"}
    assert transport(parse_scenario(sc))["cwr_dupacks"] == "ns3"
    sc["profile"] = "none"
    assert parse_scenario(sc).transport.cwr_dupacks == "recover"
    assert "cwr_dupacks" not in transport(parse_scenario(sc))
    sc["transport"] = {"cc": "dctcp", "cwr_dupacks": "linux"}
    with pytest.raises(ScenarioError, match="cwr_dupacks"):
        parse_scenario(sc)
    sc["transport"] = {"cc": "dctcp", "cwr_dupacks": "ns3", "sack": False}
    with pytest.raises(Exception, match="cwr_dupacks = 'ns3': needs sack = true"):
        sharebuf.run(sc, quiet=True)


def test_profile_brings_dctcp_cwr_window_down_by_prr():
    """ns-3.39's EnterCwr leaves cwnd to the recovery's PRR (ssthresh = GetSsThresh); sharebuf's
    DCTCP cuts at the echo. The profile sets cwr_window = "recovery" (both ways hand-computed:
    transport::tcp::tests::cwr_window_cut_by_dctcp_or_brought_down_by_prr); named in the engine
    spec only when set and a flow is ECN-capable; a bad value is a clear error."""
    from sharebuf.scenario.engine_spec import transport
    sc = star(hosts=2)
    sc["profile"] = "ns3dc"
    sc["transport"] = {"cc": "dctcp"}
    assert transport(parse_scenario(sc))["cwr_window"] == "recovery"
    sc["transport"] = {"cc": "cubic"}
    assert "cwr_window" not in transport(parse_scenario(sc))
    sc["profile"] = "none"
    sc["transport"] = {"cc": "dctcp"}
    assert parse_scenario(sc).transport.cwr_window == "cc"
    assert "cwr_window" not in transport(parse_scenario(sc))
    sc["transport"] = {"cc": "dctcp", "cwr_window": "prr"}
    with pytest.raises(ScenarioError, match="cwr_window"):
        parse_scenario(sc)


def test_loss_cwr_named_for_ecn_capable_flows_only():
    """ns-3.39 presumes lost at a timeout all un-SACKed data (SetSentListLost) and enters CA_CWR from
    CA_LOSS on an ECN-Echo: PRR counts only the resent data in flight, and a window below one segment
    sends nothing (SendPendingData). Hand-computed both ways in
    transport::tcp::tests::loss_cwr_echo_after_a_timeout_stalls_as_ns3_or_sends_the_flight (ns3: the
    last segment waits for a second timeout, 436.0 ms; flight: in at 226.0 ms). The engine spec names
    it only when set and only for ECN-capable flows (a Cubic run's key is unchanged); the ns3dc profile
    sets it, a scenario's own "flight" wins; a bad value is a clear error."""
    from sharebuf.scenario.engine_spec import transport
    sc = star(hosts=2)
    sc["profile"] = "ns3dc"
    sc["transport"] = {"cc": "dctcp"}
    assert transport(parse_scenario(sc))["loss_cwr"] == "ns3"
    sc["transport"] = {"cc": "dctcp", "loss_cwr": "flight"}
    assert "loss_cwr" not in transport(parse_scenario(sc))
    sc["transport"] = {"cc": "cubic"}
    assert "loss_cwr" not in transport(parse_scenario(sc))
    sc["profile"] = "none"
    sc["transport"] = {"cc": "dctcp"}
    assert "loss_cwr" not in transport(parse_scenario(sc))
    sc["transport"] = {"cc": "dctcp", "loss_cwr": "ns3"}
    assert transport(parse_scenario(sc))["loss_cwr"] == "ns3"
    sc["transport"] = {"cc": "dctcp", "loss_cwr": "lost"}
    with pytest.raises(ScenarioError, match="loss_cwr"):
        parse_scenario(sc)


def test_limited_transmit_named_only_when_on_and_set_by_the_profile():
    """Limited Transmit (RFC 3042; with SACK RFC 6675 section 5 step 3, as ns-3.39's AvailableWindow
    in CA_DISORDER): each of the first two duplicate ACKs lets a new segment go. Hand-computed in
    transport::tcp::tests::limited_transmit_sends_a_new_segment_on_each_of_the_first_two_duplicates
    (10 000 at 21 us, 11 000 at 22 us, the fast retransmit at 23 us; nothing between without it).
    The engine spec names it only when on (a run's key is unchanged otherwise); the ns3dc profile
    turns it on, a scenario's own false wins; a value that is not a boolean is a clear error."""
    from sharebuf.scenario.engine_spec import transport
    sc = star(hosts=2)
    sc["transport"] = {"cc": "cubic"}
    assert "limited_transmit" not in transport(parse_scenario(sc))
    sc["transport"] = {"cc": "cubic", "limited_transmit": True}
    assert transport(parse_scenario(sc))["limited_transmit"] is True
    sc["profile"] = "ns3dc"
    sc["transport"] = {"cc": "cubic"}
    assert transport(parse_scenario(sc))["limited_transmit"] is True
    sc["transport"] = {"cc": "dctcp", "limited_transmit": False}
    assert "limited_transmit" not in transport(parse_scenario(sc))
    sc["transport"] = {"cc": "cubic", "limited_transmit": "yes"}
    with pytest.raises(ScenarioError, match="limited_transmit"):
        parse_scenario(sc)


def test_loss_exit_acked_and_cubic_slow_start_cap_named_only_when_set():
    """After a timeout ns-3.39's ProcessAck leaving CA_LOSS counts only the segments above m_recover, and
    TcpCubic's slow start adds every acknowledged segment past ssthresh (transport.loss_exit_acked = "ns3",
    transport.cc_params.slow_start_cap = "none"). Hand-computed in
    transport::tcp::tests::loss_exit_acked_and_cubic_slow_start_cap_after_a_timeout: the ACK of the resent
    head jumps over 13 segments; it lets 2 segments go by default, 14 with the cap off, 1 with ns-3's exit.
    The profile sets both (the cap only for Cubic); a spec names the transport key only when set; bad
    values are clear errors naming the key."""
    from sharebuf.scenario.engine_spec import transport
    sc = star(hosts=2)
    sc["transport"] = {"cc": "cubic"}
    t = transport(parse_scenario(sc))
    assert "loss_exit_acked" not in t and "slow_start_cap" not in t.get("cc_params", {})
    sc["profile"] = "ns3dc"
    t = transport(parse_scenario(sc))
    assert t["loss_exit_acked"] == "ns3" and t["cc_params"]["slow_start_cap"] == "none"
    sc["transport"] = {"cc": "dctcp"}
    t = transport(parse_scenario(sc))
    assert t["loss_exit_acked"] == "ns3" and "slow_start_cap" not in t.get("cc_params", {})
    sc["transport"] = {"cc": "cubic", "loss_exit_acked": "all"}
    assert "loss_exit_acked" not in transport(parse_scenario(sc))
    sc["profile"] = "none"
    sc["transport"] = {"cc": "cubic", "loss_exit_acked": "recover"}
    with pytest.raises(ScenarioError, match="loss_exit_acked"):
        parse_scenario(sc)
    sc["transport"] = {"cc": "cubic", "cc_params": {"slow_start_cap": "cwnd"}}
    with pytest.raises(ScenarioError, match="slow_start_cap = .cwnd.: not allowed; allowed: ssthresh, none"):
        sharebuf.run(sc, quiet=True, out=None)


def test_recovery_exit_acked_named_only_when_ns3_and_set_by_the_profile():
    """ns-3.39's ProcessAck leaving CA_RECOVERY hands IncreaseWindow every whole segment the ACK acknowledges,
    from cwnd = ssthresh (transport.recovery_exit_acked = "ns3"). Hand-computed in
    transport::tcp::tests::recovery_exit_acked_grows_the_window_on_the_ack_that_ends_recovery_as_ns3 (NewReno:
    10 000 B stay 10 000 without it, 11 000 with it)."""
    _named_when_ns3_and_set_by_the_profile("recovery_exit_acked", "none", "all", ("cubic", "dctcp"))


def test_window_unit_segments_set_by_the_profile_for_cubic_and_dctcp():
    """ns-3.39's TcpCubic counts cwnd, W_max and ssthresh in whole segments, and TcpLinuxReno (under
    TcpDctcp) grows by whole segments (transport.cc_params.window_unit = "segments"; hand-computed in
    cc::cubic::tests::segment_arithmetic_counts_whole_segments_as_ns3 and
    cc::tests::reno_growth_in_whole_segments_as_ns3). The profile sets it for Cubic and DCTCP, not for
    TIMELY; a bad value, or segments with Cubic's Reno-friendly region, is a clear error."""
    from sharebuf.scenario.engine_spec import transport
    sc = star(hosts=2)
    sc["transport"] = {"cc": "cubic"}
    assert "window_unit" not in transport(parse_scenario(sc)).get("cc_params", {})
    sc["profile"] = "ns3dc"
    assert transport(parse_scenario(sc))["cc_params"]["window_unit"] == "segments"
    sc["transport"] = {"cc": "dctcp"}
    assert transport(parse_scenario(sc))["cc_params"]["window_unit"] == "segments"
    sc["transport"] = {"cc": "timely"}
    assert "window_unit" not in transport(parse_scenario(sc)).get("cc_params", {})
    sc["transport"] = {"cc": "cubic", "cc_params": {"window_unit": "bytes"}}
    assert transport(parse_scenario(sc))["cc_params"]["window_unit"] == "bytes"
    sc["profile"] = "none"
    sc["workload"] = [{"kind": "flows", "flows": [{"src": 0, "dst": 1, "size_bytes": 1000, "start_s": 0.0}]}]
    sc["transport"] = {"cc": "cubic", "cc_params": {"window_unit": "packets"}}
    with pytest.raises(ScenarioError, match="window_unit = .packets.: not allowed; allowed: bytes, segments"):
        sharebuf.run(sc, quiet=True, out=None)
    sc["transport"] = {"cc": "cubic", "cc_params": {"window_unit": "segments"}}
    with pytest.raises(ScenarioError, match="window_unit = 'segments'.*reno_friendly"):
        sharebuf.run(sc, quiet=True, out=None)
    sc["transport"] = {"cc": "cubic", "cc_params": {"window_unit": "segments", "reno_friendly": False}}
    sharebuf.run(sc, quiet=True, out=None)


def test_rtt_samples_named_only_when_ns3_and_set_by_the_profile():
    """ns-3.39's EstimateRtt samples only an ACK that covers the oldest segment of its history (new data
    sent since the last timeout, never resent), and NewAck sets the RTO from the estimator, dropping a
    timeout's backoff (transport.rtt_samples = "ns3"). Hand-computed in
    transport::tcp::tests::rtt_samples_every_ack_or_as_ns3: RTO 213.01 ms at the recovery and the timeout at
    400.4 ms with every ACK's sample, 1000 ms and 1200.4 ms with ns-3's (no sample from the duplicates).
    The profile sets it for every transport; a spec names it only when "ns3"; a bad value is a clear error."""
    _named_when_ns3_and_set_by_the_profile("rtt_samples", "every_ack", "karn", ("cubic", "dctcp"))


def test_loss_marking_named_only_when_ns3_set_by_the_profile_and_needs_sack():
    """ns-3.39's TcpTxBuffer presumes a segment lost only with three SACKed segments above it
    (UpdateLostCount; NextSeg's rule 1 resends only those), where sharebuf presumes every hole below the
    highest SACKed byte lost (transport.loss_marking). Hand-computed in
    transport::tcp::tests::loss_marking_highest_sack_or_three_sacked_segments_as_ns3: the lost last segment
    of the window is resent at 200.7 ms with the first SACK above it, and at 201.1 ms with the third as
    ns-3. The profile sets it (docs/validation.md, "One sender, ns3dc's ACKs"); a spec names it only when
    "ns3"; a scenario's own "highest_sack" wins; without SACK or with a bad value, a clear error."""
    _named_when_ns3_and_set_by_the_profile("loss_marking", "highest_sack", "fack", ("cubic", "dctcp", "timely"))
    sc = star(hosts=2)
    sc["transport"] = {"cc": "cubic", "loss_marking": "ns3", "sack": False}
    with pytest.raises(ScenarioError, match="loss_marking.*sack"):
        sharebuf.run(sc, quiet=True, out=None)


def test_dctcp_loss_ssthresh_ns3_is_floorless():
    """DCTCP's loss rule: "alpha" is cwnd (1 - alpha/2) floored at 2 segments, "ns3" is ns-3.39's
    TcpDctcp::GetSsThresh without a floor (hand-computed in cc::dctcp's tests: one 1000 B segment
    at alpha = 1 gives 500 B). Both are accepted; anything else is a clear error naming the values."""
    sc = star(hosts=2)
    for rule in ("half", "alpha", "ns3"):
        sc["transport"] = {"cc": "dctcp", "cc_params": {"loss_ssthresh": rule}}
        sharebuf.run(sc, quiet=True)
    sc["transport"] = {"cc": "dctcp", "cc_params": {"loss_ssthresh": "floor"}}
    with pytest.raises(Exception, match="loss_ssthresh"):
        sharebuf.run(sc, quiet=True)


def test_profile_sets_ns3_ce_echo_partial_ack_and_recovery_timer():
    """ns-3.39's receiver echoes a CE only above m_ecnCESeq, its partial ACKs in CA_RECOVERY call
    DoRetransmit, and only the first of them restarts the timer. The profile sets all three (each
    hand-computed both ways: transport::tcp::tests::ce_echo_per_packet_or_above_the_highest_as_ns3,
    partial_ack_resends_the_head_and_times_as_ns3); they are named in the engine spec only when set
    (ce_echo only for ECN-capable flows); bad values are clear errors."""
    from sharebuf.scenario.engine_spec import transport
    sc = star(hosts=2)
    sc["profile"] = "ns3dc"
    sc["transport"] = {"cc": "dctcp"}
    t = transport(parse_scenario(sc))
    assert (t["ce_echo"], t["partial_ack"], t["recovery_timer"]) == ("ns3", "ns3", "ns3")
    sc["transport"] = {"cc": "cubic"}
    t = transport(parse_scenario(sc))
    assert "ce_echo" not in t and (t["partial_ack"], t["recovery_timer"]) == ("ns3", "ns3")
    sc["profile"] = "none"
    sc["transport"] = {"cc": "dctcp"}
    t = transport(parse_scenario(sc))
    assert not {"ce_echo", "partial_ack", "recovery_timer"} & set(t)
    for key, bad in (("ce_echo", "each"), ("partial_ack", "head"), ("recovery_timer", "first")):
        sc["transport"] = {"cc": "dctcp", key: bad}
        with pytest.raises(ScenarioError, match=key):
            parse_scenario(sc)
    sc["transport"] = {"cc": "dctcp", "partial_ack": "ns3", "sack": False}
    with pytest.raises(Exception, match="partial_ack = 'ns3': needs sack = true"):
        sharebuf.run(sc, quiet=True)


@pytest.mark.parametrize("key,ns3,default,bad", [("prr_reduction_bound", "ns3", "ssrb", "crb"),
                                                  ("prr_arithmetic", "ns3", "exact", "uint32")])
def test_prr_options_named_where_prr_runs(key, ns3, default, bad):
    """ns-3.39's TcpPrrRecovery: the slow-start reduction bound only on an ACK of retransmitted data
    (hand-computed both ways: transport::tcp::tests::prr_reduction_bound_on_every_ack_or_on_acks_of_retransmissions),
    and prr_delivered * ssthresh as two uint32_t, wrapping modulo 2^32 (on ns3dc's own traced numbers:
    transport::tcp::tests::prr_proportional_wraps_as_ns3_on_ns3dc_numbers). Each is named in the engine
    spec only when set and only where PRR runs; the ns3dc profile sets it, a scenario's own default
    wins; a bad value is a clear error naming the field."""
    from sharebuf.scenario.engine_spec import transport
    sc = star(hosts=2)
    sc["profile"] = "ns3dc"
    for cc in ("cubic", "dctcp"):
        sc["transport"] = {"cc": cc}
        assert transport(parse_scenario(sc))[key] == ns3
    sc["transport"] = {"cc": "cubic", key: default}
    assert key not in transport(parse_scenario(sc))
    sc["transport"] = {"cc": "cubic", "recovery": "rfc6675"}
    assert key not in transport(parse_scenario(sc))
    sc["profile"] = "none"
    sc["transport"] = {"cc": "cubic", "recovery": "prr"}
    assert key not in transport(parse_scenario(sc))
    sc["transport"] = {"cc": "cubic", "recovery": "prr", key: ns3}
    assert transport(parse_scenario(sc))[key] == ns3
    sc["transport"] = {"cc": "cubic", key: bad}
    with pytest.raises(ScenarioError, match=key):
        parse_scenario(sc)


def test_profile_sets_ns3dc_timely():
    """The profile runs TIMELY as ns3dc's TcpAdvanced (docs/validation.md, "TIMELY and PowerTCP"):
    its parameters go to TIMELY only, a scenario's own value wins, and every rate-paced sender
    books the payload alone. The hand computations are cc::timely's and transport::tcp's tests."""
    sc = star(hosts=2)
    sc["profile"] = "ns3dc"
    sc["transport"] = {"cc": "timely"}
    t = parse_scenario(sc).transport
    assert t.cc_params == {"t_low_us": 200, "ai_mbps": 100, "hai_mbps": 150, "segment_bytes": 0,
                           "gradient_base": "propagation", "rtt_diff_wraps": True, "keep_initial_window": True,
                           "update_trigger": "new_ack", "loss_ssthresh": "ns3"}
    assert t.pacing_size == "payload"
    # TcpAdvanced's loss response: named in the engine spec (it uses PRR, and TIMELY's rate changes)
    from sharebuf.scenario.engine_spec import transport
    assert t.rate_window_in_recovery == "rate" and transport(parse_scenario(sc))["rate_window_in_recovery"] == "rate"
    sc["transport"] = {"cc": "timely", "cc_params": {"t_low_us": 50}}
    assert parse_scenario(sc).transport.cc_params["t_low_us"] == 50
    sc["transport"] = {"cc": "dctcp"}
    assert "t_low_us" not in parse_scenario(sc).transport.cc_params
    assert "update_trigger" not in parse_scenario(sc).transport.cc_params
    sc.pop("profile")
    sc["transport"] = {"cc": "timely"}
    t = parse_scenario(sc).transport
    assert t.cc_params == {} and t.pacing_size == "packet"


def test_profile_sets_ns3dc_powertcp():
    """The profile runs PowerTCP as ns3dc's TcpAdvanced (docs/validation.md, "TIMELY and PowerTCP"):
    its four update-rule parameters go to PowerTCP only, the switches stamp INT's txBytes at the queue
    disc and stamp the ACKs too (`int_stamp = "all"`; both named in the engine spec only where a flow
    reads INT; hand computation: tests/int.rs `int_stamp_all_appends_the_acks_hops`), and a rate change moves a pending
    pacing gap (named only where a flow is paced); a scenario's own value wins; bad values are clear
    errors. The hand computations are cc::powertcp's and transport::tcp's tests."""
    from sharebuf.scenario.engine_spec import switch, transport
    sc = star(hosts=2)
    sc["profile"] = "ns3dc"
    sc["transport"] = {"cc": "powertcp"}
    s = parse_scenario(sc)
    assert s.transport.cc_params == {"smoothing_base": "reference", "unsmoothed_below": 0.5, "power_start": "zero",
                                     "tau_base": "propagation", "window_check": "segment",
                                     "update_trigger": "new_ack", "loss_ssthresh": "ns3"}
    assert switch(s, None)["int_tx_bytes"] == "dequeued" and switch(s, None)["int_stamp"] == "all"
    assert transport(s)["pacing_rate_change"] == "rescale"
    sc["transport"] = {"cc": "powertcp", "cc_params": {"power_start": "first"}}
    assert parse_scenario(sc).transport.cc_params["power_start"] == "first"
    sc["switch"]["int_tx_bytes"] = "transmitted"
    sc["switch"]["int_stamp"] = "data"
    sc["transport"]["pacing_rate_change"] = "keep"
    s = parse_scenario(sc)
    assert "int_tx_bytes" not in switch(s, None) and "pacing_rate_change" not in transport(s)
    assert "int_stamp" not in switch(s, None)
    sc["switch"].pop("int_tx_bytes")
    sc["switch"].pop("int_stamp")
    sc["transport"] = {"cc": "timely"}
    s = parse_scenario(sc)
    assert "power_start" not in s.transport.cc_params and "int_tx_bytes" not in switch(s, None)
    assert "int_stamp" not in switch(s, None)
    assert transport(s)["pacing_rate_change"] == "rescale"
    sc["transport"] = {"cc": "cubic"}
    s = parse_scenario(sc)
    assert s.transport.cc_params.get("power_start") is None
    assert "int_tx_bytes" not in switch(s, None) and "pacing_rate_change" not in transport(s)
    # HPCC reads INT too; fixed_window's rate never changes, so no pacing gap is ever rescaled
    sc["transport"] = {"cc": "hpcc"}
    assert switch(parse_scenario(sc), None)["int_tx_bytes"] == "dequeued"
    assert switch(parse_scenario(sc), None)["int_stamp"] == "all"
    sc["transport"] = {"cc": "fixed_window"}
    assert "pacing_rate_change" not in transport(parse_scenario(sc))
    sc.pop("profile")
    sc["transport"] = {"cc": "powertcp"}
    s = parse_scenario(sc)
    assert s.transport.cc_params == {} and "int_tx_bytes" not in switch(s, None) \
        and "pacing_rate_change" not in transport(s) and "int_stamp" not in switch(s, None)
    sc["switch"]["int_tx_bytes"] = "sent"
    with pytest.raises(ScenarioError, match=r"switch\.int_tx_bytes = 'sent': Input should be 'transmitted' or 'dequeued'"):
        parse_scenario(sc)
    sc["switch"].pop("int_tx_bytes")
    sc["switch"]["int_stamp"] = "acks"
    with pytest.raises(ScenarioError, match=r"switch\.int_stamp = 'acks': Input should be 'data' or 'all'"):
        parse_scenario(sc)
    sc["switch"].pop("int_stamp")
    sc["transport"] = {"cc": "powertcp", "pacing_rate_change": "reset"}
    with pytest.raises(ScenarioError, match=r"transport\.pacing_rate_change = 'reset': Input should be 'keep' or 'rescale'"):
        parse_scenario(sc)
    sc["workload"] = [{"kind": "flows", "flows": [{"src": 0, "dst": 1, "size_bytes": 10_000, "start_s": 0.0}]}]
    for k, v, msg in (("smoothing_base", "window", r"transport\.cc_params\.smoothing_base = 'window': not allowed; allowed: current, reference"),
                      ("power_start", 0, r"transport\.cc_params\.power_start = 0: expected a string; allowed: first, zero"),
                      ("tau_base", "tau", r"transport\.cc_params\.tau_base = 'tau': not allowed; allowed: unloaded, propagation"),
                      ("unsmoothed_below", -1, r"transport\.cc_params\.unsmoothed_below = -1: must be a finite number >= 0"),
                      ("window_check", "bytes", r"transport\.cc_params\.window_check = 'bytes': not allowed; allowed: in_flight, segment")):
        sc["transport"] = {"cc": "powertcp", "cc_params": {k: v}}
        with pytest.raises(sharebuf.ScenarioError, match=msg):
            sharebuf.run(sc, quiet=True)


def test_pacing_size_reaches_the_engine_only_where_a_sender_is_paced():
    """The profile's pacing_size = "payload" and pacing_gap = "ns3" act only on rate-paced senders
    (TIMELY, PowerTCP, θ-PowerTCP, HPCC, fixed_window): the engine spec names them only when the
    transport or a workload runs one, so the runs of window-based transports (Cubic, DCTCP) keep
    their keys."""
    from sharebuf.scenario.engine_spec import transport
    sc = star(hosts=2)
    sc["profile"] = "ns3dc"
    for cc, named in (("cubic", False), ("dctcp", False), ("newreno", False), ("timely", True), ("powertcp", True)):
        sc["transport"] = {"cc": cc}
        t = transport(parse_scenario(sc))
        assert ("pacing_size" in t) is named and ("pacing_gap" in t) is named, cc
    sc["transport"] = {"cc": "cubic"}
    sc["workload"] = [{"kind": "flows", "cc": "fixed_window", "flows": [{"src": 0, "dst": 1, "size_bytes": 10_000, "start_s": 0.0}]}]
    t = transport(parse_scenario(sc))
    assert t["pacing_size"] == "payload" and t["pacing_gap"] == "ns3"
    sc["transport"] = {"cc": "timely", "pacing_gap": "round"}
    with pytest.raises(ScenarioError, match=r"transport\.pacing_gap = 'round': Input should be 'exact' or 'ns3'"):
        parse_scenario(sc)


def test_timely_reads_its_send_stamp_not_the_ms_timestamp_tick():
    """ns-3's TCP timestamps count whole ms (the profile's timestamp_tick_us = 1000) but ns3dc's
    TIMELY takes its RTT from its own ns send stamp: a lone TIMELY flow under the profile finishes
    exactly as with an exact clock (no loss, so the RTO estimator's coarser samples never act) and
    near line rate; when TIMELY read the 1 µs / 1 ms samples it ran at 0.36 Gbps."""
    sc = star(hosts=2)
    sc["profile"] = "ns3dc"
    sc["transport"] = {"cc": "timely"}
    sc["workload"] = [{"kind": "flows", "flows": [{"src": 0, "dst": 1, "size_bytes": 5_000_000, "start_s": 0.0}]}]
    fl = [sharebuf.run(sc, quiet=True).flows for sc["transport"]["timestamp_tick_us"] in (1000, 0)]
    assert fl[0]["fct_s"].iloc[0] == fl[1]["fct_s"].iloc[0]
    assert fl[0]["slowdown"].iloc[0] < 1.2


# ----------------------------------------------------------------------------- 5. incast replay
def test_flows_replay_queries_and_preopened_connections(tmp_path):
    """Explicit query ids and pre-opened connections in `flows` input. A lone pre-opened
    response has the hand-computed FCT without handshake (test_fidelity); a query of two
    responses gets one queries.parquet row: requester = dst, size = the sum, QCT = the later
    response's end minus the query time. A row's own `handshake` wins over the workload's."""
    csv = tmp_path / "incast.csv"
    csv.write_text("id,src,dst,size_bytes,start_s,priority,query,handshake\n"
                   "0,0,1,14480,0.0,1,7,\n"           # query 7: alone, first (t = 0)
                   "1,2,3,50000,0.001,1,9,\n"         # query 9: two responses to host 3
                   "2,0,3,50000,0.001,1,9,\n"
                   "3,2,1,1000,0.002,1,,true\n")      # not a query; handshake despite the workload
    sc = star(hosts=4, delay_us=1.0)
    sc["transport"] = {"cc": "newreno", "mss_bytes": 1448, "header_bytes": 54, "init_cwnd_packets": 10}
    sc["workload"] = [{"kind": "flows", "name": "incast", "file": str(csv), "handshake": False}]
    res = sharebuf.run(sc, quiet=True)
    f, q = res.flows, res.queries
    assert round(f.fct_s[0] * 1e12) == lone_flow_fct_ps(14480, 1448, 54, 10, 10**10, 10**6, False)
    assert round(f.fct_s[3] * 1e12) == lone_flow_fct_ps(1000, 1448, 54, 10, 10**10, 10**6, True)
    assert list(f.query_id.fillna(-1).astype(int)) == [0, 1, 1, -1]
    assert len(q) == 2
    assert list(q.requester) == [1, 3] and list(q.size_bytes) == [14480, 100_000]
    assert q.qct_s[1] == pytest.approx(max(f.end_s[1], f.end_s[2]) - 0.001, abs=1e-12)
    assert q.qct_s[0] == pytest.approx(f.fct_s[0], abs=1e-12)


def test_flows_query_needs_one_requester():
    sc = star(hosts=4)
    sc["workload"] = [{"kind": "flows", "flows": [{"src": 0, "dst": 1, "size_bytes": 10, "start_s": 0, "query": 3},
                                                  {"src": 0, "dst": 2, "size_bytes": 10, "start_s": 0, "query": 3}]}]
    with pytest.raises(ScenarioError, match=r"flow 1: query 3 goes to host 2, but its earlier flows go to host 1"):
        sharebuf.run(sc, quiet=True)


# ----------------------------------------------------------------------------- 4. host NIC fq_codel
@pytest.mark.parametrize("qdisc,wait_us", [("fifo", 100.4), ("fq_codel", 0.8)])
def test_host_fq_codel_serves_a_new_flow_next(qdisc, wait_us):
    """Host 0's NIC is backlogged by a 20 Gbps constant-rate flow to host 1 (1500 B packets every
    0.6 us, sent back to back every 1.2 us from t = 0). A one-segment flow to host 2 starts at
    t = 100 us, while packet 83 is on the wire (99.6 - 100.8 us) and 167 - 84 = 83 wait.
    FIFO: it leaves after those, at 100.8 + 83 x 1.2 = 200.4 us (100.4 us of waiting); fq_codel:
    a new flow is served first, at 100.8 us (0.8 us). The rest is the hand-computed lone-flow
    FCT (no handshake)."""
    sc = star(hosts=3, delay_us=1.0)
    sc["host"] = {"nic_qdisc": qdisc}
    sc["transport"] = {"cc": "newreno", "mss_bytes": 1448, "header_bytes": 54, "handshake": False}
    sc["workload"] = [
        {"kind": "cbr", "flows": [{"src": 0, "dst": 1, "rate_gbps": 20, "stop_ms": 0.3, "packet_bytes": 1500,
                                   "above_link_rate": True}]},
        {"kind": "flows", "name": "probe", "flows": [{"src": 0, "dst": 2, "size_bytes": 1000, "start_s": 100e-6}]},
    ]
    f = sharebuf.run(sc, quiet=True).flows.iloc[0]
    lone = lone_flow_fct_ps(1000, 1448, 54, 10, 10**10, 10**6, False)
    assert round(f.fct_s * 1e12) == lone + round(wait_us * 1e6)


def test_sweep_over_profile_applies_it_afresh():
    """A sweep dumps the validated scenario; keys a profile sets must not be frozen into it, or a
    swept `profile` would change nothing. A key the scenario set itself stays."""
    from sharebuf.sweep import plan

    sc = ns3dc_fabric("salted")  # the scenario's own ecmp_hash
    sc["profile"] = "ns3dc"
    pts = plan(sc, {"profile": ["none", "ns3dc"]})
    got = {p["profile"]: parse_scenario(d) for p, d in pts}
    assert got["none"].switch.device_queue_packets == 0 and got["none"].host.nic_qdisc == "fifo"
    assert got["ns3dc"].switch.device_queue_packets == 100 and got["ns3dc"].host.nic_qdisc == "fq_codel"
    assert got["none"].topology.ecmp_hash == got["ns3dc"].topology.ecmp_hash == "salted"
    sc.pop("profile")
    pts = plan(sc, {"profile": ["ns3dc"]})
    assert parse_scenario(pts[0][1]).switch.buffer_accounting == "ip_payload"


def test_abm_empty_poll_credit_named_only_when_set():
    """The ABM code's drain-rate credit for empty polls (GenQueueDisc::DoDequeue adds 1,472 B per
    round-robin visit that finds a queue empty), hand-computed in
    sim::empty_poll_credit_tests::empty_polls_credit_the_queues_ns3dc_scans. The engine spec names
    it only when set: by the scenario, or by the ns3dc profile where ABM measures its drain rate
    (presets "code" and "eval", or mu_source = "measured"), and nowhere else; set by hand it needs
    the measured µ, and a bad value is a clear error naming the key."""
    from sharebuf.scenario.engine_spec import scheme
    sc = star(hosts=2, nq=2)
    sc["switch"]["bm"] = {"scheme": "abm", "preset": "code", "alpha": [1, 0.5]}
    assert "empty_poll_credit_bytes" not in scheme(parse_scenario(sc), None)["params"]
    sc["profile"] = "ns3dc"
    p = parse_scenario(sc)
    assert scheme(p, None)["params"]["empty_poll_credit_bytes"] == 1472
    assert p.profile_report()["set"]["switch.bm.empty_poll_credit_bytes"] == 1472
    for bm, applied in [({"preset": "eval"}, True), ({"preset": "paper"}, False), ({}, False),
                        ({"preset": "paper", "mu_source": "measured"}, True),
                        ({"preset": "eval", "mu_source": "scheduler"}, False)]:
        sc["switch"]["bm"] = {"scheme": "abm", "alpha": [1, 0.5], **bm}
        got = scheme(parse_scenario(sc), None)["params"].get("empty_poll_credit_bytes")
        assert got == (1472 if applied else None), bm
    sc["switch"]["bm"] = {"scheme": "dt", "alpha": [1, 0.5]}
    assert "empty_poll_credit_bytes" not in scheme(parse_scenario(sc), None)["params"]
    sc["switch"]["bm"] = {"scheme": "abm", "preset": "code", "alpha": [1, 0.5], "empty_poll_credit_bytes": 0}
    assert scheme(parse_scenario(sc), None)["params"]["empty_poll_credit_bytes"] == 0   # the scenario's own value wins
    sc["switch"]["bm"] = {"scheme": "abm", "preset": "paper", "alpha": [1, 0.5], "empty_poll_credit_bytes": 1472}
    with pytest.raises(ScenarioError, match=r'switch\.bm\.empty_poll_credit_bytes: only used with mu_source = "measured"'):
        sharebuf.run(sc)
    sc["switch"]["bm"].update(preset="code", empty_poll_credit_bytes=-1)
    with pytest.raises(ScenarioError, match=r"switch\.bm\.empty_poll_credit_bytes = -1: must be a whole number of bytes >= 0"):
        sharebuf.run(sc)


def test_silly_window_named_only_when_ns3_and_set_by_the_profile():
    """ns-3.39's SendPendingData sends nothing while cwnd - in flight is below one segment (unless the rest
    of the data fits), for every flow and state; sharebuf's default lets one segment go when nothing is in
    flight (transport.silly_window). Hand-computed in
    transport::tcp::tests::silly_window_waits_for_the_timer_with_an_empty_window_as_ns3 (a recovery that
    leaves cwnd = pipe = 0: the hole goes at 46 us, or with "ns3" at the timer, 200.046 ms). The spec names
    it only when "ns3"; the ns3dc profile sets it and a scenario's own "one_segment" wins; a bad value is a
    clear error."""
    _named_when_ns3_and_set_by_the_profile("silly_window", "one_segment", "never", ("cubic", "timely", "powertcp"))


def _named_when_ns3_and_set_by_the_profile(key, default, bad, ccs):
    """A transport key of ns3dc's TCP that the profile sets to "ns3": a spec names it only when "ns3" (a
    default run's key is unchanged), the profile sets it for each of `ccs`, a scenario's own `default`
    wins over the profile, a `bad` value is a clear error naming the key, and the engine takes it."""
    from sharebuf.scenario.engine_spec import transport
    sc = star(hosts=2)
    for cc in ccs:
        sc["transport"] = {"cc": cc}
        assert key not in transport(parse_scenario(sc))
        sc["transport"] = {"cc": cc, key: "ns3"}
        assert transport(parse_scenario(sc))[key] == "ns3"
    sc["profile"] = "ns3dc"
    for cc in ccs:
        sc["transport"] = {"cc": cc}
        assert transport(parse_scenario(sc))[key] == "ns3"
        sc["transport"] = {"cc": cc, key: default}
        assert key not in transport(parse_scenario(sc))
    sc["transport"] = {"cc": ccs[0], key: bad}
    with pytest.raises(ScenarioError, match=key):
        parse_scenario(sc)
    sc["profile"] = "none"
    sc["transport"] = {"cc": ccs[0], key: "ns3"}
    sharebuf.run(sc, quiet=True, out=None)  # the engine takes the key

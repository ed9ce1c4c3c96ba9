"""`[output] tcp_trace_flows` / `tcp_trace_min_size_bytes`: tcp_trace.parquet, one row per
sender event of a traced TCP flow (docs/outputs.md), checked against hand computations."""

import math
from pathlib import Path

import numpy as np
import pytest

import sharebuf
from conftest import star
from sharebuf.errors import ScenarioError
from sharebuf.executor import run_key
from sharebuf.scenario import parse_scenario
from sharebuf.scenario.engine_spec import resolve
from test_drop_log import MSS, two_senders

INIT = 10 * MSS          # init_cwnd_packets 10
G = 1 / 16               # DCTCP's gain (docs: cc "dctcp", g = 1/16)


def lone_flow(cc, size, start_s=5e-6):
    """One flow host 1 -> host 0 on a 3-host star at 10 Gb/s, a 1 MB buffer and no ECN marking:
    nothing queues (equal link rates), nothing is dropped or marked. No handshake, an ACK per
    segment, initial window 10 segments."""
    sc = star(hosts=3)
    sc["transport"].update(cc=cc, handshake=False, init_cwnd_packets=10, delayed_ack_packets=1)
    sc["workload"] = [{"kind": "flows", "flows": [{"src": 1, "dst": 0, "size_bytes": size, "start_s": start_s}]}]
    sc["output"]["tcp_trace_flows"] = [0]
    return sc


def reno_grow(cwnd, ssthresh, ca, acked):
    """RFC 5681 growth with byte counting: slow start below ssthresh by the acknowledged bytes,
    then one MSS per cwnd of acknowledged bytes. Returns (cwnd, ca)."""
    if cwnd < ssthresh:
        ss = min(acked, ssthresh - cwnd)
        cwnd += ss
        acked -= ss
        if acked == 0:
            return cwnd, ca
    ca += acked
    while ca >= cwnd:
        ca -= cwnd
        cwnd += MSS
    return cwnd, ca


@pytest.mark.parametrize("cc", ["newreno", "dctcp"])
def test_lone_flow_slow_start_by_hand(cc):
    size = 100_000                              # 69 full segments and one of 88 B
    res = sharebuf.run(lone_flow(cc, size))
    t = res.tcp_trace
    f = res.flows
    assert f.finished.all() and f.retransmits.tolist() == [0]
    assert (t.flow_id == 0).all() and t.time_ns.is_monotonic_increasing
    # First row: the first segment, at the flow's start (5 us).
    assert (t.event.iloc[0], t.seq.iloc[0], t.time_ns.iloc[0]) == ("send", 0, 5000.0)
    assert t.time_ns.iloc[0] == f.start_s.iloc[0] * 1e9
    sends, acks = t[t.event == "send"], t[t.event == "ack"]
    assert set(t.event) == {"send", "ack"}
    n_seg = math.ceil(size / MSS)
    assert len(sends) == n_seg == 70 and not sends.retx.any()
    assert sends.seq.tolist() == [k * MSS for k in range(n_seg)]
    # An ACK per segment; in slow start (ssthresh infinite) each ACK grows cwnd by the bytes it
    # acknowledged, from the initial window: cwnd = 10 MSS + the cumulative ack.
    assert acks.seq.tolist() == [min((k + 1) * MSS, size) for k in range(n_seg)]
    assert (acks.cwnd_bytes == INIT + acks.seq).all()
    assert (np.diff(acks.cwnd_bytes) == np.diff(acks.seq)).all()
    assert t.ssthresh_bytes.isna().all() and (t.state == "open").all() and not t.ece.any()
    # Each send row: its segment is the newest byte in flight.
    assert (sends.snd_nxt == np.minimum(sends.seq + MSS, size)).all()
    assert (t.in_flight_bytes == t.snd_nxt - t.snd_una).all()
    assert (acks.snd_una == acks.seq).all()
    # The initial window goes at once: 10 sends at the start time before any ACK.
    assert (t.event.iloc[:10] == "send").all() and (t.time_ns.iloc[:10] == 5000.0).all() and t.event.iloc[10] == "ack"
    # The last row acknowledges the whole flow.
    last = t.iloc[-1]
    assert (last.event, last.seq, last.snd_una, last.in_flight_bytes) == ("ack", size, size, 0)
    if cc == "newreno":
        assert t.alpha.isna().all()
    else:
        # No mark: alpha = (1 - g)^k after k windows, one window per cwnd's worth of data.
        ks = np.log(acks.alpha) / np.log(1 - G)
        assert np.allclose(ks, np.round(ks), atol=1e-9) and acks.alpha.iloc[0] == 1.0
        assert acks.alpha.is_monotonic_decreasing and acks.alpha.iloc[-1] < 1.0


def marked_pair(size=200_000):
    """Hosts 1 and 2 each send `size` bytes of DCTCP to host 0 at t = 0 (no handshake) through a
    switch that marks above K = 3000 B: host 0's port queues from the first flights on."""
    sc = star(hosts=3)
    sc["transport"].update(cc="dctcp", handshake=False, init_cwnd_packets=10, delayed_ack_packets=1)
    sc["switch"]["ecn_k_bytes"] = 3000
    sc["workload"] = [{"kind": "flows", "flows": [
        {"src": 1, "dst": 0, "size_bytes": size, "start_s": 0.0},
        {"src": 2, "dst": 0, "size_bytes": size, "start_s": 0.0}]}]
    sc["output"]["tcp_trace_flows"] = [0]
    return sc


def test_marked_flow_follows_dctcp_by_hand():
    """Replays DCTCP (RFC 8257 as docs describe it: alpha <- (1 - g) alpha + g F once per window
    of data, F the fraction of acknowledged bytes that echoed CE, initial alpha 1; on an echo at
    most once per window cwnd <- cwnd (1 - alpha/2), ssthresh = cwnd; else RFC 5681 growth) on
    the trace's own ACK rows, and checks every ACK row's alpha, cwnd and ssthresh."""
    res = sharebuf.run(marked_pair())
    t = res.tcp_trace
    assert res.summary["drops_total"] == 0 and res.flows.finished.all()
    rows = t[t.event == "ack"]
    assert rows.ece.any() and (~rows.ece).any()
    alpha, cwnd, ssthresh, ca = 1.0, INIT, math.inf, 0
    una, window_end, acked_w, marked_w, cwr_end = 0, None, 0, 0, 0
    updates, cuts, first_cut = 0, 0, None
    for r in rows.itertuples():
        acked = r.seq - una
        assert acked > 0
        una = r.seq
        if window_end is None:
            window_end = r.snd_nxt           # the window the first ACK finds in flight
        acked_w += acked
        marked_w += acked if r.ece else 0
        if r.snd_una >= window_end:
            alpha = (1 - G) * alpha + G * marked_w / acked_w
            acked_w = marked_w = 0
            window_end = r.snd_nxt
            updates += 1
        assert r.alpha == pytest.approx(alpha, rel=1e-12, abs=0), r
        if r.ece and r.snd_una >= cwr_end:
            if first_cut is None:
                first_cut = (r.Index, cwnd)
            cwnd = max(MSS, int(cwnd * (1 - alpha / 2)))
            ssthresh = max(cwnd, 2 * MSS)
            cwr_end = r.snd_nxt
            cuts += 1
        else:
            cwnd, ca = reno_grow(cwnd, ssthresh, ca, acked)
        assert r.cwnd_bytes == cwnd, r
        assert (math.isnan(r.ssthresh_bytes) and ssthresh == math.inf) or r.ssthresh_bytes == ssthresh, r
        assert r.state == ("cwr" if r.snd_una < cwr_end else "open"), r
    assert updates >= 5 and cuts >= 3, (updates, cuts)
    # The first echo comes in the first window, while alpha is still 1: the window halves.
    i, before = first_cut
    first = t.loc[i]
    assert first.ece and first.alpha == 1.0
    assert first.cwnd_bytes == before // 2 == first.ssthresh_bytes
    assert t.loc[:i - 1, "ssthresh_bytes"].isna().all()
    assert t.iloc[-1].seq == 200_000


def test_tail_loss_timeout_and_retransmissions_match_the_drop_log():
    """test_drop_log's hand-computed tail loss: flow 0's segments 5..9 are dropped, no
    duplicate ACK follows, one timeout (min RTO 10 ms after the last ACK re-armed the timer),
    then go-back-N from segment 5 in slow start from one segment."""
    sc = two_senders()
    sc["output"]["tcp_trace_flows"] = [0]
    res = sharebuf.run(sc)
    t, d = res.tcp_trace, res.drops
    assert d.seq.tolist() == [k * MSS for k in range(5, 10)]
    to = t[t.event == "timeout"]
    assert len(to) == 1 == res.flows.timeouts.iloc[0]
    to = to.iloc[0]
    last_ack = t[(t.event == "ack") & (t.time_ns < to.time_ns)].iloc[-1]
    assert last_ack.seq == 5 * MSS
    assert to.time_ns - last_ack.time_ns == 10e6
    # RFC 5681 at the timeout: ssthresh = max(flight / 2, 2 MSS) with 5 segments in flight,
    # cwnd = 1 MSS, snd_nxt back to snd_una; the loss state until 10 MSS is acknowledged.
    assert (to.seq, to.snd_una, to.snd_nxt, to.cwnd_bytes, to.ssthresh_bytes, to.state) == (5 * MSS, 5 * MSS, 5 * MSS, MSS, 5 * MSS // 2, "loss")
    retx = t[(t.event == "send") & t.retx]
    assert retx.seq.tolist() == d.seq.tolist()
    assert (retx.time_ns >= to.time_ns).all() and retx.time_ns.iloc[0] == to.time_ns
    assert not t[(t.event == "send") & (t.time_ns < to.time_ns)].retx.any()
    after = t[t.time_ns > to.time_ns]
    acks = after[after.event == "ack"]
    assert (acks.state == np.where(acks.snd_una < 10 * MSS, "loss", "open")).all()
    assert t.iloc[-1].seq == 10 * MSS and t.iloc[-1].event == "ack"


def test_trace_is_off_by_default_and_observes_only(tmp_path):
    sc = two_senders()
    plain = sharebuf.run(sc, out=tmp_path / "plain")
    assert "tcp_trace" not in plain.tables and not (tmp_path / "plain" / "tcp_trace.parquet").exists()
    # The keys at their defaults: the same engine spec and run key as without them.
    off = dict(sc, output={**sc["output"], "tcp_trace_flows": [], "tcp_trace_min_size_bytes": 0})
    for s in (sc, off):
        spec = resolve(parse_scenario(s), Path.cwd())
        assert "tcp_trace_flows" not in spec["output"] and "tcp_trace_min_size_bytes" not in spec["output"]
    assert run_key(off) == run_key(sc)
    on = dict(sc, output={**sc["output"], "tcp_trace_flows": [1, 0, 1]})
    assert resolve(parse_scenario(on), Path.cwd())["output"]["tcp_trace_flows"] == [0, 1]
    assert run_key(on) != run_key(sc)
    traced = sharebuf.run(on, out=tmp_path / "on")
    assert (tmp_path / "on" / "tcp_trace.parquet").is_file()
    assert sorted(set(traced.tcp_trace.flow_id)) == [0, 1]
    # Tracing changes no decision: flows.parquet and drops.parquet are the same tables.
    for name in ("flows", "drops"):
        assert traced.tables[name].equals(plain.tables[name]), name
    assert traced.summary["drops"] == plain.summary["drops"]


def test_size_and_id_selection_are_a_union():
    sc = star(hosts=3)
    sc["transport"].update(handshake=False)
    sc["workload"] = [{"kind": "flows", "flows": [
        {"src": 1, "dst": 0, "size_bytes": 10_000, "start_s": 0.0},
        {"src": 2, "dst": 0, "size_bytes": 50_000, "start_s": 0.0},
        {"src": 2, "dst": 1, "size_bytes": 20_000, "start_s": 0.0}]}]
    sc["output"]["tcp_trace_min_size_bytes"] = 20_000
    assert sorted(set(sharebuf.run(sc).tcp_trace.flow_id)) == [1, 2]
    sc["output"]["tcp_trace_flows"] = [0]
    assert sorted(set(sharebuf.run(sc).tcp_trace.flow_id)) == [0, 1, 2]
    sc["output"].update(tcp_trace_min_size_bytes=0, tcp_trace_flows=[3])
    with pytest.raises(ScenarioError) as e:
        sharebuf.run(sc)
    assert "output.tcp_trace_flows: 3 is not a flow of the run; allowed: flow ids 0..=2" in str(e.value)


@pytest.mark.parametrize("key,bad,why", [
    ("tcp_trace_flows", [-1], "greater than or equal to 0"),
    ("tcp_trace_flows", [1.5], "whole number"),
    ("tcp_trace_flows", ["0"], "whole number"),
    ("tcp_trace_flows", [True], "whole number"),
    ("tcp_trace_flows", 0, "valid list"),
    ("tcp_trace_min_size_bytes", -1, "greater than or equal to 0"),
    ("tcp_trace_min_size_bytes", 1e5, "whole number"),
    ("tcp_trace_min_size_bytes", "big", "whole number"),
])
def test_bad_trace_keys_are_refused(key, bad, why):
    sc = two_senders()
    sc["output"][key] = bad
    with pytest.raises(ScenarioError) as e:
        parse_scenario(sc)
    msg = str(e.value)
    assert f"output.{key}" in msg and why in msg, msg

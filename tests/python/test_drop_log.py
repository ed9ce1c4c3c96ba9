"""`[output] drop_log`: drops.parquet, one row per dropped packet (docs/outputs.md)."""

from pathlib import Path

import pytest

import sharebuf
from conftest import star, two_port_overload
from sharebuf.errors import ScenarioError
from sharebuf.executor import run_key
from sharebuf.scenario import parse_scenario
from sharebuf.scenario.engine_spec import resolve

MSS, WIRE = 1448, 1502          # default mss_bytes + header_bytes 54
T_PS = WIRE * 800               # one packet at 10 Gb/s: 1,201,600 ps
N_FIT = 5                       # packets the buffer holds
BUFFER = N_FIT * WIRE + 700     # never exactly full: a sixth packet finds 700 B free


def two_senders():
    """Star of 3 hosts, 10 Gb/s, 1 us links; DT with alpha 64 (its threshold, 64 x the free bytes,
    never binds below a full buffer), buffer 5 packets + 700 B. Hosts 1 and 2 each send 10 packets
    (14,480 B, no handshake, initial window 10) to host 0, flow 1 starting 0.6 us after flow 0.

    By hand: both first flights reach the switch back to back, flow 0's k-th packet at a0 + kT,
    flow 1's at a0 + kT + 0.6 us (T = 1.2016 us). Port 0 sends one packet per T from a0 (flow 0's
    first packet passes through); just before flow 1's k-th packet arrives, k packets wait. Flow
    0's k-th arrival ties with the port's k-th transmission end: the engine runs equal-time events
    in insertion order, and the arrival was scheduled at t = 0 (a FIFO host NIC fixes arrivals at
    enqueue), so it comes first and finds k packets waiting (flow 1's k−1 .. and flow 0's own
    earlier ones, as many as fit). Waiting packets: flow 0's packet k <= 4 makes k+1 <= 5; at
    k = 5 it finds 5 packets (7,510 B, 700 B free) and is dropped (buffer_full), the transmission
    end takes one, flow 1's 5th makes 5 again; so flow 0's packets 5..9 drop and no other: flow
    0's tail, 5 packets, with 5 packets (7,510 B) queued at each drop. No duplicate ACK follows a
    tail loss: flow 0 waits out one timeout (10 ms) and resends through an idle port."""
    sc = star(hosts=3, buffer_bytes=BUFFER, alpha=[64])
    sc["transport"].update(handshake=False, init_cwnd_packets=10)
    sc["workload"] = [{"kind": "flows", "flows": [
        {"src": 1, "dst": 0, "size_bytes": 10 * MSS, "start_s": 0.0},
        {"src": 2, "dst": 0, "size_bytes": 10 * MSS, "start_s": 0.6e-6}]}]
    sc["output"]["drop_log"] = True
    return sc


def test_drop_log_rows_are_the_hand_computed_drops(tmp_path):
    res = sharebuf.run(two_senders(), out=tmp_path / "run")
    d = res.drops
    s = res.summary
    print(d.to_string())
    # Every drop the summary counts has its row, cause by cause.
    assert d.cause.value_counts().to_dict() == {k: v for k, v in s["drops"].items() if v}
    assert len(d) == s["drops_total"] == 5
    assert (d.cause == "buffer_full").all() and (d.kind == "data").all()
    assert (d.node_kind == "switch").all() and (d.node == 0).all() and (d.port == 0).all() and (d.queue == 0).all()
    assert d.flow_id.tolist() == [0] * 5
    assert d.seq.tolist() == [k * MSS for k in range(5, 10)]
    assert (d.size_bytes == WIRE).all()
    assert (d.queue_bytes == N_FIT * WIRE).all() and (d.switch_occupied_bytes == N_FIT * WIRE).all()
    # Flow 0's k-th packet arrives at a0 + kT: the drops are T apart.
    assert [round(x * 1000) for x in d.time_ns.diff().dropna()] == [T_PS] * 4
    f = res.flows
    assert f.timeouts.tolist() == [1, 0] and f.finished.all()
    # The file is written with the others (atomically, Results.write).
    assert (tmp_path / "run" / "drops.parquet").is_file()


def test_drop_log_counts_push_out_victims_and_refusals():
    """LQD on the CBR overload of conftest.two_port_overload: push-outs and refusals by the
    thousand; a row per drop of each cause, and the log changes no decision."""
    sc = two_port_overload(500_000, "lqd")
    plain = sharebuf.run(sc)
    sc["output"]["drop_log"] = True
    res = sharebuf.run(sc)
    d, drops = res.drops, res.summary["drops"]
    assert drops["pushout"] > 1000 and drops["bm_threshold"] > 1000
    assert d.cause.value_counts().to_dict() == {k: v for k, v in drops.items() if v}
    assert (d.kind == "other").all()   # constant-rate packets
    assert drops == plain.summary["drops"]
    assert res.summary["flows"] == plain.summary["flows"]
    assert (d.queue_bytes <= d.switch_occupied_bytes).all() and (d.switch_occupied_bytes <= 500_000).all()


def test_default_run_writes_no_drop_log_and_keeps_its_run_key(tmp_path):
    sc = two_senders()
    del sc["output"]["drop_log"]
    res = sharebuf.run(sc, out=tmp_path / "run")
    assert res.summary["drops_total"] == 5
    assert not (tmp_path / "run" / "drops.parquet").exists() and "drops" not in res.tables
    off = dict(sc, output={**sc["output"], "drop_log": False})
    spec = resolve(parse_scenario(sc), Path.cwd())
    assert "drop_log" not in spec["output"]
    assert run_key(off) == run_key(sc)
    on = dict(sc, output={**sc["output"], "drop_log": True})
    assert run_key(on) != run_key(sc)


@pytest.mark.parametrize("bad", ["yes", 1, "true"])
def test_drop_log_takes_a_boolean_only(bad):
    sc = two_senders()
    sc["output"]["drop_log"] = bad
    with pytest.raises(ScenarioError) as e:
        parse_scenario(sc)
    msg = str(e.value)
    assert "output.drop_log" in msg and repr(bad) in msg and "allowed: true, false" in msg, msg


def test_drop_kinds_from_the_engine_flags():
    """packet::flags: SYN 1, ACK 2, DATA 4, ECT 8, CE 16, ECE 32, UNSCHED 64, CBR 128."""
    import numpy as np

    from sharebuf.results import DROP_KINDS, drop_kinds

    flags = np.array([4 | 8 | 16 | 64, 2, 2 | 32 | 8, 1, 1 | 2, 128 | 4, 0], dtype=np.uint8)
    assert [DROP_KINDS[k] for k in drop_kinds(flags)] == ["data", "ack", "ack", "syn", "syn_ack", "other", "other"]

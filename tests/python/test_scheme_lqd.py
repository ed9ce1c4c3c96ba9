"""Issue #11 item 4: LQD (Longest Queue Drop, push-out) in the simulator. Must-show 3: LQD never
drops while the pool has room, and pushes out from the longest queue. The exact hand-computed
sequences (ties, variable sizes) are the Rust unit tests in crates/sharebuf-core/src/bm/lqd.rs.
"""

import pytest

import sharebuf
from conftest import star, two_port_overload

B = 500_000
PKT = 1_502  # CBR packet on the wire (1,448 B payload + 54 B headers)


def _burst(scheme):
    """Three 10 Gb/s CBR senders into host 0 for 160 us: port 0 gains two packets per packet
    time, so it peaks at 2/3 of everything sent (402,536 B < B = 500,000 B)."""
    sc = star(hosts=4, buffer_bytes=B, nq=1, scheme=scheme)
    sc["max_ms"] = 2
    sc["output"] = {"buffer_sample_us": 1, "queue_sample_us": 1}
    sc["workload"] = [{"kind": "cbr", "flows": [{"src": s, "dst": 0, "rate_gbps": 10, "stop_ms": 0.16} for s in (1, 2, 3)]}]
    return sharebuf.run(sc)


def test_lqd_never_drops_while_the_pool_has_room():
    """A burst whose backlog fits the pool: LQD drops nothing and the queue peaks at exactly
    (n − 1)/n of the bytes sent (n = 3 senders at the port's rate), within one packet; DT
    (α = 0.5) caps the same queue near B/3 and drops."""
    res = _burst("lqd")
    sent = int(res.cbr.sent_bytes.sum())
    assert res.summary["drops_total"] == 0, res.summary["drops"]
    assert int(res.cbr.delivered_bytes.sum()) == sent
    peak = int(res.queue_occupancy.bytes.max())
    print(f"LQD burst: sent {sent} B, peak {peak} B, closed form {sent * 2 / 3:.0f} B")
    assert peak == pytest.approx(sent * 2 / 3, abs=PKT)
    assert peak < B
    dt = _burst("dt")
    assert dt.summary["drops"]["bm_threshold"] > 100
    assert int(dt.queue_occupancy.bytes.max()) <= B / 3 + PKT


def test_lqd_pushes_out_from_the_longest_queue_and_splits_the_pool_equally():
    """Port 0 is overloaded 2:1 from t = 0 and fills the whole pool; port 1 is overloaded 2:1
    from t = 2 ms. LQD pushes out port 0's tail for port 1's packets until the two are equally
    long: every late sample of each queue is B/2 within two packets (the classic LQD split among
    equally overloaded queues), and the pool stays full. Complete Sharing, without push-out,
    lets the two queues swing between empty and the whole pool."""
    sc = two_port_overload(B, "lqd")
    res = sharebuf.run(sc)
    q = res.queue_occupancy
    early = q[(q.time_s >= 0.001) & (q.time_s < 0.002) & (q.port == 0)].bytes
    assert early.min() > B - 2 * PKT and early.max() <= B
    late = q[(q.time_s >= 0.004) & q.port.isin([0, 1])]
    for port in (0, 1):
        b = late[late.port == port].bytes
        print(f"LQD port {port}: late min {b.min()} mean {b.mean():.0f} max {b.max()} (B/2 = {B // 2})")
        assert b.min() >= B / 2 - 2 * PKT and b.max() <= B / 2 + 2 * PKT
    total = late.groupby("time_s").bytes.sum()
    assert total.min() > B - 2 * PKT and total.max() <= B
    assert res.summary["drops"]["pushout"] > 1000
    assert res.summary["drops"]["buffer_full"] == 0
    sc["switch"]["bm"] = {"scheme": "cs"}
    q = sharebuf.run(sc).queue_occupancy
    cs = q[(q.time_s >= 0.004) & (q.port == 1)].bytes
    assert cs.max() - cs.min() > B / 2  # no push-out: far from an equal split at any instant


def test_lqd_takes_no_parameters():
    sc = star(scheme="lqd")
    sc["switch"]["bm"]["alpha"] = 0.5
    sc["workload"] = [{"kind": "cbr", "flows": [{"src": 1, "dst": 0, "rate_gbps": 1, "stop_ms": 0.01}]}]
    with pytest.raises(sharebuf.ScenarioError, match="switch.bm.alpha"):
        sharebuf.run(sc)

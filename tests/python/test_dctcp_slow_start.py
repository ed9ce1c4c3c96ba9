"""`transport.cc_params.slow_start = false` (DCTCP): congestion avoidance from the initial window,
as ns3dc's `TcpSocketState::m_useSS` false in its Credence example (docs/transports/dctcp.md)."""

import pytest

import sharebuf
from conftest import star

MSS, HDR, D_US = 1400, 54, 50.0


def _lone_flow(slow_start):
    """One 60-segment DCTCP flow across a 2-host star (10 Gb/s, 50 us links), no handshake,
    initial window 22, K far above the window: no mark, no loss."""
    sc = star(hosts=2, delay_us=D_US, buffer_bytes=10_000_000)
    sc["switch"]["ecn_k_bytes"] = 5_000_000
    sc["transport"] = {"cc": "dctcp", "handshake": False, "init_cwnd_packets": 22, "mss_bytes": MSS,
                       "header_bytes": HDR, "delayed_ack_packets": 1}
    if slow_start is not None:
        sc["transport"]["cc_params"] = {"slow_start": slow_start}
    sc["workload"] = [{"kind": "flows", "flows": [{"src": 0, "dst": 1, "size_bytes": 60 * MSS, "start_s": 0.0}]}]
    return sharebuf.run(sc)


def test_no_slow_start_takes_one_more_round_as_computed():
    # s: a segment's serialization, a: an ACK's; R: the first ACK's return (two links out, two back).
    # Slow start: 22 segments, then the ACKs of round 1 (one every s) release 2 each, so the
    # remaining 38 leave back to back from R: last byte at R + 38 s + s + 2 D.
    # Congestion avoidance only: the 22 ACKs of round 1 release 22 + 1 (cwnd 23 at the 22nd), sent
    # from R to R + 23 s; the last 15 leave from 2 R, one per ACK of round 2: last byte at
    # 2 R + 15 s + s + 2 D. The difference is R - 23 s.
    s = (MSS + HDR) * 8 / 10e9
    a = HDR * 8 / 10e9
    d = D_US * 1e-6
    r = 2 * (s + d) + 2 * (a + d)
    ss = _lone_flow(None).flows.iloc[0]
    ca = _lone_flow(False).flows.iloc[0]
    assert ss.finished and ca.finished and ss.retransmits == 0 and ca.retransmits == 0
    assert ss.fct_s == pytest.approx(r + 38 * s + s + 2 * d, abs=1e-9)
    assert ca.fct_s == pytest.approx(2 * r + 15 * s + s + 2 * d, abs=1e-9)
    assert ca.fct_s - ss.fct_s == pytest.approx(r - 23 * s, abs=1e-9)
    assert _lone_flow(True).flows.iloc[0].fct_s == ss.fct_s   # true is the default


def test_slow_start_must_be_a_boolean():
    with pytest.raises(sharebuf.ScenarioError, match=r"cc_params\.slow_start = \"no\": expected true or false"):
        _lone_flow("no")

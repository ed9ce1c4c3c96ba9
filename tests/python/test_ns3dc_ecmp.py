"""ns3dc's ECMP hash inputs, re-derived (bench/ns3dc/ns3dc_ecmp.py): Murmur3 on published vectors,
the 17-byte tuple and the addresses by hand, the port rules on a hand-made install order, and the
Credence example's connections against those rules.

The derivation's end-to-end check is against a traced ns3dc run (abm-evaluation, dctcp-b0.75,
seeds 1 and 2: every traced 5-tuple derived; `ns3dc_ecmp.py --check-trace`); the trace is not in
the repository."""

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def E():
    sys.path.insert(0, str(ROOT / "bench" / "ns3dc"))
    spec = importlib.util.spec_from_file_location("ns3dc_ecmp", ROOT / "bench" / "ns3dc" / "ns3dc_ecmp.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_murmur3_published_vectors(E):
    # MurmurHash3_x86_32 reference vectors (seed 0 and 1)
    assert E.murmur3_32(b"", 0) == 0
    assert E.murmur3_32(b"", 1) == 0x514E28B7
    assert E.murmur3_32(b"hello", 0) == 0x248BFA47
    assert E.murmur3_32(b"The quick brown fox jumps over the lazy dog", 0) == 0x2E4FF723


def test_addresses_and_tuple_by_hand(E):
    # credence-evaluation: 16 servers per leaf; server s of leaf L is 10.1.4(L+1).(2s+1)
    assert E.address(0, 16) == bytes([10, 1, 4, 1])
    assert E.address(15, 16) == bytes([10, 1, 4, 31])
    assert E.address(16, 16) == bytes([10, 1, 8, 1])
    assert E.address(33, 32) == bytes([10, 1, 8, 3])
    # server 200 of leaf 0: address 401 of 10.1.4.0/22 = 10.1.5.145
    assert E.address(200, 256) == bytes([10, 1, 5, 145])
    with pytest.raises(ValueError, match="at most 511 servers"):
        E.address(511, 600)
    # host 0 -> host 16, ports 49153 (0xC001) -> 4444 (0x115C), protocol 6, perturbation 12345678
    buf = bytes([10, 1, 4, 1, 10, 1, 8, 1, 6, 0xC0, 0x01, 0x11, 0x5C, 0x00, 0xBC, 0x61, 0x4E])
    assert E.tuple_hash(0, 16, 49153, 4444, servers=16) == E.murmur3_32(buf, 0x8BADF00D)
    flows = [("websearch", 0, 16, 1000, 10.1, -1, 1)]
    rev = bytes([10, 1, 8, 1, 10, 1, 4, 1, 6, 0x11, 0x5C, 0xC0, 0x01, 0x00, 0xBC, 0x61, 0x4E])
    assert E.flow_hashes(flows, [(49153, 4444)], servers=16) == [(E.murmur3_32(buf, 0x8BADF00D),
                                                                   E.murmur3_32(rev, 0x8BADF00D))]


def test_ports_by_hand(E):
    # (sender, receiver, application start s) in install order, 2 leaves x 2 servers
    rows = [(0, 2, 10.3),    # 0 web search
            (0, 3, 10.1),    # 1 web search
            (2, 0, 0.5),     # 2 incast response
            (3, 0, 0.5),     # 3 incast response
            (2, 0, 0.2),     # 4 incast response (an earlier set-up)
            (2, 1, 10.05),   # 5 web search
            (3, 1, 0.5)]     # 6 incast response, same start as row 3
    # receivers: host 0 gets rows 2, 3, 4 -> 4444, 4445, 4446; host 1 rows 5, 6; hosts 2, 3 one each.
    # senders: host 0 starts row 1 before row 0; host 2 rows 4, 2, 5; host 3 rows 3, 6 (tie: install order)
    assert E.assign_ports(rows) == [(49154, 4444), (49153, 4444), (49154, 4444), (49153, 4445),
                                    (49153, 4446), (49155, 4444), (49154, 4445)]
    with pytest.raises(ValueError, match="receiver 1"):
        E.assign_ports([(0, 1, 0.0)] * 3, first_port=65529)


def _assert_port_rules(flows, ports):
    """Each receiver's ports 4444 on in flow order; each sender's ephemeral ports 49153 on, its
    incast responses (set up at 50-1000 ms) before its web-search flows (from 10 s), those by start
    time."""
    by_dst, by_src = {}, {}
    for f, (sp, dp) in zip(flows, ports):
        by_dst.setdefault(f[2], []).append(dp)
        by_src.setdefault(f[1], []).append((f[0], f[4], sp))
    assert all(d == list(range(4444, 4444 + len(d))) for d in by_dst.values())
    for lst in by_src.values():
        assert sorted(x[2] for x in lst) == list(range(49153, 49153 + len(lst)))
        inc = [x[2] for x in lst if x[0] == "incast"]
        ws = sorted((x[1], x[2]) for x in lst if x[0] == "websearch")
        assert all(i < w for i in inc for _t, w in ws)
        assert [w for _t, w in ws] == sorted(w for _t, w in ws)   # web search: by start time


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc rand() sequence")
def test_credence_example_connections_follow_the_rules(E):
    """credence-evaluation at load 0.4, burst 0.5·B, 50 ms of arrivals: the generator's flows, each
    receiver's ports 4444 on in flow order, each sender's responses before its web-search flows."""
    kw = dict(load=0.4, request=526336, **E.EXAMPLES["credence-evaluation"])
    flows, t0, ports = E.connections(1, 0.05, **kw)
    gen, _ = E.F.generate(1, 0.05, **kw)
    assert flows == gen and t0 == 10.0 and len(ports) == len(flows)
    assert {f[0] for f in flows} == {"websearch", "incast"}
    _assert_port_rules(flows, ports)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc rand() sequence")
def test_nprio_example_connections_follow_the_same_rules(E):
    """abm-evaluation-nprio (run-nprio.sh: 8 queues per port, one priority drawn per web-search
    flow) installs, addresses and starts its applications as abm-evaluation does, so its ports
    follow the same rules over its own draws."""
    kw = dict(load=0.4, request=983040, nprio=8, **E.EXAMPLES["abm-evaluation"])
    flows, t0, ports = E.connections(1, 0.05, per_flow_prio=True, **kw)
    gen, _ = E.F.generate(1, 0.05, per_flow_prio=True, **kw)
    assert flows == gen and t0 == 10.0 and len(ports) == len(flows)
    assert flows != E.F.generate(1, 0.05, **kw)[0]   # the nprio draws are not abm-evaluation's
    _assert_port_rules(flows, ports)

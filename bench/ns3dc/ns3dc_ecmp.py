#!/usr/bin/env python3
"""ns3dc's ECMP choice for each flow, re-derived from its code: every flow's 5-tuple and ns-3's hash
of it, for ns3dc's ABM example (abm-evaluation) and its Credence example (credence-evaluation);
prints how each query's incast responses share first-hop uplinks against a uniform hash (and so
sharebuf's "same" hash, `incast_join.py`).

ns3dc routes by `Ipv4GlobalRouting::GetTupleValue`: ns-3's `Hash32` (Murmur3 x86_32, seed
0x8BADF00D) over 17 bytes (source and destination address, protocol 6, source and destination
port, perturbation 12345678, all big-endian), index = hash % (number of equal-cost routes); the
same hash at every switch. The 5-tuple of a flow's data packets, from the two examples and ns-3.39
(both install their servers, addresses and applications the same way):

* addresses: `Ipv4AddressHelper::SetBase("10.1.0.0", "255.255.252.0")`, then per leaf
  `NewNetwork()` (10.1.4.0/22 for leaf 0, 10.1.8.0/22 for leaf 1) and per server the server's
  side assigned first: server s of leaf L is 10.1.4(L+1).(2s+1);
* destination port: the receiver's `PORT_START` counter (4444 at the start), incremented per flow
  to it in install order (leaf 0's web search, leaf 0's queries, leaf 1's web search, leaf 1's
  queries; `ns3dc_flows.generate`'s order);
* source port: the sender's ephemeral port, allocated at `Bind()` when its `BulkSendApplication`
  starts: incast applications start at 150 ns + `rand_range(50, 1000)` ms, web-search ones at
  their flow's start (from 10 s), so a sender's responses take 49153, 49154, ... in that order
  (ties in install order), then its web-search flows.

What differs between the examples is the size (`EXAMPLES`): abm-evaluation has 32 servers per
leaf and 2 spines x 4 links (8 routes at a leaf, 4 at a spine); credence-evaluation on the
scripts' "faster test case" 16 servers and 4 spines x 1 link (4 routes at a leaf, one at a spine:
a flow's only choice is its first-hop uplink). The route order at a leaf only relabels its
uplinks, so the sharing does not depend on it.

Usage: python3 ns3dc_ecmp.py [--example abm-evaluation|credence-evaluation] [--request BYTES]
           [--launch-s 0.3] [--seeds 1,2]
       python3 ns3dc_ecmp.py --check-trace PREFIX --point dctcp-b0.75 --seeds 1
           (the derived 5-tuples against a traced abm-evaluation run, queue_trace.py's sojourn file)
"""
import argparse
import os
import struct
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import ns3dc_flows as F  # noqa: E402

M32 = 0xFFFFFFFF


def _rotl(x, r):
    return ((x << r) | (x >> (32 - r))) & M32


def murmur3_32(data, seed=0x8BADF00D):
    """ns-3's Murmur3 x86_32 of one buffer (`Hash32`: cleared state, little-endian blocks)."""
    c1, c2 = 0xCC9E2D51, 0x1B873593
    h = seed
    n = len(data) // 4
    for i in range(n):
        k = struct.unpack_from("<I", data, 4 * i)[0]
        k = _rotl((k * c1) & M32, 15)
        h ^= (k * c2) & M32
        h = (_rotl(h, 13) * 5 + 0xE6546B64) & M32
    tail, k = data[4 * n:], 0
    if len(tail) >= 3:
        k ^= tail[2] << 16
    if len(tail) >= 2:
        k ^= tail[1] << 8
    if len(tail) >= 1:
        k ^= tail[0]
        h ^= (_rotl((k * c1) & M32, 15) * c2) & M32
    h ^= len(data)
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & M32
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & M32
    return h ^ (h >> 16)


def address(host, servers=32):
    """Host ``host``'s address (4 bytes): server s of leaf L is the (2s + 1)-th address of the L-th
    /22 after 10.1.0.0 (``SetBase("10.1.0.0", "255.255.252.0")``, ``NewNetwork()`` per leaf, the
    server's side of each server link assigned first), e.g. 10.1.4(L+1).(2s+1) up to 127 servers."""
    leaf, s = divmod(host, servers)
    if not 0 <= 2 * s + 1 < 1024 - 1:
        raise ValueError(f"servers = {servers}: a leaf's /22 holds the addresses of at most 511 servers")
    ip = (10 << 24) + (1 << 16) + ((leaf + 1) << 10) + 2 * s + 1
    return ip.to_bytes(4, "big")


def tuple_hash(src, dst, sport, dport, servers=32):
    buf = address(src, servers) + address(dst, servers) + bytes([6]) + struct.pack(">HHI", sport, dport, 12345678)
    return murmur3_32(buf)


def assign_ports(rows, first_port=4444, first_ephemeral=49153, port_end=65530):
    """(source port, destination port) of each connection, from its (sender, receiver, application
    start) in install order. Destination: the receiver's ``PORT_START`` counter, ``first_port`` for
    its first connection, one more for each further one in install order. Source: the sender's
    ephemeral ports, ``first_ephemeral`` on, taken at ``Bind()`` in application start order (ties in
    install order). ns3dc wraps a counter past ``port_end`` (not modelled: refused)."""
    nxt, dport = {}, []
    for _src, dst, _t in rows:
        dport.append(nxt.get(dst, first_port))
        nxt[dst] = dport[-1] + 1
        if dport[-1] > port_end:
            raise ValueError(f"receiver {dst}: more than {port_end - first_port + 1} connections wrap ns3dc's port counter")
    sport = [0] * len(rows)
    by_src = {}
    for i, (src, _dst, t) in enumerate(rows):
        by_src.setdefault(src, []).append((t, i))
    for lst in by_src.values():
        for k, (_t, i) in enumerate(sorted(lst)):
            sport[i] = first_ephemeral + k
    return list(zip(sport, dport))


#: The examples' server links and uplinks per leaf (generator arguments ``servers``, ``uplinks``):
#: abm-evaluation (run-main.sh) 32 servers, 2 spines x 4 links; credence-evaluation (the scripts'
#: "faster test case") 16 servers, 4 spines x 1 link.
EXAMPLES = {"abm-evaluation": {"servers": 32, "leaves": 2, "uplinks": 8},
            "credence-evaluation": {"servers": 16, "leaves": 2, "uplinks": 4}}


def connections(seed, launch_s, load=0.4, servers=32, leaves=2, request=1966080, qrate=2.0, start=10.0, nprio=2,
                uplinks=8, per_flow_prio=False):
    """``ns3dc_flows.generate``'s flows (same order; abm-evaluation's and credence-evaluation's
    draws, one priority per leaf and workload; abm-evaluation-nprio's with ``per_flow_prio``, one per
    web-search flow) and each one's (source port, destination port) (`assign_ports`; both ABM
    examples install, address and start their applications the same way). Install order is the generator's: leaf 0's web search, leaf 0's queries, leaf
    1's web search, ... Application start: an incast response's at 150 ns + ``rand_range(50,
    1000)`` ms, a web-search flow's at its start time (from ``start``)."""
    setup_ms = []
    flows, t0 = F.generate(seed, launch_s, load=load, servers=servers, leaves=leaves, request=request, qrate=qrate,
                           start=start, nprio=nprio, uplinks=uplinks, setup_ms=setup_ms,
                           per_flow_prio=per_flow_prio)
    ms = iter(setup_ms)
    rows = [(f[1], f[2], 150e-9 + next(ms) / 1e3 if f[0] == "incast" else f[4]) for f in flows]
    return flows, t0, assign_ports(rows)


def flow_ports(seed, launch_s, **generator):
    """(source port, destination port) of every flow, in ``ns3dc_flows.generate``'s order
    (`connections`; keyword arguments as there)."""
    return connections(seed, launch_s, **generator)[2]


def flow_ids(seed, launch_s, servers=32, **generator):
    """sharebuf's flow id (the replay's order: web search, then incast) of each 5-tuple
    (source address, destination address, source port, destination port; dotted addresses), in
    both directions, so a traced ns3dc packet or socket maps to the flow it belongs to."""
    flows, _t0, ports = connections(seed, launch_s, servers=servers, **generator)
    ip = lambda h: ".".join(str(x) for x in address(h, servers))  # noqa: E731
    nws = sum(1 for f in flows if f[0] == "websearch")
    key, iw, ii = {}, 0, 0
    for f, (sp, dp) in zip(flows, ports):
        if f[0] == "websearch":
            fid, iw = iw, iw + 1
        else:
            fid, ii = nws + ii, ii + 1
        key[(ip(f[1]), ip(f[2]), sp, dp)] = fid
        key[(ip(f[2]), ip(f[1]), dp, sp)] = fid
    return key


def flow_hashes(flows, ports, servers=32):
    """Each flow's (data, reverse) ``Hash32`` of its 5-tuple: the columns ``ecmp_hash``,
    ``ecmp_hash_reverse`` of a replay file (``topology.ecmp_hash = "flow"``)."""
    return [(tuple_hash(f[1], f[2], sp, dp, servers), tuple_hash(f[2], f[1], dp, sp, servers))
            for f, (sp, dp) in zip(flows, ports)]


def responses(seed, launch_s, servers=32, **generator):
    """(query, sender, receiver, source port, destination port, data hash) of every incast response."""
    flows, _t0, ports = connections(seed, launch_s, servers=servers, **generator)
    return [(f[5], f[1], f[2], sp, dp, tuple_hash(f[1], f[2], sp, dp, servers))
            for f, (sp, dp) in zip(flows, ports) if f[0] == "incast"]


def check_trace(sojourn_path, flows, ports, servers=32, leaves=2):
    """The traced 5-tuples of one ns3dc run (a ``queue_trace.py`` sojourn file: columns src, dst,
    sport, dport) against the derived ones: (traced, data direction derived, reverse direction
    derived (SYN-ACKs and ACKs), neither) among the TCP 5-tuples between servers."""
    import pandas as pd
    s = pd.read_csv(sojourn_path, sep=r"\s+")
    ip2h = {".".join(map(str, address(h, servers))): h for h in range(servers * leaves)}
    s = s[s.src.isin(ip2h) & s.dst.isin(ip2h)]
    traced = {(ip2h[a], ip2h[b], int(x), int(y)) for a, b, x, y in zip(s.src, s.dst, s.sport, s.dport)}
    fwd = {(f[1], f[2], sp, dp) for f, (sp, dp) in zip(flows, ports)}
    rev = {(b, a, y, x) for a, b, x, y in fwd}
    n_f, n_r = len(traced & fwd), len(traced & rev)
    return len(traced), n_f, n_r, len(traced) - n_f - n_r


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--example", default="abm-evaluation", choices=sorted(EXAMPLES))
    ap.add_argument("--request", type=int, default=2949120)
    ap.add_argument("--launch-s", type=float, default=0.3)
    ap.add_argument("--seeds", default="1,2")
    ap.add_argument("--check-trace", metavar="PREFIX",
                    help="instead: compare the derived 5-tuples with a traced run's PREFIX-sojourn.txt "
                         "(queue_trace.py), for --point and the first of --seeds")
    ap.add_argument("--point", help="with --check-trace: the grid point (grid.toml) of the traced run")
    a = ap.parse_args()
    ex = EXAMPLES[a.example]
    seeds = [int(s) for s in a.seeds.split(",")]
    if a.check_trace:
        import grid
        p = next((q for q in grid.points() if q["name"] == a.point), None)
        if p is None or p["binary"] != "abm-evaluation":
            ap.error(f"--point {a.point!r}: allowed: a grid point of abm-evaluation")
        flows, _t0, ports = connections(seeds[0], p["launch_s"], load=p["load"], request=p["request"],
                                        qrate=p["query_rate"], nprio=p["nprio"], **ex)
        n, fwd, rev, neither = check_trace(a.check_trace + "-sojourn.txt", flows, ports, ex["servers"], ex["leaves"])
        print(f"{a.point} seed {seeds[0]}: {n} traced 5-tuples: {fwd} derived (data direction), "
              f"{rev} derived reversed (SYN-ACKs, ACKs), {neither} not derived")
        return 1 if neither else 0
    uplinks, servers = ex["uplinks"], ex["servers"]
    counts = []
    for seed in seeds:
        per = {}
        for query, *_rest, h in responses(seed, a.launch_s, request=a.request, **ex):
            per.setdefault(query, np.zeros(uplinks, int))[h % uplinks] += 1
        counts += [c[c > 0] for c in per.values()]
    flat = np.concatenate(counts)
    rng = np.random.default_rng(0)
    ref = np.concatenate([np.bincount(rng.integers(0, uplinks, servers), minlength=uplinks) for _ in range(20000)])
    ref = ref[ref > 0]
    top = max(flat.max(), 12)
    h_ns = np.bincount(flat, minlength=top + 1)[1:]
    h_ref = np.bincount(ref, minlength=top + 1)[1:top + 1] * len(counts) / 20000
    print(f"{len(counts)} queries: uplinks used per query by k of its responses, k = 1..{top}")
    print("  ns3dc's hash:  " + " ".join(f"{x:5d}" for x in h_ns))
    print("  uniform hash:  " + " ".join(f"{x:5.1f}" for x in h_ref))


if __name__ == "__main__":
    sys.exit(main())

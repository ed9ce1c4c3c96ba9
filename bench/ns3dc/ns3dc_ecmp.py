#!/usr/bin/env python3
"""ns3dc's ECMP choice for each incast response, re-derived from its code: how its responses share
first-hop uplinks, against a uniform hash (and so sharebuf's "same" hash, `incast_join.py`).

ns3dc routes by `Ipv4GlobalRouting::GetTupleValue`: ns-3's `Hash32` (Murmur3 x86_32, seed
0x8BADF00D) over 17 bytes (source and destination address, protocol 6, source and destination
port, perturbation 12345678, all big-endian), index = hash % (number of equal-cost routes); the
same hash at every switch. The 5-tuple of a response's data packets, from
`examples/ABM/abm-evaluation.cc` and ns-3.39:

* addresses: `Ipv4AddressHelper::SetBase("10.1.0.0", "255.255.252.0")`, then per leaf
  `NewNetwork()` (10.1.4.0/22 for leaf 0, 10.1.8.0/22 for leaf 1) and per server the server's
  side assigned first: server s of leaf L is 10.1.4(L+1).(2s+1);
* destination port: the receiver's `PORT_START` counter (4444 at the start), incremented per flow
  to it in install order (leaf 0's web search, leaf 0's queries, leaf 1's web search, leaf 1's
  queries; `ns3dc_flows.generate`'s order);
* source port: the sender's ephemeral port, allocated at `Bind()` when its `BulkSendApplication`
  starts: incast applications start at 150 ns + `rand_range(50, 1000)` ms (web search only from
  10 s), so a sender's responses take 49153, 49154, ... in that order (ties in install order).

The route order at the leaf only relabels uplinks, so the sharing distribution does not depend
on it. Usage: python3 ns3dc_ecmp.py [--request BYTES] [--launch-s 0.3] [--seeds 1,2]
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
    leaf, s = divmod(host, servers)
    return bytes([10, 1, 4 * (leaf + 1), 1 + 2 * s])


def tuple_hash(src, dst, sport, dport, servers=32):
    buf = address(src, servers) + address(dst, servers) + bytes([6]) + struct.pack(">HHI", sport, dport, 12345678)
    return murmur3_32(buf)


def responses(seed, launch_s, load=0.4, servers=32, leaves=2, request=1966080, qrate=2.0, start=10.0, nprio=2):
    """(query, sender, receiver, source port, destination port, hash) of every incast response,
    replaying ns3dc_flows.generate's draws (abm-evaluation's per-leaf priorities)."""
    end = start + launch_s
    oversub = float(servers * 10_000_000_000) / (10_000_000_000 * 2 * 4)
    rate = load * 10_000_000_000 * servers / oversub / (8 * F.avg_cdf()) / servers
    F.libc.srand(F.ctypes.c_uint(seed))
    port = {i: 4444 for i in range(servers * leaves)}
    apps, q, order = [], 0, 0
    for leaf in range(leaves):
        F.rand_range_int(1, nprio - 1)
        other = (leaf + 1) % leaves
        for tx in range(servers):
            t = start + F.poisson_interval(rate)
            while end > t > start:
                rx = F.rand_range_int(0, servers)
                size = int(F.gen_cdf())
                while size == 0:
                    size = int(F.gen_cdf())
                port[other * servers + rx] += 1
                order += 1
                t += F.poisson_interval(rate)
        F.rand_range_int(1, nprio - 1)
        for rq in range(servers):
            t = start + F.poisson_interval(qrate)
            while end > t > start:
                for tx in range(servers):
                    dst = leaf * servers + rq
                    apps.append((other * servers + tx, F.rand_range_int(50, 1000), order, q, dst, port[dst]))
                    port[dst] += 1
                    order += 1
                q += 1
                t += F.poisson_interval(qrate)
    by_node = {}
    for a in apps:
        by_node.setdefault(a[0], []).append(a)
    out = []
    for node, lst in by_node.items():
        lst.sort(key=lambda a: (a[1], a[2]))
        for k, (src, _ms, _o, query, dst, dport) in enumerate(lst):
            sport = 49153 + k
            out.append((query, src, dst, sport, dport, tuple_hash(src, dst, sport, dport, servers)))
    return out


def flow_ports(seed, launch_s, load=0.4, servers=32, leaves=2, request=1966080, qrate=2.0, start=10.0, nprio=2):
    """(source port, destination port) of every flow, in ``ns3dc_flows.generate``'s order
    (abm-evaluation's draws, 2 priorities). Destination: the receiver's ``PORT_START`` counter in
    install order. Source: the sender's ephemeral ports in application start order, 49153 first:
    its incast applications (150 ns + ``rand_range(50, 1000)`` ms; ties in install order), then
    its web-search flows (at their start time, from 10 s)."""
    end = start + launch_s
    oversub = float(servers * 10_000_000_000) / (10_000_000_000 * 2 * 4)
    rate = load * 10_000_000_000 * servers / oversub / (8 * F.avg_cdf()) / servers
    F.libc.srand(F.ctypes.c_uint(seed))
    port = {i: 4444 for i in range(servers * leaves)}
    rows = []   # (src, start key, install order, dport)
    for leaf in range(leaves):
        F.rand_range_int(1, nprio - 1)
        other = (leaf + 1) % leaves
        for tx in range(servers):
            t = start + F.poisson_interval(rate)
            while end > t > start:
                rx = F.rand_range_int(0, servers)
                size = int(F.gen_cdf())
                while size == 0:
                    size = int(F.gen_cdf())
                dst = other * servers + rx
                rows.append((leaf * servers + tx, (1, t), len(rows), port[dst]))
                port[dst] += 1
                t += F.poisson_interval(rate)
        F.rand_range_int(1, nprio - 1)
        for rq in range(servers):
            t = start + F.poisson_interval(qrate)
            while end > t > start:
                for tx in range(servers):
                    dst = leaf * servers + rq
                    rows.append((other * servers + tx, (0, F.rand_range_int(50, 1000)), len(rows), port[dst]))
                    port[dst] += 1
                t += F.poisson_interval(qrate)
    sport = [0] * len(rows)
    by_node = {}
    for r in rows:
        by_node.setdefault(r[0], []).append(r)
    for lst in by_node.values():
        lst.sort(key=lambda r: (r[1], r[2]))
        for k, r in enumerate(lst):
            sport[r[2]] = 49153 + k
    return [(sp, r[3]) for sp, r in zip(sport, rows)]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--request", type=int, default=2949120)
    ap.add_argument("--launch-s", type=float, default=0.3)
    ap.add_argument("--seeds", default="1,2")
    ap.add_argument("--uplinks", type=int, default=8)
    a = ap.parse_args()
    counts = []
    for seed in (int(s) for s in a.seeds.split(",")):
        per = {}
        for query, *_rest, h in responses(seed, a.launch_s, request=a.request):
            per.setdefault(query, np.zeros(a.uplinks, int))[h % a.uplinks] += 1
        counts += [c[c > 0] for c in per.values()]
    flat = np.concatenate(counts)
    rng = np.random.default_rng(0)
    ref = np.concatenate([np.bincount(rng.integers(0, a.uplinks, 32), minlength=a.uplinks) for _ in range(20000)])
    ref = ref[ref > 0]
    top = max(flat.max(), 12)
    h_ns = np.bincount(flat, minlength=top + 1)[1:]
    h_ref = np.bincount(ref, minlength=top + 1)[1:top + 1] * len(counts) / 20000
    print(f"{len(counts)} queries: uplinks used per query by k of its responses, k = 1..{top}")
    print("  ns3dc's hash:  " + " ".join(f"{x:5d}" for x in h_ns))
    print("  uniform hash:  " + " ".join(f"{x:5.1f}" for x in h_ref))


if __name__ == "__main__":
    main()

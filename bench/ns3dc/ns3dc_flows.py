#!/usr/bin/env python3
"""Re-derive the flow list that ns3dc's abm-evaluation program generates for a given
--randomSeed, by replaying its draws from glibc rand() (srand(seed)) in the same order:
for leaf 0, 1: websearch senders of that leaf (per server: Poisson arrivals, uniform
receiver in the other leaf, size from the CDF), then incast queries requested by that
leaf's servers (per server: Poisson query times; each query = one response from every
server of the other leaf). Written from reading the program's behaviour; no ns3dc code here.

Writes two CSVs in sharebuf's `kind = "flows"` format (hosts numbered leaf-major, times
relative to ns3dc's StartTime), one per workload, so both can be replayed:
  OUT_DIR/websearch-sSEED.csv  id,src,dst,size_bytes,start_s,priority
  OUT_DIR/incast-sSEED.csv     id,src,dst,size_bytes,start_s,priority,query,handshake
The incast rows are the responses: each query (id = its order of generation) gets one flow
from every server of the other leaf, started at the query time over a connection opened
beforehand (ns3dc opens it at 50-1000 ms, before StartTime), hence handshake = false.
Run with --check FCTFILE to match the reconstructed flows against an ns3dc fct file:
(size, kind) multisets, and the incast query times (the fct file's flowstart column).

Usage: python3 ns3dc_flows.py SEED OUT_DIR [--launch-s 0.5] [--check fct.txt]
"""
import ctypes
import ctypes.util
import math
import sys

libc = ctypes.CDLL(ctypes.util.find_library("c"))
libm = ctypes.CDLL(ctypes.util.find_library("m"))
libm.logf.restype = ctypes.c_float
libm.logf.argtypes = [ctypes.c_float]
RAND_MAX = 2147483647

CDF = [(0, 0.0), (2000, 0.0), (2100, 0.02), (2500, 0.05), (6000, 0.1), (10000, 0.15),
       (20000, 0.2), (30000, 0.3), (50000, 0.4), (80000, 0.53), (200000, 0.6),
       (1000000, 0.7), (2000000, 0.8), (5000000, 0.9), (10000000, 0.97), (30000000, 1)]


def rand():
    return libc.rand()


def poisson_interval(rate):
    # -logf(1.0 - (double)rand()/RAND_MAX) / rate, logf in single precision
    return -float(libm.logf(1.0 - float(rand()) / RAND_MAX)) / rate


def rand_range_int(lo, hi):
    return int(lo + (float(hi) - lo) * rand() / RAND_MAX)


def avg_cdf():
    avg = 0.0
    for i, (v, c) in enumerate(CDF):
        if i == 0:
            value, prob = v / 2, c
        else:
            value, prob = (v + CDF[i - 1][0]) / 2, c - CDF[i - 1][1]
        avg += value * prob
    return avg


def gen_cdf():
    x = 0.0 + rand() * (1.0 - 0.0) / RAND_MAX
    for i, (v, c) in enumerate(CDF):
        if x <= c:
            if i == 0:
                return 0.0  # interpolate(x,0,0,c0,v0) with x1 == x2
            x1, y1 = CDF[i - 1][1], CDF[i - 1][0]
            x2, y2 = c, v
            if x1 == x2:
                return (y1 + y2) / 2
            return y1 + (x - x1) * (y2 - y1) / (x2 - x1)
    return CDF[-1][0]


def generate(seed, launch_s, load=0.4, servers=32, leaves=2, request=1966080, qrate=2.0,
             start=10.0, nprio=2, per_flow_prio=False, uplinks=8, setup_ms=None):
    """ns3dc's flows: tuples (kind, src, dst, size, start time, query id or -1, priority).

    abm-evaluation draws one priority per leaf and workload, rand_range(1, nPrior - 1);
    abm-evaluation-nprio (``per_flow_prio``) draws one per web-search flow, rand_range(1, nPrior)
    (nPrior itself folded to nPrior - 1), just before its receiver, and puts every incast response
    in queue nPrior - 1 without a draw. ``uplinks``: spines x links per leaf-spine pair, which sets
    the over-subscription in the websearch rate (the ABM example: 2 x 4; credence-evaluation, whose
    generator draws in the same order: 4 x 1). ``setup_ms``: a list to which each incast response's
    connection set-up draw (its application's start, ms: rand_range(50, 1000)) is appended, in flow
    order (ns3dc_ecmp's source ports)."""
    end = start + launch_s
    oversub = float(servers * 10_000_000_000) / (10_000_000_000 * uplinks)
    rate = load * 10_000_000_000 * servers / oversub / (8 * avg_cdf()) / servers
    libc.srand(ctypes.c_uint(seed))
    flows = []
    q = 0
    for leaf in range(leaves):
        prio = None if per_flow_prio else rand_range_int(1, nprio - 1)  # nPrior 2 -> always 1
        other = (leaf + 1) % leaves
        for tx in range(servers):
            t = start + poisson_interval(rate)
            while t < end and t > start:
                p = prio
                if per_flow_prio:
                    p = min(rand_range_int(1, nprio), nprio - 1)
                rx = rand_range_int(0, servers)
                size = int(gen_cdf())
                while size == 0:
                    size = int(gen_cdf())
                flows.append(("websearch", leaf * servers + tx, other * servers + rx, size, t, -1, p))
                t += poisson_interval(rate)
        # incast queries requested by this leaf's servers, answered by the other leaf
        prio = nprio - 1 if per_flow_prio else rand_range_int(1, nprio - 1)
        fsize = int(float(request) / float(servers))
        for rq in range(servers):
            t = start + poisson_interval(qrate)
            while t < end and t > start:
                for tx in range(servers):
                    ms = rand_range_int(50, 1000)  # connection set-up time (ms), before StartTime
                    if setup_ms is not None:
                        setup_ms.append(ms)
                    flows.append(("incast", other * servers + tx, leaf * servers + rq, fsize, t, q, prio))
                q += 1
                t += poisson_interval(qrate)
    return flows, start


def write_csvs(flows, start, seed, out_dir, hashes=None):
    """The two replay CSVs of one seed (websearch, incast) in out_dir; returns their paths.
    ``hashes``: per flow (data, reverse) ECMP hashes, written as the columns ecmp_hash,
    ecmp_hash_reverse into websearch-s<seed>-ecmp.csv and incast-s<seed>-ecmp.csv instead."""
    import os
    os.makedirs(out_dir, exist_ok=True)
    tag = "" if hashes is None else "-ecmp"
    ws = os.path.join(out_dir, f"websearch-s{seed}{tag}.csv")
    inc = os.path.join(out_dir, f"incast-s{seed}{tag}.csv")
    extra_h = "" if hashes is None else ",ecmp_hash,ecmp_hash_reverse"
    # Written beside and renamed into place, so a run reading them never sees half a file (grid.py
    # jobs of several variants at once rewrite the same files with the same content).
    tmp = f".{os.getpid()}.tmp"
    with open(ws + tmp, "w") as fw, open(inc + tmp, "w") as fi:
        fw.write(f"id,src,dst,size_bytes,start_s,priority{extra_h}\n")
        fi.write(f"id,src,dst,size_bytes,start_s,priority,query,handshake{extra_h}\n")
        nw = ni = 0
        for j, (k, s, d, size, t, qq, prio) in enumerate(flows):
            extra = "" if hashes is None else f",{hashes[j][0]},{hashes[j][1]}"
            if k == "websearch":
                fw.write(f"{nw},{s},{d},{size},{t - start:.9f},{prio}{extra}\n")
                nw += 1
            else:
                fi.write(f"{ni},{s},{d},{size},{t - start:.9f},{prio},{qq},false{extra}\n")
                ni += 1
    os.replace(ws + tmp, ws)
    os.replace(inc + tmp, inc)
    return ws, inc


def main():
    args = sys.argv[1:]
    seed, out = int(args[0]), args[1]
    launch = 0.5
    check = None
    if "--launch-s" in args:
        launch = float(args[args.index("--launch-s") + 1])
    if "--check" in args:
        check = args[args.index("--check") + 1]
    flows, start = generate(seed, launch)
    write_csvs(flows, start, seed, out)
    nw = sum(1 for x in flows if x[0] == "websearch")
    print(f"seed {seed}: {nw} websearch, {len(flows) - nw} incast flows -> {out}")
    if check:
        # ns3dc fct file: flowsize, flowstart (us after StartTime, printed with 6 significant digits)
        got = []
        with open(check) as f:
            f.readline()
            for line in f:
                p = line.split()
                got.append((int(float(p[1])), float(p[6]), int(p[8])))
        from collections import Counter
        want = Counter()
        for k, s, d, size, t, qq, _ in flows:
            # the fct file prints sizes with 6 significant digits (1.06067e+06)
            want[(int(float(f"{size:.6g}")), k == "incast")] += 1
        have = Counter((sz, bool(inc)) for sz, _, inc in got)
        missing = want - have
        extra = have - want
        print(f"fct rows {len(got)}; reconstructed {len(flows)}; "
              f"not in fct (unfinished?) {sum(missing.values())}; unexplained fct rows {sum(extra.values())}")
        for (sz, inc), n in sorted(missing.items())[:20]:
            print(f"  missing size {sz} incast={inc} x{n}")
        # incast query times: ns3dc prints flowstart = query time - StartTime in us, 6 significant digits
        # (sorted pairwise, within one unit of the 6th printed digit)
        want_t = sorted((t - start) * 1e6 for k, s, d, size, t, qq, _ in flows if k == "incast")
        have_t = sorted(t for _, t, inc in got if inc)
        bad = len(want_t) != len(have_t) or any(abs(a - b) > 1.01 * 10 ** (math.floor(math.log10(max(abs(a), 1e-9))) - 5)
                                                 for a, b in zip(want_t, have_t))
        worst = max((abs(a - b) for a, b in zip(want_t, have_t)), default=0.0)
        print(f"incast response start times: {len(want_t)} reconstructed, {len(have_t)} in fct, "
              f"{'MISMATCH' if bad else 'all equal to print precision'} (max difference {worst:.3g} us)")


if __name__ == "__main__":
    main()

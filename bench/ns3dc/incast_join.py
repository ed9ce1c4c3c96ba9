#!/usr/bin/env python3
"""Query-by-query join of ns3dc's and sharebuf's incast responses at a grid point (grid.toml).

Both sides replay the same queries: a query is its start time (ns3dc's `flowstart`, µs since
10 s, printed to 0.001 µs; sharebuf's `start_s`) and its 32 responders. ns3dc's fct files carry
neither the responder nor the path, so responses are joined per query, not one by one: per query,
how many responses time out on each side (an FCT at least the 10 ms minimum RTO above the ideal
one: exactly sharebuf's own count, docs/validation.md), the distribution of those counts, the
responses' FCT quantiles with and without a timeout, and on sharebuf's side (which knows its
flows) the timeouts by the number of responses of the same query sharing their first-hop uplink
(sharebuf's "same" ECMP hash, `topology.rs::ecmp_hash`) and by the response's retransmissions
(1 = the timeout's own: no loss recovery before it).

Usage: python3 incast_join.py --point cubic-b0.75 [--variant profile] [--scheme dt] [--queries]
"""
import argparse
import os
import sys

import numpy as np
import pandas as pd

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import grid  # noqa: E402

BASE_US = 80.0
RTO_US = 1e4
M64 = (1 << 64) - 1


def ecmp_uplink(flow, dst, n_up=8):
    """The first-hop uplink index sharebuf's "same" ECMP hash gives (topology.rs::ecmp_hash,
    SplitMix64's finalizer, salt 0) among `n_up` candidates."""
    z = ((flow << 32) ^ dst ^ 0x9E3779B97F4A7C15) & M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return (z ^ (z >> 31)) % n_up


def load(point, scheme, seed, variant):
    """(ns3dc responses, sharebuf responses) of one run, each with fct_us and `late` (timed out)."""
    p = {q["name"]: q for q in grid.points()}[point]
    n = pd.read_csv(grid.fct_path(p, scheme, seed), sep=r"\s+")
    n = n[n.incast == 1].copy()
    n["fct_us"] = n.fct / 1e3
    n["late"] = n.fct_us - (BASE_US + n.flowsize * 8 / 1e4) >= RTO_US
    s = pd.read_parquet(grid.sb_path(variant, p, scheme, seed))
    s = s[s.workload == "incast"].copy()
    s["fct_us"] = s.fct_s * 1e6
    s["start_us"] = s.start_s * 1e6
    s["late"] = s.fct_us - (BASE_US + s.size_bytes * 8 / 1e4) >= RTO_US
    s["uplink"] = [ecmp_uplink(int(f), int(d)) for f, d in zip(s.flow_id, s.dst)]
    s["sharing"] = s.groupby(["query_id", "uplink"]).flow_id.transform("count")
    return n, s


def per_query(n, s):
    """One row per query: start, receiver, responses and timeouts on each side."""
    nq = n.groupby("flowstart").late.agg(["sum", "count"])
    sq = s.groupby("query_id").agg(start_us=("start_us", "first"), dst=("dst", "first"),
                                   n=("late", "size"), sb_late=("late", "sum"))
    idx = [np.abs(nq.index.to_numpy() - t).argmin() for t in sq.start_us]
    sq["dt_us"] = np.abs(nq.index.to_numpy()[idx] - sq.start_us.to_numpy())
    sq["ns_n"] = nq["count"].to_numpy()[idx]
    sq["ns_late"] = nq["sum"].to_numpy()[idx]
    return sq


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--point", required=True)
    ap.add_argument("--variant", default="profile")
    ap.add_argument("--scheme", default="dt", choices=["dt", "abm"])
    ap.add_argument("--seeds", help="default: the point's seeds")
    ap.add_argument("--queries", action="store_true", help="print every query")
    a = ap.parse_args()
    p = {q["name"]: q for q in grid.points()}[a.point]
    seeds = [int(x) for x in a.seeds.split(",")] if a.seeds else p["seeds"]
    ns, ss, qs = [], [], []
    for seed in seeds:
        n, s = load(a.point, a.scheme, seed, a.variant)
        q = per_query(n, s)
        q["seed"] = seed
        if (q.dt_us > 1).any() or (q.ns_n != q.n).any():
            print(f"seed {seed}: {int((q.dt_us > 1).sum())} queries without an ns3dc query within 1 us "
                  f"or of another size", file=sys.stderr)
        ns.append(n)
        ss.append(s)
        qs.append(q)
    n, s, q = pd.concat(ns), pd.concat(ss), pd.concat(qs)
    print(f"{a.point} {a.scheme} ({a.variant}), seeds {','.join(map(str, seeds))}: {len(q)} queries, "
          f"{len(n)} / {len(s)} responses (ns3dc / sharebuf)")
    print(f"responses timing out: ns3dc {n.late.mean():.2%}, sharebuf {s.late.mean():.2%}; per query mean "
          f"{q.ns_late.mean():.1f} / {q.sb_late.mean():.1f}, correlation between the sides "
          f"{np.corrcoef(q.ns_late, q.sb_late)[0, 1]:.2f}")
    top = int(max(q.ns_late.max(), q.sb_late.max()))
    edges = [0, 1, 3, 6, 10, 15, 20, 33]
    lab = [f"{lo}-{hi - 1}" if hi - 1 > lo else f"{lo}" for lo, hi in zip(edges, edges[1:]) if lo <= top]
    hn = np.histogram(q.ns_late, edges)[0][:len(lab)]
    hs = np.histogram(q.sb_late, edges)[0][:len(lab)]
    print("queries by responses timing out: " + ", ".join(f"{l}: {x} / {y}" for l, x, y in zip(lab, hn, hs)))
    qq = [5, 25, 50, 75, 95]
    for name, sel_n, sel_s in (("without a timeout", ~n.late, ~s.late), ("with one", n.late, s.late)):
        if sel_n.any() and sel_s.any():
            print(f"FCT ms {name}, p{'/'.join(map(str, qq))}: ns3dc "
                  + " / ".join(f"{v:.2f}" for v in np.percentile(n[sel_n].fct_us / 1e3, qq)) + "; sharebuf "
                  + " / ".join(f"{v:.2f}" for v in np.percentile(s[sel_s].fct_us / 1e3, qq)))
    t = s.groupby(s.sharing.clip(upper=8)).agg(responses=("late", "size"), timing_out=("late", "mean"))
    print("sharebuf by responses of the query on the same first-hop uplink (8 = 8 or more):")
    print("  " + ", ".join(f"{k}: {r.timing_out:.0%} of {int(r.responses)}" for k, r in t.iterrows()))
    late = s[s.late]
    if len(late):
        print(f"sharebuf's timed-out responses with no loss recovery before the timeout (1 retransmission): "
              f"{(late.retransmits == 1).mean():.0%}")
    if a.queries:
        print(q[["seed", "start_us", "dst", "ns_late", "sb_late"]].to_string(index=False))


if __name__ == "__main__":
    main()

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

With ``--uplinks PREFIX --seeds S`` it explains the timeouts by the sending leaf's uplinks
instead (DT; which of ns3dc's responses time out comes from a TCP trace of their senders,
PREFIX-tcp.txt and PREFIX-tcpmap.txt in tcp_diag.py's format, or ``--incast-trace``): PREFIX-qs.txt is a sample of ns3dc's queue discs from a scratch copy of the example (every
30 µs, per leaf one line: ``t_ns leaf occupied_bytes`` and the bytes of its 32 server-port and
8 uplink queue discs, then the 8 spine queue discs towards it; this repository keeps no ns3dc
code). sharebuf's run of the same seed is made with ``[output] queue_sample_us = 30``. Each
query's responses are grouped by their first-hop uplink (ns3dc's ECMP hash of the 5-tuple, which
the ``profile_ns3hash`` variants replay), and each group's margin when the query comes, DT's
threshold α · (B − occupied) less the uplink's queue less the group's bytes, is set against how
many of its responses time out, on both sides; and the uplinks' queue quantiles over the arrivals.

Usage: python3 incast_join.py --point cubic-b0.75 [--variant profile] [--scheme dt] [--queries]
       python3 incast_join.py --point cubic-l0.8 --variant profile_ns3hash --seeds 3 --uplinks PREFIX
"""
import argparse
import os
import sys
from pathlib import Path

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


MARGIN_EDGES_KB = [-np.inf, 0, 100, 200, 300, 400, np.inf]


def ns3dc_queue_samples(path, uplinks=8, servers=32):
    """ns3dc's queue-disc samples: (t_ns, leaf, occupied bytes, uplink queue bytes [n, uplinks])."""
    width = 3 + servers + uplinks + uplinks
    rows = [r for r in (line.split() for line in open(path)) if len(r) == width]
    a = np.array(rows, dtype=np.int64)
    return a[:, 0], a[:, 1], a[:, 2], a[:, 3 + servers:3 + servers + uplinks]


def ns3dc_incast_timeouts(prefix, p, seed):
    """sharebuf flow id -> whether ns3dc's sender of that incast response had a timeout (its
    socket entered CA_LOSS), from a scratch TCP trace of the responses (PREFIX-tcpmap.txt,
    PREFIX-tcp.txt: tcp_diag.py's format)."""
    import ns3dc_ecmp
    key = ns3dc_ecmp.flow_ids(seed, p["launch_s"], **grid.generator(p))
    m = pd.read_csv(f"{prefix}-tcpmap.txt", sep=" ", header=None, names=["nf", "src", "dst", "sport", "dport", "size", "t_ns"])
    m["fid"] = [key.get(k, -1) for k in zip(m.src, m.dst, m.sport, m.dport)]
    ev = pd.read_csv(f"{prefix}-tcp.txt", sep=" ", header=None, names=["t_ns", "nf", "k", "a", "b", "c"], dtype={"k": str})
    lost = set(ev.nf[(ev.k == "g") & (ev.a == 4)])
    return {int(f): nf in lost for nf, f in zip(m.nf, m.fid) if f >= 0}


def uplinks(a, p, seed):
    """Per query and first-hop uplink, the margin under DT's threshold when the query comes on
    both sides, and how many of its responses time out (docstring)."""
    import ns3dc_ecmp
    import sharebuf
    from run_sharebuf import VARIANTS, with_keys
    if VARIANTS[a.variant][1].get("topology.ecmp_hash") != "flow":
        sys.exit(f"--uplinks needs a variant with ns3dc's placement (topology.ecmp_hash = 'flow'), not {a.variant}")
    if a.scheme != "dt":
        sys.exit("--uplinks: DT only (the margin is DT's threshold)")
    prof, keys = VARIANTS[a.variant]
    out = Path(HERE) / "out" / "incast_uplinks" / a.variant / f"{a.point}-{a.scheme}-s{seed}"
    sc = with_keys(grid.scenario(p, a.scheme, seed, *grid.replay_csvs(p, seed, hashed=True)),
                   {**keys, "output.queue_sample_us": 30})
    sharebuf.run(sc, profile=prof, quiet=True, out=out)
    f = pd.read_parquet(out / "flows.parquet")
    s = f[f.workload == "incast"].sort_values("flow_id").copy()
    n_up, servers = 8, 32
    s["h"] = [r[5] % n_up for r in ns3dc_ecmp.responses(seed, p["launch_s"], **grid.generator(p))]
    ns_late = ns3dc_incast_timeouts(a.incast_trace or a.uplinks, p, seed)
    s["ns_late"] = s.flow_id.map(ns_late)
    s["sb_late"] = s.timeouts > 0
    q = pd.read_parquet(out / "queue_occupancy.parquet")
    q = q[q.switch < 2].groupby(["switch", "time_s", "port"]).bytes.sum().unstack("port").fillna(0)
    up_cols = list(range(servers, servers + n_up))
    t_ns, leaf, occ, upq = ns3dc_queue_samples(a.uplinks + "-qs.txt", n_up, servers)
    alpha, B = grid.ALPHAS[1], p["buffer"]
    wire = (1400 + 54) / 1400   # the responses' bytes on the wire (header_bytes 54 per 1400 B segment)
    rows = []
    for qid, g in s.groupby("query_id"):
        t0_s, dst = g.start_s.iloc[0], int(g.dst.iloc[0])
        src_leaf = 1 - dst // servers
        sel = leaf == src_leaf
        i = np.searchsorted(t_ns[sel], int(round(10e9 + t0_s * 1e9))) - 1
        ys = q.xs(src_leaf, level="switch")
        j = np.searchsorted(ys.index.to_numpy(), t0_s) - 1
        for h, gg in g.groupby("h"):
            need = gg.size_bytes.sum() * wire
            rows.append(dict(query=qid, h=h, k=len(gg),
                             ns_m=(alpha * (B - occ[sel][i]) - upq[sel][i, h] - need) / 1e3,
                             sb_m=(alpha * (B - ys.iloc[j].sum()) - ys.iloc[j][up_cols[h]] - need) / 1e3,
                             ns_late=int(gg.ns_late.sum()), sb_late=int(gg.sb_late.sum())))
    r = pd.DataFrame(rows)
    print(f"{a.point} {a.scheme} seed {seed} ({a.variant}): {len(r)} (query, first-hop uplink) groups, "
          f"{len(s)} responses; timing out: ns3dc {int(s.ns_late.sum())}, sharebuf {int(s.sb_late.sum())}")
    print("responses timing out by the group's margin under DT's threshold when the query comes (KB):")
    for side, col in (("ns3dc", "ns"), ("sharebuf", "sb")):
        t = r.groupby(pd.cut(r[f"{col}_m"], MARGIN_EDGES_KB), observed=False).agg(
            responses=("k", "sum"), late=(f"{col}_late", "sum"))
        print(f"  {side:8s} " + ", ".join(f"{iv}: {int(x.late)} of {int(x.responses)}" for iv, x in t.iterrows()))
    t_s = (t_ns - 10e9) / 1e9
    w = (t_s > 0.01) & (t_s < p["launch_s"])
    ti = q.index.get_level_values("time_s")
    ys_all = q[(ti > 0.01) & (ti < p["launch_s"])][up_cols].to_numpy()
    qq = [50, 75, 90, 99]
    print("uplink queues over the arrivals, KB p50 / p75 / p90 / p99: ns3dc "
          + " / ".join(f"{v:.0f}" for v in np.percentile(upq[w] / 1e3, qq)) + "; sharebuf "
          + " / ".join(f"{v:.0f}" for v in np.percentile(ys_all / 1e3, qq)))
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--point", required=True)
    ap.add_argument("--variant", default="profile")
    ap.add_argument("--scheme", default="dt", choices=["dt", "abm"])
    ap.add_argument("--seeds", help="default: the point's seeds")
    ap.add_argument("--queries", action="store_true", help="print every query")
    ap.add_argument("--uplinks", metavar="PREFIX", help="ns3dc's queue-disc samples PREFIX-qs.txt of one seed (docstring)")
    ap.add_argument("--incast-trace", metavar="PREFIX", help="ns3dc's TCP trace of the incast responses, PREFIX-tcp.txt and "
                    "PREFIX-tcpmap.txt (default: the --uplinks prefix)")
    a = ap.parse_args()
    p = {q["name"]: q for q in grid.points()}[a.point]
    seeds = [int(x) for x in a.seeds.split(",")] if a.seeds else p["seeds"]
    if a.uplinks:
        if len(seeds) != 1:
            sys.exit("--uplinks: give the one seed its samples are of (--seeds S)")
        uplinks(a, p, seeds[0])
        return
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

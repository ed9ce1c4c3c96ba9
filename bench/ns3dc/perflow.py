#!/usr/bin/env python3
"""Per-flow join of ns3dc and sharebuf on the replayed websearch flows (issue 15's diagnosis).

Both sides run the same flows, so each ns3dc websearch flow is matched to sharebuf's by size
(ns3dc prints 6 significant digits) and nearest start time; ns3dc's fct files carry no
addresses, so sharebuf's src/dst are used. For short flows (< 100 KB) it prints how the FCT
excess of ns3dc over sharebuf is distributed (in base RTTs of 80 us: quantized = an extra round
trip or a timeout, spread = queueing) and, for flows slow in ns3dc (slowdown > 7) against fast
ones (< 3), how often they overlapped an incast query to the same host, large flows (>= 100 KB)
to the same host or from the same host, and how many large flows ran from the source leaf.

With ``--long`` (a grid point's runs, both schemes) it describes the long flows (>= 1 MB) queue by
queue instead: on each side the p90 and largest slowdown under ABM, the share of sharebuf's ABM
flows that waited out a timeout, and the flows that ABM delays by at least the 10 ms minimum RTO
against the same flow under DT. ns3dc's fct files say nothing of timeouts, but its DT and ABM runs
replay the same flows, so that paired delay is read the same way on both sides.

Usage: python3 perflow.py [--variant profile] [--scheme dt|abm] [--results DIR] [--ns3dc DIR]
                          [--point NAME --seeds 1,2]   (a point of the validation grid, grid.toml)
       python3 perflow.py --long --point nprio8-cubic --seeds 1,2 [--variant profile]
"""
import argparse
import os

import numpy as np
import pandas as pd

from compare import default_ns3dc_dir

HERE = os.path.dirname(os.path.abspath(__file__))
BASE_US = 80.0


def paths(ns3dc_dir, results, variant, scheme, seed, point=None):
    """(ns3dc fct file, sharebuf flows.parquet, replayed incast CSV) of one run: a grid point's
    (grid.py) or, without ``point``, the studied point's of run_sharebuf.py."""
    if point is not None:
        import grid
        p = {q["name"]: q for q in grid.points()}[point]
        return (grid.fct_path(p, scheme, seed), grid.sb_path(variant, p, scheme, seed),
                os.path.join(HERE, "scenarios", "replay", point, f"incast-s{seed}.csv"))
    sb = "abm_code" if scheme == "abm" else scheme
    return (os.path.join(ns3dc_dir, f"fct-{scheme}-s{seed}.txt"),
            os.path.join(results, "sharebuf", f"{variant}_{sb}-s{seed}.parquet"),
            os.path.join(HERE, "scenarios", "replay", f"incast-s{seed}.csv"))


def join(fct, parquet):
    n = pd.read_csv(fct, sep=r"\s+")
    n = n[n.incast == 0]
    s = pd.read_parquet(parquet)
    s = s[s.workload != "incast"].copy()
    s["start_us"] = s.start_s * 1e6
    rows = []
    for size, g in s.groupby("size_bytes"):
        h = n[(n.flowsize - size).abs() <= max(0.5, size * 6e-6)]
        for i, r in g.iterrows():
            if len(h):
                k = (h.flowstart - r.start_us).abs().idxmin()
                rows.append((i, k))
    idx = pd.DataFrame(rows, columns=["si", "ni"])
    m = s.loc[idx.si].reset_index(drop=True)
    m["n_us"] = n.loc[idx.ni, "fct"].to_numpy() / 1e3
    m["s_us"] = m.fct_s * 1e6
    base = BASE_US + m.size_bytes * 8 / 1e4
    m["n_sd"], m["s_sd"] = m.n_us / base, m.s_us / base
    return m, len(s)


def overlaps(m, incast_csv):
    inc = pd.read_csv(incast_csv)
    q = inc.groupby("query").agg(dst=("dst", "first"), t=("start_s", "first"))
    q_t, q_dst = q.t.to_numpy() * 1e6, q.dst.to_numpy()
    big = m[m.size_bytes >= 100_000]
    b_s, b_e = big.start_us.to_numpy(), (big.start_us + big.n_us).to_numpy()
    b_src, b_dst = big.src.to_numpy(), big.dst.to_numpy()
    out = []
    for r in m[m.size_bytes < 100_000].itertuples():
        t0, t1 = r.start_us, r.start_us + r.n_us
        live = (b_s < t1) & (b_e > t0)
        out.append((r.n_sd, r.s_sd,
                    bool(((q_dst == r.dst) & (q_t > t0 - 3000) & (q_t < t1)).any()),
                    bool((live & (b_dst == r.dst)).any()), bool((live & (b_src == r.src)).any()),
                    int((live & (b_src // 32 == r.src // 32)).sum())))
    return pd.DataFrame(out, columns=["n_sd", "s_sd", "incast_same_dst", "big_same_dst", "big_same_src", "big_src_leaf"])


def long_by_queue(point, seeds, variant):
    """Long flows queue by queue, ns3dc against sharebuf (module docstring, ``--long``)."""
    import grid
    p = {q["name"]: q for q in grid.points()}[point]
    rows = []
    for seed in seeds:
        nd = {a: pd.read_csv(grid.fct_path(p, a, seed), sep=r"\s+") for a in ("dt", "abm")}
        nd = {a: x[x.incast == 0] for a, x in nd.items()}
        n = nd["abm"].merge(nd["dt"], on=["flowstart", "flowsize", "priority"], suffixes=("_a", "_d"))
        sd = {a: pd.read_parquet(grid.sb_path(variant, p, a, seed)) for a in ("dt", "abm")}
        s = sd["abm"].merge(sd["dt"], on="flow_id", suffixes=("_a", "_d"))
        s = s[s.workload_a != "incast"]
        nl, sl = n[n.flowsize >= 1_000_000], s[s.size_bytes_a >= 1_000_000]
        for q in sorted(set(nl.priority)):
            a, b = nl[nl.priority == q], sl[sl.priority_a == q]
            n_sd = a.fct_a / (BASE_US * 1e3 + a.flowsize * 8 / 10)             # ns
            s_sd = b.fct_s_a * 1e6 / (BASE_US + b.size_bytes_a * 8 / 1e4)       # us
            rows.append((seed, q, len(a), np.percentile(n_sd, 90), n_sd.max(), np.percentile(s_sd, 90), s_sd.max(),
                         100 * (b.timeouts_a > 0).mean(), int(((a.fct_a - a.fct_d) >= 1e7).sum()), int(((b.fct_s_a - b.fct_s_d) >= 1e-2).sum())))
    t = pd.DataFrame(rows, columns=["seed", "queue", "long flows", "ABM p90 ns3dc", "ABM max ns3dc", "ABM p90 sharebuf", "ABM max sharebuf",
                                    "sharebuf ABM timed out %", "ABM >= 10 ms later than DT: ns3dc", "sharebuf"])
    print(t.to_string(index=False, float_format=lambda v: f"{v:.1f}"))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--variant", default="profile")
    ap.add_argument("--scheme", default="dt", choices=["dt", "abm"])
    ap.add_argument("--results", default=os.path.join(HERE, "results"))
    ap.add_argument("--ns3dc", default=None)
    ap.add_argument("--seeds", default="1,2,3,4,5")
    ap.add_argument("--point", help="a grid point of grid.toml (its ns3dc and sharebuf runs)")
    ap.add_argument("--long", action="store_true", help="long flows queue by queue, DT and ABM (needs --point)")
    a = ap.parse_args()
    if a.long:
        if not a.point:
            ap.error("--long needs --point")
        long_by_queue(a.point, [int(x) for x in a.seeds.split(",")], a.variant)
        return
    nd = a.ns3dc or default_ns3dc_dir(a.results)
    ms, ov = [], []
    for seed in [int(x) for x in a.seeds.split(",")]:
        fct, parquet, incast_csv = paths(nd, a.results, a.variant, a.scheme, seed, a.point)
        m, total = join(fct, parquet)
        print(f"seed {seed}: {len(m)} of {total} websearch flows matched")
        ms.append(m)
        ov.append(overlaps(m, incast_csv))
    m, o = pd.concat(ms), pd.concat(ov)
    sh = m[m.size_bytes < 100_000]
    ex = (sh.n_us - sh.s_us) / BASE_US
    slow = sh[sh.n_sd > 7]
    exs = (slow.n_us - slow.s_us) / BASE_US
    print(f"short flows: {len(sh)}; slowdown > 7: ns3dc {len(slow)}, sharebuf {(sh.s_sd > 7).sum()}; "
          f"slow in ns3dc and < 3 in sharebuf: {((sh.n_sd > 7) & (sh.s_sd < 3)).sum()}; FCT >= 10 ms: ns3dc {(sh.n_us >= 1e4).sum()}, sharebuf {(sh.s_us >= 1e4).sum()}")
    print("excess ns3dc - sharebuf, base RTTs, all short flows p10/p50/p90: " + " / ".join(f"{v:.1f}" for v in ex.quantile([.1, .5, .9])))
    print("  slow ones p10/p25/p50/p75/p90: " + " / ".join(f"{v:.1f}" for v in exs.quantile([.1, .25, .5, .75, .9]))
          + f"; mean distance to a whole RTT {(exs - exs.round()).abs().mean():.3f} (0.25 if spread evenly)")
    for lab, sel in (("slow in ns3dc (> 7)", o.n_sd > 7), ("fast in ns3dc (< 3)", o.n_sd < 3)):
        x = o[sel]
        print(f"{lab}: {len(x)}; incast to the same host {x.incast_same_dst.mean():.3f}, flow >= 100 KB to the same host "
              f"{x.big_same_dst.mean():.2f}, from the same host {x.big_same_src.mean():.2f}, flows >= 100 KB from the source leaf {x.big_src_leaf.mean():.1f}")


if __name__ == "__main__":
    main()

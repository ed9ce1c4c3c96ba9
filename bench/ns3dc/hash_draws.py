#!/usr/bin/env python3
"""How far a grid point's sharebuf p99s move with the ECMP hash alone.

sharebuf's `ecmp_hash = "same"` is one hash of the flow id at every switch, not ns-3's hash of the
5-tuple, so which flows share a link differs from ns3dc's. This re-runs a grid point's replayed
flows with `ecmp_hash = "flow"` and K random per-flow hashes (the same hash at every switch, as ns-3
and "same" do; draw k of seed s uses Python's random.Random(1000 s + k)), one scheme, for each
variant, and prints each class's p99 pooled over the point's seeds, draw by draw, against ns3dc's.

Usage: python3 hash_draws.py --point nprio8-cubic [--scheme abm] [--variants profile,profile_nopollcredit]
                             [--draws 1,2,3,4]
"""
import argparse
import random
from pathlib import Path

import numpy as np

import grid
import ns3dc_flows
from run_sharebuf import VARIANTS, with_keys

HERE = Path(__file__).resolve().parent


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--point", required=True)
    ap.add_argument("--scheme", default="abm", choices=["dt", "abm"])
    ap.add_argument("--variants", default="profile")
    ap.add_argument("--draws", default="1,2,3,4")
    a = ap.parse_args()
    import sharebuf
    p = {q["name"]: q for q in grid.points()}[a.point]
    seeds = [s for s in p["seeds"] if grid.fct_path(p, a.scheme, s) is not None]
    ns = grid.pooled([grid.fct_path(p, a.scheme, s) for s in seeds], grid.classes_ns3dc)
    print(f"{a.point} {a.scheme}, seeds {seeds}; ns3dc p99: " +
          ", ".join(f"{c} {np.percentile(ns[c][0], 99):.1f}" for c in grid.CLASSES))
    for k in [int(x) for x in a.draws.split(",")]:
        runs = {v: [] for v in a.variants.split(",")}
        for seed in seeds:
            flows, start = ns3dc_flows.generate(seed, p["launch_s"], load=p["load"], request=p["request"],
                                                qrate=p["query_rate"], nprio=p["nprio"],
                                                per_flow_prio=p["binary"].endswith("nprio"))
            rng = random.Random(1000 * seed + k)
            hashes = [(rng.getrandbits(32), rng.getrandbits(32)) for _ in flows]
            ws, inc = ns3dc_flows.write_csvs(flows, start, seed, HERE / "scenarios" / "replay" / a.point / f"hash{k}",
                                             hashes=hashes)
            for v in runs:
                prof, keys = VARIANTS[v]
                out = HERE / "out" / "hash_draws" / v / a.point / f"{a.scheme}-s{seed}-d{k}"
                sharebuf.run(with_keys(grid.scenario(p, a.scheme, seed, ws, inc), {**keys, "topology.ecmp_hash": "flow"}),
                             profile=prof, quiet=True, out=out)
                runs[v].append(out / "flows.parquet")
        for v, paths in runs.items():
            sb = grid.pooled(paths, grid.classes_sharebuf)
            print(f"draw {k} {v}: p99 " + ", ".join(f"{c} {np.percentile(sb[c][0], 99):.1f}" for c in grid.CLASSES) +
                  f"; long flows timed out {100 * sb['long'][1].mean():.1f} %", flush=True)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""ABM Fig. 8's θ-PowerTCP class under ABM: the ABM authors' simulator (ns3dc) next to sharebuf, query by query.

ns3dc side: run-main.sh's Fig. 8 command line (abm-evaluation-multi: Cubic web search at 60% in queue 1,
DCTCP at 10% in queue 2, incast of 30% of the buffer from the 8 "power" servers in queue 3, nPrior 8, the
alphas file, ABM = algorithm 110 or DT = 101, FlowLaunchEndTime 13 s), stopped at 10.2 s; the fct files are kept
in results/fig8/. In that program the θ-PowerTCP servers run with no congestion control (A-X7; sharebuf's
cc = "fixed_window"). sharebuf side: the quick-scale repro run of abm-fig8 at the same Cubic load
(workload[0].load = 1.2, ABM preset eval), found in `sharebuf repro run abm-fig8 --scale quick`'s output.

    python bench/ns3dc/fig8_theta.py --sharebuf-out DIR [--scheme abm|dt] [--cubic-load 0.6|0.5]

Per incast query: responses finished, how many took >= 10 ms (ns3dc's minimum RTO; sharebuf: the
`timeouts` column), the slowest response. ns3dc writes only finished flows, so a query whose responses
have not all finished when the run stopped shows fewer than 8.
"""
from __future__ import annotations

import argparse
import glob
import sys
import tomllib
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from compare import pct_ns3dc, slowdown  # noqa: E402


def sharebuf_run(out: Path, scheme: str, cubic_load: float) -> Path:
    for f in glob.glob(str(out / "runs" / "*" / "scenario.toml")):
        s = tomllib.load(open(f, "rb"))
        w = s.get("workload", [])
        if (len(w) == 3 and w[2].get("cc") == "fixed_window" and w[0].get("load") == round(2 * cubic_load, 6)
                and s["switch"]["bm"]["scheme"] == scheme and s.get("profile") == "ns3dc"
                and w[0].get("cc_params", {}).get("cnt_clamp_segments") == 20):  # the profile's Cubic reached the class
            return Path(f).parent
    sys.exit(f"--sharebuf-out {out}: no abm-fig8 quick run of {scheme} at Cubic load {cubic_load:.0%}; "
             "run `sharebuf repro run abm-fig8 --scale quick --out DIR` first")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sharebuf-out", type=Path, required=True)
    ap.add_argument("--scheme", choices=["abm", "dt"], default="abm")
    ap.add_argument("--cubic-load", type=float, default=0.6,
                    help="ns3dc's --loadCubic (sharebuf's workload[0].load is twice it); runs kept: 0.6, 0.5")
    ap.add_argument("--ns3dc", type=Path, default=None,
                    help="ns3dc fct file (default: results/fig8/fct-SCHEME.txt at 0.6, fct-SCHEME-LOAD%%.txt otherwise)")
    a = ap.parse_args()
    tag = "" if a.cubic_load == 0.6 else f"-{round(a.cubic_load * 100)}"
    d = pd.read_csv(a.ns3dc or HERE / "results" / "fig8" / f"fct-{a.scheme}{tag}.txt", sep=r"\s+")
    i = d[d.incast == 1]
    ns = i.groupby("flowstart").agg(finished=("fct", "size"), over_10ms=("fct", lambda x: int((x >= 10e6).sum())),
                                    slowest_ms=("fct", lambda x: x.max() / 1e6))
    ns.index = (ns.index / 1e3).round(2)
    ns.index.name = "ns3dc query start (ms)"
    print(f"ns3dc {a.scheme}, simulated until {d.time.max():.4f} s:")
    print(ns.round(2).to_string())
    f = pd.read_parquet(sharebuf_run(a.sharebuf_out, a.scheme, a.cubic_load) / "flows.parquet")
    q = f[f.query_id >= 0]
    sb = q.groupby("query_id").agg(start_ms=("start_s", lambda x: x.min() * 1e3), finished=("finished", "sum"),
                                   timed_out=("timeouts", lambda x: int((x > 0).sum())),
                                   slowest_ms=("fct_s", lambda x: x.max() * 1e3)).sort_values("start_ms")
    print(f"\nsharebuf {a.scheme} (quick run, 300 ms of arrivals):")
    print(sb.round(2).to_string(index=False))
    ns_p99 = pct_ns3dc(slowdown(i.fct * 1e-9, i.flowsize), 0.99)
    sb_p99 = pct_ns3dc(q.slowdown_paper, 0.99)
    print(f"θ-class p99 slowdown (fct / (80 us + size x 8 / 10 G)): ns3dc {ns_p99:.1f}, sharebuf {sb_p99:.1f}")
    tot = lambda n, k: f"{k} of {n} responses"
    print(f"\nns3dc: {tot(len(i), int((i.fct >= 10e6).sum()))} took >= 10 ms in {len(ns)} queries; "
          f"sharebuf: {tot(len(q), int((q.timeouts > 0).sum()))} timed out in {len(sb)} queries")
    return 0


if __name__ == "__main__":
    sys.exit(main())

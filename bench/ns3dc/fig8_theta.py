#!/usr/bin/env python3
"""ABM Fig. 8's θ-PowerTCP class under ABM: the ABM authors' simulator (ns3dc) next to sharebuf, query by query.

ns3dc side: run-main.sh's Fig. 8 command line (abm-evaluation-multi: Cubic web search at 60% in queue 1,
DCTCP at 10% in queue 2, incast of 30% of the buffer from the 8 "power" servers in queue 3, nPrior 8, the
alphas file, ABM = algorithm 110 or DT = 101, FlowLaunchEndTime 13 s), stopped at 10.2 s; the fct files are kept
in results/fig8/. In that program the θ-PowerTCP servers run with no congestion control (A-X7; sharebuf's
cc = "fixed_window"). sharebuf side: the quick-scale runs of `sharebuf repro abm-fig8 --scale quick --seeds S
--out DIR` at the same Cubic load (x = workload[0].load = 2 × ns3dc's --loadCubic), found by their content
address under this checkout's code.

    python bench/ns3dc/fig8_theta.py --sharebuf-out DIR [--scheme abm|dt] [--cubic-load 0.6]       # per query
    python bench/ns3dc/fig8_theta.py --sharebuf-out DIR --cubic-load 0.1 0.3 0.5 0.6 --seeds 1 2 3 4 5

Per incast query: responses finished, how many took >= 10 ms (ns3dc's minimum RTO; sharebuf: the
`timeouts` column), the slowest response. ns3dc writes only finished flows, so a query whose responses
have not all finished when the run stopped shows fewer than 8.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from compare import pct_ns3dc, repro_run, slowdown  # noqa: E402


def ns3dc_side(path: Path, scheme: str, per_query: bool) -> tuple:
    d = pd.read_csv(path, sep=r"\s+")
    i = d[d.incast == 1]
    ns = i.groupby("flowstart").agg(finished=("fct", "size"), over_10ms=("fct", lambda x: int((x >= 10e6).sum())),
                                    slowest_ms=("fct", lambda x: x.max() / 1e6))
    if per_query:
        ns.index = (ns.index / 1e3).round(2)
        ns.index.name = "ns3dc query start (ms)"
        print(f"ns3dc {scheme}, simulated until {d.time.max():.4f} s:")
        print(ns.round(2).to_string())
    return (len(ns), int((ns.over_10ms > 0).sum()), len(i), int((i.fct >= 10e6).sum()),
            pct_ns3dc(slowdown(i.fct * 1e-9, i.flowsize), 0.99))


def sharebuf_side(run: Path, per_query: bool) -> tuple:
    f = pd.read_parquet(run / "flows.parquet")
    q = f[f.query_id >= 0]
    sb = q.groupby("query_id").agg(start_ms=("start_s", lambda x: x.min() * 1e3), finished=("finished", "sum"),
                                   timed_out=("timeouts", lambda x: int((x > 0).sum())),
                                   slowest_ms=("fct_s", lambda x: x.max() * 1e3)).sort_values("start_ms")
    if per_query:
        print(sb.round(2).to_string(index=False))
    return len(sb), int((sb.timed_out > 0).sum()), len(q), int((q.timeouts > 0).sum()), pct_ns3dc(q.slowdown_paper, 0.99)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sharebuf-out", type=Path, required=True, help="output directory of `sharebuf repro abm-fig8 --scale quick`")
    ap.add_argument("--scheme", choices=["abm", "dt"], default="abm")
    ap.add_argument("--cubic-load", type=float, nargs="+", default=[0.6],
                    help="ns3dc's --loadCubic (sharebuf's x, workload[0].load, is twice it); ns3dc runs kept: 0.6, 0.5")
    ap.add_argument("--seeds", type=int, nargs="+", default=[1], help="sharebuf seeds; one seed and one load print each query")
    ap.add_argument("--ns3dc", type=Path, default=None,
                    help="ns3dc fct file (default: results/fig8/fct-SCHEME.txt at 0.6, fct-SCHEME-LOAD%%.txt otherwise)")
    a = ap.parse_args()
    per_query = len(a.seeds) == 1 and len(a.cubic_load) == 1
    rows = []
    for load in a.cubic_load:
        tag = "" if load == 0.6 else f"-{round(load * 100)}"
        path = a.ns3dc or HERE / "results" / "fig8" / f"fct-{a.scheme}{tag}.txt"
        if path.is_file():
            rows.append((load, "ns3dc", *ns3dc_side(path, a.scheme, per_query)))
        for seed in a.seeds:
            run = repro_run(a.sharebuf_out, "abm-fig8", a.scheme.upper(), round(2 * load, 6), seed)
            if per_query:
                print(f"\nsharebuf {a.scheme}, seed {seed} (quick run, 300 ms of arrivals):")
            rows.append((load, f"sharebuf s{seed}", *sharebuf_side(run, per_query)))
    print(f"\n{a.scheme}: per Cubic load, θ-class incast queries and responses; a timeout = a response that "
          "took >= 10 ms (ns3dc, its minimum RTO) or waited out an RTO (sharebuf); p99 slowdown = "
          "fct / (80 us + size x 8 / 10 G), ns3dc's percentile")
    t = pd.DataFrame(rows, columns=["cubic_load", "side", "queries", "queries_timing_out", "responses",
                                    "responses_timing_out", "p99_slowdown"])
    print(t.round(1).to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())

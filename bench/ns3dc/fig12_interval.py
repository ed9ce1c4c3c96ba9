#!/usr/bin/env python3
"""ABM Fig. 12 at a 1000-RTT update interval: the ABM authors' simulator (ns3dc) next to sharebuf.

ns3dc side: run-interval.sh's command line (abm-evaluation, nPrior 8, the alphas file, Cubic, web search
40% + incast of 75% of the buffer), FlowLaunchEndTime 13 s as in the script, so the per-leaf queues are
the published runs' (3, 4 and 5; bench/ns3dc_priority_draws.py), stopped once every flow that started in
the first 150 ms had finished (10.164 s for ABM, 10.168 s for DT):

    run_ns3dc.sh-style command with --nPrior=8 --request=2949120 --FlowLaunchEndTime=13 --EndTime=10.45
      --algorithm=110 --alphaUpdateInterval=1000   (ABM, 1000 RTT)   /   --algorithm=101 (DT)

Its fct files are kept in results/fig12/ (only flows that finished are written, so only the flows that
started in the first W ≤ 300 ms are compared). sharebuf side: the runs of `sharebuf repro abm-fig12
--scale quick|full --seeds S --out DIR` (150 ms of arrivals, or the paper's 3 s), ABM at 1000 RTT
(x = 80000 µs) and DT, found by their content address under this checkout's code.

    python bench/ns3dc/fig12_interval.py --sharebuf-out DIR [--seeds 1 2 3] [--window-ms 50 100 150]
    python bench/ns3dc/fig12_interval.py --sharebuf-out DIR --scale full --window-ms 150 300 1000 3000

Slowdown = fct / (80 us + size x 8 / 10 Gbps) on both sides; percentiles are ns3dc's own
(sorted[int(n q) - 1]); short = non-incast flows < 100 KB; a timeout = FCT >= 10 ms (ns3dc's minimum
RTO) on the ns3dc side, the `timeouts` column on sharebuf's.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from compare import pct_ns3dc as pct, repro_run, slowdown  # noqa: E402



#: ns3dc's runs stopped at 10.40 s (ABM) and 10.44 s (DT), by when every flow that started in the
#: first 300 ms of arrivals had finished; later windows are sharebuf's only.
NS3DC_COMPLETE_MS = 300


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sharebuf-out", type=Path, required=True, help="output directory of `sharebuf repro abm-fig12 --scale quick`")
    ap.add_argument("--seeds", type=int, nargs="+", default=[1], help="sharebuf seeds (one row each)")
    ap.add_argument("--ns3dc", type=Path, default=HERE / "results" / "fig12", help="directory with fct-abm-1000.txt and fct-dt.txt")
    ap.add_argument("--window-ms", type=float, nargs="+", default=[50, 100, 150])
    ap.add_argument("--scale", choices=["quick", "full"], default="quick",
                    help="the sharebuf runs' scale: quick (150 ms of arrivals) or full (the paper's 3 s)")
    a = ap.parse_args()
    series = {"abm-1000": ("ABM, periodic", 80000), "dt": ("DT", 80)}
    sb = {(run, seed): repro_run(a.sharebuf_out, "abm-fig12", name, x, seed, scale=a.scale)
          for run, (name, x) in series.items() for seed in a.seeds}
    rows = []
    for w in a.window_ms:
        for run in ("abm-1000", "dt"):
            if w <= NS3DC_COMPLETE_MS:
                d = pd.read_csv(a.ns3dc / f"fct-{run}.txt", sep=r"\s+")
                d = d[d.flowstart < w * 1000]
                sh = d[(d.flowsize < 100_000) & (d.incast == 0)]
                sd = slowdown(sh.fct * 1e-9, sh.flowsize)
                ic = d[d.incast == 1]
                rows.append(dict(window_ms=w, side="ns3dc", run=run, short_n=len(sh), short_p999=pct(sd, .999),
                                 short_max=sd.max(), short_timeouts=int((sh.fct >= 10e6).sum()), incast_n=len(ic),
                                 incast_timeouts=int((ic.fct >= 10e6).sum())))
            for seed in a.seeds:
                f = pd.read_parquet(sb[run, seed] / "flows.parquet")
                f = f[f.start_s < w / 1000]
                sh = f[f.query_id.isna() & (f.size_bytes < 100_000)]
                ic = f[f.query_id >= 0]
                rows.append(dict(window_ms=w, side=f"sharebuf s{seed}", run=run, short_n=len(sh),
                                 short_p999=pct(sh.slowdown_paper, .999), short_max=sh.slowdown_paper.max(),
                                 short_timeouts=int((sh.timeouts > 0).sum()), incast_n=len(ic),
                                 incast_timeouts=int((ic.timeouts > 0).sum())))
    t = pd.DataFrame(rows)
    t["incast_timeout_frac"] = (t.incast_timeouts / t.incast_n).round(3)
    print(t.round(2).to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())

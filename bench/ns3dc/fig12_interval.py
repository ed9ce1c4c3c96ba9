#!/usr/bin/env python3
"""ABM Fig. 12 at a 1000-RTT update interval: the ABM authors' simulator (ns3dc) next to sharebuf.

ns3dc side: run-interval.sh's command line (abm-evaluation, nPrior 8, the alphas file, Cubic, web search
40% + incast of 75% of the buffer), FlowLaunchEndTime 13 s as in the script, so the per-leaf queues are
the published runs' (3, 4 and 5; bench/ns3dc_priority_draws.py), stopped once every flow that started in
the first 150 ms had finished (10.164 s for ABM, 10.168 s for DT):

    run_ns3dc.sh-style command with --nPrior=8 --request=2949120 --FlowLaunchEndTime=13 --EndTime=10.45
      --algorithm=110 --alphaUpdateInterval=1000   (ABM, 1000 RTT)   /   --algorithm=101 (DT)

Its fct files are kept in results/fig12/ (only flows that finished are written, so only the flows that
started in the first W ms are compared). sharebuf side: the quick-scale runs of `sharebuf repro run
abm-fig12 --scale quick` (150 ms of arrivals), found in that command's output directory.

    python bench/ns3dc/fig12_interval.py --sharebuf-out DIR [--window-ms 50 100 150]

Slowdown = fct / (80 us + size x 8 / 10 Gbps) on both sides; percentiles are ns3dc's own
(sorted[int(n q) - 1]); short = non-incast flows < 100 KB; a timeout = FCT >= 10 ms (ns3dc's minimum
RTO) on the ns3dc side, the `timeouts` column on sharebuf's.
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
from compare import pct_ns3dc as pct, slowdown  # noqa: E402



def sharebuf_runs(out: Path, arrivals_ms: float) -> dict[str, Path]:
    """The fig12 runs (quick: 150 ms of arrivals) of ABM at 1000 RTT (update_interval_us 80000) and DT, by
    their scenario, anywhere below ``out``."""
    found: dict[str, Path] = {}
    for f in glob.glob(str(out / "**" / "scenario.toml"), recursive=True):
        s = tomllib.load(open(f, "rb"))
        w = s.get("workload", [])
        if len(w) != 4 or w[0].get("priority") != 3 or s.get("arrivals_until_ms") != arrivals_ms:
            continue
        bm = s["switch"]["bm"]
        if bm["scheme"] == "abm" and bm.get("update_interval_us") == 80000:
            found["abm-1000"] = Path(f).parent
        elif bm["scheme"] == "dt":
            found["dt"] = Path(f).parent
    missing = {"abm-1000", "dt"} - set(found)
    if missing:
        sys.exit(f"--sharebuf-out {out}: no abm-fig12 quick run for {', '.join(sorted(missing))}; "
                 "run `sharebuf repro run abm-fig12 --scale quick --out DIR` first")
    return found


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sharebuf-out", type=Path, required=True, help="output directory of `sharebuf repro run abm-fig12 --scale quick`")
    ap.add_argument("--ns3dc", type=Path, default=HERE / "results" / "fig12", help="directory with fct-abm-1000.txt and fct-dt.txt")
    ap.add_argument("--window-ms", type=float, nargs="+", default=[50, 100, 150])
    ap.add_argument("--arrivals-ms", type=float, default=150,
                    help="the sharebuf runs' arrivals_until_ms (150: the quick repro; 3000: its scenarios at the paper's 3 s)")
    a = ap.parse_args()
    sb = sharebuf_runs(a.sharebuf_out, a.arrivals_ms)
    rows = []
    for w in a.window_ms:
        for run in ("abm-1000", "dt"):
            d = pd.read_csv(a.ns3dc / f"fct-{run}.txt", sep=r"\s+")
            d = d[d.flowstart < w * 1000]
            sh = d[(d.flowsize < 100_000) & (d.incast == 0)]
            sd = slowdown(sh.fct * 1e-9, sh.flowsize)
            ic = d[d.incast == 1]
            rows.append(dict(window_ms=w, side="ns3dc", run=run, short_n=len(sh), short_p999=pct(sd, .999), short_max=sd.max(),
                             short_timeouts=int((sh.fct >= 10e6).sum()), incast_n=len(ic), incast_timeouts=int((ic.fct >= 10e6).sum())))
            f = pd.read_parquet(sb[run] / "flows.parquet")
            f = f[f.start_s < w / 1000]
            sh = f[f.query_id.isna() & (f.size_bytes < 100_000)]
            ic = f[f.query_id >= 0]
            rows.append(dict(window_ms=w, side="sharebuf", run=run, short_n=len(sh), short_p999=pct(sh.slowdown_paper, .999),
                             short_max=sh.slowdown_paper.max(), short_timeouts=int((sh.timeouts > 0).sum()),
                             incast_n=len(ic), incast_timeouts=int((ic.timeouts > 0).sum())))
    t = pd.DataFrame(rows)
    t["incast_timeout_frac"] = (t.incast_timeouts / t.incast_n).round(3)
    print(t.round(2).to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())

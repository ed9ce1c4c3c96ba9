#!/usr/bin/env python3
"""Every transport on the core's standard scenario under DT (websearch 40% + incast 30% of
buffer, 2 queries/s per host): p99 slowdowns of short websearch flows and of incast flows,
long-flow throughput, leaf buffer occupancy.

    python bench/compare_transports.py [--arrivals-ms 200] [--jobs 2]

Writes bench/results/transports-dt.md and prints the table.
"""

from __future__ import annotations

import argparse
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
TRANSPORTS = ["newreno", "cubic", "dctcp", "timely", "powertcp", "theta_powertcp", "hpcc"]


def run_one(args):
    cc, arrivals_ms = args
    import numpy as np

    import sharebuf
    from sharebuf.scenario.load import load_scenario

    sc, _, _ = load_scenario("standard")
    d = sc.model_dump(exclude_none=True)
    d["transport"]["cc"] = cc
    d["arrivals_until_ms"] = arrivals_ms
    d["host"] = {"nic_ecn_k_bytes": "switch" if cc == "dctcp" else "none"}
    r = sharebuf.run(d, progress=False)
    f = r.flows
    web = f[f.workload == "websearch"]
    short = web[web.size_bytes < 100_000]
    inc = f[f.workload == "incast"]
    long_ = web[(web.size_bytes >= 1_000_000) & web.finished]
    b = r.buffer
    leaf = b[b.switch.str.startswith("leaf")]
    B = r.summary["buffer"]["per_switch"]["leaf0"]["buffer_bytes"]
    p = lambda s, q: float(np.percentile(s.dropna(), q)) if s.notna().any() else float("nan")  # noqa: E731
    return dict(cc=cc, short_p50=p(short.slowdown, 50), short_p99=p(short.slowdown, 99), incast_p99=p(inc.slowdown, 99),
                long_gbps=float((long_.size_bytes * 8 / long_.fct_s).mean() / 1e9) if len(long_) else float("nan"),
                occ_mean=100 * leaf.occupancy_bytes.mean() / B, occ_p99=100 * p(leaf.occupancy_bytes, 99) / B,
                drops=r.summary["drops_total"], unfinished=r.summary["flows"]["unfinished"], flows=len(f))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--arrivals-ms", type=float, default=200)
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args()
    with ProcessPoolExecutor(a.jobs) as ex:
        rows = list(ex.map(run_one, [(cc, a.arrivals_ms) for cc in TRANSPORTS]))
    lines = [f"Transports under DT on the standard scenario, {a.arrivals_ms:.0f} ms of arrivals ({rows[0]['flows']} flows per run)", "",
             "| transport | short-flow p50 | short-flow p99 | incast p99 | long-flow Gbps | leaf occupancy mean % | p99 % | drops | unfinished |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['cc']} | {r['short_p50']:.2f} | {r['short_p99']:.1f} | {r['incast_p99']:.1f} | {r['long_gbps']:.2f} | "
                     f"{r['occ_mean']:.1f} | {r['occ_p99']:.1f} | {r['drops']} | {r['unfinished']} |")
    text = "\n".join(lines) + "\n"
    print(text)
    (HERE / "results").mkdir(exist_ok=True)
    (HERE / "results" / "transports-dt.md").write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

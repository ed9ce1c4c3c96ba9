#!/usr/bin/env python3
"""Compare every buffer-management scheme on one shared scenario (the ABM paper's setup):
p99 slowdown of incast and of short websearch flows, long-flow throughput, buffer occupancy.

    python bench/compare_schemes.py [--cc cubic|dctcp] [--arrivals-ms 500] [--jobs 2]

Writes bench/results/schemes-<cc>.md and prints the table.
"""

from __future__ import annotations

import argparse
import sys
import time
import tomllib
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: label -> (scheme, extra [switch.bm] parameters, [switch] overrides); alpha 0.5 everywhere
#: as ABM.md §4.1. FB is shown both as configured here (two queues: ACKs and data, all data in
#: FB's low class) and in its single-queue mode, where its flow-size classifier gives the first
#: 21 KB of each flow (incast responses' heads, short flows) α_H — FB's intended deployment.
SCHEMES = {
    "cs": ("cs", {}, {}),
    "cp": ("cp", {}, {}),
    "dt": ("dt", {"alpha": 0.5}, {}),
    "fab": ("fab", {"alpha": 0.5}, {}),
    "ib": ("ib", {"alpha": 0.5}, {}),
    "ib (abm code)": ("ib", {"mode": "abm_code", "alpha": 0.5}, {}),
    "abm": ("abm", {"alpha": 0.5}, {}),
    "abm (eval preset)": ("abm", {"preset": "eval", "alpha": 0.5}, {}),
    "abm (code preset)": ("abm", {"preset": "code", "alpha": 0.5}, {}),
    "abm_approx": ("abm_approx", {"alpha": 0.5}, {}),
    "fb": ("fb", {"alpha": 0.5}, {}),
    "fb (single queue)": ("fb", {"mode": "single", "alpha_low": 0.5}, {"queues_per_port": 1}),
    "fba": ("fba", {"alpha": 0.5, "interval_us": 80}, {}),
    "cbm": ("cbm", {"alpha": 0.5}, {}),
    "bshare": ("bshare", {"alpha": 0.5}, {}),
}


def run_one(args):
    label, (scheme, params, switch), cc, arrivals_ms = args
    import numpy as np

    import sharebuf

    from importlib import resources

    sc = tomllib.loads((resources.files("sharebuf") / "scenarios" / "abm-eval.toml").read_text())
    sc["switch"].update(switch)
    sc["switch"]["bm"] = {"scheme": scheme, **params}
    sc["transport"]["cc"] = cc
    sc["arrivals_until_ms"] = arrivals_ms
    t0 = time.perf_counter()
    r = sharebuf.run(sc, progress=False)
    wall = time.perf_counter() - t0
    f = r.flows
    sd_col = "slowdown_paper" if "slowdown_paper" in f.columns else "slowdown"
    inc = f[f.workload == "incast"]
    web = f[f.workload == "websearch"]
    short = web[web.size_bytes < 100_000]
    long_ = web[(web.size_bytes >= 1_000_000) & web.finished]
    b = r.buffer
    leaf = b[b.switch.str.startswith("leaf")]
    B = r.summary["buffer"]["per_switch"]["leaf0"]["buffer_bytes"]
    p99 = lambda s: float(np.percentile(s.dropna(), 99)) if s.notna().any() else float("nan")  # noqa: E731
    return dict(
        scheme=label,
        # The papers' slowdown (base RTT + size / rate), as the published figures and the tables before it.
        incast_p99=p99(inc[sd_col]),
        short_p99=p99(short[sd_col]),
        long_gbps=float((long_.size_bytes * 8 / long_.fct_s).mean() / 1e9) if len(long_) else float("nan"),
        occ_mean=100 * leaf.occupancy_bytes.mean() / B,
        occ_p99=100 * float(np.percentile(leaf.occupancy_bytes, 99)) / B,
        drops=r.summary["drops_total"],
        unfinished=r.summary["flows"]["unfinished"],
        flows=len(f),
        wall_s=wall,
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cc", default="cubic")
    ap.add_argument("--arrivals-ms", type=float, default=500)
    ap.add_argument("--jobs", type=int, default=2)
    a = ap.parse_args()
    jobs = [(label, spec, a.cc, a.arrivals_ms) for label, spec in SCHEMES.items()]
    with ProcessPoolExecutor(a.jobs) as ex:
        rows = list(ex.map(run_one, jobs))
    dt = next(r for r in rows if r["scheme"] == "dt")
    lines = [
        f"Scheme comparison, {a.cc}, websearch 40% + incast 50% of buffer, {a.arrivals_ms:.0f} ms of arrivals "
        f"(bundled scenario abm-eval; {dt['flows']} flows per run)",
        "",
        "| scheme | incast p99 slowdown | vs DT | short-flow p99 slowdown | vs DT | long-flow Gbps | leaf occupancy mean % | p99 % | drops | unfinished | wall s |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['scheme']} | {r['incast_p99']:.1f} | {100 * (r['incast_p99'] / dt['incast_p99'] - 1):+.0f}% | {r['short_p99']:.1f} | "
            f"{100 * (r['short_p99'] / dt['short_p99'] - 1):+.0f}% | {r['long_gbps']:.2f} | {r['occ_mean']:.1f} | {r['occ_p99']:.1f} | "
            f"{r['drops']} | {r['unfinished']} | {r['wall_s']:.1f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    out = HERE / "results" / f"schemes-{a.cc}.md"
    out.parent.mkdir(exist_ok=True)
    out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

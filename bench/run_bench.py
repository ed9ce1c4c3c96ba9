#!/usr/bin/env python3
"""The sharebuf speed benchmark (not a test).

Runs the bundled `standard` scenario (ABM-paper leaf-spine: 2 leaves x 2 spines x 4 links,
32 servers per leaf, 10 Gbps, 10 us links, 9.6 KB/port/Gbps, DT alpha 0.5, DCTCP K = 65
packets, websearch 40% + incast 30% of buffer at 2/s per host, 50 ms of arrivals) with
the pure-Rust engine binary on one core, then end to end through Python, and prints
events/s, delivered data packets per wall-second, simulated seconds per wall-second and
peak memory.

    python bench/run_bench.py [--scenario standard] [--repeat 3] [--arrivals-ms 50]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scenario", default="standard")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--arrivals-ms", type=float, default=None, help="override arrivals_until_ms")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    from sharebuf.scenario.engine_spec import engine_spec_json, resolve
    from sharebuf.scenario.load import load_scenario

    sc, base, name = load_scenario(args.scenario)
    if args.arrivals_ms is not None:
        sc.arrivals_until_ms = args.arrivals_ms
    spec = resolve(sc, base)
    tmp = Path(tempfile.mkdtemp(prefix="sharebuf-bench-"))
    spec_path = tmp / "spec.json"
    spec_path.write_text(engine_spec_json(spec))

    subprocess.run(["cargo", "build", "--release", "-q", "--bin", "sharebuf-engine"], cwd=ROOT, check=True)
    exe = ROOT / "target" / "release" / "sharebuf-engine"
    runs = []
    rss_mb = 0.0
    for _ in range(args.repeat):
        out_path = tmp / "engine.json"
        with open(out_path, "w") as fh:
            proc = subprocess.Popen([str(exe), str(spec_path)], stdout=fh, stderr=subprocess.DEVNULL)
            _, status, usage = os.wait4(proc.pid, 0)  # this child's own peak memory
        if status != 0:
            raise SystemExit(f"engine failed with status {status}")
        rss_mb = max(rss_mb, usage.ru_maxrss / 1024)
        runs.append(json.loads(out_path.read_text()))
    med = {k: statistics.median(r[k] for r in runs) for k in ("events_per_s", "data_pkts_per_s", "sim_s_per_wall_s", "wall_s")}

    import sharebuf

    t0 = time.perf_counter()
    res = sharebuf.run(sc.model_dump(exclude_none=True) | {"name": name}, out=tmp / "out", progress=False)
    py_wall = time.perf_counter() - t0
    py_rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    s = res.summary
    report = {
        "scenario": name,
        "events": runs[0]["events"],
        "sim_s": runs[0]["sim_s"],
        "flows": runs[0]["flows"],
        "delivered_data_pkts": runs[0]["delivered_data_pkts"],
        "engine_wall_s_median": med["wall_s"],
        "engine_events_per_s": med["events_per_s"],
        "engine_data_pkts_per_s": med["data_pkts_per_s"],
        "engine_sim_s_per_wall_s": med["sim_s_per_wall_s"],
        "engine_peak_rss_mb": rss_mb,
        "python_end_to_end_wall_s": py_wall,
        "python_peak_rss_mb": py_rss_mb,
        "slowdown": {k: {"p50": v["p50"], "p99": v["p99"]} for k, v in s["slowdown"].items()},
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"scenario {name}: {report['flows']} flows, {report['events'] / 1e6:.2f} M events, {report['sim_s'] * 1e3:.1f} ms simulated")
    print(f"engine (Rust, one core, median of {args.repeat}): {med['wall_s']:.3f} s wall, "
          f"{med['events_per_s'] / 1e6:.2f} M events/s, {med['data_pkts_per_s'] / 1e6:.2f} M delivered data packets/s, "
          f"{med['sim_s_per_wall_s']:.3f} sim-s per wall-s, peak RSS {rss_mb:.0f} MB")
    print(f"end to end (Python: config, engine, Parquet): {py_wall:.3f} s wall, peak RSS {py_rss_mb:.0f} MB")
    for k, v in report["slowdown"].items():
        print(f"  {k}: slowdown p50 {v['p50']:.2f}  p99 {v['p99']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

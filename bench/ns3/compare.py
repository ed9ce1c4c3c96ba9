#!/usr/bin/env python3
"""sharebuf vs ns-3 (dcbench) on identical flows: speed and behaviour.

1. Generate the flow list once with sharebuf: run leafspine-dctcp.toml (Poisson websearch at
   load 0.4, inter-leaf) for --simtime seconds of arrivals and write its flows
   (flow_id,src,dst,size_bytes,start_s; start rounded to the ns, ns-3's time resolution) to
   WORK/FLOWS.csv.
2. Replay exactly those flows in sharebuf (same network, a `kind = "flows"` workload) with
   `python -m sharebuf run WORK/replay.toml`, timed as a process.
3. Replay them in ns-3: `dcbench --flows=WORK/FLOWS.csv` with flags matching the TOML, timed
   as a process (build it first with --build, or point --dcbench at a binary).
4. Print a markdown table: wall time, speedup, events/s, flows finished, drops and marks,
   slowdown and FCT percentiles per size bucket (nearest-rank, as dcbench/summarize.py), and a
   per-flow paired FCT ratio.

    python bench/ns3/compare.py --simtime 0.05 [--seed 1] [--build] [--work /tmp/sharebuf-ns3]

Build outputs and run outputs go under /tmp (never into the repository).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
TOML = HERE / "leafspine-dctcp.toml"
DCBENCH_SRC = Path(os.environ.get("DCBENCH_SRC", HERE.parents[2] / "shared" / "bench" / "ns3"))  # ../shared beside the checkout
NS3_BUILD = Path(os.environ.get("NS3_BUILD", "/tmp/ns3build"))

SMALL, LARGE = 100_000, 1_000_000  # summarize.py buckets: <100KB, 100KB-1MB, >=1MB
BUCKETS = [("<100KB", lambda s: s < SMALL), ("100KB-1MB", lambda s: SMALL <= s < LARGE),
           (">=1MB", lambda s: s >= LARGE), ("all", lambda s: True)]


# ----------------------------------------------------------------------------- helpers
def pct(xs, p):
    """Nearest-rank percentile (identical to dcbench.cc Pct and summarize.py pct)."""
    if not xs:
        return float("nan")
    xs = sorted(xs)
    k = max(1, math.ceil(p / 100.0 * len(xs)))
    return xs[min(k, len(xs)) - 1]


def toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {toml_value(x)}" for k, x in v.items()) + " }"
    raise TypeError(v)


def dump_toml(d: dict) -> str:
    """Minimal TOML writer for a scenario dict (top-level scalars, tables, one level of
    sub-tables, arrays of tables)."""
    out = [f"{k} = {toml_value(v)}" for k, v in d.items() if not isinstance(v, (dict, list)) or
           (isinstance(v, list) and not any(isinstance(x, dict) for x in v))]

    def table(name, t):
        out.append(f"\n[{name}]")
        subs = []
        for k, v in t.items():
            if isinstance(v, dict) and k != "cc_params":
                subs.append((k, v))
            else:
                out.append(f"{k} = {toml_value(v)}")
        for k, v in subs:
            table(f"{name}.{k}", v)

    for k, v in d.items():
        if isinstance(v, dict):
            table(k, v)
        elif isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
            for x in v:
                out.append(f"\n[[{k}]]")
                out.extend(f"{kk} = {toml_value(vv)}" for kk, vv in x.items())
    return "\n".join(out) + "\n"


def build_dcbench(src: Path, build: Path) -> Path:
    build.mkdir(parents=True, exist_ok=True)
    exe = build / "dcbench"
    cmd = ["g++", "-O2", "-std=c++17", "-o", str(exe), str(src / "dcbench.cc"), "-lns3-internet",
           "-lns3-traffic-control", "-lns3-point-to-point", "-lns3-network", "-lns3-core"]
    print("building:", " ".join(cmd), file=sys.stderr)
    subprocess.run(cmd, check=True)
    return exe


def ns_str(t_s: float) -> str:
    """Start time rounded to the nanosecond, printed exactly (ns-3's time resolution)."""
    ns = int(round(t_s * 1e9))
    return f"{ns // 10**9}.{ns % 10**9:09d}"


# ----------------------------------------------------------------------------- steps
def generate(base: dict, work: Path, simtime: float, seed: int) -> Path:
    import pyarrow.parquet as pq

    import sharebuf

    d = json.loads(json.dumps(base))
    d["seed"] = seed
    d["arrivals_until_ms"] = simtime * 1e3
    d["max_ms"] = simtime * 1e3 + 500.0  # dcbench cap: simtime + drain (0.5 s)
    gen = work / "gen"
    sharebuf.run(d, out=gen, quiet=True, progress=False)
    rows = pq.read_table(gen / "flows.parquet", columns=["flow_id", "src", "dst", "size_bytes", "start_s"]).to_pylist()
    rows.sort(key=lambda r: r["flow_id"])
    flows = work / "FLOWS.csv"
    with flows.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["id", "src", "dst", "size_bytes", "start_s"])
        for i, r in enumerate(rows):
            assert r["flow_id"] == i
            w.writerow([r["flow_id"], r["src"], r["dst"], r["size_bytes"], ns_str(r["start_s"])])
    return flows


def run_sharebuf(base: dict, work: Path, flows: Path, simtime: float, seed: int) -> dict:
    d = json.loads(json.dumps(base))
    d["seed"] = seed
    d["name"] = "leafspine-dctcp-replay"
    d["arrivals_until_ms"] = simtime * 1e3
    d["max_ms"] = simtime * 1e3 + 500.0
    d["workload"] = [{"kind": "flows", "name": "websearch", "file": str(flows)}]
    toml = work / "replay.toml"
    toml.write_text("# generated by bench/ns3/compare.py from leafspine-dctcp.toml\n" + dump_toml(d))
    out = work / "sharebuf"
    if out.exists():
        shutil.rmtree(out)
    cmd = [sys.executable, "-m", "sharebuf", "run", str(toml), "--out", str(out), "--quiet"]
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True)
    wall = time.perf_counter() - t0
    summary = json.loads((out / "summary.json").read_text())
    import pyarrow.parquet as pq

    fl = pq.read_table(out / "flows.parquet").to_pylist()
    fl.sort(key=lambda r: r["flow_id"])
    return dict(cmd=cmd, wall=wall, summary=summary, flows=fl)


def run_ns3(exe: Path, work: Path, flows: Path, simtime: float, seed: int, extra: list) -> dict:
    out = work / "ns3_fct.csv"
    cmd = [str(exe), "--N=16", "--nLeaf=2", "--nSpine=2", "--hostRate=10Gbps", "--fabricRate=80Gbps",
           "--delay=10us", "--load=0.4", f"--simtime={simtime}", "--drain=0.5", f"--seed={seed}", "--K=65",
           "--qlimit=1000", "--devQueue=1", "--ecmp=flow", "--hostQdisc=red", "--minRto=5ms", "--delAck=1",
           "--segSize=1448", f"--cdf={DCBENCH_SRC / 'websearch.txt'}", f"--flows={flows}", f"--out={out}"] + extra
    t0 = time.perf_counter()
    p = subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=work)
    wall = time.perf_counter() - t0
    (work / "ns3_stdout.txt").write_text(p.stdout + p.stderr)
    kv = {}
    for line in p.stdout.splitlines():
        if ": " in line:
            k, v = line.split(": ", 1)
            kv[k.strip()] = v.strip()
    rows = list(csv.DictReader(out.open()))
    return dict(cmd=cmd, wall=wall, kv=kv, flows=rows, stdout=p.stdout)


# ----------------------------------------------------------------------------- report
def first_num(s: str) -> float:
    return float(s.split()[0])


def field(s: str, key: str) -> float:
    """'... marked: 123 dropped: 4' -> field(s, 'marked') = 123."""
    toks = s.replace("(", " ").replace(")", " ").split()
    for i, t in enumerate(toks):
        if t.rstrip(":=") == key and i + 1 < len(toks):
            return float(toks[i + 1].rstrip(","))
    return float("nan")


def report(sb: dict, ns: dict, flows_csv: Path, simtime: float, seed: int) -> str:
    gen = list(csv.DictReader(flows_csv.open()))
    n = len(gen)
    assert len(sb["flows"]) == n and len(ns["flows"]) == n, (len(sb["flows"]), len(ns["flows"]), n)
    for g, a, b in zip(gen, sb["flows"], ns["flows"]):  # identical flows on both sides
        assert int(g["size_bytes"]) == a["size_bytes"] == int(b["size_bytes"])
        assert int(g["src"]) == a["src"] == int(b["src"]) and int(g["dst"]) == a["dst"] == int(b["dst"])
        assert abs(float(g["start_s"]) - a["start_s"]) < 1e-12 and abs(float(g["start_s"]) - float(b["start_s"])) < 1.5e-9

    s, kv = sb["summary"], ns["kv"]
    # per-flow records: size, fct (None if unfinished), native ideal, ns-3 ideal
    A = [dict(size=a["size_bytes"], fct=a["fct_s"], ideal=a["ideal_fct_s"], ideal_ns3=float(b["ideal_s"]))
         for a, b in zip(sb["flows"], ns["flows"])]
    B = [dict(size=int(b["size_bytes"]), fct=float(b["fct_s"]) if b["fct_s"] else None, ideal=float(b["ideal_s"]),
              ideal_ns3=float(b["ideal_s"])) for b in ns["flows"]]

    L = []
    L.append(f"### simtime {simtime} s of arrivals, seed {seed}: {n} flows "
             f"({sum(1 for g in gen if int(g['size_bytes']) < SMALL)} < 100 KB, "
             f"{sum(1 for g in gen if SMALL <= int(g['size_bytes']) < LARGE)} 100 KB-1 MB, "
             f"{sum(1 for g in gen if int(g['size_bytes']) >= LARGE)} >= 1 MB; "
             f"{sum(int(g['size_bytes']) for g in gen) / 1e6:.1f} MB)\n")
    L.append("| metric | sharebuf | ns-3 (dcbench) | ns-3 / sharebuf |")
    L.append("|---|---:|---:|---:|")

    def row(name, a, b, ratio=True, fmt="{:.3f}"):
        f = lambda v: "-" if v is None or (isinstance(v, float) and math.isnan(v)) else (fmt.format(v) if not isinstance(v, str) else v)  # noqa: E731
        r = ""
        if ratio and isinstance(a, (int, float)) and isinstance(b, (int, float)) and a:
            r = f"{b / a:.2f}x"
        L.append(f"| {name} | {f(a)} | {f(b)} | {r} |")

    ns_setup, ns_run = first_num(kv["wall_setup_s"]), first_num(kv["wall_run_s"])
    row("wall time, whole process (s)", sb["wall"], ns["wall"], fmt="{:.2f}")
    row("wall time, simulation loop (s)", s["wall_s"], ns_run, fmt="{:.3f}")
    row("events", s["events"], first_num(kv["events"]), fmt="{:,.0f}")
    row("events / wall-s (loop)", s["events_per_s"], first_num(kv["events_per_wall_s"]), fmt="{:,.0f}")
    ns_data = field(kv["pkts_delivered_to_hosts"], "data")
    ns_pkts = first_num(kv["pkts_delivered_to_hosts"])
    row("packets delivered to hosts (data)", s["packets"]["delivered_data"], ns_data, fmt="{:,.0f}")
    row("packets delivered to hosts (all)", s["packets"]["delivered"], ns_pkts, fmt="{:,.0f}")
    row("events per delivered data packet", s["events"] / max(1, s["packets"]["delivered_data"]),
        first_num(kv["events"]) / max(1, ns_data), fmt="{:.1f}")
    row("data pkts delivered / wall-s (loop)", s["packets"]["delivered_data"] / s["wall_s"], ns_data / ns_run, fmt="{:,.0f}")
    row("simulated time at end (ms)", s["sim_s"] * 1e3, first_num(kv["sim_seconds"]) * 1e3, fmt="{:.2f}")
    fin_a = sum(1 for r in A if r["fct"] is not None)
    fin_b = sum(1 for r in B if r["fct"] is not None)
    row("flows finished", f"{fin_a}/{n}", f"{fin_b}/{n}", ratio=False)
    drops_sb = sum(s["drops"].values())
    row("drops (switches; ns-3 + host NICs)", f"{drops_sb}",
        f"{field(kv['switch_qdisc_pkts'], 'dropped'):.0f} + {field(kv['host_qdisc_pkts'], 'dropped'):.0f}", ratio=False)
    row("ECN marks (sharebuf: all queues; ns-3: switch + host)", f"{s['packets']['ecn_marked']:,}",
        f"{field(kv['switch_qdisc_pkts'], 'marked'):,.0f} + {field(kv['host_qdisc_pkts'], 'marked'):,.0f}", ratio=False)
    rtx = sum(r["retransmits"] for r in sb["flows"])
    tos = sum(r["timeouts"] for r in sb["flows"])
    row("retransmitted segments / RTOs (sharebuf)", f"{rtx} / {tos}", "n/a", ratio=False)

    def metric_rows(title, fn, fmt="{:.3f}"):
        for bname, sel in BUCKETS:
            xa = [fn(r) for r in A if r["fct"] is not None and sel(r["size"])]
            xb = [fn(r) for r in B if r["fct"] is not None and sel(r["size"])]
            for p in (50, 99):
                row(f"{title} {bname} p{p} (n={len(xa)}/{len(xb)})", pct(xa, p), pct(xb, p), fmt=fmt)

    metric_rows("slowdown, own ideal,", lambda r: r["fct"] / r["ideal"])
    metric_rows("slowdown, common ideal (ns-3's),", lambda r: r["fct"] / r["ideal_ns3"])
    metric_rows("FCT ms,", lambda r: r["fct"] * 1e3, fmt="{:.4f}")
    L.append("")

    # per-flow pairing: same flow, both simulators
    L.append("Per-flow paired FCT ratio sharebuf / ns-3 (flows finished in both):\n")
    L.append("| bucket | n | p1 | p10 | p50 | p90 | p99 | within ±10% | within ±25% |")
    L.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for bname, sel in BUCKETS:
        rs = [a["fct"] / b["fct"] for a, b in zip(A, B) if a["fct"] is not None and b["fct"] is not None and sel(a["size"])]
        if not rs:
            continue
        w10 = sum(1 for x in rs if abs(x - 1) <= 0.10) / len(rs)
        w25 = sum(1 for x in rs if abs(x - 1) <= 0.25) / len(rs)
        L.append(f"| {bname} | {len(rs)} | " + " | ".join(f"{pct(rs, p):.3f}" for p in (1, 10, 50, 90, 99))
                 + f" | {w10:.0%} | {w25:.0%} |")
    L.append("")
    L.append(f"ns-3 setup (topology build) wall: {ns_setup:.3f} s; ns-3 {kv.get('ns3_version', '?')}; "
             f"ns-3 base RTT {kv.get('base_rtt_us', '?')} us; switch queue length at mark: {kv.get('switch_queue_len_at_mark', '?')}")
    return "\n".join(L)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--simtime", type=float, default=0.05, help="seconds of flow arrivals (dcbench --simtime)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--work", default="/tmp/sharebuf-ns3", help="scratch directory (per simtime/seed subdir)")
    ap.add_argument("--dcbench", default=str(NS3_BUILD / "dcbench"), help="dcbench binary")
    ap.add_argument("--build", action="store_true", help=f"(re)build dcbench from {DCBENCH_SRC}/dcbench.cc into {NS3_BUILD}")
    ap.add_argument("--ns3-arg", action="append", default=[], help="extra dcbench argument (repeatable)")
    ap.add_argument("--md", help="also write the markdown table to this file")
    a = ap.parse_args()

    exe = Path(a.dcbench)
    if a.build or not exe.exists():
        exe = build_dcbench(DCBENCH_SRC, NS3_BUILD)
    work = Path(a.work) / f"simtime{a.simtime:g}_seed{a.seed}"
    work.mkdir(parents=True, exist_ok=True)
    base = tomllib.loads(TOML.read_text())

    flows = generate(base, work, a.simtime, a.seed)
    print(f"flows: {flows}", file=sys.stderr)
    sb = run_sharebuf(base, work, flows, a.simtime, a.seed)
    print(f"sharebuf: {sb['wall']:.2f} s  ({' '.join(sb['cmd'])})", file=sys.stderr)
    ns = run_ns3(exe, work, flows, a.simtime, a.seed, a.ns3_arg)
    print(f"ns-3: {ns['wall']:.2f} s  ({' '.join(ns['cmd'])})", file=sys.stderr)
    md = report(sb, ns, flows, a.simtime, a.seed)
    print(md)
    if a.md:
        Path(a.md).write_text(md + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

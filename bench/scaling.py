#!/usr/bin/env python3
"""Cost curves (issue 10): wall time, CPU time, events and peak memory of the engine against
hosts (leaf-spine and fat-tree, 64 -> 1,024), load (20 -> 80%) and simulated time, the
engine's memory per flow, and paper-scale timings, so a user can predict a run.

    python bench/scaling.py [--quick] [--out bench/results]

Every point runs the pure-Rust ``sharebuf-engine`` binary (one process, one core) on a spec
resolved by ``sharebuf.scenario``; peak RSS is that process's own (``wait4``). The workload is
the ABM evaluation's (``abm-eval``): websearch Poisson flows at ``load`` of the leaf (edge)
uplinks, incast queries of 50% of the buffer, fan-in 32, 2 queries/s per host, DT alpha 0.5,
Cubic, 9.6 KB/port/Gbps; ``max_ms`` leaves time for the flows to finish. Writes
``scaling.md``, ``scaling.json`` and ``scaling.png`` into ``--out``.

On a shared machine the wall time depends on the other processes; the CPU time (user + sys)
is what one idle core would take, and is what the fits use.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: The section of scaling.md that bench/paper_scale.py writes.
PAPER_SECTION = "## Paper-scale runs"
sys.path.insert(0, str(ROOT / "bench"))
EXE = ROOT / "target" / "release" / "sharebuf-engine"

BASE = {
    "seed": 1,
    "topology": {"kind": "leaf_spine", "leaves": 2, "spines": 2, "servers_per_leaf": 32, "links_per_leaf_spine": 4,
                 "host_link_gbps": 10, "fabric_link_gbps": 10, "link_delay_us": 10},
    "switch": {"buffer_kb_per_port_per_gbps": 9.6, "queues_per_port": 2, "scheduler": "rr", "bm": {"scheme": "dt", "alpha": 0.5}},
    "transport": {"cc": "cubic", "min_rto_us": 10000, "init_cwnd_packets": 55},
    "workload": [
        {"kind": "poisson", "name": "websearch", "cdf": "websearch", "load": 0.4, "load_definition": "uplink", "priority": 1},
        {"kind": "incast", "name": "incast", "request_fraction_of_buffer": 0.5, "fan_in": 32, "queries_per_s_per_host": 2, "priority": 1},
    ],
    "output": {"buffer_sample_us": 0},
}


def leaf_spine(hosts: int, spines: int = 2, links: int = 4) -> dict:
    """32 servers per leaf, 10G everywhere (ABM: 4:1 at the leaf uplinks with 8 x 10G)."""
    return {"kind": "leaf_spine", "leaves": hosts // 32, "spines": spines, "servers_per_leaf": 32, "links_per_leaf_spine": links,
            "host_link_gbps": 10, "fabric_link_gbps": 10, "link_delay_us": 10}


def fat_tree(k: int, hpe: int | None = None) -> dict:
    return {"kind": "fat_tree", "k": k, "hosts_per_edge": hpe or k // 2, "host_link_gbps": 10, "link_delay_us": 10}


def scenario(topo: dict, load: float = 0.4, arrivals_ms: float = 10.0, drain_ms: float = 100.0, sample_us: float = 0.0) -> dict:
    sc = copy.deepcopy(BASE)
    sc["topology"] = topo
    sc["workload"][0]["load"] = load
    sc["arrivals_until_ms"] = arrivals_ms
    sc["max_ms"] = arrivals_ms + drain_ms
    sc["output"]["buffer_sample_us"] = sample_us
    if topo["kind"] == "fat_tree":
        sc["workload"][0]["destinations"] = "inter_leaf"  # as the leaf-spine runs: every flow crosses the uplinks
    return sc


def run_point(sc: dict, tmp: Path) -> dict:
    from sharebuf.scenario.engine_spec import engine_spec_json, resolve
    from sharebuf.scenario.load import load_scenario

    s, base, _ = load_scenario(sc)
    spec = resolve(s, base)
    path = tmp / "spec.json"
    path.write_text(engine_spec_json(spec))
    out = tmp / "out.json"
    t0 = time.perf_counter()
    with open(out, "w") as fh:
        proc = subprocess.Popen(["nice", str(EXE), str(path)], stdout=fh, stderr=subprocess.DEVNULL)
        _, status, ru = os.wait4(proc.pid, 0)  # nice exec()s the engine: this is its own usage
    wall = time.perf_counter() - t0
    if status != 0:
        raise SystemExit(f"engine failed ({status}) on {json.dumps(sc['topology'])}")
    r = json.loads(out.read_text())
    hosts = s.topology.n_hosts
    return {"hosts": hosts, "topology": sc["topology"]["kind"], "load": sc["workload"][0]["load"],
            "arrivals_ms": sc["arrivals_until_ms"], "sim_ms": r["sim_s"] * 1e3, "flows": r["flows"], "finished": r["finished"],
            "events": r["events"], "delivered_data_pkts": r["delivered_data_pkts"], "engine_wall_s": r["wall_s"],
            "wall_s": wall, "cpu_s": ru.ru_utime + ru.ru_stime, "peak_rss_mb": ru.ru_maxrss / 1024, "drops": r["drops"],
            "pool_pkts": r.get("pool_pkts")}


def commit() -> str:
    """The last commit that changed the engine (crates/, Cargo files), "+dirty" if they have changes."""
    sha = subprocess.run(["git", "-C", str(ROOT), "log", "-1", "--format=%h", "--", "crates", "Cargo.toml", "Cargo.lock"],
                         capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--", "crates"], capture_output=True, text=True).stdout.strip()
    return sha + ("+dirty" if dirty else "")


def machine() -> str:
    """The cores and the processor model (wall and CPU times depend on it)."""
    model = "unknown processor"
    try:
        model = next(ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines() if ln.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"{os.cpu_count()} cores, {model}"


def fit(xs, ys):
    """Least-squares line y = a + b x."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    return my - b * mx, b


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer, shorter points (a smoke test)")
    ap.add_argument("--out", default=str(ROOT / "bench" / "results"))
    ap.add_argument("--replot", action="store_true", help="rewrite scaling.md and scaling.png from --out/scaling.json; run nothing")
    ap.add_argument("--resume", action="store_true", help="reuse the points of an interrupted run (--out/scaling.partial.json)")
    ap.add_argument("--only", metavar="PREFIX", help="run only the series whose name starts with PREFIX (e.g. 'memory'); "
                    "the other series are kept from --out/scaling.json")
    args = ap.parse_args()
    if args.replot:
        out = Path(args.out)
        results = json.loads((out / "scaling.json").read_text())
        write_md(results, out / "scaling.md", quick=args.quick)
        plot(results, out / "scaling.png")
        return 0
    if not EXE.exists():
        subprocess.run(["cargo", "build", "--release", "-q", "--bin", "sharebuf-engine"], cwd=ROOT, check=True)
    q = args.quick
    ms = 2.0 if q else 10.0
    series = {
        "hosts: leaf-spine (32 per leaf, 2 spines x 4 links)": [scenario(leaf_spine(h), arrivals_ms=ms) for h in ([64, 128] if q else [64, 128, 256, 512, 1024])],
        "hosts: fat-tree (k = 6, 8, 12, 16)": [scenario(fat_tree(k), arrivals_ms=ms) for k in ([6, 8] if q else [6, 8, 12, 16])],
        "load: leaf-spine 64 hosts": [scenario(leaf_spine(64), load=l, arrivals_ms=4 * ms) for l in ([0.2, 0.8] if q else [0.2, 0.4, 0.6, 0.8])],
        "simulated time: leaf-spine 64 hosts": [scenario(leaf_spine(64), arrivals_ms=a) for a in ([5, 10] if q else [10, 20, 40, 80, 160])],
        # Memory per flow: many small flows (no incast), sampling off; RSS against the flow count.
        "memory per flow: star 16 hosts, 1 KB flows": [
            {"seed": 1, "max_ms": a + 10, "arrivals_until_ms": a, "topology": {"kind": "star", "hosts": 16},
             "switch": {"buffer_bytes": 2_000_000, "bm": {"scheme": "dt"}}, "transport": {"cc": "newreno"},
             "workload": [{"kind": "poisson", "cdf": "websearch_small.cdf", "load": 0.3, "destinations": "all_to_all"}],
             "output": {"buffer_sample_us": 0}} for a in ([20, 40] if q else [25, 50, 100, 170])],
        "paper scale: ABM text topology (8 leaves x 32, 8 spines)": [
            scenario(leaf_spine(256, spines=8, links=1), arrivals_ms=a, drain_ms=50) for a in ([2] if q else [50, 100, 200, 400])],
        "paper scale: fat-tree k = 16 (1,024 hosts), 40% load": [
            scenario(fat_tree(16), arrivals_ms=a, drain_ms=30) for a in ([0.5] if q else [2, 4, 8])],
    }
    out = Path(args.out)
    if args.only:
        old = json.loads((out / "scaling.json").read_text())
        series = {k: v for k, v in series.items() if k.startswith(args.only)}
        if not series:
            raise SystemExit(f"--only {args.only!r}: no series starts with it")
    results = {}
    out.mkdir(parents=True, exist_ok=True)
    partial = out / "scaling.partial.json"  # every finished point, so an interrupted run can resume
    done = json.loads(partial.read_text()) if args.resume and partial.exists() else {}
    with tempfile.TemporaryDirectory(prefix="sharebuf-scaling-") as d:
        tmp = Path(d)
        (tmp / "websearch_small.cdf").write_text("1000 0\n1000 1\n")
        for name, pts in series.items():
            results[name] = []
            for sc in pts:
                if "memory per flow" in name:
                    sc["workload"][0]["cdf"] = str(tmp / "websearch_small.cdf")
                key = name + json.dumps(sc, sort_keys=True).replace(str(tmp), "TMP")
                r = done.get(key) or run_point(sc, tmp)
                done[key] = r
                partial.write_text(json.dumps(done))
                results[name].append(r)
                print(f"{name}: hosts {r['hosts']} load {r['load']} arrivals {r['arrivals_ms']} ms -> {r['flows']} flows, "
                      f"{r['events'] / 1e6:.2f} M events, cpu {r['cpu_s']:.2f} s (wall {r['wall_s']:.2f} s), {r['peak_rss_mb']:.0f} MB", flush=True)
    partial.unlink()
    if args.only:
        results = {k: results.get(k, v) for k, v in old.items()} | results
    # What made the points (the header of scaling.md says it, also after a --replot).
    results["_run"] = {"date": time.strftime("%Y-%m-%d", time.gmtime()), "commit": commit(), "machine": machine(),
                       "loadavg_end": os.getloadavg()[0]}
    (out / "scaling.json").write_text(json.dumps(results, indent=1) + "\n")
    write_md(results, out / "scaling.md", quick=q)
    plot(results, out / "scaling.png")
    print(f"wrote {out / 'scaling.md'}, {out / 'scaling.png'}, {out / 'scaling.json'}")
    return 0


def write_md(results: dict, path: Path, quick: bool) -> None:
    run = results.get("_run", {})  # what made the points (date, engine commit, machine, load)
    results = {k: v for k, v in results.items() if k != "_run"}
    all_pts = [r for pts in results.values() for r in pts]
    ev = [r["events"] for r in all_pts]
    cpu = [r["cpu_s"] for r in all_pts]
    rate = sum(ev) / sum(cpu)
    mem = results["memory per flow: star 16 hosts, 1 KB flows"]
    a, bpf = fit([r["flows"] for r in mem], [r["peak_rss_mb"] * 2**20 for r in mem])
    BIG = max(mem, key=lambda r: r["flows"])
    # Offered data packets: hosts x host-link load x 10 Gbps x arrivals / (8 x 1,502 B). With
    # load_definition = "uplink", the host-link load is load x (uplink capacity / host capacity
    # under a leaf): 1/4 on these leaf-spines (2 x 4 or 8 x 1 10G uplinks for 32 hosts), 1 on a
    # full-bisection fat-tree. Incast adds 2 queries/s x 50% of the buffer per host (small).
    def host_load(r):
        return r["load"] * (1.0 if r["topology"] == "fat_tree" else 0.25)

    def offered_pkts(r):
        return r["hosts"] * host_load(r) * 10e9 * r["arrivals_ms"] * 1e-3 / (8 * 1502)

    web = [r for name, pts in results.items() if not name.startswith("memory") for r in pts]
    per_pkt = {}
    for kind in ("leaf_spine", "fat_tree"):
        pts = [r for r in web if r["topology"] == kind]
        per_pkt[kind] = sum(r["events"] for r in pts) / sum(r["delivered_data_pkts"] for r in pts)
    big = [r for r in web if r["arrivals_ms"] >= 10]
    ratio = [r["delivered_data_pkts"] / offered_pkts(r) for r in big]
    small_hosts = [r for name, pts in results.items() if name.startswith("hosts") for r in pts if r["hosts"] <= 128]
    lines = ["# Cost curves: wall time, events and memory of the engine", "",
             f"Generated by `python bench/scaling.py{' --quick' if quick else ''}` "
             f"({run.get('date', '?')}, engine `{run.get('commit', '?')}`, {run.get('machine', '?')}; "
             f"load average {run.get('loadavg_end', float('nan')):.1f} at the end). Each point is one `sharebuf-engine` process (pure Rust, one core) on a spec "
             "resolved from the scenario below; **CPU s** (user + sys) is what an idle core would take, **wall s** is what it "
             "took (more than CPU s when other jobs share the machine). Peak RSS is the engine process's own. Workload as `abm-eval`: websearch at `load` of "
             "the leaf (edge) uplinks (`load_definition = \"uplink\"`, inter-leaf destinations), incast of 50% of the buffer, "
             "fan-in 32, 2 queries/s per host, DT alpha 0.5, Cubic, 9.6 KB/port/Gbps, 10 Gbps, 10 us links; "
             "`max_ms` = arrivals + a drain (the run ends when every flow has finished). Buffer sampling off "
             "(it adds 18 B per switch per sample).", "",
             "![scaling](scaling.png)", "",
             "## Predicting a run", "",
             "1. Data packets: P = hosts x host-link load x C_host x arrivals / (8 x 1,502 B), where the host-link load is "
             "`load` x (a leaf's uplink capacity / its hosts' capacity) under `load_definition = \"uplink\"` (1/4 on the ABM "
             f"leaf-spines here, 1 on a full-bisection fat-tree). Measured delivered / predicted, runs with >= 10 ms of arrivals: "
             f"{min(ratio):.2f}-{max(ratio):.2f} (websearch's heavy tail: few flows carry most bytes, and flows still running "
             "at the end of the arrivals add their remaining bytes).",
             f"2. Events: **{per_pkt['leaf_spine']:.1f} per delivered data packet on a leaf-spine (4-link paths), "
             f"{per_pkt['fat_tree']:.1f} on a fat-tree (6-link paths)** (all points of each kind).",
             f"3. Speed: {min(r['events'] / r['cpu_s'] for r in web) / 1e6:.1f}-{max(r['events'] / r['cpu_s'] for r in web) / 1e6:.1f} M "
             f"events per CPU-second on this machine: {min(r['events'] / r['cpu_s'] for r in small_hosts) / 1e6:.0f}-"
             f"{max(r['events'] / r['cpu_s'] for r in small_hosts) / 1e6:.0f} M for {min(r['hosts'] for r in small_hosts)}-"
             f"{max(r['hosts'] for r in small_hosts)} hosts, falling with the network's size (next "
             f"section); {rate / 1e6:.1f} M over all points. CPU s ~ events / rate at the matching size.",
             f"4. Memory: **{bpf:,.0f} bytes of peak RSS per flow** (slope of RSS against the flow count, 1 KB NewReno flows, "
             f"sampling off; intercept {a / 2**20:.1f} MB) plus the route tables (per switch, one 8 B span per destination host and "
             "up to k/2 2 B candidates, kept twice, by the topology and by the switch: ~14 MB at k = 16) and, if on, 18 B per switch per buffer sample. Issue 10's target is "
             "<= 200 B per finished flow: see below.", "",
             "### Memory per flow: what dominates", "",
             "A flow holds its full state only while it runs (`transport/flows.rs`): until it starts, its generated "
             "description is one row of columns (src 4, dst 4, size 8, start 8, priority 1, workload 2, query 8, handshake "
             "1: 36 B), which become the output columns at the end; its `TcpFlow` (424 B, `size_of`, plus the boxed "
             "congestion control, 8 B for NewReno, 232 B for Cubic) is built in a reused slab slot when it starts and retired "
             "when it has finished, its sender is done, no timer is armed and no packet of it is left (found by a sweep over "
             "the packet pool once at least the pool's capacity of candidates has gathered), leaving its results in 16 B "
             "(end 8, retransmits 4, timeouts 4) and a 4 B slot index. Per flow for the whole run: 36 + 16 + 4 = 56 B, plus "
             "its start event, queued from the start in the event queue's overflow heap (24 B), plus at the end the computed "
             "output columns (ideal 8, paper ideal 8, received 8: 24 B): 104 B, as measured "
             f"({bpf:,.0f} B; issue 10's target: <= 200 B; before: ~580 B, each flow's `TcpFlow` kept from the start to the end). "
             f"The largest point, {BIG['flows']:,} flows, peaked at {BIG['peak_rss_mb']:.0f} MB of RSS ({BIG['cpu_s']:.1f} CPU s, "
             f"{BIG['wall_s']:.1f} s of wall time): 10^6 flows fit in 2 GB with room to spare. Further savings would come from starting flows "
             "from their sorted descriptors instead of queuing all start events up front (24 B), and from the "
             "Python side, which copies the output columns (a whole `sharebuf.run` writing its outputs costs ~220 B per flow "
             "between 200,000 and 800,000 flows, engine included; see `python/sharebuf/memory.py`).", ""]
    hs = [r for name, pts in results.items() if name.startswith("hosts") for r in pts]
    small, large = min(hs, key=lambda r: r["hosts"]), max(hs, key=lambda r: r["events"])
    per_window = large["events"] / (large["sim_ms"] * 1e9 / 2**18)
    lines += ["### Why a large network costs more per event", "",
              f"Events per CPU-second fall from {small['events'] / small['cpu_s'] / 1e6:.1f} M ({small['hosts']} hosts) to "
              f"{large['events'] / large['cpu_s'] / 1e6:.1f} M ({large['hosts']} hosts, {large['topology']}), and peak RSS grows "
              "with the network although the flows are few: the working set (in-flight packets, per-switch ports and route "
              "tables, the event windows) no longer fits the caches. (Measured with `perf record` on a k = 12 fat-tree with "
              "the engine before issue 10's passes: 13.5% of samples on copying the packet out of the pool, 6% on the queue "
              "reference, 5.6% on the route-table span lookup, 4% each on the dequeue path; the packet is no longer copied.) "
              "The event queue (`engine.rs`) cuts time into windows of 2^18 ps (262 ns), 8,192 of them in a ring (a 2.1 ms "
              "horizon), each bucket of 16-byte slots kept sorted as it fills; later events wait in an overflow heap. "
              f"At {large['hosts']} hosts the engine processes on average {per_window:,.0f} events per 262 ns window "
              f"({per_window * 16 / 1024:,.1f} KB, in L1), and each of the 8,193 bucket vectors keeps the capacity of the "
              f"busiest window it has held: ~8,192 x {per_window:,.0f} x 16 B = {8192 * per_window * 16 / 2**20:,.0f} MB at that "
              f"average rate, of the {large['peak_rss_mb']:.0f} MB peak. A window width adapted to the event rate, and a packet "
              "pool laid out for locality, are still open.", ""]
    for name, pts in results.items():
        lines += [f"## {name}", "", "| hosts | load | arrivals ms | sim ms | flows | finished | M events | CPU s | wall s | M events/CPU-s | peak RSS MB | drops |",
                  "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for r in pts:
            lines.append(f"| {r['hosts']} | {r['load']:.0%} | {r['arrivals_ms']:g} | {r['sim_ms']:.1f} | {r['flows']:,} | {r['finished']:,} | "
                         f"{r['events'] / 1e6:.2f} | {r['cpu_s']:.2f} | {r['wall_s']:.2f} | {r['events'] / max(r['cpu_s'], 1e-9) / 1e6:.2f} | "
                         f"{r['peak_rss_mb']:.0f} | {r['drops']:,} |")
        if name.startswith("paper scale: ABM") and len(pts) >= 2:
            c0, c1 = fit([r["arrivals_ms"] for r in pts], [r["cpu_s"] for r in pts])
            e0, e1 = fit([r["arrivals_ms"] for r in pts], [r["events"] for r in pts])
            lines += ["", f"Extrapolated linearly from the measured slope ({c1:.2f} CPU s and {e1 / 1e6:.1f} M events per ms of arrivals): "
                      f"**3 s of arrivals (the paper's) ~ {(c0 + 3000 * c1) / 60:.0f} CPU minutes, {(e0 + 3000 * e1) / 1e9:.1f} G events** "
                      f"(not measured; the per-ms cost was flat from {pts[0]['arrivals_ms']:g} to {pts[-1]['arrivals_ms']:g} ms, "
                      f"peak RSS {max(r['peak_rss_mb'] for r in pts):.0f} MB). "
                      + "".join(f"The {r['arrivals_ms']:g} ms run hit its drain limit with {r['flows'] - r['finished']} flow(s) unfinished. "
                                for r in pts if r["finished"] < r["flows"])
                      + "Measured at 3 s with the ns3dc profile: \"Paper-scale runs\" below."]
        if name.startswith("paper scale: fat-tree"):
            lines += ["", "A short horizon only: the cost per ms of arrivals grows as the fabric fills (events per CPU-second "
                      f"fall from {pts[0]['events'] / pts[0]['cpu_s'] / 1e6:.1f} M to {pts[-1]['events'] / pts[-1]['cpu_s'] / 1e6:.1f} M "
                      f"between {pts[0]['arrivals_ms']:g} and {pts[-1]['arrivals_ms']:g} ms, peak RSS from {pts[0]['peak_rss_mb']:.0f} to "
                      f"{pts[-1]['peak_rss_mb']:.0f} MB: the cache effects above), "
                      "so no linear extrapolation. Flows still running at `max_ms` (30 ms of drain) are reported unfinished."]
        lines.append("")
    # The measured paper-scale runs keep their section, which bench/paper_scale.py writes (and --replot rewrites).
    old = path.read_text() if path.exists() else ""
    lines += old[old.index(PAPER_SECTION):].split("\n") if PAPER_SECTION in old else []
    path.write_text("\n".join(lines))


def plot(results: dict, path: Path) -> None:
    results = {k: v for k, v in results.items() if k != "_run"}
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(2, 3, figsize=(15, 8))
    for name, key in (("hosts: leaf-spine", "leaf-spine"), ("hosts: fat-tree", "fat-tree")):
        pts = next(v for k, v in results.items() if k.startswith(name))
        h = [r["hosts"] for r in pts]
        ax[0, 0].plot(h, [r["cpu_s"] for r in pts], "o-", label=key)
        ax[0, 1].plot(h, [r["events"] / 1e6 for r in pts], "o-", label=key)
        ax[0, 2].plot(h, [r["peak_rss_mb"] for r in pts], "o-", label=key)
    ax[0, 0].set(xlabel="hosts", ylabel="CPU s", title="10 ms of arrivals, 40% load (of leaf uplinks)", xscale="log", yscale="log")
    ax[0, 1].set(xlabel="hosts", ylabel="M events", xscale="log", yscale="log")
    ax[0, 2].set(xlabel="hosts", ylabel="peak RSS MB", xscale="log", ylim=(0, None))
    for a in ax[0]:
        a.legend()
    for a, key, x, xlabel in ((ax[1, 0], "load", lambda r: r["load"] * 100, "load % (of leaf uplinks), 64 hosts, 40 ms of arrivals"),
                              (ax[1, 1], "simulated time", lambda r: r["arrivals_ms"], "ms of arrivals, 64 hosts, 40% load")):
        pts = next(v for k, v in results.items() if k.startswith(key))
        xs = [x(r) for r in pts]
        a.plot(xs, [r["cpu_s"] for r in pts], "o-", color="C0", label="CPU s")
        a.set(xlabel=xlabel, ylabel="CPU s", title=key)
        b = a.twinx()
        b.plot(xs, [r["events"] / 1e6 for r in pts], "s--", color="C1", label="M events")
        b.set(ylabel="M events")
        a.legend(loc="upper left")
        b.legend(loc="lower right")
    pts = next(v for k, v in results.items() if k.startswith("memory"))
    ax[1, 2].plot([r["flows"] / 1e3 for r in pts], [r["peak_rss_mb"] for r in pts], "o-")
    ax[1, 2].set(xlabel="k flows (1 KB)", ylabel="peak RSS MB", title="memory per flow")
    fig.tight_layout()
    fig.savefig(path, dpi=90)


if __name__ == "__main__":
    sys.exit(main())

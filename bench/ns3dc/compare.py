#!/usr/bin/env python3
"""Compare ns3dc (ABM authors' ns-3.39 fork) and sharebuf on the same ABM scenario.

Reads
  results/ns3dc/fct-<scheme>-s<seed>.txt      ns3dc per-flow output (fctOutFile), one per run
  results/sharebuf/<scheme>-s<seed>.parquet   sharebuf flows.parquet, one per run
  results/runs.csv                           side,scheme,seed,wall_s (optional)
and prints, per side, scheme and seed and pooled over seeds, the FCT slowdown
p50/p95/p99 and flow counts of
  incast  : incast responses
  short   : background (websearch) flows with size < 100,000 B
  long    : background flows with size >= 1,000,000 B
plus the ABM/DT ratios of incast p99 and short p99 on each side.

Slowdown is recomputed identically on both sides from each side's FCT and size:
    slowdown = fct / (80 us + size * 8 / 10 Gbps)
(80 us = 8 x 10 us link delay = the inter-leaf base RTT; size = payload bytes). This is
exactly ns3dc's `basefct` (baseRTTNano + size*8/nicBw) and sharebuf's `ideal_fct_s` for
inter-leaf flows (all flows here are inter-leaf). FCT: ns3dc = receiver app got all bytes
minus app start (websearch, handshake included) or minus query time (incast, pre-opened
connection); sharebuf = last in-order byte minus SYN time / query time. Percentiles are
numpy's linear interpolation over finished flows; unfinished flows are counted apart
(ns3dc does not report them at all).

The first table (the one in docs/validation.md) is the pooled p99 of each class for DT and
ABM on each side, the ABM/DT ratios, and each sharebuf cell's deviation from ns3dc's
(issue 15 asks for |deviation| <= 25%). Everything is written to RESULTS_DIR/table.md too.

Usage: python3 compare.py [RESULTS_DIR] [--ns3dc DIR]
  RESULTS_DIR: default ./results (sharebuf/*.parquet from run_sharebuf.py, runs.csv)
  --ns3dc DIR: ns3dc fct files (default RESULTS_DIR/ns3dc, else the team's shared copy
               ../shared/bench/ns3dc/results/ns3dc beside the repository)
Needs numpy, pandas + pyarrow.
"""
import csv
import glob
import math
import os
import re
import sys
from pathlib import Path

import numpy as np

BASE_RTT_S = 80e-6
HOST_BPS = 10e9
SHORT_MAX = 100_000      # bytes, exclusive
LONG_MIN = 1_000_000     # bytes, inclusive
CLASSES = ("incast", "short", "long")


def repro_run(out, figure, series, x, seed, scale="quick", overrides=None):
    """The run directory of series ``series`` at ``x`` and ``seed`` in ``sharebuf repro FIGURE --scale
    SCALE --out OUT`` (``overrides``: its ``--set`` values), under this checkout's code and profile:
    found by its content address, so an output directory that also holds runs of other seeds or of
    an earlier profile gives the right one. Exits naming the command that makes it."""
    import math
    from pathlib import Path

    from sharebuf.executor import run_key
    from sharebuf.repro import list_figures
    from sharebuf.repro.spec import points

    for name, xx, sd, sc in points(list_figures()[figure], scale, [seed], overrides):
        if name == series and math.isclose(float(xx), float(x)) and sd == seed:
            d = Path(out) / "runs" / f"run-{run_key(sc)}"
            if (d / "summary.json").is_file():
                return d
            sets = "".join(f" --set {k}={v}" for k, v in (overrides or {}).items())
            sys.exit(f"--sharebuf-out {out}: no run of {figure} '{series}' at x = {x}, seed {seed} under this "
                     f"checkout; make it with `sharebuf repro {figure} --scale {scale} --seeds {seed}{sets} --out {out}`")
    sys.exit(f"{figure} has no series '{series}' at x = {x} at the {scale} scale")


def slowdown(fct_s, size):
    return np.asarray(fct_s) / (BASE_RTT_S + np.asarray(size) * 8.0 / HOST_BPS)


def load_ns3dc(path):
    """-> dict class -> array of slowdowns (finished flows), plus unfinished=None."""
    rows = []
    with open(path) as f:
        header = f.readline().split()
        for line in f:
            parts = line.split()
            if len(parts) != len(header):
                continue
            rows.append([float(x) for x in parts])
    a = np.array(rows) if rows else np.zeros((0, len(header)))
    col = {h: i for i, h in enumerate(header)}
    size = a[:, col["flowsize"]]
    fct_s = a[:, col["fct"]] * 1e-9          # ns -> s
    inc = a[:, col["incast"]] > 0.5
    sd = slowdown(fct_s, size)
    return {
        "incast": sd[inc],
        "short": sd[~inc & (size < SHORT_MAX)],
        "long": sd[~inc & (size >= LONG_MIN)],
        "all_bg": sd[~inc],
    }, {"unfinished": None}


def load_sharebuf(path):
    import pandas as pd
    f = pd.read_parquet(path)
    fin = f[f["finished"]]
    inc = fin["workload"] == "incast"
    sd = slowdown(fin["fct_s"].to_numpy(), fin["size_bytes"].to_numpy())
    size = fin["size_bytes"].to_numpy()
    inc = inc.to_numpy()
    unf = f[~f["finished"]]
    return {
        "incast": sd[inc],
        "short": sd[~inc & (size < SHORT_MAX)],
        "long": sd[~inc & (size >= LONG_MIN)],
        "all_bg": sd[~inc],
    }, {"unfinished": int(len(unf)),
        "unfinished_incast": int((unf["workload"] == "incast").sum())}


def pct(x, q):
    return float(np.percentile(x, q)) if len(x) else float("nan")


def pct_ns3dc(x, q):
    """ns3dc's own percentile (its parse scripts): sorted[int(n q) - 1], q in [0, 1]."""
    x = np.sort(np.asarray(x, dtype=float))
    return float(x[max(0, int(len(x) * q) - 1)]) if len(x) else float("nan")


def discover(results, ns3dc_dir):
    runs = {}  # (side, scheme) -> {seed: path}
    for p in glob.glob(os.path.join(ns3dc_dir, "fct-*-s*.txt")):
        m = re.match(r"fct-(.+)-s(\d+)\.txt$", os.path.basename(p))
        if m:
            runs.setdefault(("ns3dc", m.group(1)), {})[int(m.group(2))] = p
    for p in glob.glob(os.path.join(results, "sharebuf", "*-s*.parquet")):
        m = re.match(r"(.+)-s(\d+)\.parquet$", os.path.basename(p))
        if m:
            runs.setdefault(("sharebuf", m.group(1)), {})[int(m.group(2))] = p
    return runs


def walls(results):
    w = {}
    p = os.path.join(results, "runs.csv")
    if os.path.exists(p):
        with open(p) as f:
            for r in csv.DictReader(f):
                w.setdefault((r["side"], r["scheme"]), {})[int(r["seed"])] = float(r["wall_s"])
    return w


def default_ns3dc_dir(results):
    own = os.path.join(results, "ns3dc")
    if glob.glob(os.path.join(own, "fct-*.txt")):
        return own
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return os.path.join(os.path.dirname(repo), "shared", "bench", "ns3dc", "results", "ns3dc")


class Tee:
    """print() to stdout and to a file."""

    def __init__(self, path):
        self.f = open(path, "w")

    def write(self, s):
        sys.__stdout__.write(s)
        self.f.write(s)

    def flush(self):
        sys.__stdout__.flush()
        self.f.flush()


def headline(runs, pooled):
    """The validation table: pooled p99 per class, DT / ABM, ABM/DT ratios, deviation from ns3dc."""
    fams = [("ns3dc", "", "ns3dc")]
    order = ["default_", "profile_", "hostfq_", "ecmp_", "devq_", "ippay_", "maxrto_"]
    found = sorted((scheme[: -len("dt")] for side, scheme in runs if side == "sharebuf" and scheme.endswith("_dt")),
                   key=lambda f: (order.index(f) if f in order else len(order), f))
    for fam in found:
        if ("sharebuf", fam + "abm_code") in pooled:
            fams.append(("sharebuf", fam, f"sharebuf {fam.rstrip('_')}"))
    ref = None
    print("| side | incast p99 DT / ABM | short p99 DT / ABM | long p99 DT / ABM | ABM/DT incast | ABM/DT short | max deviation from ns3dc |")
    print("|---|---|---|---|---|---|---|")
    for side, fam, label in fams:
        dt = pooled.get((side, fam + "dt"))
        abm = pooled.get((side, fam + ("abm" if side == "ns3dc" else "abm_code")))
        if side == "ns3dc" and fam == "" and ("ns3dc", "dt_nohystart") in pooled:
            fams.insert(1, ("ns3dc", "NOHY", "ns3dc, HyStart off (seed 1 only; not the reference)"))
        if fam == "NOHY":
            dt, abm = pooled.get(("ns3dc", "dt_nohystart")), pooled.get(("ns3dc", "abm_nohystart"))
        if dt is None or abm is None:
            continue
        cells = {}
        for c in CLASSES:
            cells[("dt", c)] = pct(dt[c], 99)
            cells[("abm", c)] = pct(abm[c], 99)
        cells[("ratio", "incast")] = cells[("abm", "incast")] / cells[("dt", "incast")]
        cells[("ratio", "short")] = cells[("abm", "short")] / cells[("dt", "short")]
        if side == "ns3dc" and fam == "":
            ref = cells
            dev = ""
        elif side == "ns3dc":
            dev = ""
        elif ref is not None:
            devs = {k: v / ref[k] - 1 for k, v in cells.items()}
            k, d = max(devs.items(), key=lambda kv: abs(kv[1]))
            within = sum(abs(x) <= 0.25 for x in devs.values())
            dev = f"{d:+.0%} ({k[0]} {k[1]}); {within}/{len(devs)} cells within 25%"
        else:
            dev = ""
        row = [label] + [f"{cells[('dt', c)]:.1f} / {cells[('abm', c)]:.1f}" for c in CLASSES]
        row += [f"{cells[('ratio', 'incast')]:.3f}", f"{cells[('ratio', 'short')]:.3f}", dev]
        print("| " + " | ".join(row) + " |")
    print()


def main():
    argv = sys.argv[1:]
    ns3dc_dir = None
    if "--ns3dc" in argv:
        i = argv.index("--ns3dc")
        ns3dc_dir = argv[i + 1]
        del argv[i:i + 2]
    args = [a for a in argv if not a.startswith("--")]
    results = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
    ns3dc_dir = ns3dc_dir or default_ns3dc_dir(results)
    runs = discover(results, ns3dc_dir)
    if not runs:
        sys.exit(f"no runs found (sharebuf: {results}/sharebuf/*.parquet, ns3dc: {ns3dc_dir}/fct-*.txt)")
    os.makedirs(results, exist_ok=True)
    sys.stdout = Tee(os.path.join(results, "table.md"))
    wall = walls(results)
    order = {"ns3dc": 0, "sharebuf": 1}
    sorder = {"dt": 0, "abm": 1, "abm_code": 2, "abm_paper": 3}

    def skey(k):
        fam = re.sub(r"(dt|abm(_code|_paper)?)$", "", k[1])
        base = k[1][len(fam):]
        return (order.get(k[0], 9), fam, sorder.get(base, 9))
    keys = sorted(runs, key=skey)
    loaded = {}
    for k in keys:
        loader = load_ns3dc if k[0] == "ns3dc" else load_sharebuf
        loaded[k] = {c: np.concatenate([loader(runs[k][s])[0][c] for s in sorted(runs[k])]) for c in CLASSES}
    print(f"Pooled p99 FCT slowdown, fct / (80 us + size x 8 / 10 Gbps), seeds {sorted(set().union(*[set(v) for v in runs.values()]))}:")
    print()
    headline(runs, loaded)

    hdr = ["side", "scheme", "seed"]
    for c in CLASSES:
        hdr += [f"{c}_n", f"{c}_p50", f"{c}_p95", f"{c}_p99"]
    hdr += ["unfin", "wall_s"]
    print("| " + " | ".join(hdr) + " |")
    print("|" + "---|" * len(hdr))
    pooled = {}
    for k in keys:
        side, scheme = k
        loader = load_ns3dc if side == "ns3dc" else load_sharebuf
        acc = {c: [] for c in CLASSES}
        unf_tot = 0
        for seed in sorted(runs[k]):
            d, meta = loader(runs[k][seed])
            row = [side, scheme, str(seed)]
            for c in CLASSES:
                x = d[c]
                acc[c].append(x)
                row += [str(len(x)), f"{pct(x, 50):.2f}", f"{pct(x, 95):.2f}", f"{pct(x, 99):.2f}"]
            u = meta["unfinished"]
            if u is not None:
                unf_tot += u
            row += ["n/a" if u is None else str(u)]
            ws = wall.get(k, {}).get(seed)
            row += ["" if ws is None else f"{ws:.1f}"]
            print("| " + " | ".join(row) + " |")
        row = [side, scheme, f"pooled({len(runs[k])})"]
        pooled[k] = {}
        for c in CLASSES:
            x = np.concatenate(acc[c]) if acc[c] else np.array([])
            pooled[k][c] = x
            row += [f"**{len(x)}**", f"**{pct(x, 50):.2f}**", f"**{pct(x, 95):.2f}**", f"**{pct(x, 99):.2f}**"]
        row += ["n/a" if side == "ns3dc" else str(unf_tot)]
        ws = list(wall.get(k, {}).values())
        row += [f"mean {np.mean(ws):.1f}" if ws else ""]
        print("| " + " | ".join(row) + " |")

    print()
    print("ABM/DT ratios (pooled p99; each ABM variant against the DT run of the same variant family):")
    print("| side | ABM variant | vs | incast p99 ABM/DT | short p99 ABM/DT | long p99 ABM/DT |")
    print("|---|---|---|---|---|---|")
    for (side, scheme) in keys:
        if "abm" not in scheme:
            continue
        dt_name = dt_of(scheme)
        dt = pooled.get((side, dt_name))
        if dt is None:
            continue
        v = pooled[(side, scheme)]
        r = [pct(v[c], 99) / pct(dt[c], 99) for c in ("incast", "short", "long")]
        print(f"| {side} | {scheme} | {dt_name} | {r[0]:.3f} | {r[1]:.3f} | {r[2]:.3f} |")

    # per-seed ratios (paired by seed), to show the spread
    print()
    print("Per-seed ABM/DT ratio of p99 (incast, short):")
    for (side, scheme) in keys:
        if "abm" not in scheme or (side, dt_of(scheme)) not in runs:
            continue
        loader = load_ns3dc if side == "ns3dc" else load_sharebuf
        dts = runs[(side, dt_of(scheme))]
        parts = []
        for seed in sorted(set(dts) & set(runs[(side, scheme)])):
            a, _ = loader(runs[(side, scheme)][seed])
            b, _ = loader(dts[seed])
            parts.append(f"s{seed}: {pct(a['incast'], 99) / pct(b['incast'], 99):.3f}, "
                         f"{pct(a['short'], 99) / pct(b['short'], 99):.3f}")
        print(f"  {side} {scheme}: " + "; ".join(parts))


def dt_of(scheme):
    """abm -> dt, replay_abm_code -> replay_dt, ecmp_abm_paper -> ecmp_dt, abm_nohystart -> dt_nohystart."""
    return re.sub(r"abm(_code|_paper)?", "dt", scheme)

if __name__ == "__main__":
    main()

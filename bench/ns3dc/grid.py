#!/usr/bin/env python3
"""The validation grid (grid.toml): ns3dc and sharebuf at each point, and the table.

  python3 grid.py plan                     the points, ns3dc command lines and what has run
  python3 grid.py ns3dc [--until HH:MM]    run ns3dc's missing runs one at a time (resumable: a
                                           run whose fct file is in results/grid/ is skipped);
                                           needs NS3=<ns-3.39 dir of a built ns3dc>
  python3 grid.py sharebuf [--variants profile,profile_ns3hash] [--points a,b]
                                           sharebuf runs replaying ns3dc's flows of every point
                                           and seed that ns3dc has run (profile_ns3hash: and each
                                           flow's ECMP choice, ns-3's hash of its 5-tuple)
  python3 grid.py seeds --point P --seeds 3-10 --variants a,b [--alg dt]
                                           sharebuf alone at seeds ns3dc has not run (its flow draws
                                           need no ns3dc run): per variant each class's p99 and
                                           timeout fraction, per seed and pooled, to tell a
                                           setting's effect from the noise of a point's two seeds
  python3 grid.py table [--variant profile_ns3hash] [--also profile] [--write-doc]
                                           the table; --write-doc puts it between the grid markers
                                           of docs/validation.md

ns3dc's output is kept as results/grid/<point>/fct-<alg>-s<seed>.txt.gz, its exact command line
as results/grid/<point>/cmd-<alg>-s<seed>.txt (the binary path relative to ns-3.39), wall times
in results/grid/ns3dc_runs.csv. sharebuf's flows.parquet go to results/sharebuf/grid/ (not in git).
The studied point (cubic-b0.5: 0.5 s of arrivals) reads the team's fct files for seeds 1-5
(compare.py's default directory); the further seeds grid.toml's [studied] names are run and kept
as a grid point's.
"""
import argparse
import csv
import gzip
import os
import shutil
import subprocess
import sys
import time
import tomllib
import zlib
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE))

import ns3dc_ecmp  # noqa: E402
import ns3dc_flows  # noqa: E402
from compare import BASE_RTT_S, CLASSES, HOST_BPS, LONG_MIN, SHORT_MAX, default_ns3dc_dir  # noqa: E402
from run_sharebuf import VARIANTS, with_keys  # noqa: E402

GRID = HERE / "results" / "grid"
SB_OUT = HERE / "results" / "sharebuf" / "grid"
TCP_PROT = {"cubic": 1, "dctcp": 2, "powertcp": 4, "timely": 6}
ALG_ID = {"dt": 101, "abm": 110}
ALPHAS = [1, 0.5, 0.5, 0.5, 0.125, 0.0625, 0.03125, 0.015625]   # examples/ABM/alphas
RTO_S = 10e-3            # min RTO of both sides: an excess over the ideal FCT of >= 10 ms = a timeout
TOL = 0.25               # relative tolerance of a p99 or a ratio
TOL_RTO_ABS = 0.005      # absolute tolerance of a timeout fraction where ns3dc's is below 2 %
BEGIN, END = "<!-- grid:begin -->", "<!-- grid:end -->"
STUDIED = "cubic-b0.5"


def buffer_bytes(kb_per_port_per_gbps: float) -> int:
    """BUFFER of the ABM scripts: int(x * 1024 * (32 + 4*2) * 10)."""
    return int(kb_per_port_per_gbps * 1024 * (32 + 4 * 2) * 10)


def points():
    g = tomllib.loads((HERE / "grid.toml").read_text())
    out = []
    for p in g["point"]:
        q = dict(g["defaults"])
        q.update(p)
        q["buffer"] = buffer_bytes(q["buffer_kb_per_port_per_gbps"])
        # run-buffer.sh computes its request once, from the 9.6 KB buffer, before its loop over
        # buffer sizes: a point says so with request_kb_per_port_per_gbps
        q["request"] = int(q["burst"] * buffer_bytes(q.get("request_kb_per_port_per_gbps",
                                                           q["buffer_kb_per_port_per_gbps"])))
        out.append(q)
    # the point studied first: run-main.sh's Cubic block at request 50 %, 0.5 s of arrivals; seeds 1-5
    # are the team's fct files, any further seed of [studied] is run here like a grid point's
    out.append({**g["defaults"], "name": STUDIED, "figure": "7", "order": 0, "burst": 0.5, "launch_s": 0.5,
                "seeds": g.get("studied", {}).get("seeds", [1, 2, 3, 4, 5]), "buffer": 3932160, "request": 1966080,
                "external": True})
    return sorted(out, key=lambda q: q["order"])


def ns3dc_argv(p, alg, seed, fct, tor):
    """ns3dc's command line (relative to ns-3.39), the scripts' flags with this point's values."""
    d = "examples/ABM"
    fend = 10 + p["launch_s"]
    return [f"./build/{d}/ns3.39-{p['binary']}-optimized", f"--load={p['load']}", "--StartTime=10",
            f"--EndTime={fend + p['drain_s']:g}", f"--FlowLaunchEndTime={fend:g}", "--serverCount=32",
            "--spineCount=2", "--leafCount=2", "--linkCount=4", "--spineLeafCapacity=10",
            "--leafServerCapacity=10", "--linkLatency=10", f"--TcpProt={TCP_PROT[p['tcp']]}",
            f"--BufferSize={p['buffer']}", "--statBuf=0", f"--algorithm={ALG_ID[alg]}", "--RedMinTh=65",
            "--RedMaxTh=65", f"--request={p['request']}", f"--queryRequestRate={p['query_rate']}",
            f"--nPrior={p['nprio']}", f"--alphasFile={d}/alphas", f"--cdfFileName={d}/websearch.txt",
            f"--alphaUpdateInterval={p['interval']}", f"--randomSeed={seed}", f"--fctOutFile={fct}",
            f"--torOutFile={tor}"]


def fct_path(p, alg, seed):
    if p.get("external"):
        f = Path(default_ns3dc_dir(str(HERE / "results"))) / f"fct-{alg}-s{seed}.txt"
        if f.exists():
            return f
    f = GRID / p["name"] / f"fct-{alg}-s{seed}.txt.gz"
    return f if f.exists() else None


def runs_of(p):
    return [(alg, seed) for seed in p["seeds"] for alg in p["algs"]]


def cmd_plan(args):
    for p in points():
        done = sum(fct_path(p, a, s) is not None for a, s in runs_of(p))
        print(f"{p['order']:3d} {p['name']:20s} fig {p['figure']:3s} {p['tcp']:8s} load {p['load']} "
              f"request {p['request']} buf {p['buffer']} nprio {p['nprio']} int {p['interval']} "
              f"launch {p['launch_s']} s: {done}/{len(runs_of(p))} ns3dc runs")
        if args.verbose and not p.get("external"):
            print("    " + " ".join(ns3dc_argv(p, "dt", 1, "fct.txt", "tor.txt")))


def cmd_ns3dc(args):
    ns3 = Path(os.environ.get("NS3") or sys.exit("set NS3 to the ns-3.39 directory of a built ns3dc"))
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    deadline = None
    if args.until:   # HH:MM UTC: today's, or tomorrow's when today's is more than 12 h past
        hh, mm = map(int, args.until.split(":"))
        now = time.time()
        deadline = now - now % 86400 + hh * 3600 + mm * 60
        deadline += 86400 if now - deadline > 12 * 3600 else 0   # (a chained call after HH:MM stops at once)
    for p in points():
        if args.points and p["name"] not in args.points.split(","):
            continue
        for alg, seed in runs_of(p):
            if fct_path(p, alg, seed) is not None:
                continue
            if deadline is not None and time.time() >= deadline:
                print(f"stopping: it is past {args.until} UTC", flush=True)
                return
            tag = f"{p['name']}-{alg}-s{seed}"
            fct, tor = work / f"fct-{tag}.txt", work / f"tor-{tag}.txt"
            argv = ns3dc_argv(p, alg, seed, fct, tor)
            print(f"{time.strftime('%H:%M:%S', time.gmtime())} ns3dc {tag}", flush=True)
            t0 = time.time()
            with open(work / f"log-{tag}.txt", "w") as log:
                rc = subprocess.call(["nice", "-n", "10"] + argv, cwd=ns3, stdout=log, stderr=subprocess.STDOUT)
            wall = time.time() - t0
            if rc != 0:
                print(f"  failed (rc {rc}) after {wall:.0f} s; see {work}/log-{tag}.txt", flush=True)
                continue
            keep(p, alg, seed, fct, wall)
            print(f"  done in {wall:.0f} s", flush=True)


def keep(p, alg, seed, fct, wall):
    """Store a finished ns3dc run: its fct file (gzip), its command line and its wall time."""
    out = GRID / p["name"]
    out.mkdir(parents=True, exist_ok=True)
    with open(fct, "rb") as fi, gzip.GzipFile(out / f"fct-{alg}-s{seed}.txt.gz", "wb", mtime=0) as fo:
        shutil.copyfileobj(fi, fo)
    rel = ns3dc_argv(p, alg, seed, f"fct-{alg}-s{seed}.txt", f"tor-{alg}-s{seed}.txt")
    (out / f"cmd-{alg}-s{seed}.txt").write_text(" ".join(rel) + "\n")
    csv_path = GRID / "ns3dc_runs.csv"
    new = not csv_path.exists()
    with csv_path.open("a", newline="") as fh:
        w = csv.writer(fh)
        if new:
            w.writerow(["point", "alg", "seed", "wall_s"])
        w.writerow([p["name"], alg, seed, f"{wall:.1f}"])


def scenario(p, alg, seed, ws_csv, inc_csv):
    """sharebuf's scenario of one ns3dc run: the ns3dc-<scheme>.toml template with the point's values."""
    tmpl = "ns3dc-dt.toml" if alg == "dt" else "ns3dc-abm_code.toml"
    d = tomllib.loads((HERE / "scenarios" / tmpl).read_text())
    d["name"] = f"{p['name']}-{alg}"
    d["seed"] = seed
    d["arrivals_until_ms"] = p["launch_s"] * 1e3
    d["max_ms"] = (p["launch_s"] + p["drain_s"]) * 1e3
    d["switch"]["buffer_bytes"] = p["buffer"]
    d["switch"]["queues_per_port"] = p["nprio"]
    d["switch"]["bm"]["alpha"] = ALPHAS[:p["nprio"]]
    if alg == "abm":
        d["switch"]["bm"]["update_interval_us"] = 80 * p["interval"]
    d["transport"]["cc"] = p["tcp"]
    for wl in d["workload"]:
        wl["file"] = ws_csv if wl["name"] == "websearch" else inc_csv
        wl.pop("priority", None)   # per row, from ns3dc's draws
    return d


def sb_path(variant, p, alg, seed):
    return SB_OUT / variant / p["name"] / f"{alg}-s{seed}.parquet"


def generator(p):
    """A point's arguments to ns3dc's flow draws (``ns3dc_flows.generate``, ``ns3dc_ecmp.connections``
    and what builds on them), after the seed and the launch window."""
    return dict(load=p["load"], request=p["request"], qrate=p["query_rate"], nprio=p["nprio"],
                per_flow_prio=p["binary"].endswith("nprio"))


def replay_csvs(p, seed, hashed=False):
    """A point's replay files for one seed (web search, incast: ``ns3dc_flows.write_csvs``), with each
    flow's ns3dc ECMP hashes when ``hashed`` (the variants with ``topology.ecmp_hash = "flow"``)."""
    flows, start = ns3dc_flows.generate(seed, p["launch_s"], **generator(p))
    replay = HERE / "scenarios" / "replay" / p["name"]
    if not hashed:
        return ns3dc_flows.write_csvs(flows, start, seed, replay)
    ports = ns3dc_ecmp.flow_ports(seed, p["launch_s"], **generator(p))
    return ns3dc_flows.write_csvs(flows, start, seed, replay, hashes=ns3dc_ecmp.flow_hashes(flows, ports))


def cmd_sharebuf(args):
    import sharebuf
    from sharebuf.config import cc_param_applies
    for p in points():
        if args.points and p["name"] not in args.points.split(","):
            continue
        for seed in p["seeds"]:
            have = [a for a in p["algs"] if fct_path(p, a, seed) is not None]
            if not have:
                continue
            ws_csv, inc_csv = replay_csvs(p, seed)
            hashed = None
            if any(VARIANTS[v][1].get("topology.ecmp_hash") == "flow" for v in args.variants.split(",")):
                hashed = replay_csvs(p, seed, hashed=True)
            for alg in have:
                for variant in args.variants.split(","):
                    prof, keys = VARIANTS[variant]
                    cc_keys = [k for k in keys if k.startswith("transport.cc_params.")]
                    other = [k for k in cc_keys if not cc_param_applies(k, p["tcp"])]
                    if (other and len(other) == len(keys)) or \
                            (variant.startswith("profile_timely") and p["tcp"] != "timely") or \
                            (variant.startswith("profile_ptcp") and p["tcp"] != "powertcp") or \
                            ("_adv" in variant and p["tcp"] not in ("timely", "powertcp")):
                        continue  # only another congestion control's parameters (with_keys drops them)
                    dest = sb_path(variant, p, alg, seed)
                    if dest.exists() and not args.force:
                        continue
                    out = HERE / "out" / "grid" / variant / p["name"] / f"{alg}-s{seed}"
                    t0 = time.time()
                    csvs = hashed if keys.get("topology.ecmp_hash") == "flow" else (ws_csv, inc_csv)
                    sharebuf.run(with_keys(scenario(p, alg, seed, *csvs), keys), profile=prof,
                                 quiet=True, out=out)
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy(out / "flows.parquet", dest)
                    print(f"{p['name']} {alg} s{seed} {variant}: {time.time() - t0:.1f} s", flush=True)


# ----------------------------------------------------------------------------- the table
def classes_ns3dc(path):
    """class -> (slowdowns, timed out) of an ns3dc fct file (plain or gzip)."""
    op = gzip.open if str(path).endswith(".gz") else open
    with op(path, "rt") as f:
        header = f.readline().split()
        a = np.array([[float(x) for x in ln.split()] for ln in f if len(ln.split()) == len(header)])
    col = {h: i for i, h in enumerate(header)}
    return split(a[:, col["fct"]] * 1e-9, a[:, col["flowsize"]], a[:, col["incast"]] > 0.5, None,
                 start=np.round(a[:, col["flowstart"]], 3) * 1e-6)


def classes_sharebuf(path):
    import pandas as pd
    f = pd.read_parquet(path)
    f = f[f["finished"]]
    return split(f["fct_s"].to_numpy(), f["size_bytes"].to_numpy(), (f["workload"] == "incast").to_numpy(),
                 f["timeouts"].to_numpy() > 0, start=f["start_s"].round(9).to_numpy())


def split(fct_s, size, inc, timed_out, start):
    """class -> (slowdowns, timed out, group), each class in order of start time. ns3dc's fct files do
    not say which flows timed out: an FCT of at least the 10 ms minimum RTO above the ideal one is a
    timeout for incast responses and short flows (no queue holds one for 10 ms: a full 3.9 MB pool
    drains in 3.1 ms), and it is exactly sharebuf's own count there; a long flow can be that late by
    sharing alone, so its timeouts are sharebuf's count only (None for ns3dc). `group` numbers the
    units the noise bootstrap resamples in order of their start: an incast response's query (the
    responses of one query share their fate), every other flow on its own. Both sides replay the same
    flows, so the i-th group of one side is the i-th of the other."""
    ideal = BASE_RTT_S + size * 8.0 / HOST_BPS
    sd, late = fct_s / ideal, fct_s - ideal >= RTO_S
    masks = {"incast": inc, "short": ~inc & (size < SHORT_MAX), "long": ~inc & (size >= LONG_MIN)}
    out = {}
    for c, m in masks.items():
        idx = np.flatnonzero(m)[np.argsort(start[m], kind="stable")]
        grp = np.unique(start[idx], return_inverse=True)[1] if c == "incast" else np.arange(len(idx))
        rto = late if c != "long" else timed_out
        out[c] = (sd[idx], None if rto is None else rto[idx], grp)
    return out


def pooled(paths, loader):
    parts = [loader(x) for x in paths]
    out = {}
    for c in CLASSES:
        grps, base = [], 0
        for q in parts:     # each run's groups numbered apart from the other runs'
            grps.append(q[c][2] + base)
            base += int(q[c][2].max()) + 1 if len(q[c][2]) else 0
        out[c] = (np.concatenate([q[c][0] for q in parts]),
                  None if any(q[c][1] is None for q in parts) else np.concatenate([q[c][1] for q in parts]),
                  np.concatenate(grps))
    return out


#: resamples of the noise bootstrap, and its generator's seed (the table is deterministic)
BOOT_N, BOOT_SEED = 400, 20261126


def picks(x, rng):
    """BOOT_N resamples (with replacement) of a class's groups: an array (BOOT_N, number of groups)."""
    ng = int(x[2].max()) + 1 if len(x[2]) else 0
    return rng.integers(0, ng, (BOOT_N, ng))


def same_groups(*xs):
    """Whether runs have the same groups of the same sizes (the same replayed flows, all finished), so
    one resample of group indices pairs them."""
    sizes = [np.bincount(x[2]) for x in xs]
    return all(len(z) == len(sizes[0]) and (z == sizes[0]).all() for z in sizes)


def boot(x, kind, pick):
    """The resampled values of a class's p99 (kind "p99") or timeout fraction ("rto"): one per row of
    `pick`, the group indices of a resample."""
    sd, rto, grp = x
    vals = sd if kind == "p99" else (None if rto is None else rto.astype(float))
    if vals is None or not len(vals):
        return None
    bounds = np.searchsorted(grp, np.arange(int(grp.max()) + 2))   # grp ascends (split)
    out = np.empty(len(pick))
    for b, pk in enumerate(pick):
        v = vals[pk] if len(bounds) - 1 == len(vals) else \
            vals[np.concatenate([np.arange(bounds[g], bounds[g + 1]) for g in pk])]
        out[b] = np.percentile(v, 99) if kind == "p99" else v.mean()
    return out


def cell_rng(p, *cell):
    """The bootstrap's generator of one cell: seeded by BOOT_SEED and the cell's own name, so a
    cell's mark does not move when points are added before it."""
    return np.random.default_rng([BOOT_SEED, zlib.crc32("/".join([p["name"], *cell]).encode())])


def boot_runs(xs, kind, rng):
    """Bootstrap values of several runs of one cell: paired (the same resample of groups for each) when
    they replay the same groups, each resampled on its own otherwise."""
    if same_groups(*xs):
        pk = picks(xs[0], rng)
        return [boot(x, kind, pk) for x in xs]
    return [boot(x, kind, picks(x, rng)) for x in xs]


def beyond_noise(ns_b, sb_b, kind, ns):
    """True when a cell outside the tolerance stays outside it over the middle 95 % of the bootstrap
    (the runs resampled together, flow for flow and query for query): sharebuf / ns3dc (a p99, a ratio, a timeout fraction) or
    sharebuf − ns3dc (a timeout fraction where ns3dc's is below 2 %)."""
    if ns_b is None or sb_b is None:
        return None
    if kind == "rto" and ns < 0.02:
        d = sb_b - ns_b
        lo, hi = np.percentile(d, [2.5, 97.5])
        return hi < -TOL_RTO_ABS or lo > TOL_RTO_ABS
    with np.errstate(divide="ignore", invalid="ignore"):
        r = sb_b / ns_b
    r = r[np.isfinite(r)]
    if not len(r):
        return None
    lo, hi = np.percentile(r, [2.5, 97.5])
    return hi < 1 - TOL or lo > 1 + TOL


def stats(x):
    sd, rto = x[:2]
    if not len(sd):
        return None
    return {"n": len(sd), "p50": float(np.percentile(sd, 50)), "p99": float(np.percentile(sd, 99)),
            "rto": None if rto is None else float(rto.mean())}


def within(ns, sb, kind):
    if ns is None or sb is None or not np.isfinite(ns) or not np.isfinite(sb):
        return None
    if kind == "rto" and ns < 0.02:
        return abs(sb - ns) <= TOL_RTO_ABS
    if ns == 0:
        return sb == 0
    return abs(sb / ns - 1) <= TOL


def mark(ok, decided=True):
    """✓ within the tolerance; ✗ outside it beyond the noise of the two runs; ≈ outside it, but within
    that noise (the bootstrap's 95 % interval reaches into the tolerance)."""
    return "" if ok is None else (" ✓" if ok else (" ✗" if decided else " ≈"))


def table(variant):
    """Markdown lines of the grid table, and (within, total) counts of the checked cells."""
    lines = ["| point | fig | class | seeds | n | p50 ns3dc / sharebuf | p99 ns3dc / sharebuf (DT) "
             "| p99 ns3dc / sharebuf (ABM) | timeouts ns3dc / sharebuf (DT) | timeouts ns3dc / sharebuf (ABM) "
             "| ABM/DT p99 ns3dc / sharebuf |",
             "|---|---|---|---|---:|---|---|---|---|---|---|"]
    ok_n = tot = noise_n = 0
    for p in points():
        seeds = [s for s in p["seeds"]
                 if all(fct_path(p, a, s) is not None and sb_path(variant, p, a, s).exists() for a in p["algs"])]
        if not seeds:
            continue
        side = {}
        for a in p["algs"]:
            side[("ns3dc", a)] = pooled([fct_path(p, a, s) for s in seeds], classes_ns3dc)
            side[("sharebuf", a)] = pooled([sb_path(variant, p, a, s) for s in seeds], classes_sharebuf)
        for c in CLASSES:
            st = {k: stats(v[c]) for k, v in side.items()}
            row = [p["name"], p["figure"], c, ",".join(map(str, seeds))]
            first = st[("ns3dc", p["algs"][0])]
            row.append(str(first["n"]) if first else "0")
            p50 = []
            for a in p["algs"]:
                n, s = st[("ns3dc", a)], st[("sharebuf", a)]
                p50.append(f"{a.upper()} {n['p50']:.2f} / {s['p50']:.2f}" if n and s else "")
            row.append("; ".join(p50))
            for kind in ("p99", "rto"):
                for a in ("dt", "abm"):
                    n, s = st.get(("ns3dc", a)), st.get(("sharebuf", a))
                    if not n or not s:
                        row.append("—")
                        continue
                    ok = within(n[kind], s[kind], kind)
                    dec = True
                    if ok is False:
                        dec = beyond_noise(*boot_runs([side[("ns3dc", a)][c], side[("sharebuf", a)][c]], kind,
                                                      cell_rng(p, c, kind, a)),
                                           kind, n[kind])
                        noise_n += not dec
                    ok_n += bool(ok)
                    tot += ok is not None
                    fmt = (lambda v: "—" if v is None else f"{v:.1f}") if kind == "p99" else \
                        (lambda v: "n/a" if v is None else f"{100 * v:.2f} %")
                    row.append(f"{fmt(n[kind])} / {fmt(s[kind])}{mark(ok, dec)}")
            if len(p["algs"]) == 2 and c != "long" and all(st[k] for k in st):
                rn = st[("ns3dc", "abm")]["p99"] / st[("ns3dc", "dt")]["p99"]
                rs = st[("sharebuf", "abm")]["p99"] / st[("sharebuf", "dt")]["p99"]
                ok = within(rn, rs, "ratio")
                dec = True
                if ok is False:
                    b = dict(zip(side, boot_runs([side[k][c] for k in side], "p99", cell_rng(p, c, "ratio"))))
                    dec = beyond_noise(b[("ns3dc", "abm")] / b[("ns3dc", "dt")],
                                       b[("sharebuf", "abm")] / b[("sharebuf", "dt")], "ratio", rn)
                    noise_n += not dec
                ok_n += bool(ok)
                tot += 1
                row.append(f"{rn:.3f} / {rs:.3f}{mark(ok, dec)}")
            else:
                row.append("—")
            lines.append("| " + " | ".join(row) + " |")
    return lines, ok_n, tot, noise_n


def traced_long(p, alg, seed):
    """ns3dc's long flows of a traced run (tcp_diag.py keep): sharebuf flow id -> waited out a
    timeout, or None where the run was not traced."""
    f = GRID / p["name"] / f"long-{alg}-s{seed}.csv.gz"
    if not f.exists():
        return None
    import pandas as pd
    d = pd.read_csv(f)
    return dict(zip(d.flow_id, d.timed_out > 0))


def traced_table(variant):
    """Markdown lines of the long flows' timeouts where ns3dc's senders were traced (its fct files
    cannot tell a long flow's timeout from its sharing), flow for flow against sharebuf's same flows,
    and (within, total, within the noise) counts."""
    import pandas as pd
    lines = ["| point | scheme | seeds traced | long flows | waited out a timeout: ns3dc / sharebuf |",
             "|---|---|---|---:|---|"]
    ok_n = tot = noise_n = 0
    for p in points():
        for a in p["algs"]:
            ns, sb, seeds = [], [], []
            for seed in p["seeds"]:
                t, f = traced_long(p, a, seed), sb_path(variant, p, a, seed)
                if t is None or not f.exists():
                    continue
                d = pd.read_parquet(f, columns=["flow_id", "timeouts"])
                mine = dict(zip(d.flow_id, d.timeouts > 0))
                ids = sorted(t)
                ns.append(np.array([t[i] for i in ids]))
                sb.append(np.array([mine[i] for i in ids]))
                seeds.append(seed)
            if not seeds:
                continue
            x = [(np.zeros(0), np.concatenate(v), np.arange(sum(map(len, v)))) for v in (ns, sb)]
            vn, vs = float(x[0][1].mean()), float(x[1][1].mean())
            ok = within(vn, vs, "rto")
            dec = True
            if ok is False:
                dec = beyond_noise(*boot_runs(x, "rto", cell_rng(p, "long", "rto", a, "traced")), "rto", vn)
                noise_n += not dec
            ok_n += bool(ok)
            tot += 1
            lines.append(f"| {p['name']} | {a.upper()} | {','.join(map(str, seeds))} | {len(x[0][1])} | "
                         f"{100 * vn:.2f} % / {100 * vs:.2f} %{mark(ok, dec)} |")
    return lines, ok_n, tot, noise_n


#: what a variant of the table's head is, in its words
VARIANT_WHAT = {
    "profile_ns3hash": " (the profile, each flow routed by ns3dc's own ECMP choice: ns-3's hash of its 5-tuple)",
    "profile": " (the profile, sharebuf's one-hash ECMP as the repro specs run it)",
}


def cmd_table(args):
    lines, ok_n, tot, noise_n = table(args.variant)
    what = VARIANT_WHAT.get(args.variant, "")
    head = (f"sharebuf `{args.variant}`{what} against ns3dc, pooled over the seeds listed: {ok_n} of {tot} checked "
            f"cells within tolerance (✓; p99s and ratios ±{TOL:.0%}; timeout fractions ±{TOL:.0%} relative, "
            f"or ±{100 * TOL_RTO_ABS:.1f} points where ns3dc's is below 2 %). Of the {tot - ok_n} outside it, "
            f"{tot - ok_n - noise_n} stay outside over the 95 % interval of a paired bootstrap of the runs (✗: "
            f"{BOOT_N} resamples of the queries of incast responses, of the flows otherwise) and {noise_n} "
            f"reach into the tolerance within it (≈: the two runs' noise covers the gap).")
    for v in filter(None, (args.also or "").split(",")):
        _l, o, t, nz = table(v)
        head += (f" With `{v}`{VARIANT_WHAT.get(v, '')} instead: {o} of {t} within tolerance, {t - o - nz} of "
                 f"those outside beyond the noise.")
    head += " Generated by `python3 bench/ns3dc/grid.py table --write-doc`."
    missing = [f"{p['name']} ({sum(fct_path(p, a, x) is None for a, x in runs_of(p))} of {len(runs_of(p))})"
               for p in points() if any(fct_path(p, a, x) is None for a, x in runs_of(p))]
    tail = [""] + ([f"ns3dc runs still missing (point, runs missing of its runs): {', '.join(missing)}."] if missing else [])
    tl, t_ok, t_tot, t_noise = traced_table(args.variant)
    if t_tot:
        tail += [f"Long flows (≥ 1 MB) that waited out a timeout where ns3dc's senders were traced "
                 f"(`tcp_diag.py keep`: a run of ns3dc again with TCP trace sources, its fct file byte-identical; a "
                 f"flow that entered `CA_LOSS`), flow for flow against sharebuf's same flows: {t_ok} of {t_tot} within "
                 f"the tolerance, {t_tot - t_ok - t_noise} outside it beyond the noise (the bootstrap resamples flows).",
                 ""] + tl + [""]
    text = "\n".join([head, ""] + lines + tail)
    if args.write_doc:
        doc = REPO / "docs" / "validation.md"
        s = doc.read_text()
        i, j = s.index(BEGIN), s.index(END)
        doc.write_text(s[:i + len(BEGIN)] + "\n" + text + "\n" + s[j:])
    print(text)
    if args.write_doc:
        print(f"wrote {doc.relative_to(REPO)}")


def cmd_seeds(args):
    """sharebuf's variants at seeds of its own (grid.py seeds, the module docstring)."""
    import sharebuf
    p = {q["name"]: q for q in points()}[args.point]
    lo, _, hi = args.seeds.partition("-")
    seeds = range(int(lo), int(hi or lo) + 1)
    variants = args.variants.split(",")
    got = {v: [] for v in variants}
    for seed in seeds:
        plain, hashed = None, None
        for v in variants:
            prof, keys = VARIANTS[v]
            if keys.get("topology.ecmp_hash") == "flow":
                hashed = hashed or replay_csvs(p, seed, hashed=True)
                csvs = hashed
            else:
                plain = plain or replay_csvs(p, seed)
                csvs = plain
            out = HERE / "out" / "seeds" / v / p["name"] / f"{args.alg}-s{seed}"
            sharebuf.run(with_keys(scenario(p, args.alg, seed, *csvs), keys), profile=prof, quiet=True, out=out)
            got[v].append(classes_sharebuf(out / "flows.parquet"))
    print(f"{p['name']} {args.alg}, sharebuf alone, seeds {args.seeds}: per class p99 slowdown and the fraction "
          f"of flows that waited out a timeout, pooled (per seed)")
    for c in CLASSES:
        for v in variants:
            per = [q[c] for q in got[v]]
            sd = np.concatenate([x[0] for x in per])
            to = np.concatenate([x[1] for x in per])
            print(f"  {c:6s} {v:28s} p99 {np.percentile(sd, 99):7.1f}  timeouts {to.mean():6.2%} "
                  f"({' '.join(f'{x[1].mean():.2%}' for x in per)})")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("plan")
    a.add_argument("-v", "--verbose", action="store_true")
    a = sub.add_parser("ns3dc")
    a.add_argument("--until", help="start no run after this UTC time (HH:MM)")
    a.add_argument("--points")
    a.add_argument("--work", default=os.environ.get("NS3DC_WORK", "ns3dc-work"))
    a = sub.add_parser("sharebuf")
    a.add_argument("--variants", default="profile,profile_ns3hash")
    a.add_argument("--points")
    a.add_argument("--force", action="store_true")
    a = sub.add_parser("seeds")
    a.add_argument("--point", required=True)
    a.add_argument("--seeds", required=True, help="a range, e.g. 3-10")
    a.add_argument("--variants", default="profile_ns3hash")
    a.add_argument("--alg", default="dt", choices=["dt", "abm"])
    a = sub.add_parser("table")
    a.add_argument("--variant", default="profile_ns3hash")
    a.add_argument("--also", default="profile", help="comma list of variants whose counts the head also gives")
    a.add_argument("--write-doc", action="store_true")
    args = ap.parse_args()
    {"plan": cmd_plan, "ns3dc": cmd_ns3dc, "sharebuf": cmd_sharebuf, "seeds": cmd_seeds, "table": cmd_table}[args.cmd](args)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Credence with a trained predictor against DT, ABM, LQD and CS on the paper's workload
(issue #25, must-show 3; docs/schemes/credence.md §5.8).

Scenario: paper-workload.toml (ns3dc's examples/Credence/run-main.sh on its "faster test case"
topology, 2 leaves x 16 servers, 4 spines, 10 Gb/s, 3 us links, B = 1,052,672 B, DCTCP,
websearch at a load of the leaves' uplinks plus 16-to-1 incasts at 2 queries/s per server),
shortened in time. Three steps:

1. LQD traces (`[switch.bm] scheme = "lqd"`, `trace = true`) at the training point (ns3dc trains
   at load 0.8 with a burst of 0.75·B; here `--train-burst`, default 1.0·B: at 0.75·B sharebuf's
   LQD drops nothing on this topology, so there is nothing to learn) on the training seeds and on
   held-out seeds, `--trace-ms` of arrivals each.
2. `sharebuf train-predictor TRAIN... --test HELDOUT... --ports 20 --queues 1` (ns3dc's forest:
   4 trees, depth 4; data queue only; N = 20, a leaf's ports), once as ns3dc (every row weighs 1:
   `model.json`, scheme `credence`) and once with `--class-weight balanced`
   (`model-balanced.json`, `credence_bal`); scores in `training.json`. Skipped when both files
   exist (unless `--retrain`).
3. The evaluation: `--bursts` x `--loads` x `--seeds` (run-main.sh block A: burst 0.5·B; 1.0·B is
   block B's largest, where LQD drops), 500 ms of arrivals each, schemes
   DT and ABM (α 64 for ACKs, 0.5 for data, as the example's `alphas`), LQD, CS and Credence
   with the model (`queues = [1]`: ns3dc's data-only rule; shadow thresholds, B/N gate).

    python bench/credence/paper_workload.py [--out DIR] [--seeds 1,2,3] [--loads 0.4,0.8] [--bursts 0.5,1.0]

Writes DIR/paper_workload.parquet (one row per run), DIR/model.json, DIR/paper_workload.md
(the table: per-class p99 slowdown median [min–max] over seeds, timeout %, drops).
"""

from __future__ import annotations

import argparse
import copy
import json
import shlex
import subprocess
import sys
import time
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
ALPHA = [64, 0.5]
SCHEMES = {
    "dt": {"scheme": "dt", "alpha": ALPHA},
    "abm": {"scheme": "abm", "alpha": ALPHA},
    "lqd": {"scheme": "lqd"},
    "cs": {"scheme": "cs"},
    "credence": {"scheme": "credence", "prediction": "model", "queues": [1]},
    "credence_bal": {"scheme": "credence", "prediction": "model", "queues": [1]},
}
#: scheme -> model file (in --out) and train-predictor --class-weight
MODELS = {"credence": ("model.json", "none"), "credence_bal": ("model-balanced.json", "balanced")}
CLASSES = ("short", "incast", "long")


def scenario(scheme_bm: dict, seed: int, load: float, burst: float, arrivals_ms: int) -> dict:
    sc = tomllib.loads((HERE / "paper-workload.toml").read_text())
    sc = copy.deepcopy(sc)
    sc["seed"] = seed
    sc["arrivals_until_ms"] = arrivals_ms
    sc["max_ms"] = arrivals_ms + 200
    sc["switch"]["bm"] = dict(scheme_bm)
    sc["workload"][0]["load"] = load
    sc["workload"][1]["request_fraction_of_buffer"] = burst
    return sc


def row(res, **k) -> dict:
    s = res.summary
    out = dict(k, drops=int(s["drops_total"]), pushout=int(s["drops"]["pushout"]),
               flows=int(s["flows"]["total"]), finished=int(s["flows"]["finished"]))
    for c in CLASSES:
        v = s["slowdown_by_class"].get(c, {})
        out[f"{c}_p99"] = float(v.get("p99", float("nan")))
        out[f"{c}_rto_pct"] = float(v.get("rto_pct", float("nan")))
        out[f"{c}_flows"] = int(v.get("flows", 0))
    st = s.get("scheme_stats") or {}
    for key in ("credence_predictions", "credence_predicted_drops", "credence_threshold_drops", "credence_gate_accepts"):
        out[key] = int(st.get(key, 0))
    return out


def table(df) -> str:
    lines = ["| burst | load | scheme | " + " | ".join(f"p99 {c}" for c in CLASSES) + " | timeouts % (short / incast / long) | drops |",
             "|---|---|---|" + "---|" * len(CLASSES) + "---|---|"]
    for burst, load in sorted(set(zip(df.burst, df.load))):
        for sch in SCHEMES:
            d = df[(df.burst == burst) & (df.load == load) & (df.scheme == sch)]
            if d.empty:
                continue
            cells = [f"{d[f'{c}_p99'].median():.1f} [{d[f'{c}_p99'].min():.1f}–{d[f'{c}_p99'].max():.1f}]" for c in CLASSES]
            rto = " / ".join(f"{d[f'{c}_rto_pct'].mean():.1f}" for c in CLASSES)
            drops = f"{d.drops.median():.0f} [{d.drops.min()}–{d.drops.max()}]"
            lines.append(f"| {burst:g}·B | {load:g} | {sch} | " + " | ".join(cells) + f" | {rto} | {drops} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="credence-paper-workload")
    ap.add_argument("--seeds", default="1,2,3", help="evaluation seeds")
    ap.add_argument("--loads", default="0.4,0.8")
    ap.add_argument("--bursts", default="0.5,1.0", help="incast requests as fractions of B (evaluation)")
    ap.add_argument("--arrivals-ms", type=int, default=500, help="arrivals per evaluation run")
    ap.add_argument("--train-seeds", default="11,12,15")
    ap.add_argument("--test-seeds", default="13,14")
    ap.add_argument("--train-load", type=float, default=0.8)
    ap.add_argument("--train-burst", type=float, default=1.0)
    ap.add_argument("--trace-ms", type=int, default=300, help="arrivals per traced LQD run")
    ap.add_argument("--skip-eval", action="store_true")
    ap.add_argument("--retrain", action="store_true", help="train again even if the model files exist")
    a = ap.parse_args(argv)
    import pandas as pd

    import sharebuf

    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    if a.retrain or not all((out / f).exists() for f, _ in MODELS.values()):
        train(a, out)
    if a.skip_eval:
        return 0
    rows = []
    for burst in [float(x) for x in a.bursts.split(",")]:
        for load in [float(x) for x in a.loads.split(",")]:
            for seed in [int(s) for s in a.seeds.split(",")]:
                for name, bm in SCHEMES.items():
                    if name in MODELS:
                        bm = dict(bm, model=str((out / MODELS[name][0]).resolve()))
                    t = time.time()
                    res = sharebuf.run(scenario(bm, seed, load, burst, a.arrivals_ms))
                    rows.append(row(res, scheme=name, load=load, seed=seed, burst=burst, wall_s=round(time.time() - t, 1)))
                    r = rows[-1]
                    print(f"burst {burst} load {load} seed {seed} {name}: drops {r['drops']}, p99 short {r['short_p99']:.1f} "
                          f"incast {r['incast_p99']:.1f} long {r['long_p99']:.1f} ({r['wall_s']} s)", flush=True)
    df = pd.DataFrame(rows)
    df.to_parquet(out / "paper_workload.parquet", index=False)
    md = table(df)
    (out / "paper_workload.md").write_text(md + "\n")
    print(md)
    print(f"{len(df)} runs, {time.time() - t0:.0f} s")
    return 0


def train(a, out: Path) -> None:
    """Steps 1 and 2: LQD traces, then `sharebuf train-predictor`."""
    import sharebuf

    tdirs = {}
    for seed in [int(s) for s in (a.train_seeds + "," + a.test_seeds).split(",")]:
        d = out / "traces" / f"lqd-s{seed}"
        if not (d / "lqd_trace.parquet").exists():
            res = sharebuf.run(scenario({"scheme": "lqd", "trace": True}, seed, a.train_load, a.train_burst, a.trace_ms), out=d)
            tr = res.lqd_trace
            print(f"trace seed {seed}: {len(tr)} rows, {int((tr.fate != 0).sum())} dropped by LQD "
                  f"({int(((tr.fate != 0) & (tr.queue == 1)).sum())} in the data queue)", flush=True)
        tdirs[seed] = d
    # 2. training, with the CLI: ns3dc's unweighted forest, and one with balanced class weights
    report = {}
    for name, (file, weight) in MODELS.items():
        cmd = [sys.executable, "-m", "sharebuf", "train-predictor",
               *[str(tdirs[int(s)]) for s in a.train_seeds.split(",")],
               *sum((["--test", str(tdirs[int(s)])] for s in a.test_seeds.split(",")), []),
               "--out", str(out / file), "--ports", "20", "--queues", "1", "--class-weight", weight]
        print("$", shlex.join(cmd), flush=True)
        subprocess.run(cmd, check=True)
        report[name] = json.loads((out / file).read_text())["training"]
    (out / "training.json").write_text(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Credence's degradation with prediction error (issue #25, must-show 2; docs/schemes/credence.md §5.7).

Credence with `prediction = "noisy"` (LQD's true fates from a traced LQD run of the same scenario
and seed, then false positives at rate `fp_rate` or false negatives at `fn_rate`), swept over the
error, against LQD (η = 1) and Complete Sharing (the fallback), on two scenarios:

- `cbr`: the model of the competitive analysis. One 8-port switch (star, 10 Gb/s, 200 kB,
  one queue per port) fed by open-loop constant-rate bursts: per seed 40 bursts at random times
  in [0, 9) ms, each of 2–3 random senders at 10 Gb/s to one random receiver for 0.1–1 ms. The
  arrivals do not depend on the switch's decisions, so the oracle is exact at every error rate
  and the throughput ratio LQD / Credence (delivered bytes) is the competitive ratio's
  quantity on this input, drawn next to the bound min(1.707·η, N), N = 8.
- `tcp`: 2 leaves × 8 servers, 2 spines, DCTCP, websearch at load 0.3 between the leaves plus
  8-to-1 incasts of 0.8·B, 300 kB per switch (tests/python/test_scheme_credence.py's scenario):
  drops and per-class p99 slowdowns. Under TCP an error changes the later arrivals; arrivals the
  LQD trace does not know are predicted "accept".

η (credence.md §1.3, `sharebuf.credence.eta`): (TN + FP) / (TN − (N−1)·FN), ∞ once
(N−1)·FN ≥ TN, positive = "LQD drops". Two values per run:
- `eta`: over every arrival of the LQD trace (the rows `sharebuf train-predictor` scores), with the
  configured rate's expected counts: FP = fp_rate·negatives, FN = fn_rate·positives;
- `eta_run`: from the run's own step-4 counts (scheme_stats: the predictions Credence consulted).
N is the port count of the largest switch (8 on the star, 10 on a leaf: 8 servers + 2 spines).
One rate is swept at a time (the other 0), so the run's counts give FP and FN exactly.

    python bench/credence/error_sweep.py [--scenario cbr,tcp] [--seeds 1,2,3,4,5] [--out DIR]

Writes DIR/error_sweep.parquet (one row per run) and DIR/error_sweep.png, prints a summary
per point (median and range over seeds). ~1 s per run.
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

LQD_RATIO = 1.707
FP_RATES = (0.0, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.8, 1.0)
FN_RATES = (0.05, 0.1, 0.2, 0.3, 0.5, 1.0)


def cbr_scenario(scheme: str, seed: int, **bm) -> dict:
    rng = np.random.default_rng(seed)
    hosts, flows = 8, []
    for _ in range(40):
        dst = int(rng.integers(hosts))
        k = int(rng.integers(2, 4))
        srcs = rng.choice([h for h in range(hosts) if h != dst], size=k, replace=False)
        t0, d = float(rng.uniform(0, 9)), float(rng.uniform(0.1, 1.0))
        flows += [{"src": int(s), "dst": dst, "rate_gbps": 10, "start_ms": round(t0, 4), "stop_ms": round(t0 + d, 4)}
                  for s in srcs]
    return {"seed": seed, "max_ms": 12,
            "topology": {"kind": "star", "hosts": hosts, "link_gbps": 10, "link_delay_us": 1},
            "switch": {"buffer_bytes": 200_000, "queues_per_port": 1, "bm": {"scheme": scheme, **bm}},
            "transport": {"cc": "newreno"}, "workload": [{"kind": "cbr", "flows": flows}]}


def tcp_scenario(scheme: str, seed: int, **bm) -> dict:
    return {
        "seed": seed, "max_ms": 60, "arrivals_until_ms": 10,
        "topology": {"kind": "leaf_spine", "leaves": 2, "spines": 2, "servers_per_leaf": 8, "links_per_leaf_spine": 1,
                     "host_link_gbps": 10, "fabric_link_gbps": 20, "link_delay_us": 2},
        "switch": {"buffer_bytes": 300_000, "queues_per_port": 1, "bm": {"scheme": scheme, **bm}},
        "transport": {"cc": "dctcp", "min_rto_us": 1000},
        "workload": [{"kind": "poisson", "cdf": "websearch", "load": 0.3, "destinations": "inter_leaf"},
                     {"kind": "incast", "request_fraction_of_buffer": 0.8, "fan_in": 8, "queries_per_s_per_host": 40}],
    }


SCENARIOS = {"cbr": (cbr_scenario, 8), "tcp": (tcp_scenario, 10)}


def eta_from_rates(neg: int, pos: int, fp_rate: float, fn_rate: float, n_ports: int) -> float:
    """η of credence.md §1.3 with the expected confusion counts of `noisy` predictions on
    `neg` packets LQD sends and `pos` it drops."""
    from sharebuf.credence import eta

    return eta(neg * (1 - fp_rate), neg * fp_rate, pos * fn_rate, n_ports)


def run_counts(summary: dict, fp_rate: float, fn_rate: float) -> dict:
    """Step-4 confusion counts of a `noisy` run with one of the two rates zero: the predictions
    consulted, the oracle's drops among them, and the predicted drops give FP (fn_rate = 0)
    or FN (fp_rate = 0) exactly."""
    st = summary["scheme_stats"]
    n, pos, pred = st["credence_predictions"], st["credence_oracle_drops_at_prediction"], st["credence_predicted_drops"]
    if fp_rate > 0 and fn_rate > 0:
        raise ValueError("one of fp_rate, fn_rate must be 0 to read FP and FN from the counters")
    fp = pred - pos if fn_rate == 0 else 0
    fn = pos - pred if fp_rate == 0 else 0
    return {"pred_n": n, "pred_pos": pos, "fp": fp, "fn": fn, "tn": n - pos - fp}


def measure(res, scenario: str) -> dict:
    s = res.summary
    out = {"drops": int(s["drops_total"])}
    if scenario == "cbr":
        out["delivered_bytes"] = int(res.cbr.delivered_bytes.sum())
        out["offered_bytes"] = int(res.cbr.sent_bytes.sum())
    else:
        for c, v in s["slowdown_by_class"].items():
            out[f"{c}_p99"] = float(v["p99"])
            out[f"{c}_rto_pct"] = float(v.get("rto_pct", 0.0))
        out["finished"] = int(s["flows"]["finished"])
        out["flows"] = int(s["flows"]["total"])
    return out


def sweep(scenario: str, seeds, fp_rates, fn_rates, work: Path, log=print):
    """All runs of one scenario; returns a list of row dicts."""
    import sharebuf
    from sharebuf.credence import eta

    make, n_ports = SCENARIOS[scenario]
    rows = []
    for seed in seeds:
        tdir = work / f"{scenario}-lqd-{seed}"
        lqd = sharebuf.run(make("lqd", seed, trace=True), out=tdir)
        tr = lqd.lqd_trace
        pos_all = int((tr.fate != 0).sum())
        neg_all = len(tr) - pos_all
        base = {"scenario": scenario, "seed": seed, "n_ports": n_ports, "trace_rows": len(tr), "trace_drops": pos_all}
        rows.append({**base, "scheme": "lqd", "error": "none", "fp_rate": 0.0, "fn_rate": 0.0, "eta": 1.0,
                     **measure(lqd, scenario)})
        cs = sharebuf.run(make("cs", seed))
        rows.append({**base, "scheme": "cs", "error": "none", "fp_rate": math.nan, "fn_rate": math.nan,
                     "eta": math.inf, **measure(cs, scenario)})
        points = [("fp", p, 0.0) for p in fp_rates] + [("fn", 0.0, q) for q in fn_rates if q > 0]
        for kind, p, q in points:
            res = sharebuf.run(make("credence", seed, prediction="noisy", fp_rate=p, fn_rate=q, oracle_trace=str(tdir)))
            c = run_counts(res.summary, p, q)
            rows.append({**base, "scheme": "credence", "error": kind, "fp_rate": p, "fn_rate": q,
                         "eta": eta_from_rates(neg_all, pos_all, p, q, n_ports),
                         "eta_run": eta(c["tn"], c["fp"], c["fn"], n_ports),
                         **c, **measure(res, scenario)})
        log(f"  {scenario} seed {seed}: {len(points) + 2} runs, LQD {pos_all} drops of {len(tr)} arrivals")
    import pandas as pd

    df = pd.DataFrame(rows)
    key = "delivered_bytes" if scenario == "cbr" else "drops"
    ref = df[df.scheme == "lqd"].set_index("seed")[key]
    if scenario == "cbr":
        df["ratio"] = df.seed.map(ref) / df[key]  # LQD / ALG: the competitive ratio's quantity
    return df


def bound(eta: float, n_ports: int) -> float:
    return min(LQD_RATIO * eta, n_ports)


def summarize(df):
    """Median, min and max over seeds per (scenario, scheme, error, rate)."""
    metrics = [c for c in ("ratio", "delivered_bytes", "drops", "incast_p99", "short_p99", "long_p99",
                           "incast_rto_pct", "eta", "eta_run") if c in df]
    g = df.assign(rate=df.fp_rate.where(df.error != "fn", df.fn_rate)).groupby(
        ["scenario", "scheme", "error", "rate"], dropna=False, sort=False)
    out = g[metrics].agg(["median", "min", "max"])
    out.columns = [f"{a}_{b}" for a, b in out.columns]
    return out.reset_index()


def figure(df, path: Path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    scen = [s for s in ("cbr", "tcp") if s in set(df.scenario)]
    fig, axes = plt.subplots(len(scen), 2, figsize=(11, 4.2 * len(scen)), squeeze=False)
    for r, sc in enumerate(scen):
        d = df[df.scenario == sc]
        n = int(d.n_ports.iloc[0])
        cr = d[d.scheme == "credence"]
        y = "ratio" if sc == "cbr" else "drops"
        ylab = "LQD / Credence delivered bytes" if sc == "cbr" else "drops"
        # left: against η; right: against the configured rate
        ax = axes[r][0]
        finite_max = max(2.0, float(cr.eta[np.isfinite(cr.eta)].max()) * 1.3)
        inf_x = finite_max * 1.4
        if sc == "cbr":
            etas = np.geomspace(1.0, inf_x, 80)
            ax.plot(etas, [bound(e, n) for e in etas], "k--", label=f"bound min(1.707·η, N={n}) on OPT / Credence")
        for kind, mk, col in (("fp", "o", "C0"), ("fn", "s", "C3")):
            # each curve starts at the oracle (both rates 0, a row of the fp sweep)
            k = cr[(cr.error == kind) | ((cr.error == "fp") & (cr.fp_rate == 0))]
            g = k.groupby(k.fp_rate if kind == "fp" else k.fn_rate)
            x = g.eta.median().replace(np.inf, inf_x)
            med, lo, hi = g[y].median(), g[y].min(), g[y].max()
            ax.errorbar(x, med, yerr=[med - lo, hi - med], marker=mk, color=col, capsize=3,
                        label=f"Credence, false {'positives' if kind == 'fp' else 'negatives'}")
        for sch, col, lab in (("lqd", "C2", "LQD (η = 1)"), ("cs", "C7", "CS (fallback)")):
            v = d[d.scheme == sch][y]
            ax.axhspan(v.min(), v.max(), color=col, alpha=0.25)
            ax.axhline(v.median(), color=col, lw=1.2, label=f"{lab}: {v.median():.3g}")
        ax.axvline(inf_x, color="0.7", lw=0.8, ls=":")
        ax.text(inf_x, ax.get_ylim()[0], " η = ∞", color="0.4", fontsize=8, va="bottom")
        ax.set_xscale("log")
        ax.set_xlabel("prediction error η (expected, over the LQD trace's arrivals)")
        ax.set_ylabel(ylab)
        ax.set_title(f"{sc}: against η (median over seeds, bars: min–max)", fontsize=10)
        ax.legend(fontsize=7)
        ax = axes[r][1]
        y2 = "ratio" if sc == "cbr" else "incast_p99"
        for kind, mk, col, rate in (("fp", "o", "C0", "fp_rate"), ("fn", "s", "C3", "fn_rate")):
            k = cr[(cr.error == kind) | ((cr.error == "fp") & (cr.fp_rate == 0))]
            g = k.groupby(k[rate])
            med, lo, hi = g[y2].median(), g[y2].min(), g[y2].max()
            ax.errorbar(med.index, med, yerr=[med - lo, hi - med], marker=mk, color=col, capsize=3,
                        label=f"{rate} (the other 0)")
        for sch, col in (("lqd", "C2"), ("cs", "C7")):
            v = d[d.scheme == sch][y2]
            ax.axhline(v.median(), color=col, lw=1.2, label=sch.upper())
        ax.set_xlabel("configured error rate")
        ax.set_ylabel(ylab if sc == "cbr" else "p99 slowdown, incast flows")
        ax.set_title(f"{sc}: against the rate", fontsize=10)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenario", default="cbr,tcp", help="comma list of cbr, tcp")
    ap.add_argument("--seeds", default="1,2,3,4,5")
    ap.add_argument("--fp", default=",".join(map(str, FP_RATES)), help="false-positive rates (fn 0)")
    ap.add_argument("--fn", default=",".join(map(str, FN_RATES)), help="false-negative rates (fp 0)")
    ap.add_argument("--out", default="credence-error-sweep", help="output directory")
    a = ap.parse_args(argv)
    import pandas as pd

    scen = a.scenario.split(",")
    for s in scen:
        if s not in SCENARIOS:
            print(f"--scenario {s}: allowed: {', '.join(SCENARIOS)}", file=sys.stderr)
            return 2
    seeds = [int(x) for x in a.seeds.split(",")]
    fp = [float(x) for x in a.fp.split(",")]
    fn = [float(x) for x in a.fn.split(",")]
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        df = pd.concat([sweep(s, seeds, fp, fn, Path(tmp)) for s in scen], ignore_index=True)
    df.to_parquet(out / "error_sweep.parquet", index=False)
    figure(df, out / "error_sweep.png")
    pd.set_option("display.width", 250, "display.max_columns", 40)
    print(summarize(df).round(4).to_string(index=False))
    print(f"{len(df)} runs in {time.time() - t0:.0f} s; wrote {out / 'error_sweep.parquet'}, {out / 'error_sweep.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

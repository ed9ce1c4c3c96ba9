#!/usr/bin/env python3
"""How does verdict stability grow with the seeds per render?

    python bench/verdict_seeds.py RUNS_DIR [RUNS_DIR ...] --seeds 1-10 [--k 1,2,3,4,5] [--pairs 3]
                                  [--figures abm-fig6,...] [--out results/verdict_seeds.md]

Re-judges every simulated figure's claims (``sharebuf repro``'s verdict: the seed-and-flow
bootstrap) on disjoint seed sets of size k drawn from runs that already exist in the RUNS_DIRs
(``sharebuf repro all --scale quick --seeds ...`` outputs; a run is found by its content address,
so nothing is simulated), and counts how often two disjoint sets of k seeds give the same verdict
(holds / fails / inconclusive). For each k it uses ``--pairs`` pairs of disjoint sets (rotations of
the seed list), so every count is an average over pairs.

The point of it: a calibrated interval flips between decisive and inconclusive for claims within
about one noise width of their bound; if claims lie evenly near their bounds, the share that flips
falls as 1/√k. The measured curve says whether it does, and how many seeds per render a given
stability would take. Figures whose runs are not all present for the seeds are left out (listed).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python"))


def _seeds(text: str):
    out = []
    for part in text.split(","):
        a, _, b = part.partition("-")
        out += list(range(int(a), int(b) + 1)) if b else [int(a)]
    return out


def _find(dirs, key):
    for d in dirs:
        rd = d / f"run-{key}"
        if (rd / "summary.json").is_file():
            return rd
    return None


def pairs_of(seeds, k, n):
    """n pairs of disjoint k-seed sets: the seed list rotated by 2 per pair, first k vs next k."""
    out = []
    for r in range(n):
        rot = seeds[(2 * r) % len(seeds):] + seeds[:(2 * r) % len(seeds)]
        pair = (tuple(sorted(rot[:k])), tuple(sorted(rot[k:2 * k])))
        if pair not in out:
            out.append(pair)
    return out


def figure_verdicts(spec, dirs, scale, seeds, sets):
    """{seed set: {claim id: verdict}} for one figure, every set judged on runs loaded once."""
    from sharebuf.executor import run_key
    from sharebuf.repro import _by_point, _metric, point_rows
    from sharebuf.repro.spec import points
    from sharebuf.repro.verdict import judge

    planned, missing = [], 0
    for series, x, seed, sc in points(spec, scale, seeds, {}):
        key = run_key(sc)
        rd = _find(dirs, key)
        if rd is None:
            missing += 1
            continue
        planned.append((series, x, seed, sc, key, rd))
    if missing:
        return None, missing
    keep: dict = {}
    wanted = [p.metric for p in spec.panels]
    rows = []
    for series, x, seed, sc, key, rd in planned:   # each run from the directory that has it
        rows += point_rows(spec, scale, [(series, x, seed, sc, key)], rd.parent, wanted, keep=keep)
    out = {}
    for S in sets:
        sub = [r for r in rows if int(r["seed"]) in S]
        res = {}
        for c in spec.claims:
            metric = _metric(spec, c)
            res[c.id] = judge(c, _by_point(sub, keep, metric), metric, key=f"{spec.id}|{c.id}")["verdict"]
        out[S] = res
    return out, 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dirs", nargs="+", type=Path, help="repro output directories (their runs/ are searched)")
    ap.add_argument("--seeds", default="1-10")
    ap.add_argument("--k", default="1,2,3,4,5")
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--scale", default="quick")
    ap.add_argument("--figures", default="", help="comma list (default: every simulated figure)")
    ap.add_argument("--out", type=Path)
    a = ap.parse_args(argv)
    from sharebuf.repro import list_figures

    dirs = [d / "runs" for d in a.dirs]
    seeds = _seeds(a.seeds)
    ks = [int(k) for k in a.k.split(",")]
    plan = {k: pairs_of(seeds, k, a.pairs) for k in ks}
    sets = sorted({S for ps in plan.values() for p in ps for S in p})
    chosen = [s for s in list_figures().values() if not a.figures or s.id in a.figures.split(",")]
    specs = [s for s in chosen if s.simulated]
    # a deterministic figure's claims (fluid models, closed forms) do not depend on seeds
    fixed = sum(len(s.claims) for s in chosen if not s.simulated)
    verdicts, skipped = {}, []
    for s in specs:
        t0 = time.perf_counter()
        v, missing = figure_verdicts(s, dirs, a.scale, seeds, sets)
        if v is None:
            skipped.append(f"{s.id} ({missing} runs missing)")
            print(f"{s.id}: {missing} runs missing, left out", flush=True)
            continue
        verdicts[s.id] = v
        print(f"{s.id}: {len(s.claims)} claims, {len(sets)} seed sets in {time.perf_counter() - t0:.0f} s", flush=True)
    lines = [f"# Verdict stability against seeds per render ({a.scale} scale, seeds {a.seeds})", "",
             f"`python bench/verdict_seeds.py DIRS --seeds {a.seeds} --k {a.k} --pairs {a.pairs}`: every simulated "
             f"figure's claims re-judged on disjoint seed sets of size k (nothing re-simulated); same verdict = "
             f"holds / fails / inconclusive agree between the two sets of a pair.", "",
             f"Seed-dependent claims (those of the simulated figures) are counted below; the {fixed} claims of the "
             "deterministic figures get the same verdict in any two renders and are added in the last column.", "",
             "| seeds per render | pairs | seed-dependent claims | same verdict (mean over pairs) | per pair | decisive (mean) | same verdict, all claims |",
             "|---:|---:|---:|---|---|---|---|"]
    curve = []
    for k in ks:
        same, dec, n = [], [], 0
        for A, B in plan[k]:
            s_ = d_ = n = 0
            for fid, v in verdicts.items():
                for cid, va in v[A].items():
                    vb = v[B][cid]
                    n += 1
                    s_ += va == vb
                    d_ += (va != "inconclusive") + (vb != "inconclusive")
            same.append(s_ / n)
            dec.append(d_ / (2 * n))
        m = sum(same) / len(same)
        curve.append((k, (1 - m) * n))
        lines.append(f"| {k} | {len(plan[k])} | {n} | {100 * m:.1f} % | {', '.join(f'{100 * x:.1f}' for x in same)} | "
                     f"{100 * sum(dec) / len(dec):.1f} % | {100 * (m * n + fixed) / (n + fixed):.1f} % of {n + fixed} |")
    # the differing count against k: a power law through the measured points, and 1/sqrt(k)
    # through the largest k, each extrapolated to 95 % of all claims the same
    import numpy as np

    ks, ds = np.array([c[0] for c in curve], float), np.array([c[1] for c in curve], float)
    allowed = 0.05 * (n + fixed)
    kmax, dmax = ks[-1], ds[-1]
    if len(ks) >= 2 and (ds > 0).all() and dmax > allowed:
        b = -np.polyfit(np.log(ks), np.log(ds), 1)[0]
        lines += ["", f"Differing claims per pair: " + ", ".join(f"{d:.1f} at k = {k:.0f}" for k, d in zip(ks, ds))
                  + f"; 95 % of all {n + fixed} claims the same allows {allowed:.1f}. A power law through these points "
                  f"falls as k^−{b:.2f}" + (f" and reaches it at k ≈ {kmax * (dmax / allowed) ** (1 / b):.0f} seeds per render"
                                            if b > 0 else " (not falling)")
                  + f"; the 1/√k of a shrinking interval, from k = {kmax:.0f}, at k ≈ {kmax * (dmax / allowed) ** 2:.0f}."]
    if skipped:
        lines += ["", "Left out (runs not present for every seed): " + ", ".join(skipped) + "."]
    text = "\n".join(lines) + "\n"
    print(text)
    if a.out:
        a.out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

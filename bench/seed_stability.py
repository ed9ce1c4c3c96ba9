"""Which reproduced verdicts survive another seed: re-run the figures whose claims sit near their
bound with several seeds, and tabulate each claim's verdict per seed.

    nice python bench/seed_stability.py DIR/claims.json --out seeds-out [--margin 0.15]
        [--seeds 1,2,3] [--scale quick] [--jobs 2] [--max-cpu-min 40] [--dry-run] [--md FILE]

1. Reads a claims.json written by ``sharebuf repro`` and lists the claims whose measured value lies
   within a relative ``--margin`` of the bound that decides them, on either side. The deciding
   bound is the claim's ``min`` or ``max`` (``lowest`` without ``max``: 1) that the value breaks,
   or, when it holds, the nearer one; distance = |measured − bound| / |bound| (a bound of 0, "no
   drops": near only when the value is exactly 0). Count rules (``monotone``, ``ratio_trend``,
   ``ordered``: measured = inversions) have no relative margin: they are listed when one inversion
   more or one fewer flips them (measured = the allowed count, or one above it).
2. Plans the runs of the figures holding them at ``--scale`` with ``--seeds`` (content-addressed:
   the runs of ``claims.json``'s own ``runs/`` are hard-linked into ``OUT/runs`` first, so a seed
   that already ran does not run again), prints the run count and the CPU estimate of
   :func:`sharebuf.repro.estimate_cpu_s` and, where the cache holds a figure's runs, one from
   their measured wall time; figures are dropped, most expensive first, until the estimate fits
   ``--max-cpu-min`` (the larger of the two estimates is used). The budget is per call and counts
   only runs not yet in ``OUT/runs``: a second call into the same OUT spends a new budget on the
   figures dropped before, and the table covers every figure OUT holds with these seeds.
3. Runs them (``sharebuf.repro.reproduce``, which evaluates every claim on the mean over seeds
   and on each seed alone: ``seeds_holding``, ``measured_by_seed``) and writes a markdown table:
   claim, paper value, bound, measured per seed, the mean-over-seeds verdict, seeds holding.

Run it under ``nice``: the process lowers its own priority too (``os.nice``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path

COUNT_RULES = ("monotone", "ratio_trend", "ordered")


def deciding_bound(c, measured):
    """(bound, relative distance) of claim spec ``c`` at ``measured`` (None: no value)."""
    if measured is None or (isinstance(measured, float) and math.isnan(measured)):
        return None, math.inf
    if c.rule in COUNT_RULES:
        # In inversions: 0 = at the allowed count (one more flips it), 1 = one over.
        b = float(c.inversions)
        return b, (measured - b if measured >= b else math.inf)
    lo = -math.inf if c.min is None else c.min
    hi = (1.0 if c.rule == "lowest" else math.inf) if c.max is None else c.max

    def dist(b):
        if b == 0:
            return 0.0 if measured == 0 else math.inf
        return abs(measured - b) / abs(b)

    if measured < lo:
        return lo, dist(lo)
    if measured > hi:
        return hi, dist(hi)
    finite = [b for b in (lo, hi) if math.isfinite(b)]
    if not finite:
        return None, math.inf
    b = min(finite, key=dist)
    return b, dist(b)


def near_claims(claims_json: dict, specs, margin: float):
    """[(figure id, claim result, claim spec, bound, distance)] of claims near their bound."""
    out = []
    for fid, f in claims_json.items():
        if fid not in specs or not specs[fid].simulated:
            continue  # closed forms: no seed to vary
        by_id = {c.id: c for c in specs[fid].claims}
        for r in f["claims"]:
            c = by_id.get(r["id"])
            if c is None:
                continue
            b, d = deciding_bound(c, r["measured"])
            near = d <= 1 if c.rule in COUNT_RULES else d <= margin
            if near:
                out.append((fid, r, c, b, d))
    return out


def link_cache(src_runs: Path, dst_runs: Path) -> int:
    """Hard-link every completed run of ``src_runs`` missing from ``dst_runs``; returns how many."""
    import shutil

    dst_runs.mkdir(parents=True, exist_ok=True)
    n = 0
    if not src_runs.is_dir():
        return 0
    for rd in src_runs.iterdir():
        if rd.name.startswith("run-") and (rd / "summary.json").is_file() and not (dst_runs / rd.name).exists():
            shutil.copytree(rd, dst_runs / rd.name, copy_function=os.link)
            n += 1
    return n


def plan(fids, specs, scale, seeds, runs_dir: Path):
    """Per figure (in order): its new runs (not in ``runs_dir``, not planned by an earlier figure),
    the CPU estimate of estimate_cpu_s for them and one from the measured wall time of the same
    figure's cached runs (None without any)."""
    from sharebuf.repro import estimate_cpu_s
    from sharebuf.repro.spec import points
    from sharebuf.executor import run_key

    seen = set()
    rows = []
    for fid in fids:
        s = specs[fid]
        if not s.simulated:
            rows.append(dict(figure=fid, runs=0, new=0, est_s=0.0, measured_s=0.0))
            continue
        keys = [run_key(sc) for _, _, _, sc in points(s, scale, seeds)]
        new = [k for k in dict.fromkeys(keys) if k not in seen and not (runs_dir / f"run-{k}" / "summary.json").is_file()]
        seen.update(keys)
        est = estimate_cpu_s([s], scale, seeds) * len(new) / max(1, len(keys))
        walls = [json.loads((runs_dir / f"run-{k}" / "summary.json").read_text())["wall_s"]
                 for k in dict.fromkeys(keys) if (runs_dir / f"run-{k}" / "summary.json").is_file()]
        meas = sum(walls) / len(walls) * len(new) if walls else None
        rows.append(dict(figure=fid, runs=len(set(keys)), new=len(new), est_s=est, measured_s=meas))
    return rows


def _cost(r) -> float:
    return max(r["est_s"], r["measured_s"] or 0.0)


def within_budget(rows, max_cpu_s: float):
    """(kept rows, dropped rows): drop the most expensive figure first until the rest fits."""
    kept = sorted(rows, key=_cost)
    dropped = []
    while kept and sum(_cost(r) for r in kept) > max_cpu_s:
        dropped.append(kept.pop())
    order = [r["figure"] for r in rows]
    return sorted(kept, key=lambda r: order.index(r["figure"])), dropped


def _fmt(v) -> str:
    """claims.md's number format (`report._fmt`), with "n/a" for a missing paper value."""
    from sharebuf.repro.report import _fmt as fmt

    return "n/a" if v is None else fmt(v)


def table_md(near, result_claims: dict) -> str:
    """The markdown table of the near-bound claims with their per-seed verdicts (``result_claims``:
    the re-run's claims.json)."""
    lines = ["| figure | claim | paper | bound | measured per seed | mean over seeds | verdict (mean) | seeds holding |",
             "|---|---|---|---|---|---|---|---|"]
    for fid, r0, c, b, _ in near:
        f = result_claims.get(fid)
        r = next((x for x in (f or {}).get("claims", []) if x["id"] == c.id), None)
        if r is None:
            continue
        per = ", ".join(f"s{s} {_fmt(v)}" for s, v in r.get("measured_by_seed", {}).items()) or _fmt(r["measured"])
        held = f"{r['seeds_holding']}/{r['seeds_total']}" if "seeds_total" in r else ("1/1" if r["holds"] else "0/1")
        if c.rule in COUNT_RULES:
            bound = f"≤ {c.inversions:g} inversion(s)"
        elif b is None:
            bound = " and ".join(x for x in ([f"≥ {c.min:g}"] if c.min is not None else []) + ([f"≤ {c.max:g}"] if c.max is not None else []))
        else:
            bound = ("≥ " if c.min is not None and b == c.min else "≤ ") + _fmt(float(b))
        lines.append(f"| {fid} | `{c.id}`: {c.text} | {_fmt(c.paper_value)} | {bound} | {per} | {_fmt(r['measured'])} | "
                     f"{'holds' if r['holds'] else '**fails**'} | {held} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("claims", help="a claims.json written by `sharebuf repro` (its runs/ is reused)")
    ap.add_argument("--out", required=True, help="output directory of the re-run (runs/, claims.json|md, seed-stability.md)")
    ap.add_argument("--margin", type=float, default=0.15, help="relative margin around the deciding bound (default 0.15)")
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--scale", default="quick", choices=["tiny", "quick", "full"])
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--max-cpu-min", type=float, default=40.0, help="CPU budget; the most expensive figures are dropped first")
    ap.add_argument("--md", help="the table's file (default OUT/seed-stability.md)")
    ap.add_argument("--dry-run", action="store_true", help="list the claims and the plan, run nothing")
    a = ap.parse_args(argv)
    if not (0 < a.margin < 1):
        ap.error(f"--margin {a.margin}: allowed: a fraction in (0, 1), e.g. 0.15")
    try:
        seeds = [int(s) for s in a.seeds.split(",") if s.strip()]
    except ValueError:
        ap.error(f"--seeds {a.seeds!r}: allowed: non-negative integers, e.g. 1,2,3")
    if not seeds or any(s < 0 for s in seeds):
        ap.error(f"--seeds {a.seeds!r}: allowed: non-negative integers, e.g. 1,2,3")

    from sharebuf.repro import load_specs, reproduce

    src = Path(a.claims)
    cj = json.loads(src.read_text())
    specs = load_specs()
    near = near_claims(cj, specs, a.margin)
    n_sim = sum(len(f["claims"]) for fid, f in cj.items() if fid in specs and specs[fid].simulated)
    print(f"{len(near)} of {n_sim} claims of packet simulations within {a.margin:.0%} of their bound "
          f"(count rules: one inversion from flipping; {sum(len(f['claims']) for f in cj.values()) - n_sim} claims of "
          f"closed forms have no seed):")
    for fid, r, c, b, d in near:
        dist = f"{d:.1%}" if c.rule not in COUNT_RULES else f"{d:g} inversion(s) over"
        print(f"  {fid:12s} {c.id:22s} measured {_fmt(r['measured']):>8s}  bound {_fmt(float(b)):>6s}  "
              f"{'holds' if r['holds'] else 'fails'}  ({dist})")
    out = Path(a.out)
    runs = out / "runs"
    linked = link_cache(src.parent / "runs", runs) if not a.dry_run else 0
    cache = runs if runs.is_dir() and any(runs.iterdir()) else src.parent / "runs"
    fids = list(dict.fromkeys(fid for fid, *_ in near))
    rows = plan(fids, specs, a.scale, seeds, cache)
    kept, dropped = within_budget(rows, a.max_cpu_min * 60)
    print(f"\n{len(fids)} figures, {sum(r['runs'] for r in rows)} runs at scale {a.scale} seeds {seeds}, "
          f"{sum(r['new'] for r in rows)} not cached ({linked} runs linked from {src.parent / 'runs'}):")
    for r in rows:
        m = "n/a" if r["measured_s"] is None else f"{r['measured_s'] / 60:.1f}"
        print(f"  {r['figure']:12s} runs {r['runs']:4d}  new {r['new']:4d}  est. CPU {r['est_s'] / 60:6.1f} min "
              f"(estimate_cpu_s), {m:>6s} min (cached runs' wall time)")
    print(f"estimated CPU time: {sum(r['est_s'] for r in rows) / 60:.1f} min (estimate_cpu_s), "
          f"{sum(_cost(r) for r in rows) / 60:.1f} min (the larger of the two per figure); budget {a.max_cpu_min:g} min")
    if dropped:
        gone = ", ".join(f"{r['figure']} ({_cost(r) / 60:.1f} min)" for r in dropped)
        print(f"over budget: dropped (most expensive first) {gone}")
    print(f"running {len(kept)} figures: {sum(_cost(r) for r in kept) / 60:.1f} min CPU estimated", flush=True)
    if a.dry_run:
        return 0
    try:
        os.nice(10)
    except OSError:
        pass
    ran = [r["figure"] for r in kept]
    if ran:
        reproduce(ran, out, scale=a.scale, seeds=seeds, jobs=a.jobs, progress=False, log=print)
    res = json.loads((out / "claims.json").read_text()) if (out / "claims.json").is_file() else {}
    # Every figure of OUT that ran these seeds and scale (an earlier call with another budget included).
    res = {fid: f for fid, f in res.items() if f.get("seeds") == seeds and f.get("scale") == a.scale}
    ran = [fid for fid in fids if fid in res]
    dropped = [r for r in dropped if r["figure"] not in res]
    kept_near = [n for n in near if n[0] in res]
    md = [f"Claims of `{src}` within {a.margin:.0%} of the bound that decides them (count rules: one inversion "
          f"from flipping), re-run at scale `{a.scale}` with seeds {seeds}: {len(kept_near)} claims of {len(ran)} figures.",
          ""]
    if dropped:
        md += [f"Not run (CPU budget {a.max_cpu_min:g} min): " + ", ".join(
            f"{r['figure']} ({', '.join(c.id for f_, _, c, _, _ in near if f_ == r['figure'])})" for r in dropped) + ".", ""]
    md.append(table_md(kept_near, res))
    flips = sum(1 for fid, _, c, _, _ in kept_near
                for r in res.get(fid, {}).get("claims", []) if r["id"] == c.id and 0 < r.get("seeds_holding", 0) < r.get("seeds_total", 0))
    md.append(f"\n{flips} of {len(kept_near)} claims hold in some seeds and fail in others.\n")
    # The other claims of the re-run figures come with per-seed verdicts too: those that were not
    # near their bound in claims.json but do not hold in every seed alike.
    near_ids = {(fid, c.id) for fid, _, c, _, _ in kept_near}
    specs_near = [(fid, None, c, *deciding_bound(c, r0["measured"]))
                  for fid in ran for c in specs[fid].claims
                  for r0 in cj.get(fid, {}).get("claims", []) if r0["id"] == c.id and (fid, c.id) not in near_ids
                  for r in res[fid]["claims"] if r["id"] == c.id and 0 < r.get("seeds_holding", 0) < r.get("seeds_total", 0)]
    if specs_near:
        md += [f"Claims of these figures farther than {a.margin:.0%} from their bound in `{src}` that also differ "
               f"between seeds ({len(specs_near)}):", "", table_md(specs_near, res)]
    mdfile = Path(a.md) if a.md else out / "seed-stability.md"
    mdfile.write_text("\n".join(md))
    print(f"table: {mdfile}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

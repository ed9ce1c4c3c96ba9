#!/usr/bin/env python3
"""Do two renders on disjoint seeds give the same verdicts?

    python bench/verdict_stability.py A/claims.json B/claims.json [--out results/verdict_stability.md]

A and B are ``sharebuf repro all`` outputs of the same scale on different seeds (e.g. 1-5 and
6-10). Prints, per paper, how many claims get the same verdict (holds / fails / inconclusive)
in both, and lists every claim that differs with both measured values and intervals. A claim that
holds in one and is inconclusive in the other sits at its bound; one that holds in one and fails
in the other means the interval is too narrow for that claim's noise.

It also reports the cross-coverage: how often one render's measured value lies inside the other's
interval. For two independent renders of equal size and an interval that describes the noise, a
95% interval holds the other render's estimate about 83% of the time (the difference of two
estimates has √2 times the spread of one: P(|Z| < 1.96/√2)); far above that the interval is too
wide, far below too narrow. Claims whose interval is a point (deterministic figures) are left out.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def _fmt(v) -> str:
    if v is None:
        return "n/a"
    return f"{v:.3g}" if isinstance(v, (int, float)) else str(v)


def _iv(c: dict) -> str:
    lo, hi = (c.get("interval") or [None, None])
    return f"{_fmt(c.get('measured'))} [{_fmt(lo)}, {_fmt(hi)}]"


def _inside(c: dict, d: dict):
    """Is d's measured value inside c's interval? None for a point interval or a missing value."""
    lo, hi = (c.get("interval") or [None, None])
    m = d.get("measured")
    if lo is None or hi is None or m is None or not lo < hi:
        return None
    return lo <= m <= hi


def paired(a: dict, b: dict):
    """(figure, A's claim, B's claim) for every claim both renders judged."""
    for fid in a:
        cb = {c["id"]: c for c in b.get(fid, {}).get("claims", [])}
        for c in a[fid]["claims"]:
            if c["id"] in cb:
                yield fid, c, cb[c["id"]]


def cross_coverage(a: dict, b: dict):
    """(B's value inside A's interval, A's inside B's, claims counted)."""
    ab = ba = n = 0
    for _, c, d in paired(a, b):
        x, y = _inside(c, d), _inside(d, c)
        if x is None or y is None:
            continue
        ab, ba, n = ab + x, ba + y, n + 1
    return ab, ba, n


def compare(a: dict, b: dict):
    same, rows = {}, []
    for fid, c, d in paired(a, b):
        paper = fid.split("-")[0].upper()
        va, vb = c.get("verdict"), d.get("verdict")
        s, n = same.get(paper, (0, 0))
        same[paper] = (s + (va == vb), n + 1)
        if va != vb:
            rows.append((fid, c["id"], va, _iv(c), vb, _iv(d), c.get("rule", "")))
    return same, rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a", type=Path)
    ap.add_argument("b", type=Path)
    ap.add_argument("--out", type=Path, default=None, help="also write the report as markdown")
    args = ap.parse_args()
    a, b = (json.loads(p.read_text()) for p in (args.a, args.b))
    same, rows = compare(a, b)
    tot_s, tot_n = sum(s for s, _ in same.values()), sum(n for _, n in same.values())
    sa, sb = (",".join(str(s) for s in next((f["seeds"] for f in x.values() if f.get("seeds")), [])) for x in (a, b))
    kinds = {}
    for _, _, va, _, vb, _, _ in rows:
        k = "holds ↔ fails" if {va, vb} == {"holds", "fails"} else f"{'holds' if 'holds' in (va, vb) else 'fails'} ↔ inconclusive"
        kinds[k] = kinds.get(k, 0) + 1
    lines = [f"# Verdict stability: seeds {sa} vs {sb}", "",
             f"Same verdict for **{tot_s} of {tot_n}** claims ({100 * tot_s / max(tot_n, 1):.1f}%)."
             + (" Differences: " + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())) + "." if kinds else ""), "",
             ]
    ab, ba, nc = cross_coverage(a, b)
    if nc:
        lines += [f"Cross-coverage: seeds {sb}' measured value lies inside seeds {sa}' interval for {ab} of {nc} "
                  f"claims ({100 * ab / nc:.0f}%), and the other way round for {ba} ({100 * ba / nc:.0f}%); an "
                  "interval that describes the run-to-run noise gives about 83% (see the script's doc).", ""]
    lines += ["| paper | same verdict |", "|---|---|"]
    lines += [f"| {p} | {s} / {n} |" for p, (s, n) in same.items()] + [""]
    if rows:
        lines += [f"| figure | claim | seeds {sa} | measured [interval] | seeds {sb} | measured [interval] | rule |",
                  "|---|---|---|---|---|---|---|"]
        lines += [f"| {f} | {c} | {va} | {ia} | {vb} | {ib} | {r} |" for f, c, va, ia, vb, ib, r in rows]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        args.out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

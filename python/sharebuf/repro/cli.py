"""``sharebuf repro``: list the figures, reproduce some or all of them."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from ..errors import ScenarioError


def _cmd_list(args) -> int:
    from rich.console import Console
    from rich.table import Table

    from . import list_figures

    t = Table(title="reproducible figures (sharebuf repro ID --out DIR)")
    for c in ("id", "kind", "runs quick", "runs full", "claims", "what it shows"):
        t.add_column(c, justify="right" if c.startswith(("runs", "claims")) else "left")
    for fid, s in list_figures().items():
        t.add_row(fid, s.kind, str(s.n_runs("quick")), str(s.n_runs("full")), str(len(s.claims)), s.description)
    Console(width=200).print(t)
    return 0


def _cmd_repro(args) -> int:
    from rich.console import Console

    from . import list_figures, reproduce, report
    from ..scenario.overrides import parse_sets, parse_values

    if args.ids == ["list"]:
        return _cmd_list(args)
    if args.ids[0] == "ablate":
        return _cmd_ablate(args)
    if args.claim or args.only or args.no_add_one or args.dry_run:
        raise ScenarioError("repro: --claim, --only, --no-add-one and --dry-run are options of `sharebuf repro ablate FIGURE`")
    if not args.out:
        raise ScenarioError("repro: --out DIR is required (figures, points.parquet, claims and runs go there)")
    seeds = None
    if args.seeds:
        seeds = parse_values(args.seeds)
        if not all(isinstance(x, int) and x >= 0 for x in seeds):
            raise ScenarioError(f"--seeds {args.seeds!r}: expected non-negative integers, e.g. 1,2,3")
    c = Console(stderr=True)
    t0 = time.perf_counter()
    results = reproduce(args.ids, args.out, scale=args.scale, seeds=seeds, jobs=args.jobs, use_ray=args.ray,
                        ray_address=args.ray_address, overrides=parse_sets(args.sets), topology=args.topology, progress=not args.quiet, log=c.print)
    wall = time.perf_counter() - t0
    out = Path(args.out)
    if args.ids == ["all"]:
        import json

        allc = json.loads((out / "claims.json").read_text())
        (out / "index.md").write_text(report.index_md(allc, list_figures(), wall, args.scale))
    held = sum(c["holds"] for r in results.values() for c in r)
    total = sum(len(r) for r in results.values())
    for fid, r in results.items():
        c.print(f"{fid}: claims held {sum(x['holds'] for x in r)} of {len(r)}  -> {out / (fid + '.png')}")
    c.print(f"claims held {held} of {total} in {wall:.1f} s; table: {out / 'claims.md'}, points: {out / 'points.parquet'}")
    return 0


def _cmd_ablate(args) -> int:
    from rich.console import Console

    from .ablate import ablate, print_table

    if len(args.ids) != 2:
        raise ScenarioError("repro ablate: expected one figure id: sharebuf repro ablate FIGURE --claim ID [--claim ID2] --out DIR")
    if not args.out:
        raise ScenarioError("repro ablate: --out DIR is required (its runs/ is the run cache; the tables go to DIR/ablate-FIGURE.md|json)")
    if args.sets or args.topology != "code" or args.ray:
        raise ScenarioError("repro ablate: --set, --topology and --ray are not supported (the ablation varies the profile only)")
    seeds = None
    if args.seeds:
        from ..scenario.overrides import parse_values

        seeds = parse_values(args.seeds)
        if not all(isinstance(x, int) and x >= 0 for x in seeds):
            raise ScenarioError(f"--seeds {args.seeds!r}: expected non-negative integers, e.g. 1,2,3")
    only = [o.strip() for item in (args.only or []) for o in item.split(",") if o.strip()]
    claims = [c.strip() for item in (args.claim or []) for c in item.split(",") if c.strip()]
    err = Console(stderr=True)
    res = ablate(args.ids[1], claims, args.out, scale=args.scale, seeds=seeds, only=only or None,
                 add_one=not args.no_add_one, jobs=args.jobs, progress=not args.quiet, dry_run=args.dry_run, log=err.print)
    if args.dry_run:
        return 0
    con = Console(width=250)
    for r in res.values():
        print_table(r, con)
    err.print(f"tables: {args.out}/ablate-{args.ids[1]}.md, .json")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("repro", help="reproduce the papers' evaluation figures with their claims checked ('repro list' lists them)")
    p.add_argument("ids", nargs="+", metavar="ID",
                   help="figure ids (e.g. abm-fig7), 'all', 'list', or 'ablate FIGURE' (with --claim: which profile key flips a claim)")
    p.add_argument("--out", help="output directory (figures, points.parquet, claims.md/json, runs/)")
    p.add_argument("--scale", default="quick", choices=["tiny", "quick", "full"],
                   help="quick: minutes on a laptop; full: the papers' durations and seeds (many cores or Ray)")
    p.add_argument("--seeds", help="comma list of seeds (default: the scale's)")
    p.add_argument("--topology", default="code", choices=["code", "paper"],
                   help="ABM-family figures: code = the ABM code's 2 leaves x 32 servers (the published numbers), "
                        "paper = the paper text's 8 leaves x 32 servers, 8 spines")
    p.add_argument("--jobs", type=int, help="worker processes (default: all cores)")
    p.add_argument("--ray", action="store_true", help="run the simulations as Ray tasks")
    p.add_argument("--ray-address", help="Ray cluster address")
    p.add_argument("--quiet", action="store_true")
    p.add_argument("--claim", action="append", help="ablate: the claim id(s) to ablate (repeat or comma list; they share runs)")
    p.add_argument("--only", action="append", help="ablate: only these profile groups or keys (default: every group)")
    p.add_argument("--dry-run", action="store_true", help="ablate: print how many runs it needs (and has) and stop")
    p.add_argument("--no-add-one", action="store_true", help="ablate: leave-one-out variants only (no 'only this key on' runs)")
    from ..scenario.overrides import add_set_argument

    add_set_argument(p)  # applied to every run of the figures, after the spec's own keys
    p.set_defaults(func=_cmd_repro)

"""``sharebuf tune``: the subcommand's arguments and its report (the search is :mod:`sharebuf.tune`)."""

from __future__ import annotations

from .tune import parse_constraint, parse_param, tune


def register(sub) -> None:
    """The ``tune`` subcommand (called from cli.build_parser)."""
    from .scenario.overrides import add_set_argument

    t = sub.add_parser("tune", help="tune scenario values (e.g. per-class α) by simulation with an optimizer (Optuna TPE)")
    t.add_argument("scenario", nargs="?", default=None, help="TOML file or bundled scenario name")
    t.add_argument("--param", action="append", required=True, metavar="KEY=LOW..HIGH",
                   help="a scenario key and its range, e.g. 'switch.bm.alpha[2]=0.25..16' (repeatable)")
    t.add_argument("--log", action="store_true", help="search every range log-uniformly (needs LOW > 0)")
    t.add_argument("--objective", required=True, metavar="METRIC", help="a sweep-table metric, e.g. slowdown_p99.incast")
    g = t.add_mutually_exclusive_group()
    g.add_argument("--minimize", dest="direction", action="store_const", const="minimize", help="(default)")
    g.add_argument("--maximize", dest="direction", action="store_const", const="maximize")
    t.add_argument("--constraint", action="append", default=[], metavar="METRIC<=VALUE",
                   help="METRIC<=VALUE or METRIC>=VALUE; VALUE a number, 'ref' or 'F*ref' (repeatable)")
    t.add_argument("--reference", action="append", default=None, metavar="KEY=VALUE",
                   help="override of the reference run that 'ref' refers to (repeatable; default: the scenario as given)")
    t.add_argument("--trials", type=int, required=True, help="trial budget (runs, besides the reference)")
    t.add_argument("--startup", type=int, help="quasi-random trials before TPE (default: half the budget, 2 to 10)")
    t.add_argument("--jobs", type=int, help="trials proposed and run together (worker processes; default 1)")
    t.add_argument("--ray", action="store_true", help="run each batch as Ray tasks (pip install 'sharebuf[cluster]')")
    t.add_argument("--ray-address", help="Ray cluster address")
    t.add_argument("--seed", type=int, default=0, help="optimizer seed (default 0)")
    t.add_argument("--seeds", help="scenario seeds, e.g. 1,2,3: each trial runs once per seed, metrics are their mean "
                                   "(default: the scenario's seed, one run per trial)")
    t.add_argument("--out", required=True, help="directory: run-*/, trials.parquet, best.toml, search.png, tune.json")
    t.add_argument("--quiet", action="store_true")
    add_set_argument(t)
    t.set_defaults(func=cmd_tune, direction=None)


def cmd_tune(args) -> int:
    from .scenario.overrides import parse_sets

    params = {}
    for text in args.param:
        p = parse_param(text, args.log)
        params[p.key] = p
    ref = parse_sets(args.reference) if args.reference else None
    seeds = None
    if args.seeds:
        from .scenario.overrides import parse_values

        seeds = parse_values(args.seeds)
    res = tune(args.scenario, params, args.objective, direction=args.direction or "minimize", constraints=args.constraint,
               reference=ref, trials=args.trials, jobs=args.jobs, use_ray=args.ray, ray_address=args.ray_address,
               seed=args.seed, startup=args.startup, sets=parse_sets(args.sets), seeds=seeds, out=args.out, progress=not args.quiet)
    if args.quiet:
        return 0 if res.best is not None else 1
    reused = int(res.trials["reused"].sum())
    print(f"{len(res.trials)} trials ({reused} replayed from finished runs)")
    if res.reference is not None:
        print("reference: " + ", ".join(f"{c.metric} = {res.reference.get(c.metric):.6g}" for c in map(parse_constraint, args.constraint))
              if args.constraint else f"reference: {args.objective} = {res.reference.get(args.objective)}")
    if res.best is None:
        print("no feasible trial: no best.toml written; see trials.parquet")
        return 1
    ps = ", ".join(f"{k} = {v:.4g}" for k, v in res.best_params.items())
    print(f"best: trial {res.best['trial']}: {args.objective} = {res.best_value:.6g} at {ps}")
    print(f"results: {args.out}/trials.parquet, best.toml (sharebuf run {args.out}/best.toml), search.png, run-*/")
    return 0

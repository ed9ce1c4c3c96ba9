"""The ``sharebuf`` command line."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import List, Optional

from .errors import ScenarioError


def _print_summary(s: dict, out: Optional[Path]) -> None:
    from rich.console import Console
    from rich.table import Table

    c = Console()
    c.print(f"[bold]{s['scenario']}[/bold]  seed {s['seed']}  simulated {s['sim_s'] * 1e3:.3f} ms in {s['wall_s']:.2f} s wall "
            f"({s['events'] / 1e6:.2f} M events, {s['events_per_s'] / 1e6:.2f} M events/s, {s['sim_s_per_wall_s']:.4f} sim-s/wall-s)")
    fl = s["flows"]
    c.print(f"flows: {fl['finished']}/{fl['total']} finished   queries: {s['queries']['finished']}/{s['queries']['total']}   "
            f"drops: {s['drops_total']} pkts {s['drops']}" + ("   [yellow]hit max_ms[/yellow]" if s["hit_max_time"] else ""))
    t = Table(title="slowdown (FCT / ideal FCT)")
    for col in ("workload", "flows", "finished", "p50", "p99", "mean"):
        t.add_column(col, justify="right")
    fmt = lambda v: "-" if v is None else f"{v:.2f}"  # noqa: E731
    for name, v in s["slowdown"].items():
        t.add_row(name, str(v["flows"]), str(v["finished"]), fmt(v["p50"]), fmt(v["p99"]), fmt(v["mean"]))
    c.print(t)
    b = Table(title="buffer occupancy")
    for col in ("switch", "buffer KB", "mean KB", "p99 KB", "peak KB"):
        b.add_column(col, justify="right")
    kb = lambda v: "-" if v is None else f"{v / 1e3:.1f}"  # noqa: E731
    for name, v in s["buffer"]["per_switch"].items():
        b.add_row(name, kb(v["buffer_bytes"]), kb(v["mean_bytes"]), kb(v["p99_bytes"]), kb(v["peak_bytes"]))
    c.print(b)
    if out is not None:
        c.print(f"results: {out}/ (flows.parquet, queries.parquet, buffer.parquet, summary.json)")


def cmd_run(args) -> int:
    from .runner import run

    out = Path(args.out) if args.out else Path("sharebuf-out") / Path(args.scenario or "default").stem
    if args.dump_spec:
        from .config import engine_spec_json, load_scenario, resolve

        sc, base, _ = load_scenario(args.scenario, args.profile)
        if args.seed is not None:
            sc.seed = args.seed
        Path(args.dump_spec).write_text(engine_spec_json(resolve(sc, base)))
        print(f"engine spec written to {args.dump_spec}")
        return 0
    res = run(args.scenario, out=out, seed=args.seed, progress=False if args.quiet else None, quiet=args.quiet, profile=args.profile)
    if args.json:
        print(json.dumps(res.summary, indent=2))
    elif not args.quiet:
        _print_summary(res.summary, out)
    return 0


def cmd_list(args) -> int:
    from . import _core
    from .config import BUNDLED_CDFS, bundled_scenarios

    print("scenarios:  " + ", ".join(bundled_scenarios()))
    print("schemes:    " + ", ".join(_core.schemes()))
    print("transports: " + ", ".join(_core.congestion_controls()))
    print("cdfs:       " + ", ".join(BUNDLED_CDFS))
    return 0


def cmd_sweep(args) -> int:
    from rich.console import Console
    from rich.table import Table

    from .sweep import parse_values, sweep

    grid = {}
    for item in args.grid or []:
        if "=" not in item:
            raise ScenarioError(f"--grid {item!r}: expected KEY=VALUES, e.g. switch.bm.scheme=dt,abm")
        k, v = item.split("=", 1)
        grid[k.strip()] = parse_values(v)
    if not grid and not args.seeds:
        raise ScenarioError("sweep: give at least one --grid KEY=VALUES or --seeds")
    seeds = parse_values(args.seeds) if args.seeds else None
    if seeds and not all(isinstance(x, int) and x >= 0 for x in seeds):
        raise ScenarioError(f"--seeds {args.seeds!r}: expected non-negative integers, e.g. 1,2,3")
    table = sweep(args.scenario, grid, seeds=seeds, out=args.out, jobs=args.jobs, use_ray=args.ray,
                  ray_address=args.ray_address, progress=not args.quiet)
    if args.quiet:
        return 0
    t = Table(title=f"sweep: {len(table)} runs -> {args.out}/sweep.parquet")
    cols = [c for c in table.columns if c in grid or c in ("run", "seed") or c.startswith("slowdown_p99") or c in ("drops", "flows_finished")]
    for c in cols:
        t.add_column(str(c), justify="right")
    for _, r in table[cols].iterrows():
        t.add_row(*[f"{v:.3g}" if isinstance(v, float) else str(v) for v in r])
    Console().print(t)
    return 0


def cmd_plot(args) -> int:
    from .sweep import plot

    path = plot(args.sweep, args.x, args.y, hue=args.hue, out=args.out, logy=args.logy)
    print(f"wrote {path} and {path.with_suffix('.pdf')}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    from . import __version__

    p = argparse.ArgumentParser(prog="sharebuf", description="Packet-level simulator and toolkit for shared-buffer management in datacenter switches.")
    p.add_argument("--version", action="version", version=f"sharebuf {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    r = sub.add_parser("run", help="run a scenario (TOML file or bundled name; default: the bundled 'default')")
    r.add_argument("scenario", nargs="?", default=None, help="TOML file or bundled scenario name")
    r.add_argument("--out", help="output directory (default: sharebuf-out/NAME)")
    r.add_argument("--seed", type=int, help="override the scenario's seed")
    r.add_argument("--quiet", action="store_true", help="no progress bar, no summary")
    r.add_argument("--json", action="store_true", help="print summary.json instead of tables")
    r.add_argument("--profile", help="override the scenario's compatibility profile (ns3dc; none = sharebuf's defaults)")
    r.add_argument("--dump-spec", metavar="FILE", help="write the resolved engine spec (JSON) and exit")
    r.set_defaults(func=cmd_run)
    ls = sub.add_parser("list", help="list bundled scenarios, schemes, transports and CDFs")
    ls.set_defaults(func=cmd_list)
    sw = sub.add_parser("sweep", help="run a scenario over a grid of values (and seeds), locally or on Ray")
    sw.add_argument("scenario", nargs="?", default=None, help="TOML file or bundled scenario name")
    sw.add_argument("--grid", action="append", metavar="KEY=VALUES",
                    help="scenario key and its values, e.g. switch.bm.scheme=dt,abm or 'switch.bm.alpha=[[1,0.5],[1,1]]'; repeat for more keys")
    sw.add_argument("--seeds", help="comma list of seeds, e.g. 1,2,3 (default: the scenario's)")
    sw.add_argument("--out", required=True, help="directory for the runs and sweep.parquet")
    sw.add_argument("--jobs", type=int, help="worker processes (default: all cores)")
    sw.add_argument("--ray", action="store_true", help="run the points as Ray tasks (pip install 'sharebuf[cluster]')")
    sw.add_argument("--ray-address", help="Ray cluster address (default: start or join a local Ray)")
    sw.add_argument("--quiet", action="store_true")
    sw.set_defaults(func=cmd_sweep)
    pl = sub.add_parser("plot", help="plot a sweep: a metric against a swept key")
    pl.add_argument("sweep", help="sweep directory (or its sweep.parquet)")
    pl.add_argument("--x", required=True, help="swept key, e.g. workload[1].request_fraction_of_buffer")
    pl.add_argument("--y", required=True, help="metric column, e.g. slowdown_p99.incast, drops, buffer_p99_bytes")
    pl.add_argument("--hue", help="swept key drawn as separate lines")
    pl.add_argument("--logy", action="store_true")
    pl.add_argument("--out", help="output PNG (a PDF is written beside it)")
    pl.set_defaults(func=cmd_plot)
    try:
        from .analysis.cli import register
    except ImportError:  # analysis toolkit not present
        register = None
    if register is not None:
        register(sub)
    return p


def main(argv: Optional[List[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except ScenarioError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())

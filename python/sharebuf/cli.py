"""The ``sharebuf`` command line."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import List, Optional

from .errors import ISSUE_TRACKER, InternalError, ScenarioError, SchemeError


def _console():
    """Rich console on stdout; not a terminal (a pipe, a file): wide enough for the tables."""
    from rich.console import Console

    return Console(width=None if sys.stdout.isatty() else 140)


def _next_hint(scenario: Optional[str], summary: dict) -> str:
    name = scenario or "default"
    scheme = (summary.get("overrides") or {}).get("switch.bm.scheme")
    if scheme:
        return f"next: sharebuf compare {name} --schemes dt,{scheme if scheme != 'dt' else 'abm'} --seeds 1,2,3"
    return (f"next: sharebuf compare {name} --schemes dt,cs,abm --seeds 1,2,3   "
            f"(or one scheme: sharebuf run {name} --set switch.bm.scheme=abm)")


def _print_summary(s: dict, out: Optional[Path], scenario: Optional[str] = None) -> None:
    from rich.markup import escape
    from rich.table import Table

    from .classes import CLASSES

    c = _console()
    c.print(f"[bold]{s['scenario']}[/bold]  seed {s['seed']}  simulated {s['sim_s'] * 1e3:.1f} ms in {s['wall_s']:.2f} s wall "
            f"({s['events'] / 1e6:.2f} M events, {s['events_per_s'] / 1e6:.2f} M events/s)"
            + ("   [yellow]hit max_ms[/yellow]" if s["hit_max_time"] else ""))
    if s.get("overrides"):
        c.print("overrides: " + escape("  ".join(f"{k}={json.dumps(v)}" for k, v in s["overrides"].items())))
    fmt = lambda v: "-" if v is None else f"{v:.2f}"  # noqa: E731
    t = Table(title="slowdown (FCT / ideal FCT) by class", title_justify="left")
    for col in ("class", "flows", "finished", "p50", "p99"):
        t.add_column(col, justify="right")
    for name, v in s.get("slowdown_by_class", {}).items():
        if v["flows"]:
            t.add_row(CLASSES[name], str(v["flows"]), str(v["finished"]), fmt(v["p50"]), f"[bold]{fmt(v['p99'])}[/bold]")
    c.print(t)
    q = s["queries"]
    ms = lambda v: "-" if v is None else f"{v * 1e3:.2f} ms"  # noqa: E731
    c.print(f"queries: {q['finished']}/{q['total']} finished   query completion p50 {ms(q['qct_p50_s'])}  p99 [bold]{ms(q['qct_p99_s'])}[/bold]")
    causes = ", ".join(f"{k} {v:,}" for k, v in s["drops"].items() if v)
    c.print(f"drops: [bold]{s['drops_total']:,}[/bold] packets" + (f" ({causes})" if causes else "")
            + f"   flows: {s['flows']['finished']}/{s['flows']['total']} finished")
    b = Table(title="shared buffer occupancy", title_justify="left")
    for col in ("switch", "buffer KB", "mean", "p99", "peak"):
        b.add_column(col, justify="right")
    pct = lambda v, cap: "-" if v is None else f"{v / 1e3:.0f} KB ({100 * v / cap:.0f}%)"  # noqa: E731
    for name, v in s["buffer"]["per_switch"].items():
        cap = v["buffer_bytes"]
        b.add_row(name, f"{cap / 1e3:.0f}", pct(v["mean_bytes"], cap), pct(v["p99_bytes"], cap), pct(v["peak_bytes"], cap))
    c.print(b)
    w = Table(title="slowdown by workload", title_justify="left")
    for col in ("workload", "flows", "finished", "p50", "p99", "mean"):
        w.add_column(col, justify="right")
    for name, v in s["slowdown"].items():
        w.add_row(name, str(v["flows"]), str(v["finished"]), fmt(v["p50"]), fmt(v["p99"]), fmt(v["mean"]))
    c.print(w)
    if out is not None:
        c.print(escape(f"results: {out}/ (flows, queries, buffer .parquet, summary.json, scenario.toml); plots: sharebuf plot {out}"))
    c.print(escape(_next_hint(scenario, s)))


def cmd_show(args) -> int:
    """Print what made a result (scenario.toml, provenance) and its headline numbers."""
    import pandas as pd
    from rich.markup import escape

    d = Path(args.dir)
    c = _console()
    if (d / "summary.json").is_file():
        s = json.loads((d / "summary.json").read_text())
        p = s.get("provenance") or {}
        if p:
            h = p.get("host") or {}
            mem = h.get("memory_bytes")
            c.print(escape(f"made by: sharebuf {p.get('sharebuf_version')}" + (f" (git {p['git_commit']})" if p.get("git_commit") else "")
                           + f"\ncommand: {p.get('command')}\nstarted: {p.get('started_utc')}   wall {p.get('wall_s', 0):.2f} s"
                           + f"\nhost:    {h.get('hostname')}, {h.get('cores')} cores"
                           + (f", {mem / 2**30:.1f} GiB" if mem else "") + f", {h.get('platform')}, Python {h.get('python')}"
                           + f"\nengine spec sha256: {p.get('engine_spec_sha256')}"))
        else:
            c.print("made by: (no provenance recorded: a result from before sharebuf recorded it)")
        if (d / "scenario.toml").is_file():
            c.print(escape(f"scenario: {d / 'scenario.toml'}  (re-run: sharebuf run {d / 'scenario.toml'} --out NEW_DIR)"))
        _print_summary(s, None, s.get("scenario"))
        return 0
    if (d / "sweep.parquet").is_file():
        t = pd.read_parquet(d / "sweep.parquet")
        c.print(escape(f"sweep: {len(t)} runs in {d} (sweep.parquet); each run-*/ directory has its own scenario.toml"))
        c.print(t.to_string(max_rows=40, max_cols=12))
        return 0
    if (d / "claims.json").is_file():
        cl = json.loads((d / "claims.json").read_text())
        for fid, f in cl.items():
            held = sum(x["holds"] for x in f["claims"])
            c.print(f"{fid}: scale {f['scale']}, claims held {held} of {len(f['claims'])}")
        return 0
    raise ScenarioError(f"show {args.dir!r}: not a run (summary.json), sweep (sweep.parquet) or repro (claims.json) directory")


def cmd_run(args) -> int:
    from .scenario.overrides import parse_sets

    sets = parse_sets(args.sets)
    out = Path(args.out) if args.out else Path("sharebuf-out") / Path(args.scenario or "default").stem
    if args.dump_spec:
        from .scenario.engine_spec import engine_spec_json, resolve
        from .scenario.load import load_scenario, scenario_dict

        sc, base, _ = load_scenario(scenario_dict(args.scenario, sets) if sets else args.scenario, args.profile)
        if args.seed is not None:
            sc.seed = args.seed
        Path(args.dump_spec).write_text(engine_spec_json(resolve(sc, base)))
        print(f"engine spec written to {args.dump_spec}")
        return 0
    from .runner import run

    res = run(args.scenario, out=out, seed=args.seed, progress=False if args.quiet else None, quiet=args.quiet, sets=sets,
              profile=args.profile)
    if args.json:
        print(json.dumps(res.summary, indent=2))
    elif not args.quiet:
        _print_summary(res.summary, out, args.scenario)
    return 0


def cmd_list(args) -> int:
    from . import _core
    from .scenario.inputs import BUNDLED_CDFS
    from .scenario.load import bundled_scenarios

    print("scenarios:  " + ", ".join(bundled_scenarios()))
    print("schemes:    " + ", ".join(_core.schemes()))
    print("transports: " + ", ".join(_core.congestion_controls()))
    print("cdfs:       " + ", ".join(BUNDLED_CDFS))
    return 0


def cmd_sweep(args) -> int:
    from rich.table import Table

    from .scenario.load import scenario_dict
    from .scenario.overrides import parse_sets, parse_values
    from .sweep import sweep

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
    sets = parse_sets(args.sets)
    scenario = scenario_dict(args.scenario, sets) if sets else args.scenario
    table = sweep(scenario, grid, seeds=seeds, out=args.out, jobs=args.jobs, use_ray=args.ray,
                  ray_address=args.ray_address, progress=not args.quiet)
    if args.quiet:
        return 0
    t = Table(title=f"sweep: {len(table)} runs ({table.attrs['ran']} ran, {table.attrs['reused']} done before)")
    cols = [c for c in table.columns if c in grid or c in ("run", "seed") or c.startswith("slowdown_p99") or c in ("drops", "flows_finished")]
    for c in cols:
        t.add_column(str(c), justify="right")
    for _, r in table[cols].iterrows():
        t.add_row(*[f"{v:.3g}" if isinstance(v, float) else str(v) for v in r])
    _console().print(t)
    print(f"results: {args.out}/sweep.parquet and {args.out}/run-*/; plot: sharebuf plot {args.out} --x KEY --y METRIC")
    return 0


def cmd_compare(args) -> int:
    from rich.markup import escape
    from rich.table import Table

    from .compare import FOOTNOTE, compare
    from .scenario.overrides import parse_sets, parse_values

    seeds = parse_values(args.seeds) if args.seeds else None
    if seeds and not all(isinstance(x, int) and x >= 0 for x in seeds):
        raise ScenarioError(f"--seeds {args.seeds!r}: expected non-negative integers, e.g. 1,2,3")
    out = Path(args.out) if args.out else Path("sharebuf-out") / f"compare-{Path(args.scenario or 'default').stem}"
    c = compare(args.scenario, args.schemes.split(","), seeds=seeds, sets=parse_sets(args.sets), out=out, jobs=args.jobs,
                use_ray=args.ray, ray_address=args.ray_address, progress=not args.quiet)
    if args.quiet:
        return 0
    rows = c.render()
    t = Table(title=f"{args.scenario or 'default'}: {len(c.runs)} runs ({c.runs.attrs['ran']} ran, {c.runs.attrs['reused']} done before)",
              title_justify="left", caption=escape(FOOTNOTE.format(base=c.schemes[0])), caption_justify="left")
    for h in rows[0]:
        t.add_column(escape(h), justify="right", no_wrap=True)
    for r in rows[1:]:
        t.add_row(*map(escape, r))
    _console().print(t)
    for n in c.notes:
        print(f"note: {n}")
    print(f"results: {out}/compare.md, compare.parquet, compare.png (+ .pdf), sweep.parquet, run-*/")
    return 0


def cmd_plot(args) -> int:
    from .figures import is_run_dir, plot_run
    from .sweep import plot

    if is_run_dir(Path(args.dir)):
        path = plot_run(args.dir, out=args.out)
        print(f"wrote {path} and {path.with_suffix('.pdf')}")
        return 0
    if not args.x or not args.y:
        raise ScenarioError(f"plot {args.dir}: not a run directory (no summary.json); a sweep directory needs --x KEY and --y METRIC")
    path = plot(args.dir, args.x, args.y, hue=args.hue, out=args.out, logy=args.logy)
    print(f"wrote {path} and {path.with_suffix('.pdf')}")
    return 0


class _Parser(argparse.ArgumentParser):
    """Command-line mistakes are one ``error:`` line (exit 2) too, with where to look."""

    def error(self, message):
        sys.stderr.write(f"error: {message} (see: {self.prog} --help)\n")
        sys.exit(2)


def _check_jobs(args) -> None:
    if getattr(args, "jobs", None) is not None and args.jobs < 1:
        raise ScenarioError(f"--jobs {args.jobs}: allowed: an integer >= 1 (default: all cores)")


#: Sub-commands defined here; parsing one of them needs none of the toolkits' sub-commands.
BUILTIN_COMMANDS = ("run", "show", "list", "sweep", "compare", "plot", "train-predictor")


def build_parser(command: Optional[str] = None) -> argparse.ArgumentParser:
    """The argument parser. ``command``: the sub-command about to be parsed; for a built-in
    one the repro and analysis sub-commands are left out (importing them costs ~0.1 s)."""
    from ._version import __version__
    from .scenario.overrides import add_set_argument

    p = _Parser(prog="sharebuf", description="Packet-level simulator and toolkit for shared-buffer management in datacenter switches.")
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
    add_set_argument(r)
    r.set_defaults(func=cmd_run)
    sh = sub.add_parser("show", help="what made a result directory (scenario, version, command, host) and its headline numbers")
    sh.add_argument("dir", help="a run, sweep or repro directory")
    sh.set_defaults(func=cmd_show)
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
    add_set_argument(sw)
    sw.set_defaults(func=cmd_sweep)
    cp = sub.add_parser("compare", help="run a scenario under several schemes (and seeds) and compare them side by side")
    cp.add_argument("scenario", nargs="?", default=None, help="TOML file or bundled scenario name")
    cp.add_argument("--schemes", required=True, help="comma list of schemes, each with its documented defaults, e.g. dt,cs,abm")
    cp.add_argument("--seeds", help="comma list of seeds, e.g. 1,2,3 (default: the scenario's)")
    cp.add_argument("--out", help="directory (default: sharebuf-out/compare-NAME); re-running into it runs only what is missing")
    cp.add_argument("--jobs", type=int, help="worker processes (default: all cores)")
    cp.add_argument("--ray", action="store_true", help="run on Ray (pip install 'sharebuf[cluster]')")
    cp.add_argument("--ray-address", help="Ray cluster address (default: start or join a local Ray)")
    cp.add_argument("--quiet", action="store_true")
    add_set_argument(cp)
    cp.set_defaults(func=cmd_compare)
    pl = sub.add_parser("plot", help="plot a run directory, or a sweep: a metric against a swept key")
    pl.add_argument("dir", metavar="DIR", help="a run directory (sharebuf run --out), or a sweep directory (or its sweep.parquet)")
    pl.add_argument("--x", help="sweeps: swept key, e.g. workload[1].request_fraction_of_buffer")
    pl.add_argument("--y", help="sweeps: metric column, e.g. slowdown_p99.incast, drops, buffer_p99_bytes")
    pl.add_argument("--hue", help="swept key drawn as separate lines")
    pl.add_argument("--logy", action="store_true")
    pl.add_argument("--out", help="output PNG (a PDF is written beside it; default: in DIR)")
    pl.set_defaults(func=cmd_plot)
    from .credence import register as register_credence

    register_credence(sub)
    if command in BUILTIN_COMMANDS:
        return p
    from .repro.cli import register as register_repro
    from .tune_cli import register as register_tune

    register_tune(sub)

    register_repro(sub)
    try:
        from .analysis.cli import register
    except ImportError:  # analysis toolkit not present
        register = None
    if register is not None:
        register(sub)
    return p


class Terminated(KeyboardInterrupt):
    """SIGTERM, handled as Ctrl-C: temporary files are removed and finished runs kept."""


def _on_sigterm(signum, frame):
    raise Terminated()


#: Environment variable: set, an unexpected Python exception shows its traceback (for developers).
DEBUG_ENV = "SHAREBUF_DEBUG_TRACEBACK"


def main(argv: Optional[List[str]] = None) -> int:
    """Exit codes: 0 done; 2 a bad input (one ``error:`` line, nothing written); 3 an internal
    error (one ``internal error:`` line, nothing written); 130 interrupted (Ctrl-C, SIGTERM)."""
    import os
    import signal

    argv = sys.argv[1:] if argv is None else argv
    if argv == ["--version"]:  # without building the parser, whose sub-commands import their toolkits
        from ._version import __version__

        print(f"sharebuf {__version__}")
        return 0
    command = next((a for a in argv if not a.startswith("-")), None)
    if command == "run" and not any(a in ("-h", "--help") or a.startswith("--dump-spec") for a in argv):
        from .provenance import prefetch

        prefetch()  # provenance's queries (git, uname: processes) run alongside the imports of the run (issue 10)
    parser = build_parser(command)
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        old = signal.signal(signal.SIGTERM, _on_sigterm)
    except ValueError:  # not the main thread
        old = None
    try:
        _check_jobs(args)
        return int(args.func(args) or 0)
    except ScenarioError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except SchemeError as e:
        # A Python scheme raised: the message, then where in the scheme's code.
        import traceback

        print(f"error: {e}", file=sys.stderr)
        if e.__cause__ is not None:
            traceback.print_exception(e.__cause__, file=sys.stderr)
        return 1
    except InternalError as e:
        print(f"internal error: {e}", file=sys.stderr)
        return 3
    except KeyboardInterrupt as e:
        what = "terminated" if isinstance(e, Terminated) or isinstance(e.__context__, Terminated) else "interrupted"
        print(f"{what}: {e}" if str(e) else what, file=sys.stderr)
        return 130
    except Exception as e:  # a bug in sharebuf itself: one line, unless a developer asks for the traceback
        if os.environ.get(DEBUG_ENV):
            raise
        cmd = " ".join(["sharebuf", *(sys.argv[1:] if argv is None else argv)])
        what = " ".join(str(e).split())  # one line
        print(f"internal error: {type(e).__name__}: {what} (running `{cmd}`). This is a bug in sharebuf: please report it on "
              f"{ISSUE_TRACKER} with this message and the scenario file ({DEBUG_ENV}=1 shows the traceback)", file=sys.stderr)
        return 3
    finally:
        if old is not None:
            signal.signal(signal.SIGTERM, old)


if __name__ == "__main__":
    sys.exit(main())

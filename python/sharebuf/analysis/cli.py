"""Command line for the analysis toolkit: ``sharebuf analyze ...`` and ``sharebuf advise alpha``.

The main CLI calls :func:`register` with its sub-parsers and then ``args.func(args)``.
Every command accepts ``--input FILE.toml`` whose keys mirror the long flags (dashes become
underscores; queues are ``[[queue]]`` tables, the burst queue a ``[burst]`` table); flags given
on the command line override the file. Bad input prints one ``error:`` line to stderr and
returns 2. ``python -m sharebuf.analysis.cli ...`` runs the same commands stand-alone.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tomllib
from pathlib import Path
from typing import Any, Callable

from .model import NP_MODES, SCHEMES, QueueSpec

_QUEUE_HELP = ("a congested queue as key=value pairs: port=P,priority=P,alpha=A[,share=S][,count=N]; "
               "count=N replicates it on ports P..P+N-1 (repeatable)")


# --------------------------------------------------------------------------- input helpers
def _load_toml(path: str | None) -> dict[str, Any]:
    if not path:
        return {}
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except OSError as e:
        raise ValueError(f"--input {path!r}: cannot read file ({e.strerror})") from None
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"--input {path!r}: invalid TOML ({e})") from None


def _pick(args: argparse.Namespace, cfg: dict[str, Any], name: str, default: Any = None) -> Any:
    v = getattr(args, name, None)
    if v is not None:
        return v
    return cfg.get(name, default)


def _queue_from_mapping(d: dict[str, Any], where: str) -> list[QueueSpec]:
    allowed = {"port", "priority", "alpha", "share", "count"}
    unknown = set(d) - allowed
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {sorted(unknown)}; allowed: {sorted(allowed)}")
    if "port" not in d:
        raise ValueError(f"{where}: 'port' is required")
    try:
        port = int(d["port"])
        count = int(d.get("count", 1))
        prio = int(d.get("priority", 0))
        alpha = float(d.get("alpha", 1.0))
        share = None if d.get("share") is None else float(d["share"])
    except (TypeError, ValueError):
        raise ValueError(f"{where}: port/priority/count must be integers and alpha/share numbers, got {d!r}") from None
    if count < 1:
        raise ValueError(f"{where}: count={count} must be >= 1")
    return [QueueSpec(port=port + k, priority=prio, alpha=alpha, share=share) for k in range(count)]


def parse_queue_arg(text: str) -> list[QueueSpec]:
    """Parse ``port=1,priority=0,alpha=0.5[,share=..][,count=..]`` into queue specs."""
    d: dict[str, Any] = {}
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        if "=" not in part:
            raise ValueError(f"--queue {text!r}: expected key=value pairs separated by commas")
        k, v = part.split("=", 1)
        d[k.strip()] = v.strip()
    return _queue_from_mapping(d, f"--queue {text!r}")


def _queues(args: argparse.Namespace, cfg: dict[str, Any], flag: str = "queue") -> list[QueueSpec]:
    cli = getattr(args, flag, None)
    if cli:
        out: list[QueueSpec] = []
        for t in cli:
            out += parse_queue_arg(t)
        return out
    raw = cfg.get(flag, [])
    if isinstance(raw, dict):
        raw = [raw]
    if not isinstance(raw, list):
        raise ValueError(f"--input: '{flag}' must be a table or an array of tables")
    out = []
    for i, d in enumerate(raw):
        if not isinstance(d, dict):
            raise ValueError(f"--input: {flag}[{i}] must be a table")
        out += _queue_from_mapping(d, f"--input {flag}[{i}]")
    return out


def _kv_floats(items: list[str] | dict | None, flag: str) -> dict[int, float] | None:
    if items is None:
        return None
    if isinstance(items, dict):
        pairs = list(items.items())
    else:
        pairs = []
        for it in items:
            for part in str(it).split(","):
                if not part.strip():
                    continue
                if "=" not in part:
                    raise ValueError(f"{flag} {it!r}: expected PRIORITY=VALUE")
                pairs.append(tuple(x.strip() for x in part.split("=", 1)))
    out = {}
    for k, v in pairs:
        try:
            out[int(k)] = float(v)
        except (TypeError, ValueError):
            raise ValueError(f"{flag}: {k}={v!r} must be an integer priority and a number") from None
    return out


def _fmt(x: float | None, digits: int = 6) -> str:
    if x is None:
        return "-"
    if isinstance(x, float) and math.isinf(x):
        return "inf"
    return f"{x:.{digits}g}"


def _console():
    from rich.console import Console

    return Console()


def _jsonable(o: Any) -> Any:
    if isinstance(o, float) and (math.isinf(o) or math.isnan(o)):
        return None if math.isnan(o) else ("inf" if o > 0 else "-inf")
    if isinstance(o, dict):
        return {str(k): _jsonable(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_jsonable(v) for v in o]
    return o


def _guard(fn: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        try:
            return fn(args)
        except ValueError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2

    run.__name__ = fn.__name__
    run.__doc__ = fn.__doc__
    return run


# --------------------------------------------------------------------------- commands
def _cmd_steady_state(args: argparse.Namespace) -> int:
    from rich.table import Table

    from .steady_state import steady_state

    cfg = _load_toml(args.input)
    schemes = args.scheme or cfg.get("scheme") or ["dt", "fb", "abm", "bshare", "cs"]
    if isinstance(schemes, str):
        schemes = [schemes]
    B = _pick(args, cfg, "buffer_bytes")
    if B is None:
        raise ValueError("--buffer-bytes is required (or buffer_bytes in --input)")
    link = _pick(args, cfg, "link_gbps")
    np_mode = _pick(args, cfg, "np_mode", "queues")
    queues = _queues(args, cfg)
    if not queues:
        raise ValueError("no congested queues: give --queue (repeatable) or [[queue]] in --input")
    results = [steady_state(s, float(B), queues, link_gbps=None if link is None else float(link), np_mode=np_mode)
               for s in schemes]
    if args.json:
        print(json.dumps(_jsonable([{
            "scheme": r.scheme, "buffer_bytes": r.buffer_bytes, "occupancy_bytes": r.occupancy_bytes,
            "remaining_bytes": r.remaining_bytes, "omega_sum": r.omega_sum,
            "per_priority_bytes": r.per_priority_bytes,
            "queues": [{"port": q.spec.port, "priority": q.spec.priority, "alpha": q.spec.alpha, "share": q.share,
                        "omega": q.omega, "threshold_bytes": q.threshold_bytes, "occupancy_bytes": q.occupancy_bytes,
                        "drain_time_s": q.drain_time_s} for q in r.queues]} for r in results]), indent=2))
        return 0
    con = _console()
    for r in results:
        t = Table(title=f"{r.scheme.upper()} steady state, B = {_fmt(r.buffer_bytes)} bytes")
        for c in ("port", "prio", "alpha", "share γ", "ω", "threshold (B)", "occupancy (B)", "drain time (µs)"):
            t.add_column(c, justify="right")
        for q in r.queues:
            t.add_row(str(q.spec.port), str(q.spec.priority), _fmt(q.spec.alpha), _fmt(q.share), _fmt(q.omega),
                      _fmt(q.threshold_bytes), _fmt(q.occupancy_bytes),
                      "-" if q.drain_time_s is None else _fmt(q.drain_time_s * 1e6))
        con.print(t)
        prio = ", ".join(f"p{p}: {_fmt(v)}" for p, v in r.per_priority_bytes.items())
        con.print(f"  occupied Q = {_fmt(r.occupancy_bytes)} B, remaining B-Q = {_fmt(r.remaining_bytes)} B, "
                  f"per priority: {prio}\n")
    return 0


def _cmd_burst_tolerance(args: argparse.Namespace) -> int:
    from rich.table import Table

    from . import plots
    from .burst import build_transient, closed_form_burst
    from .integrator import integrate_burst

    cfg = _load_toml(args.input)
    con = _console()
    burst_cfg = cfg.get("burst")
    burst_list = [parse_queue_arg(args.burst)[0]] if args.burst else (
        _queue_from_mapping(burst_cfg, "--input burst") if burst_cfg else [])
    out = _pick(args, cfg, "out")
    if not burst_list and not out:
        raise ValueError("--out DIR is required to write the figures (or give --burst for a single computation)")
    B = _pick(args, cfg, "buffer_bytes")
    link = _pick(args, cfg, "link_gbps")

    if burst_list:
        scheme = (args.scheme[0] if args.scheme else None) or cfg.get("scheme") or "dt"
        if isinstance(scheme, list):
            scheme = scheme[0]
        rate = _pick(args, cfg, "burst_rate_gbps")
        if B is None or link is None or rate is None:
            raise ValueError("single computation needs --buffer-bytes, --link-gbps and --burst-rate-gbps")
        dur = _pick(args, cfg, "duration_s")
        np_mode = _pick(args, cfg, "np_mode", "queues")
        sysm = build_transient(scheme, float(B), _queues(args, cfg), burst_list[0], burst_rate_gbps=float(rate),
                               link_gbps=float(link), np_mode=np_mode)
        res = [closed_form_burst(sysm, duration_s=dur), integrate_burst(sysm, duration_s=dur)]
        if args.json:
            print(json.dumps(_jsonable([{k: v for k, v in r.__dict__.items() if k != "trace"} for r in res]), indent=2))
        else:
            t = Table(title=f"{scheme.upper()} burst at {_fmt(float(rate))} Gbps, B = {_fmt(float(B))} bytes")
            for c in ("method", "case", "first drop (µs)", "queue at drop (B)", "arrived (B)", "applies", "fully absorbed"):
                t.add_column(c, justify="right")
            for r in res:
                t.add_row(r.method, r.case, _fmt(r.first_drop_s * 1e6), _fmt(r.queue_bytes), _fmt(r.arrived_bytes),
                          "yes" if r.applies else "no", "-" if r.fully_absorbed is None else str(r.fully_absorbed))
            con.print(t)
            if not res[0].applies:
                con.print(f"  closed form: {res[0].reason}")

    if out:
        which = _pick(args, cfg, "figure", "both")
        if which not in ("abm", "fb", "both"):
            raise ValueError(f"--figure={which!r} is not supported; allowed: abm, fb, both")
        rmax = float(_pick(args, cfg, "max_rate_ratio", 20.0))
        pts = int(_pick(args, cfg, "points", 150))
        if pts < 2:
            raise ValueError(f"--points={pts} must be >= 2")
        rates = plots.default_rates(rmax, pts)
        written = []
        summary = Table(title="burst tolerance (MB) at selected rates")
        for c in ("figure", "panel", "curve", *[f"r={x:g}" for x in (2, 5, 10)]):
            summary.add_column(c, justify="right")
        jobs = []
        if which in ("abm", "both"):
            kw = dict(rates_ratio=rates)
            kw["buffer_bytes"] = float(B) if B is not None else plots.ABM_DEFAULT_BUFFER_BYTES
            kw["link_gbps"] = float(link) if link is not None else 10.0
            jobs.append(("abm_fig5", "ABM Fig. 5 style: burst tolerance, DT vs ABM", plots.abm_fig5_panels(**kw),
                         kw["link_gbps"]))
        if which in ("fb", "both"):
            kw = dict(rates_ratio=rates)
            kw["buffer_bytes"] = float(B) if B is not None else plots.FB_DEFAULT_BUFFER_BYTES
            kw["link_gbps"] = float(link) if link is not None else 1.0
            jobs.append(("fb_fig11", "FB Fig. 11 style: burst absorption, DT vs FB", plots.fb_fig11_panels(**kw),
                         kw["link_gbps"]))
        import numpy as np

        for stem, title, panels, lk in jobs:
            written += plots.write_figure(panels, out, stem, suptitle=title, link_gbps=lk)
            written.append(plots.write_panels_csv(panels, Path(out) / f"{stem}.csv"))
            for pan in panels:
                for c in pan.curves:
                    vals = [np.interp(x, c.rate_ratio, c.tolerance_bytes) / 1e6 if c.rate_ratio[0] <= x <= c.rate_ratio[-1]
                            else None for x in (2, 5, 10)]
                    summary.add_row(stem, pan.key, c.label, *[_fmt(v, 4) for v in vals])
        if not args.json:
            con.print(summary)
            for p in written:
                con.print(f"wrote {p}")
        elif not burst_list:
            print(json.dumps({"written": [str(p) for p in written]}))
    return 0


def _cmd_advise_alpha(args: argparse.Namespace) -> int:
    from rich.table import Table

    from .advisor import advise_abm_alpha, advise_fb_alpha

    cfg = _load_toml(args.input)
    scheme = (args.scheme[0] if args.scheme else None) or cfg.get("scheme") or "fb"
    con = _console()
    if scheme == "fb":
        need = {k: _pick(args, cfg, k) for k in ("buffer_bytes", "link_gbps", "burst_rate_gbps", "burst_duration_s")}
        missing = [f"--{k.replace('_', '-')}" for k, v in need.items() if v is None]
        if missing:
            raise ValueError(f"advise alpha --scheme fb needs {', '.join(missing)}")
        adv = advise_fb_alpha(**{k: float(v) for k, v in need.items()},
                              alpha_low=_pick(args, cfg, "alpha_low"),
                              num_congested_ports=int(_pick(args, cfg, "congested_ports", 1)))
        if args.json:
            print(json.dumps(_jsonable(adv.__dict__), indent=2))
            return 0 if adv.possible else 1
        t = Table(title=f"FB alpha advice: burst {_fmt(adv.burst_rate_gbps)} Gbps (r = {_fmt(adv.rate_ratio)}) "
                        f"for {_fmt(adv.burst_duration_s * 1e6)} µs, B = {_fmt(adv.buffer_bytes)} bytes")
        t.add_column("quantity")
        t.add_column("value", justify="right")
        t.add_column("source")
        t.add_row("max α_L, no transient loss", _fmt(adv.alpha_low_max_no_transient_loss), "FB Eq. 5 / A.5 Eq. 41")
        t.add_row("max α_L (strict)", _fmt(adv.alpha_low_max), "FB Eq. 6 / A.5 Eq. 43")
        t.add_row("α_L used", _fmt(adv.alpha_low), "given or default")
        t.add_row("min α_H (Eq. 7)", _fmt(adv.alpha_high_min_eq7), "FB Eq. 7 / A.5 Eq. 44 (case 2)")
        t.add_row("min α_H (fluid model)", _fmt(adv.alpha_high_min), f"exact, {adv.case}")
        t.add_row("first drop at that α_H (µs)",
                  "-" if adv.verified_first_drop_s is None else _fmt(adv.verified_first_drop_s * 1e6), "closed form")
        con.print(t)
        if not adv.possible:
            con.print(f"[bold red]{adv.reason}[/]")
            return 1
        if adv.reason:
            con.print(adv.reason)
        return 0
    if scheme == "abm":
        adv = advise_abm_alpha(min_share=_kv_floats(_pick(args, cfg, "min_share"), "--min-share"),
                               max_share=_kv_floats(_pick(args, cfg, "max_share"), "--max-share"),
                               max_drain_time_s=_kv_floats(_pick(args, cfg, "max_drain_time_s"), "--max-drain-time-s"),
                               buffer_bytes=_pick(args, cfg, "buffer_bytes"), link_gbps=_pick(args, cfg, "link_gbps"))
        if args.json:
            print(json.dumps(_jsonable(adv.__dict__), indent=2))
            return 0 if adv.possible else 1
        if not adv.possible:
            con.print(f"[bold red]{adv.reason}[/]")
            return 1
        t = Table(title="ABM alpha advice (inverse of Theorems 1-3)")
        for c in ("priority", "alpha", "min share (Thm 1)", "max share (Thm 2)", "drain bound µs (Thm 3)"):
            t.add_column(c, justify="right")
        for p, a in adv.alphas.items():
            d = adv.drain_time_bound_s.get(p)
            t.add_row(str(p), _fmt(a), _fmt(adv.min_share[p]), _fmt(adv.max_share[p]), "-" if d is None else _fmt(d * 1e6))
        con.print(t)
        return 0
    raise ValueError(f"--scheme={scheme!r} is not supported by advise alpha; allowed: fb, abm")


# --------------------------------------------------------------------------- registration
def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--input", metavar="FILE.toml", help="TOML file whose keys mirror these flags")
    p.add_argument("--buffer-bytes", type=float, help="shared buffer size B in bytes")
    p.add_argument("--link-gbps", type=float, help="port bandwidth b in Gbps")
    p.add_argument("--json", action="store_true", help="print JSON instead of tables")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``analyze {steady-state, burst-tolerance}`` and ``advise alpha`` to a sub-parser set."""
    an = subparsers.add_parser("analyze", help="fluid-model analysis: steady state and burst tolerance",
                               description="Fluid-model analysis of shared-buffer management schemes.")
    an_sub = an.add_subparsers(dest="analyze_command", metavar="{steady-state,burst-tolerance}")
    an_sub.required = True

    ss = an_sub.add_parser("steady-state", help="per-queue thresholds/occupancy, remaining buffer, per-priority totals",
                           description="Fluid steady state (DT Eq. 2/6, FB Eq. 12-14, ABM Lemma 2, BSHARE Eq. 6-8).")
    _common(ss)
    ss.add_argument("--scheme", action="append", choices=[*SCHEMES, "cbm"],
                    help="scheme (repeatable; default: all)")
    ss.add_argument("--queue", action="append", metavar="SPEC", help=_QUEUE_HELP)
    ss.add_argument("--np-mode", choices=NP_MODES, help="count n_p as congested queues (default) or ports")
    ss.set_defaults(func=_guard(_cmd_steady_state))

    bt = an_sub.add_parser("burst-tolerance", help="ABM Fig. 5 / FB Fig. 11 style curves, or one burst",
                           description="Burst tolerance curves (PNG, PDF, CSV into --out), or with --burst the "
                                       "first-drop time of one burst by closed form and by the fluid integrator.")
    _common(bt)
    bt.add_argument("--out", metavar="DIR", help="directory for the figures")
    bt.add_argument("--figure", choices=("abm", "fb", "both"), help="which figure set (default both)")
    bt.add_argument("--max-rate-ratio", type=float, help="largest burst rate on the x axis, × port rate (default 20)")
    bt.add_argument("--points", type=int, help="points per curve (default 150)")
    bt.add_argument("--scheme", action="append", choices=[*SCHEMES, "cbm"], help="scheme for --burst (default dt)")
    bt.add_argument("--queue", action="append", metavar="SPEC", help="background queue for --burst; " + _QUEUE_HELP)
    bt.add_argument("--burst", metavar="SPEC", help="burst queue port=P,priority=P,alpha=A[,share=S]")
    bt.add_argument("--burst-rate-gbps", type=float, help="burst arrival rate in Gbps")
    bt.add_argument("--duration-s", type=float, help="burst duration in seconds (reports whether it is absorbed)")
    bt.add_argument("--np-mode", choices=NP_MODES, help="count n_p as congested queues (default) or ports")
    bt.set_defaults(func=_guard(_cmd_burst_tolerance))

    ad = subparsers.add_parser("advise", help="configuration advice", description="Configuration advice.")
    ad_sub = ad.add_subparsers(dest="advise_command", metavar="{alpha}")
    ad_sub.required = True
    al = ad_sub.add_parser("alpha", help="α values: FB burst guarantee (Eq. 5-7) or ABM shares (Thm 1-3)",
                           description="FB: largest α_L / smallest α_H absorbing a burst (rate, duration). "
                                       "ABM: α per priority from desired min/max shares and drain time.")
    _common(al)
    al.add_argument("--scheme", action="append", choices=("fb", "abm"), help="fb (default) or abm")
    al.add_argument("--burst-rate-gbps", type=float, help="FB: burst arrival rate r in Gbps")
    al.add_argument("--burst-duration-s", type=float, help="FB: burst duration t in seconds")
    al.add_argument("--alpha-low", type=float, help="FB: α_L to compute α_H for (default 0.5 if feasible)")
    al.add_argument("--congested-ports", type=int, help="FB: congested low-priority ports NUM (default 1, worst case)")
    al.add_argument("--min-share", action="append", metavar="P=F", help="ABM: minimum fraction of B for priority P")
    al.add_argument("--max-share", action="append", metavar="P=F", help="ABM: maximum fraction of B for priority P")
    al.add_argument("--max-drain-time-s", action="append", metavar="P=S", help="ABM: drain-time bound for priority P")
    al.set_defaults(func=_guard(_cmd_advise_alpha))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="sharebuf")
    sub = parser.add_subparsers(dest="command", required=True)
    register(sub)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())

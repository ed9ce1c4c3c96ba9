"""Profile ablation: which of a compatibility profile's mechanisms decides a claim's verdict.

``sharebuf repro ablate FIGURE --claim ID --out DIR`` runs only the runs the claim needs (its
series at its x values, the figure's seeds) under several *variants* of the figure's profile:

* ``full``: the figure as specified (the profile on);
* ``none``: ``profile = "none"`` (sharebuf's defaults);
* ``-G`` (leave-one-out): the profile with group G returned to sharebuf's default;
* ``+G`` (add-one): sharebuf's defaults with only group G of the profile on.

A group is one profile key, or keys that only make sense together (:data:`GROUPS`). A variant is
built from the keys :func:`sharebuf.scenario.profiles.apply_profile` would set on each run (the scenario's own
keys win; Cubic's parameters only with ``transport.cc = "cubic"``), written explicitly under
``profile = "none"``: a group that does not apply to a run leaves that run identical to ``full``
(or ``none``), so it is not run again. Runs are content-addressed under ``DIR/runs`` as for
``sharebuf repro``: runs already there are reused.

For each claim the table gives per variant what ``sharebuf repro`` gives the figure: the claim's
measured value on the variant's runs pooled over seeds, its 95% interval and its verdict (holds /
fails / inconclusive, :mod:`.verdict`, with the figure's bootstrap draws, so ``full`` reproduces
the figure's row), whether the verdict differs from its reference (``-G`` from ``full``, ``+G``
from ``none``), and what the claim rests on: the panel metric of each series at each x (pooled),
and per series the drops per run, the % of the metric's class that waited out a retransmission
timeout (``rto_pct.<class>``) and the flows it rests on (``n.<class>``).
"""

from __future__ import annotations

import copy
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..errors import ScenarioError

#: Keys of a profile that are ablated together (group name -> keys); every other key of the
#: profile is a group of its own, named by its last part(s) (see :func:`groups`).
GROUPS: Dict[str, Dict[str, Tuple[str, ...]]] = {
    "ns3dc": {
        # fq_codel sits above the 100-packet device queue: ns-3's host NIC is the pair
        # (with the FIFO qdisc a device queue alone changes nothing: a host never drops).
        "host_nic": ("host.nic_qdisc", "host.device_queue_packets"),
        # ns-3.39 TcpCubic's congestion avoidance: one parameter set (docs/transports/cubic.md).
        # (its whole-segment arithmetic has no Reno-friendly region: the three go together)
        "cubic_ca": ("transport.cc_params.cnt_clamp_segments", "transport.cc_params.reno_friendly",
                     "transport.cc_params.window_unit"),
        # After a timeout: ProcessAck leaving CA_LOSS counts only the segments above m_recover, and
        # TcpCubic's slow start adds the rest past ssthresh; the cap off alone would let the ACK that
        # ends the loss state blow cwnd up by all it acknowledges, which ns-3 never does.
        "loss_exit": ("transport.loss_exit_acked", "transport.cc_params.slow_start_cap"),
    },
}

#: Short names of single-key groups (the key otherwise).
_NAMES = {
    "topology.ecmp_hash": "ecmp_hash",
    "switch.device_queue_packets": "switch_device_fifo",
    "switch.buffer_accounting": "buffer_accounting",
    "transport.max_rto_us": "max_rto",
    "transport.recovery": "recovery",
    "transport.timestamp_tick_us": "timestamp_tick",
}


def groups(profile: str) -> Dict[str, Tuple[str, ...]]:
    """The ablation groups of ``profile`` (name -> its keys), in the profile's key order; every
    key of the profile is in exactly one group."""
    from ..scenario.profiles import PROFILES

    if profile not in PROFILES:
        raise ScenarioError(f"profile {profile!r}: no such profile; allowed: {', '.join(PROFILES)}")
    keys = list(PROFILES[profile])
    named = GROUPS.get(profile, {})
    out: Dict[str, Tuple[str, ...]] = {}
    for k in keys:
        g = next((n for n, ks in named.items() if k in ks), None)
        if g is None:
            out[_NAMES.get(k, k)] = (k,)
        elif g not in out:
            out[g] = tuple(x for x in named[g] if x in keys)
    return out


@dataclass(frozen=True)
class Variant:
    name: str
    #: "full", "none", "drop" (leave-one-out) or "only" (add-one).
    kind: str
    #: The profile keys this variant turns on (None = the figure as specified).
    keys: Optional[frozenset] = None
    #: The variant its verdict is compared with.
    reference: str = ""


def variants(profile: str, only: Optional[Sequence[str]] = None, add_one: bool = True) -> List[Variant]:
    """full, none, then per group ``-G`` and (with ``add_one``) ``+G``; ``only`` restricts the
    groups (names or any of their keys)."""
    gs = groups(profile)
    sel = list(gs)
    if only:
        sel = []
        for o in only:
            g = o if o in gs else next((n for n, ks in gs.items() if o in ks), None)
            if g is None:
                allowed = ", ".join(f"{n} ({', '.join(ks)})" for n, ks in gs.items())
                raise ScenarioError(f"--only {o!r}: not a group or key of profile '{profile}'; allowed: {allowed}")
            if g not in sel:
                sel.append(g)
    every = frozenset(k for ks in gs.values() for k in ks)
    out = [Variant("full", "full"), Variant("none", "none", frozenset())]
    for g in sel:
        out.append(Variant(f"-{g}", "drop", every - frozenset(gs[g]), "full"))
    if add_one:
        for g in sel:
            out.append(Variant(f"+{g}", "only", frozenset(gs[g]), "none"))
    return out


def variant_scenario(d: dict, v: Variant) -> dict:
    """Run ``d`` (a scenario dict with a profile) under variant ``v``: the keys the profile sets
    on this run that ``v`` keeps, written explicitly under ``profile = "none"``. Identical to
    ``d`` when ``v`` keeps every key that applies (and to the ``none`` run when it keeps none)."""
    from ..scenario.overrides import set_path
    from ..scenario.profiles import apply_profile, profile_key

    if v.keys is None:
        return d
    _, applied = apply_profile(d)
    if {profile_key(k) for k in applied} <= v.keys:
        return d
    out = copy.deepcopy(d)
    out["profile"] = "none"
    for k, val in applied.items():
        if profile_key(k) in v.keys:
            set_path(out, k, copy.deepcopy(val))
    return out


def claim_x(spec, claim, xs: Sequence[Any]) -> List[Any]:
    """The x values claim ``claim`` reads: its ``at`` value, or all of them."""
    if claim.rule in ("ratio", "lowest", "within", "diff", "value", "spread") and claim.at not in ("all", "mean", "any", None):
        sel = [x for x in xs if math.isclose(float(x), float(claim.at), rel_tol=1e-9)]
        if not sel:
            raise ScenarioError(f"claim {claim.id}: at = {claim.at} is not an x value of this scale ({', '.join(map(str, xs))})")
        return sel
    return list(xs)


def _metric_class(metric: str) -> Optional[str]:
    """The flow class (with its workload suffix, if any) a slowdown or FCT metric is about."""
    from .metrics import CLASSES

    parts = metric.split(".")
    return ".".join(parts[2:]) if parts[0] in ("slowdown", "fct") and len(parts) > 2 and parts[2] in CLASSES else None


def ablate(figure: str, claim_ids: Sequence[str], out, *, scale: str = "quick", seeds: Optional[List[int]] = None,
           only: Optional[Sequence[str]] = None, add_one: bool = True, jobs: Optional[int] = None,
           progress: bool = False, dry_run: bool = False, log=print) -> Dict[str, dict]:
    """Ablate the profile of ``figure`` for the claims ``claim_ids``; returns {claim id: result},
    result = dict(figure, claim, text, rule, metric, profile, scale, seeds, x, groups, rows) with
    one row per variant (see the module doc), and writes ``DIR/ablate-<figure>.md|json``;
    ``dry_run``: only log how many runs it needs and how many are done (returns {})."""

    from . import _by_point, _select, point_rows, pooled_rows, verdict
    from .spec import SCALES, points
    from ..executor import run_key, run_many

    if scale not in SCALES:
        raise ScenarioError(f"--scale {scale!r}: allowed: {', '.join(SCALES)}")
    spec = _select([figure])[0]
    if not spec.simulated:
        raise ScenarioError(f"repro ablate: figure {figure} is {spec.kind} (no packet simulation): nothing to ablate")
    profile = spec.scenario.set.get("profile")
    if profile in (None, "none"):
        raise ScenarioError(f"repro ablate: figure {figure} sets no profile (profile = {profile!r}): nothing to ablate; "
                            f"figures with one: {', '.join(i for i, s in _all_with_profile())}")
    if not claim_ids:
        raise ScenarioError(f"repro ablate: --claim ID is required; {figure} has: {', '.join(c.id for c in spec.claims)}")
    cl = []
    for cid in claim_ids:
        c = next((c for c in spec.claims if c.id == cid), None)
        if c is None:
            raise ScenarioError(f"repro ablate: claim '{cid}' is not a claim of {figure}; allowed: {', '.join(c.id for c in spec.claims)}")
        cl.append(c)
    vs = variants(profile, only, add_one)
    sca = spec.scale(scale)
    xs = sca.x_values or spec.x.values
    pts = points(spec, scale, seeds)
    need = {}  # claim id -> (series set, x list)
    for c in cl:
        need[c.id] = ({c.series, *c.others}, claim_x(spec, c, xs))
    const = {s.name for s in spec.series if s.constant}

    def wanted(series, x) -> bool:
        return any(series in ss and (series in const or any(math.isclose(float(x), float(v)) for v in cx))
                   for ss, cx in need.values())

    base = [(sr, x, seed, d) for sr, x, seed, d in pts if wanted(sr, x)]
    plan: Dict[str, list] = {}
    for v in vs:
        plan[v.name] = []
        for sr, x, seed, d in base:
            dv = variant_scenario(d, v)
            plan[v.name].append((sr, x, seed, dv, run_key(dv)))
    out = Path(out)
    runs_dir = out / "runs"
    jobs_list = [(k, dv) for rows in plan.values() for (_, _, _, dv, k) in rows]
    unique = {k for k, _ in jobs_list}
    todo = [k for k in unique if not (runs_dir / f"run-{k}" / "summary.json").is_file()]
    log(f"{figure} {', '.join(claim_ids)}: {len(vs)} variants x {len(base)} runs = {len(unique)} distinct runs "
        f"({len(unique) - len(todo)} already done), scale {scale}")
    if dry_run:
        return {}
    out.mkdir(parents=True, exist_ok=True)
    run_many(jobs_list, runs_dir, jobs=jobs, progress=progress, label="ablate")

    results: Dict[str, dict] = {}
    metrics_of = {}
    for c in cl:
        panel = next(p for p in spec.panels if p.id == c.panel)
        cls = _metric_class(panel.metric)
        extra = ["drops"] + ([f"rto_pct.{cls}", f"n.{cls}"] if cls else [])
        metrics_of[c.id] = (panel.metric, extra)
    all_wanted = sorted({m for pm, ex in metrics_of.values() for m in [pm, *ex]})
    seed_rows, keep = {}, {}
    for v in vs:
        keep[v.name] = {}
        seed_rows[v.name] = point_rows(spec, scale, plan[v.name], runs_dir, all_wanted, keep=keep[v.name])
    for c in cl:
        metric, extra = metrics_of[c.id]
        series = [c.series, *c.others]
        cx = need[c.id][1]
        rows = []
        verdicts = {}
        for v in vs:
            mine = [r for r in seed_rows[v.name]
                    if r["series"] in series and any(math.isclose(r["x"], float(x)) for x in cx)]
            # The same bootstrap key for every variant (and as `sharebuf repro`): the variants are
            # resampled with the same seed and flow draws, so `full` gives the figure's interval.
            r = verdict.judge(c, _by_point(mine, keep[v.name], metric), metric, key=f"{spec.id}|{c.id}",
                              x_values=xs)
            verdicts[v.name] = r["verdict"]
            row: Dict[str, Any] = dict(variant=v.name, kind=v.kind, measured=r["measured"],
                                       interval=list(r["interval"]), verdict=r["verdict"],
                                       runs=sorted({q["run"] for q in mine}))
            row["flips"] = (r["verdict"] != verdicts[v.reference]) if v.reference else None
            pooled = {(q["series"], q["x"]): q for q in pooled_rows(mine, keep[v.name])}
            for s in series:
                for x in cx:
                    q = next((q for k, q in pooled.items() if k[0] == s and math.isclose(k[1], float(x))), None)
                    row[f"{s} @ {_fmt_x(spec, x)}"] = float(q[metric]) if q else math.nan
            for m in extra:
                for s in series:
                    qs = [q for k, q in pooled.items() if k[0] == s]
                    # drops: per run (mean over seeds), summed over the claim's x; rto_pct and n: the
                    # seeds' flows pooled, at the claim's x (summed for n, mean for rto_pct over x)
                    vals = [float(q[m]) for q in qs if m in q and q[m] is not None]
                    row[f"{m} {s}"] = (sum(vals) if m == "drops" or m.startswith("n.") else
                                       sum(vals) / len(vals)) if vals else math.nan
            rows.append(row)
        results[c.id] = dict(figure=figure, claim=c.id, text=c.text, rule=r["rule"], metric=metric, profile=profile,
                             scale=scale, seeds=seeds or sca.seeds, x=[float(x) for x in cx],
                             groups={g: list(ks) for g, ks in groups(profile).items()}, rows=rows)
    from . import _clean

    # Claims ablated before into the same DIR stay in its tables (a claim run again is replaced).
    jf = out / f"ablate-{figure}.json"
    every = json.loads(jf.read_text()) if jf.is_file() else {}
    for cid, r in _clean(results).items():
        every[cid] = _merge(every.get(cid), r)
    jf.write_text(json.dumps(every, indent=2) + "\n")
    (out / f"ablate-{figure}.md").write_text("\n".join(to_markdown(r) for r in every.values()))
    return results


def _merge(old: Optional[dict], new: dict) -> dict:
    """``new``, plus the rows of variants an earlier ablation of the same claim (same scale,
    seeds, x and profile groups) ran and this one did not (``--only``, ``--no-add-one``), in
    the variant order of :func:`variants`."""
    same = ("scale", "seeds", "x", "groups", "metric")
    if not old or any(old.get(k) != new.get(k) for k in same):
        return new
    rows = {r["variant"]: r for r in old["rows"]}
    rows.update({r["variant"]: r for r in new["rows"]})
    order = [v.name for v in variants(new["profile"])]
    return {**new, "rows": sorted(rows.values(), key=lambda r: order.index(r["variant"]) if r["variant"] in order else len(order))}


def _all_with_profile():
    from . import list_figures

    return [(i, s) for i, s in list_figures().items() if s.simulated and s.scenario.set.get("profile") not in (None, "none")]


def _fmt_x(spec, x) -> str:
    return f"{float(x) * spec.x.display_scale:g}"


def _fmt(v) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    if v is None:
        return "—"
    if isinstance(v, list):
        return "[" + ", ".join(_fmt(x) for x in v) + "]"
    if isinstance(v, float):
        if math.isnan(v):
            return "—"
        return f"{v:.0f}" if abs(v) >= 1000 or v == int(v) else f"{v:.3g}" if abs(v) < 10 else f"{v:.1f}"
    return str(v)


def columns(result: dict) -> List[str]:
    return [k for k in result["rows"][0] if k not in ("kind", "runs")]


def to_markdown(result: dict) -> str:
    cols = columns(result)
    head = (f"### {result['figure']} {result['claim']}: {result['text']}\n\n"
            f"Rule: {result['rule']} (metric `{result['metric']}`); scale {result['scale']}, seeds {result['seeds']}. "
            f"`-G`: profile `{result['profile']}` without group G; `+G`: only G on; flips: verdict differs from "
            f"`full` (for -G) or `none` (for +G). Measured, interval and verdict as `sharebuf repro` (seeds pooled, "
            f"95% bootstrap interval); drops: per run, summed over the claim's x; rto_pct: % of the class that "
            f"waited out an RTO, seeds pooled; n: the flows it rests on.\n\n")
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for r in result["rows"]:
        lines.append("| " + " | ".join(_fmt(r[c]) if c != "flips" else ("**flips**" if r[c] else "") for c in cols) + " |")
    return head + "\n".join(lines) + "\n"


def print_table(result: dict, console) -> None:
    from rich.table import Table

    t = Table(title=f"{result['figure']} {result['claim']}: {result['rule']}")
    cols = columns(result)
    for c in cols:
        t.add_column(c, justify="left" if c == "variant" else "right")
    for r in result["rows"]:
        t.add_row(*[(_fmt(r[c]) if c != "flips" else ("FLIPS" if r[c] else "")) for c in cols])
    console.print(t)

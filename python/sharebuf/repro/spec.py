"""Declarative figure specs: one TOML file per figure in ``repro/figures/``.

A spec names the figure (``<paper>-fig<N>``), its kind (``packet`` simulation, ``analytical``
closed form, ``toy`` example), its sources, and either

* for packet simulations (and toys rebuilt as tiny simulations): a base scenario, overrides, the swept key (``[x]``), the series (each a
  set of overrides), per-scale overrides and seeds; or
* for analytical/toy figures: the name of a point generator in :mod:`sharebuf.repro.analytic`
  and its arguments,

plus the panels (one metric each) and the paper's claims with their check rules
(:mod:`sharebuf.repro.claims`). Where one x value changes several keys (queues per port and the
workloads spread over them), ``[x.set."<x>"]`` (every series) and ``[series.x_set."<x>"]`` (one
series) add overrides at that x; a series may sweep another key than ``[x].key`` this way, which
lets one figure hold two sweeps (FB Fig. 8: load and burst size; panels pick their series). A
``constant`` series (ABM Fig. 12's DT bar) runs once and is reported at every x. Keys of overrides are the dotted scenario keys of
``sharebuf sweep --grid`` (``switch.bm.scheme``, ``workload[1].request_fraction_of_buffer``).
"""

from __future__ import annotations

import copy
import tomllib
from importlib import resources
from typing import Any, Dict, List, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ..errors import ScenarioError

SCALES = ("tiny", "quick", "full")


class _M(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _x_of(key: str, values: List[Any]):
    """The x value among ``values`` that the table key ``key`` names (numeric match), or None."""
    try:
        k = float(key)
    except ValueError:
        return None
    return next((v for v in values if isinstance(v, (int, float)) and float(v) == k), None)


def _at_x(table: Dict[str, Dict[str, Any]], x) -> Dict[str, Any]:
    for k, v in table.items():
        if _x_of(k, [x]) is not None:
            return v
    return {}


class XAxis(_M):
    key: str
    values: List[Any]
    label: str
    #: Multiply x by this for display (e.g. 100 for a fraction shown in %).
    display_scale: float = 1.0
    log: bool = False
    #: Extra overrides per x value, keyed by the value as written (``[x.set."4"]``): for sweeps
    #: where one x changes several keys (e.g. queues per port and the workloads spread over them).
    set: Dict[str, Dict[str, Any]] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _check_set(self):
        for k in self.set:
            if _x_of(k, self.values) is None:
                raise ValueError(f"[x.set.\"{k}\"]: {k} is not one of the x values {self.values}")
        return self


class Series(_M):
    name: str
    set: Dict[str, Any] = Field(default_factory=dict)
    #: Only run at these x values (default: all).
    only_x: Optional[List[Any]] = None
    #: The series does not depend on x (e.g. the DT bar of ABM Fig. 12): it runs once, at its
    #: first ``only_x`` value or the scale's first x, and that run is reported at every x.
    constant: bool = False
    #: Overrides of this series at one x value, keyed like ``[x.set]`` (applied after ``set``).
    x_set: Dict[str, Dict[str, Any]] = Field(default_factory=dict)


class Scale(_M):
    set: Dict[str, Any] = Field(default_factory=dict)
    seeds: List[int] = Field(default_factory=lambda: [1])
    #: Optional subset of x values at this scale (default: all of them).
    x_values: Optional[List[Any]] = None


class Panel(_M):
    id: str
    metric: str
    label: str
    log: bool = False
    title: str = ""
    #: Series drawn in this panel (default: all).
    series: Optional[List[str]] = None
    #: Draw as bars per series instead of lines over x.
    bars: bool = False
    #: x-axis label of this panel (default: the figure's).
    x_label: Optional[str] = None


class Ns3dcRun(_M):
    """The authors' simulator's runs of one series at one x: one fct file per seed."""
    series: str
    x: float
    #: Paths of ns3dc fct files, relative to the repository root (one per seed).
    files: List[str] = Field(min_length=1)
    #: The exact command line(s) behind them, or the path of the file that holds them.
    command: str = ""
    #: Only flows that started in the first ``start_window_ms`` of the arrivals: an fct file
    #: holds the flows that finished by the end of its run, so a run stopped early leaves out
    #: the late starters that were still running, and its last starts are biased short.
    start_window_ms: Optional[float] = Field(default=None, gt=0)


class Ns3dcRef(_M):
    """Side-by-side runs of the ABM authors' simulator (ns3dc) on a figure's setup (``[ns3dc]``):
    every claim whose series and x they cover gets an ns3dc column computed by the same rule."""
    #: What ran and how it maps to the spec's setup (no measured values: see :func:`why_lint`).
    about: str
    #: ns3dc's ``priority`` column -> the sharebuf workload whose class it is (flows with
    #: ``incast = 1`` belong to ``incast_workload``).
    workloads: Dict[str, str] = Field(default_factory=dict)
    incast_workload: str = "incast"
    #: Base RTT (µs) and host link (Gbps) of ns3dc's slowdown: fct / (base RTT + size·8 / link).
    base_rtt_us: float = 80.0
    link_gbps: float = 10.0
    runs: List[Ns3dcRun]


class Claim(_M):
    id: str
    panel: str
    text: str
    rule: Literal["ratio", "value", "monotone", "lowest", "ratio_trend", "within", "ordered", "spread", "growth", "range", "diff"]
    series: str
    others: List[str] = Field(default_factory=list)
    #: How to combine the other series: ``each`` = the worst ratio over them, ``mean`` = ratio to their mean.
    combine: Literal["each", "mean", "min", "max"] = "each"
    #: The x value the claim is about; ``"all"`` = must hold at every x (worst case reported),
    #: ``"mean"`` = average of the per-x measured values, ``"any"`` = the best x (claims "up to").
    at: Union[float, int, str, None] = "all"
    min: Optional[float] = None
    max: Optional[float] = None
    #: monotone / ratio_trend: direction and allowed inversions.
    direction: Literal["increasing", "decreasing", "nondecreasing", "nonincreasing"] = "nondecreasing"
    inversions: int = 0
    #: Relative tolerance for monotone checks (a step within it is not an inversion).
    rel_tol: float = 0.0
    paper_value: Optional[Union[float, str]] = None
    #: Why the claim holds or fails: the mechanism, a paper-vs-code difference, a pointer to a
    #: validation. It quotes no measured value (:func:`why_lint`): the report computes every
    #: number it shows from the runs it rendered.
    why: str = ""


class Scenario(_M):
    base: str
    set: Dict[str, Any] = Field(default_factory=dict)


class FigureSpec(_M):
    id: str
    paper: Literal["FB", "FAB", "ABM", "CBM", "BSHARE"]
    figure: str
    title: str
    kind: Literal["packet", "analytical", "toy"]
    description: str
    sources: List[str]
    #: Runs shared with another figure are found by their content hash; this only documents it.
    shares_runs_with: List[str] = Field(default_factory=list)
    scenario: Optional[Scenario] = None
    x: Optional[XAxis] = None
    series: List[Series] = Field(default_factory=list)
    scales: Dict[str, Scale] = Field(default_factory=dict)
    #: analytical / toy: generator name in sharebuf.repro.analytic and its keyword arguments.
    generator: Optional[str] = None
    args: Dict[str, Any] = Field(default_factory=dict)
    #: x-axis label of analytical/toy figures (packet figures take [x].label).
    x_label: str = "x"
    panels: List[Panel]
    claims: List[Claim] = Field(default_factory=list)
    #: The authors' simulator on this figure's setup, where side-by-side runs exist.
    ns3dc: Optional[Ns3dcRef] = None
    layout: Optional[List[int]] = None  # rows, cols

    @property
    def simulated(self) -> bool:
        """Packet simulations: every ``packet`` figure, and a ``toy`` rebuilt as a tiny simulation
        (it has a ``[scenario]`` instead of a generator)."""
        return self.kind == "packet" or (self.kind == "toy" and self.scenario is not None)

    @model_validator(mode="after")
    def _check(self):
        if self.simulated:
            for need in ("scenario", "x"):
                if getattr(self, need) is None:
                    raise ValueError(f"a packet-simulation figure needs [{need}]")
            if not self.series:
                raise ValueError("a packet-simulation figure needs at least one [[series]]")
            for sr in self.series:
                for k in sr.x_set:
                    if _x_of(k, self.x.values) is None:
                        raise ValueError(f"series {sr.name}: x_set key {k} is not one of the x values {self.x.values}")
            for s in SCALES[1:]:
                if s not in self.scales:
                    raise ValueError(f"a packet-simulation figure needs [scales.{s}]")
        elif self.generator is None:
            raise ValueError(f"a {self.kind} figure needs generator = \"...\"" + (" or a [scenario] (a tiny simulation)" if self.kind == "toy" else ""))
        panel_ids = {p.id for p in self.panels}
        names = {s.name for s in self.series}
        for c in self.claims:
            if c.panel not in panel_ids:
                raise ValueError(f"claim {c.id}: panel '{c.panel}' is not one of {sorted(panel_ids)}")
            if self.simulated:
                for s in [c.series, *c.others]:
                    if s not in names:
                        raise ValueError(f"claim {c.id}: series '{s}' is not one of {sorted(names)}")
        for r in (self.ns3dc.runs if self.ns3dc else []):
            if r.series not in names:
                raise ValueError(f"[ns3dc] run: series '{r.series}' is not one of {sorted(names)}")
        return self

    def scale(self, name: str) -> Scale:
        if name in self.scales:
            return self.scales[name]
        if name == "tiny" and "quick" in self.scales:  # the quick scale's runs, with one seed (tests)
            q = self.scales["quick"]
            return q.model_copy(update=dict(seeds=q.seeds[:1]))
        return Scale()

    def n_runs(self, scale: str) -> int:
        if not self.simulated:
            return 0
        sc = self.scale(scale)
        xs = sc.x_values or self.x.values
        n = sum(len(self.series_x(s, xs)) for s in self.series)
        return n * len(sc.seeds)

    def series_x(self, s: "Series", xs: List[Any]) -> List[Any]:
        """The x values at which series ``s`` runs, given the scale's x values."""
        own = [x for x in xs if s.only_x is None or x in s.only_x]
        return own[:1] if s.constant else own


def _figures_dir():
    return resources.files("sharebuf") / "repro" / "figures"


def expand_defs(data: Dict[str, Any]) -> Dict[str, Any]:
    """A spec's TOML with its ``[defs]`` and ``@for`` entries written out, as validated.

    ``[defs]`` names values written once (a flow list, a workload, a table of per-x overrides);
    a string ``"@name"`` anywhere else in the spec (or in another def) stands for a copy of
    ``defs.name``. A table in a list with an ``"@for" = { src = [100, 149] }`` key stands for one
    table per value, first and last included, its other keys copied; several keys of one ``@for``
    step together (``{ src = [12, 18], priority = [1, 7] }``). Every def must be used."""
    defs = data.pop("defs", {})
    if not isinstance(defs, dict):
        raise ValueError("[defs] must be a table of named values")
    used: set = set()

    def walk(v, stack):
        if isinstance(v, str) and v.startswith("@"):
            name = v[1:]
            if name not in defs:
                raise ValueError(f"'{v}': no such entry in [defs] (defined: {', '.join(sorted(defs)) or 'none'})")
            if name in stack:
                raise ValueError(f"'{v}': [defs] entries refer to each other in a loop ({' -> '.join(stack + (name,))})")
            used.add(name)
            return walk(copy.deepcopy(defs[name]), stack + (name,))
        if isinstance(v, dict):
            return {k: walk(x, stack) for k, x in v.items()}
        if not isinstance(v, list):
            return v
        out = []
        for e in (walk(x, stack) for x in v):
            if not (isinstance(e, dict) and "@for" in e):
                out.append(e)
                continue
            loop, rest = e["@for"], {k: x for k, x in e.items() if k != "@for"}
            ok = isinstance(loop, dict) and loop and all(
                isinstance(r, list) and len(r) == 2 and all(type(i) is int for i in r) and r[0] <= r[1] for r in loop.values())
            if not ok or len({r[1] - r[0] for r in loop.values()}) != 1:
                raise ValueError(f"\"@for\" = {loop!r}: give {{ key = [first, last] }}, integers, ranges of equal length")
            n = next(iter(loop.values()))
            for i in range(n[1] - n[0] + 1):
                out.append({**{k: r[0] + i for k, r in loop.items()}, **copy.deepcopy(rest)})
        return out

    data = walk(data, ())
    if set(defs) - used:
        raise ValueError(f"[defs] entries never used: {', '.join(sorted(set(defs) - used))}")
    return data


def load_specs() -> Dict[str, FigureSpec]:
    """Every bundled figure spec, by id (sorted by paper then figure number)."""
    out: Dict[str, FigureSpec] = {}
    for f in sorted(_figures_dir().iterdir(), key=lambda p: p.name):
        if not f.name.endswith(".toml"):
            continue
        try:
            data = expand_defs(tomllib.loads(f.read_text()))
            spec = FigureSpec.model_validate(data)
        except (tomllib.TOMLDecodeError, ValidationError, ValueError) as e:
            raise ScenarioError(f"figure spec {f.name}: {e}") from None
        if spec.id != f.name[:-5]:
            raise ScenarioError(f"figure spec {f.name}: id = '{spec.id}' must equal the file name")
        out[spec.id] = spec
    return dict(sorted(out.items(), key=lambda kv: _order(kv[0])))


def _order(fid: str):
    """Paper order, then figure number; a paper's figures of our own (``fb-pisa``, ``fab-hw``)
    come after its numbered ones."""
    papers = ["fb", "fab", "abm", "cbm", "bshare"]
    paper, _, rest = fid.partition("-")
    if rest.startswith("fig"):
        num = "".join(ch for ch in rest if ch.isdigit())
        return (papers.index(paper) if paper in papers else 99, int(num or 0), rest)
    return (papers.index(paper) if paper in papers else 99, 10**6, rest)


def points(spec: FigureSpec, scale: str, seeds: Optional[List[int]] = None, overrides: Optional[Dict[str, Any]] = None):
    """The runs of a packet figure: a list of (series name, x, seed, scenario dict)."""
    from ..scenario.load import load_scenario
    from ..scenario.overrides import set_path
    from ..scenario.profiles import strip_profile_keys

    if scale not in SCALES:
        raise ScenarioError(f"--scale {scale!r}: allowed: {', '.join(SCALES)}")
    sc, base, name = load_scenario(spec.scenario.base)
    # Keys a profile may set stay unset unless the base scenario set them itself: a full dump
    # would pin sharebuf's defaults and the spec's `profile = "ns3dc"` would apply nothing.
    base_dict = strip_profile_keys(sc, sc.model_dump(exclude_none=True))
    base_dict["name"] = spec.id
    sca = spec.scale(scale)
    xs = sca.x_values or spec.x.values
    out = []
    for s in spec.series:
        for x in spec.series_x(s, xs):
            for seed in (seeds or sca.seeds):
                d = copy.deepcopy(base_dict)
                for layer in (spec.scenario.set, sca.set, {spec.x.key: x}, _at_x(spec.x.set, x), s.set,
                              _at_x(s.x_set, x), overrides or {}):
                    for k, v in layer.items():
                        set_path(d, k, copy.deepcopy(v))
                d["seed"] = int(seed)
                out.append((s.name, x, int(seed), d))
    return out


# ----------------------------------------------------------------------------- the why rule
import re as _re

#: References that carry digits but no measurement: sections, figures, tables, equations,
#: RFCs, ns-3 versions, figures.md's assumption labels (A-X6), issue numbers.
_REFS = _re.compile(r"§\s*[\d.]+(?:\s*[-–]\s*[\d.]+)?|\b(?:Figs?|Figures?|Tables?|Eqs?|Equations?|RFC|Sections?|Sec|Alg|Algorithm)\.?"
                    r"\s*\(?\d+[a-z]?(?:\.\d+)*\)?(?:\s*(?:[-–,]|and)\s*\(?\d+[a-z]?(?:\.\d+)*\)?)*|ns-?3[.\d]*|\b[A-Z]+(?:-[A-Z]+)*-[A-Z]?\d+\b"
                    r"|#\d+|\b[A-Za-z]+\d+[A-Za-z\d]*\b|\d+[a-z]\b")
_NUM = _re.compile(r"(?<![\w.])(\d+(?:[.,]\d+)*)(\s*(?:%|×|x\b|-fold|times\b))?")
_OF = _re.compile(r"\b\d[\d,]*\s+(?:of|out of)\s+(?:the\s+|its\s+|their\s+)?\d[\d,]*\b|\b\d+\s*/\s*\d+\b(?!\s*(?:Gbps|µs|us|ms|s)\b)")


def _numbers(obj) -> set:
    """Every number written in ``obj`` (str, number, list, dict), normalised (``0.50`` = ``0.5``)."""
    out = set()
    if isinstance(obj, bool):
        return out
    if isinstance(obj, (int, float)):
        out.add(_norm(str(obj)))
    elif isinstance(obj, str):
        for m in _re.finditer(r"\d+(?:\.\d+)?", obj):
            out.add(_norm(m.group(0)))
    elif isinstance(obj, dict):
        for k, v in obj.items():
            out |= _numbers(k) | _numbers(v)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            out |= _numbers(v)
    return out


def _norm(t: str) -> str:
    t = t.replace(",", "")
    try:
        v = float(t)
    except ValueError:
        return t
    return repr(round(v, 9)).rstrip("0").rstrip(".") if "." in repr(v) else repr(v)


def why_lint(spec: "FigureSpec") -> List[str]:
    """Measured numbers quoted in the spec's claim ``why`` texts (and ``[ns3dc].about``), as
    "claim id: '...'" strings; an empty list when there are none.

    The rule: a ``why`` explains a mechanism; every number the report shows beside a claim is
    computed from the runs it rendered. So a ``why`` may carry plain integers (a 10 ms RTO, a
    100-packet FIFO, 32 servers) and references (§4.2, Fig. 7, RFC 6937, ns-3.39, A-X6), but a
    decimal, a percentage or a multiplier (``1.5``, ``12%``, ``8×``) only if the same number is
    written elsewhere in the spec outside the ``why`` texts (the claim's text, its paper value and
    bounds, x values as written or displayed, the scenario, series and scale settings), and no
    count of the form "N of M" or "N/M" unless both numbers are such settings ("1/10 RTT")."""
    base = spec.model_dump(exclude={"claims", "ns3dc", "description", "sources"})
    allowed = _numbers(base)
    if spec.x is not None:
        allowed |= {_norm(str(round(float(v) * spec.x.display_scale, 9))) for v in spec.x.values if isinstance(v, (int, float))}
    texts = [(c.id, c.why, _numbers([c.text, c.paper_value, c.min, c.max, c.at, c.inversions])) for c in spec.claims]
    if spec.ns3dc is not None:
        texts.append(("[ns3dc].about", spec.ns3dc.about, set()))
    bad = []
    for cid, text, own in texts:
        ok = allowed | own
        body = _REFS.sub(" ", text)
        for m in _OF.finditer(body):
            if not {_norm(n) for n in _re.findall(r"\d[\d,]*", m.group(0))} <= ok:
                bad.append(f"{cid}: '{m.group(0).strip()}' (a count from a run)")
        for m in _NUM.finditer(_OF.sub(" ", body)):
            num, unit = m.group(1), (m.group(2) or "").strip()
            decimal = "." in num
            if (decimal or unit) and _norm(num) not in ok:
                bad.append(f"{cid}: '{m.group(0).strip()}'")
    return bad

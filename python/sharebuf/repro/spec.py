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
    note: str = ""


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
        return self

    def scale(self, name: str) -> Scale:
        if name in self.scales:
            return self.scales[name]
        if name == "tiny" and "quick" in self.scales:
            return self.scales["quick"]
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


def load_specs() -> Dict[str, FigureSpec]:
    """Every bundled figure spec, by id (sorted by paper then figure number)."""
    out: Dict[str, FigureSpec] = {}
    for f in sorted(_figures_dir().iterdir(), key=lambda p: p.name):
        if not f.name.endswith(".toml"):
            continue
        try:
            data = tomllib.loads(f.read_text())
            spec = FigureSpec.model_validate(data)
        except (tomllib.TOMLDecodeError, ValidationError) as e:
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

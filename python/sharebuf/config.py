"""Scenario configuration: the TOML schema, its validation, and its resolution into the
engine spec the Rust core runs.

Every key carries its unit in its name (``_bytes``, ``_us``, ``_ms``, ``_gbps``); the full
reference with defaults is ``docs/scenario.md``. Unknown keys, wrong types and out-of-range
values raise :class:`ScenarioError` naming the key, the value and what is allowed.
"""

from __future__ import annotations

import csv
import json
import sys
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Dict, List, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, model_validator

from .errors import ScenarioError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

PS_PER_US = 1_000_000
PS_PER_MS = 1_000_000_000
PS_PER_S = 1_000_000_000_000
BUNDLED_CDFS = ("websearch", "datamining", "hadoop")


class Section(BaseModel):
    """A TOML table: unknown keys are errors that list the allowed ones."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True, allow_inf_nan=False)

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, data: Any) -> Any:
        if isinstance(data, dict):
            allowed = set(cls.model_fields)
            for k in data:
                if k not in allowed:
                    raise ValueError(f"unknown key '{k}'; allowed: {', '.join(sorted(allowed))}")
        return data


PosFloat = Annotated[float, Field(gt=0)]
NonNegFloat = Annotated[float, Field(ge=0)]
Priority = Annotated[int, Field(ge=0, le=7)]


# ----------------------------------------------------------------------------- topology
class LeafSpine(Section):
    kind: Literal["leaf_spine"]
    leaves: Annotated[int, Field(ge=1)] = 2
    spines: Annotated[int, Field(ge=1)] = 2
    servers_per_leaf: Annotated[int, Field(ge=1)] = 16
    links_per_leaf_spine: Annotated[int, Field(ge=1)] = 1
    host_link_gbps: PosFloat = 10.0
    #: Default: full bisection (servers_per_leaf x host rate spread over the uplinks).
    fabric_link_gbps: Optional[PosFloat] = None
    link_delay_us: NonNegFloat = 10.0
    #: "salted": an independent ECMP hash at every switch; "same": one hash at every switch
    #: (ns-3 global routing, the ABM authors' simulator: hash polarization).
    ecmp_hash: Literal["salted", "same"] = "salted"

    def fabric_gbps(self) -> float:
        if self.fabric_link_gbps is not None:
            return self.fabric_link_gbps
        return self.servers_per_leaf * self.host_link_gbps / (self.spines * self.links_per_leaf_spine)

    @property
    def n_hosts(self) -> int:
        return self.leaves * self.servers_per_leaf

    def leaf_port_gbps(self) -> float:
        return self.servers_per_leaf * self.host_link_gbps + self.spines * self.links_per_leaf_spine * self.fabric_gbps()

    def max_base_rtt_us(self) -> float:
        return 2 * (4 if self.leaves > 1 else 2) * self.link_delay_us

    def engine(self) -> dict:
        return dict(kind="leaf_spine", leaves=self.leaves, spines=self.spines, servers_per_leaf=self.servers_per_leaf,
                    links_per_leaf_spine=self.links_per_leaf_spine, host_link_bps=bps(self.host_link_gbps),
                    fabric_link_bps=bps(self.fabric_gbps()), link_delay_ps=us(self.link_delay_us), ecmp_hash=self.ecmp_hash)


class Star(Section):
    kind: Literal["star"]
    hosts: Annotated[int, Field(ge=2)] = 8
    link_gbps: PosFloat = 10.0
    link_delay_us: NonNegFloat = 1.0

    @property
    def n_hosts(self) -> int:
        return self.hosts

    #: Accepted for profiles; a star has one path, so it has no effect.
    ecmp_hash: Literal["salted", "same"] = "salted"

    @property
    def host_link_gbps(self) -> float:
        return self.link_gbps

    def leaf_port_gbps(self) -> float:
        return self.hosts * self.link_gbps

    def max_base_rtt_us(self) -> float:
        return 4 * self.link_delay_us

    def engine(self) -> dict:
        return dict(kind="star", hosts=self.hosts, link_bps=bps(self.link_gbps), link_delay_ps=us(self.link_delay_us))


Topology = Annotated[Union[LeafSpine, Star], Field(discriminator="kind")]


# ----------------------------------------------------------------------------- switch
class BmSection(BaseModel):
    """``[switch.bm]``: ``scheme`` plus the scheme's own parameters (see docs/schemes/)."""

    model_config = ConfigDict(extra="allow")
    scheme: str = "dt"


class SwitchSection(Section):
    #: Shared buffer per switch. Give this or buffer_kb_per_port_per_gbps.
    buffer_bytes: Optional[Annotated[int, Field(gt=0)]] = None
    #: Buffer sized like a Trident2 (9.6 KB per port per Gbps), summed over a leaf's ports.
    buffer_kb_per_port_per_gbps: Optional[PosFloat] = None
    queues_per_port: Annotated[int, Field(ge=1, le=8)] = 1
    scheduler: Literal["sp", "rr", "drr"] = "rr"
    drr_weights: Optional[List[Annotated[int, Field(ge=1)]]] = None
    drr_quantum_bytes: Annotated[int, Field(ge=1)] = 1500
    #: ECN step-marking threshold per queue (one value, or one per queue); omit for none.
    ecn_k_bytes: Optional[Union[Annotated[int, Field(ge=0)], List[Annotated[int, Field(ge=0)]]]] = None
    #: Per-port device FIFO (packets) below the buffer manager, outside the shared buffer, as
    #: ns-3's PointToPointNetDevice queue (100 p by default there); 0: none.
    device_queue_packets: Annotated[int, Field(ge=0, le=100_000)] = 0
    #: "wire": payload + headers; "ip_payload": wire minus point-to-point (2 B) and IPv4 (20 B)
    #: headers, as ns-3 queue discs count (1432 B per 1400 B segment with timestamps, 32 B per ACK).
    buffer_accounting: Literal["wire", "ip_payload"] = "wire"
    bm: BmSection = Field(default_factory=BmSection)


class HostSection(Section):
    #: ECN step marking at the host NIC queue (as ns-3 with RED on host NICs). Default
    #: "switch": the switch's (smallest) ecn_k_bytes when the switch marks, else none;
    #: "none": never mark; or a threshold in bytes.
    nic_ecn_k_bytes: Union[Annotated[int, Field(ge=0)], Literal["switch", "none"]] = "switch"
    #: Host NIC queue discipline: "fifo" (unbounded) or "fq_codel" (RFC 8290 over RFC 8289 CoDel
    #: with ns-3.39's defaults: ns-3's default root queue disc on a host).
    nic_qdisc: Literal["fifo", "fq_codel"] = "fifo"
    #: Device FIFO (packets) below the host NIC's queue discipline (ns-3: 100); 0: none.
    device_queue_packets: Annotated[int, Field(ge=0, le=100_000)] = 0


class TransportSection(Section):
    cc: str = "newreno"
    cc_params: Dict[str, Any] = Field(default_factory=dict)
    mss_bytes: Annotated[int, Field(ge=1, le=65000)] = 1448
    header_bytes: Annotated[int, Field(ge=0, le=1000)] = 54
    init_cwnd_packets: Annotated[int, Field(ge=1)] = 10
    min_rto_us: PosFloat = 10_000.0
    #: RTO before the first RTT sample (default: min_rto_us).
    initial_rto_us: Optional[PosFloat] = None
    max_rto_us: PosFloat = 1_000_000.0
    handshake: bool = True
    delayed_ack_packets: Annotated[int, Field(ge=1)] = 1
    delayed_ack_timeout_us: PosFloat = 200.0
    ack_priority: Priority = 0
    #: First bytes of each flow tagged unscheduled (default: one BDP of the longest path).
    unscheduled_bytes: Optional[Annotated[int, Field(ge=0)]] = None
    unscheduled_acks: bool = True
    #: Selective acknowledgments with RFC 6675 loss recovery (ns-3 and the ABM code use SACK);
    #: false: NewReno recovery (RFC 6582).
    sack: bool = True
    #: RTT samples from RFC 7323 timestamps on a clock of this tick (0: exact send times).
    #: ns-3 (and so ns3dc, which enables timestamps) ticks in 1 ms: 1000; a zero tick
    #: difference counts as 1 us there.
    timestamp_tick_us: Annotated[float, Field(ge=0)] = 0.0
    #: SACK loss recovery: "rfc6675" (cwnd = ssthresh during recovery) or "prr" (Proportional
    #: Rate Reduction, RFC 6937, slow-start reduction bound; ns-3.39's default). Needs sack.
    recovery: Literal["rfc6675", "prr"] = "rfc6675"


# ----------------------------------------------------------------------------- workloads
class CcChoice(Section):
    """Per-workload (per-class) congestion control, overriding ``[transport].cc``."""

    #: Congestion control of this workload's flows (default: ``[transport].cc``).
    cc: Optional[str] = None
    cc_params: Dict[str, Any] = Field(default_factory=dict)


class PoissonWorkload(CcChoice):
    kind: Literal["poisson"]
    name: Optional[str] = None
    #: A bundled CDF name (websearch, datamining, hadoop) or a file path (relative to the scenario).
    cdf: str = "websearch"
    load: NonNegFloat = 0.4
    #: "host": fraction of each sender's host-link capacity; "uplink": utilization of a
    #: leaf's uplinks, as the ABM code defines load.
    load_definition: Literal["host", "uplink"] = "host"
    destinations: Optional[Literal["inter_leaf", "all_to_all"]] = None
    sources: Optional[List[Annotated[int, Field(ge=0)]]] = None
    priority: Priority = 1
    start_ms: NonNegFloat = 0.0


class IncastWorkload(CcChoice):
    kind: Literal["incast"]
    name: Optional[str] = None
    request_bytes: Optional[Annotated[int, Field(gt=0)]] = None
    request_fraction_of_buffer: Optional[PosFloat] = None
    fan_in: Annotated[int, Field(ge=1)] = 16
    queries_per_s_per_host: NonNegFloat = 2.0
    requesters: Optional[List[Annotated[int, Field(ge=0)]]] = None
    responders: Literal["other_leaf", "any"] = "other_leaf"
    priority: Priority = 1
    start_ms: NonNegFloat = 0.0


class FlowEntry(Section):
    src: Annotated[int, Field(ge=0)]
    dst: Annotated[int, Field(ge=0)]
    size_bytes: Annotated[int, Field(ge=1)]
    start_s: Optional[NonNegFloat] = None
    start_ms: Optional[NonNegFloat] = None
    priority: Optional[Priority] = None
    #: Incast query id (flows sharing one form a query with a QCT in queries.parquet).
    query: Optional[Annotated[int, Field(ge=0)]] = None
    #: Open with a handshake (default: the workload's ``handshake``); false: pre-opened.
    handshake: Optional[bool] = None


class FlowsWorkload(CcChoice):
    kind: Literal["flows"]
    name: Optional[str] = None
    #: CSV or Parquet with columns id,src,dst,size_bytes,start_s[,priority,query,handshake], relative to the scenario.
    file: Optional[str] = None
    flows: Optional[List[FlowEntry]] = None
    priority: Priority = 1
    #: Open each flow with a handshake (default: ``[transport].handshake``); false: connections
    #: opened beforehand, as incast responses (a row's own ``handshake`` wins).
    handshake: Optional[bool] = None


class CbrEntry(Section):
    src: Annotated[int, Field(ge=0)]
    dst: Annotated[int, Field(ge=0)]
    rate_gbps: PosFloat
    start_ms: NonNegFloat = 0.0
    stop_ms: NonNegFloat
    priority: Optional[Priority] = None
    packet_bytes: Optional[Annotated[int, Field(ge=1, le=65000)]] = None


class CbrWorkload(Section):
    kind: Literal["cbr"]
    name: Optional[str] = None
    flows: List[CbrEntry]
    priority: Priority = 1


Workload = Annotated[Union[PoissonWorkload, IncastWorkload, FlowsWorkload, CbrWorkload], Field(discriminator="kind")]


class OutputSection(Section):
    #: Sampling period of each switch's buffer occupancy (0: off).
    buffer_sample_us: NonNegFloat = 100.0
    #: Sampling period of every queue's occupancy (0 or omitted: off; it can be large).
    queue_sample_us: NonNegFloat = 0.0


class DebugSection(Section):
    #: Check the engine's invariants (conservation of packets and bytes, buffer accounting,
    #: empty pools after the drain, no event in the past) at every sample tick and at the end
    #: of the run; a violation stops the run with a message naming it. Debug builds always check.
    check_invariants: bool = False


# ----------------------------------------------------------------------------- profiles
#: Named compatibility profiles: dotted-key defaults applied under the user's own keys (a key
#: the scenario sets itself wins). ``profile = "none"`` (or no profile) is sharebuf's defaults.
#: docs/scenario.md ("Profiles") and docs/validation.md give each setting's reason.
PROFILES: Dict[str, Dict[str, Any]] = {
    # The ABM/Reverie/Credence authors' ns-3.39 fork (inet-tub/ns3-datacenter, "ns3dc").
    "ns3dc": {
        "topology.ecmp_hash": "same",                # ns-3 global routing: one hash at every switch
        "switch.device_queue_packets": 100,          # PointToPointNetDevice DropTailQueue 100p below each queue disc
        "switch.buffer_accounting": "ip_payload",    # queue discs count 1432 B / 32 B, not 1454 / 54
        "transport.max_rto_us": 60e6,                # ns-3 TcpSocketBase MaxRto 60 s
        "host.nic_qdisc": "fq_codel",                # ns-3's default root queue disc on the servers
        "host.device_queue_packets": 100,            # their PointToPointNetDevice queue, 100 p
        "transport.recovery": "prr",                 # ns-3.39 TcpPrrRecovery (RFC 6937) over SACK
        "transport.timestamp_tick_us": 1000,         # ns-3 TCP timestamps count whole ms: RTT samples at
                                                     # datacenter RTTs read 1 µs, so HyStart's ack train fires
                                                     # at 16 segments (docs/transports/cubic.md)
        # Cubic's classic HyStart (ns-3.39 TcpCubic HyStart=true) is sharebuf's default already.
    },
}


def apply_profile(data: dict) -> tuple[dict, Dict[str, Any]]:
    """Apply ``data["profile"]``'s dotted-key defaults under the scenario's own keys.

    Returns a new dict and the settings the profile made (dotted key -> value); keys the
    scenario sets itself are left as they are and are not listed.
    """
    name = data.get("profile")
    if name is None or name == "none":
        return data, {}
    if not isinstance(name, str) or name not in PROFILES:
        raise ScenarioError(f"profile = {name!r}: unknown profile; allowed: {', '.join(['none', *PROFILES])}")
    import copy

    out = copy.deepcopy(data)
    applied: Dict[str, Any] = {}
    for dotted, value in PROFILES[name].items():
        *path, leaf = dotted.split(".")
        d = out
        for part in path:
            nxt = d.setdefault(part, {})
            if not isinstance(nxt, dict):
                raise ScenarioError(f"{'.'.join(path)}: expected a table (profile '{name}' sets {dotted})")
            d = nxt
        if leaf not in d:
            d[leaf] = value
            applied[dotted] = value
    return out, applied


def strip_profile_keys(sc: "Scenario", d: dict) -> dict:
    """Remove from ``d`` (a dump of ``sc``) every key a profile may set that the scenario did not
    set itself, so that a changed ``profile`` (e.g. a sweep over it) applies afresh."""
    for dotted in {k for table in PROFILES.values() for k in table}:
        *path, leaf = dotted.split(".")
        m: Any = sc
        dd: Any = d
        for part in path:
            m = m.get(part) if isinstance(m, dict) else getattr(m, part, None)
            dd = dd.get(part) if isinstance(dd, dict) else None
            if m is None or dd is None:
                break
        else:
            own = m if isinstance(m, dict) else getattr(m, "model_fields_set", set())
            if leaf not in own or dotted in sc._profile_set:
                dd.pop(leaf, None)
    return d


class Scenario(Section):
    #: A named compatibility profile ("ns3dc"), or "none" (sharebuf's defaults).
    profile: Optional[Literal["none", "ns3dc"]] = None
    seed: Annotated[int, Field(ge=0, lt=2**64)] = 1
    #: Hard stop: the run ends here; unfinished flows are reported unfinished.
    max_ms: PosFloat = 100.0
    #: Workloads create no flow at or after this time (default: max_ms).
    arrivals_until_ms: Optional[NonNegFloat] = None
    name: Optional[str] = None
    description: Optional[str] = None
    topology: Topology
    switch: SwitchSection = Field(default_factory=SwitchSection)
    host: HostSection = Field(default_factory=HostSection)
    transport: TransportSection = Field(default_factory=TransportSection)
    workload: List[Workload] = Field(default_factory=list)
    output: OutputSection = Field(default_factory=OutputSection)
    debug: DebugSection = Field(default_factory=DebugSection)
    #: Written by sharebuf into a run's scenario.toml (version, input-file hashes); checked when run again.
    recorded: Optional[Dict[str, Any]] = None
    #: Settings the profile made (dotted key -> value), for the run's summary.
    _profile_set: Dict[str, Any] = PrivateAttr(default_factory=dict)

    def profile_report(self) -> dict:
        return {"name": self.profile or "none", "set": dict(self._profile_set)}


# ----------------------------------------------------------------------------- helpers
def bps(gbps: float) -> int:
    return int(round(gbps * 1e9))


def us(x: float) -> int:
    return int(round(x * PS_PER_US))


def ms(x: float) -> int:
    return int(round(x * PS_PER_MS))


def _fmt_loc(loc: tuple) -> str:
    out = ""
    for i, part in enumerate(loc):
        prev = loc[i - 1] if i else None
        prev2 = loc[i - 2] if i > 1 else None
        # pydantic puts the discriminator tag of a union into the path: drop it
        is_tag = (prev == "topology") or (isinstance(prev, int) and prev2 == "workload")
        if is_tag and part in ("leaf_spine", "star", "poisson", "incast", "flows", "cbr"):
            continue
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "(top level)"


def format_validation_error(e: ValidationError) -> str:
    lines = []
    for err in e.errors():
        loc = _fmt_loc(tuple(err["loc"]))
        msg = err["msg"]
        msg = msg.removeprefix("Value error, ")
        if err["type"] == "union_tag_invalid":
            msg = msg.replace("Input tag", "kind")
        if "input" in err and err["type"] not in ("missing", "value_error", "union_tag_invalid") and not isinstance(err["input"], (dict, list)):
            lines.append(f"{loc} = {err['input']!r}: {msg}")
        else:
            lines.append(f"{loc}: {msg}")
    return "; ".join(lines)


def parse_scenario(data: dict) -> Scenario:
    data, applied = apply_profile(data)
    try:
        sc = Scenario.model_validate(data)
    except ValidationError as e:
        raise ScenarioError(format_validation_error(e)) from None
    sc._profile_set = applied
    return sc


def bundled_scenarios() -> List[str]:
    d = resources.files("sharebuf") / "scenarios"
    return sorted(p.name[:-5] for p in d.iterdir() if p.name.endswith(".toml"))


def load_scenario(source: Union[str, Path, dict, None], profile: Optional[str] = None) -> tuple[Scenario, Path, str]:
    """Load a scenario from a TOML path, a bundled scenario name, or a dict.

    ``profile`` replaces the scenario's own ``profile`` key ("none": sharebuf's defaults).
    Returns the validated scenario, the directory relative file names resolve against,
    and a display name.
    """
    if source is None:
        source = "default"
    if isinstance(source, dict):
        data = source if profile is None else {**source, "profile": profile}
        return parse_scenario(data), Path.cwd(), str(source.get("name", "scenario"))
    p = Path(source)
    if p.suffix == ".toml" or p.exists():
        if not p.is_file():
            raise ScenarioError(f"scenario '{source}': no such file (bundled scenarios: {', '.join(bundled_scenarios())})")
        text = p.read_text()
        base, name = p.resolve().parent, p.stem
    else:
        f = resources.files("sharebuf") / "scenarios" / f"{source}.toml"
        if not f.is_file():
            raise ScenarioError(f"scenario '{source}': not a file nor a bundled scenario; bundled: {', '.join(bundled_scenarios())}")
        text, base, name = f.read_text(), Path.cwd(), str(source)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ScenarioError(f"scenario '{source}': invalid TOML: {e}") from None
    if profile is not None:
        data["profile"] = profile
    sc = parse_scenario(data)
    return sc, base, sc.name or name


def absolute_file_inputs(d: dict, base: Path) -> List[str]:
    """Make the file inputs of a scenario dict (workload ``cdf`` files that are not bundled CDFs,
    flow-list ``file``s) absolute against ``base``, the scenario's directory, where they exist
    there; return the absolute paths of every file input."""
    paths = []
    for w in d.get("workload", []):
        for k in ("cdf", "file"):
            ref = w.get(k)
            if not isinstance(ref, str) or (k == "cdf" and ref in BUNDLED_CDFS):
                continue
            p = Path(ref)
            if not p.is_absolute() and (base / p).exists():
                p = base / p
            if p.is_absolute():
                w[k] = str(p.resolve())
                paths.append(w[k])
    return paths


def read_cdf(ref: str, base: Path, key: str) -> List[tuple]:
    if ref in BUNDLED_CDFS:
        text = (resources.files("sharebuf") / "workloads" / f"{ref}.cdf").read_text()
    else:
        p = Path(ref)
        if not p.is_absolute():
            p = base / p
        if not p.is_file():
            raise ScenarioError(f"{key} = '{ref}': not a bundled CDF ({', '.join(BUNDLED_CDFS)}) nor a readable file")
        text = p.read_text()
    pts = []
    for i, line in enumerate(text.splitlines()):
        line = line.split("#")[0].strip()
        if not line:
            continue
        parts = line.replace(",", " ").split()
        try:
            x, c = float(parts[0]), float(parts[-1])
        except (ValueError, IndexError):
            raise ScenarioError(f"{key} = '{ref}': line {i + 1} is not 'bytes cumulative_probability': {line!r}") from None
        pts.append((x, c))
    if len(pts) < 2 or abs(pts[-1][1] - 1.0) > 1e-9:
        raise ScenarioError(f"{key} = '{ref}': a CDF needs >= 2 points ending at probability 1")
    for (x0, c0), (x1, c1) in zip(pts, pts[1:]):
        if x1 < x0 or c1 < c0:
            raise ScenarioError(f"{key} = '{ref}': sizes and probabilities must be non-decreasing")
    return pts


def cdf_mean_bytes(pts: List[tuple]) -> float:
    m = pts[0][0] * pts[0][1]
    for (x0, c0), (x1, c1) in zip(pts, pts[1:]):
        m += (c1 - c0) * (x0 + x1) / 2
    return m


def read_flow_file(ref: str, base: Path, key: str) -> List[dict]:
    p = Path(ref)
    if not p.is_absolute():
        p = base / p
    if not p.is_file():
        raise ScenarioError(f"{key} = '{ref}': no such file")
    if p.suffix.lower() == ".parquet":
        import pyarrow.parquet as pq

        rows = pq.read_table(p).to_pylist()
    else:
        with p.open(newline="") as fh:
            rows = list(csv.DictReader(fh))
    need = {"src", "dst", "size_bytes", "start_s"}
    if rows and not need <= set(rows[0]):
        raise ScenarioError(f"{key} = '{ref}': columns {sorted(rows[0])} lack {sorted(need - set(rows[0]))}; expected id,src,dst,size_bytes,start_s[,priority]")
    out = []
    for i, r in enumerate(rows):
        try:
            out.append(dict(src=int(r["src"]), dst=int(r["dst"]), size_bytes=int(float(r["size_bytes"])), start_s=float(r["start_s"]),
                            priority=None if r.get("priority") in (None, "") else int(r["priority"]),
                            query=None if r.get("query") in (None, "") or int(r["query"]) < 0 else int(r["query"])))
        except (TypeError, ValueError):
            raise ScenarioError(f"{key} = '{ref}': row {i + 1} has a non-numeric value: {r}") from None
        hs = r.get("handshake")
        if hs in (None, ""):
            out[-1]["handshake"] = None
        elif str(hs).lower() in _BOOLS:
            out[-1]["handshake"] = _BOOLS[str(hs).lower()]
        else:
            raise ScenarioError(f"{key} = '{ref}': row {i + 1}: handshake = {hs!r}; allowed: true, false, 1, 0 or empty")
        if not 0 <= out[-1]["start_s"] < float("inf"):  # NaN and infinities too (found by bench/fuzz.py)
            raise ScenarioError(f"{key} = '{ref}': row {i + 1}: start_s = {r['start_s']}; allowed: a finite number >= 0")
        if out[-1]["size_bytes"] < 1 or out[-1]["start_s"] < 0 or out[-1]["src"] < 0 or out[-1]["dst"] < 0:
            raise ScenarioError(f"{key} = '{ref}': row {i + 1}: size_bytes must be >= 1, start_s >= 0, hosts >= 0: {r}")
    return out


_BOOLS = {"true": True, "1": True, "false": False, "0": False}


# ----------------------------------------------------------------------------- resolution
def resolve(sc: Scenario, base: Path) -> dict:
    """Turn a validated scenario into the engine spec (integer ps, bps, bytes)."""
    from . import _core

    topo = sc.topology
    sw = sc.switch
    if sw.bm.scheme not in _core.schemes():
        raise ScenarioError(f"switch.bm.scheme = '{sw.bm.scheme}': unknown scheme; allowed: {', '.join(_core.schemes())}")
    if sc.transport.cc not in _core.congestion_controls():
        raise ScenarioError(f"transport.cc = '{sc.transport.cc}': unknown congestion control; allowed: {', '.join(_core.congestion_controls())}")
    if (sw.buffer_bytes is None) == (sw.buffer_kb_per_port_per_gbps is None):
        raise ScenarioError("switch: give exactly one of buffer_bytes or buffer_kb_per_port_per_gbps")
    buffer_bytes = sw.buffer_bytes or int(sw.buffer_kb_per_port_per_gbps * 1024 * topo.leaf_port_gbps())
    arrivals_ms = sc.max_ms if sc.arrivals_until_ms is None else sc.arrivals_until_ms
    n_hosts = topo.n_hosts
    t = sc.transport
    host_bps = bps(topo.host_link_gbps)
    unsched = t.unscheduled_bytes
    if unsched is None:
        unsched = int(host_bps * topo.max_base_rtt_us() * 1e-6 / 8)
    ecn = sw.ecn_k_bytes
    ecn = [] if ecn is None else ([ecn] if isinstance(ecn, int) else list(ecn))
    bm_params = {k: v for k, v in (sw.bm.model_extra or {}).items()}
    workloads = []
    ccs = _core.congestion_controls()
    for i, w in enumerate(sc.workload):
        key = f"workload[{i}]"
        name = w.name or w.kind
        cc = None
        if getattr(w, "cc", None) is not None:
            if w.cc not in ccs:
                raise ScenarioError(f"{key}.cc = '{w.cc}': unknown congestion control; allowed: {', '.join(ccs)}")
            cc = dict(name=w.cc, params=w.cc_params)
        elif getattr(w, "cc_params", None):
            raise ScenarioError(f"{key}.cc_params: given without {key}.cc")
        if isinstance(w, PoissonWorkload):
            pts = read_cdf(w.cdf, base, f"{key}.cdf")
            mean = cdf_mean_bytes(pts)
            if not mean >= 1:
                raise ScenarioError(f"{key}.cdf = '{w.cdf}': mean flow size {mean:g} B; a CDF of flow sizes needs a mean of at least 1 byte")
            dest = w.destinations or ("inter_leaf" if isinstance(topo, LeafSpine) and topo.leaves > 1 else "all_to_all")
            if dest == "inter_leaf" and not (isinstance(topo, LeafSpine) and topo.leaves > 1):
                raise ScenarioError(f"{key}.destinations = 'inter_leaf': needs a leaf_spine topology with >= 2 leaves; allowed here: all_to_all")
            if w.load_definition == "host":
                rate = w.load * host_bps / (8 * mean)
            else:
                if not isinstance(topo, LeafSpine):
                    raise ScenarioError(f"{key}.load_definition = 'uplink': needs a leaf_spine topology; allowed here: host")
                uplink_bps = topo.spines * topo.links_per_leaf_spine * bps(topo.fabric_gbps())
                rate = w.load * uplink_bps / (8 * mean * topo.servers_per_leaf)
            workloads.append(dict(kind="poisson", name=name, cdf=pts, rate_per_host_per_s=rate, destinations=dest,
                                  sources=w.sources or [], priority=w.priority, start_ps=ms(w.start_ms), cc=cc))
        elif isinstance(w, IncastWorkload):
            if (w.request_bytes is None) == (w.request_fraction_of_buffer is None):
                raise ScenarioError(f"{key}: give exactly one of request_bytes or request_fraction_of_buffer")
            req = w.request_bytes or int(w.request_fraction_of_buffer * buffer_bytes)
            workloads.append(dict(kind="incast", name=name, request_bytes=req, fan_in=w.fan_in,
                                  queries_per_s_per_host=w.queries_per_s_per_host, requesters=w.requesters or [],
                                  responders=w.responders, priority=w.priority, start_ps=ms(w.start_ms), cc=cc))
        elif isinstance(w, FlowsWorkload):
            if (w.file is None) == (w.flows is None):
                raise ScenarioError(f"{key}: give exactly one of file or flows")
            if w.file is not None:
                rows = read_flow_file(w.file, base, f"{key}.file")
            else:
                rows = []
                for j, f in enumerate(w.flows):
                    if (f.start_s is None) == (f.start_ms is None):
                        raise ScenarioError(f"{key}.flows[{j}]: give exactly one of start_s or start_ms")
                    rows.append(dict(src=f.src, dst=f.dst, size_bytes=f.size_bytes,
                                     start_s=f.start_s if f.start_s is not None else f.start_ms / 1e3, priority=f.priority,
                                     query=f.query, handshake=f.handshake))
            flows = []
            for j, r in enumerate(rows):
                for side in ("src", "dst"):
                    if r[side] >= n_hosts:
                        raise ScenarioError(f"{key} flow {j}: {side} = {r[side]}: no such host; hosts are 0..{n_hosts - 1}")
                if r["src"] == r["dst"]:
                    raise ScenarioError(f"{key} flow {j}: src = dst = {r['src']}; a flow needs two different hosts")
                flows.append(dict(src=r["src"], dst=r["dst"], size_bytes=r["size_bytes"], start_ps=int(round(r["start_s"] * PS_PER_S)),
                                  priority=w.priority if r["priority"] is None else r["priority"]))
                hs = w.handshake if r["handshake"] is None else r["handshake"]
                if hs is not None:
                    flows[-1]["handshake"] = hs
                if r["query"] is not None:
                    flows[-1]["query"] = r["query"]
            workloads.append(dict(kind="flows", name=name, flows=flows, cc=cc))
        elif isinstance(w, CbrWorkload):
            flows = []
            for j, f in enumerate(w.flows):
                for side in ("src", "dst"):
                    if getattr(f, side) >= n_hosts:
                        raise ScenarioError(f"{key}.flows[{j}].{side} = {getattr(f, side)}: no such host; hosts are 0..{n_hosts - 1}")
                if f.stop_ms < f.start_ms:
                    raise ScenarioError(f"{key}.flows[{j}].stop_ms = {f.stop_ms}: must be >= start_ms ({f.start_ms})")
                flows.append(dict(src=f.src, dst=f.dst, rate_bps=bps(f.rate_gbps), start_ps=ms(f.start_ms), stop_ps=ms(f.stop_ms),
                                  priority=w.priority if f.priority is None else f.priority,
                                  packet_bytes=f.packet_bytes or (t.mss_bytes + t.header_bytes)))
            workloads.append(dict(kind="cbr", name=name, flows=flows))
    for i, w in enumerate(sc.workload):
        for attr in ("sources", "requesters"):
            for h in getattr(w, attr, None) or []:
                if h >= n_hosts:
                    raise ScenarioError(f"workload[{i}].{attr}: host {h} does not exist; hosts are 0..{n_hosts - 1}")
    min_rto = us(t.min_rto_us)
    nic_k = sc.host.nic_ecn_k_bytes
    if nic_k == "switch":
        nic_k = min(ecn) if ecn else None
    elif nic_k == "none":
        nic_k = None
    spec = dict(
        seed=sc.seed,
        max_ps=ms(sc.max_ms),
        arrivals_until_ps=ms(arrivals_ms),
        topology=topo.engine(),
        switch=dict(buffer_bytes=buffer_bytes, queues_per_port=sw.queues_per_port, scheduler=sw.scheduler,
                    drr_weights=sw.drr_weights or [], drr_quantum_bytes=sw.drr_quantum_bytes, ecn_k_bytes=ecn,
                    device_queue_packets=sw.device_queue_packets, buffer_accounting=sw.buffer_accounting, bm=dict(scheme=sw.bm.scheme, params=bm_params)),
        host=dict(nic_ecn_k_bytes=nic_k, nic_qdisc=sc.host.nic_qdisc, device_queue_packets=sc.host.device_queue_packets),
        transport=dict(cc=t.cc, cc_params=t.cc_params, mss_bytes=t.mss_bytes, header_bytes=t.header_bytes,
                       init_cwnd_packets=t.init_cwnd_packets, min_rto_ps=min_rto,
                       initial_rto_ps=us(t.initial_rto_us) if t.initial_rto_us else min_rto, handshake=t.handshake,
                       delayed_ack_packets=t.delayed_ack_packets, delayed_ack_timeout_ps=us(t.delayed_ack_timeout_us),
                       ack_priority=t.ack_priority, unscheduled_bytes=unsched, unscheduled_acks=t.unscheduled_acks,
                       max_rto_ps=us(t.max_rto_us), sack=t.sack, timestamp_tick_ps=us(t.timestamp_tick_us), recovery=t.recovery),
        workloads=workloads,
        output=dict(buffer_sample_ps=us(sc.output.buffer_sample_us), queue_sample_ps=us(sc.output.queue_sample_us)),
    )
    if sc.debug.check_invariants:
        # Only when on: a default scenario's engine spec (and its hash) stays as it was.
        spec["debug"] = dict(check_invariants=True)
    return spec


def engine_spec_json(spec: dict) -> str:
    return json.dumps(spec, separators=(",", ":"))


__all__ = ["Scenario", "ScenarioError", "load_scenario", "resolve", "parse_scenario", "bundled_scenarios", "cdf_mean_bytes", "read_cdf"]

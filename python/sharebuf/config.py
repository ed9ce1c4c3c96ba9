"""Scenario configuration: the TOML schema, its validation, and its resolution into the
engine spec the Rust core runs.

Every key carries its unit in its name (``_bytes``, ``_us``, ``_ms``, ``_gbps``); the full
reference with defaults is ``docs/scenario.md``. Unknown keys, wrong types and out-of-range
values raise :class:`ScenarioError` naming the key, the value and what is allowed.
"""

# No ``from __future__ import annotations``: pydantic would compile and evaluate every field's
# annotation from its string when the models are built at import (issue 10: start-up).
import csv
import hashlib
import io
import json
import math
import sys
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Dict, List, Literal, Optional, Union

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, PrivateAttr, ValidationError, model_validator

from .errors import ScenarioError, did_you_mean

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def _empty_dict() -> dict:
    """Default factory (not ``dict``: pydantic reads a factory's signature, and a builtin's costs
    a tokenizer regex compiled at start-up; issue 10)."""
    return {}


def _empty_list() -> list:
    """Default factory (see :func:`_empty_dict`)."""
    return []


PS_PER_US = 1_000_000
PS_PER_MS = 1_000_000_000
PS_PER_S = 1_000_000_000_000
BUNDLED_CDFS = ("websearch", "datamining", "hadoop")


class Section(BaseModel):
    """A TOML table: unknown keys are errors that list the allowed ones."""

    #: inf and nan are refused everywhere ("Input should be a finite number").
    model_config = ConfigDict(extra="forbid", validate_assignment=True, allow_inf_nan=False)

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, data: Any) -> Any:
        if isinstance(data, dict):
            allowed = set(cls.model_fields)
            for k in data:
                if k not in allowed:
                    raise ValueError(f"unknown key '{k}'{did_you_mean(k, allowed)}; allowed: {', '.join(sorted(allowed))}")
        return data


def _not_bool(v: Any) -> Any:
    """pydantic's lax mode reads true as 1: a number key given a boolean is an error instead."""
    if isinstance(v, bool):
        raise ValueError("expected a number, got a boolean")
    return v


NotBool = BeforeValidator(_not_bool)


def _u64(v: int) -> int:
    if v >= 2**64:
        raise ValueError("above the largest seed; allowed: 0 .. 18446744073709551615 (2^64 - 1)")
    return v
PosFloat = Annotated[float, NotBool, Field(gt=0)]
NonNegFloat = Annotated[float, NotBool, Field(ge=0)]
Priority = Annotated[int, NotBool, Field(ge=0, le=7)]


# ----------------------------------------------------------------------------- topology
class LeafSpine(Section):
    kind: Literal["leaf_spine"]
    leaves: Annotated[int, NotBool, Field(ge=1)] = 2
    spines: Annotated[int, NotBool, Field(ge=1)] = 2
    servers_per_leaf: Annotated[int, NotBool, Field(ge=1)] = 16
    links_per_leaf_spine: Annotated[int, NotBool, Field(ge=1)] = 1
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
    hosts: Annotated[int, NotBool, Field(ge=2)] = 8
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


class FatTree(Section):
    """k-ary three-tier fat-tree (Al-Fares et al., SIGCOMM 2008); docs/scenario.md."""

    kind: Literal["fat_tree"]
    #: Switch radix: k pods of k/2 edge and k/2 aggregation switches, (k/2)^2 cores. At most
    #: 32 (8,192 hosts): the per-destination route tables grow as k^5 (~0.7 GB at k = 32).
    k: Annotated[int, Field(ge=2, le=32, multiple_of=2)] = 4
    #: Hosts under each edge switch (default k/2: full bisection; more oversubscribes).
    hosts_per_edge: Optional[Annotated[int, Field(ge=1, le=1024)]] = None
    host_link_gbps: PosFloat = 10.0
    #: Default: host_link_gbps (Al-Fares' identical links: hosts_per_edge = k/2 is full
    #: bisection, more hosts oversubscribe the edge uplinks hosts_per_edge : k/2).
    edge_agg_link_gbps: Optional[PosFloat] = None
    #: Default: edge_agg_link_gbps (an aggregation switch has k/2 links down and k/2 up).
    agg_core_link_gbps: Optional[PosFloat] = None
    #: Propagation delay of every link; the two fabric tiers may override it.
    link_delay_us: NonNegFloat = 10.0
    edge_agg_link_delay_us: Optional[NonNegFloat] = None
    agg_core_link_delay_us: Optional[NonNegFloat] = None
    ecmp_hash: Literal["salted", "same"] = "salted"

    @property
    def hpe(self) -> int:
        return self.hosts_per_edge if self.hosts_per_edge is not None else self.k // 2

    @property
    def n_hosts(self) -> int:
        return self.k * (self.k // 2) * self.hpe

    @property
    def leaves(self) -> int:
        """Edge switches (the leaves of the tree)."""
        return self.k * (self.k // 2)

    def ea_gbps(self) -> float:
        return self.edge_agg_link_gbps if self.edge_agg_link_gbps is not None else self.host_link_gbps

    def ac_gbps(self) -> float:
        return self.agg_core_link_gbps if self.agg_core_link_gbps is not None else self.ea_gbps()

    def delays_us(self) -> tuple:
        d = self.link_delay_us
        ea = d if self.edge_agg_link_delay_us is None else self.edge_agg_link_delay_us
        ac = d if self.agg_core_link_delay_us is None else self.agg_core_link_delay_us
        return d, ea, ac

    def leaf_port_gbps(self) -> float:
        """An edge switch's port capacity (the buffer_kb_per_port_per_gbps basis, as a leaf's)."""
        return self.hpe * self.host_link_gbps + (self.k // 2) * self.ea_gbps()

    def uplink_gbps(self) -> float:
        """Capacity of one edge switch's uplinks (load_definition = "uplink")."""
        return (self.k // 2) * self.ea_gbps()

    def max_base_rtt_us(self) -> float:
        return 4 * sum(self.delays_us())

    def engine(self) -> dict:
        d, ea, ac = self.delays_us()
        return dict(kind="fat_tree", k=self.k, hosts_per_edge=self.hpe, host_link_bps=bps(self.host_link_gbps),
                    edge_agg_link_bps=bps(self.ea_gbps()), agg_core_link_bps=bps(self.ac_gbps()),
                    host_link_delay_ps=us(d), edge_agg_link_delay_ps=us(ea), agg_core_link_delay_ps=us(ac),
                    ecmp_hash=self.ecmp_hash)


Topology = Annotated[Union[LeafSpine, FatTree, Star], Field(discriminator="kind")]


# ----------------------------------------------------------------------------- switch
class BmSection(BaseModel):
    """``[switch.bm]``: ``scheme`` plus the scheme's own parameters (see docs/schemes/)."""

    model_config = ConfigDict(extra="allow")
    scheme: str = "dt"


class SwitchSection(Section):
    #: Shared buffer per switch. Give this or buffer_kb_per_port_per_gbps.
    buffer_bytes: Optional[Annotated[int, NotBool, Field(gt=0)]] = None
    #: Buffer sized like a Trident2 (9.6 KB per port per Gbps), summed over a leaf's ports.
    buffer_kb_per_port_per_gbps: Optional[PosFloat] = None
    queues_per_port: Annotated[int, NotBool, Field(ge=1, le=8)] = 1
    scheduler: Literal["sp", "rr", "drr"] = "rr"
    drr_weights: Optional[List[Annotated[int, NotBool, Field(ge=1)]]] = None
    drr_quantum_bytes: Annotated[int, NotBool, Field(ge=1)] = 1500
    #: ECN step-marking threshold per queue (one value, or one per queue); omit for none.
    ecn_k_bytes: Optional[Union[Annotated[int, NotBool, Field(ge=0)], List[Annotated[int, NotBool, Field(ge=0)]]]] = None
    #: Per-port device FIFO (packets) below the buffer manager, outside the shared buffer, as
    #: ns-3's PointToPointNetDevice queue (100 p by default there); 0: none.
    device_queue_packets: Annotated[int, NotBool, Field(ge=0, le=100_000)] = 0
    #: "wire": payload + headers; "ip_payload": wire minus point-to-point (2 B) and IPv4 (20 B)
    #: headers, as ns-3 queue discs count (1432 B per 1400 B segment with timestamps, 32 B per ACK).
    buffer_accounting: Literal["wire", "ip_payload"] = "wire"
    bm: BmSection = Field(default_factory=BmSection)


class HostSection(Section):
    #: ECN step marking at the host NIC queue (as ns-3 with RED on host NICs). Default
    #: "switch": the switch's (smallest) ecn_k_bytes when the switch marks, else none;
    #: "none": never mark; or a threshold in bytes.
    nic_ecn_k_bytes: Union[Annotated[int, NotBool, Field(ge=0)], Literal["switch", "none"]] = "switch"
    #: Host NIC queue discipline: "fifo" (unbounded) or "fq_codel" (RFC 8290 over RFC 8289 CoDel
    #: with ns-3.39's defaults: ns-3's default root queue disc on a host).
    nic_qdisc: Literal["fifo", "fq_codel"] = "fifo"
    #: Device FIFO (packets) below the host NIC's queue discipline (ns-3: 100); 0: none.
    device_queue_packets: Annotated[int, NotBool, Field(ge=0, le=100_000)] = 0


class TransportSection(Section):
    cc: str = "newreno"
    cc_params: Dict[str, Any] = Field(default_factory=_empty_dict)
    mss_bytes: Annotated[int, NotBool, Field(ge=1, le=65000)] = 1448
    header_bytes: Annotated[int, NotBool, Field(ge=0, le=1000)] = 54
    init_cwnd_packets: Annotated[int, NotBool, Field(ge=1)] = 10
    min_rto_us: PosFloat = 10_000.0
    #: RTO before the first RTT sample (default: min_rto_us).
    initial_rto_us: Optional[PosFloat] = None
    max_rto_us: PosFloat = 1_000_000.0
    handshake: bool = True
    delayed_ack_packets: Annotated[int, NotBool, Field(ge=1)] = 1
    delayed_ack_timeout_us: PosFloat = 200.0
    ack_priority: Priority = 0
    #: First bytes of each flow tagged unscheduled (default: one BDP of the longest path).
    unscheduled_bytes: Optional[Annotated[int, NotBool, Field(ge=0)]] = None
    unscheduled_acks: bool = True
    #: Selective acknowledgments with RFC 6675 loss recovery (ns-3 and the ABM code use SACK);
    #: false: NewReno recovery (RFC 6582).
    sack: bool = True
    #: RTT samples from RFC 7323 timestamps on a clock of this tick (0: exact send times).
    #: ns-3 (and so ns3dc, which enables timestamps) ticks in 1 ms: 1000; a zero tick
    #: difference counts as 1 us there.
    timestamp_tick_us: Annotated[float, NotBool, Field(ge=0)] = 0.0
    #: SACK loss recovery: "rfc6675" (cwnd = ssthresh during recovery) or "prr" (Proportional
    #: Rate Reduction, RFC 6937, slow-start reduction bound; ns-3.39's default). Needs sack.
    recovery: Literal["rfc6675", "prr"] = "rfc6675"
    #: Initial window of a flow on a pre-opened connection (incast responses): "transport"
    #: (init_cwnd_packets) or "fit" (size // mss + 1 segments, as ns3dc's incast applications).
    preopened_init_cwnd: Literal["transport", "fit"] = "transport"
    #: A lost retransmission during SACK recovery: "detect" (RACK-style, RFC 8985: data sent after
    #: it is SACKed) or "rto" (only the retransmission timer finds it, as ns-3.39).
    lost_retransmission: Literal["detect", "rto"] = "detect"


# ----------------------------------------------------------------------------- workloads
class CcChoice(Section):
    """Per-workload (per-class) congestion control, overriding ``[transport].cc``."""

    #: Congestion control of this workload's flows (default: ``[transport].cc``).
    cc: Optional[str] = None
    cc_params: Dict[str, Any] = Field(default_factory=_empty_dict)


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
    sources: Optional[List[Annotated[int, NotBool, Field(ge=0)]]] = None
    priority: Priority = 1
    start_ms: NonNegFloat = 0.0


class IncastWorkload(CcChoice):
    kind: Literal["incast"]
    name: Optional[str] = None
    request_bytes: Optional[Annotated[int, NotBool, Field(gt=0)]] = None
    request_fraction_of_buffer: Optional[PosFloat] = None
    fan_in: Annotated[int, NotBool, Field(ge=1)] = 16
    queries_per_s_per_host: NonNegFloat = 2.0
    requesters: Optional[List[Annotated[int, NotBool, Field(ge=0)]]] = None
    responders: Literal["other_leaf", "any"] = "other_leaf"
    priority: Priority = 1
    start_ms: NonNegFloat = 0.0


class FlowEntry(Section):
    src: Annotated[int, NotBool, Field(ge=0)]
    dst: Annotated[int, NotBool, Field(ge=0)]
    size_bytes: Annotated[int, NotBool, Field(ge=1)]
    start_s: Optional[NonNegFloat] = None
    start_ms: Optional[NonNegFloat] = None
    priority: Optional[Priority] = None
    #: Incast query id (flows sharing one form a query with a QCT in queries.parquet).
    query: Optional[Annotated[int, NotBool, Field(ge=0)]] = None
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
    src: Annotated[int, NotBool, Field(ge=0)]
    dst: Annotated[int, NotBool, Field(ge=0)]
    rate_gbps: PosFloat
    start_ms: NonNegFloat = 0.0
    stop_ms: NonNegFloat
    priority: Optional[Priority] = None
    packet_bytes: Optional[Annotated[int, NotBool, Field(ge=1, le=65000)]] = None
    #: A rate above the sender's host link is refused unless this is true: then the excess
    #: waits in the sender's NIC queue (a deliberate NIC backlog; unbounded with nic_qdisc = "fifo").
    above_link_rate: bool = False


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
        "transport.preopened_init_cwnd": "fit",      # incast applications: InitialCwnd = size / 1400 + 1
        "transport.lost_retransmission": "rto",      # TcpTxBuffer::NextSeg never resends a retransmitted segment
        "host.nic_ecn_k_bytes": "none",              # the servers' FqCoDel marks only past CoDel's 5 ms target:
                                                     # no step marking at a sender's NIC
        # ns-3.39 TcpCubic's congestion avoidance (for Cubic only: transport.cc or a workload's own cc):
        "transport.cc_params.cnt_clamp_segments": 20,  # CntClamp 20: +1 segment per 20 ACKs (5 %/RTT) until the first loss
        "transport.cc_params.reno_friendly": False,    # TcpCubic::Update has no Reno-friendly (W_est) region
        # ns-3.39 TcpDctcp (for DCTCP only):
        "transport.cc_params.loss_ssthresh": "alpha",  # GetSsThresh = cwnd (1 - alpha/2) at losses and timeouts too
        # ns3dc's TIMELY parameters (T_low 200 us, AI 100 Mbps, cc_params.hai_mbps 150, segment_bytes 0) are not
        # set: alone they move the grid's TIMELY point away from ns3dc (docs/validation.md, TIMELY).
    },
}


#: Profile keys under this prefix are one congestion control's parameters (CC_PARAMS_OF: parameter -> the
#: congestion control it belongs to): applied to transport.cc_params when transport.cc is that one, and to
#: the cc_params of every workload whose own cc is.
CC_PARAMS_PREFIX = "transport.cc_params."
CC_PARAMS_OF = {"cnt_clamp_segments": "cubic", "reno_friendly": "cubic", "loss_ssthresh": "dctcp"}


def cc_param_owner(dotted: str) -> Optional[str]:
    """The congestion control a profile key ``transport.cc_params.X`` belongs to (None: not a cc
    parameter, or not one any profile sets)."""
    if not dotted.startswith(CC_PARAMS_PREFIX):
        return None
    return CC_PARAMS_OF.get(dotted[len(CC_PARAMS_PREFIX):])


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
    tr = out.get("transport")
    cc = tr.get("cc", "newreno") if isinstance(tr, dict) else "newreno"
    for dotted, value in PROFILES[name].items():
        owner = cc_param_owner(dotted)
        if owner is not None and cc != owner:
            continue  # a congestion control's own parameters: only for that one
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
    # A workload with its own congestion control (workload[i].cc) runs that one with its own
    # cc_params, not transport's: the profile's parameters for that congestion control go there.
    for i, w in enumerate(out.get("workload") or []):
        wcc = w.get("cc") if isinstance(w, dict) else None
        mine = {d: v for d, v in PROFILES[name].items() if wcc is not None and cc_param_owner(d) == wcc}
        if not mine:
            continue
        params = w.setdefault("cc_params", {})
        if not isinstance(params, dict):
            continue  # the workload's own validation names the error
        for dotted, value in mine.items():
            leaf = dotted[len(CC_PARAMS_PREFIX):]
            if leaf not in params:
                params[leaf] = value
                applied[f"workload[{i}].cc_params.{leaf}"] = value
    return out, applied


def profile_key(applied_key: str) -> str:
    """The profile's own key behind a key :func:`apply_profile` reports: ``workload[i].cc_params.X``
    comes from ``transport.cc_params.X``; every other key is the profile's key itself."""
    if applied_key.startswith("workload["):
        return CC_PARAMS_PREFIX + applied_key.split(".cc_params.", 1)[1]
    return applied_key


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
    for i, w in enumerate(d.get("workload") or []):
        params = w.get("cc_params") if isinstance(w, dict) else None
        if isinstance(params, dict):
            for leaf in [k for k in params if f"workload[{i}].cc_params.{k}" in sc._profile_set]:
                params.pop(leaf)
    return d


class Recorded(Section):
    """``[recorded]``: what made a run's scenario.toml (provenance.resolved_scenario)."""

    sharebuf_version: Optional[str] = None
    #: Input file (absolute path) -> its sha256 when recorded.
    inputs: Dict[str, str] = Field(default_factory=_empty_dict)


class Scenario(Section):
    #: A named compatibility profile ("ns3dc"), or "none" (sharebuf's defaults).
    profile: Optional[Literal["none", "ns3dc"]] = None
    seed: Annotated[int, NotBool, Field(ge=0), AfterValidator(_u64)] = 1
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
    workload: List[Workload] = Field(default_factory=_empty_list)
    output: OutputSection = Field(default_factory=OutputSection)
    debug: DebugSection = Field(default_factory=DebugSection)
    #: Written by sharebuf into a run's scenario.toml (version, input-file hashes); checked when run again.
    recorded: Optional[Recorded] = None
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
        if is_tag and part in ("leaf_spine", "fat_tree", "star", "poisson", "incast", "flows", "cbr"):
            continue
        if _is_union_member(part):  # e.g. 'list[function-after[...]]': which member of a union was tried
            continue
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "(top level)"


def show_value(v: Any) -> str:
    """A value as the user wrote it (TOML spelling for booleans), for error messages."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "(missing)"
    if isinstance(v, str) and len(v) > 80:
        return repr(v[:77] + "...")
    return repr(v)


def _is_union_member(part) -> bool:
    """pydantic names the member of a plain union it tried (``int``, ``list[int]``,
    ``function-after[...]``) in an error's location; no scenario key has brackets."""
    return isinstance(part, str) and ("[" in part or "(" in part)


def _union_errors_that_fit(errors: list) -> list:
    """Of a union's per-member errors, keep those of the member that fits the input's shape: a
    list given to ``int | list[int]`` is reported by the list member only (found by bench/fuzz.py)."""
    def split(err):
        loc = tuple(err["loc"])
        j = next((i for i, p in enumerate(loc) if _is_union_member(p)), None)
        return (loc[:j], loc[j]) if j is not None else (None, None)

    list_groups = {pre for pre, label in map(split, errors) if label is not None and label.startswith("list[")}
    out = []
    for err in errors:
        pre, label = split(err)
        if pre in list_groups and not label.startswith("list[") and isinstance(err.get("input"), list):
            continue
        if label is not None and label.startswith("list[") and err["type"] == "list_type" and len(errors) > 1:
            continue  # a scalar given to ``int | list[int]``: the scalar member says what is wrong
        out.append(err)
    return out


#: At most this many problems are listed in one error line.
MAX_ERRORS_SHOWN = 3


def format_validation_error(e: ValidationError) -> str:
    import re

    lines = []
    errors = _union_errors_that_fit(e.errors())
    for err in errors[:MAX_ERRORS_SHOWN]:
        loc = _fmt_loc(tuple(err["loc"]))
        msg = err["msg"]
        msg = msg.removeprefix("Value error, ")
        ctx = err.get("ctx") or {}
        if err["type"] == "union_tag_invalid":
            msg = msg.replace("Input tag", "kind") + did_you_mean(ctx.get("tag"), re.findall(r"'([^']*)'", str(ctx.get("expected_tags", ""))))
        elif err["type"] == "literal_error":
            msg += did_you_mean(err.get("input"), re.findall(r"'([^']*)'", str(ctx.get("expected", ""))))
        if "input" in err and err["type"] not in ("missing", "union_tag_invalid") and not isinstance(err["input"], (dict, list)):
            lines.append(f"{loc} = {show_value(err['input'])}: {msg}")
        else:
            lines.append(f"{loc}: {msg}")
    more = len(errors) - MAX_ERRORS_SHOWN
    return "; ".join(lines) + (f" (and {more} more)" if more > 0 else "")


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
        text = _read_text(p, f"scenario '{source}'")
        base, name = p.resolve().parent, p.stem
    else:
        f = resources.files("sharebuf") / "scenarios" / f"{source}.toml"
        if not f.is_file():
            raise ScenarioError(f"scenario '{source}': not a file nor a bundled scenario{did_you_mean(str(source), bundled_scenarios())}; "
                                f"bundled: {', '.join(bundled_scenarios())}")
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
    flow-list ``file``s, the module of a ``scheme = "python"`` class) absolute against ``base``, the scenario's directory, where they exist
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
    bm = d.get("switch", {}).get("bm", {})
    if bm.get("scheme") == "python":
        # A Python scheme's module next to the scenario: `class = "/abs/dir/module.py:Class"`.
        from .schemes import local_module

        p = local_module(bm.get("class"), base)
        if p is not None:
            bm["class"] = f"{p}:{bm['class'].rsplit(':', 1)[1]}"
            paths.append(str(p))
    return paths


def _read_text(p: Path, what: str) -> str:
    """A text input file, or one ScenarioError naming it (unreadable, not UTF-8)."""
    try:
        return p.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise ScenarioError(f"{what}: not a UTF-8 text file (byte {e.start}: {e.object[e.start:e.start + 1]!r}); expected text") from None
    except OSError as e:
        raise ScenarioError(f"{what}: cannot read it ({e.strerror or e})") from None


def read_cdf(ref: str, base: Path, key: str) -> List[tuple]:
    """A flow-size CDF: lines of ``bytes cumulative_probability`` (comma or space separated,
    ``#`` comments). Sizes finite, >= 0 and non-decreasing; probabilities within [0, 1],
    non-decreasing, the last exactly 1; a mean of at least one byte."""
    if ref in BUNDLED_CDFS:
        text = (resources.files("sharebuf") / "workloads" / f"{ref}.cdf").read_text()
    else:
        p = Path(ref)
        if not p.is_absolute():
            p = base / p
        if not p.is_file():
            raise ScenarioError(f"{key} = '{ref}': not a bundled CDF ({', '.join(BUNDLED_CDFS)}) nor a readable file"
                                + did_you_mean(ref, BUNDLED_CDFS))
        text = _read_text(p, f"{key} = '{ref}'")
    where = f"{key} = '{ref}'"
    pts, lines = [], []
    for i, line in enumerate(text.splitlines()):
        line = line.split("#")[0].strip()
        if not line:
            continue
        parts = line.replace(",", " ").split()
        if len(parts) < 2:
            raise ScenarioError(f"{where}: line {i + 1} is {line!r}; expected 'bytes cumulative_probability'")
        vals = []
        for col, (name, tok, allowed) in enumerate((("bytes", parts[0], "a finite size >= 0"),
                                                    ("cumulative probability", parts[-1], "a probability within [0, 1]")), start=1):
            try:
                v = float(tok)
            except ValueError:
                v = None
            bad = v is None or not math.isfinite(v) or v < 0 or (col == 2 and v > 1)
            if bad:
                raise ScenarioError(f"{where}: line {i + 1}, column {col} ({name}) = {tok!r}; allowed: {allowed}")
            vals.append(v)
        pts.append(tuple(vals))
        lines.append(i + 1)
    if len(pts) < 2:
        raise ScenarioError(f"{where}: {len(pts)} point(s); a CDF needs >= 2 lines 'bytes cumulative_probability' ending at probability 1")
    if abs(pts[-1][1] - 1.0) > 1e-9:
        raise ScenarioError(f"{where}: line {lines[-1]}: the last cumulative probability is {pts[-1][1]}; a CDF must end at 1")
    for n, ((x0, c0), (x1, c1)) in enumerate(zip(pts, pts[1:])):
        if x1 < x0 or c1 < c0:
            col, name, v0, v1 = (1, "bytes", x0, x1) if x1 < x0 else (2, "cumulative probability", c0, c1)
            raise ScenarioError(f"{where}: line {lines[n + 1]}, column {col} ({name}) = {v1:g} is below line {lines[n]}'s {v0:g}; "
                                f"allowed: sizes and probabilities non-decreasing")
    if cdf_mean_bytes(pts) < 1:
        raise ScenarioError(f"{where}: mean flow size {cdf_mean_bytes(pts):g} bytes; allowed: a CDF whose mean is >= 1 byte")
    return pts


def cdf_mean_bytes(pts: List[tuple]) -> float:
    m = pts[0][0] * pts[0][1]
    for (x0, c0), (x1, c1) in zip(pts, pts[1:]):
        m += (c1 - c0) * (x0 + x1) / 2
    return m


#: Columns of a flow-list file; the first five are required (``id`` optional: if given, unique).
FLOW_COLUMNS = ("id", "src", "dst", "size_bytes", "start_s", "priority", "query", "handshake")
_FLOW_REQUIRED = ("src", "dst", "size_bytes", "start_s")
_BOOLS = {"true": True, "1": True, "false": False, "0": False}


class _Cell(ValueError):
    """A bad cell: the message says what is allowed."""


def _empty(v: Any) -> bool:
    """No value: a missing or blank CSV cell, a Parquet null (or a NaN, pandas' null)."""
    return v is None or (isinstance(v, str) and not v.strip()) or (isinstance(v, float) and math.isnan(v))


def _int_cell(v: Any, allowed: str, lo: Optional[int] = None, hi: Optional[int] = None) -> int:
    """A whole number (``12``, ``12.0``, ``1e3``), within [lo, hi]; else _Cell(allowed)."""
    if isinstance(v, bool) or _empty(v):
        raise _Cell(allowed)
    if isinstance(v, int):
        x = v
    else:
        try:
            f = float(v)
        except (TypeError, ValueError):
            raise _Cell(allowed) from None
        if not math.isfinite(f) or f != int(f):
            raise _Cell(allowed)
        x = int(f)
    if (lo is not None and x < lo) or (hi is not None and x > hi):
        raise _Cell(allowed)
    return x


def _float_cell(v: Any, allowed: str, lo: float) -> float:
    if isinstance(v, bool) or _empty(v):
        raise _Cell(allowed)
    try:
        f = float(v)
    except (TypeError, ValueError):
        raise _Cell(allowed) from None
    if not math.isfinite(f) or f < lo:
        raise _Cell(allowed)
    return f


def read_flow_file(ref: str, base: Path, key: str) -> List[dict]:
    """A flow list (CSV or Parquet, columns :data:`FLOW_COLUMNS`), every cell checked: an error
    names the file, the row (and CSV line), the column, the value and what is allowed. Start
    times need not be sorted. Each row dict carries ``where`` for later errors."""
    p = Path(ref)
    if not p.is_absolute():
        p = base / p
    where = f"{key} = '{ref}'"
    if not p.is_file():
        raise ScenarioError(f"{where}: no such file")
    if p.suffix.lower() == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            t = pq.read_table(p)
        except (pa.ArrowException, OSError) as e:
            raise ScenarioError(f"{where}: not a readable Parquet file ({e})") from None
        columns, rows, line0 = list(t.column_names), t.to_pylist(), None
    else:
        text = _read_text(p, where)
        reader = csv.reader(io.StringIO(text, newline=""))
        try:
            table = [r for r in reader]
        except csv.Error as e:
            raise ScenarioError(f"{where}: not a readable CSV file ({e})") from None
        if not table:
            raise ScenarioError(f"{where}: empty file; expected a header line {','.join(FLOW_COLUMNS[:5])}[,priority,query,handshake] and one row per flow")
        columns = [c.strip() for c in table[0]]
        rows, line0 = [], 2
        for n, r in enumerate(table[1:]):
            if not any(c.strip() for c in r):
                raise ScenarioError(f"{where}: row {n + 1} (line {n + 2}) is empty; expected one flow per line")
            if len(r) > len(columns):
                raise ScenarioError(f"{where}: row {n + 1} (line {n + 2}) has {len(r)} cells, the header {len(columns)}")
            rows.append({c: (r[j] if j < len(r) else None) for j, c in enumerate(columns)})
    for c in columns:
        if c not in FLOW_COLUMNS:
            raise ScenarioError(f"{where}: unknown column '{c}'{did_you_mean(c, FLOW_COLUMNS)}; allowed: {', '.join(FLOW_COLUMNS)}")
    if len(set(columns)) != len(columns):
        dup = next(c for c in columns if columns.count(c) > 1)
        raise ScenarioError(f"{where}: column '{dup}' appears twice")
    missing = [c for c in _FLOW_REQUIRED if c not in columns]
    if missing:
        raise ScenarioError(f"{where}: columns {columns} lack {missing}; expected id,src,dst,size_bytes,start_s[,priority,query,handshake]")
    if not rows:
        raise ScenarioError(f"{where}: no rows; a flows workload needs at least one flow")
    out, ids = [], {}
    for i, r in enumerate(rows):
        at = f"row {i + 1}" + (f" (line {i + line0})" if line0 else "")
        col = ""
        try:
            col = "src"
            src = _int_cell(r["src"], "a host number >= 0", lo=0)
            col = "dst"
            dst = _int_cell(r["dst"], "a host number >= 0", lo=0)
            col = "size_bytes"
            size = _int_cell(r["size_bytes"], "a whole number of bytes >= 1", lo=1)
            col = "start_s"
            start = _float_cell(r["start_s"], "a finite time in seconds >= 0", 0.0)
            col = "priority"
            prio = None if _empty(r.get("priority")) else _int_cell(r["priority"], "empty or an integer 0..7", 0, 7)
            col = "query"
            q = None if _empty(r.get("query")) else _int_cell(r["query"], "empty, a negative integer (none) or a query id >= 0")
            col = "handshake"
            hs = r.get("handshake")
            if _empty(hs):
                hs = None
            elif str(hs).strip().lower() in _BOOLS:
                hs = _BOOLS[str(hs).strip().lower()]
            else:
                raise _Cell("true, false, 1, 0 or empty")
            if "id" in columns:
                col = "id"
                fid = _int_cell(r["id"], "an integer flow id, unique in the file")
                if fid in ids:
                    raise ScenarioError(f"{where}: {at}, column 'id' = {show_value(r['id'])}: the same id as row {ids[fid] + 1}; allowed: ids unique in the file")
                ids[fid] = i
        except _Cell as e:
            raise ScenarioError(f"{where}: {at}, column '{col}' = {show_value(r.get(col))}: allowed: {e}") from None
        out.append(dict(src=src, dst=dst, size_bytes=size, start_s=start, priority=prio,
                        query=None if q is None or q < 0 else q, handshake=hs, where=f"{where}: {at}"))
    return out


# ----------------------------------------------------------------------------- resolution
def resolve(sc: Scenario, base: Path, schemes: Optional[Dict[str, Any]] = None) -> dict:
    """Turn a validated scenario into the engine spec (integer ps, bps, bytes). ``schemes``:
    Python scheme classes by name (``sharebuf.run(..., schemes=)``), allowed as ``switch.bm.scheme``
    besides the built-in ones and ``"python"`` (docs/schemes/python.md)."""
    from . import _core
    from .schemes import PYTHON, is_python_scheme, local_module

    topo = sc.topology
    sw = sc.switch
    if not is_python_scheme(sw.bm.scheme, schemes) and sw.bm.scheme not in _core.schemes():
        allowed = [*_core.schemes(), PYTHON, *(schemes or {})]
        raise ScenarioError(f"switch.bm.scheme = '{sw.bm.scheme}': unknown scheme{did_you_mean(sw.bm.scheme, allowed)}; "
                            f"allowed: {', '.join(allowed)}")
    if sc.transport.cc not in _core.congestion_controls():
        raise ScenarioError(f"transport.cc = '{sc.transport.cc}': unknown congestion control{did_you_mean(sc.transport.cc, _core.congestion_controls())}; "
                            f"allowed: {', '.join(_core.congestion_controls())}")
    check_finite(sw.bm.model_extra or {}, "switch.bm")
    check_finite(sc.transport.cc_params, "transport.cc_params")
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
    if sw.bm.scheme == PYTHON:
        # The spec names the module file next to the scenario by its absolute path, as the
        # resolved scenario.toml does, so that re-running that file gives the same spec.
        mod = local_module(bm_params.get("class"), base)
        if mod is not None:
            bm_params["class"] = f"{mod}:{bm_params['class'].rsplit(':', 1)[1]}"
    bm_spec = dict(scheme=sw.bm.scheme, params=bm_params)
    if sw.bm.scheme == PYTHON and mod is not None:
        # The module's content is part of the spec (the engine ignores the key), so a sweep's
        # content-addressed runs and the provenance spec hash change when the scheme's code does.
        bm_spec["module_sha256"] = hashlib.sha256(mod.read_bytes()).hexdigest()
    workloads = []
    ccs = _core.congestion_controls()
    for i, w in enumerate(sc.workload):
        key = f"workload[{i}]"
        name = w.name or w.kind
        cc = None
        if getattr(w, "cc", None) is not None:
            if w.cc not in ccs:
                raise ScenarioError(f"{key}.cc = '{w.cc}': unknown congestion control{did_you_mean(w.cc, ccs)}; allowed: {', '.join(ccs)}")
            check_finite(w.cc_params, f"{key}.cc_params")
            cc = dict(name=w.cc, params=w.cc_params)
        elif getattr(w, "cc_params", None):
            raise ScenarioError(f"{key}.cc_params: given without {key}.cc")
        if isinstance(w, PoissonWorkload):
            pts = read_cdf(w.cdf, base, f"{key}.cdf")
            mean = cdf_mean_bytes(pts)
            dest = w.destinations or ("inter_leaf" if isinstance(topo, LeafSpine) and topo.leaves > 1 else "all_to_all")
            if dest == "inter_leaf" and not (isinstance(topo, (LeafSpine, FatTree)) and topo.leaves > 1):
                raise ScenarioError(f"{key}.destinations = 'inter_leaf': needs a leaf_spine topology with >= 2 leaves or a fat_tree; allowed here: all_to_all")
            if w.load_definition == "host":
                rate = w.load * host_bps / (8 * mean)
            elif isinstance(topo, FatTree):
                rate = w.load * bps(topo.uplink_gbps()) / (8 * mean * topo.hpe)
            else:
                if not isinstance(topo, LeafSpine):
                    raise ScenarioError(f"{key}.load_definition = 'uplink': needs a leaf_spine or fat_tree topology; allowed here: host")
                uplink_bps = topo.spines * topo.links_per_leaf_spine * bps(topo.fabric_gbps())
                rate = w.load * uplink_bps / (8 * mean * topo.servers_per_leaf)
            workloads.append(dict(kind="poisson", name=name, cdf=pts, rate_per_host_per_s=rate, destinations=dest,
                                  sources=w.sources or [], priority=w.priority, start_ps=ms(w.start_ms), cc=cc))
        elif isinstance(w, IncastWorkload):
            if (w.request_bytes is None) == (w.request_fraction_of_buffer is None):
                raise ScenarioError(f"{key}: give exactly one of request_bytes or request_fraction_of_buffer")
            req = w.request_bytes or int(w.request_fraction_of_buffer * buffer_bytes)
            if w.queries_per_s_per_host > 0:
                other_leaf = w.responders == "other_leaf" and isinstance(topo, LeafSpine) and topo.leaves > 1
                avail = n_hosts - topo.servers_per_leaf if other_leaf else n_hosts - 1
                if w.fan_in > avail:
                    whom = ("the hosts of the other leaves" if other_leaf else "every other host")
                    raise ScenarioError(f"{key}.fan_in = {w.fan_in}: a requester has {avail} possible responders "
                                        f"({whom}, responders = '{w.responders}'); allowed: 1..{avail}")
            workloads.append(dict(kind="incast", name=name, request_bytes=req, fan_in=w.fan_in,
                                  queries_per_s_per_host=w.queries_per_s_per_host, requesters=w.requesters or [],
                                  responders=w.responders, priority=w.priority, start_ps=ms(w.start_ms), cc=cc))
        elif isinstance(w, FlowsWorkload):
            if (w.file is None) == (w.flows is None):
                raise ScenarioError(f"{key}: give exactly one of file or flows")
            if w.file is not None:
                rows = read_flow_file(w.file, base, f"{key}.file")  # each row names its file row
            else:
                rows = []
                for j, f in enumerate(w.flows):
                    if (f.start_s is None) == (f.start_ms is None):
                        raise ScenarioError(f"{key}.flows[{j}]: give exactly one of start_s or start_ms")
                    rows.append(dict(src=f.src, dst=f.dst, size_bytes=f.size_bytes,
                                     start_s=f.start_s if f.start_s is not None else f.start_ms / 1e3, priority=f.priority,
                                     query=f.query, handshake=f.handshake, where=f"{key}.flows[{j}]"))
            flows = []
            for j, r in enumerate(rows):
                for side in ("src", "dst"):
                    if r[side] >= n_hosts:
                        raise ScenarioError(f"{r['where']}, {side} = {r[side]}: no such host; allowed: 0..{n_hosts - 1}")
                if r["src"] == r["dst"]:
                    raise ScenarioError(f"{r['where']}: src = dst = {r['src']}; allowed: two different hosts (a flow to itself never "
                                        f"crosses the network)")
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
                        raise ScenarioError(f"{key}.flows[{j}].{side} = {getattr(f, side)}: no such host; allowed: 0..{n_hosts - 1}")
                if f.src == f.dst:
                    raise ScenarioError(f"{key}.flows[{j}]: src = dst = {f.src}; allowed: two different hosts")
                if f.stop_ms < f.start_ms:
                    raise ScenarioError(f"{key}.flows[{j}].stop_ms = {f.stop_ms}: before start_ms = {f.start_ms}; allowed: >= start_ms")
                if bps(f.rate_gbps) > host_bps and not f.above_link_rate:
                    raise ScenarioError(f"{key}.flows[{j}].rate_gbps = {f.rate_gbps}: above the host link ({topo.host_link_gbps} Gbps); "
                                        f"allowed: 0 < rate_gbps <= {topo.host_link_gbps} "
                                        f"(or above_link_rate = true: the excess queues in the sender's NIC)")
                flows.append(dict(src=f.src, dst=f.dst, rate_bps=bps(f.rate_gbps), start_ps=ms(f.start_ms), stop_ps=ms(f.stop_ms),
                                  priority=w.priority if f.priority is None else f.priority,
                                  packet_bytes=f.packet_bytes or (t.mss_bytes + t.header_bytes)))
            workloads.append(dict(kind="cbr", name=name, flows=flows))
    for i, w in enumerate(sc.workload):
        for attr in ("sources", "requesters"):
            for h in getattr(w, attr, None) or []:
                if h >= n_hosts:
                    raise ScenarioError(f"workload[{i}].{attr}: host {h} does not exist; allowed: 0..{n_hosts - 1}")
    min_rto = us(t.min_rto_us)
    nic_k = sc.host.nic_ecn_k_bytes
    if nic_k == "switch":
        nic_k = min(ecn) if ecn else None
    elif nic_k == "none":
        nic_k = None
    if ms(sc.max_ms) > U64_MAX or ms(arrivals_ms) > U64_MAX:
        key, v = ("max_ms", sc.max_ms) if ms(sc.max_ms) > U64_MAX else ("arrivals_until_ms", arrivals_ms)
        raise ScenarioError(f"{key} = {show_value(v)}: beyond the engine's clock (64-bit picoseconds); allowed: <= {U64_MAX / PS_PER_MS:,.0f} ms")
    spec = dict(
        seed=sc.seed,
        max_ps=ms(sc.max_ms),
        arrivals_until_ps=ms(arrivals_ms),
        topology=topo.engine(),
        switch=dict(buffer_bytes=buffer_bytes, queues_per_port=sw.queues_per_port, scheduler=sw.scheduler,
                    drr_weights=sw.drr_weights or [], drr_quantum_bytes=sw.drr_quantum_bytes, ecn_k_bytes=ecn,
                    device_queue_packets=sw.device_queue_packets, buffer_accounting=sw.buffer_accounting, bm=bm_spec),
        host=dict(nic_ecn_k_bytes=nic_k, nic_qdisc=sc.host.nic_qdisc, device_queue_packets=sc.host.device_queue_packets),
        transport=dict(cc=t.cc, cc_params=t.cc_params, mss_bytes=t.mss_bytes, header_bytes=t.header_bytes,
                       init_cwnd_packets=t.init_cwnd_packets, min_rto_ps=min_rto,
                       initial_rto_ps=us(t.initial_rto_us) if t.initial_rto_us else min_rto, handshake=t.handshake,
                       delayed_ack_packets=t.delayed_ack_packets, delayed_ack_timeout_ps=us(t.delayed_ack_timeout_us),
                       ack_priority=t.ack_priority, unscheduled_bytes=unsched, unscheduled_acks=t.unscheduled_acks,
                       max_rto_ps=us(t.max_rto_us), sack=t.sack, timestamp_tick_ps=us(t.timestamp_tick_us), recovery=t.recovery,
                       preopened_init_cwnd=t.preopened_init_cwnd, lost_retransmission=t.lost_retransmission),
        workloads=workloads,
        output=dict(buffer_sample_ps=us(sc.output.buffer_sample_us), queue_sample_ps=us(sc.output.queue_sample_us)),
    )
    bad = _out_of_u64(spec)
    if bad:
        raise ScenarioError(f"{bad[0]} = {bad[1]} (engine spec): outside the engine's 64-bit range; allowed: 0 .. {U64_MAX} "
                            f"(picoseconds, bits/s or bytes); check the scenario key it comes from")
    if sc.debug.check_invariants:
        # Only when on: a default scenario's engine spec (and its hash) stays as it was.
        spec["debug"] = dict(check_invariants=True)
    return spec


U64_MAX = 2**64 - 1


def _out_of_u64(o: Any, path: str = "") -> Optional[tuple]:
    """The first integer of the engine spec outside 0 .. 2^64-1 (path, value), or None. Seeds,
    times in ps, rates in bit/s and sizes in bytes are all unsigned 64-bit in the engine;
    query ids are the one signed field."""
    if isinstance(o, dict):
        for k, v in o.items():
            if k in ("params", "cc_params"):  # free-form scheme / transport parameters: checked by the engine
                continue
            r = _out_of_u64(v, f"{path}.{k}" if path else k)
            if r:
                return r
    elif isinstance(o, list):
        for i, v in enumerate(o):
            r = _out_of_u64(v, f"{path}[{i}]")
            if r:
                return r
    elif isinstance(o, int) and not isinstance(o, bool) and (o > U64_MAX or (o < 0 and not path.endswith("query"))):
        return path, o
    return None


def check_finite(params: Dict[str, Any], section: str) -> None:
    """Free-form parameter tables (scheme, congestion-control parameters) hold no inf or nan."""
    for k, v in params.items():
        vals = v if isinstance(v, list) else [v]
        for x in vals:
            if isinstance(x, float) and not math.isfinite(x):
                raise ScenarioError(f"{section}.{k} = {show_value(v)}: not a finite number; allowed: finite numbers")


def engine_spec_json(spec: dict) -> str:
    return json.dumps(spec, separators=(",", ":"))


__all__ = ["Scenario", "ScenarioError", "load_scenario", "resolve", "parse_scenario", "bundled_scenarios", "cdf_mean_bytes", "read_cdf"]

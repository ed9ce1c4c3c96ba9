"""``[[workload]]``: Poisson arrivals from a flow-size CDF, incast queries, a flow list (a
file or inline entries) and constant-bit-rate flows. Each kind's engine form is one function
of :mod:`sharebuf.scenario.workload_spec`."""

from typing import Annotated, Any, Dict, List, Literal, Optional, Union

from pydantic import Field

from .fields import NonNegFloat, NotBool, PosFloat, Priority, Section, empty_dict


class CcChoice(Section):
    """Per-workload (per-class) congestion control and transport kind, overriding ``[transport].cc``
    and ``[transport].kind``."""

    #: Congestion control of this workload's flows (default: ``[transport].cc``).
    cc: Optional[str] = None
    cc_params: Dict[str, Any] = Field(default_factory=empty_dict)
    #: Transport of this workload's flows (default: ``[transport].kind``): "tcp", or "roce" (the
    #: RDMA queue pair of docs/transports/roce.md: cc "dcqcn", no handshake), so RDMA and TCP
    #: classes share one run.
    transport: Optional[Literal["tcp", "roce"]] = None


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

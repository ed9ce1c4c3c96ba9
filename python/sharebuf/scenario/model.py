"""The whole scenario: its top-level keys and one model per section (docs/scenario.md)."""

from typing import Annotated, Any, Dict, List, Literal, Optional

from pydantic import AfterValidator, Field, PrivateAttr

from .fields import NonNegFloat, NotBool, PosFloat, Section, empty_list, u64_seed
from .sections import DebugSection, HostSection, OutputSection, Recorded, SwitchSection, TransportSection
from .topology import Topology
from .workloads import Workload


class Scenario(Section):
    #: A named compatibility profile ("ns3dc"), or "none" (sharebuf's defaults).
    profile: Optional[Literal["none", "ns3dc"]] = None
    seed: Annotated[int, NotBool, Field(ge=0), AfterValidator(u64_seed)] = 1
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
    workload: List[Workload] = Field(default_factory=empty_list)
    output: OutputSection = Field(default_factory=OutputSection)
    debug: DebugSection = Field(default_factory=DebugSection)
    #: Written by sharebuf into a run's scenario.toml (version, input-file hashes); checked when run again.
    recorded: Optional[Recorded] = None
    #: Settings the profile made (dotted key -> value), for the run's summary.
    _profile_set: Dict[str, Any] = PrivateAttr(default_factory=dict)

    def profile_report(self) -> dict:
        return {"name": self.profile or "none", "set": dict(self._profile_set)}

"""``[topology]``: a leaf-spine, a k-ary fat-tree or a star, with the quantities the resolver
derives from each (hosts, a leaf's port capacity, the longest base RTT). Their engine form is
:func:`sharebuf.scenario.engine_spec.topology`."""

from typing import Annotated, Literal, Optional, Union

from pydantic import Field

from .fields import NonNegFloat, NotBool, PosFloat, Section


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
    #: (ns-3 global routing, the ABM authors' simulator: hash polarization); "flow": each flow's
    #: own hashes from its flow file (columns ecmp_hash, ecmp_hash_reverse), modulo the
    #: candidates at every switch, as ns-3 with its 5-tuple hash precomputed.
    ecmp_hash: Literal["salted", "same", "flow"] = "salted"

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


class Star(Section):
    kind: Literal["star"]
    hosts: Annotated[int, NotBool, Field(ge=2)] = 8
    link_gbps: PosFloat = 10.0
    link_delay_us: NonNegFloat = 1.0

    @property
    def n_hosts(self) -> int:
        return self.hosts

    #: Accepted for profiles; a star has one path, so it has no effect.
    ecmp_hash: Literal["salted", "same", "flow"] = "salted"

    @property
    def host_link_gbps(self) -> float:
        return self.link_gbps

    def leaf_port_gbps(self) -> float:
        return self.hosts * self.link_gbps

    def max_base_rtt_us(self) -> float:
        return 4 * self.link_delay_us


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
    ecmp_hash: Literal["salted", "same", "flow"] = "salted"

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


Topology = Annotated[Union[LeafSpine, FatTree, Star], Field(discriminator="kind")]

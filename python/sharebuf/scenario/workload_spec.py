"""Each ``[[workload]]`` in its engine form: one function per kind (Poisson, incast, flow list,
constant bit rate), called in the scenario's order by :func:`sharebuf.scenario.engine_spec.resolve`."""

from pathlib import Path
from typing import List, Optional, Sequence

from ..errors import ScenarioError, did_you_mean
from .inputs import cdf_mean_bytes, read_cdf, read_flow_file
from .messages import check_finite
from .model import Scenario
from .topology import FatTree, LeafSpine
from .units import PS_PER_S, bps, ms
from .workloads import CbrWorkload, FlowsWorkload, IncastWorkload, PoissonWorkload


def workloads(sc: Scenario, base: Path, buffer_bytes: int, ccs: Sequence[str]) -> List[dict]:
    """Every workload's engine form, then a check that the hosts they name exist."""
    out = [workload(f"workload[{i}]", w, sc, base, buffer_bytes, ccs) for i, w in enumerate(sc.workload)]
    n_hosts = sc.topology.n_hosts
    for i, w in enumerate(sc.workload):
        for attr in ("sources", "requesters"):
            for h in getattr(w, attr, None) or []:
                if h >= n_hosts:
                    raise ScenarioError(f"workload[{i}].{attr}: host {h} does not exist; allowed: 0..{n_hosts - 1}")
    return out


def workload(key: str, w, sc: Scenario, base: Path, buffer_bytes: int, ccs: Sequence[str]) -> dict:
    """One workload (``key``: ``workload[i]``, for messages)."""
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
        out = poisson(key, name, w, sc, base, cc)
    elif isinstance(w, IncastWorkload):
        out = incast(key, name, w, sc, buffer_bytes, cc)
    elif isinstance(w, FlowsWorkload):
        out = flow_list(key, name, w, sc, base, cc)
    else:
        assert isinstance(w, CbrWorkload)
        return cbr(key, name, w, sc)
    kind = getattr(w, "transport", None)
    if kind is not None:
        # Named only when the workload sets it: every other scenario's spec (and run key) is unchanged.
        if kind == "roce":
            eff = w.cc if w.cc is not None else sc.transport.cc
            if eff != "dcqcn":
                src = f"{key}.cc" if w.cc is not None else "transport.cc"
                raise ScenarioError(f"{src} = '{eff}': not allowed for {key}.transport = 'roce'; allowed: dcqcn")
            if isinstance(w, FlowsWorkload) and w.handshake:
                raise ScenarioError(f"{key}.handshake = true: not allowed with {key}.transport = 'roce' (a queue pair sends at once); allowed: false")
        out["transport"] = kind
    return out


def poisson(key: str, name: str, w: PoissonWorkload, sc: Scenario, base: Path, cc: Optional[dict]) -> dict:
    topo = sc.topology
    pts = read_cdf(w.cdf, base, f"{key}.cdf")
    mean = cdf_mean_bytes(pts)
    dest = w.destinations or ("inter_leaf" if isinstance(topo, LeafSpine) and topo.leaves > 1 else "all_to_all")
    if dest == "inter_leaf" and not (isinstance(topo, (LeafSpine, FatTree)) and topo.leaves > 1):
        raise ScenarioError(f"{key}.destinations = 'inter_leaf': needs a leaf_spine topology with >= 2 leaves or a fat_tree; allowed here: all_to_all")
    if w.load_definition == "host":
        rate = w.load * bps(topo.host_link_gbps) / (8 * mean)
    elif isinstance(topo, FatTree):
        rate = w.load * bps(topo.uplink_gbps()) / (8 * mean * topo.hpe)
    else:
        if not isinstance(topo, LeafSpine):
            raise ScenarioError(f"{key}.load_definition = 'uplink': needs a leaf_spine or fat_tree topology; allowed here: host")
        uplink_bps = topo.spines * topo.links_per_leaf_spine * bps(topo.fabric_gbps())
        rate = w.load * uplink_bps / (8 * mean * topo.servers_per_leaf)
    return dict(kind="poisson", name=name, cdf=pts, rate_per_host_per_s=rate, destinations=dest,
                sources=w.sources or [], priority=w.priority, start_ps=ms(w.start_ms), cc=cc)


def incast(key: str, name: str, w: IncastWorkload, sc: Scenario, buffer_bytes: int, cc: Optional[dict]) -> dict:
    topo = sc.topology
    n_hosts = topo.n_hosts
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
    return dict(kind="incast", name=name, request_bytes=req, fan_in=w.fan_in,
                queries_per_s_per_host=w.queries_per_s_per_host, requesters=w.requesters or [],
                responders=w.responders, priority=w.priority, start_ps=ms(w.start_ms), cc=cc)


def flow_list(key: str, name: str, w: FlowsWorkload, sc: Scenario, base: Path, cc: Optional[dict]) -> dict:
    n_hosts = sc.topology.n_hosts
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
    for r in rows:
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
        if r.get("ecmp") is not None:
            flows[-1]["ecmp_hash"], flows[-1]["ecmp_hash_reverse"] = r["ecmp"]
    return dict(kind="flows", name=name, flows=flows, cc=cc)


def cbr(key: str, name: str, w: CbrWorkload, sc: Scenario) -> dict:
    topo, t = sc.topology, sc.transport
    n_hosts, host_bps = topo.n_hosts, bps(topo.host_link_gbps)
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
    return dict(kind="cbr", name=name, flows=flows)

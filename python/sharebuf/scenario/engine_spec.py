"""Resolution: a validated scenario as the engine spec the Rust core runs (integer ps, bit/s,
bytes), one function per part: the run's times, the topology, the switch and its scheme, the
host NICs, the transport, the workloads (:mod:`.workload_spec`) and the output.

The spec's key order is part of its hash (provenance, content-addressed runs, the golden
digests): each function builds its dict in one fixed order.
"""

import hashlib
import json
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

from ..errors import ScenarioError, did_you_mean
from .messages import check_finite, show_value
from .model import Scenario
from .workload_spec import workloads
from .topology import FatTree, LeafSpine, Star
from .units import PS_PER_MS, U64_MAX, bps, ms, us


def resolve(sc: Scenario, base: Path, schemes: Optional[Dict[str, Any]] = None) -> dict:
    """Turn a validated scenario into the engine spec (integer ps, bps, bytes). ``schemes``:
    Python scheme classes by name (``sharebuf.run(..., schemes=)``), allowed as ``switch.bm.scheme``
    besides the built-in ones and ``"python"`` (docs/schemes/python.md)."""
    from .. import _core

    check_names(sc, schemes, _core.schemes(), _core.congestion_controls())
    sw = switch(sc, base)
    wl = workloads(sc, base, sw["buffer_bytes"], _core.congestion_controls())
    nic = host(sc, sw["ecn_k_bytes"])
    max_ps, arrivals_ps = run_times(sc)
    spec = dict(seed=sc.seed, max_ps=max_ps, arrivals_until_ps=arrivals_ps, topology=topology(sc.topology), switch=sw,
                host=nic, transport=transport(sc), workloads=wl, output=output(sc))
    check_u64(spec)
    if sc.debug.check_invariants:
        # Only when on: a default scenario's engine spec (and its hash) stays as it was.
        spec["debug"] = dict(check_invariants=True)
    return spec


def check_names(sc: Scenario, schemes: Optional[Dict[str, Any]], builtin: Sequence[str], ccs: Sequence[str]) -> None:
    """The scheme and the congestion control exist; their free-form parameters are finite."""
    from ..schemes import PYTHON, is_python_scheme

    bm = sc.switch.bm
    if not is_python_scheme(bm.scheme, schemes) and bm.scheme not in builtin:
        allowed = [*builtin, PYTHON, *(schemes or {})]
        raise ScenarioError(f"switch.bm.scheme = '{bm.scheme}': unknown scheme{did_you_mean(bm.scheme, allowed)}; "
                            f"allowed: {', '.join(allowed)}")
    if sc.transport.cc not in ccs:
        raise ScenarioError(f"transport.cc = '{sc.transport.cc}': unknown congestion control{did_you_mean(sc.transport.cc, ccs)}; "
                            f"allowed: {', '.join(ccs)}")
    check_finite(bm.model_extra or {}, "switch.bm")
    check_finite(sc.transport.cc_params, "transport.cc_params")


def run_times(sc: Scenario) -> tuple:
    """The horizon and the end of arrivals, in ps, within the engine's 64-bit clock."""
    arrivals_ms = sc.max_ms if sc.arrivals_until_ms is None else sc.arrivals_until_ms
    if ms(sc.max_ms) > U64_MAX or ms(arrivals_ms) > U64_MAX:
        key, v = ("max_ms", sc.max_ms) if ms(sc.max_ms) > U64_MAX else ("arrivals_until_ms", arrivals_ms)
        raise ScenarioError(f"{key} = {show_value(v)}: beyond the engine's clock (64-bit picoseconds); allowed: <= {U64_MAX / PS_PER_MS:,.0f} ms")
    return ms(sc.max_ms), ms(arrivals_ms)


def topology(topo) -> dict:
    if isinstance(topo, LeafSpine):
        return dict(kind="leaf_spine", leaves=topo.leaves, spines=topo.spines, servers_per_leaf=topo.servers_per_leaf,
                    links_per_leaf_spine=topo.links_per_leaf_spine, host_link_bps=bps(topo.host_link_gbps),
                    fabric_link_bps=bps(topo.fabric_gbps()), link_delay_ps=us(topo.link_delay_us), ecmp_hash=topo.ecmp_hash)
    if isinstance(topo, Star):
        return dict(kind="star", hosts=topo.hosts, link_bps=bps(topo.link_gbps), link_delay_ps=us(topo.link_delay_us))
    assert isinstance(topo, FatTree)
    d, ea, ac = topo.delays_us()
    return dict(kind="fat_tree", k=topo.k, hosts_per_edge=topo.hpe, host_link_bps=bps(topo.host_link_gbps),
                edge_agg_link_bps=bps(topo.ea_gbps()), agg_core_link_bps=bps(topo.ac_gbps()),
                host_link_delay_ps=us(d), edge_agg_link_delay_ps=us(ea), agg_core_link_delay_ps=us(ac),
                ecmp_hash=topo.ecmp_hash)


#: The schemes ``switch.spine_buffer = "leaf_aliased"`` acts with: ns3dc's GenQueueDisc algorithms that
#: decide a packet at its arrival (the engine's LEAF_ALIASED_SCHEMES).
LEAF_ALIASED_SCHEMES = ("dt", "fab", "cs", "ib", "abm")


def switch(sc: Scenario, base: Path) -> dict:
    """The switch: its buffer (given, or sized per port and Gbps), queues, ECN and scheme."""
    sw = sc.switch
    if (sw.buffer_bytes is None) == (sw.buffer_kb_per_port_per_gbps is None):
        raise ScenarioError("switch: give exactly one of buffer_bytes or buffer_kb_per_port_per_gbps")
    buffer_bytes = sw.buffer_bytes or int(sw.buffer_kb_per_port_per_gbps * 1024 * sc.topology.leaf_port_gbps())
    ecn = sw.ecn_k_bytes
    ecn = [] if ecn is None else ([ecn] if isinstance(ecn, int) else list(ecn))
    out = dict(buffer_bytes=buffer_bytes, queues_per_port=sw.queues_per_port, scheduler=sw.scheduler,
               drr_weights=sw.drr_weights or [], drr_quantum_bytes=sw.drr_quantum_bytes, ecn_k_bytes=ecn,
               device_queue_packets=sw.device_queue_packets, buffer_accounting=sw.buffer_accounting, bm=scheme(sc, base))
    if sw.int_tx_bytes != "transmitted" and _int(sc):
        # Named only when set and a flow reads INT: every other spec (and run key) is unchanged.
        out["int_tx_bytes"] = sw.int_tx_bytes
    if sw.int_stamp != "data" and _int(sc):
        out["int_stamp"] = sw.int_stamp
    if sw.spine_buffer != "own" and sc.topology.kind == "leaf_spine" and sw.bm.scheme in LEAF_ALIASED_SCHEMES \
            and not sw.lossless_priorities:
        # Named only where it acts (a leaf-spine's spines, one of ns3dc's arrival-time schemes).
        out["spine_buffer"] = sw.spine_buffer
    if sw.lossless_priorities:
        # Named only with lossless priorities: a lossy scenario's spec (and run key) is unchanged.
        for p in sw.lossless_priorities:
            if p >= sw.queues_per_port:
                raise ScenarioError(f"switch.lossless_priorities: priority {p} has no queue of its own; "
                                    f"allowed: 0..{sw.queues_per_port - 1} (queues_per_port = {sw.queues_per_port})")
        if len(set(sw.lossless_priorities)) != len(sw.lossless_priorities):
            raise ScenarioError(f"switch.lossless_priorities = {sw.lossless_priorities}: a priority is given twice")
        pfc = dict(lossless_priorities=list(sw.lossless_priorities), headroom_bytes=sw.pfc_headroom_bytes,
                   xon_bytes=sw.pfc_xon_bytes, xon_offset_bytes=sw.pfc_xon_offset_bytes, alpha_ingress=sw.pfc_alpha_ingress)
        out["pfc"] = {k: v for k, v in pfc.items() if v is not None}  # the engine's defaults otherwise
    elif any(v is not None for v in (sw.pfc_headroom_bytes, sw.pfc_xon_bytes, sw.pfc_xon_offset_bytes, sw.pfc_alpha_ingress)):
        raise ScenarioError("switch: pfc_headroom_bytes, pfc_xon_bytes, pfc_xon_offset_bytes and pfc_alpha_ingress need "
                            "switch.lossless_priorities (no priority is lossless); allowed: set lossless_priorities, or omit them")
    red = {"red_kmin_bytes": sw.red_kmin_bytes, "red_kmax_bytes": sw.red_kmax_bytes, "red_pmax": sw.red_pmax}
    given = [k for k, v in red.items() if v is not None]
    if given and len(given) != 3:
        missing = [k for k in red if k not in given]
        raise ScenarioError(f"switch: {', '.join(given)} given without {', '.join(missing)}; give all three of "
                            "red_kmin_bytes, red_kmax_bytes, red_pmax (dequeue ECN marking) or none")
    if given:
        if sw.red_kmin_bytes > sw.red_kmax_bytes:
            raise ScenarioError(f"switch.red_kmin_bytes = {sw.red_kmin_bytes} above switch.red_kmax_bytes = {sw.red_kmax_bytes}: need kmin <= kmax")
        if ecn:
            raise ScenarioError("switch.red_kmin_bytes with switch.ecn_k_bytes: choose one ECN marking "
                                "(red_* at dequeue, or ecn_k_bytes at enqueue)")
        out["red"] = dict(kmin_bytes=sw.red_kmin_bytes, kmax_bytes=sw.red_kmax_bytes, pmax=sw.red_pmax)
    return out


def scheme(sc: Scenario, base: Path) -> dict:
    """``[switch.bm]``: the scheme and its parameters; a Python scheme's module by its path and content."""
    from ..schemes import PYTHON, local_module

    bm = sc.switch.bm
    params = {k: v for k, v in (bm.model_extra or {}).items()}
    mod = None
    if bm.scheme == PYTHON:
        # The spec names the module file next to the scenario by its absolute path, as the
        # resolved scenario.toml does, so that re-running that file gives the same spec.
        mod = local_module(params.get("class"), base)
        if mod is not None:
            params["class"] = f"{mod}:{params['class'].rsplit(':', 1)[1]}"
    extra = {}
    if bm.scheme == "credence":
        from ..credence import resolve_params

        params, extra = resolve_params(params, base)
    spec = dict(scheme=bm.scheme, params=params, **extra)
    if mod is not None:
        # The module's content is part of the spec (the engine ignores the key), so a sweep's
        # content-addressed runs and the provenance spec hash change when the scheme's code does.
        spec["module_sha256"] = hashlib.sha256(mod.read_bytes()).hexdigest()
    return spec


def host(sc: Scenario, switch_ecn: List[int]) -> dict:
    """The host NICs: ECN marking ("switch": the switch's smallest threshold), qdisc, device FIFO."""
    nic_k = sc.host.nic_ecn_k_bytes
    if nic_k == "switch":
        nic_k = min(switch_ecn) if switch_ecn else None
    elif nic_k == "none":
        nic_k = None
    return dict(nic_ecn_k_bytes=nic_k, nic_qdisc=sc.host.nic_qdisc, device_queue_packets=sc.host.device_queue_packets)


#: Congestion controls whose senders are paced at a rate (the engine's cc modules that set a pacing
#: rate: cc/rate.rs for TIMELY, powertcp, theta_powertcp, hpcc, fixed_window; cc/dcqcn.rs); window-based ones
#: (newreno, dctcp, cubic) never pace, so ``transport.pacing_size`` cannot act on them.
RATE_PACED_CCS = ("timely", "powertcp", "theta_powertcp", "hpcc", "fixed_window", "dcqcn")
#: Rate-paced congestion controls whose rate changes during a flow (all but fixed_window): only they can
#: meet ``transport.pacing_rate_change``.
RATE_CHANGING_CCS = tuple(c for c in RATE_PACED_CCS if c != "fixed_window")
#: Congestion controls whose flows send ECN-capable packets and react to ECN-Echo (the engine's
#: ``ecn_capable``: cc/dctcp.rs, cc/dcqcn.rs); only they enter CWR, so ``transport.cwr_dupacks``
#: cannot act on the others.
ECN_CCS = ("dctcp", "dcqcn")


#: Congestion controls that read the switches' INT records (the engine's ``wants_int``: cc/powertcp.rs,
#: cc/hpcc.rs); ``switch.int_tx_bytes`` cannot act on the others.
INT_CCS = ("powertcp", "hpcc")


def _int(sc: Scenario) -> bool:
    """Whether any flow of the scenario runs a congestion control that reads INT."""
    return sc.transport.cc in INT_CCS or any(getattr(w, "cc", None) in INT_CCS for w in sc.workload)


def _paced(sc: Scenario) -> bool:
    """Whether any flow of the scenario runs a rate-paced congestion control."""
    return sc.transport.cc in RATE_PACED_CCS or any(getattr(w, "cc", None) in RATE_PACED_CCS for w in sc.workload)


def _rate_changes(sc: Scenario) -> bool:
    """Whether any flow of the scenario is paced at a rate that changes during the flow."""
    return sc.transport.cc in RATE_CHANGING_CCS or any(getattr(w, "cc", None) in RATE_CHANGING_CCS for w in sc.workload)


#: Congestion controls that mark rounds with the next sequence to send (``AckInfo::next_tx``: cc/dctcp.rs's
#: alpha window, cc/rate.rs's once-per-RTT update); ``transport.next_tx`` cannot act on the others.
ROUND_CCS = ("dctcp", "timely", "powertcp", "theta_powertcp", "hpcc")


def _rounds(sc: Scenario) -> bool:
    """Whether any flow of the scenario runs a congestion control that marks rounds with next_tx."""
    return sc.transport.cc in ROUND_CCS or any(getattr(w, "cc", None) in ROUND_CCS for w in sc.workload)


def _ecn(sc: Scenario) -> bool:
    """Whether any flow of the scenario runs an ECN-capable congestion control."""
    return sc.transport.cc in ECN_CCS or any(getattr(w, "cc", None) in ECN_CCS for w in sc.workload)


def transport(sc: Scenario) -> dict:
    """``[transport]``; unscheduled bytes default to one BDP of the longest path."""
    t, topo = sc.transport, sc.topology
    unsched = t.unscheduled_bytes
    if unsched is None:
        unsched = int(bps(topo.host_link_gbps) * topo.max_base_rtt_us() * 1e-6 / 8)
    min_rto = us(t.min_rto_us)
    # Switches of ns3dc's TCP, named only when set (the engine's defaults are the same) and, for
    # pacing_size, only when a flow is paced, for cwr_dupacks only when a flow is ECN-capable: a
    # spec, and so a run's key, stays what it was for every scenario they cannot act on.
    acts = {"pacing_size": _paced, "pacing_gap": _paced, "pacing_resends": _paced, "next_tx": _rounds, "pacing_rate_change": _rate_changes, "cwr_dupacks": _ecn, "cwr_window": _ecn, "ce_echo": _ecn, "loss_cwr": _ecn,
            "prr_reduction_bound": lambda s: s.transport.recovery == "prr",
            "prr_arithmetic": lambda s: s.transport.recovery == "prr",
            "rate_window_in_recovery": lambda s: s.transport.recovery == "prr" and _rate_changes(s)}
    extra = {k: getattr(t, k) for k, default in (("preopened_init_cwnd", "transport"), ("lost_retransmission", "detect"),
                                                  ("recovery_tail", "rto"), ("pacing_size", "packet"),
                                                  ("pacing_rate_change", "keep"), ("pacing_gap", "exact"), ("pacing_resends", "exempt"), ("next_tx", "highest"),
                                                  ("cwr_dupacks", "recover"), ("cwr_window", "cc"),
                                                  ("ce_echo", "packet"), ("partial_ack", "window"),
                                                  ("loss_marking", "highest_sack"),
                                                  ("recovery_timer", "restart"), ("syn_ack_window_bytes", "none"),
                                                  ("prr_reduction_bound", "ssrb"), ("prr_arithmetic", "exact"),
                                                  ("loss_cwr", "flight"), ("silly_window", "one_segment"),
                                                  ("rate_window_in_recovery", "prr"),
                                                  ("limited_transmit", False), ("loss_exit_acked", "all"),
                                                  ("recovery_exit_acked", "none"),
                                                  ("rtt_samples", "every_ack"))
             if getattr(t, k) != default and acts.get(k, lambda _: True)(sc)}
    if t.syn_ack_window_bytes != "none" and t.syn_ack_window_bytes < t.mss_bytes:
        # a first segment that never fits would never be sent, and no ACK would ever lift the limit
        raise ScenarioError(f"transport.syn_ack_window_bytes = {t.syn_ack_window_bytes}: below transport.mss_bytes = "
                            f"{t.mss_bytes}, so no segment could be sent; allowed: 'none' or at least mss_bytes")
    roce_workloads = any(getattr(w, "transport", None) == "roce" for w in sc.workload)
    if t.kind == "roce":
        # Named only for RoCE: a TCP scenario's spec (and run key) is unchanged.
        extra["kind"] = "roce"
        if t.cc != "dcqcn" or any(getattr(w, "cc", None) not in (None, "dcqcn") and getattr(w, "transport", None) != "tcp"
                                  for w in sc.workload):
            raise ScenarioError(f"transport.cc = '{t.cc}': not allowed with transport.kind = 'roce' (also per workload); allowed: dcqcn")
        if t.handshake:
            raise ScenarioError("transport.handshake = true: not allowed with transport.kind = 'roce' (a queue pair sends at once); allowed: false")
    if t.kind == "roce" or roce_workloads:
        if t.nack_interval_us is not None:
            extra["nack_interval_ps"] = us(t.nack_interval_us)
    elif t.nack_interval_us is not None:
        raise ScenarioError("transport.nack_interval_us needs transport.kind = 'roce' or a workload with transport = 'roce'; "
                            "allowed: set one, or omit it")
    return dict(cc=t.cc, cc_params=t.cc_params, mss_bytes=t.mss_bytes, header_bytes=t.header_bytes,
                init_cwnd_packets=t.init_cwnd_packets, min_rto_ps=min_rto,
                initial_rto_ps=us(t.initial_rto_us) if t.initial_rto_us else min_rto, handshake=t.handshake,
                delayed_ack_packets=t.delayed_ack_packets, delayed_ack_timeout_ps=us(t.delayed_ack_timeout_us),
                ack_priority=t.ack_priority, unscheduled_bytes=unsched, unscheduled_acks=t.unscheduled_acks,
                max_rto_ps=us(t.max_rto_us), sack=t.sack, timestamp_tick_ps=us(t.timestamp_tick_us), recovery=t.recovery, **extra)


def output(sc: Scenario) -> dict:
    out = dict(buffer_sample_ps=us(sc.output.buffer_sample_us), queue_sample_ps=us(sc.output.queue_sample_us))
    if sc.output.drop_log:
        # Only when on: a default scenario's engine spec (and its hash) stays as it was.
        out["drop_log"] = True
    # Likewise the TCP trace: its keys only when it selects flows.
    if sc.output.tcp_trace_flows:
        out["tcp_trace_flows"] = sorted(set(sc.output.tcp_trace_flows))
    if sc.output.tcp_trace_min_size_bytes:
        out["tcp_trace_min_size_bytes"] = sc.output.tcp_trace_min_size_bytes
    return out


def check_u64(spec: dict) -> None:
    bad = _out_of_u64(spec)
    if bad:
        raise ScenarioError(f"{bad[0]} = {bad[1]} (engine spec): outside the engine's 64-bit range; allowed: 0 .. {U64_MAX} "
                            f"(picoseconds, bits/s or bytes); check the scenario key it comes from")


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


def engine_spec_json(spec: dict) -> str:
    return json.dumps(spec, separators=(",", ":"))

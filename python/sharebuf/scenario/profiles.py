"""Compatibility profiles: named sets of dotted-key defaults applied under a scenario's own
keys before it is validated (``profile = "ns3dc"``; docs/scenario.md, "Profiles")."""

import copy
from typing import Any, Dict, Optional

from ..errors import ScenarioError


#: Named compatibility profiles: dotted-key defaults applied under the user's own keys (a key
#: the scenario sets itself wins). ``profile = "none"`` (or no profile) is sharebuf's defaults.
#: docs/scenario.md ("Profiles") and docs/validation.md give each setting's reason.
PROFILES: Dict[str, Dict[str, Any]] = {
    # The ABM/Reverie/Credence authors' ns-3.39 fork (inet-tub/ns3-datacenter, "ns3dc").
    "ns3dc": {
        "topology.ecmp_hash": "same",                # ns-3 global routing: one hash at every switch
        "switch.device_queue_packets": 100,          # PointToPointNetDevice DropTailQueue 100p below each queue disc
        "switch.buffer_accounting": "ip_payload",    # queue discs count 1432 B / 32 B, not 1454 / 54
        "switch.spine_buffer": "leaf_aliased",       # abm-evaluation.cc re-points each spine queue disc to the leaf's
                                                     # SharedMemoryBuffer, its port id colliding with a server port's
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
        "transport.recovery_tail": "resend",         # TcpTxBuffer::NextSeg rule 3 lacks RFC 6675's (1.b): in recovery
                                                     # the un-SACKed tail is resent in order once no hole is left
        "transport.cwr_dupacks": "ns3",              # TcpSocketBase::DupAck starts no recovery in CA_CWR (ECN-capable
                                                     # senders after an ECN-Echo): lost holes resent as the window allows
        "transport.cwr_window": "recovery",          # EnterCwr: ssthresh = GetSsThresh, cwnd brought down by PRR (DCTCP)
        "transport.ce_echo": "ns3",                  # ForwardUp: CE counts only above m_ecnCESeq, so the ACK of a
                                                     # retransmission filling a hole carries no ECN-Echo
        "transport.partial_ack": "ns3",              # ProcessAck: a partial ACK in CA_RECOVERY calls DoRetransmit
                                                     # (one segment at once, whatever the window)
        "transport.recovery_timer": "ns3",           # NewAck(ack, m_isFirstPartialAck): in CA_RECOVERY only the first
                                                     # partial ACK restarts the timer; EnterRecovery restarts none
        "transport.prr_reduction_bound": "ns3",      # TcpPrrRecovery::DoRecovery: RFC 6937's slow-start bound only on an
                                                     # ACK of retransmitted data (m_isRetransDataAcked)
        "transport.prr_arithmetic": "ns3",           # TcpPrrRecovery::DoRecovery multiplies two uint32_t: prr_delivered *
                                                     # ssthresh wraps modulo 2^32 (PRR then sends almost nothing)
        "transport.loss_cwr": "ns3",                 # after a timeout SetSentListLost: an ECN-Echo's EnterCwr runs PRR
                                                     # over the resent data only; below one segment nothing is sent
        "transport.loss_marking": "ns3",             # TcpTxBuffer::UpdateLostCount: a hole is lost once three SACKed segments
                                                     # lie above it (EnterRecovery marks the head too); NextSeg sends new data
                                                     # before an unmarked hole
        "transport.silly_window": "ns3",             # SendPendingData's silly-window check, every flow: nothing goes while
                                                     # cwnd - in flight is below a segment (TIMELY's PRR window = pipe = 0
                                                     # waits for the timer)
        "transport.limited_transmit": True,          # AvailableWindow = cwnd - BytesInFlight, the SACK pipe in any state:
                                                     # in CA_DISORDER each duplicate ACK lets a new segment go
        "transport.loss_exit_acked": "ns3",          # ProcessAck leaving CA_LOSS: segsAcked = (ack - m_recover) / MSS
        "transport.recovery_exit_acked": "ns3",      # ProcessAck leaving CA_RECOVERY: cwnd = ssthresh, then IncreaseWindow
                                                     # with segsAcked = (ack - snd.una before) / MSS
        "transport.rtt_samples": "ns3",              # EstimateRtt: a sample only from an ACK covering m_history's oldest
                                                     # segment, never resent (none from duplicate ACKs or filled holes;
                                                     # the first SYN is in it, so the SYN-ACK gives one)
        "transport.syn_ack_window_bytes": 65535,     # SYN-ACK's unscaled window (TcpSocketBase keeps it as rWnd
                                                     # until the first ACK): first flights of 46 x 1400 B
        "host.nic_ecn_k_bytes": "none",              # the servers' FqCoDel marks only past CoDel's 5 ms target:
                                                     # no step marking at a sender's NIC
        # ns-3.39 TcpCubic's congestion avoidance (for Cubic only: transport.cc or a workload's own cc):
        "transport.cc_params.cnt_clamp_segments": 20,  # CntClamp 20: +1 segment per 20 ACKs (5 %/RTT) until the first loss
        "transport.cc_params.reno_friendly": False,    # TcpCubic::Update has no Reno-friendly (W_est) region
        "transport.cc_params.slow_start_cap": "none",  # TcpCubic::IncreaseWindow: cWnd += segmentsAcked * MSS in slow
                                                       # start, past ssthresh (a CA_LOSS ACK over SACKed data: all of it)
        "transport.cc_params.window_unit": "segments",  # Cubic and DCTCP: TcpCubic counts cwnd, W_max and ssthresh in whole
                                                        # segments, +1 segment per cnt = W / (target - W) ACKed segments;
                                                        # TcpLinuxReno (DCTCP) +1 per floor(cwnd / MSS) ACKed segments
        # ns-3.39 TcpDctcp (for DCTCP only):
        "transport.cc_params.loss_ssthresh": "ns3",    # DCTCP: GetSsThresh = cwnd (1 - alpha/2) at losses and timeouts
                                                       # too, with no floor; TcpAdvanced: 2^32 - 1, which PRR's
                                                       # int(ssthresh - pipe) reads as negative (nothing sent)
        # ns3dc's TcpAdvanced (TIMELY, PowerTCP, θ-PowerTCP): CC_pacingTimer waits payload / rate after each segment
        "transport.pacing_size": "payload",
        "transport.pacing_gap": "ns3",               # DataRate::CalculateBytesTxTime: an integer ns division
        "transport.pacing_resends": "ns3",           # DoRetransmit's SendDataPacket starts CC_pacingTimer if idle
        "transport.next_tx": "ns3",                  # TcpDctcp's alpha window and TcpAdvanced's once-per-RTT update read
                                                     # m_nextTxSequence, which DoRetransmit moves back to a resent hole
        "transport.pacing_rate_change": "rescale",   # SetCCRate moves a pending CC_pacingTimer by new gap - old gap
        # ns3dc's TIMELY (TcpAdvanced::UpdateRateTimely, run-main.sh; for TIMELY only):
        "transport.cc_params.t_low_us": 200,           # TimelyTlow 200 us (the paper: 50)
        "transport.cc_params.ai_mbps": 100,            # AI 100 Mbps (the paper: 10)
        "transport.cc_params.hai_mbps": 150,           # HighAI 150 Mbps after 5 increases of either branch
        "transport.cc_params.segment_bytes": 0,        # once per RTT only (no 64 KB completion events)
        "transport.cc_params.gradient_base": "propagation",  # gradient over the configured 80 us base RTT
        "transport.cc_params.rtt_diff_wraps": True,    # uint64_t lastRTTdiff: a negative difference wraps
        "transport.cc_params.keep_initial_window": True,  # cwnd = InitialCwnd from the SYN-ACK until the first SetCCRate
        # ns3dc's TcpAdvanced (TIMELY, PowerTCP, θ-PowerTCP, HPCC) at a loss or timeout:
        "transport.cc_params.update_trigger": "new_ack",  # ProcessDcAck: an update only for ackNum > lastUpdatedSeq (never
                                                          # lowered), none while the cumulative ACK stalls
        "transport.rate_window_in_recovery": "rate",  # ProcessDcAck (SetCCRate's window) runs after ProcessAck's PRR
        # ns3dc's PowerTCP (TcpAdvanced::UpdateRatePowertcp, per ACK and once per RTT; for PowerTCP only):
        "transport.cc_params.smoothing_base": "reference",  # 0.9 (R_ref/c + AI) + 0.1 R_ref: the (1 - gamma) term on
                                                            # the once-per-RTT reference rate, not the current one
        "transport.cc_params.unsmoothed_below": 0.5,   # R_ref/c + AI with no smoothing while c = uAgg/0.95 <= 0.5
        "transport.cc_params.power_start": "zero",     # uAggregate starts at 0; the first ACK only keeps its records
        "transport.cc_params.tau_base": "propagation", # tau = the configured 80 us base RTT (serialization term lost)
        "transport.cc_params.window_check": "segment", # SendPendingData: a segment goes only if it fits in cwnd = rate tau
        "switch.int_stamp": "all",                   # GenQueueDisc stamps every packet with a FeedbackTag; the receiver's pure
                                                     # ACK carries the data packet's: a sender sees its ACKs' queues too
        "switch.int_tx_bytes": "dequeued",           # GenQueueDisc::DoDequeue stamps txBytes = bytes dequeued before
                                                     # the packet (above the device FIFO), as the queue disc counts them
        # the ABM code's drain-rate estimate (for ABM with a measured µ only):
        "switch.bm.empty_poll_credit_bytes": 1472,   # GenQueueDisc::DoDequeue adds 1,472 B to a queue's dequeue count
                                                     # each time round robin polls it empty
    },
}

#: Profile keys of one buffer-management scheme's ``[switch.bm]`` table, each with the test of the
#: table it applies to: the empty-poll credit exists only in ABM's measured drain rate (``mu_source =
#: "measured"``, the default of ABM's presets "code" and "eval"; `bm::abm::Common::parse`).
BM_PARAM_APPLIES = {
    "switch.bm.empty_poll_credit_bytes": lambda bm: bm.get("scheme") == "abm" and bm.get(
        "mu_source", "measured" if bm.get("preset") in ("code", "eval") else "scheduler") == "measured",
}


#: Profile keys under this prefix are congestion controls' parameters (CC_PARAMS_OF: parameter -> the
#: congestion controls it belongs to): applied to transport.cc_params when transport.cc is one of them, and
#: to the cc_params of every workload whose own cc is.
CC_PARAMS_PREFIX = "transport.cc_params."
#: ns3dc's TcpAdvanced algorithms, which share its rate machinery (RATE_KEYS in cc/rate.rs)
ADVANCED_CCS = ("timely", "powertcp", "theta_powertcp", "hpcc")
CC_PARAMS_OF = {"cnt_clamp_segments": ("cubic",), "reno_friendly": ("cubic",), "slow_start_cap": ("cubic",),
                "window_unit": ("cubic", "dctcp"),
                "loss_ssthresh": ("dctcp", *ADVANCED_CCS), "update_trigger": ADVANCED_CCS,
                **{k: ("timely",) for k in ("t_low_us", "ai_mbps", "hai_mbps", "segment_bytes", "gradient_base",
                                            "rtt_diff_wraps", "keep_initial_window")},
                **{k: ("powertcp",) for k in ("smoothing_base", "unsmoothed_below", "power_start", "tau_base",
                                              "window_check")}}


def cc_param_owners(dotted: str) -> tuple:
    """The congestion controls a profile key ``transport.cc_params.X`` belongs to (empty: not a cc
    parameter, or not one any profile sets)."""
    if not dotted.startswith(CC_PARAMS_PREFIX):
        return ()
    return CC_PARAMS_OF.get(dotted[len(CC_PARAMS_PREFIX):], ())


def cc_param_applies(dotted: str, cc: Optional[str]) -> bool:
    """Whether a profile key applies to flows running congestion control ``cc``: every key that is
    not a congestion control's parameter does; a parameter only for its own congestion controls."""
    owners = cc_param_owners(dotted)
    return not owners or cc in owners


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
    sw = out.get("switch")
    bm = sw.get("bm") if isinstance(sw, dict) else None
    bm = bm if isinstance(bm, dict) else {}
    for dotted, value in PROFILES[name].items():
        if not cc_param_applies(dotted, cc):
            continue  # a congestion control's own parameters: only for those it belongs to
        if dotted in BM_PARAM_APPLIES and not BM_PARAM_APPLIES[dotted](bm):
            continue  # a scheme's own parameter: only where the scenario runs it (as that one)
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
        mine = {d: v for d, v in PROFILES[name].items() if wcc is not None and wcc in cc_param_owners(d)}
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


def strip_profile_keys(sc, d: dict) -> dict:
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

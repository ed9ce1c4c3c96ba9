"""The device and run sections of a scenario: ``[switch]`` (with ``[switch.bm]``, the buffer
manager), ``[host]``, ``[transport]``, ``[output]``, ``[debug]`` and the ``[recorded]`` table
sharebuf writes into a run's scenario.toml."""

from typing import Annotated, Any, Dict, List, Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field

from .fields import FlowId, NonNegFloat, NonNegWhole, NotBool, PosFloat, Priority, Section, StrictFlag, empty_dict, empty_list


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
    scheduler: Literal["sp", "rr", "rr_strict0", "drr"] = "rr"
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
    #: INT's txBytes in a data packet's record (PowerTCP, HPCC): "transmitted", the bytes whose
    #: transmission started on the port before the packet is stamped; "dequeued", the bytes (as
    #: the buffer counts them) that left the port's queues before it, the device FIFO's included
    #: (ns3dc's GenQueueDisc, above the device FIFO).
    int_tx_bytes: Literal["transmitted", "dequeued"] = "transmitted"
    #: Which packets a port stamps with INT (PowerTCP, HPCC): "data" (data packets; their ACKs echo
    #: the records), or "all" (ACKs too, after the records they echo, so a sender also sees the
    #: queues its ACKs cross: ns3dc's GenQueueDisc stamps every packet carrying a FeedbackTag, and
    #: the receiver's pure ACK carries the data packet's).
    int_stamp: Literal["data", "all"] = "data"
    #: Whose pool a spine's downlinks use on a leaf-spine: "own" (the spine's), or "leaf_aliased", as
    #: ns3dc's abm-evaluation.cc (a bug): the spine side of each leaf-spine link is re-pointed to the
    #: leaf's shared buffer under the spine's own port id (l·links + j), which is also one of that
    #: leaf's server ports, so the spine port toward leaf l is admitted by leaf l's scheme against leaf
    #: l's pool and the queue counters of leaf l's port of that index, and charged there. Acts only on a
    #: leaf-spine with one of ns3dc's arrival-time schemes (dt, fab, cs, ib, abm).
    spine_buffer: Literal["own", "leaf_aliased"] = "own"
    #: Lossless priorities protected by PFC (docs/lossless.md); empty: all lossy (default).
    lossless_priorities: Optional[List[Annotated[int, NotBool, Field(ge=0, le=7)]]] = None
    #: Headroom per lossless (ingress port, priority); default: the bound of docs/lossless.md §6
    #: per port (2·rate·delay/8 + (3 + upstream device FIFO)·largest wire packet + 64 B).
    pfc_headroom_bytes: Optional[Annotated[int, NotBool, Field(gt=0)]] = None
    #: Resume when the ingress bytes fall below this (default 1248), or ...
    pfc_xon_bytes: Optional[Annotated[int, NotBool, Field(ge=0)]] = None
    #: ... when they are this far below the PFC threshold (default 2496; and the headroom is empty).
    pfc_xon_offset_bytes: Optional[Annotated[int, NotBool, Field(ge=0)]] = None
    #: DT's alpha on the ingress view (default 1.0): the PFC threshold is alpha × the free ingress shared pool.
    #: All PFC keys default to None so that a lossy scenario's resolved scenario.toml is unchanged.
    pfc_alpha_ingress: Optional[PosFloat] = None
    #: ECN marking at dequeue on a RED ramp of the egress queue (docs/lossless.md §3, the RoCE
    #: runs' switch): above red_kmax_bytes always, above red_kmin_bytes with probability
    #: red_pmax · (q − kmin)/(kmax − kmin), q the queue's bytes just after the packet left.
    #: Give all three or none (default: none, no dequeue marking); not with ecn_k_bytes.
    red_kmin_bytes: Optional[Annotated[int, NotBool, Field(ge=0)]] = None
    red_kmax_bytes: Optional[Annotated[int, NotBool, Field(ge=0)]] = None
    red_pmax: Optional[Annotated[float, NotBool, Field(gt=0, le=1)]] = None
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
    #: "tcp" (default) or "roce": the rate-based go-back-N RDMA sender of docs/lossless.md §3
    #: (cc = "dcqcn", handshake = false; no window, no retransmission timer).
    kind: Optional[Literal["tcp", "roce"]] = None
    #: RoCE receiver: at most one NACK per this interval for the same expected sequence (default 500).
    nack_interval_us: Optional[PosFloat] = None
    cc: str = "newreno"
    cc_params: Dict[str, Any] = Field(default_factory=empty_dict)
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
    #: The un-SACKed data above the highest SACKed byte during SACK recovery (a window's tail):
    #: "rto" (not resent in recovery, RFC 6675's NextSeg; the retransmission timer finds it) or
    #: "resend" (resent in order once no hole and no new data is left, as ns-3.39's NextSeg rule 3).
    recovery_tail: Literal["rto", "resend"] = "rto"
    #: Duplicate ACKs while an ECN-capable sender (DCTCP, DCQCN) is in CWR, from an ECN-Echo until
    #: the cumulative ACK passes what was sent then: "recover" (they start loss recovery, as
    #: Linux) or "ns3" (ns-3.39's CA_CWR: no recovery; the holes with 3 SACKed segments above are
    #: resent as the window allows, without a second cut; the rest waits for the timer). Needs sack.
    cwr_dupacks: Literal["recover", "ns3"] = "recover"
    #: DCTCP's window in CWR: "cc" (DCTCP cuts cwnd to cwnd (1 - alpha/2) at the ECN-Echo, once per
    #: window) or "recovery" (ns-3.39's EnterCwr: ssthresh by the loss rule, cwnd brought down to it by
    #: PRR on ACKs of new data, or at once under recovery = "rfc6675"; cwnd = ssthresh when CWR ends).
    cwr_window: Literal["cc", "recovery"] = "cc"
    #: Which CE marks an ECN receiver echoes: "packet" (each data segment's own, RFC 8257) or "ns3"
    #: (ns-3.39's TcpSocketBase::ForwardUp: a CE counts only on a segment above the highest one whose CE
    #: counted so far; any other segment's ACK carries no ECN-Echo, so a retransmission filling a hole
    #: below later marked data does not put the sender in CWR).
    ce_echo: Literal["packet", "ns3"] = "packet"
    #: A partial ACK during SACK recovery: "window" (the scoreboard and the window decide what is sent,
    #: RFC 6675) or "ns3" (ns-3.39's ProcessAck calls DoRetransmit: unless the new first unacknowledged
    #: segment was retransmitted already, one segment goes at once whatever the window: that segment if
    #: presumed lost, else new data, else that segment). Needs sack.
    partial_ack: Literal["window", "ns3"] = "window"
    #: Which un-SACKed data SACK recovery presumes lost, to resend before new data and to leave out of the
    #: pipe: "highest_sack" (every hole below the highest SACKed byte) or "ns3" (ns-3.39's TcpTxBuffer:
    #: only a segment with 3 SACKed segments above it, UpdateLostCount; a hole above that stays in the pipe,
    #: new data goes before it, and a partial ACK whose new head is not presumed lost sends new data). Needs sack.
    loss_marking: Literal["highest_sack", "ns3"] = "highest_sack"
    #: The retransmission timer during loss recovery: "restart" (restarted when recovery begins and on every
    #: ACK of new data) or "ns3" (ns-3.39: not restarted when recovery begins; of the partial ACKs only the
    #: first since the last full ACK of a recovery or the last timeout restarts it).
    recovery_timer: Literal["restart", "ns3"] = "restart"
    #: PRR's bound while the pipe is at or below ssthresh (recovery = "prr"): "ssrb" (RFC 6937's slow-start
    #: reduction bound on every ACK: max(prr_delivered - prr_out, DeliveredData) + one MSS) or "ns3"
    #: (ns-3.39's TcpPrrRecovery: that bound only on an ACK whose cumulative acknowledgment covers a
    #: retransmitted segment not SACKed before, else DeliveredData alone, so a sender that lost most of
    #: its window resends no faster than its ACKs come back).
    prr_reduction_bound: Literal["ssrb", "ns3"] = "ssrb"
    #: PRR's integer arithmetic (recovery = "prr"): "exact", or "ns3" (ns-3.39's TcpPrrRecovery::DoRecovery in
    #: 32-bit unsigned integers: prr_delivered * ssthresh wraps modulo 2^32 before the division by RecoverFS, so
    #: with windows of hundreds of KB the proportional part sends almost nothing once a few dozen KB are
    #: delivered; and prr_delivered - prr_out wraps when prr_out is the larger).
    prr_arithmetic: Literal["exact", "ns3"] = "exact"
    #: In loss recovery, the window an ACK leaves when a rate-based congestion control (TIMELY, PowerTCP,
    #: theta-PowerTCP, HPCC) set its own on it (recovery = "prr"): "prr" (PRR's, computed after the
    #: algorithm's) or "rate" (ns3dc's TcpSocketBase runs ProcessDcAck, and with it SetCCRate's window, after
    #: ProcessAck's PRR: the algorithm's window stands until the next ACK).
    rate_window_in_recovery: Literal["prr", "rate"] = "prr"
    #: An ECN-capable sender's window after a retransmission timeout, until the cumulative ACK reaches what
    #: had been sent when it fired: "flight" (PRR in CWR counts the data outstanding as the pipe; a window
    #: below one segment still sends one when nothing is in flight) or "ns3" (ns-3.39's SetSentListLost: the
    #: data not resent since the timeout is presumed lost, so an ECN-Echo meanwhile, EnterCwr from CA_LOSS,
    #: runs PRR over only what was resent; and SendPendingData's silly-window check: a window below one
    #: segment sends nothing unless the rest of the data fits, so such a sender waits for the next timeout).
    loss_cwr: Literal["flight", "ns3"] = "flight"
    #: A window left below one segment with nothing in flight: "one_segment" (one segment goes, so a sender
    #: never stalls on its own window) or "ns3" (ns-3.39's SendPendingData silly-window check for every flow
    #: and state, fractional rate-based windows too: nothing goes while cwnd - in flight is below one segment
    #: unless the rest of the data fits; a sender whose window fell to an empty pipe waits for the timer).
    silly_window: Literal["one_segment", "ns3"] = "one_segment"
    #: Limited Transmit (RFC 3042, a SHOULD of RFC 5681 §3.2): on duplicate ACKs before recovery, new data
    #: goes while the pipe leaves room in cwnd: with SACK the pipe is the data outstanding less what the
    #: receiver holds (RFC 6675 §5 step 3; ns-3.39's AvailableWindow in CA_DISORDER), without SACK one segment
    #: less per duplicate ACK, at most two. false: duplicate ACKs send nothing until recovery begins.
    limited_transmit: StrictFlag = False
    #: What the ACK that ends the loss state after a retransmission timeout (it reaches what had been sent
    #: when the timer fired) counts for the congestion control: "all" it acknowledges, or "ns3" (ns-3.39's
    #: ProcessAck leaving CA_LOSS: segsAcked = (ack - m_recover) / MSS, the whole segments above that point
    #: only, so a sender whose ACK jumps over SACKed data restarts its slow start from the window it had).
    loss_exit_acked: Literal["all", "ns3"] = "all"
    #: What the ACK that ends a fast recovery (it reaches the recovery point) counts for the congestion
    #: control's window growth: "none" (RFC 6675 and RFC 6937: cwnd = ssthresh, nothing grows on it) or "ns3"
    #: (ns-3.39's ProcessAck leaving CA_RECOVERY: cwnd = ssthresh, then IncreaseWindow with segsAcked = (ack -
    #: snd.una before it) / MSS, the SACKed data the ACK jumps over included).
    recovery_exit_acked: Literal["none", "ns3"] = "none"
    #: Which ACKs give an RTT sample for the retransmission timeout (RFC 6298): "every_ack" (each ACK's
    #: timestamp echo, RFC 7323 §4, as Linux) or "ns3" (ns-3.39's EstimateRtt: only an ACK that covers the
    #: oldest segment of its history, sent once and after the last timeout, or the SYN-ACK of a SYN sent once;
    #: duplicate ACKs and the ACKs of resent data give none, so the RTO a recovery starts with holds until it is over).
    rtt_samples: Literal["every_ack", "ns3"] = "every_ack"
    #: Bytes a rate-paced packet (TIMELY, PowerTCP, θ-PowerTCP, HPCC, fixed_window) books at the pacing rate:
    #: "packet" (payload and header_bytes: the wire size) or "payload" (ns3dc's TcpSocketBase
    #: waits payload / rate after each segment, so at line rate it outpaces its NIC by the headers).
    pacing_size: Literal["packet", "payload"] = "packet"
    #: A rate change (TIMELY, PowerTCP, ...) while a paced sender waits out its gap: "keep", the gap
    #: booked at the old rate stands; "rescale", as ns3dc's SetCCRate, the pending gap moves by the
    #: last paced packet's time at the new rate minus its time at the old one (unless that would
    #: end it by now).
    pacing_rate_change: Literal["keep", "rescale"] = "keep"
    #: The gap a rate-paced packet books: "exact" (its bytes at the pacing rate, to the ps) or "ns3"
    #: (ns-3's DataRate::CalculateBytesTxTime divides an integer ns count, so each gap is truncated
    #: to whole ns: at 600 Mbps a 1400 B segment waits 18,666 ns, not 18,666.67).
    pacing_gap: Literal["exact", "ns3"] = "exact"
    #: A segment a rate-paced sender resends outside its send loop (the fast retransmit, a partial ACK's or a
    #: lost retransmission's resend): "exempt", it goes at once and books no gap; "ns3", it goes at once and,
    #: if no gap is running, starts one (ns-3's SendDataPacket schedules CC_pacingTimer for every segment
    #: it sends while the timer is idle), so the next new segment waits a gap after it.
    pacing_resends: Literal["exempt", "ns3"] = "exempt"
    #: The sequence a congestion control marks its rounds with (DCTCP's alpha window; the once-per-RTT update of
    #: TIMELY, PowerTCP, θ-PowerTCP, HPCC): "highest", snd.nxt (the highest sent); "ns3", ns-3.39's
    #: m_nextTxSequence: the end of the last segment SendPendingData sent, the start of the last one
    #: DoRetransmit resent, raised to each new cumulative ACK, so in a recovery it falls back to the holes
    #: being resent and the rounds end sooner.
    next_tx: Literal["highest", "ns3"] = "highest"
    #: The receive window the receiver advertises in its SYN-ACK, in bytes: a TCP sender keeps its data in
    #: flight within it until the receiver's first ACK, pre-opened connections (incast responses) included;
    #: "none": no limit. ns-3 (so ns3dc) takes the SYN-ACK's 16-bit window unscaled (RFC 7323): 65535, so a
    #: first flight holds 46 segments of 1400 B whatever the initial window.
    syn_ack_window_bytes: Union[Annotated[int, NotBool, Field(ge=1)], Literal["none"]] = "none"




class OutputSection(Section):
    #: Sampling period of each switch's buffer occupancy (0: off).
    buffer_sample_us: NonNegFloat = 100.0
    #: Sampling period of every queue's occupancy (0 or omitted: off; it can be large).
    queue_sample_us: NonNegFloat = 0.0
    #: Write drops.parquet: one row per packet dropped at a switch or a host NIC (off: no file).
    drop_log: StrictFlag = False
    #: Write tcp_trace.parquet for these TCP flows (ids as flows.parquet's flow_id): one row per
    #: sender event (send, ack, timeout) with the sender's window variables after it.
    tcp_trace_flows: List[FlowId] = Field(default_factory=empty_list)
    #: ... and for every TCP flow of at least this many bytes (0: off).
    tcp_trace_min_size_bytes: Annotated[NonNegWhole, Field(le=2**64 - 1)] = 0


class DebugSection(Section):
    #: Check the engine's invariants (conservation of packets and bytes, buffer accounting,
    #: empty pools after the drain, no event in the past) at every sample tick and at the end
    #: of the run; a violation stops the run with a message naming it. Debug builds always check.
    check_invariants: bool = False



class Recorded(Section):
    """``[recorded]``: what made a run's scenario.toml (provenance.resolved_scenario)."""

    sharebuf_version: Optional[str] = None
    #: The engine build and summary code that ran it (provenance.model_revision).
    model_revision: Optional[str] = None
    #: Input file (absolute path) -> its sha256 when recorded.
    inputs: Dict[str, str] = Field(default_factory=empty_dict)

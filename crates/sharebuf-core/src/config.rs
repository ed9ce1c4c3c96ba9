//! The fully resolved simulation spec the engine runs.
//!
//! Python (`sharebuf.config`) validates the user's TOML scenario, resolves file names
//! and units, and hands the engine this spec as JSON. All times are integer picoseconds,
//! all rates bits per second, all sizes bytes.

use serde::Deserialize;
use serde_json::{Map, Value};

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimSpec {
    pub seed: u64,
    /// Hard stop; unfinished flows are reported as such.
    pub max_ps: u64,
    /// Workload generators create no flow starting at or after this time.
    pub arrivals_until_ps: u64,
    pub topology: TopologySpec,
    pub switch: SwitchSpec,
    #[serde(default)]
    pub host: HostSpec,
    pub transport: TransportSpec,
    #[serde(default)]
    pub workloads: Vec<WorkloadSpec>,
    #[serde(default)]
    pub output: OutputSpec,
    #[serde(default)]
    pub debug: DebugSpec,
}

/// Debugging aids (`[debug]`).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DebugSpec {
    /// Check the engine invariants (`invariants.rs`) at every sample tick and at the end of
    /// the run; debug builds check them always.
    #[serde(default)]
    pub check_invariants: bool,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum TopologySpec {
    LeafSpine {
        leaves: u32,
        spines: u32,
        servers_per_leaf: u32,
        links_per_leaf_spine: u32,
        host_link_bps: u64,
        fabric_link_bps: u64,
        link_delay_ps: u64,
        /// "salted" (an independent hash per switch) or "same" (one hash at every switch, ns-3).
        #[serde(default = "salted")]
        ecmp_hash: String,
    },
    /// k-ary three-tier fat-tree (topology.rs `fat_tree`).
    FatTree {
        k: u32,
        hosts_per_edge: u32,
        host_link_bps: u64,
        edge_agg_link_bps: u64,
        agg_core_link_bps: u64,
        host_link_delay_ps: u64,
        edge_agg_link_delay_ps: u64,
        agg_core_link_delay_ps: u64,
        #[serde(default = "salted")]
        ecmp_hash: String,
    },
    Star {
        hosts: u32,
        link_bps: u64,
        link_delay_ps: u64,
    },
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SwitchSpec {
    pub buffer_bytes: u64,
    pub queues_per_port: u32,
    /// "sp" (queue 0 first), "rr" (packet round robin) or "drr".
    pub scheduler: String,
    /// DRR quantum weights, one per queue (bytes per round = weight × quantum_bytes).
    #[serde(default)]
    pub drr_weights: Vec<u32>,
    #[serde(default = "default_quantum")]
    pub drr_quantum_bytes: u32,
    /// ECN step-marking threshold per queue in bytes (one value for all queues, or one per queue).
    #[serde(default)]
    pub ecn_k_bytes: Vec<u64>,
    /// Packets of the per-port device FIFO below the buffer manager, outside the shared
    /// buffer (ns-3's PointToPointNetDevice queue); 0: none.
    #[serde(default)]
    pub device_queue_packets: u32,
    /// "wire" (payload + headers) or "ip_payload" (wire minus the 2 B point-to-point and
    /// 20 B IPv4 headers, as ns-3's queue discs count).
    #[serde(default = "wire")]
    pub buffer_accounting: String,
    /// INT's txBytes: "transmitted" (the bytes whose transmission started before the packet is
    /// stamped) or "dequeued" (the bytes, as the buffer counts them, that left the port's
    /// queues before it: ns3dc's `GenQueueDisc`, above the device FIFO).
    #[serde(default = "transmitted")]
    pub int_tx_bytes: String,
    /// Which packets a port stamps with INT: "data" (data packets; their ACKs echo the records)
    /// or "all" (ACKs too, after the records they echo: ns3dc's `GenQueueDisc` stamps every
    /// packet carrying a `FeedbackTag`, and the receiver's pure ACK carries the data packet's).
    #[serde(default = "data")]
    pub int_stamp: String,
    /// Whose pool a spine's downlink uses on a leaf-spine: "own" (the spine's) or "leaf_aliased"
    /// (ns3dc's `abm-evaluation.cc`: the spine side of each leaf-spine link is re-pointed to the
    /// leaf's `SharedMemoryBuffer`, under the spine's own port id, l·links + j, which is also one
    /// of that leaf's server ports: the spine port toward leaf l is admitted by leaf l's scheme
    /// against leaf l's pool and the queue counters of leaf l's port of that index, and charged
    /// there).
    #[serde(default = "own")]
    pub spine_buffer: String,
    pub bm: BmSpec,
    /// Lossless priorities and PFC (docs/lossless.md); None: every priority is lossy.
    #[serde(default)]
    pub pfc: Option<PfcSpec>,
    /// ECN marking at dequeue on a RED-like ramp of the egress queue (None: off).
    #[serde(default)]
    pub red: Option<RedSpec>,
}

/// `[switch] red_*`: ECN marking of ECN-capable packets at dequeue, on the queue's bytes just
/// after the packet left (docs/lossless.md §3): above `kmax_bytes` always, above `kmin_bytes`
/// with probability `pmax · (q − kmin) / (kmax − kmin)`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RedSpec {
    pub kmin_bytes: u64,
    pub kmax_bytes: u64,
    pub pmax: f64,
}

/// `[switch]`'s lossless keys as the engine receives them.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PfcSpec {
    /// Priorities (0..=7, each below queues_per_port) that are lossless.
    pub lossless_priorities: Vec<u8>,
    /// Headroom per lossless (ingress port, priority); None: the bound of docs/lossless.md §6
    /// per port (its link rate and delay, the transport's largest wire packet, the upstream
    /// device FIFO).
    #[serde(default)]
    pub headroom_bytes: Option<u64>,
    #[serde(default = "default_xon")]
    pub xon_bytes: u64,
    #[serde(default = "default_xon_offset")]
    pub xon_offset_bytes: u64,
    #[serde(default = "default_alpha_ingress")]
    pub alpha_ingress: f64,
}

fn default_xon() -> u64 {
    1248
}

fn default_xon_offset() -> u64 {
    2496
}

fn default_alpha_ingress() -> f64 {
    1.0
}

fn wire() -> String {
    "wire".into()
}

fn data() -> String {
    "data".into()
}

fn transmitted() -> String {
    "transmitted".into()
}

fn salted() -> String {
    "salted".into()
}

fn default_quantum() -> u32 {
    1500
}

#[derive(Clone, Debug, Deserialize)]
pub struct BmSpec {
    pub scheme: String,
    /// Scheme parameters, read by the scheme's own builder.
    #[serde(default)]
    pub params: serde_json::Map<String, serde_json::Value>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostSpec {
    /// ECN step-marking threshold of each host NIC queue (None: never marks).
    #[serde(default)]
    pub nic_ecn_k_bytes: Option<u64>,
    /// Host NIC queue discipline: "fifo" (unbounded) or "fq_codel" (ns-3's default root disc).
    #[serde(default = "fifo")]
    pub nic_qdisc: String,
    /// Device FIFO (packets) below the host NIC's queue discipline; 0: none.
    #[serde(default)]
    pub device_queue_packets: u32,
}

fn fifo() -> String {
    "fifo".into()
}

impl Default for HostSpec {
    fn default() -> Self {
        HostSpec { nic_ecn_k_bytes: None, nic_qdisc: fifo(), device_queue_packets: 0 }
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TransportSpec {
    /// "tcp" (the reliable byte stream every congestion control plugs into) or "roce" (the
    /// rate-based go-back-N RDMA sender of docs/lossless.md §3, `transport/roce.rs`).
    #[serde(default = "tcp_kind")]
    pub kind: String,
    /// RoCE receiver: at most one NACK per this interval for the same expected sequence.
    #[serde(default = "default_nack_interval")]
    pub nack_interval_ps: u64,
    pub cc: String,
    #[serde(default)]
    pub cc_params: serde_json::Map<String, serde_json::Value>,
    pub mss_bytes: u32,
    pub header_bytes: u32,
    pub init_cwnd_packets: u32,
    pub min_rto_ps: u64,
    pub initial_rto_ps: u64,
    pub handshake: bool,
    /// ACK every n-th in-order segment (1: every segment).
    pub delayed_ack_packets: u32,
    pub delayed_ack_timeout_ps: u64,
    /// Priority of pure ACKs, SYNs and SYN-ACKs.
    pub ack_priority: u8,
    /// Bytes at the start of each flow whose packets are tagged unscheduled.
    pub unscheduled_bytes: u64,
    /// Tag pure ACKs/SYNs unscheduled too (the ABM code does).
    pub unscheduled_acks: bool,
    /// Cap on the retransmission timeout.
    pub max_rto_ps: u64,
    /// Selective acknowledgments with RFC 6675 recovery (else NewReno).
    #[serde(default = "yes")]
    pub sack: bool,
    /// RTT timestamp clock tick (0: exact).
    #[serde(default)]
    pub timestamp_tick_ps: u64,
    /// SACK loss recovery: "rfc6675" or "prr" (RFC 6937).
    #[serde(default = "rfc6675")]
    pub recovery: String,
    /// Initial window of a flow on a pre-opened connection: "transport" (`init_cwnd_packets`) or
    /// "fit" (size / MSS + 1 segments: ns3dc's incast applications).
    #[serde(default = "transport_cwnd")]
    pub preopened_init_cwnd: String,
    /// A lost retransmission during SACK recovery: "detect" (RACK-style, data sent after it SACKed)
    /// or "rto" (only the retransmission timer finds it: ns-3.39's `TcpTxBuffer::NextSeg`).
    #[serde(default = "detect")]
    pub lost_retransmission: String,
    /// The un-SACKed data above the highest SACKed byte during SACK recovery: "rto" (not
    /// retransmitted in recovery: RFC 6675's NextSeg with its criterion (1.b); the timer finds
    /// it) or "resend" (retransmitted in order once no hole is left and no new data, as ns-3.39's
    /// `TcpTxBuffer::NextSeg` rule 3, which drops (1.b)).
    #[serde(default = "rto")]
    pub recovery_tail: String,
    /// Duplicate ACKs and SACKs while an ECN-capable sender is in CWR (after an ECN-Echo, until
    /// the cumulative ACK passes what was sent then): "recover" (they start loss recovery, as
    /// Linux's CWR → Recovery) or "ns3" (ns-3.39's `TcpSocketBase::DupAck` counts them but starts
    /// no recovery in CA_CWR: the holes with three SACKed segments above are resent as the window
    /// allows, no second window cut, the rest waits for the timer).
    #[serde(default = "recover")]
    pub cwr_dupacks: String,
    /// DCTCP's window in CWR: "cc" (the congestion control cuts cwnd at the ECN-Echo, once per
    /// window) or "recovery" (ns-3.39's `TcpSocketBase::EnterCwr`: ssthresh from the congestion
    /// control's loss rule, cwnd brought down to it by PRR on the ACKs of new data, or set to it
    /// at once under `recovery = "rfc6675"`, and set to it when CWR ends).
    #[serde(default = "cc_window")]
    pub cwr_window: String,
    /// Which CE marks the receiver echoes: "packet" (each data segment's own CE, RFC 8257) or
    /// "ns3" (ns-3.39's `TcpSocketBase::ForwardUp`: a CE counts only on a segment above the
    /// highest one whose CE counted so far; any other ECN-capable segment clears the echo, so a
    /// retransmission that fills a hole is acknowledged without ECN-Echo).
    #[serde(default = "packet")]
    pub ce_echo: String,
    /// A partial ACK in SACK recovery: "window" (the scoreboard and the window decide what is
    /// sent, RFC 6675) or "ns3" (ns-3.39's `TcpSocketBase::ProcessAck`: unless the new first
    /// unacknowledged segment was retransmitted already, `DoRetransmit` sends one segment at once,
    /// whatever the window: that segment if presumed lost, else new data, else that segment).
    #[serde(default = "window")]
    pub partial_ack: String,
    /// Which un-SACKed data SACK recovery presumes lost: "highest_sack" (every hole below the
    /// highest SACKed byte: it is resent before new data) or "ns3" (ns-3.39's `TcpTxBuffer`:
    /// only a segment with DupThresh = 3 SACKed segments above it, `UpdateLostCount`, RFC 6675's
    /// IsLost in segments; a hole above that is in flight for the pipe, `NextSeg` sends new data
    /// before it and resends it only by its rule 3, and a partial ACK whose new head is not
    /// presumed lost sends new data, `partial_ack = "ns3"`).
    #[serde(default = "highest_sack")]
    pub loss_marking: String,
    /// The retransmission timer during loss recovery: "restart" (restarted when recovery
    /// begins and on every ACK of new data) or "ns3" (ns-3.39: not restarted when recovery
    /// begins, and of the partial ACKs only the first since the last full ACK of a recovery or
    /// the last timeout restarts it, `NewAck(ack, m_isFirstPartialAck)`).
    #[serde(default = "restart")]
    pub recovery_timer: String,
    /// PRR's bound while the pipe is at or below ssthresh (`recovery = "prr"`): "ssrb" (RFC 6937
    /// §3's slow-start reduction bound on every ACK: max(prr_delivered − prr_out, DeliveredData)
    /// + MSS) or "ns3" (ns-3.39's `TcpPrrRecovery::DoRecovery`: that bound only on an ACK whose
    /// cumulative acknowledgment covers a retransmitted segment not SACKed before
    /// (`m_isRetransDataAcked`, set in `CA_RECOVERY` only), else DeliveredData alone).
    #[serde(default = "ssrb")]
    pub prr_reduction_bound: String,
    /// PRR's integer arithmetic (`recovery = "prr"`): "exact", or "ns3" (ns-3.39's
    /// `TcpPrrRecovery::DoRecovery` in 32-bit unsigned integers: prr_delivered · ssthresh wraps
    /// modulo 2^32 before the division by RecoverFS, and prr_delivered − prr_out wraps when
    /// prr_out is the larger).
    #[serde(default = "exact")]
    pub prr_arithmetic: String,
    /// In loss recovery, which window an ACK that updated a rate-based algorithm's rate leaves
    /// (`recovery = "prr"`): "prr" (PRR's, set after the algorithm's) or "rate" (ns3dc's
    /// `TcpSocketBase`: `ProcessDcAck`, and with it `SetCCRate`'s window, runs after
    /// `ProcessAck`'s PRR, so the algorithm's window stands until the next ACK).
    #[serde(default = "prr_window")]
    pub rate_window_in_recovery: String,
    /// An ECN-capable sender's window after a retransmission timeout, until the cumulative ACK
    /// reaches what had been sent when it fired: "flight" (PRR in CWR counts the data
    /// outstanding as the pipe, and a window below one segment still sends one when nothing is
    /// in flight) or "ns3" (ns-3.39's `TcpTxBuffer::SetSentListLost`: the data not resent since
    /// the timeout is presumed lost, so an ECN-Echo that enters CWR meanwhile, `EnterCwr` from
    /// `CA_LOSS`, runs PRR over only what was resent; and `SendPendingData`'s silly-window
    /// check: a window below one segment sends nothing unless the rest of the data fits).
    #[serde(default = "flight")]
    pub loss_cwr: String,
    /// A window left below one segment with nothing in flight: "one_segment" (one segment goes,
    /// so a sender never stalls on its own window) or "ns3" (ns-3.39's `SendPendingData`
    /// silly-window check, for every flow and state: nothing goes while cwnd − in flight is below
    /// one segment unless the rest of the data fits; a sender whose window fell to its pipe with
    /// nothing in flight waits for the timer).
    #[serde(default = "one_segment")]
    pub silly_window: String,
    /// Limited Transmit (RFC 3042, RFC 5681 §3.2; with SACK as RFC 6675 §5 step 3 and ns-3.39's
    /// `AvailableWindow` in CA_DISORDER): on duplicate ACKs before recovery, the window test
    /// counts the pipe (outstanding less SACKed), without SACK up to two segments less per the
    /// first two duplicates, so each duplicate lets a new segment go.
    #[serde(default)]
    pub limited_transmit: bool,
    /// What the ACK that ends the loss state after a timeout (it reaches what had been sent
    /// when the timer fired) counts for the congestion control: "all" it acknowledges, or
    /// "ns3" (ns-3.39's `ProcessAck` leaving CA_LOSS: segsAcked = (ack − m_recover) / MSS, the
    /// whole segments above that point only).
    #[serde(default = "all")]
    pub loss_exit_acked: String,
    /// What the ACK that ends a fast recovery (it reaches the recovery point) counts for the
    /// congestion control's window growth: "none" (RFC 6675 / 6937: cwnd = ssthresh, no growth on
    /// it) or "ns3" (ns-3.39's `ProcessAck` leaving CA_RECOVERY: cwnd = ssthresh, then
    /// `IncreaseWindow` with segsAcked = (ack − snd.una before it) / MSS, the SACKed data it jumps
    /// over included).
    #[serde(default = "none_str")]
    pub recovery_exit_acked: String,
    /// Which ACKs give an RTT sample (RFC 6298): "every_ack" (each ACK's timestamp echo, as
    /// RFC 7323 §4 and Linux) or "ns3" (ns-3.39's `EstimateRtt`: only an ACK covering the oldest
    /// segment in its history, sent once and after the last timeout, or the SYN-ACK of a SYN
    /// sent once; duplicate ACKs and the ACKs of retransmitted segments give none, so the RTO
    /// holds through a recovery).
    #[serde(default = "every_ack")]
    pub rtt_samples: String,
    /// Bytes a paced packet books at the pacing rate: "packet" (payload and headers, the wire
    /// size) or "payload" (ns3dc's `TcpSocketBase`: the CC pacing timer waits payload / rate).
    #[serde(default = "packet")]
    pub pacing_size: String,
    /// A rate change while a paced sender waits out its gap: "keep" (the gap booked at the old
    /// rate stands) or "rescale" (ns3dc's `TcpSocketBase::SetCCRate`: the pending gap moves by
    /// the new rate's gap minus the old one's for the last paced packet, unless that would end
    /// it by now, when it stands).
    #[serde(default = "keep")]
    pub pacing_rate_change: String,
    /// The gap a paced packet books: "exact" (its bytes at the pacing rate, to the ps, rounded
    /// up) or "ns3" (ns-3's `DataRate::CalculateBytesTxTime`: an integer `Time` division, so
    /// the gap is truncated to whole ns).
    #[serde(default = "exact")]
    pub pacing_gap: String,
    /// A segment a paced sender resends outside its send loop (fast retransmit, a partial ACK's
    /// or a lost retransmission's resend): "exempt" (it goes at once and books no gap) or "ns3"
    /// (it goes at once and, if no gap is running, starts one, as ns-3's `SendDataPacket`
    /// schedules `CC_pacingTimer` for every segment it sends while the timer is idle).
    #[serde(default = "exempt")]
    pub pacing_resends: String,
    /// The sequence a congestion control marks its rounds with (DCTCP's α window; TIMELY's,
    /// PowerTCP's, θ-PowerTCP's, HPCC's once-per-RTT update): "highest" (snd.nxt, the highest
    /// sent) or "ns3" (ns-3.39's `m_nextTxSequence`: the end of the last segment
    /// `SendPendingData` sent, the start of the last one `DoRetransmit` resent, raised to each
    /// new cumulative ACK; in a recovery it falls back to the holes being resent).
    #[serde(default = "highest")]
    pub next_tx: String,
    /// The receive window the receiver advertises in its SYN-ACK, in bytes: a TCP sender keeps
    /// its data in flight within it until the receiver's first ACK (0: no limit). ns-3 puts the
    /// SYN-ACK's window field there unscaled (RFC 7323), at most 65,535 B, and scales the window
    /// of every later ACK.
    #[serde(default)]
    pub syn_ack_window_bytes: u64,
}

fn tcp_kind() -> String {
    "tcp".into()
}

fn default_nack_interval() -> u64 {
    500_000_000
}

fn rto() -> String {
    "rto".into()
}

fn restart() -> String {
    "restart".into()
}

fn ssrb() -> String {
    "ssrb".into()
}

fn exact() -> String {
    "exact".into()
}
fn prr_window() -> String {
    "prr".into()
}

fn flight() -> String {
    "flight".into()
}

fn one_segment() -> String {
    "one_segment".into()
}

fn all() -> String {
    "all".into()
}

fn none_str() -> String {
    "none".into()
}

fn every_ack() -> String {
    "every_ack".into()
}

fn window() -> String {
    "window".into()
}

fn highest_sack() -> String {
    "highest_sack".into()
}

fn cc_window() -> String {
    "cc".into()
}

fn recover() -> String {
    "recover".into()
}

fn packet() -> String {
    "packet".into()
}

fn own() -> String {
    "own".into()
}

fn highest() -> String {
    "highest".into()
}

fn exempt() -> String {
    "exempt".into()
}

fn keep() -> String {
    "keep".into()
}

fn detect() -> String {
    "detect".into()
}

fn transport_cwnd() -> String {
    "transport".into()
}

fn rfc6675() -> String {
    "rfc6675".into()
}

fn yes() -> bool {
    true
}

#[derive(Clone, Debug, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum WorkloadSpec {
    /// Poisson flow arrivals with sizes from a CDF.
    Poisson {
        name: String,
        /// (bytes, cumulative probability) points, linear interpolation.
        cdf: Vec<(f64, f64)>,
        /// Flows per second per sending host.
        rate_per_host_per_s: f64,
        /// "inter_leaf" or "all_to_all".
        destinations: String,
        /// Sending hosts (empty: all).
        #[serde(default)]
        sources: Vec<u32>,
        priority: u8,
        #[serde(default)]
        start_ps: u64,
        #[serde(default)]
        cc: Option<CcOverride>,
        /// This workload's transport kind, "tcp" or "roce" (None: `[transport].kind`).
        #[serde(default)]
        transport: Option<String>,
    },
    /// Incast queries: a requester, `fan_in` responders each sending request_bytes / fan_in.
    Incast {
        name: String,
        request_bytes: u64,
        fan_in: u32,
        queries_per_s_per_host: f64,
        /// Requesting hosts (empty: all).
        #[serde(default)]
        requesters: Vec<u32>,
        /// "other_leaf" (responders drawn from other leaves) or "any".
        responders: String,
        priority: u8,
        #[serde(default)]
        start_ps: u64,
        #[serde(default)]
        cc: Option<CcOverride>,
        /// This workload's transport kind, "tcp" or "roce" (None: `[transport].kind`).
        #[serde(default)]
        transport: Option<String>,
    },
    /// An explicit list of flows.
    Flows {
        name: String,
        flows: Vec<FlowSpec>,
        #[serde(default)]
        cc: Option<CcOverride>,
        /// This workload's transport kind, "tcp" or "roce" (None: `[transport].kind`).
        #[serde(default)]
        transport: Option<String>,
    },
    /// Unresponsive constant-rate flows.
    Cbr { name: String, flows: Vec<CbrSpec> },
}

/// A workload's own congestion control (per-class transport), overriding `[transport].cc`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CcOverride {
    pub name: String,
    #[serde(default)]
    pub params: Map<String, Value>,
}

impl WorkloadSpec {
    pub fn cc(&self) -> Option<&CcOverride> {
        match self {
            WorkloadSpec::Poisson { cc, .. } | WorkloadSpec::Incast { cc, .. } | WorkloadSpec::Flows { cc, .. } => cc.as_ref(),
            WorkloadSpec::Cbr { .. } => None,
        }
    }

    /// The workload's own transport kind (None: `[transport].kind`).
    pub fn transport(&self) -> Option<&str> {
        match self {
            WorkloadSpec::Poisson { transport, .. } | WorkloadSpec::Incast { transport, .. } | WorkloadSpec::Flows { transport, .. } => transport.as_deref(),
            WorkloadSpec::Cbr { .. } => None,
        }
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    pub src: u32,
    pub dst: u32,
    pub size_bytes: u64,
    pub start_ps: u64,
    pub priority: u8,
    /// Incast query id within the workload (flows sharing one form a query; None: no query).
    #[serde(default)]
    pub query: Option<u64>,
    /// Open with a handshake (None: `[transport].handshake`); false: a pre-opened connection.
    #[serde(default)]
    pub handshake: Option<bool>,
    /// This flow's ECMP hash of its data packets and of the packets coming back (ACKs), used
    /// under `topology.ecmp_hash = "flow"` (None: not given).
    #[serde(default)]
    pub ecmp_hash: Option<u32>,
    #[serde(default)]
    pub ecmp_hash_reverse: Option<u32>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CbrSpec {
    pub src: u32,
    pub dst: u32,
    pub rate_bps: u64,
    pub start_ps: u64,
    pub stop_ps: u64,
    pub priority: u8,
    /// Wire bytes per packet.
    pub packet_bytes: u32,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutputSpec {
    /// Buffer occupancy sampling period (0: off).
    #[serde(default)]
    pub buffer_sample_ps: u64,
    /// Per-queue occupancy sampling period (0: off).
    #[serde(default)]
    pub queue_sample_ps: u64,
    /// One record per dropped packet (`RunOutput::drops`); absent from a spec when off.
    #[serde(default)]
    pub drop_log: bool,
    /// Flow ids whose TCP sender is traced (`RunOutput::tcp_trace`); absent from a spec when empty.
    #[serde(default)]
    pub tcp_trace_flows: Vec<u32>,
    /// Trace every TCP flow of at least this many bytes (0: off); absent from a spec when 0.
    #[serde(default)]
    pub tcp_trace_min_size_bytes: u64,
}

impl Default for OutputSpec {
    fn default() -> Self {
        OutputSpec { buffer_sample_ps: 0, queue_sample_ps: 0, drop_log: false, tcp_trace_flows: Vec::new(), tcp_trace_min_size_bytes: 0 }
    }
}

impl SimSpec {
    pub fn from_json(s: &str) -> Result<SimSpec, String> {
        serde_json::from_str(s).map_err(|e| format!("invalid engine spec: {e}"))
    }
}

/// Parameters of a scheme or algorithm (a TOML table), with errors that name the section and key.
pub struct Params<'a> {
    section: &'a str,
    map: &'a Map<String, Value>,
}

impl<'a> Params<'a> {
    pub fn new(section: &'a str, map: &'a Map<String, Value>) -> Self {
        Params { section, map }
    }

    /// Reject keys the scheme does not know.
    pub fn allow_only(&self, scheme: &str, keys: &[&str]) -> Result<(), String> {
        for k in self.map.keys() {
            if !keys.contains(&k.as_str()) {
                let allowed = if keys.is_empty() { "none".to_string() } else { keys.join(", ") };
                return Err(format!("{}.{k}: unknown parameter for '{scheme}'; allowed: {allowed}", self.section));
            }
        }
        Ok(())
    }

    /// The value given for `key`, if any (for keys that accept more than one type).
    pub fn raw(&self, key: &str) -> Option<&Value> {
        self.map.get(key)
    }

    pub fn f64_or(&self, key: &str, default: f64) -> Result<f64, String> {
        match self.map.get(key) {
            None => Ok(default),
            Some(v) => v.as_f64().ok_or_else(|| format!("{}.{key} = {v}: expected a number", self.section)),
        }
    }

    /// A per-queue list: a single number applies to every queue; a list needs one value per queue.
    pub fn per_queue(&self, key: &str, n_queues: usize, default: Option<f64>) -> Result<Vec<f64>, String> {
        match self.map.get(key) {
            None => default.map(|d| vec![d; n_queues]).ok_or_else(|| format!("{}.{key}: required (one number per queue, {n_queues} queues)", self.section)),
            Some(Value::Number(n)) => Ok(vec![n.as_f64().unwrap_or(0.0); n_queues]),
            Some(Value::Array(a)) => {
                if a.len() != n_queues {
                    return Err(format!("{}.{key}: {} values given, expected {n_queues} (one per queue, queues_per_port = {n_queues})", self.section, a.len()));
                }
                a.iter().map(|v| v.as_f64().ok_or_else(|| format!("{}.{key}: {v} is not a number", self.section))).collect()
            }
            Some(v) => Err(format!("{}.{key} = {v}: expected a number or a list of numbers", self.section)),
        }
    }

    /// A string choice among `allowed` (issue 4: ABM/FAB presets and modes).
    pub fn str_or(&self, key: &str, default: &str, allowed: &[&str]) -> Result<String, String> {
        let s = match self.map.get(key) {
            None => return Ok(default.to_string()),
            Some(Value::String(s)) => s.clone(),
            Some(v) => return Err(format!("{}.{key} = {v}: expected a string; allowed: {}", self.section, allowed.join(", "))),
        };
        if allowed.contains(&s.as_str()) {
            Ok(s)
        } else {
            Err(format!("{}.{key} = '{s}': not allowed; allowed: {}", self.section, allowed.join(", ")))
        }
    }

    pub fn bool_or(&self, key: &str, default: bool) -> Result<bool, String> {
        match self.map.get(key) {
            None => Ok(default),
            Some(v) => v.as_bool().ok_or_else(|| format!("{}.{key} = {v}: expected true or false", self.section)),
        }
    }

    /// A list of numbers of any length (a single number is a list of one); None if absent.
    pub fn f64_list(&self, key: &str) -> Result<Option<Vec<f64>>, String> {
        match self.map.get(key) {
            None => Ok(None),
            Some(Value::Number(n)) => Ok(Some(vec![n.as_f64().unwrap_or(0.0)])),
            Some(Value::Array(a)) => a.iter().map(|v| v.as_f64().ok_or_else(|| format!("{}.{key}: {v} is not a number", self.section))).collect::<Result<Vec<_>, _>>().map(Some),
            Some(v) => Err(format!("{}.{key} = {v}: expected a number or a list of numbers", self.section)),
        }
    }
}


/// Validate values that must be finite and positive (alphas, gains).
pub fn check_positive(section: &str, key: &str, v: &[f64]) -> Result<(), String> {
    for x in v {
        if !(x.is_finite() && *x > 0.0) {
            return Err(format!("{section}.{key}: {x} is not allowed; values must be finite and > 0"));
        }
    }
    Ok(())
}

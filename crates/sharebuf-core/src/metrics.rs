//! Counters and samples collected during a run, and the run's output tables.

use crate::engine::{tx_time_ps, Time};

/// One link of a flow's path: rate and propagation delay.
#[derive(Clone, Copy, Debug)]
pub struct Hop {
    pub rate_bps: u64,
    pub delay_ps: Time,
}

/// A lower bound on a flow's completion time as sharebuf measures it (from the flow's start to
/// the last payload byte received), on an idle network with an unlimited window:
/// - with a handshake: the SYN there and the SYN-ACK back (`header_bytes` each, serialized
///   and propagated on every link), then the final ACK serialized on the first link ahead
///   of the data;
/// - the data: `size_bytes` in segments of `mss_bytes`, each carrying `header_bytes`; for
///   every link b, the first segment stored and forwarded up to b, all wire bytes serialized
///   on b, then the last segment stored and forwarded to the receiver; the largest of these.
///
/// Serialization rounds each packet up to the picosecond in the engine; the bound rounds the
/// total once, so it never exceeds what the engine can achieve.
pub fn min_fct_ps(hops: &[Hop], size_bytes: u64, mss_bytes: u64, header_bytes: u64, handshake: bool) -> Time {
    let one_way = |bytes: u64| hops.iter().map(|h| tx_time_ps(bytes, h.rate_bps) + h.delay_ps).sum::<Time>();
    let first_rate = hops.first().map_or(0, |h| h.rate_bps);
    let mut t = 0;
    if handshake {
        t += 2 * one_way(header_bytes);
        if first_rate > 0 {
            t += tx_time_ps(header_bytes, first_rate);
        }
    }
    let mss = mss_bytes.max(1);
    let n = size_bytes.div_ceil(mss).max(1);
    let first = size_bytes.min(mss) + header_bytes;
    let last = size_bytes - (n - 1) * mss + header_bytes;
    let wire = size_bytes + n * header_bytes;
    let data = (0..hops.len())
        .map(|b| {
            let before: Time = hops[..b].iter().map(|h| tx_time_ps(first, h.rate_bps) + h.delay_ps).sum();
            let after: Time = hops[b + 1..].iter().map(|h| tx_time_ps(last, h.rate_bps) + h.delay_ps).sum();
            before + tx_time_ps(wire, hops[b].rate_bps) + hops[b].delay_ps + after
        })
        .max()
        .unwrap_or(0);
    t + data
}

/// The papers' ideal FCT: base RTT (round-trip propagation) + payload bytes at the host rate
/// (ABM, FB, BSHARE evaluations; ns3dc: 80 µs + size·8 / 10 Gbps).
pub fn paper_ideal_fct_ps(base_rtt_ps: Time, size_bytes: u64, host_rate_bps: u64) -> Time {
    base_rtt_ps + tx_time_ps(size_bytes, host_rate_bps)
}

/// Packet and byte counters (wire bytes).
#[derive(Clone, Debug, Default)]
pub struct Counters {
    /// Packets/bytes put on the wire by hosts (data, ACKs, handshakes, CBR).
    pub sent_pkts: u64,
    pub sent_bytes: u64,
    /// Packets/bytes that reached their destination host.
    pub delivered_pkts: u64,
    pub delivered_bytes: u64,
    /// Data packets (TCP payload or CBR) delivered to their destination host.
    pub delivered_data_pkts: u64,
    pub drop_pkts: [u64; 5],
    pub drop_bytes: [u64; 5],
    /// CE marks set by switches.
    pub ecn_marks: u64,
    /// CE marks set by host NICs.
    pub nic_ecn_marks: u64,
    /// Largest backlog of any host NIC queue (packets and wire bytes waiting behind the one
    /// on the wire), each maximised on its own.
    pub nic_peak_pkts: u64,
    pub nic_peak_bytes: u64,
    /// RoCE transport: NACKs and CNPs (ACKs or NACKs with the CNP flag) that reached senders.
    pub roce_nacks: u64,
    pub roce_cnps: u64,
}

/// PFC counters of one port (docs/lossless.md §6 "Outputs"): as the sender of frames (a
/// switch port facing an upstream device: pauses and resumes it sent, the most headroom any of
/// its lossless priorities used, the headroom limit) and as their receiver (frames received,
/// time paused summed over priorities).
#[derive(Clone, Copy, Debug, Default)]
pub struct PfcPortRow {
    /// Global port id; the node that owns the port; its index on that node.
    pub port: u32,
    pub node: u32,
    pub local: u32,
    pub pauses_sent: u64,
    pub resumes_sent: u64,
    pub pauses_received: u64,
    pub resumes_received: u64,
    pub paused_ps: u64,
    pub max_headroom_bytes: u64,
    pub headroom_limit_bytes: u64,
}

/// PFC outputs of a run with lossless priorities.
#[derive(Clone, Debug, Default)]
pub struct PfcOut {
    /// One row per port that sent or received a frame.
    pub ports: Vec<PfcPortRow>,
    /// Lossless packets dropped (must be 0).
    pub lossless_drops: u64,
    /// Lossless packets that found their headroom full (must be 0).
    pub headroom_overflows: u64,
}

/// A per-queue occupancy sample.
#[derive(Clone, Copy, Debug)]
pub struct QueueSample {
    pub time_ps: Time,
    pub switch: u16,
    pub port: u16,
    pub queue: u8,
    pub bytes: u64,
}

/// One packet dropped at a switch or a host NIC (`[output] drop_log`; a small copy pushed only
/// when the log is on).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DropRecord {
    pub time_ps: Time,
    /// Data: first payload byte; pure ACK: cumulative ack number (as the packet carries it).
    pub seq: u64,
    /// Accounted bytes of the packet's queue at the drop, the dropped packet not counted (a
    /// host NIC: the NIC's queued wire bytes).
    pub queue_bytes: u64,
    /// The switch's occupied (accounted) bytes at the drop, the dropped packet not counted
    /// (a host NIC: 0).
    pub occupied_bytes: u64,
    /// Switch index, or the host for a NIC drop (`at_host`).
    pub node: u32,
    pub flow: u32,
    /// Wire bytes.
    pub size_bytes: u32,
    /// Local port index on the switch (0 at a host NIC).
    pub port: u16,
    pub queue: u8,
    /// The packet's flag bits (`packet::flags`).
    pub flags: u8,
    /// `DropCause as u8`.
    pub cause: u8,
    pub at_host: bool,
}

/// `TcpTraceRecord::event`: a data segment put on the wire (retransmissions included).
pub const TRACE_SEND: u8 = 0;
/// An ACK the sender processed.
pub const TRACE_ACK: u8 = 1;
/// The retransmission timer fired.
pub const TRACE_TIMEOUT: u8 = 2;
/// The SYN-ACK arrived (handshake flows): the connection is established.
pub const TRACE_SYN_ACK: u8 = 3;

/// `TcpTraceRecord::state`: the sender's congestion state after the event.
pub const STATE_OPEN: u8 = 0;
pub const STATE_DISORDER: u8 = 1;
pub const STATE_CWR: u8 = 2;
pub const STATE_RECOVERY: u8 = 3;
pub const STATE_LOSS: u8 = 4;
pub const STATE_SYN_SENT: u8 = 5;

/// One sender event of a traced TCP flow (`[output] tcp_trace_*`; pushed only for traced
/// flows), with the sender's variables after it handled the event.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TcpTraceRecord {
    pub time_ps: Time,
    /// Send: the segment's first byte; ack: the cumulative ack number; timeout, syn_ack: snd_una.
    pub seq: u64,
    pub cwnd_bytes: u64,
    /// u64::MAX until the first cut (infinite).
    pub ssthresh_bytes: u64,
    /// The bytes in flight the sender's window test uses: snd_nxt − snd_una, or in SACK
    /// recovery the RFC 6675 pipe.
    pub in_flight_bytes: u64,
    pub snd_una: u64,
    pub snd_nxt: u64,
    /// DCTCP's α (NaN for other algorithms).
    pub alpha: f64,
    pub flow: u32,
    /// `TRACE_*`.
    pub event: u8,
    /// `STATE_*`.
    pub state: u8,
    /// Send: the segment was sent before (a retransmission).
    pub retx: bool,
    /// Ack: the ACK carried ECN-Echo.
    pub ece: bool,
}

/// Everything a run produces.
#[derive(Clone, Debug, Default)]
pub struct RunOutput {
    /// The run's transport is RoCE (`counters.roce_*` are reported).
    pub roce: bool,
    // flows (TCP)
    pub flow_src: Vec<u32>,
    pub flow_dst: Vec<u32>,
    pub flow_size: Vec<u64>,
    pub flow_start_ps: Vec<u64>,
    /// u64::MAX when unfinished.
    pub flow_end_ps: Vec<u64>,
    /// Lower bound on the FCT as measured ([`min_fct_ps`]).
    pub flow_ideal_ps: Vec<u64>,
    /// The papers' ideal FCT ([`paper_ideal_fct_ps`]).
    pub flow_ideal_paper_ps: Vec<u64>,
    pub flow_prio: Vec<u8>,
    pub flow_workload: Vec<u16>,
    pub flow_query: Vec<i64>,
    pub flow_retransmits: Vec<u32>,
    pub flow_timeouts: Vec<u32>,
    /// Payload bytes received in order (= size when finished).
    pub flow_received: Vec<u64>,
    // queries
    pub query_requester: Vec<u32>,
    pub query_size: Vec<u64>,
    pub query_start_ps: Vec<u64>,
    pub query_end_ps: Vec<u64>,
    pub query_workload: Vec<u16>,
    // constant-rate flows
    pub cbr_src: Vec<u32>,
    pub cbr_dst: Vec<u32>,
    pub cbr_sent_bytes: Vec<u64>,
    pub cbr_delivered_bytes: Vec<u64>,
    pub cbr_workload: Vec<u16>,
    // samples
    pub buf_time_ps: Vec<u64>,
    pub buf_switch: Vec<u16>,
    pub buf_bytes: Vec<u64>,
    pub queue_samples: Vec<QueueSample>,
    /// Dropped packets, in drop order (`[output] drop_log`; None when off).
    pub drops: Option<Vec<DropRecord>>,
    /// Traced TCP flows' sender events, in time order (flow id, then event order, at equal
    /// times); None when no flow is traced (`[output] tcp_trace_*`).
    pub tcp_trace: Option<Vec<TcpTraceRecord>>,
    // run facts
    pub workload_names: Vec<String>,
    pub switch_names: Vec<String>,
    pub switch_buffer_bytes: Vec<u64>,
    pub switch_peak_bytes: Vec<u64>,
    pub switch_final_bytes: Vec<u64>,
    pub counters: Counters,
    pub events: u64,
    /// Events processed per `engine::Kind`.
    pub events_by_kind: [u64; 11],
    /// Lossless priorities and PFC (None: off).
    pub pfc: Option<PfcOut>,
    pub end_ps: Time,
    pub in_flight_pkts: u64,
    pub in_flight_bytes: u64,
    pub pool_capacity_pkts: u64,
    pub wall_s: f64,
    /// The run stopped at max time with work left.
    pub hit_max_time: bool,
    /// Rows of the schemes that trace (`lqd` with `trace = true`), switch by switch; None when
    /// no switch traces.
    pub lqd_trace: Option<Vec<crate::bm::TraceRow>>,
    /// The schemes' own counters (`BufferManager::stats`), summed over switches, in first-seen order.
    pub scheme_stats: Vec<(String, u64)>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hand computation on two 10 Gbps links of 1 µs (800 ps per byte): 3 segments of 1000 B
    /// (last 500 B) with 50-byte headers, 2650 wire bytes. Handshake: SYN and SYN-ACK
    /// 2·2·(40 ns + 1 µs), final ACK 40 ns. Data, bottleneck link 1: 2650 B·800 ps + 1 µs, then
    /// the 550-byte tail (440 ns) + 1 µs; link 2: the 1050-byte head (840 ns) + 1 µs, then
    /// 2120 ns + 1 µs.
    #[test]
    fn min_fct_by_hand() {
        let h = Hop { rate_bps: 10_000_000_000, delay_ps: 1_000_000 };
        let hops = [h, h];
        let data_b1 = 2_650 * 800 + 1_000_000 + 550 * 800 + 1_000_000;
        let data_b2 = 1_050 * 800 + 1_000_000 + 2_650 * 800 + 1_000_000;
        assert_eq!(data_b1, 4_560_000);
        assert_eq!(data_b2, 4_960_000);
        assert_eq!(min_fct_ps(&hops, 2_500, 1_000, 50, false), 4_960_000);
        assert_eq!(min_fct_ps(&hops, 2_500, 1_000, 50, true), 4 * (40_000 + 1_000_000) + 40_000 + 4_960_000);
        // A faster second link: the first link is the bottleneck.
        let fast = Hop { rate_bps: 40_000_000_000, delay_ps: 1_000_000 };
        assert_eq!(min_fct_ps(&[h, fast], 2_500, 1_000, 50, false), 2_650 * 800 + 1_000_000 + 550 * 200 + 1_000_000);
    }
}

//! Counters and samples collected during a run, and the run's output tables.

use crate::engine::Time;

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

/// Everything a run produces.
#[derive(Clone, Debug, Default)]
pub struct RunOutput {
    // flows (TCP)
    pub flow_src: Vec<u32>,
    pub flow_dst: Vec<u32>,
    pub flow_size: Vec<u64>,
    pub flow_start_ps: Vec<u64>,
    /// u64::MAX when unfinished.
    pub flow_end_ps: Vec<u64>,
    pub flow_ideal_ps: Vec<u64>,
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
    // run facts
    pub workload_names: Vec<String>,
    pub switch_names: Vec<String>,
    pub switch_buffer_bytes: Vec<u64>,
    pub switch_peak_bytes: Vec<u64>,
    pub switch_final_bytes: Vec<u64>,
    pub counters: Counters,
    pub events: u64,
    /// Events processed per `engine::Kind`.
    pub events_by_kind: [u64; 10],
    pub end_ps: Time,
    pub in_flight_pkts: u64,
    pub in_flight_bytes: u64,
    pub pool_capacity_pkts: u64,
    pub wall_s: f64,
    /// The run stopped at max time with work left.
    pub hit_max_time: bool,
}

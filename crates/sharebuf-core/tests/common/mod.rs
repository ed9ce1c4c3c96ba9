//! Scenarios shared by the integration tests.

use serde_json::{json, Value};

/// Two 10 Gb/s constant-rate senders into host 0 of a 6-host star (2:1 overload) beside two
/// 500 KB NewReno flows into host 5, a 150 KB buffer under `scheme`: drops and push-outs by the
/// hundred. `output` is the spec's `[output]` table.
pub fn overloaded_star(scheme: &str, output: Value) -> Value {
    let cbr: Vec<_> = (1..3).map(|s| json!({"src": s, "dst": 0, "rate_bps": 10_000_000_000u64, "start_ps": 0, "stop_ps": 5_000_000_000u64, "priority": 0, "packet_bytes": 1502})).collect();
    let flows: Vec<_> = (3..5).map(|s| json!({"src": s, "dst": 5, "size_bytes": 500_000, "start_ps": 1_000_000_000u64, "priority": 0})).collect();
    json!({
        "seed": 1, "max_ps": 100_000_000_000u64, "arrivals_until_ps": 5_000_000_000u64,
        "topology": {"kind": "star", "hosts": 6, "link_bps": 10_000_000_000u64, "link_delay_ps": 1_000_000},
        "switch": {"buffer_bytes": 150_000, "queues_per_port": 1, "scheduler": "rr", "bm": {"scheme": scheme, "params": {}}},
        "transport": {"cc": "newreno", "mss_bytes": 1448, "header_bytes": 54, "init_cwnd_packets": 10, "min_rto_ps": 1_000_000_000u64,
                      "initial_rto_ps": 1_000_000_000u64, "handshake": true, "delayed_ack_packets": 1, "delayed_ack_timeout_ps": 200_000_000,
                      "ack_priority": 0, "unscheduled_bytes": 12500, "unscheduled_acks": true, "max_rto_ps": 1_000_000_000_000u64},
        "workloads": [{"kind": "cbr", "name": "cbr", "flows": cbr}, {"kind": "flows", "name": "tcp", "flows": flows}],
        "output": output
    })
}

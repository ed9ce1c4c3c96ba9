//! `[output] drop_log`: one record per packet the counters count as dropped, cause by cause
//! (admission refusals, a full buffer and push-out victims alike), and the log changes no decision.

use serde_json::json;
use sharebuf_core::{SimSpec, Simulator};

fn spec(drop_log: bool) -> SimSpec {
    // Two 10 Gb/s constant-rate senders into host 0 (2:1 overload) beside two TCP flows into host
    // 5, LQD on a 150 KB buffer: refusals and push-outs by the hundred.
    let cbr: Vec<_> = (1..3).map(|s| json!({"src": s, "dst": 0, "rate_bps": 10_000_000_000u64, "start_ps": 0, "stop_ps": 5_000_000_000u64, "priority": 0, "packet_bytes": 1502})).collect();
    let flows: Vec<_> = (3..5).map(|s| json!({"src": s, "dst": 5, "size_bytes": 500_000, "start_ps": 1_000_000_000u64, "priority": 0})).collect();
    let mut out = json!({"buffer_sample_ps": 0, "queue_sample_ps": 0});
    if drop_log {
        out["drop_log"] = json!(true);
    }
    serde_json::from_value(json!({
        "seed": 1, "max_ps": 100_000_000_000u64, "arrivals_until_ps": 5_000_000_000u64,
        "topology": {"kind": "star", "hosts": 6, "link_bps": 10_000_000_000u64, "link_delay_ps": 1_000_000},
        "switch": {"buffer_bytes": 150_000, "queues_per_port": 1, "scheduler": "rr", "bm": {"scheme": "lqd", "params": {}}},
        "transport": {"cc": "newreno", "mss_bytes": 1448, "header_bytes": 54, "init_cwnd_packets": 10, "min_rto_ps": 1_000_000_000u64,
                      "initial_rto_ps": 1_000_000_000u64, "handshake": true, "delayed_ack_packets": 1, "delayed_ack_timeout_ps": 200_000_000,
                      "ack_priority": 0, "unscheduled_bytes": 12500, "unscheduled_acks": true, "max_rto_ps": 1_000_000_000_000u64},
        "workloads": [{"kind": "cbr", "name": "cbr", "flows": cbr}, {"kind": "flows", "name": "tcp", "flows": flows}],
        "output": out
    }))
    .unwrap()
}

#[test]
fn drop_log_has_a_record_per_counted_drop() {
    let off = Simulator::new(&spec(false)).unwrap().run(&mut |_, _| true);
    let on = Simulator::new(&spec(true)).unwrap().run(&mut |_, _| true);
    assert!(off.drops.is_none());
    let log = on.drops.as_ref().expect("drop_log on");
    // Same run either way.
    assert_eq!(on.counters.drop_pkts, off.counters.drop_pkts);
    assert_eq!(on.counters.drop_bytes, off.counters.drop_bytes);
    assert_eq!(on.flow_end_ps, off.flow_end_ps);
    assert_eq!(on.events, off.events);
    for cause in 0..5 {
        let rows: Vec<_> = log.iter().filter(|r| r.cause as usize == cause).collect();
        assert_eq!(rows.len() as u64, on.counters.drop_pkts[cause], "cause {cause}");
        assert_eq!(rows.iter().map(|r| r.size_bytes as u64).sum::<u64>(), on.counters.drop_bytes[cause], "cause {cause}");
    }
    assert!(on.counters.drop_pkts[0] > 100 && on.counters.drop_pkts[3] > 100, "{:?}", on.counters.drop_pkts);
    // In time order, at the one switch, within its buffer; the queue never holds more than the switch.
    assert!(log.windows(2).all(|w| w[0].time_ps <= w[1].time_ps));
    assert!(log.iter().all(|r| r.node == 0 && !r.at_host && r.queue_bytes <= r.occupied_bytes && r.occupied_bytes <= 150_000));
}

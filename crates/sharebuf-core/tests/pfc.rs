//! PFC end to end in a debug build with the invariants on (docs/lossless.md §6): a lossless
//! incast over a 2-leaf, 1-spine fabric with device FIFOs at switches (2) and hosts (3),
//! lossy flows beside it, under every scheduler, with DT's ingress threshold and with Reverie's. The engine's debug checks fire on a packet of
//! a paused priority put on the wire, on a lossless drop, and on packets left waiting above a
//! device FIFO without a wake-up; here they must stay silent, and nothing lossless is lost.

use serde_json::json;

fn spec(scheduler: &str, cc: &str, scheme: &str) -> String {
    let flows = |prio: u8, size: u64, srcs: &[u32]| -> Vec<serde_json::Value> {
        srcs.iter().map(|&s| json!({"src": s, "dst": 4, "size_bytes": size, "start_ps": 0, "priority": prio})).collect()
    };
    json!({
        "seed": 1, "max_ps": 30_000_000_000u64, "arrivals_until_ps": 30_000_000_000u64,
        "topology": {"kind": "leaf_spine", "leaves": 2, "spines": 1, "servers_per_leaf": 4, "links_per_leaf_spine": 1,
                     "host_link_bps": 10_000_000_000u64, "fabric_link_bps": 10_000_000_000u64, "link_delay_ps": 1_000_000, "ecmp_hash": "salted"},
        "switch": {"buffer_bytes": 300_000, "queues_per_port": 4, "scheduler": scheduler, "drr_weights": if scheduler == "drr" { vec![1, 1, 1, 1] } else { vec![] },
                   "drr_quantum_bytes": 1500, "ecn_k_bytes": [60_000], "device_queue_packets": 2, "buffer_accounting": "wire",
                   "bm": {"scheme": scheme, "params": {}}, "pfc": {"lossless_priorities": [3]}},
        "host": {"nic_ecn_k_bytes": null, "nic_qdisc": "fifo", "device_queue_packets": 3},
        "transport": {"cc": cc, "cc_params": {}, "mss_bytes": 1448, "header_bytes": 54, "init_cwnd_packets": 100, "min_rto_ps": 10_000_000_000u64,
                      "initial_rto_ps": 10_000_000_000u64, "handshake": false, "delayed_ack_packets": 1, "delayed_ack_timeout_ps": 200_000_000,
                      "ack_priority": 0, "unscheduled_bytes": 10_000, "unscheduled_acks": true, "max_rto_ps": 1_000_000_000_000u64, "sack": true,
                      "timestamp_tick_ps": 0, "recovery": "rfc6675"},
        "workloads": [
            {"kind": "flows", "name": "lossless", "flows": flows(3, 125_000, &[0, 1, 2, 3, 5, 6, 7])},
            {"kind": "flows", "name": "lossy", "flows": flows(1, 50_000, &[0, 5])}
        ],
        "output": {"buffer_sample_ps": 10_000_000, "queue_sample_ps": 0},
        "debug": {"check_invariants": true}
    })
    .to_string()
}

#[test]
fn lossless_incast_over_a_leaf_spine_keeps_the_invariants() {
    for (sched, cc, scheme) in ["rr", "sp", "drr"].into_iter().flat_map(|s| [("newreno", "dt"), ("dcqcn", "dt"), ("newreno", "reverie"), ("dcqcn", "reverie")].map(|(c, b)| (s, c, b))) {
        {
            let out = sharebuf_core::run_json(&spec(sched, cc, scheme), &mut |_, _| true).unwrap_or_else(|e| panic!("{sched}/{cc}/{scheme}: {e}"));
            let pfc = out.pfc.as_ref().expect("PFC on");
            assert_eq!((pfc.lossless_drops, pfc.headroom_overflows), (0, 0), "{sched}/{cc}/{scheme}");
            assert!(out.flow_end_ps.iter().all(|&e| e != u64::MAX), "{sched}/{cc}/{scheme}: every flow finishes");
            // Flows 0..7 are lossless: none retransmitted.
            assert!(out.flow_retransmits[..7].iter().all(|&r| r == 0), "{sched}/{cc}/{scheme}: {:?}", out.flow_retransmits);
            let pauses: u64 = pfc.ports.iter().map(|r| r.pauses_sent).sum();
            let received: u64 = pfc.ports.iter().map(|r| r.pauses_received).sum();
            assert!(pauses > 0 && pauses == received, "{sched}/{cc}/{scheme}: {pauses} sent, {received} received");
            for r in &pfc.ports {
                assert_eq!(r.pauses_received, r.resumes_received, "{sched}/{cc}/{scheme}: no pause outstanding at the end: {r:?}");
                assert!(r.max_headroom_bytes <= r.headroom_limit_bytes, "{sched}/{cc}/{scheme}: {r:?}");
            }
        }
    }
}

/// The RoCE transport (docs/transports/roce.md) over the same fabric: DCQCN, marking at dequeue
/// on a RED ramp, lossy RoCE flows beside the lossless ones. The debug checks stay silent, the
/// lossless flows finish without a NACK or a resend, and pauses reach the senders. (A lossy
/// RoCE flow whose tail is dropped never finishes: no retransmission timer, as the reference.)
#[test]
fn roce_lossless_incast_keeps_the_invariants() {
    for sched in ["rr", "sp", "drr"] {
        let mut v: serde_json::Value = serde_json::from_str(&spec(sched, "dcqcn", "dt")).unwrap();
        v["transport"]["kind"] = json!("roce");
        v["switch"]["ecn_k_bytes"] = json!([]);
        v["switch"]["red"] = json!({"kmin_bytes": 20_000, "kmax_bytes": 80_000, "pmax": 0.2});
        let out = sharebuf_core::run_json(&v.to_string(), &mut |_, _| true).unwrap_or_else(|e| panic!("{sched}: {e}"));
        assert!(out.roce);
        let pfc = out.pfc.as_ref().expect("PFC on");
        assert_eq!((pfc.lossless_drops, pfc.headroom_overflows), (0, 0), "{sched}");
        assert!(out.flow_end_ps[..7].iter().all(|&e| e != u64::MAX), "{sched}: every lossless flow finishes");
        assert!(out.flow_retransmits[..7].iter().all(|&r| r == 0), "{sched}: {:?}", out.flow_retransmits);
        assert!(out.counters.roce_cnps > 0, "{sched}: CNPs reach the senders");
        let pauses: u64 = pfc.ports.iter().map(|r| r.pauses_sent).sum();
        assert!(pauses > 0, "{sched}");
        for r in &pfc.ports {
            assert_eq!(r.pauses_received, r.resumes_received, "{sched}: {r:?}");
        }
    }
}

//! `switch.spine_buffer`: every spec it cannot act on is refused with one clear error.

use serde_json::{json, Value};
use sharebuf_core::{SimSpec, Simulator};

/// A 2-leaf x 2-server leaf-spine, one spine, `links` links per pair, one flow across it.
fn leaf_spine(links: u32, spine_buffer: &str, scheme: &str) -> Value {
    json!({
        "seed": 1, "max_ps": 1_000_000_000u64, "arrivals_until_ps": 1_000_000_000u64,
        "topology": {"kind": "leaf_spine", "leaves": 2, "spines": 1, "servers_per_leaf": 2, "links_per_leaf_spine": links,
                     "host_link_bps": 10_000_000_000u64, "fabric_link_bps": 10_000_000_000u64, "link_delay_ps": 1_000_000},
        "switch": {"buffer_bytes": 100_000, "queues_per_port": 1, "scheduler": "rr", "spine_buffer": spine_buffer,
                   "bm": {"scheme": scheme, "params": {}}},
        "transport": {"cc": "newreno", "mss_bytes": 1000, "header_bytes": 50, "init_cwnd_packets": 10, "min_rto_ps": 1_000_000_000u64,
                      "initial_rto_ps": 1_000_000_000u64, "handshake": false, "delayed_ack_packets": 1, "delayed_ack_timeout_ps": 1_000_000,
                      "ack_priority": 0, "unscheduled_bytes": 0, "unscheduled_acks": false, "max_rto_ps": 10_000_000_000u64},
        "workloads": [{"kind": "flows", "name": "one", "flows": [{"src": 0, "dst": 2, "size_bytes": 10_000, "start_ps": 0, "priority": 0}]}],
        "output": {}
    })
}

fn error_of(v: Value) -> String {
    let spec: SimSpec = serde_json::from_value(v).unwrap();
    match Simulator::new(&spec) {
        Ok(_) => String::new(),
        Err(e) => e,
    }
}

#[test]
fn leaf_aliased_builds_where_it_acts() {
    assert_eq!(error_of(leaf_spine(1, "leaf_aliased", "dt")), "");
    assert_eq!(error_of(leaf_spine(1, "leaf_aliased", "abm")), "");
}

#[test]
fn spine_buffer_refuses_what_it_cannot_act_on() {
    let cases = [
        (leaf_spine(1, "shared", "dt"), "switch.spine_buffer = 'shared': allowed: own, leaf_aliased"),
        (leaf_spine(1, "leaf_aliased", "lqd"), "switch.spine_buffer = 'leaf_aliased': switch.bm.scheme = 'lqd' is not one of ns3dc's arrival-time schemes; allowed with: dt, fab, cs, ib, abm"),
        // 2 leaves x 3 links = 6 spine ports, a leaf has 2 servers + 3 uplinks = 5
        (leaf_spine(3, "leaf_aliased", "dt"), "switch.spine_buffer = 'leaf_aliased': a spine's 6 ports outnumber a leaf's 5 (each aliases the leaf's port of its index); allowed: 'own'"),
    ];
    for (v, want) in cases {
        assert_eq!(error_of(v), want);
    }
    let mut star = leaf_spine(1, "leaf_aliased", "dt");
    star["topology"] = json!({"kind": "star", "hosts": 4, "link_bps": 10_000_000_000u64, "link_delay_ps": 1_000_000});
    assert!(error_of(star).starts_with("switch.spine_buffer = 'leaf_aliased': needs topology.kind = 'leaf_spine'"));
    let mut pfc = leaf_spine(1, "leaf_aliased", "dt");
    pfc["switch"]["pfc"] = json!({"lossless_priorities": [0]});
    assert_eq!(error_of(pfc), "switch.spine_buffer = 'leaf_aliased': not with switch.pfc (ns3dc's TCP fabric is lossy); allowed: 'own'");
}

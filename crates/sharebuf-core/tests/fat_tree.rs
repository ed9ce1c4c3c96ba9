//! Fat-tree topology (issue 10): a lone flow across pods matches a hand computation exactly,
//! ECMP spreads flows evenly over the core, and a loaded run conserves bytes.

use serde_json::json;
use sharebuf_core::engine::tx_time_ps;
use sharebuf_core::topology::{ecmp_hash, Topology};
use sharebuf_core::{RunOutput, SimSpec, Simulator};

const G: u64 = 1_000_000_000;
const US: u64 = 1_000_000;

fn fat_tree_spec(k: u32, buffer: u64, handshake: bool, workloads: serde_json::Value) -> SimSpec {
    let v = json!({
        "seed": 3, "max_ps": 2_000_000_000_000u64, "arrivals_until_ps": 5_000_000_000u64,
        "topology": {"kind": "fat_tree", "k": k, "hosts_per_edge": k / 2,
                     "host_link_bps": 10 * G, "edge_agg_link_bps": 40 * G, "agg_core_link_bps": 100 * G,
                     "host_link_delay_ps": US, "edge_agg_link_delay_ps": 2 * US, "agg_core_link_delay_ps": 3 * US},
        "switch": {"buffer_bytes": buffer, "queues_per_port": 1, "scheduler": "rr", "bm": {"scheme": "dt", "params": {"alpha": 1.0}}},
        "transport": {"cc": "newreno", "mss_bytes": 1000, "header_bytes": 50, "init_cwnd_packets": 10, "min_rto_ps": 1_000_000_000u64,
                      "initial_rto_ps": 1_000_000_000u64, "handshake": handshake, "delayed_ack_packets": 1, "delayed_ack_timeout_ps": 200_000_000,
                      "ack_priority": 0, "unscheduled_bytes": 0, "unscheduled_acks": false, "max_rto_ps": 1_000_000_000_000u64},
        "workloads": workloads,
        "output": {"buffer_sample_ps": 10_000_000, "queue_sample_ps": 0}
    });
    serde_json::from_value(v).unwrap()
}

fn run(spec: &SimSpec) -> RunOutput {
    Simulator::new(spec).unwrap().run(&mut |_, _| true)
}

#[test]
fn shape_and_names() {
    let spec = fat_tree_spec(4, 100_000, false, json!([]));
    let t = Topology::build(&spec.topology).unwrap();
    // k = 4: 16 hosts, 8 edge + 8 aggregation + 4 core switches; 16 NICs + 8 * 4 + 8 * 4 + 4 * 4 ports.
    assert_eq!((t.n_hosts, t.n_switches, t.ports.len()), (16, 20, 16 + 32 + 32 + 16));
    assert_eq!(t.switch_names[0], "edge0");
    assert_eq!(t.switch_names[8], "agg0");
    assert_eq!(t.switch_names[19], "core3");
    // Same edge: 2 links; same pod: 4; other pod: 6 (1+2+3 us each way, twice).
    assert_eq!((t.path_links(0, 1), t.path_links(0, 2), t.path_links(0, 4)), (2, 4, 6));
    assert_eq!(t.base_rtt_ps(0, 15), 4 * (US + 2 * US + 3 * US));
    // Every switch port's peer is a node of the next tier, and links come in pairs.
    for (i, p) in t.ports.iter().enumerate() {
        let back = t.ports.iter().filter(|q| q.owner == p.peer && q.peer == p.owner).count();
        assert_eq!(back, 1, "port {i}: {p:?} has no single reverse link");
    }
    // Oversubscription: 3 hosts per edge with k = 4.
    let mut v = serde_json::to_value(json!({"kind": "fat_tree", "k": 4, "hosts_per_edge": 3, "host_link_bps": 10 * G,
        "edge_agg_link_bps": 10 * G, "agg_core_link_bps": 10 * G, "host_link_delay_ps": US, "edge_agg_link_delay_ps": US,
        "agg_core_link_delay_ps": US})).unwrap();
    let t3 = Topology::build(&serde_json::from_value(v.clone()).unwrap()).unwrap();
    assert_eq!(t3.n_hosts, 24);
    assert_eq!(t3.leaf_uplink_bps, 20 * G);
    v["k"] = json!(5);
    let err = Topology::build(&serde_json::from_value(v).unwrap()).unwrap_err();
    assert!(err.contains("topology.k = 5"), "{err}");
}

/// Host 0 (pod 0) to host 15 (pod 3), k = 4: five switches, six links at 10/40/100/100/40/10
/// Gbps with 1/2/3/3/2/1 us propagation. 2,500 B in segments of 1,000 B + 50 B header
/// (1050, 1050, 550 wire bytes), every packet stored and forwarded; the window (10 packets)
/// never binds. Hand computation, independent of the engine's `min_fct_ps`:
/// - one-way of a 50 B control packet: serialization 40 + 10 + 4 + 4 + 10 + 40 ns = 108 ns,
///   propagation 12 us: 12.108 us. Handshake: SYN there, SYN-ACK back (24.216 us), then the
///   sender's ACK on its NIC (40 ns) ahead of the data: data leaves at 24.256 us.
/// - data: at each link, a packet starts when it has fully arrived and the link is free
///   (the recurrence below, and the same number by hand: the 10G last link is the bottleneck).
#[test]
fn lone_flow_across_pods_matches_hand_computation() {
    for handshake in [false, true] {
        let wl = json!([{"kind": "flows", "name": "one", "flows": [{"src": 0, "dst": 15, "size_bytes": 2500, "start_ps": 0, "priority": 0}]}]);
        let o = run(&fat_tree_spec(4, 1_000_000, handshake, wl));
        let links = [(10 * G, US), (40 * G, 2 * US), (100 * G, 3 * US), (100 * G, 3 * US), (40 * G, 2 * US), (10 * G, US)];
        let one_way = |b: u64| links.iter().map(|&(r, d)| tx_time_ps(b, r) + d).sum::<u64>();
        let t0 = if handshake { 2 * one_way(50) + tx_time_ps(50, 10 * G) } else { 0 };
        // Per-packet store-and-forward recurrence over the six links.
        let pkts = [1050u64, 1050, 550];
        let mut arrive = [t0; 3]; // when each packet is fully available at the current link's sender
        for &(r, d) in &links {
            let mut free = 0;
            for (i, &b) in pkts.iter().enumerate() {
                let start = arrive[i].max(free);
                free = start + tx_time_ps(b, r);
                arrive[i] = free + d;
            }
        }
        let hand = arrive[2];
        // By hand: the first packet reaches the last (10G) link after 840 + 210 + 84 + 84 +
        // 210 ns of serialization and 11 us of propagation = 12.428 us; packets 2 and 3 are
        // there by the time it is out, so the link sends all 2,650 wire bytes back to back
        // (2.12 us), then 1 us of propagation: 15.548 us (+ 24.256 us of handshake).
        assert_eq!(t0, if handshake { 24_256_000 } else { 0 });
        assert_eq!(hand, t0 + 12_428_000 + 2_120_000 + 1_000_000);
        assert_eq!(o.flow_end_ps[0] - o.flow_start_ps[0], hand, "handshake = {handshake}");
        // The engine's reported ideal FCT is the same bound on this path.
        assert_eq!(o.flow_ideal_ps[0], hand, "handshake = {handshake}");
    }
}

/// Pearson chi-square of `counts` against a uniform spread.
fn chi2(counts: &[u64]) -> f64 {
    let n: u64 = counts.iter().sum();
    let e = n as f64 / counts.len() as f64;
    counts.iter().map(|&c| (c as f64 - e).powi(2) / e).sum()
}

/// k = 8 (128 hosts, 16 cores, 128 aggregation-to-core links): 64,000 inter-pod flows with
/// deterministic (src, dst) drawn by SplitMix64, each walked up the route tables with the
/// engine's own ECMP hash and salts. "salted": the per-core counts pass chi-square with 15
/// degrees of freedom below 37.70 (p = 0.001) and the per-link counts with 127 below 181.99
/// (p = 0.001). "same": the edge and aggregation switches pick the same index j, so only the
/// k/2 = 4 cores (j, j) carry traffic (hash polarization, as ns-3 global routing).
#[test]
fn ecmp_spreads_flows_evenly_over_core_links() {
    let k = 8u32;
    let half = k / 2;
    let spec = fat_tree_spec(k, 100_000, false, json!([]));
    for same in [false, true] {
        let mut t = Topology::build(&spec.topology).unwrap();
        t.ecmp_same = same;
        let (n_edge, hpe) = (k * half, half);
        let mut per_core = vec![0u64; (half * half) as usize];
        let mut per_link = vec![0u64; (n_edge * half) as usize]; // agg a, uplink m
        let mut state = 0x1234_5678u64;
        let mut next = || {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        let mut flow = 0u32;
        while flow < 64_000 {
            let (src, dst) = ((next() % t.n_hosts as u64) as u32, (next() % t.n_hosts as u64) as u32);
            if src / (hpe * half) == dst / (hpe * half) {
                continue; // same pod: never reaches the core
            }
            let edge = src / hpe;
            let up = t.routes[edge as usize].choose(dst, ecmp_hash(flow, dst, t.ecmp_salt(edge)));
            assert!((hpe..hpe + half).contains(&(up as u32)));
            let agg = n_edge + (edge / half) * half + (up as u32 - hpe);
            let a_idx = agg - n_edge;
            let m = t.routes[agg as usize].choose(dst, ecmp_hash(flow, dst, t.ecmp_salt(agg))) as u32 - half;
            let core = (a_idx % half) * half + m;
            // The core's route goes down to dst's pod, on the one link there is.
            let down = t.routes[(2 * n_edge + core) as usize].choose(dst, 0) as u32;
            assert_eq!(down, dst / (hpe * half));
            per_core[core as usize] += 1;
            per_link[(a_idx * half + m) as usize] += 1;
            flow += 1;
        }
        if same {
            let used: Vec<usize> = (0..per_core.len()).filter(|&c| per_core[c] > 0).collect();
            assert_eq!(used, (0..half as usize).map(|j| j * half as usize + j).collect::<Vec<_>>(), "{per_core:?}");
        } else {
            let (xc, xl) = (chi2(&per_core), chi2(&per_link));
            println!("salted: chi-square {xc:.2} over 16 cores {per_core:?}, {xl:.2} over 128 links");
            assert!(xc < 37.70, "chi-square {xc} over cores {per_core:?}");
            assert!(xl < 181.99, "chi-square {xl} over agg-core links");
            // ... and it can fail: a skewed spread (one core twice as loaded) is rejected.
            let mut skew = per_core.clone();
            skew[0] *= 2;
            assert!(chi2(&skew) > 37.70);
        }
    }
}

/// k = 4, 16 hosts, Poisson all-to-all at high load into a 60 KB buffer per switch: drops
/// happen, every flow finishes, and sent = delivered + dropped + in flight (bytes and packets);
/// the same seed gives the same run.
#[test]
fn loaded_fat_tree_conserves_bytes_and_is_deterministic() {
    let wl = json!([{"kind": "poisson", "name": "ws", "cdf": [[1000.0, 0.0], [10000.0, 0.5], [200000.0, 1.0]],
                     "rate_per_host_per_s": 20000.0, "destinations": "all_to_all", "priority": 0},
                    {"kind": "incast", "name": "q", "request_bytes": 400000, "fan_in": 8, "queries_per_s_per_host": 100.0,
                     "responders": "other_leaf", "priority": 0}]);
    let spec = fat_tree_spec(4, 60_000, true, wl);
    let o = run(&spec);
    let c = &o.counters;
    let dropped: u64 = c.drop_bytes.iter().sum();
    println!("flows {} drops {} pkts, sent {} B, delivered {} B, events {}", o.flow_src.len(), c.drop_pkts.iter().sum::<u64>(), c.sent_bytes, c.delivered_bytes, o.events);
    assert!(o.flow_src.len() > 500);
    assert!(dropped > 0, "the run must drop");
    assert!(o.flow_end_ps.iter().all(|&e| e != u64::MAX), "every flow finishes");
    assert_eq!(c.sent_bytes, c.delivered_bytes + dropped + o.in_flight_bytes);
    assert_eq!(c.sent_pkts, c.delivered_pkts + c.drop_pkts.iter().sum::<u64>() + o.in_flight_pkts);
    assert_eq!(o.switch_names.len(), 20);
    assert!(o.switch_final_bytes.iter().all(|&b| b == 0));
    // Incast responders sit under another edge switch than their requester (k = 4: 2 hosts per edge).
    let incast: Vec<usize> = (0..o.flow_src.len()).filter(|&i| o.flow_query[i] >= 0).collect();
    assert!(incast.len() > 50);
    assert!(incast.iter().all(|&i| o.flow_src[i] / 2 != o.flow_dst[i] / 2));
    let b = run(&spec);
    assert_eq!(o.flow_end_ps, b.flow_end_ps);
    assert_eq!(o.events, b.events);
}

//! INT records on a 3-hop path carry the right per-hop values for a hand-checked packet.

use serde_json::json;
use sharebuf_core::cc::{AckInfo, CongestionControl, Window};
use sharebuf_core::engine::tx_time_ps;
use sharebuf_core::packet::IntStack;
use sharebuf_core::{SimSpec, Simulator};
use std::sync::{Arc, Mutex};

/// Records the INT stack echoed by every ACK; fixed window.
#[derive(Clone)]
struct Recorder(Arc<Mutex<Vec<IntStack>>>);
impl CongestionControl for Recorder {
    fn name(&self) -> &'static str {
        "int-recorder"
    }
    fn clone_box(&self) -> Box<dyn CongestionControl> {
        Box::new(self.clone())
    }
    fn wants_int(&self) -> bool {
        true
    }
    fn on_ack(&mut self, _w: &mut Window, a: &AckInfo) {
        if let Some(s) = a.int {
            self.0.lock().unwrap().push(*s);
        }
    }
}

/// Host 0 (leaf 0) sends one flow of `size_bytes` to host 2 (leaf 1) on a leaf-spine of 2
/// leaves x 2 servers and 1 spine (1 us links), with the INT recorder as its congestion control;
/// returns the INT stack every ACK echoed.
fn int_log(host_bps: u64, fabric_bps: u64, init_cwnd: u32, delayed_ack: u32, device_queue_packets: u32, size_bytes: u64) -> Vec<IntStack> {
    int_log_stamping(host_bps, fabric_bps, init_cwnd, delayed_ack, device_queue_packets, size_bytes, "data")
}

fn int_log_stamping(host_bps: u64, fabric_bps: u64, init_cwnd: u32, delayed_ack: u32, device_queue_packets: u32, size_bytes: u64, int_stamp: &str) -> Vec<IntStack> {
    let v = json!({
        "seed": 1, "max_ps": 10_000_000_000u64, "arrivals_until_ps": 10_000_000_000u64,
        "topology": {"kind": "leaf_spine", "leaves": 2, "spines": 1, "servers_per_leaf": 2, "links_per_leaf_spine": 1,
                     "host_link_bps": host_bps, "fabric_link_bps": fabric_bps, "link_delay_ps": 1_000_000},
        "switch": {"buffer_bytes": 1_000_000, "queues_per_port": 1, "scheduler": "rr", "device_queue_packets": device_queue_packets,
                   "int_stamp": int_stamp, "bm": {"scheme": "cs", "params": {}}},
        "transport": {"cc": "powertcp", "mss_bytes": 1000, "header_bytes": 50, "init_cwnd_packets": init_cwnd, "min_rto_ps": 1_000_000_000u64,
                      "initial_rto_ps": 1_000_000_000u64, "handshake": false, "delayed_ack_packets": delayed_ack, "delayed_ack_timeout_ps": 1_000_000,
                      "ack_priority": 0, "unscheduled_bytes": 0, "unscheduled_acks": false, "max_rto_ps": 10_000_000_000u64},
        "workloads": [{"kind": "flows", "name": "one", "flows": [{"src": 0, "dst": 2, "size_bytes": size_bytes, "start_ps": 0, "priority": 0}]}],
        "output": {}
    });
    run_recording(v)
}

/// Run the engine spec `v` with the INT recorder as flow 0's congestion control; the flow must
/// finish. Returns the INT stack every ACK echoed.
fn run_recording(v: serde_json::Value) -> Vec<IntStack> {
    let spec: SimSpec = serde_json::from_value(v).unwrap();
    let mut sim = Simulator::new(&spec).unwrap();
    let log = Arc::new(Mutex::new(Vec::new()));
    sim.set_cc_prototype(0, Box::new(Recorder(log.clone())));
    let out = sim.run(&mut |_, _| true);
    assert!(out.flow_end_ps[0] != u64::MAX, "the flow finishes");
    let log = log.lock().unwrap().clone();
    log
}

#[test]
fn int_on_three_hops_matches_hand_computation() {
    // Leaf-spine, 2 leaves x 2 servers, 1 spine: host 0 (leaf 0) -> host 2 (leaf 1).
    let log = int_log(10_000_000_000, 40_000_000_000, 2, 1, 0, 2000);
    assert_eq!(log.len(), 2, "one ACK per data packet");
    let (d, host, fab) = (1_000_000u64, 10_000_000_000u64, 40_000_000_000u64);
    let size = 1050u64;
    // Packet 1 leaves the host NIC at tx(1050 B @ 10G) = 840 ns, reaches leaf 0 after 1 us;
    // each switch dequeues it on arrival (store and forward, idle ports).
    let leaf0 = tx_time_ps(size, host) + d;
    let spine = leaf0 + tx_time_ps(size, fab) + d;
    let leaf1 = spine + tx_time_ps(size, fab) + d;
    let first = &log[0];
    assert_eq!(first.n, 3);
    let expect_ts = [leaf0, spine, leaf1];
    let expect_rate = [fab, fab, host];
    for (i, h) in first.hops[..3].iter().enumerate() {
        assert_eq!(h.ts_ps, expect_ts[i], "hop {i} timestamp");
        assert_eq!(h.rate_bps, expect_rate[i], "hop {i} rate");
        assert_eq!(h.tx_bytes, 0, "hop {i}: nothing sent before packet 1");
        // At dequeue, packet 2 (sent right behind) has not arrived yet at any hop.
        assert_eq!(h.qlen_bytes, 0, "hop {i} queue after dequeue");
    }
    // Packet 2 follows 840 ns behind at the host; the 40G uplink is idle again, so the leaf
    // dequeues it on arrival; the ports have sent exactly packet 1 before it.
    let second = &log[1];
    assert_eq!(second.hops[0].ts_ps, leaf0 + tx_time_ps(size, host));
    for h in &second.hops[..3] {
        assert_eq!(h.tx_bytes, size);
    }
    // The last hop (10G) is slower than the fabric: packet 2 arrives at leaf 1 while packet 1
    // is still being serialized there and waits for it.
    let arrive2_leaf1 = second.hops[0].ts_ps + 2 * (tx_time_ps(size, fab) + d);
    assert_eq!(second.hops[2].ts_ps, arrive2_leaf1.max(leaf1 + tx_time_ps(size, host)));
}

/// With delayed ACKs (m = 2) the ACK the timer sends carries the INT records of the data it
/// acknowledges, like every other ACK: a 2-segment flow with an initial window of 1 gets its
/// first ACK from the timer (segment 1 alone), the second at once (the last segment).
#[test]
fn delayed_ack_timer_ack_carries_int() {
    let log = int_log(10_000_000_000, 40_000_000_000, 1, 2, 0, 2000);
    assert_eq!(log.len(), 2);
    let (d, host, fab) = (1_000_000u64, 10_000_000_000u64, 40_000_000_000u64);
    let leaf0 = tx_time_ps(1050, host) + d;
    assert_eq!(log[0].n, 3, "the timer's ACK echoes segment 1's three hops");
    assert_eq!(log[0].hops[0].ts_ps, leaf0);
    assert_eq!(log[0].hops[1].ts_ps, leaf0 + tx_time_ps(1050, fab) + d);
    assert_eq!(log[1].n, 3);
    assert_eq!(log[1].hops[0].tx_bytes, 1050, "segment 2 follows segment 1 on every port");
}

/// INT's txBytes at a port with a device FIFO (ns-3's PointToPointNetDevice queue): a packet
/// is stamped when it leaves the buffer manager's queue for the device, and txBytes counts the
/// bytes whose transmission started strictly before that instant, not the packets committed to
/// the device ahead of it. Host 0 sends 8 segments at 40 Gbps into leaf 0's 10 Gbps uplink:
/// segment k arrives at a_k = a_0 + k t40 and goes straight down to the device (room for 100),
/// while segment j starts at s_j = a_0 + 4 j t40 (t10 = 4 t40). So segment k is stamped at a_k
/// with txBytes = #{j < k : s_j < a_k} = ceil(k / 4) segments (at k = 4, segment 1 starts at
/// that very instant and is not counted). Without a device FIFO a segment is stamped when it
/// starts, after every earlier one: k segments, with the later arrivals queued behind it.
#[test]
fn int_tx_bytes_below_a_device_fifo() {
    for dev in [100u32, 0] {
        let log = int_log(40_000_000_000, 10_000_000_000, 8, 1, dev, 8000);
        assert_eq!(log.len(), 8, "one ACK per segment");
        let (d, t40, t10) = (1_000_000u64, tx_time_ps(1050, 40_000_000_000), tx_time_ps(1050, 10_000_000_000));
        assert_eq!(t10, 4 * t40);
        let a0 = t40 + d;
        for (k, s) in log.iter().enumerate() {
            let k = k as u64;
            let (ts, sent) = if dev > 0 { (a0 + k * t40, k.div_ceil(4)) } else { (a0 + k * t10, k) };
            assert_eq!(s.hops[0].ts_ps, ts, "device FIFO {dev}: segment {k}'s stamp time at leaf 0");
            assert_eq!(s.hops[0].tx_bytes, sent * 1050, "device FIFO {dev}: segment {k}'s txBytes at leaf 0");
            // Behind it in the buffer manager's queue: nothing above a device FIFO with room;
            // without one, the segments that arrived by its start (a_j <= s_k: j <= 4k).
            let behind = if dev > 0 { 0 } else { (4 * k).min(7) - k };
            assert_eq!(s.hops[0].qlen_bytes as u64, behind * 1050, "device FIFO {dev}: queue behind segment {k}");
        }
    }
}

/// `int_stamp = "all"` (ns3dc's GenQueueDisc stamps every packet carrying a FeedbackTag, and the
/// receiver's pure ACK carries the data packet's): the ACK gets a record at every switch port it
/// leaves, after the three it echoes. The path of `int_on_three_hops_matches_hand_computation`;
/// the first segment reaches host 2 at r = leaf 1's stamp + tx(1050 B @ 10G) + 1 us, its 50 B
/// ACK leaves at once and is dequeued on arrival at each idle port of the way back: leaf 1 to the
/// spine (40G) at r + tx(50 @ 10G) + 1 us, the spine to leaf 0 (40G) and leaf 0 to host 0 (10G)
/// each tx(50 @ 40G) + 1 us later, with nothing sent before it and nothing behind it. The
/// second ACK's return ports have sent the first ACK (50 B) before it. With "data" the ACKs
/// echo the three data hops only.
#[test]
fn int_stamp_all_appends_the_acks_hops() {
    let (d, host, fab) = (1_000_000u64, 10_000_000_000u64, 40_000_000_000u64);
    let data = int_log(host, fab, 2, 1, 0, 2000);
    let all = int_log_stamping(host, fab, 2, 1, 0, 2000, "all");
    assert_eq!(all.len(), 2);
    assert!(data.iter().all(|s| s.n == 3));
    let first = &all[0];
    assert_eq!(first.n, 6, "three data hops, then three ACK hops");
    assert_eq!(first.hops[..3], data[0].hops[..3], "the data hops are as without ACK stamping");
    let r = first.hops[2].ts_ps + tx_time_ps(1050, host) + d;
    let up = r + tx_time_ps(50, host) + d;
    let expect = [(up, fab), (up + tx_time_ps(50, fab) + d, fab), (up + 2 * (tx_time_ps(50, fab) + d), host)];
    for (i, (h, (ts, rate))) in first.hops[3..6].iter().zip(expect).enumerate() {
        assert_eq!((h.ts_ps, h.rate_bps, h.tx_bytes, h.qlen_bytes), (ts, rate, 0, 0), "ACK hop {i}");
    }
    assert_eq!(all[1].n, 6);
    for h in &all[1].hops[3..6] {
        assert_eq!(h.tx_bytes, 50, "the first ACK went before the second on every port back");
    }
}

/// The longest round trip sharebuf builds: across a k = 4 fat tree's core, 5 switch ports for
/// the data (edge, aggregation, core, aggregation, edge) and 5 for its ACK, every record kept
/// with `int_stamp = "all"` (5 with "data").
#[test]
fn int_stamp_all_keeps_a_fat_tree_round_trip() {
    for (stamp, n) in [("data", 5u8), ("all", 10)] {
        let v = json!({
            "seed": 1, "max_ps": 10_000_000_000u64, "arrivals_until_ps": 10_000_000_000u64,
            "topology": {"kind": "fat_tree", "k": 4, "hosts_per_edge": 2,
                         "host_link_bps": 10_000_000_000u64, "edge_agg_link_bps": 40_000_000_000u64, "agg_core_link_bps": 40_000_000_000u64,
                         "host_link_delay_ps": 1_000_000, "edge_agg_link_delay_ps": 1_000_000, "agg_core_link_delay_ps": 1_000_000},
            "switch": {"buffer_bytes": 1_000_000, "queues_per_port": 1, "scheduler": "rr", "int_stamp": stamp, "bm": {"scheme": "cs", "params": {}}},
            "transport": {"cc": "powertcp", "mss_bytes": 1000, "header_bytes": 50, "init_cwnd_packets": 2, "min_rto_ps": 1_000_000_000u64,
                          "initial_rto_ps": 1_000_000_000u64, "handshake": false, "delayed_ack_packets": 1, "delayed_ack_timeout_ps": 1_000_000,
                          "ack_priority": 0, "unscheduled_bytes": 0, "unscheduled_acks": false, "max_rto_ps": 10_000_000_000u64},
            "workloads": [{"kind": "flows", "name": "one", "flows": [{"src": 0, "dst": 15, "size_bytes": 2000, "start_ps": 0, "priority": 0}]}],
            "output": {}
        });
        let log = run_recording(v);
        assert_eq!(log.len(), 2, "one ACK per segment");
        assert!(log.iter().all(|s| s.n == n), "int_stamp = {stamp}: {:?}", log.iter().map(|s| s.n).collect::<Vec<_>>());
    }
}

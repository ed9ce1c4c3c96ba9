//! Flow storage (issue 10, `transport::flows`): a flow's `TcpFlow` exists only from its start
//! until it retires (finished, sender done, no timer, no packet left in the network), and
//! retiring changes no output. In debug builds the invariants run at every event and a flow
//! retires at the first sweep after it qualifies, so a packet or timer of a retired flow would
//! panic ("a packet of an active flow", "every TCP packet belongs to an active flow").

use serde_json::json;
use sharebuf_core::{RunOutput, SimSpec, Simulator};

/// 16 hosts on one switch, Poisson flows of 1-60 KB all-to-all for `arrivals_us`, a small
/// buffer (drops, retransmissions and timeouts, so stale retransmissions reach receivers
/// after their flow finished), `cc` and delayed ACKs of `delack` packets.
fn spec(cc: &str, delack: u32, arrivals_us: u64) -> SimSpec {
    let v = json!({
        "seed": 7, "max_ps": 100_000_000_000u64, "arrivals_until_ps": arrivals_us * 1_000_000,
        "topology": {"kind": "star", "hosts": 16, "link_bps": 10_000_000_000u64, "link_delay_ps": 1_000_000},
        "switch": {"buffer_bytes": 60_000, "queues_per_port": 1, "scheduler": "rr", "bm": {"scheme": "dt", "params": {"alpha": 1.0}}},
        "transport": {"cc": cc, "mss_bytes": 1448, "header_bytes": 54, "init_cwnd_packets": 10, "min_rto_ps": 200_000_000u64,
                      "initial_rto_ps": 200_000_000u64, "handshake": true, "delayed_ack_packets": delack, "delayed_ack_timeout_ps": 20_000_000,
                      "ack_priority": 0, "unscheduled_bytes": 0, "unscheduled_acks": false, "max_rto_ps": 1_000_000_000_000u64},
        "workloads": [{"kind": "poisson", "name": "p", "cdf": [[1000.0, 0.0], [1000.0, 0.5], [60000.0, 1.0]],
                       "rate_per_host_per_s": 60_000.0, "destinations": "all_to_all", "priority": 0}],
        "output": {"buffer_sample_ps": 0, "queue_sample_ps": 0}
    });
    serde_json::from_value(v).unwrap()
}

/// Run `spec`, retiring flows or not; the output (wall time zeroed) and the slab size.
fn run(spec: &SimSpec, retire: bool) -> (RunOutput, usize) {
    let mut sim = Simulator::new(spec).unwrap();
    sim.flows.set_retire(retire);
    let mut o = sim.run(&mut |_, _| true);
    o.wall_s = 0.0;
    (o, sim.flows.slab_len())
}

/// Most flows running at once: largest number of overlapping [start, end] intervals.
fn max_concurrent(o: &RunOutput) -> usize {
    let mut ev: Vec<(u64, i32)> = o.flow_start_ps.iter().map(|&s| (s, 1)).chain(o.flow_end_ps.iter().map(|&e| (e, -1))).collect();
    ev.sort();
    let (mut cur, mut best) = (0i32, 0i32);
    for (_, d) in ev {
        cur += d;
        best = best.max(cur);
    }
    best as usize
}

fn check(cc: &str, delack: u32) {
    let s = spec(cc, delack, 2_000);
    let (kept, all_slots) = run(&s, false);
    let (retired, slots) = run(&s, true);
    let n = kept.flow_src.len();
    assert!(n > 1_500, "{n} flows");
    // Lossy enough to leave retransmissions in flight after flows finish.
    assert!(kept.flow_retransmits.iter().sum::<u32>() > 100 && kept.flow_timeouts.iter().sum::<u32>() > 0, "{:?}", kept.counters);
    assert!(kept.flow_end_ps.iter().all(|&e| e != u64::MAX), "every flow finishes");
    // Retiring changes nothing: every column, counter and event count is the same.
    assert_eq!(format!("{retired:?}"), format!("{kept:?}"));
    // Without retiring every flow keeps a slot; with it, the slab holds the flows running at
    // once (at least the most [start, end] intervals that overlap) plus the retiring lag.
    assert_eq!(all_slots, n);
    let conc = max_concurrent(&kept);
    println!("{cc}, delayed ACK {delack}: {n} flows, at most {conc} running at once, slab {slots} slots");
    assert!(slots >= conc, "slab {slots} < {conc} flows running at once");
    let lag = if cfg!(debug_assertions) { conc } else { 1024 };
    assert!(slots <= 2 * conc + lag, "slab {slots} slots for at most {conc} flows running at once");
}

#[test]
fn retiring_finished_flows_changes_no_output_newreno() {
    check("newreno", 1);
}

/// INT and delayed ACKs: the per-slot INT records of the delayed ACK are reused across flows.
#[test]
fn retiring_finished_flows_changes_no_output_hpcc_delayed_acks() {
    check("hpcc", 2);
}

//! `[output] tcp_trace_*`: per-flow TCP sender traces observe and change nothing; every timeout
//! and every lost segment's retransmission of a traced flow has its row.

use serde_json::{json, Value};
use sharebuf_core::metrics::{TcpTraceRecord, TRACE_ACK, TRACE_SEND, TRACE_TIMEOUT};
use sharebuf_core::{RunOutput, SimSpec, Simulator};

mod common;

fn run(v: Value, retire: bool) -> RunOutput {
    let spec: SimSpec = serde_json::from_value(v).unwrap();
    let mut sim = Simulator::new(&spec).unwrap();
    sim.flows.set_retire(retire);
    let mut o = sim.run(&mut |_, _| true);
    o.wall_s = 0.0;
    o
}

/// The overloaded star (two NewReno flows, ids 0 and 1, beside constant-rate overload), with
/// `output` extra keys.
fn star(extra: Value) -> Value {
    let mut out = json!({"buffer_sample_ps": 0, "queue_sample_ps": 0, "drop_log": true});
    out.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    common::overloaded_star("lqd", out)
}

fn rows_of(t: &[TcpTraceRecord], flow: u32) -> Vec<TcpTraceRecord> {
    t.iter().filter(|r| r.flow == flow).copied().collect()
}

#[test]
fn trace_observes_only_and_has_a_row_per_timeout_and_resent_loss() {
    let off = run(star(json!({})), true);
    let on = run(star(json!({"tcp_trace_flows": [1]})), true);
    assert!(off.tcp_trace.is_none());
    let t = on.tcp_trace.as_ref().expect("a traced flow");
    // The same run either way (wall time zeroed): every output but the trace.
    let mut on_plain = on.clone();
    on_plain.tcp_trace = None;
    assert_eq!(format!("{on_plain:?}"), format!("{off:?}"));
    // Only flow 1, in time order.
    assert!(!t.is_empty() && t.iter().all(|r| r.flow == 1));
    assert!(t.windows(2).all(|w| w[0].time_ps <= w[1].time_ps));
    // A timeout row per timeout the flow counts.
    let timeouts = t.iter().filter(|r| r.event == TRACE_TIMEOUT).count();
    assert_eq!(timeouts as u32, on.flow_timeouts[1]);
    // Lossy: every data segment of flow 1 dropped (TCP data: DATA flag, not CBR's) was sent again later, as a retransmission of
    // the same first byte.
    let drops: Vec<_> = on.drops.as_ref().unwrap().iter().filter(|d| d.flow == 1 && d.flags & (4 | 128) == 4).collect();
    assert!(drops.len() > 5, "{} data drops of flow 1", drops.len());
    eprintln!("flow 1: {} data drops, {} timeouts, {} rows", drops.len(), timeouts, t.len());
    for d in &drops {
        assert!(t.iter().any(|r| r.event == TRACE_SEND && r.retx && r.seq == d.seq && r.time_ps > d.time_ps), "drop of seq {} at {} ps never resent", d.seq, d.time_ps);
    }
    // Sends: one row per data segment the sender put on the wire, first transmissions exactly
    // once each (segments of 1448 B from 0).
    let mut first: Vec<u64> = t.iter().filter(|r| r.event == TRACE_SEND && !r.retx).map(|r| r.seq).collect();
    first.sort_unstable();
    let expect: Vec<u64> = (0..500_000u64.div_ceil(1448)).map(|k| k * 1448).collect();
    assert_eq!(first, expect);
    // The last row acknowledges the whole flow.
    let last = t.last().unwrap();
    assert_eq!((last.event, last.seq, last.snd_una), (TRACE_ACK, 500_000, 500_000));
}

#[test]
fn size_selection_and_retiring_flows_keep_every_row() {
    // 16 hosts, Poisson flows of 1-60 KB (over 1,500 flows: release builds retire finished flows
    // in sweeps of 1,024), every flow of at least 30 KB traced, and flow 3 by id.
    let v = json!({
        "seed": 7, "max_ps": 100_000_000_000u64, "arrivals_until_ps": 2_000_000_000u64,
        "topology": {"kind": "star", "hosts": 16, "link_bps": 10_000_000_000u64, "link_delay_ps": 1_000_000},
        "switch": {"buffer_bytes": 60_000, "queues_per_port": 1, "scheduler": "rr", "bm": {"scheme": "dt", "params": {"alpha": 1.0}}},
        "transport": {"cc": "dctcp", "mss_bytes": 1448, "header_bytes": 54, "init_cwnd_packets": 10, "min_rto_ps": 200_000_000u64,
                      "initial_rto_ps": 200_000_000u64, "handshake": true, "delayed_ack_packets": 1, "delayed_ack_timeout_ps": 20_000_000,
                      "ack_priority": 0, "unscheduled_bytes": 0, "unscheduled_acks": false, "max_rto_ps": 1_000_000_000_000u64},
        "workloads": [{"kind": "poisson", "name": "p", "cdf": [[1000.0, 0.0], [1000.0, 0.5], [60000.0, 1.0]],
                       "rate_per_host_per_s": 60_000.0, "destinations": "all_to_all", "priority": 0}],
        "output": {"buffer_sample_ps": 0, "queue_sample_ps": 0, "tcp_trace_min_size_bytes": 30_000, "tcp_trace_flows": [3, 3]}
    });
    let kept = run(v.clone(), false);
    let retired = run(v, true);
    assert_eq!(format!("{retired:?}"), format!("{kept:?}"));
    let t = retired.tcp_trace.as_ref().unwrap();
    let n = retired.flow_size.len();
    assert!(n > 1_500, "{n} flows");
    let traced: Vec<u32> = (0..n as u32).filter(|&f| retired.flow_size[f as usize] >= 30_000 || f == 3).collect();
    assert!(retired.flow_size[3] < 30_000, "flow 3 is selected by id only");
    assert!(traced.len() > 300, "{} traced", traced.len());
    for &f in &traced {
        let r = rows_of(t, f);
        let size = retired.flow_size[f as usize];
        assert!(r.windows(2).all(|w| w[0].time_ps <= w[1].time_ps));
        assert_eq!(r.iter().filter(|x| x.event == TRACE_TIMEOUT).count() as u32, retired.flow_timeouts[f as usize], "flow {f}");
        assert_eq!(r.iter().filter(|x| x.event == TRACE_SEND && !x.retx).count() as u64, size.div_ceil(1448), "flow {f}");
        let last = r.iter().rev().find(|x| x.event == TRACE_ACK).unwrap();
        assert_eq!(last.snd_una, size, "flow {f}");
        // DCTCP's α is a fraction; a row for every sender event and nothing else.
        assert!(r.iter().all(|x| (0.0..=1.0).contains(&x.alpha)));
    }
    assert_eq!(t.len(), traced.iter().map(|&f| rows_of(t, f).len()).sum::<usize>());
}

#[test]
fn unknown_flow_id_is_refused() {
    let spec: SimSpec = serde_json::from_value(star(json!({"tcp_trace_flows": [0, 2]}))).unwrap();
    let e = Simulator::new(&spec).err().expect("flow 2 does not exist");
    assert!(e.contains("output.tcp_trace_flows: 2 is not a flow of the run; allowed: flow ids 0..=1"), "{e}");
}

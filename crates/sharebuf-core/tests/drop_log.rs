//! `[output] drop_log`: one record per packet the counters count as dropped, cause by cause
//! (admission refusals, a full buffer and push-out victims alike), and the log changes no decision.

use serde_json::json;
use sharebuf_core::{SimSpec, Simulator};

mod common;

fn spec(drop_log: bool) -> SimSpec {
    // LQD on the overloaded star: refusals and push-outs by the hundred.
    let mut out = json!({"buffer_sample_ps": 0, "queue_sample_ps": 0});
    if drop_log {
        out["drop_log"] = json!(true);
    }
    serde_json::from_value(common::overloaded_star("lqd", out)).unwrap()
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

//! Push-out (Admission::PushOut) tells the scheme about the evicted packet (issue #9 item 10):
//! a scheme that keeps its own per-queue byte count through the queue hooks must stay equal to
//! the switch's `BufferState` however many packets are pushed out.

use std::sync::{Arc, Mutex};

use serde_json::json;
use sharebuf_core::bm::{Admission, BufferManager, BufferState, QueueRef};
use sharebuf_core::engine::Time;
use sharebuf_core::packet::Packet;
use sharebuf_core::{SimSpec, Simulator};

mod common;

/// Longest-queue drop that mirrors the queue lengths in its own state (as a scheme with
/// per-queue state does) and counts every admission at which its mirror disagrees with the switch.
#[derive(Default)]
struct Stats {
    evicted: u64,
    checks: u64,
    mismatches: u64,
}

struct MirrorLqd {
    mirror: Vec<u64>,
    stats: Arc<Mutex<Stats>>,
}

impl BufferManager for MirrorLqd {
    fn name(&self) -> &'static str {
        "mirror-lqd-test"
    }
    fn admit(&mut self, st: &BufferState, q: QueueRef, pkt: &Packet, _now: Time) -> Admission {
        let mut s = self.stats.lock().unwrap();
        s.checks += 1;
        if self.mirror != st.queue_bytes {
            s.mismatches += 1;
            self.mirror = st.queue_bytes.clone(); // resynchronise, count each divergence once
        }
        if st.remaining_bytes() >= pkt.size_bytes as u64 {
            return Admission::Accept;
        }
        let longest = (0..st.n_ports).max_by_key(|&p| st.queue_bytes[p]).unwrap();
        if longest == q.port || st.queue_bytes[longest] == 0 {
            Admission::Drop
        } else {
            Admission::PushOut(QueueRef { port: longest, queue: 0 })
        }
    }
    fn on_enqueue(&mut self, st: &BufferState, q: QueueRef, pkt: &Packet, _now: Time) {
        self.mirror[st.idx(q)] += pkt.size_bytes as u64;
    }
    fn on_dequeue(&mut self, st: &BufferState, q: QueueRef, pkt: &Packet, _now: Time) -> bool {
        self.mirror[st.idx(q)] -= pkt.size_bytes as u64;
        true
    }
    fn on_evict(&mut self, st: &BufferState, q: QueueRef, pkt: &Packet, now: Time) {
        self.stats.lock().unwrap().evicted += 1;
        let _ = self.on_dequeue(st, q, pkt, now);
    }
}

#[test]
fn evicted_packets_reach_the_scheme_hooks() {
    let v = common::overloaded_star("cs", json!({"buffer_sample_ps": 10_000_000, "queue_sample_ps": 0}));
    let spec: SimSpec = serde_json::from_value(v).unwrap();
    let mut sim = Simulator::new(&spec).unwrap();
    let stats = Arc::new(Mutex::new(Stats::default()));
    sim.set_bm(0, Box::new(MirrorLqd { mirror: vec![0; 6], stats: stats.clone() }));
    let o = sim.run(&mut |_, _| true);
    let pushed = o.counters.drop_pkts[3];
    assert!(pushed > 100, "push-outs happen: {:?}", o.counters.drop_pkts);
    let bm = stats.lock().unwrap();
    assert!(bm.checks > 1_000);
    // Every pushed-out packet reached on_evict, and the scheme's own per-queue state never
    // diverged from the switch's (before the fix it diverged after the first push-out).
    assert_eq!(bm.evicted, pushed);
    assert_eq!(bm.mismatches, 0);
}

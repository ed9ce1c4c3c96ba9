//! Longest Queue Drop (LQD), a push-out scheme: every queue may use the whole pool; when an
//! arriving packet does not fit, the tail packet of the longest queue is pushed out, until the
//! packet fits or its own queue is the longest (then the arrival itself is dropped).
//!
//! Wei, Coyle & Hsiao, "An optimal buffer management policy for high-performance packet
//! switching", GLOBECOM 1991 (LQD maximizes throughput over push-out policies for symmetric
//! traffic); Hahne, Kesselman & Mansour, "Competitive buffer management for shared-memory
//! switches", SPAA 2001 (LQD is 2-competitive for throughput, at least √2). See docs/schemes/lqd.md.
//!
//! Variable packet sizes: "longest" is in bytes, and the arrival counts in its own queue, so
//! the rule is "enqueue, then trim the longest queue's tail while the pool overflows", which
//! the switch runs as the `PushOut` loop. Ties: the arrival's own queue loses (the arrival is
//! dropped, nothing already queued is discarded); among other queues the lowest index
//! `port · n_queues + queue` loses.
//!
//! `trace = true` records one row per arrival (the features Credence's predictor reads and the
//! packet's fate: sent, pushed out, refused; docs/schemes/credence.md §5.2), written by the
//! Python front as `lqd_trace.parquet`. Off by default; the decisions are the same either way.

use super::credence::Features;
use super::{Admission, BmContext, BufferManager, BufferState, Params, QueueRef, Scheme, TraceRow};
use crate::engine::Time;
use crate::packet::Packet;
use std::collections::{HashMap, VecDeque};

#[derive(Default)]
pub struct LongestQueueDrop {
    /// Present with `trace = true`.
    trace: Option<Box<Tracer>>,
}

/// The trace of an LQD switch: rows wait in their queue's FIFO (arrival order) until the packet
/// leaves (front: sent) or is pushed out (back: a push-out takes the tail).
struct Tracer {
    feat: Features,
    /// The arrival being decided (the switch asks again after each push-out).
    pending: Option<TraceRow>,
    fifo: Vec<VecDeque<TraceRow>>,
    rows: Vec<TraceRow>,
    /// Arrivals so far per (flow key, seq): the `occurrence` column.
    seen: HashMap<(u64, u64), u32>,
}

pub fn build(p: &Params, ctx: &BmContext) -> Result<Scheme, String> {
    p.allow_only("lqd", &["trace", "ewma_rtts"])?;
    let trace = p.bool_or("trace", false)?;
    let ewma_rtts = p.f64_or("ewma_rtts", 1.0)?;
    if !(ewma_rtts.is_finite() && ewma_rtts >= 0.0) {
        return Err(format!("switch.bm.ewma_rtts = {ewma_rtts}: not allowed; must be finite and >= 0 (the EWMA time constant in base RTTs)"));
    }
    if !trace {
        if p.raw("ewma_rtts").is_some() {
            return Err("switch.bm.ewma_rtts: only used with trace = true (the features of the LQD trace)".into());
        }
        return Ok(LongestQueueDrop::default().into());
    }
    let n = ctx.port_rate_bps.len() * ctx.n_queues;
    let tau_ps = (ewma_rtts * ctx.base_rtt_ps as f64).round() as Time;
    Ok(LongestQueueDrop {
        trace: Some(Box::new(Tracer { feat: Features::new(n, tau_ps), pending: None, fifo: vec![VecDeque::new(); n], rows: Vec::new(), seen: HashMap::new() })),
    }
    .into())
}

impl Tracer {
    /// A packet of queue `i` leaves: sent (its head row, fate 0) or pushed out (its tail row,
    /// fate 1); the features see the departure either way.
    fn depart(&mut self, st: &BufferState, i: usize, now: Time, pushed_out: bool) {
        self.feat.on_departure(st, i, now);
        let r = if pushed_out { self.fifo[i].pop_back() } else { self.fifo[i].pop_front() };
        if let Some(mut r) = r {
            r.t_fate_ps = now;
            r.fate = pushed_out as u8;
            self.rows.push(r);
        }
    }

    /// The first time an arrival is offered: its features, before any push-out.
    fn offer(&mut self, st: &BufferState, q: QueueRef, pkt: &Packet, now: Time) {
        if let Some(p) = &self.pending {
            if p.t_arrival_ps == now && p.flow_key == pkt.flow_key() && p.seq == pkt.seq && p.port as usize == q.port && p.queue as usize == q.queue {
                return; // asked again after a push-out
            }
        }
        let key = (pkt.flow_key(), pkt.seq);
        let c = self.seen.entry(key).or_insert(0);
        let occurrence = *c;
        *c += 1;
        let i = st.idx(q);
        self.pending = Some(TraceRow {
            switch: 0,
            port: q.port as u16,
            queue: q.queue as u8,
            flow: pkt.flow,
            flow_key: key.0,
            seq: pkt.seq,
            occurrence,
            size_bytes: pkt.size_bytes,
            flags: pkt.flags,
            t_arrival_ps: now,
            t_fate_ps: 0,
            q_bytes: st.queue_bytes[i],
            q_avg_bytes: self.feat.q_avg(i),
            occ_bytes: st.occupied_bytes,
            occ_avg_bytes: self.feat.occ_avg(),
            longest_bytes: st.queue_bytes.iter().copied().max().unwrap_or(0),
            fate: 0,
        });
    }

    fn refuse(&mut self, now: Time) {
        if let Some(mut r) = self.pending.take() {
            r.t_fate_ps = now;
            r.fate = 2;
            self.rows.push(r);
        }
    }
}

/// The queue whose tail LQD drops when `size_bytes` arriving for `q` does not fit: `None` for
/// the arrival itself (its queue, counting it, is the longest; ties included), else the longest
/// other queue in bytes (ties: the lowest index).
pub fn victim(st: &BufferState, q: QueueRef, size_bytes: u64) -> Option<QueueRef> {
    let own = st.idx(q);
    let mut best = own;
    let mut best_bytes = st.queue_bytes[own] + size_bytes;
    for (i, &b) in st.queue_bytes.iter().enumerate() {
        if b > best_bytes {
            best = i;
            best_bytes = b;
        }
    }
    (best != own).then(|| QueueRef { port: best / st.n_queues, queue: best % st.n_queues })
}

impl BufferManager for LongestQueueDrop {
    fn name(&self) -> &'static str {
        "lqd"
    }
    fn uses_queue_hooks(&self) -> bool {
        self.trace.is_some()
    }
    #[inline]
    fn admit(&mut self, st: &BufferState, q: QueueRef, pkt: &Packet, now: Time) -> Admission {
        if let Some(t) = &mut self.trace {
            t.offer(st, q, pkt, now);
        }
        let size = pkt.size_bytes as u64;
        if st.remaining_bytes() >= size {
            return Admission::Accept;
        }
        match victim(st, q, size) {
            Some(v) => Admission::PushOut(v),
            None => {
                if let Some(t) = &mut self.trace {
                    t.refuse(now);
                }
                Admission::Drop
            }
        }
    }
    fn on_enqueue(&mut self, st: &BufferState, q: QueueRef, _pkt: &Packet, _now: Time) {
        if let Some(t) = &mut self.trace {
            if let Some(r) = t.pending.take() {
                t.fifo[st.idx(q)].push_back(r);
            }
        }
    }
    fn on_dequeue(&mut self, st: &BufferState, q: QueueRef, _pkt: &Packet, now: Time) -> bool {
        if let Some(t) = &mut self.trace {
            t.depart(st, st.idx(q), now, false);
        }
        true
    }
    fn on_evict(&mut self, st: &BufferState, q: QueueRef, _pkt: &Packet, now: Time) {
        if let Some(t) = &mut self.trace {
            t.depart(st, st.idx(q), now, true);
        }
    }
    fn take_trace(&mut self) -> Option<Vec<TraceRow>> {
        self.trace.as_mut().map(|t| std::mem::take(&mut t.rows))
    }
    fn threshold_bytes(&self, st: &BufferState, _q: QueueRef, _pkt: &Packet, _now: Time) -> Option<f64> {
        // No threshold: a queue may take the whole pool, pushing the others out.
        Some(st.total_bytes as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bm::testutil::*;
    use serde_json::json;

    fn lqd() -> Scheme {
        let params = json!({}).as_object().unwrap().clone();
        let ctx = BmContext { buffer_bytes: 6_000, n_queues: 2, port_rate_bps: &[1; 3], base_rtt_ps: 0, seed: 1, switch_index: 0, mss_bytes: 1448, header_bytes: 54 };
        build(&Params::new("switch.bm", &params), &ctx).unwrap()
    }

    /// The switch's enqueue loop (sim.rs `switch_receive`) on a bare `BufferState`, without
    /// departures: ask, push out the victim's tail, ask again. Queues hold packet sizes.
    /// Returns whether the arrival was admitted and the sizes pushed out.
    fn arrive(bm: &mut dyn BufferManager, st: &mut BufferState, fifo: &mut [Vec<u64>], q: QueueRef, size: u32) -> (bool, Vec<(usize, usize, u64)>) {
        let mut out = vec![];
        loop {
            match bm.admit(st, q, &pkt(size, q.queue as u8), 0) {
                Admission::Accept => break,
                Admission::Drop => return (false, out),
                Admission::PushOut(v) => {
                    let b = fifo[st.idx(v)].pop().expect("victim queue is not empty");
                    st.on_dequeue(v, b, false);
                    out.push((v.port, v.queue, b));
                }
            }
        }
        assert!(st.remaining_bytes() >= size as u64, "Accept only with room (the switch would drop)");
        st.on_enqueue(q, size as u64);
        fifo[st.idx(q)].push(size as u64);
        (true, out)
    }

    #[test]
    fn admits_while_the_pool_has_room_and_exactly_to_the_byte() {
        let mut bm = lqd();
        let mut st = state(6_000, 3, 2);
        let q = QueueRef { port: 0, queue: 0 };
        // One queue may take the whole pool: no threshold below B.
        st.on_enqueue(q, 5_000);
        assert_eq!(bm.admit(&st, q, &pkt(1_000, 0), 0), Admission::Accept); // 5,000 + 1,000 = B
        assert_eq!(bm.admit(&st, q, &pkt(1_001, 0), 0), Admission::Drop); // own queue is longest
        let other = QueueRef { port: 2, queue: 1 };
        assert_eq!(bm.admit(&st, other, &pkt(1_000, 1), 0), Admission::Accept);
        assert_eq!(bm.admit(&st, other, &pkt(1_001, 1), 0), Admission::PushOut(q));
    }

    #[test]
    fn hand_computed_sequence_with_ties_and_a_large_arrival() {
        // B = 6,000 B, 3 ports x 2 queues; index = port*2 + queue.
        let mut bm = lqd();
        let mut st = state(6_000, 3, 2);
        let mut fifo = vec![vec![]; 6];
        let a = QueueRef { port: 0, queue: 0 }; // index 0
        let b = QueueRef { port: 1, queue: 1 }; // index 3
        let c = QueueRef { port: 2, queue: 0 }; // index 4
        // 1. Four 1,000-B packets to a, two to b: the pool fills exactly, nothing is dropped.
        for _ in 0..4 {
            assert_eq!(arrive(&mut bm, &mut st, &mut fifo, a, 1_000), (true, vec![]));
        }
        for _ in 0..2 {
            assert_eq!(arrive(&mut bm, &mut st, &mut fifo, b, 1_000), (true, vec![]));
        }
        assert_eq!(st.remaining_bytes(), 0);
        // 2. One more to b: b + arrival = 3,000 < a = 4,000 -> a's tail goes; a 3,000, b 3,000.
        assert_eq!(arrive(&mut bm, &mut st, &mut fifo, b, 1_000), (true, vec![(0, 0, 1_000)]));
        // 3. One more to a: a + arrival = 4,000 > b = 3,000 -> the arrival is dropped.
        assert_eq!(arrive(&mut bm, &mut st, &mut fifo, a, 1_000), (false, vec![]));
        // 4. 500 B to c: a and b tie at 3,000 -> the lower index (a) loses its tail; the
        //    pool has 1,000 free then, so 500 fits: a 2,000, b 3,000, c 500.
        assert_eq!(arrive(&mut bm, &mut st, &mut fifo, c, 500), (true, vec![(0, 0, 1_000)]));
        // 5. 2,500 B to c (free 500): b 3,000 goes first (3,000 > c+2,500 = 3,000? no: tie ->
        //    the arrival's own queue loses) -> dropped, nothing pushed out.
        assert_eq!(arrive(&mut bm, &mut st, &mut fifo, c, 2_500), (false, vec![]));
        // 6. 2,000 B to c (free 500): c + 2,000 = 2,500 < b 3,000 -> b's tail (free 1,500);
        //    then b 2,000, a 2,000, c+2,000 = 2,500 is the longest -> dropped. The push-out
        //    stands (classic LQD: enqueue, then trim the longest while overflowing).
        assert_eq!(arrive(&mut bm, &mut st, &mut fifo, c, 2_000), (false, vec![(1, 1, 1_000)]));
        // 7. 1,500 B to a new queue (port 1, queue 0; free 1,500): fits, no push-out.
        let d = QueueRef { port: 1, queue: 0 };
        assert_eq!(arrive(&mut bm, &mut st, &mut fifo, d, 1_500), (true, vec![]));
        // 8. 1,500 B to d (free 0): a 2,000 and b 2,000 tie above d+1,500 = 3,000? no: d is
        //    longest (3,000) -> dropped.
        assert_eq!(arrive(&mut bm, &mut st, &mut fifo, d, 1_500), (false, vec![]));
        // 9. 1,000 B to the empty queue (port 2, queue 1): a 2,000 (index 0) and b 2,000
        //    (index 3) tie -> a loses 1,000, then the arrival fits.
        let e = QueueRef { port: 2, queue: 1 };
        assert_eq!(arrive(&mut bm, &mut st, &mut fifo, e, 1_000), (true, vec![(0, 0, 1_000)]));
        let bytes: Vec<u64> = st.queue_bytes.clone();
        assert_eq!(bytes, vec![1_000, 0, 1_500, 2_000, 500, 1_000]);
        assert_eq!(st.occupied_bytes, 6_000);
    }

    #[test]
    fn occupancy_never_exceeds_the_pool_under_random_arrivals() {
        // A deterministic pseudo-random arrival/departure mix; after every step Q <= B, the
        // arrival is refused only if its queue (counting it) is the longest, and any push-out
        // came from a queue at least as long as the arrival's.
        let mut bm = lqd();
        let mut st = state(6_000, 3, 2);
        let mut fifo = vec![vec![]; 6];
        let mut x: u64 = 12345;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let (mut drops, mut pushouts) = (0, 0);
        for _ in 0..20_000 {
            let r = next();
            if r % 4 == 0 {
                // Departure from the head of a random non-empty queue.
                let i = (r / 4 % 6) as usize;
                if !fifo[i].is_empty() {
                    let b = fifo[i].remove(0);
                    st.on_dequeue(QueueRef { port: i / 2, queue: i % 2 }, b, true);
                }
                continue;
            }
            let i = (r / 4 % 6) as usize;
            let q = QueueRef { port: i / 2, queue: i % 2 };
            let size = 64 + (r >> 20) % 1_500;
            let own_before = st.queue_bytes[i];
            let longest_other = (0..6).filter(|&j| j != i).map(|j| st.queue_bytes[j]).max().unwrap();
            let free_before = st.remaining_bytes();
            let (ok, out) = arrive(&mut bm, &mut st, &mut fifo, q, size as u32);
            assert!(st.occupied_bytes <= st.total_bytes);
            if free_before >= size {
                assert!(ok && out.is_empty(), "never drops while the pool has room");
            }
            if !ok {
                drops += 1;
                assert!(own_before + size >= st.queue_bytes.iter().enumerate().filter(|&(j, _)| j != i).map(|(_, &b)| b).max().unwrap());
            }
            if !out.is_empty() {
                pushouts += 1;
                assert!(longest_other > own_before + size, "the first victim is strictly longer than the arrival's queue");
            }
        }
        assert!(drops > 100 && pushouts > 100, "{drops} {pushouts}");
    }
}

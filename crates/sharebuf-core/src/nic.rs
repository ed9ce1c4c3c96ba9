//! Host NIC queue discipline `fq_codel` (RFC 8290 flow queueing over RFC 8289 CoDel), as ns-3's
//! default root queue disc on a host's device (`FqCoDelQueueDisc`, ns-3.39 defaults: 1024 flow
//! queues, quantum = MTU 1500 B, limit 10240 packets, drop batch 64, CoDel target 5 ms,
//! interval 100 ms, a flow's CoDel leaves packets alone while its backlog is <= one MTU).
//!
//! Packets are pool ids; the queue keeps (id, wire bytes, enqueue time) so it never reads the
//! pool. Per-flow deques grow once and keep their capacity: no allocation per packet when warm.

use crate::engine::Time;
use std::collections::VecDeque;

pub const FQ_FLOWS: usize = 1024;
pub const FQ_QUANTUM_BYTES: i64 = 1500;
pub const FQ_LIMIT_PKTS: u32 = 10_240;
pub const FQ_DROP_BATCH: u32 = 64;
pub const CODEL_TARGET_PS: Time = 5_000_000_000;
pub const CODEL_INTERVAL_PS: Time = 100_000_000_000;
pub const CODEL_MIN_BYTES: u64 = 1500;

#[derive(Clone, Copy, PartialEq, Eq, Default)]
enum Status {
    #[default]
    Inactive,
    New,
    Old,
}

#[derive(Default)]
struct Codel {
    /// 0: sojourn below target (or not measured yet).
    first_above_time: Time,
    drop_next: Time,
    count: u32,
    last_count: u32,
    dropping: bool,
}

#[derive(Default)]
struct Flow {
    q: VecDeque<(u32, u32, Time)>,
    bytes: u64,
    deficit: i64,
    status: Status,
    codel: Codel,
}

/// fq_codel state of one host NIC.
pub struct FqCodel {
    flows: Vec<Flow>,
    new_flows: VecDeque<u16>,
    old_flows: VecDeque<u16>,
    pub pkts: u32,
}

#[inline]
fn control_law(t: Time, count: u32) -> Time {
    t + (CODEL_INTERVAL_PS as f64 / (count as f64).sqrt()) as Time
}

impl Default for FqCodel {
    fn default() -> Self {
        FqCodel { flows: (0..FQ_FLOWS).map(|_| Flow::default()).collect(), new_flows: VecDeque::new(), old_flows: VecDeque::new(), pkts: 0 }
    }
}

impl FqCodel {
    /// Queue packet `id` of `bytes` in flow bucket `hash % 1024`. Over the limit, packets are
    /// dropped from the head of the fattest flow queue (up to 64, until half its bytes are
    /// gone); their ids and sizes are pushed to `dropped`.
    pub fn enqueue(&mut self, id: u32, bytes: u32, hash: u64, now: Time, dropped: &mut Vec<(u32, u32)>) {
        let i = (hash % FQ_FLOWS as u64) as usize;
        let f = &mut self.flows[i];
        f.q.push_back((id, bytes, now));
        f.bytes += bytes as u64;
        self.pkts += 1;
        if f.status == Status::Inactive {
            f.status = Status::New;
            f.deficit = FQ_QUANTUM_BYTES;
            self.new_flows.push_back(i as u16);
        }
        if self.pkts > FQ_LIMIT_PKTS {
            let fat = (0..FQ_FLOWS).max_by_key(|&k| (self.flows[k].bytes, std::cmp::Reverse(k))).unwrap();
            let f = &mut self.flows[fat];
            let threshold = f.bytes / 2;
            let start = f.bytes;
            let mut n = 0;
            while let Some((d, b, _)) = f.q.pop_front() {
                f.bytes -= b as u64;
                self.pkts -= 1;
                dropped.push((d, b));
                n += 1;
                if n >= FQ_DROP_BATCH || start - f.bytes >= threshold {
                    break;
                }
            }
        }
    }

    /// CoDel's verdict on the packet at the head of flow `i` (RFC 8289 `should_drop`).
    fn ok_to_drop(f: &mut Flow, enq: Time, now: Time) -> bool {
        if now - enq < CODEL_TARGET_PS || f.bytes <= CODEL_MIN_BYTES {
            f.codel.first_above_time = 0;
            return false;
        }
        if f.codel.first_above_time == 0 {
            f.codel.first_above_time = now + CODEL_INTERVAL_PS;
            return false;
        }
        now >= f.codel.first_above_time
    }

    fn pop(f: &mut Flow) -> Option<(u32, u32, Time)> {
        let x = f.q.pop_front()?;
        f.bytes -= x.1 as u64;
        Some(x)
    }

    /// CoDel dequeue from flow `i` (RFC 8289); CoDel's drops go to `dropped`.
    fn codel_dequeue(&mut self, i: usize, now: Time, dropped: &mut Vec<(u32, u32)>) -> Option<(u32, u32)> {
        let f = &mut self.flows[i];
        let Some(mut p) = Self::pop(f) else {
            f.codel.dropping = false;
            f.codel.first_above_time = 0;
            return None;
        };
        self.pkts -= 1;
        let drop = Self::ok_to_drop(f, p.2, now);
        if f.codel.dropping {
            if !drop {
                f.codel.dropping = false;
            }
            while f.codel.dropping && now >= f.codel.drop_next {
                dropped.push((p.0, p.1));
                f.codel.count += 1;
                match Self::pop(f) {
                    None => {
                        f.codel.dropping = false;
                        f.codel.first_above_time = 0;
                        return None;
                    }
                    Some(x) => {
                        self.pkts -= 1;
                        p = x;
                    }
                }
                if !Self::ok_to_drop(f, p.2, now) {
                    f.codel.dropping = false;
                } else {
                    f.codel.drop_next = control_law(f.codel.drop_next, f.codel.count);
                }
            }
        } else if drop {
            dropped.push((p.0, p.1));
            match Self::pop(f) {
                None => {
                    f.codel.first_above_time = 0;
                    return None;
                }
                Some(x) => {
                    self.pkts -= 1;
                    p = x;
                }
            }
            // RFC 8289: re-evaluate for the new head (updates first_above_time).
            Self::ok_to_drop(f, p.2, now);
            f.codel.dropping = true;
            let delta = f.codel.count.wrapping_sub(f.codel.last_count);
            f.codel.count = if delta > 1 && now.saturating_sub(f.codel.drop_next) < 16 * CODEL_INTERVAL_PS { delta } else { 1 };
            f.codel.last_count = f.codel.count;
            f.codel.drop_next = control_law(now, f.codel.count);
        }
        Some((p.0, p.1))
    }

    /// Whether any flow is on the new or old list (a dequeue would retire the empty ones).
    #[inline]
    pub fn has_flows(&self) -> bool {
        !self.new_flows.is_empty() || !self.old_flows.is_empty()
    }

    /// Visit every queued packet: (id, bytes), bucket by bucket (invariant checks).
    pub fn for_each_queued(&self, mut f: impl FnMut(u32, u32)) {
        self.flows.iter().flat_map(|fl| fl.q.iter()).for_each(|&(id, bytes, _)| f(id, bytes));
    }

    /// The next packet to send (RFC 8290 deficit round robin, new flows first), or None.
    pub fn dequeue(&mut self, now: Time, dropped: &mut Vec<(u32, u32)>) -> Option<u32> {
        loop {
            let (i, from_new) = match self.new_flows.front() {
                Some(&i) => (i as usize, true),
                None => (*self.old_flows.front()? as usize, false),
            };
            if self.flows[i].deficit <= 0 {
                self.flows[i].deficit += FQ_QUANTUM_BYTES;
                if from_new { self.new_flows.pop_front() } else { self.old_flows.pop_front() };
                self.old_flows.push_back(i as u16);
                self.flows[i].status = Status::Old;
                continue;
            }
            match self.codel_dequeue(i, now, dropped) {
                None => {
                    if from_new {
                        self.new_flows.pop_front();
                        self.old_flows.push_back(i as u16);
                        self.flows[i].status = Status::Old;
                    } else {
                        self.old_flows.pop_front();
                        self.flows[i].status = Status::Inactive;
                    }
                }
                Some((id, bytes)) => {
                    self.flows[i].deficit -= bytes as i64;
                    return Some(id);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sparse flow arriving behind a backlogged one is served next (new flows first), and
    /// two backlogged flows alternate one quantum (here one 1500 B packet) each.
    #[test]
    fn new_flow_first_then_round_robin() {
        let mut fq = FqCodel::default();
        let mut d = vec![];
        for k in 0..5 {
            fq.enqueue(k, 1500, 1, 0, &mut d);
        }
        assert_eq!(fq.dequeue(0, &mut d), Some(0));
        fq.enqueue(100, 1500, 2, 0, &mut d);
        fq.enqueue(101, 1500, 2, 0, &mut d);
        let order: Vec<u32> = std::iter::from_fn(|| fq.dequeue(0, &mut d)).collect();
        assert_eq!(order, vec![100, 1, 101, 2, 3, 4]);
        assert!(d.is_empty());
        assert_eq!(fq.pkts, 0);
    }

    /// CoDel (RFC 8289) on one flow whose head sojourn stays above 5 ms: the first dequeue
    /// above target arms first_above_time = now + 100 ms; the first drop is at the first
    /// dequeue at or after it; the next ones follow the control law t + 100 ms / sqrt(count).
    #[test]
    fn codel_drops_follow_the_control_law() {
        let mut fq = FqCodel::default();
        let mut d = vec![];
        let ms = 1_000_000_000u64;
        // 4000 packets, all enqueued at t = 0; dequeue one per ms from t = 10 ms on.
        for k in 0..4000 {
            fq.enqueue(k, 1500, 7, 0, &mut d);
        }
        let mut drop_times = vec![];
        for step in 0..400u64 {
            let now = 10 * ms + step * ms;
            let before = d.len();
            fq.dequeue(now, &mut d);
            if d.len() > before {
                drop_times.push((now / ms, d.len() - before));
            }
        }
        // armed at 10 ms -> first drop at 110 ms; then 110 + 100/1 = 210, 210 + 100/sqrt 2 = 280.7 -> 281,
        // 280.71 + 100/sqrt 3 = 338.4 -> 339, + 100/2 = 388.4 -> 389
        assert_eq!(drop_times, vec![(110, 1), (210, 1), (281, 1), (339, 1), (389, 1)]);
    }

    /// Over 10240 packets, the fattest flow loses packets from its head: up to 64, until half
    /// its bytes are gone.
    #[test]
    fn limit_drops_from_the_fattest_flow() {
        let mut fq = FqCodel::default();
        let mut d = vec![];
        for k in 0..10_000 {
            fq.enqueue(k, 1500, 3, 0, &mut d);
        }
        for k in 0..240 {
            fq.enqueue(20_000 + k, 100, 4, 0, &mut d);
        }
        assert!(d.is_empty());
        fq.enqueue(99_999, 100, 4, 0, &mut d);
        assert_eq!(d.len(), 64);
        assert_eq!(d[0], (0, 1500));
        assert_eq!(fq.pkts, 10_241 - 64);
    }
}

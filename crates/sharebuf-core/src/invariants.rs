//! Engine invariants: conservation of packets and bytes, buffer accounting, empty pools after
//! the drain, no event in the past.
//!
//! Checked
//! - in debug builds (`debug_assertions`): a per-flow ledger (sent, delivered, dropped) kept at
//!   every send, delivery and drop, a cheap check after every event and the full check every
//!   `DEBUG_FULL_CHECK_EVERY` events and at the end of the run;
//! - on demand in any build (`[debug] check_invariants = true`, engine spec
//!   `debug.check_invariants`): the full check at every buffer/queue sample tick and at the end
//!   of the run. Nothing runs per packet in a release build: the ledger hooks compile to nothing.
//!
//! The full check walks every place a packet can be (switch queues, host NIC queues and
//! fq_codel buckets, device FIFOs, links: pending `Arrive` events) and asserts
//! - every allocated packet is in exactly one place, and no freed packet is anywhere;
//! - every TCP packet belongs to an active flow (started, not retired: `transport::flows`);
//! - packets and wire bytes: sent = delivered + dropped + in flight, in total and (with the
//!   debug ledger) per flow; constant-rate flows: their own sent/delivered counters agree;
//! - per switch, queue and priority: occupancy within [0, buffer] and equal to the sum of the
//!   accounted sizes of the packets queued there (packet counts too); per port: the packet
//!   count, per host NIC the byte count;
//! - no event scheduled before the current time.
//!
//! At the end of a run that drained (no event left before the horizon): the packet pool, every
//! queue and every buffer are empty and every flow finished (a flow outstanding with no event
//! left stalled without a timer).
//!
//! A violation panics with `invariant violated: <name>: <where>: <values> (t = .. ps, after ..
//! events)`.

use super::Simulator;
use crate::engine::Kind;
use crate::packet::{flags, Packet};

/// Debug builds: the full (walking) check runs every this many events.
#[cfg(debug_assertions)]
pub const DEBUG_FULL_CHECK_EVERY: u64 = 1024;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Tally {
    pkts: u64,
    bytes: u64,
}

impl Tally {
    #[inline]
    fn add(&mut self, bytes: u32) {
        self.pkts += 1;
        self.bytes += bytes as u64;
    }
}

#[cfg(debug_assertions)]
#[derive(Clone, Copy, Debug, Default)]
struct FlowTally {
    sent: Tally,
    delivered: Tally,
    dropped: Tally,
}

/// Invariant-checking state of one simulator.
pub struct Invariants {
    /// `[debug] check_invariants`: full check at each sample tick and at the end of the run.
    pub on_demand: bool,
    #[cfg(debug_assertions)]
    tcp: Vec<FlowTally>,
    #[cfg(debug_assertions)]
    cbr: Vec<FlowTally>,
    #[cfg(debug_assertions)]
    last_event_ps: u64,
}

impl Invariants {
    pub fn new(on_demand: bool, n_tcp: usize, n_cbr: usize) -> Self {
        let _ = (n_tcp, n_cbr);
        Invariants {
            on_demand,
            #[cfg(debug_assertions)]
            tcp: vec![FlowTally::default(); n_tcp],
            #[cfg(debug_assertions)]
            cbr: vec![FlowTally::default(); n_cbr],
            #[cfg(debug_assertions)]
            last_event_ps: 0,
        }
    }

    #[cfg(debug_assertions)]
    fn flow(&mut self, p: &Packet) -> &mut FlowTally {
        if p.has(flags::CBR) {
            &mut self.cbr[p.flow as usize]
        } else {
            &mut self.tcp[p.flow as usize]
        }
    }

    /// A host put `p` on its NIC (debug ledger only).
    #[inline(always)]
    pub fn on_sent(&mut self, p: &Packet) {
        #[cfg(debug_assertions)]
        self.flow(p).sent.add(p.size_bytes);
        let _ = p;
    }

    /// `p` reached its destination host (debug ledger only).
    #[inline(always)]
    pub fn on_delivered(&mut self, p: &Packet) {
        #[cfg(debug_assertions)]
        self.flow(p).delivered.add(p.size_bytes);
        let _ = p;
    }

    /// `p` (wire size in the pool) was dropped, for any cause (debug ledger only).
    #[inline(always)]
    pub fn on_dropped(&mut self, p: &Packet) {
        #[cfg(debug_assertions)]
        self.flow(p).dropped.add(p.size_bytes);
        let _ = p;
    }
}

macro_rules! violated {
    ($sim:expr, $name:expr, $($arg:tt)*) => {
        panic!("invariant violated: {}: {} (t = {} ps, after {} events)", $name, format_args!($($arg)*), $sim.ev.now, $sim.ev.processed())
    };
}

impl Simulator {
    /// Debug builds: cheap checks after every event, the full check every
    /// [`DEBUG_FULL_CHECK_EVERY`] events.
    #[cfg(debug_assertions)]
    pub(super) fn debug_check_event(&mut self) {
        let now = self.ev.now;
        if now < self.inv.last_event_ps {
            violated!(self, "no event in the past", "an event ran at {now} ps after one at {} ps", self.inv.last_event_ps);
        }
        self.inv.last_event_ps = now;
        if !self.out.is_empty() {
            violated!(self, "every packet a transport emits is sent", "{} packets left in the scratch list after an event", self.out.len());
        }
        for (s, sw) in self.switches.iter().enumerate() {
            if sw.buf.occupied_bytes > sw.buf.total_bytes {
                violated!(self, "switch occupancy within [0, buffer]", "switch {s} ({}): {} B occupied of {} B", self.topo.switch_names[s], sw.buf.occupied_bytes, sw.buf.total_bytes);
            }
        }
        if self.ev.processed() % DEBUG_FULL_CHECK_EVERY == 0 {
            self.check_invariants("periodic debug check");
        }
    }

    /// Sample ticks: the full check when asked for.
    #[inline]
    pub(super) fn check_at_sample(&self) {
        if self.inv.on_demand {
            self.check_invariants("sample tick");
        }
    }

    /// End of the run: the full check, and, if the run drained (no event left: it neither
    /// stopped at the horizon with events pending nor was aborted), empty pools and queues
    /// and finished flows.
    pub(super) fn check_at_end(&self, aborted: bool) {
        if !(cfg!(debug_assertions) || self.inv.on_demand) {
            return;
        }
        self.check_invariants("end of run");
        if aborted || !self.ev.is_empty() {
            return;
        }
        if self.pool.in_use() != 0 {
            violated!(self, "every packet pool empty after the drain", "{} packets still allocated ({} B)", self.pool.in_use(), self.pool.in_use_bytes());
        }
        for (s, sw) in self.switches.iter().enumerate() {
            if sw.buf.occupied_bytes != 0 {
                violated!(self, "every buffer empty after the drain", "switch {s} ({}) holds {} B", self.topo.switch_names[s], sw.buf.occupied_bytes);
            }
        }
        if self.outstanding != 0 {
            violated!(self, "every flow finished or stopped after the drain", "{} flows outstanding with no event left (a flow stalled without a timer)", self.outstanding);
        }
        let d = &self.flows.desc;
        for i in 0..self.flows.len() {
            let (end, received) = (self.flows.end_ps(i), self.flows.received_bytes(i));
            if end == u64::MAX || received < d.size_bytes[i] {
                violated!(self, "every flow finished after the drain", "flow {i} ({} -> {}, {} B): received {received} B, end {:?}", d.src[i], d.dst[i], d.size_bytes[i], (end != u64::MAX).then_some(end));
            }
        }
    }

    /// The full check (see the module documentation). `when` names the occasion in messages.
    pub(super) fn check_invariants(&self, when: &str) {
        let now = self.ev.now;
        let cap = self.pool.capacity();
        // Allocated packets: not on the free list (which must hold each id once).
        let mut free = vec![false; cap];
        for &id in self.pool.free_ids() {
            if id as usize >= cap || free[id as usize] {
                violated!(self, "packet pool free list", "{when}: packet {id} freed twice or out of range (capacity {cap})");
            }
            free[id as usize] = true;
        }
        let mut seen = vec![false; cap];
        let mut located = Tally::default();
        let mut tcp_loc = vec![Tally::default(); self.flows.len()];
        let mut cbr_loc = vec![Tally::default(); self.cbrs.len()];
        let mut locate = |id: u32, place: &dyn Fn() -> String| {
            let i = id as usize;
            if i >= cap || free[i] {
                violated!(self, "every queued or in-flight packet is allocated", "{when}: packet {id} in {} is free or out of range (capacity {cap})", place());
            }
            if seen[i] {
                violated!(self, "every packet in exactly one place", "{when}: packet {id} found again in {}", place());
            }
            seen[i] = true;
            let p = self.pool.get(id);
            located.add(p.size_bytes);
            if !p.has(flags::CBR) && (p.flow as usize) < self.flows.len() && self.flows.slot_of(p.flow as usize).is_none() {
                let state = if self.flows.retired(p.flow as usize) { "retired" } else { "not started" };
                violated!(self, "every TCP packet belongs to an active flow", "{when}: packet {id} in {} belongs to flow {}, which is {state}", place(), p.flow);
            }
            let t = if p.has(flags::CBR) { cbr_loc.get_mut(p.flow as usize) } else { tcp_loc.get_mut(p.flow as usize) };
            match t {
                Some(t) => t.add(p.size_bytes),
                None => violated!(self, "every packet belongs to a flow", "{when}: packet {id} in {} has flow {} (cbr: {})", place(), p.flow, p.has(flags::CBR)),
            }
        };
        // Events: none in the past; Arrive events carry the packets on links.
        let mut past = None;
        self.ev.for_each(|e| {
            if e.time < now && past.is_none() {
                past = Some((e.time, e.kind()));
            }
            if e.kind() == Kind::Arrive {
                locate(e.a, &|| format!("the link to node {}", e.b));
            }
        });
        if let Some((t, k)) = past {
            violated!(self, "no event scheduled in the past", "{when}: a {k:?} event at {t} ps, now {now} ps");
        }
        for (g, port) in self.ports.iter().enumerate() {
            let name = |g: usize| if self.ports[g].is_host() { format!("host {g} NIC") } else { format!("switch {} ({}) port {}", self.ports[g].switch, self.topo.switch_names[self.ports[g].switch as usize], self.ports[g].local) };
            let mut pkts = 0u64;
            let mut bytes = 0u64;
            for (q, ids) in port.queues.iter().enumerate() {
                for &id in ids {
                    locate(id, &|| format!("{} queue {q}", name(g)));
                    pkts += 1;
                    bytes += self.pool.get(id).size_bytes as u64;
                }
            }
            if port.is_host() {
                if let Some(fq) = self.nic_fq.get(g) {
                    let mut n = 0u64;
                    fq.for_each_queued(|id, b| {
                        locate(id, &|| format!("{} fq_codel", name(g)));
                        if b != self.pool.get(id).size_bytes {
                            violated!(self, "host NIC byte count", "{when}: {}: fq_codel holds packet {id} as {b} B, the packet has {} B", name(g), self.pool.get(id).size_bytes);
                        }
                        n += 1;
                        pkts += 1;
                        bytes += b as u64;
                    });
                    if n != fq.pkts as u64 {
                        violated!(self, "host NIC packet count", "{when}: {}: fq_codel counts {} packets, holds {n}", name(g), fq.pkts);
                    }
                }
                if self.nic_direct {
                    // A FIFO NIC without buffer management: packets go on the wire when emitted
                    // (Arrive events, located above) and the NIC keeps (start, bytes) of those whose
                    // transmission had not started at their last emission, cleared lazily.
                    for &(_, b) in &self.nic_pending[g] {
                        pkts += 1;
                        bytes += b as u64;
                    }
                }
                if port.nic_bytes != bytes {
                    violated!(self, "host NIC byte count", "{when}: {}: counted {} B, queued packets sum to {bytes} B", name(g), port.nic_bytes);
                }
            }
            if port.queued_pkts as u64 != pkts {
                violated!(self, "port packet count", "{when}: {}: counted {} packets, holds {pkts}", name(g), port.queued_pkts);
            }
            // The device FIFO's packets are on the wire (Arrive events, located above); it
            // keeps (start, bytes) of those not started when it was last settled.
            // (A packet whose start is now may still be listed: the wake-up at now has not run.)
            let waiting: Vec<u64> = port.dev.iter().map(|&(t, _)| t).filter(|&t| t >= now).collect();
            let after_now = waiting.iter().filter(|&&t| t > now).count();
            if after_now > port.dev_cap as usize {
                violated!(self, "device FIFO within its capacity", "{when}: {}: {after_now} packets wait, capacity {}", name(g), port.dev_cap);
            }
            if port.dev_bytes != port.dev.iter().map(|&(_, b)| b as u64).sum::<u64>() {
                violated!(self, "device FIFO byte count", "{when}: {}: counted {} B", name(g), port.dev_bytes);
            }
            // PFC: packets of paused queues (a host NIC: behind a paused head) wait for the resume.
            let ready = if port.paused_q == 0 {
                port.queued_pkts > 0
            } else if port.is_host() {
                port.queues[0].front().is_some_and(|&id| {
                    let pr = self.pool.get(id).prio;
                    pr >= 8 || port.paused & (1 << pr) == 0
                })
            } else {
                port.queues.iter().enumerate().any(|(q, x)| !x.is_empty() && port.paused_q & (1 << q) == 0)
            };
            if port.dev_cap > 0 && ready && (waiting.len() != port.dev_cap as usize || port.txdone_at != waiting[0]) {
                violated!(self, "packets above a device FIFO wait for its next room", "{when}: {}: {} queued, {} of {} wait in the device, wake-up at {} ps", name(g), port.queued_pkts, waiting.len(), port.dev_cap, port.txdone_at);
            }
        }
        // Buffer accounting per switch, queue and priority.
        for (s, sw) in self.switches.iter().enumerate() {
            let b = &sw.buf;
            let sname = &self.topo.switch_names[s];
            let mut prio = vec![0u64; b.n_queues];
            let mut total = 0u64;
            for (l, &g) in sw.ports.iter().enumerate() {
                for q in 0..b.n_queues {
                    let ids = &self.ports[g as usize].queues[q];
                    let bytes: u64 = ids.iter().map(|&id| self.pool.get(id).size_bytes.saturating_sub(sw.acct_overhead_bytes) as u64).sum();
                    let i = l * b.n_queues + q;
                    if b.queue_bytes[i] > b.total_bytes {
                        violated!(self, "queue occupancy within [0, buffer]", "{when}: switch {s} ({sname}) port {l} queue {q}: {} B of a {} B buffer", b.queue_bytes[i], b.total_bytes);
                    }
                    if b.queue_bytes[i] != bytes || b.queue_pkts[i] as usize != ids.len() {
                        violated!(self, "queue occupancy equals the sum of its packets", "{when}: switch {s} ({sname}) port {l} queue {q}: counted {} B / {} packets, queued packets sum to {bytes} B / {} packets", b.queue_bytes[i], b.queue_pkts[i], ids.len());
                    }
                    prio[q] += bytes;
                    total += bytes;
                }
            }
            for q in 0..b.n_queues {
                if b.prio_bytes[q] != prio[q] || prio[q] > b.total_bytes {
                    violated!(self, "priority occupancy within [0, buffer] and equal to the sum of its packets", "{when}: switch {s} ({sname}) priority {q}: counted {} B, queued packets sum to {} B, buffer {} B", b.prio_bytes[q], prio[q], b.total_bytes);
                }
            }
            if b.occupied_bytes != total || total > b.total_bytes {
                violated!(self, "switch occupancy within [0, buffer] and equal to the sum of its packets", "{when}: switch {s} ({sname}): counted {} B, queued packets sum to {total} B, buffer {} B", b.occupied_bytes, b.total_bytes);
            }
        }
        // Every allocated packet was found somewhere.
        if located.pkts != self.pool.in_use() as u64 {
            let lost: Vec<usize> = (0..cap).filter(|&i| !free[i] && !seen[i]).take(5).collect();
            violated!(self, "every allocated packet is queued or on a link", "{when}: {} packets allocated, {} found; lost ids (first 5): {lost:?}", self.pool.in_use(), located.pkts);
        }
        // Conservation in total.
        let c = &self.counters;
        let dropped = Tally { pkts: c.drop_pkts.iter().sum(), bytes: c.drop_bytes.iter().sum() };
        if c.sent_pkts != c.delivered_pkts + dropped.pkts + located.pkts || c.sent_bytes != c.delivered_bytes + dropped.bytes + located.bytes {
            violated!(
                self,
                "sent = delivered + dropped + in flight (total)",
                "{when}: sent {} pkts / {} B, delivered {} / {}, dropped {} / {}, in flight {} / {}",
                c.sent_pkts, c.sent_bytes, c.delivered_pkts, c.delivered_bytes, dropped.pkts, dropped.bytes, located.pkts, located.bytes
            );
        }
        // Constant-rate flows count their own bytes sent and delivered.
        for (i, cb) in self.cbrs.iter().enumerate() {
            if cb.sent_bytes < cb.delivered_bytes + cbr_loc[i].bytes {
                violated!(self, "sent >= delivered + in flight (constant-rate flow)", "{when}: cbr flow {i} ({} -> {}): sent {} B, delivered {} B, in flight {} B", cb.src, cb.dst, cb.sent_bytes, cb.delivered_bytes, cbr_loc[i].bytes);
            }
        }
        #[cfg(debug_assertions)]
        {
            for (kind, ledger, loc) in [("flow", &self.inv.tcp, &tcp_loc), ("cbr flow", &self.inv.cbr, &cbr_loc)] {
                for (i, (t, l)) in ledger.iter().zip(loc.iter()).enumerate() {
                    if t.sent.pkts != t.delivered.pkts + t.dropped.pkts + l.pkts || t.sent.bytes != t.delivered.bytes + t.dropped.bytes + l.bytes {
                        violated!(
                            self,
                            "sent = delivered + dropped + in flight (per flow)",
                            "{when}: {kind} {i}: sent {} pkts / {} B, delivered {} / {}, dropped {} / {}, in flight {} / {}",
                            t.sent.pkts, t.sent.bytes, t.delivered.pkts, t.delivered.bytes, t.dropped.pkts, t.dropped.bytes, l.pkts, l.bytes
                        );
                    }
                }
            }
            for (i, cb) in self.cbrs.iter().enumerate() {
                let t = &self.inv.cbr[i];
                if t.sent.bytes != cb.sent_bytes || t.delivered.bytes != cb.delivered_bytes {
                    violated!(self, "constant-rate flow counters", "{when}: cbr flow {i}: counts sent {} B / delivered {} B, ledger {} / {}", cb.sent_bytes, cb.delivered_bytes, t.sent.bytes, t.delivered.bytes);
                }
            }
        }
        let _ = (&tcp_loc, &cbr_loc);
    }
}

#[cfg(test)]
mod tests {
    //! Each invariant is shown to hold on a lossy run and to fail, with its name in the
    //! message, when the state it guards is corrupted by hand.
    use super::super::Simulator;
    use crate::config::SimSpec;
    use crate::packet::Packet;

    /// Star of 5 hosts, 2 queues, a 30 KB DT buffer, four 200 KB flows into host 0 (heavy
    /// loss), one constant-rate flow; samples every 5 µs, invariants on.
    fn sim() -> Simulator {
        sim_sampling(5_000_000)
    }

    fn sim_sampling(buffer_sample_ps: u64) -> Simulator {
        let flows: Vec<_> = (1..5).map(|s| serde_json::json!({"src": s, "dst": 0, "size_bytes": 200_000, "start_ps": 0, "priority": s % 2})).collect();
        let v = serde_json::json!({
            "seed": 3, "max_ps": 1_000_000_000_000u64, "arrivals_until_ps": 1_000_000_000u64,
            "topology": {"kind": "star", "hosts": 5, "link_bps": 10_000_000_000u64, "link_delay_ps": 1_000_000},
            "switch": {"buffer_bytes": 30_000, "queues_per_port": 2, "scheduler": "rr", "bm": {"scheme": "dt", "params": {"alpha": 1.0}}},
            "transport": {"cc": "newreno", "mss_bytes": 1448, "header_bytes": 54, "init_cwnd_packets": 10, "min_rto_ps": 1_000_000_000u64,
                          "initial_rto_ps": 1_000_000_000u64, "handshake": true, "delayed_ack_packets": 1, "delayed_ack_timeout_ps": 200_000_000,
                          "ack_priority": 0, "unscheduled_bytes": 12500, "unscheduled_acks": true, "max_rto_ps": 1_000_000_000_000u64},
            "workloads": [{"kind": "flows", "name": "incast", "flows": flows},
                          {"kind": "cbr", "name": "cbr", "flows": [{"src": 2, "dst": 3, "rate_bps": 1_000_000_000u64, "start_ps": 0, "stop_ps": 100_000_000, "priority": 1, "packet_bytes": 1000}]}],
            "output": {"buffer_sample_ps": buffer_sample_ps, "queue_sample_ps": 0},
            "debug": {"check_invariants": true}
        });
        Simulator::new(&serde_json::from_value::<SimSpec>(v).unwrap()).unwrap()
    }

    /// Step the event loop by hand until the switch holds >= 10 KB (the progress callback's
    /// 2^18-event granularity is too coarse), then check that everything holds there.
    fn run_until_queued(s: &mut Simulator) {
        while s.switches[0].buf.occupied_bytes < 10_000 {
            let e = s.ev.pop().expect("the incast fills the buffer");
            match e.kind() {
                crate::engine::Kind::Arrive => s.arrive(e.a, e.b),
                crate::engine::Kind::TxDone => {
                    if s.ports[e.a as usize].txdone_at == e.time {
                        s.ports[e.a as usize].txdone_at = 0;
                        s.wake(e.a as usize);
                    }
                }
                crate::engine::Kind::FlowStart => s.flow_start(e.a),
                crate::engine::Kind::CbrSend => s.cbr_send(e.a),
                crate::engine::Kind::SampleBuffer => s.sample_buffer(),
                k => panic!("unexpected {k:?} before the buffer fills"),
            }
        }
        s.check_invariants("test");
    }

    #[test]
    fn a_lossy_run_keeps_every_invariant() {
        let mut s = sim();
        let o = s.run(&mut |_, _| true);
        let drops: u64 = o.counters.drop_pkts.iter().sum();
        assert!(drops > 20, "the scenario must drop: {drops}");
        assert!(!o.hit_max_time && o.flow_end_ps.iter().all(|&e| e != u64::MAX));
        assert!(o.events_by_kind[8] > 100, "checked at many sample ticks");
    }

    #[test]
    #[should_panic(expected = "invariant violated: queue occupancy equals the sum of its packets: test: switch 0 (switch0) port 0 queue 1")]
    fn queue_bytes_off_by_one_packet() {
        let mut s = sim();
        run_until_queued(&mut s);
        let b = &mut s.switches[0].buf;
        b.queue_bytes[1] += 1502;
        b.queue_pkts[1] += 1;
        b.prio_bytes[1] += 1502;
        b.occupied_bytes += 1502;
        s.check_invariants("test");
    }

    #[test]
    #[should_panic(expected = "invariant violated: priority occupancy within [0, buffer] and equal to the sum of its packets: test: switch 0 (switch0) priority 0")]
    fn priority_bytes_drift() {
        let mut s = sim();
        run_until_queued(&mut s);
        s.switches[0].buf.prio_bytes[0] += 54;
        s.check_invariants("test");
    }

    #[test]
    #[should_panic(expected = "invariant violated: switch occupancy within [0, buffer] and equal to the sum of its packets: test: switch 0 (switch0): counted")]
    fn switch_total_drift() {
        let mut s = sim();
        run_until_queued(&mut s);
        s.switches[0].buf.occupied_bytes += 1;
        s.check_invariants("test");
    }

    #[test]
    #[should_panic(expected = "invariant violated: sent = delivered + dropped + in flight (total): test: sent")]
    fn a_drop_not_counted() {
        let mut s = sim();
        run_until_queued(&mut s);
        s.counters.delivered_bytes += 1;
        s.check_invariants("test");
    }

    #[test]
    #[should_panic(expected = "invariant violated: every allocated packet is queued or on a link: test: ")]
    fn a_packet_lost_from_every_queue() {
        let mut s = sim();
        run_until_queued(&mut s);
        s.pool.alloc(Packet::default());
        s.check_invariants("test");
    }

    #[test]
    #[should_panic(expected = "invariant violated: every packet in exactly one place: test: packet")]
    fn a_packet_in_two_queues() {
        let mut s = sim();
        run_until_queued(&mut s);
        let g = s.switches[0].ports[0] as usize;
        let id = *s.ports[g].queues[1].front().unwrap();
        s.ports[g].queues[0].push_back(id);
        s.check_invariants("test");
    }

    #[test]
    #[should_panic(expected = "invariant violated: every queued or in-flight packet is allocated: test: packet")]
    fn a_freed_packet_still_queued() {
        let mut s = sim();
        run_until_queued(&mut s);
        let g = s.switches[0].ports[0] as usize;
        let id = *s.ports[g].queues[1].front().unwrap();
        s.pool.free(id);
        s.check_invariants("test");
    }

    #[test]
    #[should_panic(expected = "invariant violated: port packet count: test: host 1 NIC")]
    fn a_port_packet_count_drift() {
        let mut s = sim();
        run_until_queued(&mut s);
        s.ports[1].queued_pkts += 1;
        s.check_invariants("test");
    }

    #[test]
    #[should_panic(expected = "invariant violated: no event scheduled in the past: test: a Rto event at 0 ps")]
    fn an_event_in_the_past() {
        let mut s = sim();
        run_until_queued(&mut s);
        // Bypass `at`'s debug assertion (and the calendar's window arithmetic).
        s.ev.push_past_for_test(0, crate::engine::Kind::Rto);
        s.check_invariants("test");
    }

    #[test]
    #[should_panic(expected = "invariant violated: every flow finished or stopped after the drain: 1 flows outstanding")]
    fn a_flow_that_stalls_without_a_timer() {
        // Without samples the event queue runs dry once the flows finish (with samples, a
        // stalled flow keeps them going to the horizon and is reported unfinished).
        let mut s = sim_sampling(0);
        s.outstanding += 1;
        s.run(&mut |_, _| true);
    }

    #[test]
    #[should_panic(expected = "invariant violated: sent >= delivered + in flight (constant-rate flow): test: cbr flow 0 (2 -> 3)")]
    fn a_constant_rate_flow_delivering_more_than_it_sent() {
        let mut s = sim();
        run_until_queued(&mut s);
        s.cbrs[0].delivered_bytes = s.cbrs[0].sent_bytes + 1;
        s.check_invariants("test");
    }

    /// A flow must not retire (its slot freed for another flow) while a packet of it is still
    /// queued or on a link.
    #[test]
    #[should_panic(expected = "invariant violated: every TCP packet belongs to an active flow: test: packet")]
    fn a_packet_of_a_retired_flow() {
        let mut s = sim();
        run_until_queued(&mut s);
        let fi = (0..s.flows.len()).find(|&i| s.flows.get(i).is_some()).expect("an active flow");
        s.flows.retire_now_for_test(fi);
        s.check_invariants("test");
    }

    /// Debug builds keep a per-flow ledger: a delivery booked on the wrong flow is caught
    /// although every total still balances.
    #[cfg(debug_assertions)]
    #[test]
    #[should_panic(expected = "invariant violated: sent = delivered + dropped + in flight (per flow): test: flow 1")]
    fn per_flow_ledger_catches_a_delivery_booked_on_the_wrong_flow() {
        let mut s = sim();
        run_until_queued(&mut s);
        // Totals untouched (the ledger only): flow 1 delivered one ACK more than it sent.
        s.inv.tcp[1].delivered.pkts += 1;
        s.inv.tcp[1].delivered.bytes += 54;
        s.check_invariants("test");
    }
}

//! Output ports and output-queued shared-buffer switches.
//!
//! Every port (host NIC or switch egress) has one FIFO per queue and transmits one packet
//! at a time. A switch has one shared buffer for all its ports, accounted in wire bytes per
//! (port, queue), per priority and in total; its buffer-management scheme decides every
//! admission. A packet holds buffer from enqueue until it starts transmission, or, with a
//! device FIFO (`device_queue_packets`), until it moves into that FIFO below the buffer.

use crate::bm::{BufferManager, BufferState, QueueRef, SchedKind, Scheme};
use crate::engine::Time;
use crate::topology::{EcmpMemo, RouteTable};
use std::collections::VecDeque;

/// Egress scheduler state of one port.
#[derive(Clone, Debug, Default)]
pub struct SchedState {
    /// Next queue to visit (round robin / DRR).
    pub next: usize,
    /// DRR deficit counters in bytes, one per queue.
    pub deficit: Vec<u64>,
    /// DRR: the queue at `next` already received its quantum for this visit.
    pub credited: bool,
}

impl SchedState {
    /// Pick the queue to serve next under scheduler `kind` (`pick = PickKind::of(kind,
    /// queues.len())`, which the switch keeps). `head_bytes(id)` gives the size of packet `id`.
    #[inline]
    pub fn pick(&mut self, queues: &[VecDeque<u32>], pick: PickKind, kind: &SchedKind, quantum: u64, head_bytes: impl Fn(u32) -> u64) -> Option<usize> {
        self.pick_unpaused(queues, pick, kind, quantum, head_bytes, 0)
    }

    /// `pick`, skipping the queues whose bit is set in `paused_q` (PFC): a paused queue keeps
    /// its round-robin turn and DRR deficit for when it resumes.
    #[inline]
    pub fn pick_unpaused(&mut self, queues: &[VecDeque<u32>], pick: PickKind, kind: &SchedKind, quantum: u64, head_bytes: impl Fn(u32) -> u64, paused_q: u8) -> Option<usize> {
        debug_assert_eq!(pick, PickKind::of(kind, queues.len()));
        if paused_q != 0 {
            return self.pick_paused(queues, pick, kind, quantum, head_bytes, paused_q);
        }
        let n = queues.len();
        match pick {
            // One queue, or strict priority: the first non-empty queue.
            PickKind::Stateless => queues.iter().position(|q| !q.is_empty()),
            PickKind::RoundRobin => {
                let mut q = self.next;
                for _ in 0..n {
                    if !queues[q].is_empty() {
                        self.next = if q + 1 == n { 0 } else { q + 1 };
                        return Some(q);
                    }
                    q = if q + 1 == n { 0 } else { q + 1 };
                }
                None
            }
            PickKind::Drr => {
                let SchedKind::Drr(w) = kind else { unreachable!("PickKind::Drr comes from SchedKind::Drr") };
                self.pick_drr(queues, w, quantum, head_bytes, 0)
            }
            PickKind::RoundRobinStrict0 => self.pick_paused(queues, pick, kind, quantum, head_bytes, 0),
        }
    }

    /// `pick_unpaused` with some queue paused (out of line: only with PFC).
    #[inline(never)]
    fn pick_paused(&mut self, queues: &[VecDeque<u32>], pick: PickKind, kind: &SchedKind, quantum: u64, head_bytes: impl Fn(u32) -> u64, paused_q: u8) -> Option<usize> {
        let n = queues.len();
        let ready = |q: usize| !queues[q].is_empty() && paused_q & (1 << q) == 0;
        match pick {
            PickKind::Stateless => (0..n).find(|&q| ready(q)),
            // rr_strict0: queue 0 strictly first (the round robin's turn does not move), else round robin
            PickKind::RoundRobinStrict0 if ready(0) => Some(0),
            PickKind::RoundRobin | PickKind::RoundRobinStrict0 => {
                let mut q = self.next;
                for _ in 0..n {
                    if ready(q) {
                        self.next = if q + 1 == n { 0 } else { q + 1 };
                        return Some(q);
                    }
                    q = if q + 1 == n { 0 } else { q + 1 };
                }
                None
            }
            PickKind::Drr => {
                let SchedKind::Drr(w) = kind else { unreachable!("PickKind::Drr comes from SchedKind::Drr") };
                self.pick_drr(queues, w, quantum, head_bytes, paused_q)
            }
        }
    }

    /// `pick` for deficit round robin (out of line: the common schedulers stay small enough
    /// to inline into the dequeue path), passing over the queues paused in `paused_q` (PFC),
    /// whose deficit is kept for when they resume.
    #[inline(never)]
    fn pick_drr(&mut self, queues: &[VecDeque<u32>], w: &[u32], quantum: u64, head_bytes: impl Fn(u32) -> u64, paused_q: u8) -> Option<usize> {
        let n = queues.len();
        if !(0..n).any(|q| !queues[q].is_empty() && paused_q & (1 << q) == 0) {
            return None;
        }
        let s = self;
        if s.deficit.len() != n {
            s.deficit = vec![0; n];
        }
        loop {
            let q = s.next;
            if paused_q & (1 << q) != 0 && !queues[q].is_empty() {
                // Paused with a backlog: pass over it, its deficit kept.
                s.credited = false;
                s.next = (q + 1) % n;
                continue;
            }
            if queues[q].is_empty() {
                s.deficit[q] = 0;
                s.credited = false;
                s.next = (q + 1) % n;
                continue;
            }
            if !s.credited {
                s.deficit[q] += quantum * w[q] as u64;
                s.credited = true;
            }
            let h = head_bytes(*queues[q].front().unwrap());
            if h <= s.deficit[q] {
                s.deficit[q] -= h;
                if queues[q].len() == 1 {
                    // The queue empties with this packet: it leaves the active round.
                    s.deficit[q] = 0;
                    s.credited = false;
                    s.next = (q + 1) % n;
                }
                return Some(q);
            }
            s.credited = false;
            s.next = (q + 1) % n;
        }
    }
}

/// The queues a port's scheduler visits and finds empty when it looks for a packet now, in
/// visiting order, for ABM's empty-poll credit (`BufferManager::empty_poll_credit_bytes`): round
/// robin from `next` on, strict priority (or one queue) from queue 0, up to the first non-empty
/// queue, or every queue when all are empty; none for DRR and `rr_strict0`. `busy_too` counts as
/// non-empty (a packet about to enter it). `f` is called with each.
#[inline]
pub fn empty_visits(queues: &[VecDeque<u32>], pick: PickKind, next: usize, busy_too: Option<usize>, mut f: impl FnMut(usize)) {
    let n = queues.len();
    let busy = |q: usize| busy_too == Some(q) || !queues[q].is_empty();
    match pick {
        PickKind::RoundRobin => {
            let mut q = next;
            for _ in 0..n {
                if busy(q) {
                    return;
                }
                f(q);
                q = if q + 1 == n { 0 } else { q + 1 };
            }
        }
        PickKind::Stateless => {
            for q in 0..n {
                if busy(q) {
                    return;
                }
                f(q);
            }
        }
        PickKind::Drr | PickKind::RoundRobinStrict0 => {}
    }
}

/// A switch's egress scheduler as a plain code for the per-packet idle-port test (matching on
/// `SchedKind` means decoding its discriminant from the DRR weights' vector).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PickKind {
    /// One queue per port, or strict priority: a lone queued packet is picked with no state change.
    Stateless,
    /// Round robin: picking the lone non-empty queue moves `next` past it.
    RoundRobin,
    /// Deficit round robin: the deficit counters decide.
    Drr,
    /// Queue 0 first when it holds a packet (no state change), else round robin.
    RoundRobinStrict0,
}

impl PickKind {
    pub fn of(kind: &SchedKind, n_queues: usize) -> PickKind {
        match kind {
            _ if n_queues == 1 => PickKind::Stateless,
            SchedKind::StrictPriority => PickKind::Stateless,
            SchedKind::RoundRobin => PickKind::RoundRobin,
            SchedKind::Drr(_) => PickKind::Drr,
            SchedKind::RoundRobinStrict0 => PickKind::RoundRobinStrict0,
        }
    }
}

pub struct Port {
    pub peer: u32,
    pub rate_bps: u64,
    pub delay_ps: u64,
    /// Switch index owning this port, or `u32::MAX` for a host NIC.
    pub switch: u32,
    /// Index of this port on its switch.
    pub local: u16,
    pub queues: Vec<VecDeque<u32>>,
    /// The port is serializing until this time.
    pub busy_until: u64,
    /// Time of this port's live `TxDone` event (0: none queued).
    pub txdone_at: u64,
    /// Bytes this port has transmitted (INT's txBytes).
    pub tx_bytes: u64,
    /// Bytes (as the buffer counts them) that left this switch port's queues for the device
    /// FIFO or the wire (INT's txBytes with `int_tx_bytes = "dequeued"`).
    pub deq_bytes: u64,
    /// Bytes queued at a host NIC (switch ports use the switch's BufferState).
    pub nic_bytes: u64,
    /// Packets queued over all queues of this port (above the device FIFO).
    pub queued_pkts: u32,
    /// Device FIFO below the buffer manager, outside the shared buffer (ns-3's
    /// PointToPointNetDevice queue): packets waiting behind the one on the wire. It is a FIFO
    /// with no buffer manager, so a packet's transmission start is fixed when it enters
    /// (the port finishes what is ahead of it then): it goes on the wire at once (its arrival
    /// at the peer is scheduled) and the FIFO keeps only (transmission start, wire bytes) of
    /// the packets whose start had not passed when it was last settled (`dev_settle`).
    pub dev: VecDeque<(Time, u32)>,
    /// Wire bytes in `dev`.
    pub dev_bytes: u64,
    /// Capacity of the device FIFO in packets waiting behind the wire (0: no device FIFO).
    pub dev_cap: u32,
    /// Start and wire bytes of the device FIFO's latest packet to start (for `tx_bytes_before`).
    pub wire_start: Time,
    pub wire_bytes: u32,
    /// Serialization time per byte when the rate divides 8e12 exactly (0: compute).
    pub ps_per_byte: u64,
    pub sched: SchedState,
    /// PFC: bit p set while priority p is paused by the peer (docs/lossless.md §2).
    pub paused: u8,
    /// The queues those priorities map to (bit q: queue q may not be picked); for a host NIC,
    /// equal to `paused` (its one FIFO stops when its head packet's priority is paused).
    pub paused_q: u8,
}

impl Port {
    pub fn is_host(&self) -> bool {
        self.switch == u32::MAX
    }

    /// The device FIFO forgets the packets whose transmission has started by `now`.
    #[inline]
    pub fn dev_settle(&mut self, now: Time) {
        while let Some(&(start, bytes)) = self.dev.front() {
            if start > now {
                break;
            }
            self.dev.pop_front();
            self.dev_bytes -= bytes as u64;
            self.wire_start = start;
            self.wire_bytes = bytes;
        }
    }

    /// Whether this port's device FIFO has room now (settled first). Out of line: the switch's
    /// per-packet path calls it only for ports that have a device FIFO.
    #[inline(never)]
    pub fn dev_has_room(&mut self, now: Time) -> bool {
        self.dev_settle(now);
        self.dev.len() < self.dev_cap as usize
    }

    /// INT's txBytes at `now`: the bytes whose transmission started before `now` (the device
    /// FIFO's packets are counted in `tx_bytes` when they enter it; `dev_settle(now)` first).
    #[inline(always)]
    pub fn tx_bytes_before(&self, now: Time) -> u64 {
        self.tx_bytes - self.dev_bytes - if self.wire_start == now { self.wire_bytes as u64 } else { 0 }
    }

    /// INT's txBytes for a packet this port stamps now: the bytes dequeued from its queues
    /// before it (`int_tx_bytes = "dequeued"`) or those whose transmission started before now.
    #[inline(always)]
    pub fn int_tx_bytes(&self, dequeued: bool, now: Time) -> u64 {
        if dequeued { self.deq_bytes } else { self.tx_bytes_before(now) }
    }

    /// Serialization time of `bytes` on this port.
    #[inline]
    pub fn tx_time_ps(&self, bytes: u64) -> u64 {
        if self.ps_per_byte != 0 {
            bytes * self.ps_per_byte
        } else {
            crate::engine::tx_time_ps(bytes, self.rate_bps)
        }
    }

    #[inline]
    pub fn push(&mut self, queue: usize, id: u32) {
        self.queues[queue].push_back(id);
        self.queued_pkts += 1;
    }

    /// `push` without the bounds check, for the switch's per-packet path.
    ///
    /// # Safety
    /// `queue < self.queues.len()`.
    #[inline(always)]
    pub(crate) unsafe fn push_unchecked(&mut self, queue: usize, id: u32) {
        debug_assert!(queue < self.queues.len());
        self.queues.get_unchecked_mut(queue).push_back(id);
        self.queued_pkts += 1;
    }
}

/// Why a packet was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(usize)]
pub enum DropCause {
    /// Refused by the buffer-management scheme at enqueue.
    BmThreshold = 0,
    /// The shared pool had no room.
    BufferFull = 1,
    /// Dropped by the scheme at dequeue (e.g. sojourn time too long).
    BmDequeue = 2,
    /// Pushed out of a queue to make room.
    PushOut = 3,
    /// Dropped by a host NIC's queue discipline (fq_codel: CoDel or its packet limit).
    NicQdisc = 4,
}

pub const DROP_CAUSES: [&str; 5] = ["bm_threshold", "buffer_full", "bm_dequeue", "pushout", "nic_qdisc"];

pub struct Switch {
    pub node: u32,
    /// ECMP hash salt (`Topology::ecmp_salt`).
    pub ecmp_salt: u32,
    /// Bytes of a packet's wire size not counted in the buffer (`buffer_accounting`).
    pub acct_overhead_bytes: u32,
    /// INT's txBytes are the bytes dequeued from the port's queues (`int_tx_bytes =
    /// "dequeued"`, `Port::deq_bytes`) instead of those whose transmission started.
    pub int_dequeued: bool,
    /// ACKs are stamped with INT too, after the records they echo (`int_stamp = "all"`).
    pub int_acks: bool,
    /// Global ids of this switch's ports, in local order. Crate-private, like `buf`: the
    /// per-packet path indexes `Simulator::ports` with these ids and the buffer's per-queue
    /// vectors with checked-once queue refs, without bounds checks.
    pub(crate) ports: Vec<u32>,
    /// Crate-private: checked once ([`RouteTable::check`]) when the switch is built, then
    /// read without bounds checks per packet.
    pub(crate) routes: RouteTable,
    /// Recent ECMP choices of `routes` (see [`EcmpMemo`]).
    pub(crate) ecmp_memo: EcmpMemo,
    pub(crate) buf: BufferState,
    /// The scheme: a built-in one by value (match dispatch), or `Scheme::Dyn`.
    pub(crate) bm: Scheme,
    /// `bm.uses_queue_hooks()`, read once.
    pub(crate) bm_hooks: bool,
    /// `bm.classifies()`, read once.
    pub(crate) bm_classify: bool,
    /// `bm.empty_poll_credit_bytes()`, read once (0: no credit).
    pub(crate) poll_credit_bytes: u64,
    /// ECN marking threshold per queue (u64::MAX: off); `n_queues` entries (crate-private:
    /// read without bounds checks with a checked queue index).
    pub(crate) ecn_k_bytes: Vec<u64>,
    pub drr_quantum_bytes: u64,
    pub peak_occupancy_bytes: u64,
    /// `PickKind::of(&buf.sched, buf.n_queues)`, read once.
    pub pick_kind: PickKind,
    /// Lossless priorities and PFC (None: all lossy, today's behaviour).
    pub pfc: Option<Box<crate::pfc::PfcSwitch>>,
    /// ECN marking at dequeue on a RED ramp (`[switch] red_*`; None: off).
    pub red: Option<Box<RedMarker>>,
    /// `spine_buffer = "leaf_aliased"` (a spine of a leaf-spine): per local port, the leaf switch
    /// whose pool admits and also counts its packets, at the leaf's port of the same local index
    /// (empty: every port uses this switch's own pool alone). The switch's own accounting keeps
    /// running for these ports (ECN, INT and occupancy read the port's own queue).
    pub(crate) alias_leaf: Vec<u32>,
}

/// ECN marking at dequeue, as the reference's switch (docs/lossless.md §3, `SwitchMmu::ShouldSendCN`
/// called from `SwitchNotifyDequeue`): on the packet's egress queue bytes just after it left,
/// `q > kmax` marks, `kmin < q ≤ kmax` marks with probability `pmax · (q − kmin)/(kmax − kmin)`
/// (one uniform draw from the switch's own stream), else no mark. Only ECN-capable packets are
/// marked (the reference marks every non-control packet; its RDMA packets are all ECN-capable).
pub struct RedMarker {
    pub kmin_bytes: u64,
    pub kmax_bytes: u64,
    pub pmax: f64,
    pub rng: rand_xoshiro::Xoshiro256PlusPlus,
}

impl RedMarker {
    /// Whether a packet leaving a queue of `q` bytes (after it left) is marked.
    #[inline]
    pub fn mark(&mut self, q: u64) -> bool {
        use rand::Rng;
        if q > self.kmax_bytes {
            return true;
        }
        if q > self.kmin_bytes {
            let p = self.pmax * (q - self.kmin_bytes) as f64 / (self.kmax_bytes - self.kmin_bytes) as f64;
            return self.rng.gen::<f64>() < p;
        }
        false
    }
}

/// Wire bytes not counted by `buffer_accounting = "ip_payload"`: ns-3's point-to-point
/// header (2 B) and the IPv4 header (20 B); ns-3 queue discs see the IP packet minus its header.
pub const IP_PAYLOAD_OVERHEAD_BYTES: u32 = 22;

impl Switch {
    /// Charge an admitted packet of `size` bytes to queue `q`: the pool's accounting, the
    /// switch's peak occupancy and the scheme's enqueue hook (lossy and lossless admission alike).
    #[inline]
    pub(crate) fn charge_enqueue(&mut self, q: QueueRef, pkt: &crate::packet::Packet, size: u64, now: Time) {
        self.buf.on_enqueue(q, size);
        if self.buf.occupied_bytes > self.peak_occupancy_bytes {
            self.peak_occupancy_bytes = self.buf.occupied_bytes;
        }
        if self.bm_hooks {
            self.bm.on_enqueue(&self.buf, q, pkt, now);
        }
    }

    /// Replace this switch's buffer-management scheme (tests, embedding).
    pub fn set_bm(&mut self, bm: Box<dyn BufferManager>) {
        self.bm_hooks = bm.uses_queue_hooks();
        self.bm_classify = bm.classifies();
        self.poll_credit_bytes = bm.empty_poll_credit_bytes();
        if let Some(pf) = self.pfc.as_mut() {
            pf.scheme_ingress = bm.decides_ingress();
        }
        self.bm = Scheme::Dyn(bm);
    }

    pub fn bm(&self) -> &dyn BufferManager {
        &self.bm
    }

    #[inline]
    pub fn queue_of(&self, prio: u8) -> usize {
        (prio as usize).min(self.buf.n_queues - 1)
    }

    #[inline]
    pub fn qref(&self, port: usize, prio: u8) -> QueueRef {
        QueueRef { port, queue: self.queue_of(prio) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn port(nq: usize) -> Port {
        Port { peer: 0, rate_bps: 1, delay_ps: 0, switch: 0, local: 0, queues: vec![VecDeque::new(); nq], busy_until: 0, txdone_at: 0, tx_bytes: 0, deq_bytes: 0, nic_bytes: 0, queued_pkts: 0, dev: VecDeque::new(), dev_bytes: 0, dev_cap: 0, wire_start: 0, wire_bytes: 0, ps_per_byte: 0, sched: SchedState::default(), paused: 0, paused_q: 0 }
    }

    /// ABM's empty-poll credit visits, by hand: round robin from the turn to the first non-empty
    /// queue (wrapping), every queue when all are empty, up to a queue about to take a packet;
    /// strict priority from queue 0; none under DRR.
    #[test]
    fn empty_visits_follow_the_scan() {
        let visits = |p: &Port, pick: PickKind, next: usize, busy: Option<usize>| {
            let mut v = vec![];
            empty_visits(&p.queues, pick, next, busy, |q| v.push(q));
            v
        };
        let mut p = port(8);
        assert_eq!(visits(&p, PickKind::RoundRobin, 5, None), vec![5, 6, 7, 0, 1, 2, 3, 4], "all empty");
        assert_eq!(visits(&p, PickKind::RoundRobin, 5, Some(6)), vec![5], "queue 6 takes a packet");
        assert_eq!(visits(&p, PickKind::RoundRobin, 6, Some(6)), Vec::<usize>::new());
        p.queues[2].push_back(1);
        assert_eq!(visits(&p, PickKind::RoundRobin, 5, None), vec![5, 6, 7, 0, 1]);
        assert_eq!(visits(&p, PickKind::RoundRobin, 3, None), vec![3, 4, 5, 6, 7, 0, 1]);
        assert_eq!(visits(&p, PickKind::Stateless, 5, None), vec![0, 1]);
        assert_eq!(visits(&p, PickKind::Drr, 5, None), Vec::<usize>::new());
        assert_eq!(visits(&p, PickKind::RoundRobinStrict0, 5, None), Vec::<usize>::new());
    }

    #[test]
    fn round_robin_alternates_packets() {
        let mut p = port(3);
        for i in 0..3 {
            p.queues[0].push_back(i);
            p.queues[2].push_back(10 + i);
        }
        let mut order = vec![];
        while let Some(q) = p.sched.pick(&p.queues, PickKind::RoundRobin, &SchedKind::RoundRobin, 0, |_| 1) {
            order.push(p.queues[q].pop_front().unwrap());
        }
        assert_eq!(order, vec![0, 10, 1, 11, 2, 12]);
    }

    /// PFC: a paused queue is skipped by every scheduler, keeps its backlog, and is served
    /// again once resumed.
    #[test]
    fn paused_queues_are_skipped() {
        for (pk, kind) in [(PickKind::Stateless, SchedKind::StrictPriority), (PickKind::RoundRobin, SchedKind::RoundRobin), (PickKind::Drr, SchedKind::Drr(vec![1, 1]))] {
            let mut p = port(2);
            p.queues[0].push_back(1);
            p.queues[1].push_back(2);
            p.queues[1].push_back(3);
            let q = p.sched.pick_unpaused(&p.queues, pk, &kind, 1500, |_| 100, 0b10).unwrap();
            assert_eq!(q, 0, "{pk:?}");
            p.queues[0].pop_front();
            assert_eq!(p.sched.pick_unpaused(&p.queues, pk, &kind, 1500, |_| 100, 0b10), None, "{pk:?}: only the paused queue has packets");
            assert_eq!(p.sched.pick_unpaused(&p.queues, pk, &kind, 1500, |_| 100, 0), Some(1), "{pk:?}: resumed");
        }
    }

    /// `rr_strict0` (the RDMA reference's switch ports): queue 0 whenever it holds a packet,
    /// without moving the round robin; the other queues alternate packet by packet, also when
    /// queue 0 is paused.
    #[test]
    fn round_robin_strict0_serves_queue_zero_first_and_alternates_the_rest() {
        let (pk, kind) = (PickKind::RoundRobinStrict0, SchedKind::RoundRobinStrict0);
        assert_eq!(PickKind::of(&kind, 3), pk);
        let mut p = port(3);
        for i in 0..3 {
            p.queues[1].push_back(10 + i);
            p.queues[2].push_back(20 + i);
        }
        let mut order = vec![];
        for step in 0..6 {
            if step == 1 || step == 2 {
                p.queues[0].push_back(step); // two packets of queue 0 arrive after the first pick
            }
            let q = p.sched.pick(&p.queues, pk, &kind, 0, |_| 1).unwrap();
            order.push(p.queues[q].pop_front().unwrap());
        }
        assert_eq!(order, vec![10, 1, 2, 20, 11, 21]);
        p.queues[0].push_back(7);
        assert_eq!(p.sched.pick_unpaused(&p.queues, pk, &kind, 0, |_| 1, 0b001), Some(1), "queue 0 paused: the round robin goes on");
        assert_eq!(p.sched.pick_unpaused(&p.queues, pk, &kind, 0, |_| 1, 0), Some(0));
    }

    #[test]
    fn strict_priority_serves_queue_zero_first() {
        let mut p = port(2);
        p.queues[1].push_back(5);
        p.queues[0].push_back(1);
        assert_eq!(p.sched.pick(&p.queues, PickKind::Stateless, &SchedKind::StrictPriority, 0, |_| 1), Some(0));
    }

    #[test]
    fn drr_shares_bytes_by_weight() {
        let mut p = port(2);
        // Queue 0: 1500 B packets, queue 1: 500 B packets, weights 1:2.
        for i in 0..300 {
            p.queues[0].push_back(i);
            p.queues[1].push_back(1000 + i);
        }
        let sizes = |id: u32| if id < 1000 { 1500 } else { 500 };
        let (mut b0, mut b1) = (0u64, 0u64);
        for _ in 0..200 {
            let q = p.sched.pick(&p.queues, PickKind::Drr, &SchedKind::Drr(vec![1, 2]), 1500, sizes).unwrap();
            p.queues[q].pop_front();
            if q == 0 { b0 += 1500 } else { b1 += 500 }
        }
        let ratio = b1 as f64 / b0 as f64;
        assert!((ratio - 2.0).abs() < 0.1, "DRR byte ratio {ratio}");
    }
}

#[cfg(test)]
mod red_tests {
    use super::RedMarker;
    use rand::SeedableRng;

    /// The ramp by hand (kmin 10 000 B, kmax 20 000 B, pmax 0.2): no mark at or below kmin, always
    /// above kmax, and in between with probability 0.2·(q − kmin)/(kmax − kmin): 0.1 at 15 000 B,
    /// 0.2 at 20 000 B (kmax itself is on the ramp). 100 000 draws each: within 4σ (σ ≤ 0.0013).
    #[test]
    fn red_ramp_marks_with_the_hand_probabilities() {
        let mut r = RedMarker { kmin_bytes: 10_000, kmax_bytes: 20_000, pmax: 0.2, rng: rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(7) };
        let n = 100_000;
        let frac = |r: &mut RedMarker, q: u64| (0..n).filter(|_| r.mark(q)).count() as f64 / n as f64;
        assert_eq!(frac(&mut r, 0), 0.0);
        assert_eq!(frac(&mut r, 10_000), 0.0);
        assert_eq!(frac(&mut r, 20_001), 1.0);
        for (q, p) in [(15_000u64, 0.1f64), (20_000, 0.2), (12_500, 0.05)] {
            let f = frac(&mut r, q);
            let sigma = (p * (1.0 - p) / n as f64).sqrt();
            assert!((f - p).abs() < 4.0 * sigma, "q = {q}: {f} vs {p}");
        }
    }
}

//! Buffer management: the interface every scheme implements, the switch buffer state
//! it reads, and the registry of schemes by name.
//!
//! A scheme decides at enqueue (admit, drop, or push out a queued packet), may drop at
//! dequeue (CBM/BSHARE drop stale packets), and may run a periodic tick (FBA, ABM's
//! snapshots, IB's AFD window). It sees the whole [`BufferState`] of its switch.

pub mod abm;
pub mod abm_approx;
pub mod bshare;
pub mod cbm;
pub mod cp;
pub mod credence;
pub mod cs;
pub mod dt;
pub mod fab;
pub mod fb;
pub mod fb_pisa;
pub mod fba;
pub mod ib;
pub mod lqd;
pub mod reverie;

use crate::engine::Time;
use crate::packet::Packet;
pub use crate::config::Params;
use serde_json::{Map, Value};

/// Scheduler kinds, needed by schemes that weigh a queue by its share of the port.
#[derive(Clone, Debug, PartialEq)]
pub enum SchedKind {
    /// Strict priority, queue 0 served first.
    StrictPriority,
    /// Packet-by-packet round robin over non-empty queues.
    RoundRobin,
    /// Deficit round robin with per-queue weights.
    Drr(Vec<u32>),
    /// Queue 0 strictly first, packet-by-packet round robin over the other non-empty queues
    /// (the RDMA reference's switch ports, `BEgressQueue::DoDequeueRR`).
    RoundRobinStrict0,
}

/// Byte accounting of one switch's shared buffer. Queues are indexed by (local port,
/// queue); the queue index is the packet's priority class.
#[derive(Clone, Debug)]
pub struct BufferState {
    pub total_bytes: u64,
    pub occupied_bytes: u64,
    pub n_ports: usize,
    pub n_queues: usize,
    /// Bytes per (port, queue), index `port * n_queues + queue`.
    pub queue_bytes: Vec<u64>,
    /// Packets per (port, queue).
    pub queue_pkts: Vec<u32>,
    /// Bytes per priority (queue index) summed over ports.
    pub prio_bytes: Vec<u64>,
    /// Cumulative bytes dequeued per (port, queue): drain rates are deltas over an interval.
    pub deq_bytes: Vec<u64>,
    pub port_rate_bps: Vec<u64>,
    pub sched: SchedKind,
    /// Bytes of the pool a lossy packet may not take: the PFC headroom not in use (docs/lossless.md
    /// §1; 0 without lossless priorities). The switch keeps it; `remaining_bytes() −
    /// reserved_bytes` is the free shared pool S − S_used.
    pub reserved_bytes: u64,
    /// Bytes of every packet on the wire that the buffer does not count
    /// (`switch.buffer_accounting`: 0 for `wire`, 22 for `ip_payload`): a packet's wire bytes
    /// are its accounted bytes plus this. The port sends, and its scheduler charges, wire bytes.
    pub acct_overhead_bytes: u64,
}

/// A queue of a switch: local port index and queue index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueRef {
    pub port: usize,
    pub queue: usize,
}

impl BufferState {
    pub fn new(total_bytes: u64, port_rate_bps: Vec<u64>, n_queues: usize, sched: SchedKind) -> Self {
        let n_ports = port_rate_bps.len();
        BufferState {
            total_bytes,
            occupied_bytes: 0,
            n_ports,
            n_queues,
            queue_bytes: vec![0; n_ports * n_queues],
            queue_pkts: vec![0; n_ports * n_queues],
            prio_bytes: vec![0; n_queues],
            deq_bytes: vec![0; n_ports * n_queues],
            port_rate_bps,
            sched,
            reserved_bytes: 0,
            acct_overhead_bytes: 0,
        }
    }

    #[inline]
    pub fn idx(&self, q: QueueRef) -> usize {
        q.port * self.n_queues + q.queue
    }

    /// Free bytes of the pool, B − Q(t).
    #[inline]
    pub fn remaining_bytes(&self) -> u64 {
        self.total_bytes - self.occupied_bytes
    }

    #[inline]
    pub fn qbytes(&self, q: QueueRef) -> u64 {
        self.queue_bytes[self.idx(q)]
    }

    #[inline]
    pub fn port_bytes(&self, port: usize) -> u64 {
        self.queue_bytes[port * self.n_queues..(port + 1) * self.n_queues].iter().sum()
    }

    /// Queues of priority `prio` (over all ports) holding at least `min_bytes`: the "hard"
    /// congested-queue count (e.g. ABM's paper definition with `min_bytes` = 0.9·T).
    pub fn congested_queues(&self, prio: usize, min_bytes: u64) -> usize {
        (0..self.n_ports).filter(|&p| self.queue_bytes[p * self.n_queues + prio] >= min_bytes.max(1)).count()
    }

    /// ABM code's soft count: Σ over ports of min(1, q / sat_bytes) for priority `prio`.
    pub fn soft_congested_queues(&self, prio: usize, sat_bytes: u64) -> f64 {
        (0..self.n_ports).map(|p| (self.queue_bytes[p * self.n_queues + prio] as f64 / sat_bytes as f64).min(1.0)).sum()
    }

    /// The queue's share of its port under the scheduler, given the current backlog
    /// (γ in FB Eq. 3). A queue counts as backlogged if it holds bytes; the queue itself
    /// always counts, so an empty queue gets the share it would have with one packet.
    pub fn sched_share(&self, q: QueueRef) -> f64 {
        let base = q.port * self.n_queues;
        self.sched_share_among(q, |i| self.queue_bytes[base + i] > 0)
    }

    /// The queue's share of its port when only the queues `busy(queue index)` of its port (and
    /// the queue itself) compete: ABM §3.3 and FB §5.1 count *congested* queues of the port, so
    /// a queue holding a few ACKs does not halve its neighbours' share.
    #[inline]
    pub fn sched_share_among(&self, q: QueueRef, busy: impl Fn(usize) -> bool) -> f64 {
        let backlogged = |i: usize| i == q.queue || busy(i);
        match &self.sched {
            SchedKind::StrictPriority => {
                if (0..q.queue).any(|i| busy(i)) {
                    0.0
                } else {
                    1.0
                }
            }
            SchedKind::RoundRobin => 1.0 / (0..self.n_queues).filter(|&i| backlogged(i)).count() as f64,
            SchedKind::RoundRobinStrict0 => {
                if q.queue == 0 {
                    1.0
                } else if busy(0) {
                    0.0
                } else {
                    1.0 / (1..self.n_queues).filter(|&i| backlogged(i)).count() as f64
                }
            }
            SchedKind::Drr(w) => {
                let tot: u64 = (0..self.n_queues).filter(|&i| backlogged(i)).map(|i| w[i] as u64).sum();
                w[q.queue] as f64 / tot as f64
            }
        }
    }

    // The per-packet accounting (and `qbytes_of`) indexes its vectors without bounds checks. SAFETY: the
    // switch passes only queues it has already indexed its port's queues with (an arriving
    // packet's egress port from its route table, its queue clamped to `n_queues - 1`; a
    // push-out victim after `ports[..].queues[victim.queue]`), so `port < n_ports` and
    // `queue < n_queues`: `idx(q)` is below the per-queue vectors' length `n_ports * n_queues`
    // and `q.queue` below `prio_bytes`' length. Checked in debug builds.
    /// `qbytes` for the per-packet path, without a bounds check (same contract as below).
    #[inline(always)]
    pub(crate) fn qbytes_of(&self, q: QueueRef) -> u64 {
        debug_assert!(q.port < self.n_ports && q.queue < self.n_queues);
        unsafe { *self.queue_bytes.get_unchecked(self.idx(q)) }
    }

    /// A packet entered queue `q` and left it at once (an idle port, no scheme hook watching):
    /// the queue's bytes and packets and the occupancy end where they were; only its drain
    /// counter moves.
    #[inline(always)]
    pub(crate) fn on_pass_through(&mut self, q: QueueRef, bytes: u64) {
        debug_assert!(q.port < self.n_ports && q.queue < self.n_queues);
        let i = self.idx(q);
        unsafe { *self.deq_bytes.get_unchecked_mut(i) += bytes };
    }

    #[inline(always)]
    pub(crate) fn on_enqueue(&mut self, q: QueueRef, bytes: u64) {
        debug_assert!(q.port < self.n_ports && q.queue < self.n_queues);
        let i = self.idx(q);
        unsafe {
            *self.queue_bytes.get_unchecked_mut(i) += bytes;
            *self.queue_pkts.get_unchecked_mut(i) += 1;
            *self.prio_bytes.get_unchecked_mut(q.queue) += bytes;
        }
        self.occupied_bytes += bytes;
        debug_assert!(self.occupied_bytes <= self.total_bytes);
    }

    #[inline(always)]
    pub(crate) fn on_dequeue(&mut self, q: QueueRef, bytes: u64, counts_as_drain: bool) {
        debug_assert!(q.port < self.n_ports && q.queue < self.n_queues);
        let i = self.idx(q);
        unsafe {
            *self.queue_bytes.get_unchecked_mut(i) -= bytes;
            *self.queue_pkts.get_unchecked_mut(i) -= 1;
            *self.prio_bytes.get_unchecked_mut(q.queue) -= bytes;
        }
        self.occupied_bytes -= bytes;
        if counts_as_drain {
            unsafe { *self.deq_bytes.get_unchecked_mut(i) += bytes };
        }
    }
}

/// The decision at enqueue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    Accept,
    Drop,
    /// Drop the tail packet of this queue, then ask again (LQD-style schemes).
    PushOut(QueueRef),
}

/// One arrival at a switch queue as a tracing scheme records it (`lqd` with `trace = true`,
/// docs/schemes/credence.md §5.2): where, which packet, the features Credence's predictor reads
/// (§2.1, taken when the arrival is first offered to the scheme, before any push-out) and the
/// packet's fate. `switch` is filled in by the simulator when it collects the rows.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TraceRow {
    pub switch: u16,
    pub port: u16,
    pub queue: u8,
    pub flow: u32,
    /// `Packet::flow_key` (flow, CBR bit, destination): with `seq` and `occurrence` it names the
    /// arrival (the oracle of `credence` looks drops up by it).
    pub flow_key: u64,
    pub seq: u64,
    /// How many earlier arrivals at this switch had the same (`flow_key`, `seq`): duplicate ACKs,
    /// retransmissions.
    pub occurrence: u32,
    pub size_bytes: u32,
    pub flags: u8,
    pub t_arrival_ps: Time,
    pub t_fate_ps: Time,
    pub q_bytes: u64,
    pub q_avg_bytes: f64,
    pub occ_bytes: u64,
    pub occ_avg_bytes: f64,
    pub longest_bytes: u64,
    /// 0 sent, 1 pushed out, 2 refused at arrival.
    pub fate: u8,
}

/// What every buffer-management scheme implements. One value per switch.
pub trait BufferManager: Send {
    fn name(&self) -> &'static str;

    /// Whether the switch must call `classify` (default: no; the queue is the priority's).
    fn classifies(&self) -> bool {
        false
    }

    /// Choose the queue of an arriving packet on its egress port (default: `default_queue`,
    /// the queue of its priority). Runs before `admit`; Cisco IB's DPP moves the first packets
    /// of a flow to a priority queue here.
    fn classify(&mut self, _st: &BufferState, _port: usize, _pkt: &Packet, default_queue: usize, _now: Time) -> usize {
        default_queue
    }

    /// Decide on `pkt` arriving for queue `q`. The switch itself drops the packet if the
    /// pool lacks room (`remaining_bytes() < size`) after an `Accept`.
    fn admit(&mut self, st: &BufferState, q: QueueRef, pkt: &Packet, now: Time) -> Admission;

    /// The admission threshold (bytes) `pkt` would face in queue `q` now, if the scheme has one.
    fn threshold_bytes(&self, _st: &BufferState, _q: QueueRef, _pkt: &Packet, _now: Time) -> Option<f64> {
        None
    }

    /// Whether the switch must call `on_enqueue`/`on_dequeue` (schemes that keep no per-packet
    /// state and never drop at dequeue return false and save two calls per packet).
    fn uses_queue_hooks(&self) -> bool {
        true
    }

    /// Called after a packet entered queue `q` (state already updated).
    fn on_enqueue(&mut self, _st: &BufferState, _q: QueueRef, _pkt: &Packet, _now: Time) {}

    /// Called when `pkt` leaves queue `q` for transmission (state already updated), with its
    /// enqueue time in `pkt.enq_ps`. Return false to drop it instead of sending it.
    fn on_dequeue(&mut self, _st: &BufferState, _q: QueueRef, _pkt: &Packet, _now: Time) -> bool {
        true
    }

    /// Called when the switch pushes `pkt` out of queue `q` (an `Admission::PushOut` victim;
    /// state already updated). The packet leaves the queue without being sent, so schemes that
    /// keep per-queue state must see it; by default it is forwarded to `on_dequeue` (whose
    /// verdict is moot: the packet is dropped anyway). Schemes for which a dequeue means a
    /// transmission (sojourn samples) override it.
    fn on_evict(&mut self, st: &BufferState, q: QueueRef, pkt: &Packet, now: Time) {
        let _ = self.on_dequeue(st, q, pkt, now);
    }

    /// Period of `on_tick`, if the scheme needs one.
    fn tick_interval_ps(&self) -> Option<Time> {
        None
    }

    fn on_tick(&mut self, _st: &BufferState, _now: Time) {}

    /// Bytes the switch adds to a queue's dequeue count (`BufferState::deq_bytes`) each time its
    /// port's scheduler visits the queue and finds it empty (0, the default: none). The ABM
    /// authors' code credits 1,472 B per such visit to the drain rate µ it measures; read once,
    /// when the scheme is installed.
    fn empty_poll_credit_bytes(&self) -> u64 {
        0
    }

    /// The trace rows recorded so far, taken out (None: the scheme does not trace). Called once,
    /// when the run's output is built.
    fn take_trace(&mut self) -> Option<Vec<TraceRow>> {
        None
    }

    /// With lossless priorities: whether the scheme decides when a lossless (ingress port,
    /// priority) enters headroom and when it may resume (Reverie), through the three methods
    /// below. False (default): the switch's DT on the ingress pool (docs/lossless.md §6).
    fn decides_ingress(&self) -> bool {
        false
    }

    /// A lossless packet arrived by ingress (`port`, `prio`) and is counted: `in_bytes` include
    /// it, `free_bytes` = S − S_used with it in the shared pool (0 if full). True: the ingress
    /// queue enters headroom (a pause follows). Called at every lossless arrival, also when the
    /// queue is already in headroom (the answer is then moot).
    fn ingress_over(&mut self, _port: usize, _prio: u8, _in_bytes: u64, _free_bytes: u64) -> bool {
        false
    }

    /// A lossless packet of ingress (`port`, `prio`) left the buffer; `in_bytes` after it left.
    fn on_ingress_leave(&mut self, _port: usize, _prio: u8, _in_bytes: u64) {}

    /// XON for a pausing ingress (`port`, `prio`) whose headroom is empty: may it resume, with
    /// `in_bytes` buffered and `free_bytes` = S − S_used now?
    fn ingress_resume(&mut self, _port: usize, _prio: u8, _in_bytes: u64, _free_bytes: u64, _xon_bytes: u64, _xon_offset_bytes: u64) -> bool {
        false
    }

    /// The scheme's own counters (name, value), summed over switches into the run's summary
    /// (`scheme_stats`). Called once, when the run's output is built.
    fn stats(&self) -> Vec<(&'static str, u64)> {
        Vec::new()
    }
}

/// What a scheme's builder knows about its switch.
pub struct BmContext<'a> {
    pub buffer_bytes: u64,
    pub n_queues: usize,
    pub port_rate_bps: &'a [u64],
    /// Largest base RTT in the network (a natural update interval).
    pub base_rtt_ps: Time,
    /// Seed for the scheme's own random draws (derived from the scenario seed and the
    /// switch index), so randomized schemes stay deterministic.
    pub seed: u64,
    /// Index of the switch this scheme instance runs on.
    pub switch_index: usize,
    /// Payload bytes of a full segment (`transport.mss_bytes`) and header bytes per packet
    /// (`transport.header_bytes`): a full data packet holds `mss + header` bytes of buffer.
    pub mss_bytes: u32,
    pub header_bytes: u32,
}

/// Bytes one full data packet occupies in the ABM authors' ns-3 code, whose queues count
/// `packet->GetSize()` = 1,400 B payload + 32 B TCP header, without IP/Ethernet headers
/// (ns3-datacenter-notes §1 "Units are bytes").
pub const CODE_DATA_PKT_BYTES: f64 = 1_432.0;

impl BmContext<'_> {
    /// Wire bytes of one full data packet of the scenario (mss + header).
    #[inline]
    pub fn full_packet_bytes(&self) -> f64 {
        (self.mss_bytes + self.header_bytes) as f64
    }

    /// A byte constant of the ABM authors' code (counted on 1,432-byte data packets) expressed
    /// as the same number of this scenario's full packets, in wire bytes: `b / 1432 · (mss +
    /// header)`. E.g. FAB's 21,000 B (15 × 1,400) lets 15 packets through as young in both.
    #[inline]
    pub fn code_bytes(&self, b: f64) -> f64 {
        b / CODE_DATA_PKT_BYTES * self.full_packet_bytes()
    }
}

/// Every built-in scheme as an enum, so the switch's per-packet calls (`admit`, `on_enqueue`,
/// `on_dequeue`) are a `match` the compiler can inline rather than a virtual call; `Dyn` holds a
/// scheme defined outside this crate (`Simulator::with_bm_factory`, Python schemes,
/// `Switch::set_bm`). Each scheme's `build` returns its variant (`.into()`), so the registry
/// below still names each scheme once.
macro_rules! schemes {
    ($($var:ident($ty:ty)),* $(,)?) => {
        pub enum Scheme {
            $($var($ty),)*
            Dyn(Box<dyn BufferManager>),
        }
        $(impl From<$ty> for Scheme {
            #[inline]
            fn from(b: $ty) -> Self {
                Scheme::$var(b)
            }
        })*
        /// `$body` with `$b` bound to the scheme inside whichever variant `$s` is.
        macro_rules! with_scheme {
            ($s:expr, $b:ident => $body:expr) => {
                match $s {
                    $(Scheme::$var($b) => $body,)*
                    Scheme::Dyn($b) => $body,
                }
            };
        }
    };
}

schemes! {
    Cs(cs::CompleteSharing),
    Cp(cp::CompletePartitioning),
    Dt(dt::DynamicThresholds),
    Fab(fab::Fab),
    Ib(ib::IntelligentBuffer),
    Fb(fb::Fb),
    FbPisa(fb_pisa::FbPisa),
    Fba(fba::Fba),
    Abm(abm::Abm),
    AbmApprox(abm_approx::AbmApprox),
    Sojourn(cbm::SojournBm),
    Lqd(lqd::LongestQueueDrop),
    Credence(credence::Credence),
    Reverie(reverie::Reverie),
}

impl From<Box<dyn BufferManager>> for Scheme {
    fn from(b: Box<dyn BufferManager>) -> Self {
        Scheme::Dyn(b)
    }
}

impl BufferManager for Scheme {
    fn name(&self) -> &'static str {
        with_scheme!(self, b => b.name())
    }
    #[inline]
    fn classifies(&self) -> bool {
        with_scheme!(self, b => b.classifies())
    }
    #[inline]
    fn classify(&mut self, st: &BufferState, port: usize, pkt: &Packet, default_queue: usize, now: Time) -> usize {
        with_scheme!(self, b => b.classify(st, port, pkt, default_queue, now))
    }
    #[inline]
    fn admit(&mut self, st: &BufferState, q: QueueRef, pkt: &Packet, now: Time) -> Admission {
        with_scheme!(self, b => b.admit(st, q, pkt, now))
    }
    fn threshold_bytes(&self, st: &BufferState, q: QueueRef, pkt: &Packet, now: Time) -> Option<f64> {
        with_scheme!(self, b => b.threshold_bytes(st, q, pkt, now))
    }
    #[inline]
    fn uses_queue_hooks(&self) -> bool {
        with_scheme!(self, b => b.uses_queue_hooks())
    }
    #[inline]
    fn on_enqueue(&mut self, st: &BufferState, q: QueueRef, pkt: &Packet, now: Time) {
        with_scheme!(self, b => b.on_enqueue(st, q, pkt, now))
    }
    #[inline]
    fn on_dequeue(&mut self, st: &BufferState, q: QueueRef, pkt: &Packet, now: Time) -> bool {
        with_scheme!(self, b => b.on_dequeue(st, q, pkt, now))
    }
    fn on_evict(&mut self, st: &BufferState, q: QueueRef, pkt: &Packet, now: Time) {
        with_scheme!(self, b => b.on_evict(st, q, pkt, now))
    }
    fn tick_interval_ps(&self) -> Option<Time> {
        with_scheme!(self, b => b.tick_interval_ps())
    }
    fn on_tick(&mut self, st: &BufferState, now: Time) {
        with_scheme!(self, b => b.on_tick(st, now))
    }
    fn empty_poll_credit_bytes(&self) -> u64 {
        with_scheme!(self, b => b.empty_poll_credit_bytes())
    }
    fn take_trace(&mut self) -> Option<Vec<TraceRow>> {
        with_scheme!(self, b => b.take_trace())
    }
    fn stats(&self) -> Vec<(&'static str, u64)> {
        with_scheme!(self, b => b.stats())
    }
    fn decides_ingress(&self) -> bool {
        with_scheme!(self, b => b.decides_ingress())
    }
    #[inline]
    fn ingress_over(&mut self, port: usize, prio: u8, in_bytes: u64, free_bytes: u64) -> bool {
        with_scheme!(self, b => b.ingress_over(port, prio, in_bytes, free_bytes))
    }
    #[inline]
    fn on_ingress_leave(&mut self, port: usize, prio: u8, in_bytes: u64) {
        with_scheme!(self, b => b.on_ingress_leave(port, prio, in_bytes))
    }
    #[inline]
    fn ingress_resume(&mut self, port: usize, prio: u8, in_bytes: u64, free_bytes: u64, xon_bytes: u64, xon_offset_bytes: u64) -> bool {
        with_scheme!(self, b => b.ingress_resume(port, prio, in_bytes, free_bytes, xon_bytes, xon_offset_bytes))
    }
}

type Builder = fn(&Params, &BmContext) -> Result<Scheme, String>;

/// Registered schemes: (name, one-line description, builder). Adding a scheme = one module, one line
/// here, and its type in the `schemes!` list above (its `build` returns `Ok(MyScheme{..}.into())`).
pub const SCHEMES: &[(&str, &str, Builder)] = &[
    ("cs", "Complete Sharing: admit while the pool has room", cs::build),
    ("cp", "Complete Partitioning: a static equal share of the buffer per queue", cp::build),
    ("dt", "Dynamic Thresholds: T = alpha_q * (B - Q(t)) (Choudhury & Hahne)", dt::build),
    ("fab", "FAB: DT with a per-packet alpha chosen by the age of its flow", fab::build),
    ("ib", "Cisco Intelligent Buffer: DT + approximate fair drop + dynamic packet prioritization", ib::build),
    ("fb", "FB: T = alpha_c * (1/N_p) * gamma * (B - Q(t))", fb::build),
    ("fb_pisa", "FB on a programmable switch (FB 5.1): synced state, gamma = 1/N_c, power-of-two shifts, few alphas", fb_pisa::build),
    ("fba", "FBA: DT whose alpha is reset every period to alpha_c * gamma / N_p", fba::build),
    ("abm", "ABM: T = alpha_p * (1/n_p) * (mu/b) * (B - Q(t))", abm::build),
    ("abm_approx", "ABM approximated by DT with alpha reconfigured every interval", abm_approx::build),
    ("cbm", "CBM: complete sharing + drop at dequeue when the sojourn time exceeds a dynamic bound", cbm::build),
    ("bshare", "BSHARE: queuing-delay-driven buffer sharing (Algorithm 1)", bshare::build),
    ("lqd", "LQD: complete sharing; when full, push out the tail of the longest queue", lqd::build),
    ("credence", "Credence: drop-tail that follows LQD with predictions (thresholds of a virtual LQD, B/N gate)", credence::build),
    ("reverie", "Reverie: T = alpha_q * (S - S_used) / n_p on a low-pass-filtered queue; lossless on the ingress view via PFC, lossy at egress", reverie::build),
];

pub fn scheme_names() -> Vec<&'static str> {
    SCHEMES.iter().map(|s| s.0).collect()
}

pub fn build(name: &str, params: &Map<String, Value>, ctx: &BmContext) -> Result<Scheme, String> {
    let b = SCHEMES
        .iter()
        .find(|s| s.0 == name)
        .ok_or_else(|| format!("switch.bm.scheme = '{name}': unknown scheme; allowed: {}", scheme_names().join(", ")))?;
    (b.2)(&Params::new("switch.bm", params), ctx)
}

/// α of queue `q` for `pkt`: `alpha_unscheduled` for a packet its sender flagged unscheduled
/// (`flags::UNSCHED`, a flow's first RTT), `alpha` otherwise (CBM, BSHARE, Reverie).
#[inline]
pub fn alpha_of(alpha: &[f64], alpha_unsched: &[f64], q: QueueRef, pkt: &Packet) -> f64 {
    if pkt.has(crate::packet::flags::UNSCHED) {
        alpha_unsched[q.queue]
    } else {
        alpha[q.queue]
    }
}

/// Validate alpha-like values: finite and positive.
pub fn check_positive(key: &str, v: &[f64]) -> Result<(), String> {
    crate::config::check_positive("switch.bm", key, v)
}

#[cfg(test)]
pub(crate) mod testutil {
    use super::*;

    pub fn state(total: u64, ports: usize, nq: usize) -> BufferState {
        BufferState::new(total, vec![10_000_000_000; ports], nq, SchedKind::RoundRobin)
    }

    pub fn pkt(size: u32, prio: u8) -> Packet {
        Packet { size_bytes: size, prio, ..Default::default() }
    }

    #[test]
    fn congested_counts_and_scheduler_shares() {
        let mut st = BufferState::new(1_000_000, vec![10_000_000_000; 3], 2, SchedKind::Drr(vec![1, 3]));
        st.on_enqueue(QueueRef { port: 0, queue: 1 }, 28_000);
        st.on_enqueue(QueueRef { port: 1, queue: 1 }, 7_000);
        st.on_enqueue(QueueRef { port: 1, queue: 0 }, 1_500);
        assert_eq!(st.congested_queues(1, 10_000), 1);
        assert_eq!(st.congested_queues(1, 1), 2);
        assert!((st.soft_congested_queues(1, 28_000) - 1.25).abs() < 1e-12);
        assert_eq!(st.prio_bytes, vec![1_500, 35_000]);
        assert_eq!(st.remaining_bytes(), 1_000_000 - 36_500);
        // DRR weights 1:3 with both queues of port 1 backlogged.
        assert!((st.sched_share(QueueRef { port: 1, queue: 1 }) - 0.75).abs() < 1e-12);
        // Alone on port 0, queue 1 gets the whole port.
        assert_eq!(st.sched_share(QueueRef { port: 0, queue: 1 }), 1.0);
        st.sched = SchedKind::StrictPriority;
        assert_eq!(st.sched_share(QueueRef { port: 1, queue: 1 }), 0.0);
        st.sched = SchedKind::RoundRobin;
        assert_eq!(st.sched_share(QueueRef { port: 1, queue: 1 }), 0.5);
    }
}

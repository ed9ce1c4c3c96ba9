//! Storage of a run's TCP flows over their lifetime (issue 10: engine memory per finished
//! flow). A flow is, in turn:
//! - **cold** (not started): its row of the generated [`FlowColumns`] only (36 B);
//! - **active**: a [`TcpFlow`] (about 424 B, plus its boxed congestion control) in a slot of
//!   a slab, built when the flow starts; slots are reused, so the slab holds about as many
//!   flows as run at once;
//! - **retired**: finished (every byte received), its sender done (every byte acknowledged),
//!   no timer armed and no packet of it left in the network. Nothing can happen to such a
//!   flow any more (a flow only acts on its own packets and timers), so its results are
//!   folded into the result columns (16 B) and its slot freed.
//!
//! Flow ids (packets' `flow`, events' operand, output rows) never change: `slot` maps an id to
//! its slab slot while the flow is active. Whole run: 36 + 16 + 4 = 56 B per flow.
//!
//! Whether a packet of a candidate is still in the network is found by a sweep over the
//! packet pool, run when enough candidates have gathered (at least the pool's capacity), so
//! its cost per flow is constant and nothing is counted per packet. The sweep's timing
//! changes no output: a candidate is only retired once nothing can happen to it.

use super::tcp::{SendState, TcpFlow};
use crate::engine::Time;
use crate::metrics::TcpTraceRecord;
use crate::packet::{flags, PacketPool};
use crate::workload::FlowColumns;

/// `slot` of a flow that is not active (not started, or retired).
const NO_SLOT: u32 = u32::MAX;

/// Fewest candidates that make a sweep worth its walk over the packet pool. Debug builds
/// sweep at every candidate, so the engine tests (invariants checked at every event: no
/// packet of a retired flow anywhere) retire each flow as early as possible.
const MIN_SWEEP: usize = if cfg!(debug_assertions) { 1 } else { 1024 };

/// An active flow's slab slot, as [`FlowTable::slot_of`] or [`FlowTable::activate`] gave it.
/// Only the table makes one, and its slab never shrinks, so a `Slot` always indexes it: the
/// per-packet look-ups through it need no bounds check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot(usize);

impl Slot {
    #[inline(always)]
    pub fn index(self) -> usize {
        self.0
    }
}

pub struct FlowTable {
    /// Per flow: the generated description.
    pub desc: FlowColumns,
    /// Per flow, written when it retires (or at the end for active flows): end time
    /// (`u64::MAX`: unfinished), retransmissions, timeouts.
    end_ps: Vec<Time>,
    retransmits: Vec<u32>,
    timeouts: Vec<u32>,
    /// Per flow: slab slot while active, else `NO_SLOT`.
    slot: Vec<u32>,
    /// Active flows (and, in free slots, the husks of retired ones until reused).
    slab: Vec<TcpFlow>,
    /// Per slot: the flow is on the candidate list.
    queued: Vec<bool>,
    free: Vec<u32>,
    /// Flow ids finished with their sender done, not yet retired.
    candidates: Vec<u32>,
    sweep_at: usize,
    /// Retire flows (false: keep every started flow active to the end, as before issue 10;
    /// for the test that retiring changes no output).
    retire: bool,
    /// Sweep scratch: per pool id, free; per slot, a packet of the flow is in the network.
    pool_free: Vec<bool>,
    in_network: Vec<bool>,
    /// `[output] tcp_trace_*`: the rows of traced flows that retired.
    trace_rows: Vec<TcpTraceRecord>,
}

impl FlowTable {
    pub fn new(desc: FlowColumns) -> Self {
        let n = desc.len();
        FlowTable {
            desc,
            end_ps: vec![u64::MAX; n],
            retransmits: vec![0; n],
            timeouts: vec![0; n],
            slot: vec![NO_SLOT; n],
            slab: Vec::new(),
            queued: Vec::new(),
            free: Vec::new(),
            candidates: Vec::new(),
            sweep_at: MIN_SWEEP,
            retire: true,
            pool_free: Vec::new(),
            in_network: Vec::new(),
            trace_rows: Vec::new(),
        }
    }

    /// Number of flows of the run (cold, active and retired).
    pub fn len(&self) -> usize {
        self.slot.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slot.is_empty()
    }

    /// Active flows (started, not retired).
    pub fn active(&self) -> usize {
        self.slab.len() - self.free.len()
    }

    /// Slab slots ever used (the most flows active at once, retiring lag included).
    pub fn slab_len(&self) -> usize {
        self.slab.len()
    }

    /// `false`: never retire a flow (tests).
    pub fn set_retire(&mut self, on: bool) {
        self.retire = on;
    }

    /// Slot of flow `fi` while it is active.
    #[inline]
    pub fn slot_of(&self, fi: usize) -> Option<Slot> {
        let s = self.slot[fi];
        (s != NO_SLOT).then_some(Slot(s as usize))
    }

    /// `slot_of` for a flow id known to be in range.
    ///
    /// # Safety
    /// `fi < self.len()`.
    #[inline(always)]
    pub(crate) unsafe fn slot_of_unchecked(&self, fi: usize) -> Option<Slot> {
        debug_assert!(fi < self.slot.len());
        let s = *self.slot.get_unchecked(fi);
        (s != NO_SLOT).then_some(Slot(s as usize))
    }

    #[inline(always)]
    pub fn at(&self, s: Slot) -> &TcpFlow {
        debug_assert!(s.0 < self.slab.len());
        // SAFETY: a `Slot` is below the slab's length when made, and the slab never shrinks.
        unsafe { self.slab.get_unchecked(s.0) }
    }

    #[inline(always)]
    pub fn at_mut(&mut self, s: Slot) -> &mut TcpFlow {
        debug_assert!(s.0 < self.slab.len());
        // SAFETY: as in `at`.
        unsafe { self.slab.get_unchecked_mut(s.0) }
    }

    /// Flow `fi`'s state while it is active.
    #[inline]
    pub fn get(&self, fi: usize) -> Option<&TcpFlow> {
        self.slot_of(fi).map(|s| self.at(s))
    }

    /// Flow `fi` starts as `f`: give it a slot (a free one if any) and return it.
    pub fn activate(&mut self, fi: usize, f: TcpFlow) -> Slot {
        debug_assert_eq!(self.slot[fi], NO_SLOT, "flow {fi} started twice");
        let s = match self.free.pop() {
            Some(s) => {
                self.slab[s as usize] = f;
                self.queued[s as usize] = false;
                s as usize
            }
            None => {
                self.slab.push(f);
                self.queued.push(false);
                self.slab.len() - 1
            }
        };
        self.slot[fi] = s as u32;
        Slot(s)
    }

    /// After flow `fi` (in slot `s`) handled a packet: once it is finished and its sender
    /// done, it becomes a candidate for retirement; enough candidates trigger a sweep.
    #[inline]
    pub(crate) fn after_packet(&mut self, fi: usize, s: Slot, pool: &PacketPool) {
        // The sender's state first: it is rarely `Done`, and it is in the cache line the
        // packet's handler just used (the `queued` look-up is needed only then).
        let f = self.at(s);
        let s = s.0;
        if f.state == SendState::Done && self.retire && !self.queued[s] && f.finished() {
            self.queued[s] = true;
            self.candidates.push(fi as u32);
            if self.candidates.len() >= self.sweep_at {
                self.sweep(pool);
            }
        }
    }

    /// Retire every candidate with no timer armed and no packet in the network (`pool`
    /// holds every packet queued or on a link).
    pub(crate) fn sweep(&mut self, pool: &PacketPool) {
        let cap = pool.capacity();
        self.pool_free.clear();
        self.pool_free.resize(cap, false);
        for &id in pool.free_ids() {
            self.pool_free[id as usize] = true;
        }
        self.in_network.clear();
        self.in_network.resize(self.slab.len(), false);
        for id in 0..cap {
            if self.pool_free[id] {
                continue;
            }
            let p = pool.get(id as u32);
            if !p.has(flags::CBR) {
                if let Some(s) = self.slot_of(p.flow as usize) {
                    self.in_network[s.0] = true;
                }
            }
        }
        let mut kept = 0;
        for k in 0..self.candidates.len() {
            let fi = self.candidates[k] as usize;
            let s = self.slot[fi] as usize;
            let f = &mut self.slab[s];
            if self.in_network[s] || f.rto.armed() || f.pace.armed() || f.delack.armed() {
                self.candidates[kept] = fi as u32;
                kept += 1;
                continue;
            }
            self.end_ps[fi] = f.end_ps.unwrap_or(u64::MAX);
            self.retransmits[fi] = f.retransmits;
            self.timeouts[fi] = f.timeouts;
            f.cc = None;
            if let Some(t) = f.trace.take() {
                self.trace_rows.extend_from_slice(&t.rows);
            }
            self.slot[fi] = NO_SLOT;
            self.queued[s] = false;
            self.free.push(s as u32);
        }
        self.candidates.truncate(kept);
        self.sweep_at = if cfg!(debug_assertions) { MIN_SWEEP } else { MIN_SWEEP.max(cap).max(2 * kept) };
    }

    /// Retire active flow `fi` whatever its state (tests of the invariant that no packet of a
    /// retired flow is left in the network).
    #[cfg(test)]
    pub(crate) fn retire_now_for_test(&mut self, fi: usize) {
        let s = self.slot[fi];
        self.end_ps[fi] = 0;
        self.slot[fi] = NO_SLOT;
        self.free.push(s);
    }

    /// Flow `fi` is retired (its results folded, its slot freed).
    pub fn retired(&self, fi: usize) -> bool {
        self.slot[fi] == NO_SLOT && self.end_ps[fi] != u64::MAX
    }

    /// End time of flow `fi` (`u64::MAX`: unfinished).
    pub fn end_ps(&self, fi: usize) -> Time {
        match self.get(fi) {
            Some(f) => f.end_ps.unwrap_or(u64::MAX),
            None => self.end_ps[fi],
        }
    }

    /// Payload bytes flow `fi` received in order (its size once finished).
    pub fn received_bytes(&self, fi: usize) -> u64 {
        match self.get(fi) {
            Some(f) => f.rcv_nxt.min(f.size_bytes),
            None if self.end_ps[fi] != u64::MAX => self.desc.size_bytes[fi],
            None => 0,
        }
    }

    /// `[output] tcp_trace_*`: every traced flow's rows (retired and active flows alike), in
    /// time order; at equal times by flow id, then in the order the flow recorded them.
    pub fn take_trace(&mut self) -> Vec<TcpTraceRecord> {
        let mut rows = std::mem::take(&mut self.trace_rows);
        for fi in 0..self.len() {
            if let Some(s) = self.slot_of(fi) {
                if let Some(t) = self.slab[s.0].trace.take() {
                    rows.extend_from_slice(&t.rows);
                }
            }
        }
        // Stable: each flow's rows are already in its event order.
        rows.sort_by_key(|r| (r.time_ps, r.flow));
        rows
    }

    /// The result columns, the active flows' folded in: (end, retransmits, timeouts,
    /// received bytes). Empties the table's result columns.
    pub fn take_results(&mut self) -> (Vec<Time>, Vec<u32>, Vec<u32>, Vec<u64>) {
        let received = (0..self.len()).map(|fi| self.received_bytes(fi)).collect();
        for fi in 0..self.len() {
            if let Some(s) = self.slot_of(fi) {
                let f = &self.slab[s.0];
                self.end_ps[fi] = f.end_ps.unwrap_or(u64::MAX);
                self.retransmits[fi] = f.retransmits;
                self.timeouts[fi] = f.timeouts;
            }
        }
        (std::mem::take(&mut self.end_ps), std::mem::take(&mut self.retransmits), std::mem::take(&mut self.timeouts), received)
    }
}

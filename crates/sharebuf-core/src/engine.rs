//! Integer time and the event queue.
//!
//! Time is picoseconds in a `u64` (213 days of range). Events are ordered by
//! (time, insertion sequence), so equal-time events run in the order they were
//! scheduled and runs are deterministic.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Simulated time in picoseconds.
pub type Time = u64;
pub const PS_PER_NS: Time = 1_000;
pub const PS_PER_US: Time = 1_000_000;
pub const PS_PER_MS: Time = 1_000_000_000;
pub const PS_PER_S: Time = 1_000_000_000_000;

/// Serialization time of `bytes` at `rate_bps`, rounded up to the picosecond.
#[inline]
pub fn tx_time_ps(bytes: u64, rate_bps: u64) -> Time {
    ((bytes as u128 * 8 * PS_PER_S as u128).div_ceil(rate_bps as u128)) as Time
}

/// What an event does; the payload `a` is an index whose meaning depends on the kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// Packet `a` arrives at the node stored in the packet's path (`Packet::dst` routing).
    Arrive = 0,
    /// Port `a` finished serializing and may start the next packet.
    TxDone,
    /// Flow `a` starts (SYN, or data on a pre-established connection).
    FlowStart,
    /// Retransmission timer of flow `a`.
    Rto,
    /// Delayed-ACK timer of flow `a` (receiver side).
    DelAck,
    /// Paced sender of flow `a` may send again.
    Pace,
    /// Constant-rate flow `a` emits its next packet.
    CbrSend,
    /// Periodic tick of switch `a`'s buffer manager.
    BmTick,
    /// Periodic buffer-occupancy sample.
    SampleBuffer,
    /// Periodic per-queue occupancy sample.
    SampleQueues,
}

/// A compact event: 24 bytes.
#[derive(Clone, Copy, Debug)]
pub struct Event {
    pub time: Time,
    pub seq: u64,
    pub a: u32,
    /// Second operand (e.g. the node a packet arrives at).
    pub b: u32,
}

impl Event {
    #[inline]
    pub fn kind(&self) -> Kind {
        // SAFETY-free decode: the kind is stored in the low byte of seq's companion field.
        KINDS[(self.seq & 0xff) as usize]
    }
}

const KINDS: [Kind; 10] = [
    Kind::Arrive,
    Kind::TxDone,
    Kind::FlowStart,
    Kind::Rto,
    Kind::DelAck,
    Kind::Pace,
    Kind::CbrSend,
    Kind::BmTick,
    Kind::SampleBuffer,
    Kind::SampleQueues,
];

impl PartialEq for Event {
    fn eq(&self, o: &Self) -> bool {
        self.time == o.time && self.seq == o.seq
    }
}
impl Eq for Event {}
impl PartialOrd for Event {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Event {
    // Reversed: BinaryHeap is a max-heap, we want the earliest (time, seq) first.
    #[inline]
    fn cmp(&self, o: &Self) -> Ordering {
        o.time.cmp(&self.time).then_with(|| o.seq.cmp(&self.seq))
    }
}

/// Min-queue of events with FIFO tie-breaking.
pub struct EventQueue {
    heap: BinaryHeap<Event>,
    next_seq: u64,
    pub now: Time,
    pub processed: u64,
}

impl Default for EventQueue {
    fn default() -> Self {
        Self::new()
    }
}

impl EventQueue {
    pub fn new() -> Self {
        EventQueue { heap: BinaryHeap::with_capacity(1 << 16), next_seq: 0, now: 0, processed: 0 }
    }

    /// Schedule `kind` at absolute time `t` (never in the past).
    #[inline]
    pub fn at(&mut self, t: Time, kind: Kind, a: u32, b: u32) {
        debug_assert!(t >= self.now);
        // The insertion counter sits above the kind byte, so ordering by seq is insertion order.
        let seq = (self.next_seq << 8) | kind as u64;
        self.next_seq += 1;
        self.heap.push(Event { time: t, seq, a, b });
    }

    /// Schedule `kind` after `dt` from now.
    #[inline]
    pub fn after(&mut self, dt: Time, kind: Kind, a: u32, b: u32) {
        self.at(self.now + dt, kind, a, b)
    }

    #[inline]
    pub fn pop(&mut self) -> Option<Event> {
        let e = self.heap.pop()?;
        self.now = e.time;
        self.processed += 1;
        Some(e)
    }

    #[inline]
    pub fn peek_time(&self) -> Option<Time> {
        self.heap.peek().map(|e| e.time)
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifo_tie_break_and_time_order() {
        let mut q = EventQueue::new();
        q.at(10, Kind::Rto, 1, 0);
        q.at(5, Kind::TxDone, 2, 0);
        q.at(10, Kind::Arrive, 3, 0);
        q.at(10, Kind::Pace, 4, 0);
        let order: Vec<(Time, Kind, u32)> = std::iter::from_fn(|| q.pop().map(|e| (e.time, e.kind(), e.a))).collect();
        assert_eq!(order, vec![(5, Kind::TxDone, 2), (10, Kind::Rto, 1), (10, Kind::Arrive, 3), (10, Kind::Pace, 4)]);
    }

    #[test]
    fn tx_time_exact_at_common_rates() {
        assert_eq!(tx_time_ps(1500, 10_000_000_000), 1_200_000);
        assert_eq!(tx_time_ps(1500, 100_000_000_000), 120_000);
        assert_eq!(tx_time_ps(1, 3_000_000_000), 2667);
        // 30 MB at 10 Gbps: 24 ms (would overflow u64 arithmetic).
        assert_eq!(tx_time_ps(30_000_000, 10_000_000_000), 24_000_000_000);
    }
}

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
    /// Port `a` finished serializing and may start the next packet (a port with a device
    /// FIFO: the FIFO has room again and packets wait above it).
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
    /// A PFC frame arrives at port `a` (global id): `b` = priority | 0x100 for a pause
    /// (0 for a resume). Only with lossless priorities (docs/lossless.md).
    Pfc,
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
        // The kind is stored in the low byte of `seq`, below the insertion counter; every seq
        // is built as `(counter << 8) | kind as u64` (< 11), so its low 4 bits are the kind and
        // the 16-entry table needs no bounds check.
        debug_assert!(self.seq & 0xff < 11);
        KINDS[(self.seq & 0xf) as usize]
    }

    /// Whether the event is of kind `k`: one comparison of the kind bits (the event loop tests
    /// its two per-packet kinds this way before a full dispatch).
    #[inline]
    pub fn is(&self, k: Kind) -> bool {
        self.seq & 0xf == k as u64
    }
}

/// `Kind` by discriminant, padded to 16 entries (indices 11..16 never occur).
const KINDS: [Kind; 16] = [
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
    Kind::Pfc,
    Kind::Pfc,
    Kind::Pfc,
    Kind::Pfc,
    Kind::Pfc,
    Kind::Pfc,
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

/// Width of one calendar window: 2^18 ps (about 262 ns): a few events per window on a loaded
/// 10-100 Gbps network, so keeping a bucket sorted as it fills moves about one slot per event.
const WINDOW_BITS: u32 = 18;
/// Number of calendar windows: 8192 (a horizon of about 2.1 ms).
const RING: usize = 8192;
/// Bits of a heap key below the time offset: the insertion sequence (counter and kind byte).
const SEQ_BITS: u32 = 64 - WINDOW_BITS;

/// A queued event of the calendar (current window or ring bucket): one `u64` key, (time
/// offset in its window, seq), so ordering compares one integer; 16 bytes. Windows start at
/// multiples of 2^WINDOW_BITS, so the offset is `t & WINDOW_MASK`.
#[derive(Clone, Copy, Debug)]
struct Slot {
    key: u64,
    a: u32,
    b: u32,
}

const WINDOW_MASK: Time = (1 << WINDOW_BITS) - 1;

/// Largest insertion counter `advance` and `at_cold` accept: half the counter's 38 bits. `at`
/// itself does not check (a shift, a test and a branch per event): what it schedules between
/// two checks stays in ring buckets until the next `advance`, and 2^37 of them would be 2 TiB
/// of 16-byte slots, so the counter cannot wrap unnoticed.
const SEQ_CHECK: u64 = 1 << (SEQ_BITS - 8 - 1);

/// A ring bucket is kept sorted as it fills while it holds fewer events than this; past it,
/// events are appended and the bucket is sorted when its window becomes current (a sorted
/// insertion moves O(n) slots, so a crowded bucket, e.g. on a large fat-tree, costs
/// O(n log n) this way instead of O(n^2)).
const SORTED_BUCKET_MAX: usize = 32;

/// Insert `slot` into `v`, whose `v[lo..]` is sorted by key, at its sorted place: scanning from
/// the back, as a new event is usually among the latest (keys are unique: the seq is). Every
/// ring bucket is kept sorted this way as it fills, so its window needs no sort when it becomes
/// current (the moves are those an insertion sort of the bucket would make, without its second
/// pass). If `v` already holds `max` slots and the new one is out of order, it is appended
/// unsorted instead (the caller then sorts `v` before it is read).
#[inline(always)]
fn insert_sorted(v: &mut Vec<Slot>, lo: usize, max: usize, slot: Slot) {
    let n = v.len();
    if n == v.capacity() {
        v.reserve(1);
    }
    // SAFETY: capacity > n, so `p + n` is writable; `q` runs from `p + n` down to `p + lo`
    // (lo <= n) and `q - 1` is read only while `q > p + lo`; every slot below n is initialised.
    unsafe {
        let p = v.as_mut_ptr();
        let stop = p.add(lo);
        let mut q = p.add(n);
        if q > stop && (*q.sub(1)).key > slot.key && n < max {
            loop {
                *q = *q.sub(1);
                q = q.sub(1);
                if q == stop || (*q.sub(1)).key < slot.key {
                    break;
                }
            }
        }
        *q = slot;
        v.set_len(n + 1);
    }
}

/// Min-queue of events with FIFO tie-breaking: a calendar queue.
///
/// Time is cut into windows of 2^18 ps. Events of the next 8191 windows go to their window's
/// ring bucket as 16-byte slots keyed by one integer, (time offset in the window, insertion
/// sequence), each bucket kept sorted by key as it fills (an insertion from the back: usually
/// one comparison); later events (timers, future flow starts) wait in an overflow heap. When
/// the current window is used up, the next non-empty window (found with a bitmap) becomes
/// current: its bucket is popped from the front as it is; an event scheduled into the current
/// window itself is inserted at its sorted place. A crowded bucket (more than
/// `SORTED_BUCKET_MAX` events: a large network) takes its later events unsorted and is sorted
/// when its window comes. The order is exactly (time, seq), like a single binary heap, but the
/// work per event is a short sorted insertion and a read.
///
/// The insertion sequence has 46 bits (a 38-bit counter above the kind byte); runs of up to
/// 2^37 (1.4e11) events are checked (`SEQ_CHECK`).
pub struct EventQueue {
    /// Events of the current window sorted by key; `cur[head..]` are still queued.
    cur: Vec<Slot>,
    head: usize,
    /// First time of the current window.
    cur_start: Time,
    /// First time after the current window.
    cur_end: Time,
    /// Window number of the current window.
    cur_window: u64,
    /// Fixed-size arrays, so a masked index needs no bounds check.
    ring: Box<[Vec<Slot>; RING]>,
    /// Bit i set iff ring bucket i is non-empty.
    occupied: Box<[u64; RING / 64]>,
    overflow: BinaryHeap<Event>,
    /// Events ever scheduled, shifted above the kind byte (the next event's seq without its
    /// kind): the queue holds `(seq_next >> 8) - processed()`.
    seq_next: u64,
    pub now: Time,
    /// Events popped before the current window (`processed()` adds `head`: no count per pop).
    popped_before: u64,
    /// `pop_or_poll` reports `Stop::Poll` at the first window switch once `processed()`
    /// reaches this (a multiple of `POLL_EVERY`).
    poll_at: u64,
}

/// Events between two `Stop::Poll` reports of `pop_or_poll` (at least; at a window switch).
pub const POLL_EVERY: u64 = 1 << 18;

/// Why `pop_until` / `pop_or_poll` returned no event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// The queue is empty.
    Empty,
    /// The earliest event is later than the limit (it stays queued).
    Later,
    /// `pop_or_poll` only: `POLL_EVERY` more events were processed since the last report;
    /// the queue is unchanged (call again to go on).
    Poll,
}

impl Default for EventQueue {
    fn default() -> Self {
        Self::new()
    }
}

impl EventQueue {
    pub fn new() -> Self {
        EventQueue {
            cur: Vec::with_capacity(256),
            head: 0,
            cur_start: 0,
            cur_end: 1 << WINDOW_BITS,
            cur_window: 0,
            ring: Box::new(std::array::from_fn(|_| Vec::new())),
            occupied: Box::new([0; RING / 64]),
            overflow: BinaryHeap::with_capacity(1024),
            seq_next: 0,
            now: 0,
            popped_before: 0,
            poll_at: POLL_EVERY,
        }
    }

    /// Tests only: put an event at `t` even if it is in the past (into the overflow heap, which
    /// holds absolute times), so that the invariant walker's "no event in the past" can be tested.
    #[cfg(test)]
    pub(crate) fn push_past_for_test(&mut self, t: Time, kind: Kind) {
        let seq = self.seq_next | kind as u64;
        self.seq_next += 1 << 8;
        self.overflow.push(Event { time: t, seq, a: 0, b: 0 });
    }

    /// Schedule `kind` at absolute time `t` (never in the past).
    #[inline(always)]
    pub fn at(&mut self, t: Time, kind: Kind, a: u32, b: u32) {
        debug_assert!(t >= self.now);
        // The insertion counter sits above the kind byte, so ordering by seq is insertion order.
        let seq = self.seq_next | kind as u64;
        // The counter's range is checked where it is cheap (`advance`, `at_cold`), with a
        // margin no run can cross between two checks (see `SEQ_CHECK`).
        debug_assert!(seq >> SEQ_BITS == 0, "event queue: more than 2^38 events scheduled");
        self.seq_next += 1 << 8;
        let slot = Slot { key: ((t & WINDOW_MASK) << SEQ_BITS) | seq, a, b };
        let w = t >> WINDOW_BITS;
        let ahead = w.wrapping_sub(self.cur_window);
        if ahead.wrapping_sub(1) < (RING - 1) as u64 {
            // 1 ..= RING-1 windows ahead: append to its bucket.
            let i = (w as usize) & (RING - 1);
            let bucket = &mut self.ring[i];
            // Only the first event of a bucket marks it (its length is loaded for the push).
            if bucket.is_empty() {
                self.occupied[i >> 6] |= 1 << (i & 63);
            }
            // A crowded bucket (a large network) takes its late events unsorted and is
            // sorted when its window comes.
            insert_sorted(bucket, 0, SORTED_BUCKET_MAX, slot);
        } else {
            self.at_cold(t, seq, slot);
        }
    }

    /// `at` for the current window (a sorted insertion) and beyond the ring (the overflow heap).
    #[inline(never)]
    fn at_cold(&mut self, t: Time, seq: u64, slot: Slot) {
        self.check_seq();
        if t < self.cur_end {
            insert_sorted(&mut self.cur, self.head, usize::MAX, slot);
        } else {
            self.overflow.push(Event { time: t, seq, a: slot.a, b: slot.b });
        }
    }

    /// Schedule `kind` after `dt` from now.
    #[inline]
    pub fn after(&mut self, dt: Time, kind: Kind, a: u32, b: u32) {
        self.at(self.now + dt, kind, a, b)
    }

    /// Window number of the next non-empty ring bucket after the current window.
    #[inline]
    fn next_ring_window(&self) -> Option<u64> {
        let start = ((self.cur_window + 1) as usize) & (RING - 1);
        // Usual case: the next busy window is in the rest of `start`'s bitmap word.
        let bits = self.occupied[start >> 6] & (!0u64 << (start & 63));
        if bits != 0 {
            let dist = bits.trailing_zeros() as u64 - (start & 63) as u64;
            return Some(self.cur_window + 1 + dist);
        }
        // Scan the bitmap circularly from `start`.
        let words = RING / 64;
        for k in 0..=words {
            let wi = ((start >> 6) + k) % words;
            let mut bits = self.occupied[wi];
            if k == 0 {
                bits &= !0u64 << (start & 63);
            }
            if k == words {
                bits &= (1u64 << (start & 63)).wrapping_sub(1);
            }
            if bits != 0 {
                let i = wi * 64 + bits.trailing_zeros() as usize;
                let dist = (i + RING - start) % RING;
                return Some(self.cur_window + 1 + dist as u64);
            }
        }
        None
    }

    /// Make the current window hold the earliest events; false if there are none.
    #[cold]
    fn advance(&mut self) -> bool {
        self.check_seq();
        while self.head == self.cur.len() {
            self.popped_before += self.head as u64;
            self.cur.clear();
            self.head = 0;
            let ring_w = self.next_ring_window();
            let over_w = self.overflow.peek().map(|e| e.time >> WINDOW_BITS);
            let w = match (ring_w, over_w) {
                (None, None) => return false,
                (Some(a), None) => a,
                (None, Some(b)) => b,
                (Some(a), Some(b)) => a.min(b),
            };
            self.cur_window = w;
            self.cur_start = w << WINDOW_BITS;
            self.cur_end = (w + 1) << WINDOW_BITS;
            let i = (w as usize) & (RING - 1);
            if ring_w == Some(w) {
                // The bucket becomes the current window; the bucket keeps the old (empty) vector.
                std::mem::swap(&mut self.cur, &mut self.ring[i]);
                self.occupied[i >> 6] &= !(1 << (i & 63));
            }
            while let Some(e) = self.overflow.peek() {
                if e.time >= self.cur_end {
                    break;
                }
                let e = self.overflow.pop().unwrap();
                let slot = Slot { key: ((e.time & WINDOW_MASK) << SEQ_BITS) | e.seq, a: e.a, b: e.b };
                insert_sorted(&mut self.cur, 0, SORTED_BUCKET_MAX, slot);
            }
            if self.cur.len() > SORTED_BUCKET_MAX {
                // Crowded: some events may have been appended out of order.
                self.cur.sort_unstable_by_key(|s| s.key);
            }
            // Overflow events that now fall inside the horizon stay in the overflow heap;
            // they are pulled in when their window comes.
        }
        true
    }

    #[inline]
    fn event_of(&self, s: &Slot) -> Event {
        Event { time: self.cur_start + (s.key >> SEQ_BITS), seq: s.key & ((1 << SEQ_BITS) - 1), a: s.a, b: s.b }
    }

    /// Remove and return the earliest event, advancing `now` to its time.
    #[inline]
    pub fn pop(&mut self) -> Option<Event> {
        self.pop_until(Time::MAX).ok()
    }

    /// Remove and return the earliest event if its time is at most `limit` (advancing `now`
    /// to it); otherwise leave the queue as it is: `Stop::Later` if an event later than
    /// `limit` waits, `Stop::Empty` if there is none.
    #[inline]
    pub fn pop_until(&mut self, limit: Time) -> Result<Event, Stop> {
        self.pop_limited::<false>(limit)
    }

    /// `pop_until`, which also returns `Stop::Poll` (the queue unchanged) at the first window
    /// switch after every `POLL_EVERY` events: the event loop's periodic progress report,
    /// tested where the queue switches windows instead of at every event.
    #[inline]
    pub fn pop_or_poll(&mut self, limit: Time) -> Result<Event, Stop> {
        self.pop_limited::<true>(limit)
    }

    #[inline(always)]
    fn pop_limited<const POLL: bool>(&mut self, limit: Time) -> Result<Event, Stop> {
        if self.head == self.cur.len() {
            if POLL && self.processed() >= self.poll_at {
                self.poll_at = (self.processed() / POLL_EVERY + 1) * POLL_EVERY;
                return Err(Stop::Poll);
            }
            if !self.advance() {
                return Err(Stop::Empty);
            }
        }
        debug_assert!(self.head < self.cur.len());
        // SAFETY: `head < cur.len()`: tested above, or `advance` returned true, which it does
        // only with an event at `cur[head]`.
        let e = self.event_of(unsafe { self.cur.get_unchecked(self.head) });
        if e.time > limit {
            return Err(Stop::Later);
        }
        self.head += 1;
        self.now = e.time;
        Ok(e)
    }

    /// Events popped so far.
    #[inline]
    pub fn processed(&self) -> u64 {
        self.popped_before + self.head as u64
    }

    /// Time of the earliest event.
    #[inline]
    pub fn peek_time(&mut self) -> Option<Time> {
        if self.head == self.cur.len() && !self.advance() {
            return None;
        }
        Some(self.event_of(&self.cur[self.head]).time)
    }

    #[inline]
    fn check_seq(&self) {
        assert!(self.seq_next >> 8 < SEQ_CHECK, "event queue: more than 2^37 events scheduled");
    }

    pub fn len(&self) -> usize {
        ((self.seq_next >> 8) - self.processed()) as usize
    }

    /// Visit every queued event, in no particular order (invariant checks; not for the hot path).
    pub fn for_each(&self, mut f: impl FnMut(&Event)) {
        for s in &self.cur[self.head..] {
            f(&self.event_of(s));
        }
        let base = (self.cur_window as usize) & (RING - 1);
        for (i, bucket) in self.ring.iter().enumerate() {
            // Bucket i holds window cur_window + ahead, 1 <= ahead < RING.
            let ahead = ((i + RING - base) & (RING - 1)) as u64;
            let start = (self.cur_window + ahead) << WINDOW_BITS;
            for s in bucket {
                f(&Event { time: start + (s.key >> SEQ_BITS), seq: s.key & ((1 << SEQ_BITS) - 1), a: s.a, b: s.b });
            }
        }
        self.overflow.iter().for_each(|e| f(e));
    }

    pub fn is_empty(&self) -> bool {
        self.seq_next >> 8 == self.processed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pop_until_stops_at_the_limit_and_keeps_the_event() {
        let mut q = EventQueue::new();
        q.at(5, Kind::Rto, 1, 0);
        q.at(3_000_000_000, Kind::Pace, 2, 0); // beyond the calendar horizon: overflow heap
        assert_eq!(q.pop_until(10).map(|e| (e.time, e.a)), Ok((5, 1)));
        assert_eq!(q.pop_until(2_999_999_999).err(), Some(Stop::Later));
        assert_eq!((q.now, q.len()), (5, 1));
        assert_eq!(q.pop_until(u64::MAX).map(|e| (e.time, e.kind(), e.a)), Ok((3_000_000_000, Kind::Pace, 2)));
        assert_eq!(q.pop_until(u64::MAX).err(), Some(Stop::Empty));
    }

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
    fn calendar_pops_in_time_then_insertion_order() {
        use rand::{Rng, SeedableRng};
        let mut r = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(3);
        let mut q = EventQueue::new();
        let mut reference: Vec<(Time, u64, u32)> = Vec::new();
        let mut popped = Vec::new();
        let mut id = 0u32;
        for _ in 0..20_000 {
            if r.gen_bool(0.55) || q.is_empty() {
                // Many ties (a coarse grid near now), some far beyond the calendar horizon.
                let t = q.now + if r.gen_bool(0.05) { r.gen_range(0..20_000_000_000u64) } else { r.gen_range(0..50u64) * 100_000 };
                q.at(t, Kind::Arrive, id, 0);
                reference.push((t, id as u64, id));
                id += 1;
            } else {
                let e = q.pop().unwrap();
                popped.push((e.time, e.a));
            }
        }
        while let Some(e) = q.pop() {
            popped.push((e.time, e.a));
        }
        let mut times: Vec<Time> = popped.iter().map(|p| p.0).collect();
        let sorted = { let mut s = times.clone(); s.sort(); s };
        assert_eq!(times, sorted, "pop order must be non-decreasing in time");
        // FIFO among equal times.
        for w in popped.windows(2) {
            if w[0].0 == w[1].0 {
                assert!(w[0].1 < w[1].1, "ties must pop in insertion order");
            }
        }
        times.dedup();
        assert_eq!(popped.len(), reference.len());
    }

    #[test]
    fn for_each_sees_every_queued_event_at_its_time() {
        // Events in the current window, in ring buckets (including ones that wrapped past the
        // ring index of the current window) and in the overflow heap, after some pops.
        use rand::{Rng, SeedableRng};
        let mut r = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(7);
        let mut q = EventQueue::new();
        let mut live: Vec<(Time, u32)> = Vec::new();
        for id in 0..5_000u32 {
            let t = q.now + if r.gen_bool(0.1) { r.gen_range(0..10_000_000_000u64) } else { r.gen_range(0..3_000_000u64) };
            q.at(t, Kind::Arrive, id, 0);
            live.push((t, id));
            if r.gen_bool(0.4) {
                let e = q.pop().unwrap();
                let k = live.iter().position(|&(_, a)| a == e.a).unwrap();
                assert_eq!(live.swap_remove(k).0, e.time);
            }
        }
        let mut seen = Vec::new();
        q.for_each(|e| seen.push((e.time, e.a)));
        seen.sort();
        live.sort();
        assert_eq!(q.len(), live.len());
        assert_eq!(seen, live);
    }

    #[test]
    fn poll_reports_leave_the_order_and_the_count_unchanged() {
        // The same random schedule popped twice, with `pop_until` and with `pop_or_poll`: the
        // same events in the same order, `processed()` equal to the events popped after every
        // pop, and one `Stop::Poll` per `POLL_EVERY` events, each at a window switch.
        use rand::{Rng, SeedableRng};
        let run = |poll: bool| {
            let mut r = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(11);
            let mut q = EventQueue::new();
            let (mut out, mut polls, mut id) = (Vec::new(), Vec::new(), 0u32);
            for _ in 0..8 {
                q.at(q.now, Kind::Arrive, id, 0);
                id += 1;
            }
            loop {
                let got = if poll { q.pop_or_poll(u64::MAX) } else { q.pop_until(u64::MAX) };
                match got {
                    Ok(e) => {
                        out.push((e.time, e.seq, e.a));
                        assert_eq!(q.processed(), out.len() as u64);
                        if id < 1_000_000 {
                            // 0-2 new events (about 4,000 queued), some in the current window
                            // (same time: a sorted insertion into it), most a few windows ahead.
                            let n = if q.len() < 4_000 { r.gen_range(1..3) } else { r.gen_range(0..2) };
                            for _ in 0..n {
                                let dt = if r.gen_bool(0.2) { 0 } else { r.gen_range(0..2_000_000u64) };
                                q.at(q.now + dt, Kind::TxDone, id, 0);
                                id += 1;
                            }
                        }
                    }
                    Err(Stop::Poll) => {
                        assert!(poll);
                        assert_eq!(q.head, q.cur.len(), "a poll is reported at a window switch");
                        // The window just popped (all of `cur`) is where the count was reached.
                        polls.push((q.processed(), q.cur.len() as u64));
                    }
                    Err(Stop::Empty) => break,
                    Err(Stop::Later) => unreachable!(),
                }
            }
            assert_eq!(q.len(), 0);
            (out, polls)
        };
        let (plain, none) = run(false);
        let (polled, polls) = run(true);
        assert!(none.is_empty());
        assert_eq!(plain, polled);
        assert!(plain.len() as u64 > 3 * POLL_EVERY, "{} events", plain.len());
        assert_eq!(polls.len() as u64, plain.len() as u64 / POLL_EVERY);
        for (k, &(n, window)) in polls.iter().enumerate() {
            // Reported at the first window switch once the count is due, never before.
            let due = (k as u64 + 1) * POLL_EVERY;
            assert!(n >= due && n - window < due, "poll {k} after {n} events (due at {due}, window of {window})");
        }
        // The order is exactly (time, seq).
        let mut sorted = plain.clone();
        sorted.sort();
        assert_eq!(plain, sorted);
    }

    #[test]
    #[should_panic(expected = "more than 2^37 events")]
    fn the_insertion_counter_is_checked_before_it_can_wrap() {
        let mut q = EventQueue::new();
        q.seq_next = SEQ_CHECK << 8;
        q.at(10_000_000, Kind::Arrive, 0, 0); // a ring bucket: not checked here
        q.pop();
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

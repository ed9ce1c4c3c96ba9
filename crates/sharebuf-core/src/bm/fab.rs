//! Flow-Aware Buffer sharing (FAB), Apostolaki, Vanbever & Ghobadi, Buffer Sizing Workshop 2019;
//! FAB.md §2 ("Our solution: FAB"), §3 (Methodology).
//!
//! DT with several α per port: a packet for queue q is admitted iff q + size ≤ α_x · (B − Q(t)),
//! where α_x is chosen per packet by the *age* of its flow, the packets (or bytes) the flow has
//! sent through this switch: α_1 > α_2 > … for increasing age. The age restarts after the flow
//! has been idle longer than `idle_reset_us`. Flows are told apart by `Packet::flow_key()`.
//!
//! Tiers: a packet of age a uses `alpha_young[k]` for the first k with a < `age_limits[k]`,
//! otherwise the queue's `alpha` (the DT α for old flows). Paper defaults: α = 10 for the first
//! 15 packets, then 0.5. `preset = "code"` matches the ABM authors' ns-3 FAB (notes §2 "FAB"):
//! α = 1024 while the flow's bytes, counting the arriving packet, are below 21 000, 5 ms idle reset.
//! Arrivals count whether admitted or dropped (as the code). See docs/schemes/fab.md.
//!
//! In hardware (FAB.md §4 "Practicality", `mode = "hardware"`), two approximations, each
//! switchable on its own:
//! - `queue_counters = "ingress"`: the ingress pipeline cannot read queue lengths, so it keeps one
//!   byte counter per port, increased by each admitted packet and decreased, at every arrival, for
//!   one port in round-robin order by what that port's line rate dequeued since its counter was last
//!   decreased (the paper's two-memory-block design: "decrease the counter of another queue by an
//!   estimated number of bytes that should have been dequeued since the counter was last
//!   decreased"). q is the port's counter, Q(t) the sum of all counters.
//! - `flow_age = "bloom"`: no per-flow table; flows are aged by duration (§4: "approximate flow
//!   sizes with flow duration"): a flow's start (a SYN) is inserted into the Bloom filter of the
//!   current time window (k hashes over m bits, W filters, the oldest reset as time moves on), and
//!   a packet is young (α = `alpha_young[0]`) while its flow is found in one of the W filters of
//!   the current and previous W − 1 windows; "flows that are no longer contained in a BF are
//!   treated as old". False positives are modelled (hashes seeded by the run seed).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::{check_positive, Admission, BmContext, BufferManager, BufferState, Params, QueueRef, Scheme};
use crate::engine::{Time, PS_PER_US};
use crate::packet::{flags, Packet};
use crate::workload::stream_seed;

/// Multiplicative hasher for the u64 flow keys (no SipHash on the per-packet path).
#[derive(Default)]
pub struct KeyHasher(u64);

impl Hasher for KeyHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(5) ^ b as u64).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
        }
    }
    #[inline]
    fn write_u64(&mut self, k: u64) {
        let x = (k ^ (k >> 31)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        self.0 = x ^ (x >> 29);
    }
}

#[derive(Clone, Copy, Debug)]
struct FlowAge {
    age: u64,
    last_ps: Time,
}

/// Counter units per byte: a counter holds bytes · 8·10¹² (bit·ps per s), so draining a port of
/// r b/s for dt ps removes exactly r·dt units (integer, no rounding drift).
const UNITS_PER_BYTE: u128 = 8 * crate::engine::PS_PER_S as u128;

/// FAB §4 "Approximating queue occupancies": per-port byte counters kept at ingress.
struct IngressCounters {
    units: Vec<u128>,
    total_units: u128,
    last_drain_ps: Vec<Time>,
    rate_bps: Vec<u64>,
    /// The port whose counter the next arrival decreases (round robin over all ports).
    next: usize,
}

impl IngressCounters {
    fn new(rate_bps: &[u64]) -> Self {
        let n = rate_bps.len();
        IngressCounters { units: vec![0; n], total_units: 0, last_drain_ps: vec![0; n], rate_bps: rate_bps.to_vec(), next: 0 }
    }

    /// The decrement stage of one arrival: the next port in round-robin order loses what its line
    /// rate dequeued since its last decrement (never below zero).
    #[inline]
    fn drain_next(&mut self, now: Time) {
        let d = self.next;
        self.next = if d + 1 == self.units.len() { 0 } else { d + 1 };
        self.drain(d, now);
    }

    /// Port d loses r_d · (now − t_d), never below zero.
    #[inline]
    fn drain(&mut self, d: usize, now: Time) {
        let dec = (self.rate_bps[d] as u128 * now.saturating_sub(self.last_drain_ps[d]) as u128).min(self.units[d]);
        self.units[d] -= dec;
        self.total_units -= dec;
        self.last_drain_ps[d] = now;
    }

    /// `drain_interval_us`: every port drained at once (a periodic timer, e.g. a packet generator).
    fn drain_all(&mut self, now: Time) {
        for d in 0..self.units.len() {
            self.drain(d, now);
        }
    }

    #[inline]
    fn add(&mut self, port: usize, bytes: u64) {
        let u = bytes as u128 * UNITS_PER_BYTE;
        self.units[port] += u;
        self.total_units += u;
    }

    /// The port's estimated queue (bytes, fractional).
    #[inline]
    fn port_bytes(&self, port: usize) -> f64 {
        self.units[port] as f64 / UNITS_PER_BYTE as f64
    }

    /// Estimated free buffer, B − Σ counters (never negative).
    #[inline]
    fn remaining_bytes(&self, total_bytes: u64) -> f64 {
        (total_bytes as f64 - self.total_units as f64 / UNITS_PER_BYTE as f64).max(0.0)
    }
}

/// Most hash functions a Bloom filter may use (positions are kept in a fixed array).
const MAX_HASHES: usize = 16;

/// FAB §4 "Maintaining per-flow state at scale": one Bloom filter (m bits, k hashes) per start-time
/// window, W windows; the filter of a window is reset when its slot is reused W windows later.
pub(crate) struct BloomWindows {
    bits: Vec<u64>,
    words_per_window: usize,
    m_bits: u64,
    seeds: Vec<u64>,
    /// The window index whose flows each slot holds (u64::MAX: none yet).
    slot_window: Vec<u64>,
    window_ps: Time,
}

impl BloomWindows {
    pub(crate) fn new(m_bits: u64, k: usize, windows: usize, window_ps: Time, seed: u64) -> Self {
        let words = m_bits.div_ceil(64) as usize;
        BloomWindows {
            bits: vec![0; words * windows],
            words_per_window: words,
            m_bits,
            seeds: (0..k as u64).map(|i| stream_seed(seed, i)).collect(),
            slot_window: vec![u64::MAX; windows],
            window_ps,
        }
    }

    /// The k bit positions of `key` (hash i = SplitMix64 of (seed_i, key), reduced to [0, m) by
    /// multiply-shift).
    #[inline]
    fn positions(&self, key: u64) -> [u64; MAX_HASHES] {
        let mut pos = [0u64; MAX_HASHES];
        for (i, &s) in self.seeds.iter().enumerate() {
            pos[i] = ((stream_seed(s, key) as u128 * self.m_bits as u128) >> 64) as u64;
        }
        pos
    }

    /// Insert `key` into the filter of the window holding `now` (resetting that slot first if it
    /// still holds an expired window).
    pub(crate) fn insert(&mut self, key: u64, now: Time) {
        let w = now / self.window_ps;
        let s = (w % self.slot_window.len() as u64) as usize;
        let base = s * self.words_per_window;
        if self.slot_window[s] != w {
            self.bits[base..base + self.words_per_window].fill(0);
            self.slot_window[s] = w;
        }
        let pos = self.positions(key);
        for &b in &pos[..self.seeds.len()] {
            self.bits[base + (b / 64) as usize] |= 1 << (b % 64);
        }
    }

    /// Whether `key` is found in the filter of the current window or of one of the W − 1 before it.
    pub(crate) fn contains(&self, key: u64, now: Time) -> bool {
        let w = now / self.window_ps;
        let n_win = self.slot_window.len() as u64;
        let pos = self.positions(key);
        self.slot_window.iter().enumerate().any(|(s, &sw)| {
            sw != u64::MAX && sw <= w && w - sw < n_win && {
                let base = s * self.words_per_window;
                pos[..self.seeds.len()].iter().all(|&b| self.bits[base + (b / 64) as usize] >> (b % 64) & 1 == 1)
            }
        })
    }
}

pub struct Fab {
    alpha: Vec<f64>,
    alpha_young: Vec<f64>,
    age_limits: Vec<u64>,
    bytes: bool,
    includes_packet: bool,
    /// 0 = never reset.
    idle_ps: Time,
    flows: HashMap<u64, FlowAge, BuildHasherDefault<KeyHasher>>,
    /// `queue_counters = "ingress"` (FAB §4); None: the true queue lengths.
    ingress: Option<IngressCounters>,
    /// `flow_age = "bloom"` (FAB §4); None: the exact per-flow age table.
    bloom: Option<BloomWindows>,
    /// `drain_interval_us` (0 = none): every ingress counter is also drained this often.
    drain_ps: Time,
    /// Next purge of idle flows (the purge runs on the tick, which may be the drain's).
    next_purge_ps: Time,
}

/// A whole-number parameter in [lo, hi].
fn whole(p: &Params, key: &str, default: u64, lo: u64, hi: u64) -> Result<u64, String> {
    let v = p.f64_or(key, default as f64)?;
    if !(v.is_finite() && v.fract() == 0.0 && v >= lo as f64 && v <= hi as f64) {
        return Err(format!("switch.bm.{key} = {v}: not allowed; must be a whole number in [{lo}, {hi}]"));
    }
    Ok(v as u64)
}

pub fn build(p: &Params, ctx: &BmContext) -> Result<Scheme, String> {
    Ok(Fab::new(p, ctx)?.into())
}

impl Fab {
    pub(crate) fn new(p: &Params, ctx: &BmContext) -> Result<Fab, String> {
        const AGE_KEYS: [&str; 4] = ["age_limits", "age_unit", "age_includes_packet", "idle_reset_us"];
        const BLOOM_KEYS: [&str; 4] = ["bloom_bits", "bloom_hashes", "bloom_windows", "window_us"];
        p.allow_only("fab", &["preset", "alpha", "alpha_young", "age_limits", "age_unit", "age_includes_packet", "idle_reset_us", "mode", "queue_counters", "flow_age", "bloom_bits", "bloom_hashes", "bloom_windows", "window_us", "drain_interval_us"])?;
        let hw = p.str_or("mode", "ideal", &["ideal", "hardware"])? == "hardware";
        let ingress = p.str_or("queue_counters", if hw { "ingress" } else { "exact" }, &["exact", "ingress"])? == "ingress";
        let bloom = p.str_or("flow_age", if hw { "bloom" } else { "exact" }, &["exact", "bloom"])? == "bloom";
        let (unused, why) = if bloom { (&AGE_KEYS, "flow_age = 'bloom' ages flows by start-time windows") } else { (&BLOOM_KEYS, "flow_age = 'exact' keeps a per-flow table") };
        if let Some(k) = unused.iter().find(|k| p.raw(k).is_some()) {
            return Err(format!("switch.bm.{k}: not used when {why}; remove it or set flow_age = '{}'", if bloom { "exact" } else { "bloom" }));
        }
        let drain_us = p.f64_or("drain_interval_us", 0.0)?;
        if !(drain_us.is_finite() && drain_us >= 0.0) {
            return Err(format!("switch.bm.drain_interval_us = {drain_us}: not allowed; must be ≥ 0 (0 = counters drained only at arrivals)"));
        }
        if drain_us > 0.0 && !ingress {
            return Err("switch.bm.drain_interval_us: not used when queue_counters = 'exact'; remove it or set queue_counters = 'ingress'".to_string());
        }
        if ingress && ctx.n_queues != 1 {
            return Err(format!("switch.bm.queue_counters = 'ingress': needs queues_per_port = 1 (FAB §4 keeps one counter per port), got {}", ctx.n_queues));
        }
        let code = p.str_or("preset", "paper", &["paper", "code"])? == "code";
        let alpha = p.per_queue("alpha", ctx.n_queues, Some(0.5))?;
        check_positive("alpha", &alpha)?;
        let alpha_young = p.f64_list("alpha_young")?.unwrap_or_else(|| vec![if code { 1024.0 } else { 10.0 }]);
        check_positive("alpha_young", &alpha_young)?;
        if bloom && alpha_young.len() != 1 {
            return Err(format!("switch.bm.alpha_young: {} values given; flow_age = 'bloom' has one young tier (found in a recent window), so give one value", alpha_young.len()));
        }
        let bytes = p.str_or("age_unit", if code { "bytes" } else { "packets" }, &["packets", "bytes"])? == "bytes";
        // The code's 21,000 B (15 × 1,400 B payloads, counted on 1,432-byte packets) as the same
        // number of this scenario's full packets (issue #9 item 6, BmContext::code_bytes).
        let limits = p.f64_list("age_limits")?.unwrap_or_else(|| vec![if code { ctx.code_bytes(21_000.0).round() } else { 15.0 }]);
        if limits.len() != alpha_young.len() {
            return Err(format!("switch.bm.age_limits: {} values given, expected {} (one per alpha_young)", limits.len(), alpha_young.len()));
        }
        for (k, &l) in limits.iter().enumerate() {
            if !(l.is_finite() && l >= 1.0 && l.fract() == 0.0) || (k > 0 && l <= limits[k - 1]) {
                return Err(format!("switch.bm.age_limits: {l} is not allowed; limits must be whole numbers ≥ 1, strictly increasing"));
            }
        }
        let bloom = if bloom {
            let m = whole(p, "bloom_bits", 4096, 64, 1 << 30)?;
            let k = whole(p, "bloom_hashes", 3, 1, MAX_HASHES as u64)? as usize;
            let w = whole(p, "bloom_windows", 4, 1, 1024)? as usize;
            let win_us = p.f64_or("window_us", 500.0)?;
            if !(win_us.is_finite() && win_us * PS_PER_US as f64 >= 1.0) {
                return Err(format!("switch.bm.window_us = {win_us}: not allowed; must be > 0"));
            }
            Some(BloomWindows::new(m, k, w, (win_us * PS_PER_US as f64).round() as Time, ctx.seed))
        } else {
            None
        };
        let includes_packet = p.bool_or("age_includes_packet", code)?;
        let idle_us = p.f64_or("idle_reset_us", 5_000.0)?;
        if !(idle_us.is_finite() && idle_us >= 0.0) {
            return Err(format!("switch.bm.idle_reset_us: {idle_us} is not allowed; must be ≥ 0 (0 = never reset)"));
        }
        Ok(Fab {
            alpha,
            alpha_young,
            age_limits: limits.iter().map(|&l| l as u64).collect(),
            bytes,
            includes_packet,
            idle_ps: (idle_us * PS_PER_US as f64).round() as Time,
            flows: HashMap::default(),
            ingress: ingress.then(|| IngressCounters::new(ctx.port_rate_bps)),
            bloom,
            drain_ps: (drain_us * PS_PER_US as f64).round() as Time,
            next_purge_ps: 0,
        })
    }

    fn purge_interval_ps(&self) -> Time {
        self.idle_ps.max(100 * PS_PER_US)
    }

    #[inline]
    fn unit(&self, pkt: &Packet) -> u64 {
        if self.bytes {
            pkt.size_bytes as u64
        } else {
            1
        }
    }

    /// The flow's age before `pkt` arrives at `now` (after the idle reset).
    #[inline]
    fn age_before(&self, key: u64, now: Time) -> u64 {
        match self.flows.get(&key) {
            Some(f) if self.idle_ps == 0 || now.saturating_sub(f.last_ps) <= self.idle_ps => f.age,
            _ => 0,
        }
    }

    /// The α for a packet of a flow of age `age_before` (the age the tiers compare).
    #[inline]
    fn alpha_for(&self, q: QueueRef, pkt: &Packet, age_before: u64) -> f64 {
        let a = if self.includes_packet { age_before + self.unit(pkt) } else { age_before };
        for (k, &l) in self.age_limits.iter().enumerate() {
            if a < l {
                return self.alpha_young[k];
            }
        }
        self.alpha[q.queue]
    }
}

impl BufferManager for Fab {
    fn name(&self) -> &'static str {
        "fab"
    }

    fn admit(&mut self, st: &BufferState, q: QueueRef, pkt: &Packet, now: Time) -> Admission {
        let key = pkt.flow_key();
        let alpha = match &mut self.bloom {
            Some(b) => {
                // A flow starts with its SYN (and its reverse direction with the SYN-ACK).
                if pkt.has(flags::SYN) {
                    b.insert(key, now);
                }
                if b.contains(key, now) {
                    self.alpha_young[0]
                } else {
                    self.alpha[q.queue]
                }
            }
            None => {
                let age = self.age_before(key, now);
                let alpha = self.alpha_for(q, pkt, age);
                let unit = self.unit(pkt);
                self.flows.insert(key, FlowAge { age: age + unit, last_ps: now });
                alpha
            }
        };
        let size = pkt.size_bytes as u64;
        let admit = match &mut self.ingress {
            None => (st.qbytes(q) + size) as f64 <= alpha * st.remaining_bytes() as f64,
            Some(c) => {
                c.drain_next(now);
                let ok = c.port_bytes(q.port) + size as f64 <= alpha * c.remaining_bytes(st.total_bytes);
                if ok {
                    c.add(q.port, size);
                }
                ok
            }
        };
        if admit {
            Admission::Accept
        } else {
            Admission::Drop
        }
    }

    fn threshold_bytes(&self, st: &BufferState, q: QueueRef, pkt: &Packet, now: Time) -> Option<f64> {
        let alpha = match &self.bloom {
            Some(b) => {
                if b.contains(pkt.flow_key(), now) || pkt.has(flags::SYN) {
                    self.alpha_young[0]
                } else {
                    self.alpha[q.queue]
                }
            }
            None => self.alpha_for(q, pkt, self.age_before(pkt.flow_key(), now)),
        };
        let rem = match &self.ingress {
            Some(c) => c.remaining_bytes(st.total_bytes),
            None => st.remaining_bytes() as f64,
        };
        Some(alpha * rem)
    }

    /// Forget flows idle longer than the reset gap (their age would restart at 0 anyway), and
    /// drain every ingress counter with `drain_interval_us`.
    fn tick_interval_ps(&self) -> Option<Time> {
        let purge = (self.bloom.is_none() && self.idle_ps > 0).then_some(self.purge_interval_ps());
        let drain = (self.drain_ps > 0).then_some(self.drain_ps);
        match (purge, drain) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn on_tick(&mut self, _st: &BufferState, now: Time) {
        if self.drain_ps > 0 {
            if let Some(c) = &mut self.ingress {
                c.drain_all(now);
            }
        }
        if self.bloom.is_none() && self.idle_ps > 0 && now >= self.next_purge_ps {
            let gap = self.idle_ps;
            self.flows.retain(|_, f| now.saturating_sub(f.last_ps) <= gap);
            self.next_purge_ps = now + self.purge_interval_ps();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bm::testutil::*;
    use crate::packet::flags;
    use serde_json::{json, Value};

    fn mk(params: Value) -> Fab {
        let params = params.as_object().unwrap().clone();
        let ctx = BmContext { buffer_bytes: 100_000, n_queues: 1, port_rate_bps: &[1; 2], base_rtt_ps: 0, seed: 1, switch_index: 0, mss_bytes: 1448, header_bytes: 54 };
        Fab::new(&Params::new("switch.bm", &params), &ctx).unwrap()
    }

    fn fpkt(flow: u32, size: u32) -> Packet {
        Packet { flow, size_bytes: size, flags: flags::DATA, ..Default::default() }
    }

    const Q: QueueRef = QueueRef { port: 0, queue: 0 };

    #[test]
    fn paper_first_15_packets_get_alpha_10_then_half() {
        let mut bm = mk(json!({}));
        let mut st = state(100_000, 2, 1);
        st.on_enqueue(QueueRef { port: 1, queue: 0 }, 40_000); // R = 60 000
        for k in 0..20u64 {
            let t = bm.threshold_bytes(&st, Q, &fpkt(7, 1_500), k).unwrap();
            let want = if k < 15 { 10.0 * 60_000.0 } else { 0.5 * 60_000.0 };
            assert_eq!(t, want, "packet {k}");
            bm.admit(&st, Q, &fpkt(7, 1_500), k);
        }
        // Another flow is still young; queue 30 000 B: an old packet (0.5·R = 30 000) is refused,
        // a young one admitted.
        st.on_enqueue(Q, 30_000);
        let r = 30_000.0;
        assert_eq!(bm.threshold_bytes(&st, Q, &fpkt(8, 1_500), 20), Some(10.0 * r));
        assert_eq!(bm.admit(&st, Q, &fpkt(8, 1_500), 20), Admission::Accept);
        assert_eq!(bm.admit(&st, Q, &fpkt(7, 1_500), 21), Admission::Drop);
    }

    #[test]
    fn age_resets_after_idle_gap_and_counts_drops() {
        let mut bm = mk(json!({"idle_reset_us": 5.0}));
        let st = state(100_000, 2, 1);
        let us = PS_PER_US;
        // 15 packets at t = 0..14 µs (1 µs apart: never idle) make the flow old.
        for k in 0..15 {
            bm.admit(&st, Q, &fpkt(3, 1_500), k * us);
        }
        assert_eq!(bm.threshold_bytes(&st, Q, &fpkt(3, 1_500), 15 * us), Some(0.5 * 100_000.0));
        // A gap of exactly 5 µs is not longer than the reset gap: still old.
        assert_eq!(bm.threshold_bytes(&st, Q, &fpkt(3, 1_500), 19 * us), Some(0.5 * 100_000.0));
        // 5 µs + 1 ps: the age restarts, young again for 15 more packets.
        let t0 = 19 * us + 1;
        assert_eq!(bm.threshold_bytes(&st, Q, &fpkt(3, 1_500), t0), Some(10.0 * 100_000.0));
        // Drops count too: the buffer refuses everything (queue full under any α), yet the age grows.
        let mut full = state(100_000, 2, 1);
        full.on_enqueue(Q, 100_000);
        for k in 0..15 {
            assert_eq!(bm.admit(&full, Q, &fpkt(3, 1_500), t0 + k), Admission::Drop);
        }
        assert_eq!(bm.threshold_bytes(&st, Q, &fpkt(3, 1_500), t0 + 15), Some(0.5 * 100_000.0));
        // The periodic purge forgets idle flows; a purged flow is young.
        assert_eq!(bm.tick_interval_ps(), Some(100 * us));
        bm.on_tick(&st, t0 + 15 + 5 * us + 1);
        assert!(bm.flows.is_empty());
    }

    #[test]
    fn code_preset_bytes_including_the_packet() {
        let mut bm = mk(json!({"preset": "code"}));
        let st = state(100_000, 2, 1);
        // In the code 1,432-B segments give 14 · 1,432 = 20,048 < 21,000 and the 15th reaches 21,480:
        // 14 young packets. The limit is kept in packets (21,000/1,432 · 1,502 = 22,027 B), so
        // full 1,502-B wire packets give the same 14: 14 · 1,502 = 21,028 < 22,027 ≤ 15 · 1,502.
        for k in 0..16u64 {
            let want = if k < 14 { 1024.0 * 100_000.0 } else { 0.5 * 100_000.0 };
            assert_eq!(bm.threshold_bytes(&st, Q, &fpkt(1, 1_502), k), Some(want), "packet {k}");
            bm.admit(&st, Q, &fpkt(1, 1_502), k);
        }
        // Idle 5 ms resets it.
        assert_eq!(bm.threshold_bytes(&st, Q, &fpkt(1, 1_502), 16 + 5_000 * PS_PER_US), Some(1024.0 * 100_000.0));
    }

    #[test]
    fn three_tiers_and_directions_are_separate_flows() {
        let mut bm = mk(json!({"alpha_young": [8, 2], "age_limits": [2, 4], "alpha": 0.25}));
        let st = state(100_000, 2, 1);
        let want = [8.0, 8.0, 2.0, 2.0, 0.25, 0.25];
        for (k, w) in want.iter().enumerate() {
            assert_eq!(bm.threshold_bytes(&st, Q, &fpkt(5, 100), k as Time), Some(w * 100_000.0));
            bm.admit(&st, Q, &fpkt(5, 100), k as Time);
        }
        // The same flow id to another destination (its ACK direction) is another key: young.
        let mut ack = fpkt(5, 64);
        ack.dst = 9;
        assert_eq!(bm.threshold_bytes(&st, Q, &ack, 6), Some(8.0 * 100_000.0));
    }

    fn mk_ctx(params: Value, rates: &[u64], seed: u64) -> Fab {
        let params = params.as_object().unwrap().clone();
        let ctx = BmContext { buffer_bytes: 100_000, n_queues: 1, port_rate_bps: rates, base_rtt_ps: 0, seed, switch_index: 0, mss_bytes: 1448, header_bytes: 54 };
        Fab::new(&Params::new("switch.bm", &params), &ctx).unwrap()
    }

    fn counter(bm: &Fab, port: usize) -> f64 {
        bm.ingress.as_ref().unwrap().port_bytes(port)
    }

    /// FAB §4 ingress counters by hand: 2 ports at 8 Gb/s (1 byte per ns), α = 1 for every packet.
    /// Each arrival first decreases one port's counter in round-robin order (0, 1, 0, ...) by
    /// 1 B/ns × the time since that counter's last decrease, then the admitted packet is added to
    /// its own port's counter; Q(t) is the sum of the counters.
    #[test]
    fn ingress_counters_drain_at_line_rate_round_robin() {
        let us = PS_PER_US;
        let mut bm = mk_ctx(json!({"queue_counters": "ingress", "alpha": 1, "alpha_young": [1]}), &[8_000_000_000; 2], 1);
        let st = state(100_000, 2, 1); // the true state: never read for q or Q in this mode
        let p0 = QueueRef { port: 0, queue: 0 };
        let p1 = QueueRef { port: 1, queue: 0 };
        // t = 0: drains port 0 (nothing), admits 1500 B to port 0.
        assert_eq!(bm.admit(&st, p0, &fpkt(1, 1_500), 0), Admission::Accept);
        assert_eq!((counter(&bm, 0), counter(&bm, 1)), (1_500.0, 0.0));
        // t = 1 µs: drains port 1 (empty), adds 1500 B to port 1. Port 0 is NOT drained (stale: its
        // true queue would be 500 B by now).
        assert_eq!(bm.admit(&st, p1, &fpkt(2, 1_500), us), Admission::Accept);
        assert_eq!((counter(&bm, 0), counter(&bm, 1)), (1_500.0, 1_500.0));
        // t = 1.2 µs: drains port 0 by 1.2 µs × 1 B/ns = 1200 B -> 300 B; then 1000 B join port 1.
        assert_eq!(bm.admit(&st, p1, &fpkt(2, 1_000), 1_200_000), Admission::Accept);
        assert_eq!((counter(&bm, 0), counter(&bm, 1)), (300.0, 2_500.0));
        // The threshold uses B − Σ counters = 100 000 − 2 800.
        assert_eq!(bm.threshold_bytes(&st, p1, &fpkt(2, 100), 1_200_000), Some(97_200.0));
        // t = 5 µs: drains port 1 by (5 − 1) µs = 4000 B > 2500 B: clamped at 0 (no credit banked).
        assert_eq!(bm.admit(&st, p0, &fpkt(1, 700), 5 * us), Admission::Accept);
        assert_eq!((counter(&bm, 0), counter(&bm, 1)), (1_000.0, 0.0));
        // t = 5.25 µs: drains port 0 by (5.25 − 1.2) µs = 4050 B -> 0; port 1 gets 64 B.
        assert_eq!(bm.admit(&st, p1, &fpkt(2, 64), 5_250_000), Admission::Accept);
        assert_eq!((counter(&bm, 0), counter(&bm, 1)), (0.0, 64.0));

        // A refused packet is not counted. α = 0.02: port 0 holds 1500 B after its first packet
        // (1500 ≤ 0.02 · 100 000); at 0.5 µs port 1 is drained (empty) and a 600-B packet for port 0
        // sees 1500 + 600 = 2100 > 0.02 · (100 000 − 1500) = 1970: dropped, counters unchanged.
        let mut bm = mk_ctx(json!({"queue_counters": "ingress", "alpha": 0.02, "alpha_young": [0.02]}), &[8_000_000_000; 2], 1);
        assert_eq!(bm.admit(&st, p0, &fpkt(1, 1_500), 0), Admission::Accept);
        assert_eq!(bm.admit(&st, p0, &fpkt(1, 600), us / 2), Admission::Drop);
        assert_eq!((counter(&bm, 0), counter(&bm, 1)), (1_500.0, 0.0));
        // drain_interval_us = 2: the tick drains every port at once. 1500 B at t = 0 to port 0 (the
        // arrival drains port 0: nothing); the tick at 1 µs leaves 1500 − 1000 = 500 B; at 2 µs, 0.
        let mut per = mk_ctx(json!({"queue_counters": "ingress", "drain_interval_us": 2, "idle_reset_us": 0}), &[8_000_000_000; 2], 1);
        assert_eq!(per.tick_interval_ps(), Some(2 * us));
        per.admit(&st, p0, &fpkt(1, 1_500), 0);
        per.on_tick(&st, us);
        assert_eq!(counter(&per, 0), 500.0);
        per.on_tick(&st, 2 * us);
        assert_eq!((counter(&per, 0), counter(&per, 1)), (0.0, 0.0));

        // With the true queue (queue_counters = exact) the empty true state admits it (600 ≤ 2000).
        let mut exact = mk_ctx(json!({"alpha": 0.02, "alpha_young": [0.02]}), &[8_000_000_000; 2], 1);
        assert_eq!(exact.admit(&st, p0, &fpkt(1, 600), us / 2), Admission::Accept);
    }

    /// The Bloom filter of one window: the measured false-positive rate on random ids equals the
    /// closed form (1 − e^(−kn/m))^k within 5% (≈ 4 standard deviations of the estimate: binomial
    /// over 10⁶ probes, 0.7%, and the fill's spread over 10 seeds, ≈ 1.3%), and no inserted id is
    /// ever missed (no false negatives).
    #[test]
    fn bloom_false_positive_rate_matches_closed_form_no_false_negatives() {
        use rand::{Rng, SeedableRng};
        let (m, k, n, probes, seeds) = (8_192u64, 4usize, 1_000usize, 100_000usize, 10u64);
        let mut fp = 0usize;
        for seed in 0..seeds {
            let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(1000 + seed);
            let mut bf = BloomWindows::new(m, k, 1, 1_000 * PS_PER_US, seed);
            let ids: Vec<u64> = (0..n).map(|_| rng.gen()).collect();
            for &id in &ids {
                bf.insert(id, 0);
            }
            assert!(ids.iter().all(|&id| bf.contains(id, 0)), "false negative (seed {seed})");
            fp += (0..probes).filter(|_| bf.contains(rng.gen(), 0)).count();
        }
        let measured = fp as f64 / (probes as u64 * seeds) as f64;
        let closed = (1.0 - (-(k as f64) * n as f64 / m as f64).exp()).powi(k as i32);
        println!("bloom fp measured {measured:.5} closed form {closed:.5}");
        assert!((measured / closed - 1.0).abs() < 0.05, "measured {measured}, closed form {closed}");
        // Sanity of the scale: 2.2% here; a filter with one hash would be far off.
        assert!((closed - 0.0222).abs() < 0.0005);
    }

    /// Start-time windows by hand: W = 4 windows of 500 µs. A SYN at 700 µs lands in window 1
    /// ([500, 1000) µs); the flow is young while window 1 is among the current and 3 previous
    /// windows, i.e. until 5 × 500 = 2500 µs (exclusive), when window 5 reuses window 1's slot.
    /// A flow never seen with a SYN is old; the exact table would call it young (first packets).
    #[test]
    fn bloom_mode_young_from_syn_until_window_expires() {
        let us = PS_PER_US;
        let mut bm = mk(json!({"flow_age": "bloom"}));
        let st = state(100_000, 2, 1);
        let young = Some(10.0 * 100_000.0);
        let old = Some(0.5 * 100_000.0);
        let mut syn = fpkt(4, 64);
        syn.flags = flags::SYN;
        assert_eq!(bm.threshold_bytes(&st, Q, &fpkt(4, 1_500), 600 * us), old);
        bm.admit(&st, Q, &syn, 700 * us);
        for t in [700 * us, 999 * us, 1_000 * us, 2_000 * us, 2_500 * us - 1] {
            assert_eq!(bm.threshold_bytes(&st, Q, &fpkt(4, 1_500), t), young, "t = {t} ps");
        }
        assert_eq!(bm.threshold_bytes(&st, Q, &fpkt(4, 1_500), 2_500 * us), old);
        // Data packets do not refresh the age: 100 packets from 700 µs on keep nothing alive.
        for i in 0..100 {
            bm.admit(&st, Q, &fpkt(4, 1_500), 700 * us + i * 10 * us);
        }
        assert_eq!(bm.admit(&st, Q, &fpkt(4, 1_500), 2_600 * us), Admission::Accept); // old, 1500 ≤ 0.5 · 100 000
        assert_eq!(bm.threshold_bytes(&st, Q, &fpkt(4, 1_500), 2_600 * us), old);
        // A new SYN in window 6 (3000 µs) reuses slot 2 (window 2, never filled): young again.
        bm.admit(&st, Q, &syn, 3_000 * us);
        assert_eq!(bm.threshold_bytes(&st, Q, &fpkt(4, 1_500), 3_000 * us), young);
        assert_eq!(bm.tick_interval_ps(), None);
    }

    #[test]
    fn bad_params() {
        let ctx = BmContext { buffer_bytes: 1, n_queues: 1, port_rate_bps: &[1], base_rtt_ps: 0, seed: 1, switch_index: 0, mss_bytes: 1448, header_bytes: 54 };
        let e = |v: Value| build(&Params::new("switch.bm", v.as_object().unwrap()), &ctx).err().unwrap();
        assert!(e(json!({"age_limits": [15, 10], "alpha_young": [10, 5]})).contains("strictly increasing"));
        assert!(e(json!({"age_limits": [15, 30]})).contains("expected 1"));
        assert!(e(json!({"age_unit": "flows"})).contains("allowed: packets, bytes"));
        assert!(e(json!({"idle_reset_us": -1})).contains("idle_reset_us"));
        assert!(e(json!({"age_includes_packet": 1})).contains("true or false"));
        assert!(e(json!({"n_p": 1})).contains("unknown parameter for 'fab'"));
        assert!(e(json!({"mode": "asic"})).contains("allowed: ideal, hardware"));
        assert!(e(json!({"flow_age": "bloom", "idle_reset_us": 5})).contains("switch.bm.idle_reset_us: not used when flow_age = 'bloom'"));
        assert!(e(json!({"bloom_bits": 4096})).contains("switch.bm.bloom_bits: not used when flow_age = 'exact'"));
        assert!(e(json!({"mode": "hardware", "bloom_hashes": 0})).contains("switch.bm.bloom_hashes = 0: not allowed; must be a whole number in [1, 16]"));
        assert!(e(json!({"mode": "hardware", "window_us": 0})).contains("switch.bm.window_us = 0"));
        assert!(e(json!({"flow_age": "bloom", "alpha_young": [8, 2]})).contains("one young tier"));
        assert!(e(json!({"drain_interval_us": 10})).contains("switch.bm.drain_interval_us: not used when queue_counters = 'exact'"));
        assert!(e(json!({"mode": "hardware", "drain_interval_us": -1})).contains("switch.bm.drain_interval_us = -1"));
        let ctx2 = BmContext { n_queues: 2, ..ctx };
        let e2 = build(&Params::new("switch.bm", json!({"queue_counters": "ingress", "alpha": 0.5}).as_object().unwrap()), &ctx2).err().unwrap();
        assert!(e2.contains("queues_per_port = 1"), "{e2}");
    }
}

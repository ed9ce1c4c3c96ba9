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

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::{check_positive, Admission, BmContext, BufferManager, BufferState, Params, QueueRef, Scheme};
use crate::engine::{Time, PS_PER_US};
use crate::packet::Packet;

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

pub struct Fab {
    alpha: Vec<f64>,
    alpha_young: Vec<f64>,
    age_limits: Vec<u64>,
    bytes: bool,
    includes_packet: bool,
    /// 0 = never reset.
    idle_ps: Time,
    flows: HashMap<u64, FlowAge, BuildHasherDefault<KeyHasher>>,
}

pub fn build(p: &Params, ctx: &BmContext) -> Result<Scheme, String> {
    Ok(Fab::new(p, ctx)?.into())
}

impl Fab {
    pub(crate) fn new(p: &Params, ctx: &BmContext) -> Result<Fab, String> {
        p.allow_only("fab", &["preset", "alpha", "alpha_young", "age_limits", "age_unit", "age_includes_packet", "idle_reset_us"])?;
        let code = p.str_or("preset", "paper", &["paper", "code"])? == "code";
        let alpha = p.per_queue("alpha", ctx.n_queues, Some(0.5))?;
        check_positive("alpha", &alpha)?;
        let alpha_young = p.f64_list("alpha_young")?.unwrap_or_else(|| vec![if code { 1024.0 } else { 10.0 }]);
        check_positive("alpha_young", &alpha_young)?;
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
        })
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
        let age = self.age_before(key, now);
        let alpha = self.alpha_for(q, pkt, age);
        let unit = self.unit(pkt);
        self.flows.insert(key, FlowAge { age: age + unit, last_ps: now });
        if (st.qbytes(q) + pkt.size_bytes as u64) as f64 <= alpha * st.remaining_bytes() as f64 {
            Admission::Accept
        } else {
            Admission::Drop
        }
    }

    fn threshold_bytes(&self, st: &BufferState, q: QueueRef, pkt: &Packet, now: Time) -> Option<f64> {
        Some(self.alpha_for(q, pkt, self.age_before(pkt.flow_key(), now)) * st.remaining_bytes() as f64)
    }

    /// Forget flows idle longer than the reset gap (their age would restart at 0 anyway).
    fn tick_interval_ps(&self) -> Option<Time> {
        (self.idle_ps > 0).then_some(self.idle_ps.max(100 * PS_PER_US))
    }

    fn on_tick(&mut self, _st: &BufferState, now: Time) {
        let gap = self.idle_ps;
        self.flows.retain(|_, f| now.saturating_sub(f.last_ps) <= gap);
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
    }
}

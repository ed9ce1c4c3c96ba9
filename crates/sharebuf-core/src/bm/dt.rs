//! Dynamic Thresholds (DT), Choudhury & Hahne 1998; FB.md Eq. 1, ABM.md §2.
//!
//! T_q(t) = α_q · (B − Q(t)); a packet is admitted iff q + size ≤ T_q(t).
//! α is given per queue (= per priority class). In steady state with N congested queues of
//! equal α, each holds α·B/(1 + N·α).

use super::{check_positive, Admission, BmContext, BufferManager, BufferState, Params, QueueRef, Scheme};
use crate::engine::Time;
use crate::packet::Packet;

/// DT's default α (FB §6.2, ABM §4.1 "We configure ABM, DT and FAB with α = 0.5", BSHARE §V).
pub const DEFAULT_ALPHA: f64 = 0.5;

pub struct DynamicThresholds {
    alpha: Vec<f64>,
    /// Per queue, when every α is a power of two 2^k (|k| <= 16) and the buffer is below
    /// 2^40 bytes: (left, right) shifts with q + size ≤ α·(B − Q) ⟺ (q + size) << left ≤
    /// (B − Q) << right, in integers. Every byte count is then below 2^53, so the f64 rule is
    /// exact too and both give the same decision; the integer one needs no conversions.
    /// Empty: the f64 rule.
    shifts: Vec<(u32, u32)>,
}

/// (left, right) shifts for α = 2^k with |k| <= 16, else None (see `DynamicThresholds::shifts`).
fn pow2_shifts(alpha: f64) -> Option<(u32, u32)> {
    (-16..=16).find(|&k| 2f64.powi(k) == alpha).map(|k: i32| if k < 0 { (k.unsigned_abs(), 0) } else { (0, k as u32) })
}

impl DynamicThresholds {
    /// DT's decision for a packet of `size_bytes` to a queue of class `queue` holding
    /// `qbytes`, with `remaining_bytes` = B − Q(t) free: the one rule behind `admit`, which
    /// the switch calls directly with the queue's bytes it has already read.
    #[inline(always)]
    pub(crate) fn admits(&self, queue: usize, qbytes: u64, size_bytes: u32, remaining_bytes: u64) -> bool {
        if let Some(&(left, right)) = self.shifts.get(queue) {
            return (qbytes + size_bytes as u64) << left <= remaining_bytes << right;
        }
        fits(qbytes, size_bytes, self.alpha[queue], remaining_bytes)
    }
}

pub fn build(p: &Params, ctx: &BmContext) -> Result<Scheme, String> {
    p.allow_only("dt", &["alpha"])?;
    // α = 0.5: the value of the FB (§6.2), ABM (§4.1) and BSHARE evaluations.
    let alpha = p.per_queue("alpha", ctx.n_queues, Some(DEFAULT_ALPHA))?;
    check_positive("alpha", &alpha)?;
    let shifts: Option<Vec<(u32, u32)>> = if ctx.buffer_bytes < 1 << 40 { alpha.iter().map(|&a| pow2_shifts(a)).collect() } else { None };
    Ok(DynamicThresholds { alpha, shifts: shifts.unwrap_or_default() }.into())
}

/// DT's threshold for a given α: α·(B − Q(t)).
#[inline]
pub fn threshold_for(st: &BufferState, alpha: f64) -> f64 {
    alpha * st.remaining_bytes() as f64
}

/// q + size ≤ α·(B − Q(t)), with B − Q(t) = `remaining_bytes`.
#[inline(always)]
fn fits(qbytes: u64, size_bytes: u32, alpha: f64, remaining_bytes: u64) -> bool {
    (qbytes + size_bytes as u64) as f64 <= alpha * remaining_bytes as f64
}

/// DT's rule for a given α: admit iff q + size ≤ α·(B − Q(t)). Shared by the schemes that run
/// on top of DT with their own α per queue (FBA, ABM-approx).
#[inline]
pub fn admit_for(st: &BufferState, q: QueueRef, size_bytes: u32, alpha: f64) -> Admission {
    if fits(st.qbytes(q), size_bytes, alpha, st.remaining_bytes()) {
        Admission::Accept
    } else {
        Admission::Drop
    }
}

impl BufferManager for DynamicThresholds {
    fn name(&self) -> &'static str {
        "dt"
    }
    fn uses_queue_hooks(&self) -> bool {
        false
    }
    #[inline]
    fn admit(&mut self, st: &BufferState, q: QueueRef, pkt: &Packet, _now: Time) -> Admission {
        if self.admits(q.queue, st.qbytes(q), pkt.size_bytes, st.remaining_bytes()) {
            Admission::Accept
        } else {
            Admission::Drop
        }
    }
    fn threshold_bytes(&self, st: &BufferState, q: QueueRef, _pkt: &Packet, _now: Time) -> Option<f64> {
        Some(threshold_for(st, self.alpha[q.queue]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bm::testutil::*;
    use serde_json::json;

    #[test]
    fn threshold_equals_alpha_times_remaining() {
        let params = json!({"alpha": [1.0, 0.5]}).as_object().unwrap().clone();
        let ctx = BmContext { buffer_bytes: 100_000, n_queues: 2, port_rate_bps: &[1; 4], base_rtt_ps: 0, seed: 1, switch_index: 0, mss_bytes: 1448, header_bytes: 54 };
        let mut bm = build(&Params::new("switch.bm", &params), &ctx).unwrap();
        let mut st = state(100_000, 4, 2);
        st.on_enqueue(QueueRef { port: 0, queue: 1 }, 30_000);
        st.on_enqueue(QueueRef { port: 2, queue: 0 }, 10_000);
        let q = QueueRef { port: 0, queue: 1 };
        // B - Q = 60,000; alpha 0.5 -> 30,000 = current length: any packet is refused.
        assert_eq!(bm.threshold_bytes(&st, q, &pkt(1, 1), 0), Some(30_000.0));
        assert_eq!(bm.admit(&st, q, &pkt(1, 1), 0), Admission::Drop);
        // Queue 0 of port 0 (alpha 1): T = 60,000.
        let q0 = QueueRef { port: 0, queue: 0 };
        assert_eq!(bm.admit(&st, q0, &pkt(1_500, 0), 0), Admission::Accept);
        st.on_enqueue(q0, 59_000);
        // B - Q = 1,000 < 59,000 + 64.
        assert_eq!(bm.admit(&st, q0, &pkt(64, 0), 0), Admission::Drop);
    }

    #[test]
    fn default_alpha_is_the_papers_half() {
        // FB §6.2 / ABM §4.1 / BSHARE evaluations: α = 0.5, so one congested queue holds
        // α·B/(1+α) = B/3 in steady state; T = 0.5·(B − Q).
        let params = json!({}).as_object().unwrap().clone();
        let ctx = BmContext { buffer_bytes: 90_000, n_queues: 1, port_rate_bps: &[1; 2], base_rtt_ps: 0, seed: 1, switch_index: 0, mss_bytes: 1448, header_bytes: 54 };
        let mut bm = build(&Params::new("switch.bm", &params), &ctx).unwrap();
        let mut st = state(90_000, 2, 1);
        let q = QueueRef { port: 0, queue: 0 };
        st.on_enqueue(q, 29_000);
        // B − Q = 61,000 → T = 30,500: a 1,500-B packet fits exactly, 1,501 does not.
        assert_eq!(bm.threshold_bytes(&st, q, &pkt(1, 0), 0), Some(30_500.0));
        assert_eq!(bm.admit(&st, q, &pkt(1_500, 0), 0), Admission::Accept);
        assert_eq!(bm.admit(&st, q, &pkt(1_501, 0), 0), Admission::Drop);
    }

    #[test]
    fn integer_rule_for_power_of_two_alpha_decides_as_the_f64_rule() {
        // α = 2^k: the integer rule must give the f64 rule's decision (FB.md Eq. 1, admit iff
        // q + size ≤ α·(B − Q)) on random occupancies and on and next to the boundary.
        use rand::{Rng, SeedableRng};
        let mut r = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(11);
        let total = (1u64 << 40) - 1; // the largest buffer that takes the integer rule
        for &a in &[1.0, 0.5, 0.25, 2.0, 8.0, 1.0 / 65536.0, 65536.0, 0.3, 3.0] {
            let params = json!({ "alpha": a }).as_object().unwrap().clone();
            let ctx = BmContext { buffer_bytes: total, n_queues: 1, port_rate_bps: &[1; 2], base_rtt_ps: 0, seed: 1, switch_index: 0, mss_bytes: 1448, header_bytes: 54 };
            let mut bm = build(&Params::new("switch.bm", &params), &ctx).unwrap();
            let Scheme::Dt(dt) = &bm else { panic!("dt builds Scheme::Dt") };
            assert_eq!(dt.shifts.is_empty(), a == 0.3 || a == 3.0, "alpha {a}");
            let q = QueueRef { port: 0, queue: 0 };
            let mut seen = [0u32; 3]; // boundary - 1, on it, + 1 (q + size vs α·(B − Q))
            for i in 0..30_000 {
                let size = r.gen_range(64..=1502u32) as u64;
                let (qlen, other) = if i % 3 == 0 {
                    let other = r.gen_range(0..total / 2);
                    (r.gen_range(0..(total - other) / 2), other)
                } else {
                    // B − Q = R, a multiple of 2^16 so that α·R is a whole number of bytes.
                    let rem = r.gen_range(1..=((total / (a as f64 + 1.0) as u64) >> 16).max(1)) << 16;
                    let delta = r.gen_range(-1i64..=1);
                    let Some(qlen) = ((a * rem as f64) as u64 + 1).checked_sub(size).map(|x| (x as i64 - 1 + delta) as u64) else { continue };
                    if qlen as i64 <= 0 || qlen + rem > total {
                        continue;
                    }
                    (qlen, total - qlen - rem)
                };
                let mut st = state(total, 2, 1);
                st.on_enqueue(QueueRef { port: 1, queue: 0 }, other);
                st.on_enqueue(q, qlen);
                let lhs = (qlen + size) as f64;
                let t = a * st.remaining_bytes() as f64;
                seen[if lhs < t { 0 } else if lhs == t { 1 } else { 2 }] += 1;
                let want = admit_for(&st, q, size as u32, a);
                let got = bm.admit(&st, q, &pkt(size as u32, 0), 0);
                assert_eq!(got, want, "alpha {a}, qlen {qlen}, size {size}, remaining {}", st.remaining_bytes());
            }
            assert!(seen.iter().all(|&n| n > 1_000), "alpha {a}: below / on / above the boundary {seen:?}");
        }
    }

    #[test]
    fn wrong_alpha_count_names_the_key() {
        let params = json!({"alpha": [1.0, 0.5, 0.25]}).as_object().unwrap().clone();
        let ctx = BmContext { buffer_bytes: 1, n_queues: 2, port_rate_bps: &[1], base_rtt_ps: 0, seed: 1, switch_index: 0, mss_bytes: 1448, header_bytes: 54 };
        let e = build(&Params::new("switch.bm", &params), &ctx).err().unwrap();
        assert!(e.contains("switch.bm.alpha") && e.contains("expected 2"), "{e}");
        let params = json!({"alpha": -1.0}).as_object().unwrap().clone();
        assert!(build(&Params::new("switch.bm", &params), &ctx).err().unwrap().contains("> 0"));
    }
}

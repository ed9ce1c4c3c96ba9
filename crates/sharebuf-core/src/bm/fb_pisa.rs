//! FB on a programmable (PISA / Tofino) switch: FB.md §5.1.
//!
//! The traffic manager is not programmable, so FB runs in the ingress pipeline on state that
//! the egress pipeline exports. Each of the design's approximations of ideal FB (fb.rs) is a
//! switch of its own, so that its cost can be measured alone (docs/schemes/fb.md, "On a
//! programmable switch"):
//!
//! * `sync_period_us` (C1/C2, "Queue lengths available to the ingress pipeline"): every packet
//!   leaving a queue writes the queue's length to an egress register; every `sync_period_us`
//!   SYNC packets copy the registers to the ingress (Qlength), set Remaining = B − Σ Qlength and
//!   recount the congested queues per priority and per port. The ingress decides on that copy:
//!   the queue's length, B − Q, N_p and γ are all stale. 0 = the ingress sees the traffic
//!   manager's exact state (ideal FB).
//! * `gamma_count` (§5.1: "SYNC packets count the congested queues per port, which is
//!   equivalent to the normalized dequeue rate per queue given the scheduling algorithm. Each
//!   SYNC packet updates a single port's count with the number of queues above a threshold"):
//!   γ = 1/N_c, N_c = queues of the port holding ≥ `gamma_count_bytes` (the queue itself always
//!   counts). Ideal FB: the queue's share of the port under its scheduler among the congested
//!   queues (`FbCore::gamma`).
//! * `pow2` (C3, "Approximating floating-point operation"): T = Remaining shifted by
//!   s = round(log2(α·γ/N_p)) bits, left if s ≥ 0 and right (integer, rounding down) if s < 0.
//! * `alpha_levels`: α is one of a few configurable values ("8 for Tofino"): α is replaced by
//!   the level nearest in log2 (ties to the lower level; below/above the range: the end levels).
//!
//! With `sync_period_us = 0`, `gamma_count = false`, `pow2 = false` and no `alpha_levels`, every
//! admission equals ideal FB's (same hooks, same floating-point expression); tests check it.

use super::fb::Fb;
use super::{check_positive, Admission, BmContext, BufferManager, BufferState, Params, QueueRef, Scheme};
use crate::engine::{Time, PS_PER_US};
use crate::packet::Packet;

/// The keys of `fb_pisa` on top of FB's.
const PISA_KEYS: &[&str] = &["sync_period_us", "gamma_count", "gamma_count_bytes", "pow2", "alpha_levels"];

pub struct FbPisa {
    fb: Fb,
    /// SYNC period; 0 = the ingress reads the exact state.
    sync_ps: Time,
    /// Egress Qlength register per (port, queue): the queue's length when it last sent a packet.
    egress: Vec<u64>,
    /// The ingress copy (Qlength, Remaining) as of the last SYNC; created at the first packet.
    view: Option<BufferState>,
    gamma_count: bool,
    gamma_count_bytes: u64,
    pow2: bool,
    /// Allowed α values, ascending; empty = any α.
    alpha_levels: Vec<f64>,
    /// Per queue index: the α whose threshold decides whether the queue is congested (FB's).
    flag_alpha: Vec<f64>,
    /// FB's own tick (single-queue classifier purge, measured γ) when a SYNC tick replaces it.
    inner_tick: Option<Time>,
    last_inner_tick: Time,
}

pub fn build(p: &Params, ctx: &BmContext) -> Result<Scheme, String> {
    Ok(FbPisa::new(p, ctx)?.into())
}

/// s = round(log2 ω) (half away from zero); None if ω ≤ 0 (the threshold is 0).
#[inline]
pub fn pow2_shift(omega: f64) -> Option<i32> {
    if omega > 0.0 {
        Some(omega.log2().round() as i32)
    } else {
        None
    }
}

/// The remaining buffer shifted by s bits: R·2^s for s ≥ 0 (saturating), ⌊R / 2^−s⌋ for s < 0.
#[inline]
pub fn shift_bytes(remaining: u64, s: Option<i32>) -> u64 {
    match s {
        None => 0,
        Some(s) if s >= 0 => {
            let s = s as u32;
            if s >= 64 || remaining.leading_zeros() < s {
                u64::MAX
            } else {
                remaining << s
            }
        }
        Some(s) => {
            let s = s.unsigned_abs();
            if s >= 64 {
                0
            } else {
                remaining >> s
            }
        }
    }
}

/// The level of `levels` (ascending, > 0) nearest to `alpha` in log2; ties go to the lower level.
#[inline]
pub fn nearest_level(alpha: f64, levels: &[f64]) -> f64 {
    let i = levels.partition_point(|&l| l < alpha);
    if i == 0 {
        return levels[0];
    }
    if i == levels.len() {
        return levels[i - 1];
    }
    let (lo, hi) = (levels[i - 1], levels[i]);
    if (alpha / lo).log2() <= (hi / alpha).log2() {
        lo
    } else {
        hi
    }
}

impl FbPisa {
    pub fn new(p: &Params, ctx: &BmContext) -> Result<FbPisa, String> {
        let fb = Fb::new_with_keys(p, ctx, "fb_pisa", PISA_KEYS)?;
        let sync_us = p.f64_or("sync_period_us", 0.0)?;
        if !(sync_us >= 0.0 && sync_us.is_finite()) {
            return Err(format!("switch.bm.sync_period_us = {sync_us}: not allowed; must be ≥ 0 (0 = the ingress sees the exact state)"));
        }
        let sync_ps = (sync_us * PS_PER_US as f64).round() as Time;
        if sync_us > 0.0 && sync_ps == 0 {
            return Err(format!("switch.bm.sync_period_us = {sync_us}: below 1 ps; use 0 for the exact state"));
        }
        let gamma_count = p.bool_or("gamma_count", true)?;
        if gamma_count && p.raw("gamma").is_some() {
            return Err("switch.bm.gamma: only used with gamma_count = false (with gamma_count = true γ = 1/N_c, FB §5.1)".into());
        }
        if !gamma_count && p.raw("gamma_count_bytes").is_some() {
            return Err("switch.bm.gamma_count_bytes: only used with gamma_count = true".into());
        }
        let gcb = p.f64_or("gamma_count_bytes", 1.0)?;
        check_positive("gamma_count_bytes", &[gcb])?;
        let pow2 = p.bool_or("pow2", true)?;
        let mut alpha_levels = p.f64_list("alpha_levels")?.unwrap_or_default();
        if p.raw("alpha_levels").is_some() && alpha_levels.is_empty() {
            return Err("switch.bm.alpha_levels = []: not allowed; give at least one α value (or leave the key out for any α)".into());
        }
        check_positive("alpha_levels", &alpha_levels)?;
        alpha_levels.sort_by(f64::total_cmp);
        alpha_levels.dedup();
        let nqt = ctx.port_rate_bps.len() * ctx.n_queues;
        let inner_tick = if sync_ps > 0 { fb.tick_interval_ps() } else { None };
        let flag_alpha = (0..ctx.n_queues).map(|c| fb.flag_alpha(QueueRef { port: 0, queue: c })).collect();
        Ok(FbPisa {
            fb,
            sync_ps,
            egress: vec![0; nqt],
            view: None,
            gamma_count,
            gamma_count_bytes: gcb.ceil() as u64,
            pow2,
            alpha_levels,
            flag_alpha,
            inner_tick,
            last_inner_tick: 0,
        })
    }

    /// The state the ingress decides on: the switch's own (exact) or the last SYNC's copy.
    #[inline]
    fn seen<'a>(&'a self, st: &'a BufferState) -> &'a BufferState {
        match &self.view {
            Some(v) if self.sync_ps > 0 => v,
            _ => st,
        }
    }

    /// The ingress copy before the first SYNC: every register 0 (the empty buffer at t = 0).
    fn ensure_view(&mut self, st: &BufferState) {
        if self.sync_ps > 0 && self.view.is_none() {
            let mut v = st.clone();
            v.queue_bytes.iter_mut().for_each(|b| *b = 0);
            v.occupied_bytes = 0;
            self.view = Some(v);
        }
    }

    /// SYNC: copy the egress registers to the ingress, Remaining = B − Σ Qlength, recount N_p
    /// and the per-port counts on the copy.
    fn sync(&mut self, st: &BufferState) {
        self.ensure_view(st);
        let v = self.view.as_mut().expect("view");
        v.queue_bytes.copy_from_slice(&self.egress);
        v.occupied_bytes = self.egress.iter().sum::<u64>().min(v.total_bytes);
        let (v, a) = (self.view.as_ref().expect("view"), &self.flag_alpha);
        self.fb.core.resync(v, |c| a[c]);
    }

    /// N_c: queues of q's port holding ≥ gamma_count_bytes in `v` (q itself always counts).
    #[inline]
    fn n_c(&self, v: &BufferState, q: QueueRef) -> usize {
        let base = q.port * v.n_queues;
        (0..v.n_queues).filter(|&c| c == q.queue || v.queue_bytes[base + c] >= self.gamma_count_bytes).count()
    }

    /// The threshold (bytes) of `q` for a packet of α `alpha`, on the state `v` the ingress sees.
    #[inline]
    fn threshold(&self, v: &BufferState, q: QueueRef, alpha: f64) -> f64 {
        let a = if self.alpha_levels.is_empty() { alpha } else { nearest_level(alpha, &self.alpha_levels) };
        let g = if self.gamma_count { 1.0 / self.n_c(v, q) as f64 } else { self.fb.core.gamma(v, q) };
        // The same expression as FbCore::omega, so the exact mode is bit-identical to FB.
        let w = a * g / self.fb.core.n_p(v, q);
        if self.pow2 {
            shift_bytes(v.remaining_bytes(), pow2_shift(w)) as f64
        } else {
            w * v.remaining_bytes() as f64
        }
    }
}

impl BufferManager for FbPisa {
    fn name(&self) -> &'static str {
        "fb_pisa"
    }

    #[inline]
    fn admit(&mut self, st: &BufferState, q: QueueRef, pkt: &Packet, now: Time) -> Admission {
        let alpha = if self.sync_ps == 0 {
            self.fb.admit_alpha(st, q, pkt, now)
        } else {
            self.ensure_view(st);
            self.fb.classify_alpha(q, pkt, now)
        };
        let v = self.seen(st);
        let t = self.threshold(v, q, alpha);
        if (v.qbytes(q) + pkt.size_bytes as u64) as f64 <= t {
            Admission::Accept
        } else {
            Admission::Drop
        }
    }

    fn threshold_bytes(&self, st: &BufferState, q: QueueRef, pkt: &Packet, now: Time) -> Option<f64> {
        Some(self.threshold(self.seen(st), q, self.fb.alpha_of(q, pkt, now)))
    }

    #[inline]
    fn on_enqueue(&mut self, st: &BufferState, q: QueueRef, pkt: &Packet, now: Time) {
        if self.sync_ps == 0 {
            self.fb.on_enqueue(st, q, pkt, now);
        } else {
            self.ensure_view(st);
        }
    }

    #[inline]
    fn on_dequeue(&mut self, st: &BufferState, q: QueueRef, pkt: &Packet, now: Time) -> bool {
        if self.sync_ps == 0 {
            return self.fb.on_dequeue(st, q, pkt, now);
        }
        // The departing packet writes its queue's length to the egress register (§5.1 ⑦).
        self.egress[st.idx(q)] = st.qbytes(q);
        true
    }

    fn tick_interval_ps(&self) -> Option<Time> {
        if self.sync_ps > 0 {
            Some(self.sync_ps)
        } else {
            self.fb.tick_interval_ps()
        }
    }

    fn on_tick(&mut self, st: &BufferState, now: Time) {
        if self.sync_ps == 0 {
            return self.fb.on_tick(st, now);
        }
        self.sync(st);
        if let Some(iv) = self.inner_tick {
            if now.saturating_sub(self.last_inner_tick) >= iv {
                self.fb.on_tick(st, now);
                self.last_inner_tick = now;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bm::testutil::*;
    use serde_json::{json, Value};

    const B: u64 = 1_000_000;

    fn ctx<'a>(rates: &'a [u64], nq: usize) -> BmContext<'a> {
        BmContext { buffer_bytes: B, n_queues: nq, port_rate_bps: rates, base_rtt_ps: 8 * PS_PER_US, seed: 1, switch_index: 0, mss_bytes: 1400, header_bytes: 32 }
    }

    fn mk(params: Value, nq: usize, ports: usize) -> FbPisa {
        let m = params.as_object().unwrap().clone();
        let rates = vec![10_000_000_000u64; ports];
        FbPisa::new(&Params::new("switch.bm", &m), &ctx(&rates, nq)).unwrap()
    }

    fn mk_fb(params: Value, nq: usize, ports: usize) -> Fb {
        let m = params.as_object().unwrap().clone();
        let rates = vec![10_000_000_000u64; ports];
        Fb::new(&Params::new("switch.bm", &m), &ctx(&rates, nq)).unwrap()
    }

    fn err(params: Value, nq: usize) -> String {
        let m = params.as_object().unwrap().clone();
        let rates = vec![10_000_000_000u64; 2];
        FbPisa::new(&Params::new("switch.bm", &m), &ctx(&rates, nq)).err().unwrap()
    }

    fn qr(port: usize, queue: usize) -> QueueRef {
        QueueRef { port, queue }
    }

    /// Every approximation off.
    fn exact() -> Value {
        json!({"sync_period_us": 0, "gamma_count": false, "pow2": false})
    }

    fn with(base: Value, extra: Value) -> Value {
        let mut m = base.as_object().unwrap().clone();
        m.extend(extra.as_object().unwrap().clone());
        Value::Object(m)
    }

    fn enq(bm: &mut dyn BufferManager, st: &mut BufferState, q: QueueRef, bytes: u32) {
        st.on_enqueue(q, bytes as u64);
        bm.on_enqueue(st, q, &pkt(bytes, q.queue as u8), 0);
    }
    fn deq(bm: &mut dyn BufferManager, st: &mut BufferState, q: QueueRef, bytes: u32) {
        st.on_dequeue(q, bytes as u64, true);
        assert!(bm.on_dequeue(st, q, &pkt(bytes, q.queue as u8), 0));
    }
    fn thr(bm: &dyn BufferManager, st: &BufferState, q: QueueRef) -> f64 {
        bm.threshold_bytes(st, q, &pkt(1500, q.queue as u8), 0).unwrap()
    }

    /// Exact mode = FB: the same admission and threshold at every step of a pseudo-random
    /// sequence of arrivals and departures (4 ports × 3 queues, queue 2 high), with admitted
    /// packets enqueued; both default (threshold) and nonempty congested definitions.
    #[test]
    fn exact_mode_equals_fb_step_by_step() {
        for cong in ["threshold", "nonempty"] {
            let p = json!({"high": [0, 0, 1], "congested": cong});
            let mut fb = mk_fb(p.clone(), 3, 4);
            let mut hw = mk(with(p, exact()), 3, 4);
            let (mut s1, mut s2) = (state(B, 4, 3), state(B, 4, 3));
            let mut x: u64 = 12345;
            let (mut acc, mut drop) = (0, 0);
            let mut queued: Vec<Vec<u32>> = vec![Vec::new(); 12];
            for step in 0..20_000 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let q = qr((x % 4) as usize, ((x >> 8) % 3) as usize);
                let i = q.port * 3 + q.queue;
                if (x >> 16) % 10 < 6 {
                    let size = 64 + ((x >> 20) % 1437) as u32;
                    let pk = pkt(size, q.queue as u8);
                    let a = fb.admit(&s1, q, &pk, 0);
                    let b = hw.admit(&s2, q, &pk, 0);
                    assert_eq!(a, b, "{cong} step {step}");
                    assert_eq!(thr(&fb, &s1, q).to_bits(), thr(&hw, &s2, q).to_bits());
                    if a == Admission::Accept && s1.remaining_bytes() >= size as u64 {
                        enq(&mut fb, &mut s1, q, size);
                        enq(&mut hw, &mut s2, q, size);
                        queued[i].push(size);
                        acc += 1;
                    } else {
                        drop += 1;
                    }
                } else if !queued[i].is_empty() {
                    let size = queued[i].remove(0);
                    deq(&mut fb, &mut s1, q, size);
                    deq(&mut hw, &mut s2, q, size);
                }
            }
            // Both branches ran (the comparison can fail either way).
            assert!(acc > 1000 && drop > 1000, "{cong}: {acc} accepted, {drop} dropped");
        }
    }

    /// sync_period_us alone: the ingress decides on the egress registers copied at the last
    /// SYNC. α_L = 0.5, one queue alone on its port (N = 1, γ = 1).
    #[test]
    fn sync_period_alone_decides_on_the_last_copy() {
        let mut hw = mk(with(exact(), json!({"sync_period_us": 10, "alpha": [0.5, 0.5]})), 2, 2);
        assert_eq!(hw.tick_interval_ps(), Some(10 * PS_PER_US));
        let mut st = state(B, 2, 2);
        let q = qr(0, 0);
        // 400,000 B arrive (no departure yet). Ideal FB: T = 0.5·(B − 400,000) = 300,000 < q:
        // drop. The ingress still sees the empty buffer of t = 0: T = 0.5·B = 500,000, q = 0.
        for _ in 0..400 {
            enq(&mut hw, &mut st, q, 1000);
        }
        let p = pkt(1000, 0);
        assert_eq!(thr(&hw, &st, q), 500_000.0);
        assert_eq!(hw.admit(&st, q, &p, 0), Admission::Accept);
        // A SYNC copies the egress register, which only a departure writes: still 0.
        hw.on_tick(&st, 10 * PS_PER_US);
        assert_eq!(hw.admit(&st, q, &p, 0), Admission::Accept);
        // One packet leaves: the register holds 399,000; the ingress sees it at the next SYNC:
        // Remaining = 601,000, T = 300,500, and 399,000 + 1,000 > T: drop.
        deq(&mut hw, &mut st, q, 1000);
        assert_eq!(hw.admit(&st, q, &p, 0), Admission::Accept);
        hw.on_tick(&st, 20 * PS_PER_US);
        assert_eq!(thr(&hw, &st, q), 300_500.0);
        assert_eq!(hw.admit(&st, q, &p, 0), Admission::Drop);
        // The queue drains to 299,000 B: dropping goes on until the next SYNC, which shows
        // T = 0.5·701,000 = 350,500 ≥ 299,000 + 1,000.
        for _ in 0..100 {
            deq(&mut hw, &mut st, q, 1000);
        }
        assert_eq!(hw.admit(&st, q, &p, 0), Admission::Drop);
        hw.on_tick(&st, 30 * PS_PER_US);
        assert_eq!(thr(&hw, &st, q), 350_500.0);
        assert_eq!(hw.admit(&st, q, &p, 0), Admission::Accept);
        // N_p is recounted on the copy: a second low queue of 299,000 B on port 1 counts once
        // a packet of it has left and a SYNC has passed: N = 2, T = 0.5/2·(B − 598,000).
        for _ in 0..300 {
            enq(&mut hw, &mut st, qr(1, 0), 1000);
        }
        deq(&mut hw, &mut st, qr(1, 0), 1000);
        assert_eq!(thr(&hw, &st, q), 350_500.0);
        hw.on_tick(&st, 40 * PS_PER_US);
        assert_eq!(thr(&hw, &st, q), 0.25 * 402_000.0);
    }

    /// gamma_count alone: γ = 1/N_c, N_c = queues of the port holding ≥ gamma_count_bytes
    /// (default 1 B: non-empty). Two low queues (α 0.5) on port 0: 1,000 B of ACKs in queue 0,
    /// 300,000 B of data in queue 1.
    #[test]
    fn gamma_count_alone_counts_queues_above_the_threshold() {
        let setup = |bm: &mut dyn BufferManager, st: &mut BufferState| {
            enq(bm, st, qr(0, 1), 300_000);
            enq(bm, st, qr(0, 0), 1_000);
            enq(bm, st, qr(0, 1), 1); // re-evaluates queue 1's congested flag
        };
        let r = (B - 301_001) as f64;
        // Ideal FB: the ACK queue is below half its threshold, not congested: N = 1, γ = 1.
        let mut ideal = mk(exact(), 2, 2);
        let mut st = state(B, 2, 2);
        setup(&mut ideal, &mut st);
        assert_eq!(thr(&ideal, &st, qr(0, 1)), 0.5 * r);
        // Hardware count: both queues are non-empty, N_c = 2, γ = 1/2 (N_p is still FB's: 1).
        let mut hw = mk(with(exact(), json!({"gamma_count": true})), 2, 2);
        let mut st = state(B, 2, 2);
        setup(&mut hw, &mut st);
        assert_eq!(thr(&hw, &st, qr(0, 1)), 0.5 * 0.5 * r);
        // With the count threshold at 1,500 B the ACK queue does not count: γ = 1 again.
        let mut hw = mk(with(exact(), json!({"gamma_count": true, "gamma_count_bytes": 1500})), 2, 2);
        let mut st = state(B, 2, 2);
        setup(&mut hw, &mut st);
        assert_eq!(thr(&hw, &st, qr(0, 1)), 0.5 * r);
        // An empty queue counts itself (N_c ≥ 1): queue 0 of port 1, alone: γ = 1.
        assert!((thr(&hw, &st, qr(1, 0)) - 0.5 / 2.0 * r).abs() < 1e-9); // N_low = 2 (itself + queue 1 of port 0)
    }

    /// pow2 alone: T = Remaining shifted by round(log2(α·γ/N_p)) bits.
    #[test]
    fn pow2_alone_shifts_the_remaining_buffer() {
        // Hand values of the shift: ω = 20·(1/2)/3 = 3.33, log2 = 1.74 → 2 (×4);
        // ω = 0.5/3 = 0.167, log2 = −2.58 → −3 (÷8, rounding down); ω = 0.5: −1 exactly;
        // ω = 2^−1.5 = 0.3536 (a tie in the log domain) → −2 (half away from zero).
        assert_eq!(pow2_shift(20.0 * 0.5 / 3.0), Some(2));
        assert_eq!(pow2_shift(0.5 / 3.0), Some(-3));
        assert_eq!(pow2_shift(0.5), Some(-1));
        assert_eq!(pow2_shift(2f64.powf(-1.5)), Some(-2));
        assert_eq!(pow2_shift(0.0), None);
        assert_eq!(shift_bytes(699_000, Some(2)), 2_796_000);
        assert_eq!(shift_bytes(699_001, Some(-3)), 87_375);
        assert_eq!(shift_bytes(699_001, None), 0);
        assert_eq!(shift_bytes(u64::MAX / 2, Some(3)), u64::MAX);
        assert_eq!(shift_bytes(5, Some(-70)), 0);
        // In the scheme: 3 low queues (α 0.5) on ports 0-2 and a high queue (α 20) sharing
        // port 0, N_high = 1, γ = 1/2 (RR): exact T_high = 10·R, pow2: log2 10 = 3.32 → 8·R.
        // Low queue of port 1 (N_low = 3, γ = 1): ω = 1/6 → R >> 3.
        let mut hw = mk(with(exact(), json!({"pow2": true, "high": [0, 1], "congested": "nonempty"})), 2, 3);
        let mut st = state(B, 3, 2);
        for p in 0..3 {
            enq(&mut hw, &mut st, qr(p, 0), 100_000);
        }
        enq(&mut hw, &mut st, qr(0, 1), 1_001);
        let r = B - 301_001;
        assert_eq!(thr(&hw, &st, qr(0, 1)), (r << 3) as f64);
        assert_eq!(thr(&hw, &st, qr(1, 0)), (r >> 3) as f64);
        assert_eq!(r >> 3, 87_374);
        // Admission on the shifted threshold: 87,374 − 100,000 < 0: the low queue drops.
        assert_eq!(hw.admit(&st, qr(1, 0), &pkt(64, 0), 0), Admission::Drop);
    }

    /// alpha_levels alone: α becomes the level nearest in log2 (ties to the lower).
    #[test]
    fn alpha_levels_alone_round_alpha_in_log2() {
        let lv = [0.125, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0];
        assert_eq!(nearest_level(20.0, &lv), 16.0); // above the range: the top level
        assert_eq!(nearest_level(0.01, &lv), 0.125);
        assert_eq!(nearest_level(0.6, &lv), 0.5); // log2 0.6 = −0.74: nearer −1 than 0
        assert_eq!(nearest_level(0.75, &lv), 1.0); // −0.415: nearer 0
        assert_eq!(nearest_level(2.0, &[1.0, 4.0]), 1.0); // the geometric mean: a tie, lower
        assert_eq!(nearest_level(12.0, &lv), 16.0); // 3.58: nearer 4
        assert_eq!(nearest_level(0.5, &lv), 0.5);
        // In the scheme (FB §6 α_L = 0.5, α_H = 20; one high queue alone on its port): T = 16·B.
        let mut hw = mk(with(exact(), json!({"high": [0, 1], "alpha_levels": [2.0, 0.5, 16.0, 1.0]})), 2, 2);
        let mut st = state(B, 2, 2);
        enq(&mut hw, &mut st, qr(1, 0), 1_000);
        let r = (B - 1_000) as f64;
        assert_eq!(thr(&hw, &st, qr(0, 1)), 16.0 * r);
        assert_eq!(thr(&hw, &st, qr(1, 0)), 0.5 * r);
    }

    #[test]
    fn defaults_and_bad_params_name_the_key() {
        let hw = mk(json!({}), 2, 2);
        assert!(hw.gamma_count && hw.pow2 && hw.sync_ps == 0 && hw.alpha_levels.is_empty());
        assert_eq!(hw.gamma_count_bytes, 1);
        assert!(err(json!({"sync_period_us": -1}), 2).contains("switch.bm.sync_period_us = -1"));
        assert!(err(json!({"alpha_levels": [0.5, 0]}), 2).contains("switch.bm.alpha_levels"));
        assert!(err(json!({"alpha_levels": []}), 2).contains("switch.bm.alpha_levels = []"));
        assert!(err(json!({"gamma": "one"}), 2).contains("switch.bm.gamma: only used with gamma_count = false"));
        assert!(err(json!({"gamma_count": false, "gamma_count_bytes": 9}), 2).contains("switch.bm.gamma_count_bytes"));
        assert!(err(json!({"pow2": "yes"}), 2).contains("switch.bm.pow2"));
        let e = err(json!({"sync_us": 1}), 2);
        assert!(e.contains("switch.bm.sync_us: unknown parameter for 'fb_pisa'") && e.contains("sync_period_us"), "{e}");
        // FB's own checks still apply.
        assert!(err(json!({"high": [0, 2]}), 2).contains("switch.bm.high"));
    }
}

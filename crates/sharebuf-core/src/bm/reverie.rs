//! Reverie (Addanki, Bai, Schmid, Apostolaki, NSDI 2024; docs/lossless.md §4,
//! docs/schemes/reverie.md): one admission for lossless and lossy traffic over one shared pool
//! `S = B − X` (X: the PFC headroom pool), on a low-pass-filtered queue length.
//!
//! ```text
//!   T = α_q · max(0, S − S_used) / max(1, n_p)        n_p = Σ_queues of prio p min(1, q̄ / sat)
//!   q̄ ← γ·q̄ + (1 − γ)·q, then q̄ ← min(q̄, q)        at each departure of the queue
//! ```
//!
//! Lossy (egress view, `admit`): admit iff `q̄_out + s ≤ T` (α_unscheduled for packets flagged
//! unscheduled), and the switch's pool check `S_used + s ≤ S`. Lossless (ingress view, through
//! PFC, `ingress_over`/`ingress_resume`): the ingress (port, priority) enters headroom (a pause
//! follows) when `q̄_in > T` after the packet is counted; resume when its headroom is empty and
//! `q̄_in < xon` or `q̄_in + xon_offset ≤ T`. `q` is the egress queue's bytes after the departure
//! (lossy) or the ingress (port, priority)'s bytes, headroom included (lossless). `n_p` is
//! updated lazily, a queue's term when a threshold of that queue is computed (the code's
//! `setCongested`). With `filter = "integer"` (default, the code's `uint64_t` counters) each update
//! is truncated to whole bytes.

use super::{check_positive, Admission, BmContext, BufferManager, BufferState, Params, QueueRef, Scheme};
use crate::engine::Time;
use crate::packet::Packet;

/// γ of every Reverie run script (`run-*.sh`, `--gamma=0.999`; the MMU's own default is 0.99).
pub const DEFAULT_GAMMA: f64 = 0.999;
/// `congestionIndicator` of the reference MMU: a queue counts fully in n_p from 20 KiB.
pub const DEFAULT_SAT_BYTES: f64 = 20.0 * 1024.0;
/// The reference's `alphaHigh` for unscheduled lossy packets.
pub const DEFAULT_ALPHA_UNSCHEDULED: f64 = 1024.0;

/// One low-pass-filter step of docs/lossless.md §4: `γ·lpf + (1 − γ)·q`, truncated to whole bytes
/// if `integer`, then clamped to `q`.
#[inline(always)]
pub fn lpf_step(lpf: f64, q: f64, gamma: f64, integer: bool) -> f64 {
    let mut v = gamma * lpf + (1.0 - gamma) * q;
    if integer {
        v = v.trunc();
    }
    v.min(q)
}

pub struct Reverie {
    gamma: f64,
    integer: bool,
    sat: f64,
    /// α per queue (= priority): a lossless priority's on the ingress view, a lossy one's on
    /// the egress view.
    alpha: Vec<f64>,
    alpha_unsched: Vec<f64>,
    n_queues: usize,
    /// Egress view, per (port, queue): q̄_out and its term of n_p; n_p per queue.
    eg_lpf: Vec<f64>,
    eg_sat: Vec<f64>,
    eg_n: Vec<f64>,
    /// Ingress view, per (ingress port, priority 0..8): q̄_in and its term; n_p per priority.
    in_lpf: Vec<f64>,
    in_sat: Vec<f64>,
    in_n: [f64; 8],
}

const KEYS: &[&str] = &["gamma", "alpha", "alpha_unscheduled", "sat_bytes", "filter"];

pub fn build(p: &Params, ctx: &BmContext) -> Result<Scheme, String> {
    Ok(Reverie::new(p, ctx)?.into())
}

impl Reverie {
    pub fn new(p: &Params, ctx: &BmContext) -> Result<Reverie, String> {
        p.allow_only("reverie", KEYS)?;
        let gamma = p.f64_or("gamma", DEFAULT_GAMMA)?;
        if !(gamma.is_finite() && (0.0..1.0).contains(&gamma)) {
            return Err(format!("switch.bm.gamma = {gamma}: the filter's weight of the old value; allowed: 0 <= gamma < 1"));
        }
        // α = 1 for every class: the Reverie runs' alphas file.
        let alpha = p.per_queue("alpha", ctx.n_queues, Some(1.0))?;
        check_positive("alpha", &alpha)?;
        let alpha_unsched = p.per_queue("alpha_unscheduled", ctx.n_queues, Some(DEFAULT_ALPHA_UNSCHEDULED))?;
        check_positive("alpha_unscheduled", &alpha_unsched)?;
        let sat = p.f64_or("sat_bytes", DEFAULT_SAT_BYTES)?;
        check_positive("sat_bytes", &[sat])?;
        let integer = p.str_or("filter", "integer", &["integer", "real"])? == "integer";
        let n_ports = ctx.port_rate_bps.len();
        let n = n_ports * ctx.n_queues;
        Ok(Reverie {
            gamma,
            integer,
            sat,
            alpha,
            alpha_unsched,
            n_queues: ctx.n_queues,
            eg_lpf: vec![0.0; n],
            eg_sat: vec![0.0; n],
            eg_n: vec![0.0; ctx.n_queues],
            in_lpf: vec![0.0; n_ports * 8],
            in_sat: vec![0.0; n_ports * 8],
            in_n: [0.0; 8],
        })
    }

    /// q̄_out of queue `q`.
    pub fn egress_lpf(&self, q: QueueRef) -> f64 {
        self.eg_lpf[q.port * self.n_queues + q.queue]
    }

    /// q̄_in of ingress (`port`, `prio`).
    pub fn ingress_lpf(&self, port: usize, prio: u8) -> f64 {
        self.in_lpf[port * 8 + prio as usize]
    }

    /// n_p of the egress view for queue index `queue` and of the ingress view for `prio`, as last updated.
    pub fn n_egress(&self, queue: usize) -> f64 {
        self.eg_n[queue]
    }
    pub fn n_ingress(&self, prio: u8) -> f64 {
        self.in_n[prio as usize]
    }

    /// The egress threshold of queue `q` with α `alpha` and `free` = S − S_used, updating the
    /// queue's term of n_p first (the code's `setCongested`).
    #[inline]
    fn egress_threshold(&mut self, q: QueueRef, alpha: f64, free: u64) -> f64 {
        let i = q.port * self.n_queues + q.queue;
        let s = (self.eg_lpf[i] / self.sat).min(1.0);
        self.eg_n[q.queue] += s - self.eg_sat[i];
        self.eg_sat[i] = s;
        alpha * free as f64 / self.eg_n[q.queue].max(1.0)
    }

    /// The ingress threshold of (`port`, `prio`), updating its term of n_p first.
    #[inline]
    fn ingress_threshold(&mut self, port: usize, prio: u8, free: u64) -> f64 {
        let i = port * 8 + prio as usize;
        let s = (self.in_lpf[i] / self.sat).min(1.0);
        self.in_n[prio as usize] += s - self.in_sat[i];
        self.in_sat[i] = s;
        let a = self.alpha[(prio as usize).min(self.n_queues - 1)];
        a * free as f64 / self.in_n[prio as usize].max(1.0)
    }

    #[inline]
    fn alpha_for(&self, q: QueueRef, pkt: &Packet) -> f64 {
        super::alpha_of(&self.alpha, &self.alpha_unsched, q, pkt)
    }
}

/// S − S_used for lossy admission: the pool's free bytes less the PFC headroom not in use.
#[inline]
fn free_shared(st: &BufferState) -> u64 {
    st.remaining_bytes().saturating_sub(st.reserved_bytes)
}

impl BufferManager for Reverie {
    fn name(&self) -> &'static str {
        "reverie"
    }

    #[inline]
    fn admit(&mut self, st: &BufferState, q: QueueRef, pkt: &Packet, _now: Time) -> Admission {
        let t = self.egress_threshold(q, self.alpha_for(q, pkt), free_shared(st));
        if self.egress_lpf(q) + pkt.size_bytes as f64 <= t {
            Admission::Accept
        } else {
            Admission::Drop
        }
    }

    fn threshold_bytes(&self, st: &BufferState, q: QueueRef, pkt: &Packet, _now: Time) -> Option<f64> {
        let i = q.port * self.n_queues + q.queue;
        let n = self.eg_n[q.queue] - self.eg_sat[i] + (self.eg_lpf[i] / self.sat).min(1.0);
        Some(self.alpha_for(q, pkt) * free_shared(st) as f64 / n.max(1.0))
    }

    #[inline]
    fn on_dequeue(&mut self, st: &BufferState, q: QueueRef, _pkt: &Packet, _now: Time) -> bool {
        let i = q.port * self.n_queues + q.queue;
        self.eg_lpf[i] = lpf_step(self.eg_lpf[i], st.queue_bytes[i] as f64, self.gamma, self.integer);
        true
    }

    fn decides_ingress(&self) -> bool {
        true
    }

    fn ingress_over(&mut self, port: usize, prio: u8, _in_bytes: u64, free_bytes: u64) -> bool {
        let t = self.ingress_threshold(port, prio, free_bytes);
        self.ingress_lpf(port, prio) > t
    }

    fn on_ingress_leave(&mut self, port: usize, prio: u8, in_bytes: u64) {
        let i = port * 8 + prio as usize;
        self.in_lpf[i] = lpf_step(self.in_lpf[i], in_bytes as f64, self.gamma, self.integer);
    }

    fn ingress_resume(&mut self, port: usize, prio: u8, _in_bytes: u64, free_bytes: u64, xon_bytes: u64, xon_offset_bytes: u64) -> bool {
        let t = self.ingress_threshold(port, prio, free_bytes);
        let l = self.ingress_lpf(port, prio);
        l < xon_bytes as f64 || l + xon_offset_bytes as f64 <= t
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bm::testutil::*;
    use crate::packet::flags;
    use serde_json::json;

    fn make(params: serde_json::Value, buffer: u64, ports: usize, nq: usize) -> Result<Reverie, String> {
        let rates = vec![10_000_000_000; ports];
        let c = BmContext { buffer_bytes: buffer, n_queues: nq, port_rate_bps: &rates, base_rtt_ps: 0, seed: 1, switch_index: 0, mss_bytes: 1448, header_bytes: 54 };
        Reverie::new(&Params::new("switch.bm", params.as_object().unwrap()), &c)
    }

    /// Test (1): a step of the queue from 0 to q, held there: after k departures the real filter
    /// is q·(1 − γ^k) (the closed form of q̄_k = γ·q̄_{k−1} + (1 − γ)·q, q̄_0 = 0), and never
    /// above q. With γ = 1/2 and q = 2^20 every step is a whole number of bytes, so the integer
    /// filter equals the closed form exactly: q − 2^(20−k).
    #[test]
    fn filter_step_response_is_the_closed_form() {
        for &(gamma, q) in &[(0.999, 1_000_000.0), (0.99, 150_000.0), (0.4, 12_345.0)] {
            let mut l = 0.0;
            for k in 1..=3000 {
                l = lpf_step(l, q, gamma, false);
                let want = q * (1.0 - f64::powi(gamma, k));
                assert!((l - want).abs() <= 1e-9 * q, "gamma {gamma} k {k}: {l} vs {want}");
                assert!(l <= q);
            }
        }
        let q = (1u64 << 20) as f64;
        let mut l = 0.0;
        for k in 1..=20 {
            l = lpf_step(l, q, 0.5, true);
            assert_eq!(l, q - (1u64 << (20 - k)) as f64, "k {k}");
        }
        // The integer filter stalls once (1 − γ)·(q − q̄) < 1 B: with γ = 0.999 at q − q̄ < 1000 B,
        // the code's uint64_t counters; the real filter keeps closing the gap.
        let (mut li, mut lr) = (0.0, 0.0);
        for _ in 0..20_000 {
            li = lpf_step(li, 100_000.0, 0.999, true);
            lr = lpf_step(lr, 100_000.0, 0.999, false);
        }
        assert!(100_000.0 - li <= 1_000.0 && 100_000.0 - li > 990.0, "integer filter stalls {li}");
        assert!(100_000.0 - lr < 1e-3, "{lr}");
        // A draining queue is tracked exactly (clamp): q̄ = 50 000 after a fall to 40 000 is 40 000.
        assert_eq!(lpf_step(50_000.0, 40_000.0, 0.999, true), 40_000.0);
    }

    /// The filter moves only at departures: arrivals into an idle queue leave q̄ = 0, so a lossy
    /// burst is admitted while T = α·(B − Q)/1 exceeds its packet size; after departures the
    /// queue's own q̄ counts.
    #[test]
    fn lossy_admission_on_the_filtered_queue() {
        let mut r = make(json!({"gamma": 0.5}), 100_000, 2, 1).unwrap();
        let mut st = state(100_000, 2, 1);
        let q = QueueRef { port: 0, queue: 0 };
        // 99 packets of 1 000 B, no departure: DT (α = 1) would stop at 50 000 B; Reverie admits
        // while 0 + 1 000 ≤ B − Q.
        for _ in 0..99 {
            assert_eq!(r.admit(&st, q, &pkt(1_000, 0), 0), Admission::Accept);
            st.on_enqueue(q, 1_000);
        }
        assert_eq!(r.egress_lpf(q), 0.0);
        // One departure: q = 98 000, q̄ = 49 000 (γ = 1/2); n = 1 (saturated); B − Q = 2 000;
        // 49 000 + 1 000 > 2 000: refused.
        st.on_dequeue(q, 1_000, true);
        r.on_dequeue(&st, q, &pkt(1_000, 0), 0);
        assert_eq!(r.egress_lpf(q), 49_000.0);
        assert_eq!(r.admit(&st, q, &pkt(1_000, 0), 0), Admission::Drop);
        assert_eq!(r.n_egress(0), 1.0);
        assert_eq!(r.threshold_bytes(&st, q, &pkt(1_000, 0), 0), Some(2_000.0));
        // Unscheduled: α = 1024 → T = 2 048 000.
        let u = Packet { flags: flags::UNSCHED, ..pkt(1_000, 0) };
        assert_eq!(r.admit(&st, q, &u, 0), Admission::Accept);
    }

    /// n_p is the soft count over the filtered queues, updated when a queue's threshold is
    /// computed: two queues with q̄ = 10 240 B (half of 20 KiB) count 1 together.
    #[test]
    fn soft_congested_count_from_the_filter() {
        let mut r = make(json!({"gamma": 0.0, "filter": "real"}), 1_000_000, 3, 1).unwrap();
        let mut st = state(1_000_000, 3, 1);
        for port in 0..2 {
            let q = QueueRef { port, queue: 0 };
            st.on_enqueue(q, 10_240 + 1_000);
            st.on_dequeue(q, 1_000, true);
            r.on_dequeue(&st, q, &pkt(1_000, 0), 0);
            assert_eq!(r.egress_lpf(q), 10_240.0);
            r.admit(&st, q, &pkt(100, 0), 0);
        }
        assert!((r.n_egress(0) - 1.0).abs() < 1e-12);
        // A third queue of 40 960 B (saturated) makes n = 2: T = (B − Q)/2.
        let q = QueueRef { port: 2, queue: 0 };
        st.on_enqueue(q, 41_960);
        st.on_dequeue(q, 1_000, true);
        r.on_dequeue(&st, q, &pkt(1_000, 0), 0);
        let free = (1_000_000 - 2 * 10_240 - 40_960) as f64;
        assert_eq!(r.threshold_bytes(&st, q, &pkt(100, 0), 0), Some(free / 2.0));
    }

    /// Test (3), the lossless side through PFC, by hand. B = 100 000, two ports with 10 000 B of
    /// headroom each: X = 20 000, S = 80 000; priority 3 lossless; γ = 1/2, integer filter, α = 1.
    /// (a) 60 packets of 1 000 B arrive by port 0 with no departure: q̄_in stays 0, so no pause
    /// (DT on the same counters pauses at the 41st, `pfc::tests::xoff_and_xon_by_hand`).
    /// (b) One departure: in = 59 000, q̄ = 29 500. The next arrival: in = 60 000, S_used = 60 000,
    /// n = min(1, 29 500/20 480) → 1, T = 20 000 < q̄: headroom, one pause.
    /// (c) Departures: the first empties the headroom (in = 59 000); q̄ then goes 44 250, 51 125,
    /// 54 062, 55 031 and is clamped to in from in = 55 000; resume when q̄ + 2 496 ≤ 80 000 − in,
    /// i.e. at in = 38 000, the 22nd departure.
    /// (d) With q̄ = 0 the pool guard: the 81st packet into an empty switch finds S full and goes
    /// to headroom (a pause) although q̄ = 0 ≤ T = 0.
    #[test]
    fn pauses_follow_the_filtered_ingress_threshold() {
        use crate::pfc::{PfcAction, PfcSwitch};
        let mk = || {
            let mut p = PfcSwitch::new(1 << 3, 100_000, vec![10_000, 10_000], 1_248, 2_496, 1.0);
            p.scheme_ingress = true;
            (p, Scheme::from(make(json!({"gamma": 0.5}), 100_000, 2, 4).unwrap()))
        };
        let (mut p, mut bm) = mk();
        let mut used = 0;
        for _ in 0..60 {
            assert_eq!(p.on_arrive_scheme(0, 3, 1_000, used, &mut bm), PfcAction::None);
            used += 1_000;
        }
        assert_eq!((p.hdrm(0, 3), p.pauses_sent[0]), (0, 0));
        used -= 1_000;
        assert_eq!(p.on_leave_scheme(0, 3, 1_000, used, &mut bm), PfcAction::None);
        let Scheme::Reverie(r) = &bm else { unreachable!() };
        assert_eq!(r.ingress_lpf(0, 3), 29_500.0);
        assert_eq!(p.on_arrive_scheme(0, 3, 1_000, used, &mut bm), PfcAction::Pause);
        used += 1_000;
        assert_eq!((p.hdrm(0, 3), p.in_bytes(0, 3)), (1_000, 60_000));
        let Scheme::Reverie(r) = &bm else { unreachable!() };
        assert_eq!(r.n_ingress(3), 1.0);
        let mut lpf = vec![];
        let mut resumed = None;
        for j in 1..=40 {
            used -= 1_000;
            let a = p.on_leave_scheme(0, 3, 1_000, used, &mut bm);
            let Scheme::Reverie(r) = &bm else { unreachable!() };
            lpf.push(r.ingress_lpf(0, 3));
            if a == PfcAction::Resume {
                resumed = Some((j, p.in_bytes(0, 3)));
                break;
            }
        }
        assert_eq!(&lpf[..6], &[44_250.0, 51_125.0, 54_062.0, 55_031.0, 55_000.0, 54_000.0]);
        assert_eq!(resumed, Some((22, 38_000)));
        assert_eq!((p.pauses_sent[0], p.resumes_sent[0], p.headroom_overflows), (1, 1, 0));

        let (mut p, mut bm) = mk();
        let mut used = 0;
        for i in 0..81 {
            let a = p.on_arrive_scheme(1, 3, 1_000, used, &mut bm);
            used += 1_000;
            assert_eq!(a == PfcAction::Pause, i == 80, "packet {i}");
        }
        assert_eq!((p.hdrm(1, 3), p.hdrm_used, p.reserved_headroom()), (1_000, 1_000, 19_000));
    }

    #[test]
    fn bad_keys_are_clear_errors() {
        let e = make(json!({"gamma": 1.0}), 1, 1, 1).err().unwrap();
        assert!(e.contains("switch.bm.gamma = 1") && e.contains("0 <= gamma < 1"), "{e}");
        let e = make(json!({"filter": "float"}), 1, 1, 1).err().unwrap();
        assert!(e.contains("switch.bm.filter = 'float'") && e.contains("integer, real"), "{e}");
        let e = make(json!({"beta": 1}), 1, 1, 1).err().unwrap();
        assert!(e.contains("switch.bm.beta") && e.contains("gamma, alpha"), "{e}");
        let e = make(json!({"sat_bytes": 0}), 1, 1, 1).err().unwrap();
        assert!(e.contains("sat_bytes"), "{e}");
        let e = make(json!({"alpha": [1, 2]}), 1, 1, 1).err().unwrap();
        assert!(e.contains("switch.bm.alpha") && e.contains("expected 1"), "{e}");
        let r = make(json!({}), 1, 1, 4).unwrap();
        assert_eq!((r.gamma, r.sat, r.integer, r.alpha[3], r.alpha_unsched[0]), (0.999, 20_480.0, true, 1.0, 1024.0));
    }
}

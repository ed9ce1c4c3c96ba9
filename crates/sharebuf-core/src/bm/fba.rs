//! FBA: FB approximated on top of DT (FB.md §5.2).
//!
//! A controller reconfigures DT's α of every queue once per `interval_us` (paper: 1 s) to
//!
//! ```text
//!     α_dt(q) = α_c · γ(q) / N_p(q)          (FB Eq. 3 without the remaining-buffer factor)
//! ```
//!
//! from the buffer state seen at that instant; between updates the switch runs plain DT,
//! T_q(t) = α_dt(q) · (B − Q(t)). Before the first update α_dt = α_c (DT). With a short
//! interval FBA tracks FB; with an interval longer than the run it is DT with α_c.
//! FBA is multi-queue only (§5.2: with one queue per port it cannot give packets of one queue
//! different thresholds and equals DT). N_p, γ and the congested-queue definition are FB's
//! (see fb.rs / docs/schemes/fba.md).

use super::fb::{multi_queue_alphas, FbCore};
use super::{check_positive, Admission, BmContext, BufferManager, BufferState, Params, QueueRef, Scheme};
use crate::engine::{Time, PS_PER_US};
use crate::packet::Packet;

pub struct Fba {
    core: FbCore,
    /// α_c per queue (class).
    alpha: Vec<f64>,
    /// DT α currently configured per (port, queue).
    alpha_dt: Vec<f64>,
    interval_ps: Time,
}

pub fn build(p: &Params, ctx: &BmContext) -> Result<Scheme, String> {
    Ok(Fba::new(p, ctx)?.into())
}

impl Fba {
    pub fn new(p: &Params, ctx: &BmContext) -> Result<Fba, String> {
        p.allow_only(
            "fba",
            &["alpha", "alpha_low", "alpha_high", "high", "interval_us", "congested", "congested_bytes", "congested_sat_bytes", "congested_fraction", "np_count", "gamma", "gamma_min"],
        )?;
        let nq = ctx.n_queues;
        let n_ports = ctx.port_rate_bps.len();
        let (alpha, group) = multi_queue_alphas(p, nq)?;
        let core = FbCore::from_params(p, ctx, group)?;
        let iv = p.f64_or("interval_us", 1_000_000.0)?;
        check_positive("interval_us", &[iv])?;
        let interval_ps = ((iv * PS_PER_US as f64) as Time).max(1);
        let alpha_dt = (0..n_ports * nq).map(|i| alpha[i % nq]).collect();
        Ok(Fba { core, alpha, alpha_dt, interval_ps })
    }

    /// The controller: α_dt(q) = α_c · γ(q) / N_p(q) from the state now (FB §5.2). With one
    /// queue per port FBA "will have the same performance as DT" (§5.2): α stays α_c.
    fn reconfigure(&mut self, st: &BufferState, now: Time) {
        let nq = self.core.n_queues;
        if nq == 1 {
            return;
        }
        self.core.measure(st, now);
        self.core.refresh_all_dt(st, &self.alpha_dt);
        for port in 0..self.core.n_ports {
            for queue in 0..nq {
                let q = QueueRef { port, queue };
                let a = self.alpha[queue] * self.core.gamma(st, q) / self.core.n_p_scan(st, q);
                self.alpha_dt[port * nq + queue] = a;
            }
        }
    }

    #[inline]
    fn threshold(&self, st: &BufferState, q: QueueRef) -> f64 {
        super::dt::threshold_for(st, self.alpha_dt[st.idx(q)])
    }
}

impl BufferManager for Fba {
    fn name(&self) -> &'static str {
        "fba"
    }

    #[inline]
    fn admit(&mut self, st: &BufferState, q: QueueRef, pkt: &Packet, _now: Time) -> Admission {
        super::dt::admit_for(st, q, pkt.size_bytes, self.alpha_dt[st.idx(q)])
    }

    fn threshold_bytes(&self, st: &BufferState, q: QueueRef, _pkt: &Packet, _now: Time) -> Option<f64> {
        Some(self.threshold(st, q))
    }

    fn tick_interval_ps(&self) -> Option<Time> {
        Some(self.interval_ps)
    }

    fn on_tick(&mut self, st: &BufferState, now: Time) {
        self.reconfigure(st, now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bm::testutil::*;
    use serde_json::{json, Value};

    const B: u64 = 1_000_000;

    fn mk(params: Value, nq: usize, ports: usize) -> Fba {
        let m = params.as_object().unwrap().clone();
        let rates = vec![10_000_000_000u64; ports];
        let ctx = BmContext { buffer_bytes: B, n_queues: nq, port_rate_bps: &rates, base_rtt_ps: 0, seed: 1, switch_index: 0, mss_bytes: 1448, header_bytes: 54 };
        Fba::new(&Params::new("switch.bm", &m), &ctx).unwrap()
    }

    #[test]
    fn dt_until_the_first_update_then_fb_alpha_frozen() {
        let mut fba = mk(json!({"high": [0, 1], "congested": "nonempty"}), 2, 4);
        assert_eq!(fba.tick_interval_ps(), Some(1_000_000 * PS_PER_US));
        let mut st = state(B, 4, 2);
        let q = QueueRef { port: 0, queue: 0 };
        let p = pkt(1500, 0);
        for port in 0..3 {
            st.on_enqueue(QueueRef { port, queue: 0 }, 100_000);
        }
        st.on_enqueue(QueueRef { port: 3, queue: 1 }, 50_000);
        let r = (B - 350_000) as f64;
        // Before any update: DT with α_L = 0.5.
        assert_eq!(fba.threshold_bytes(&st, q, &p, 0), Some(0.5 * r));
        // After the update: α = 0.5 / 3 (3 congested low queues, alone on their ports), i.e.
        // exactly FB's threshold (Eq. 3) for the same state.
        fba.on_tick(&st, 1);
        assert!((fba.threshold_bytes(&st, q, &p, 0).unwrap() - 0.5 / 3.0 * r).abs() < 1e-6);
        let hq = QueueRef { port: 3, queue: 1 };
        assert!((fba.threshold_bytes(&st, hq, &p, 0).unwrap() - 20.0 * r).abs() < 1e-6);
        // The α stays frozen while the state changes: a fourth low queue appears (live FB would
        // now use α/4) and a high queue shares port 0 (live γ = 1/2); DT uses the new remaining
        // buffer with the old α = 0.5/3.
        st.on_enqueue(QueueRef { port: 3, queue: 0 }, 10_000);
        st.on_enqueue(QueueRef { port: 0, queue: 1 }, 10_000);
        let r2 = (B - 370_000) as f64;
        assert!((fba.threshold_bytes(&st, q, &p, 0).unwrap() - 0.5 / 3.0 * r2).abs() < 1e-6);
        // T = 0.5/3 · 630,000 = 105,000: q = 100,000 admits 5,000 B, not 5,001.
        assert_eq!(fba.admit(&st, q, &pkt(5_000, 0), 0), Admission::Accept);
        assert_eq!(fba.admit(&st, q, &pkt(5_001, 0), 0), Admission::Drop);
        // The next update sees N_low = 4 and γ = 1/2 on port 0: α = 0.5 · (1/2) / 4.
        fba.on_tick(&st, 2);
        assert!((fba.threshold_bytes(&st, q, &p, 0).unwrap() - 0.5 / 8.0 * r2).abs() < 1e-6);
        st.on_dequeue(QueueRef { port: 3, queue: 0 }, 10_000, true);
        st.on_dequeue(QueueRef { port: 0, queue: 1 }, 10_000, true);
        // Emptying the buffer and updating again restores α_c·γ/N_p = α_c for every queue.
        let mut empty = state(B, 4, 2);
        fba.on_tick(&empty, 2);
        assert_eq!(fba.threshold_bytes(&empty, q, &p, 0), Some(0.5 * B as f64));
        empty.on_enqueue(q, 1);
        assert_eq!(fba.admit(&empty, q, &pkt(1500, 0), 0), Admission::Accept);
    }

    /// FB §5.2: with one queue per port FBA "will have the same performance as DT": α stays α_c
    /// however many queues are congested (before the fix it was divided by N at every update).
    #[test]
    fn one_queue_per_port_equals_dt() {
        let mut fba = mk(json!({}), 1, 4);
        let mut st = state(B, 4, 1);
        for port in 0..3 {
            st.on_enqueue(QueueRef { port, queue: 0 }, 100_000);
        }
        fba.on_tick(&st, 1);
        let r = (B - 300_000) as f64;
        for port in 0..4 {
            let q = QueueRef { port, queue: 0 };
            assert_eq!(fba.threshold_bytes(&st, q, &pkt(1500, 0), 0), Some(0.5 * r));
            assert_eq!(fba.threshold_bytes(&st, q, &pkt(1500, 0), 0), crate::bm::dt::threshold_for(&st, 0.5).into());
        }
    }

    #[test]
    fn bad_params() {
        let m = json!({"interval_us": 0}).as_object().unwrap().clone();
        let ctx = BmContext { buffer_bytes: B, n_queues: 2, port_rate_bps: &[1; 2], base_rtt_ps: 0, seed: 1, switch_index: 0, mss_bytes: 1448, header_bytes: 54 };
        assert!(build(&Params::new("switch.bm", &m), &ctx).err().unwrap().contains("switch.bm.interval_us"));
        let m = json!({"mode": "single"}).as_object().unwrap().clone();
        assert!(build(&Params::new("switch.bm", &m), &ctx).err().unwrap().contains("unknown parameter"));
    }
}

//! ABM approximated on top of DT (ABM.md §3.4 "One can approximate ABM on top of DT", §4.4).
//!
//! A DT switch whose per-queue α is reconfigured by a control-plane function every
//! `update_interval_us`:  α_p^i ← α_p · µ_p^i / n_p  (ABM Eq. 9 without B − Q), and in between
//! T_p^i(t) = α_p^i · (B − Q(t)) with the *instantaneous* free pool, exactly as DT.
//! Before the first reconfiguration α_p^i = α_p (plain DT), so a very long interval is DT and a
//! very short one tracks ABM with snapshotted n_p and µ (the paper's finding, Fig. 12).
//!
//! At each reconfiguration the control plane reads queue statistics: n_p is counted from the
//! queue lengths at that instant (paper: q ≥ fraction · the queue's current DT threshold; soft:
//! Σ min(1, q/sat)), and µ is the drain rate measured over the last interval or the scheduler
//! share at that instant. DT knows no unscheduled packets, so there is no α_unscheduled.

use super::abm::{Common, Congestion, MuSource, COMMON_KEYS, PRESETS};
use super::{Admission, BmContext, BufferManager, BufferState, Params, QueueRef, Scheme};
use crate::engine::Time;
use crate::packet::Packet;

pub struct AbmApprox {
    c: Common,
    /// DT α in force per queue index (port * n_queues + queue).
    omega: Vec<f64>,
    /// Scratch: congested count per priority (reused every interval).
    np: Vec<f64>,
    /// Scratch: congested flag per queue index (the queues that share a port under µ/b).
    cong: Vec<bool>,
}

pub fn build(p: &Params, ctx: &BmContext) -> Result<Scheme, String> {
    Ok(AbmApprox::new(p, ctx)?.into())
}

impl AbmApprox {
    pub(crate) fn new(p: &Params, ctx: &BmContext) -> Result<AbmApprox, String> {
        // DT knows no unscheduled packets: no α_unscheduled, no headroom.
        let keys: Vec<&str> = COMMON_KEYS.iter().copied().filter(|k| *k != "headroom_bytes").collect();
        p.allow_only("abm_approx", &keys)?;
        let preset = p.str_or("preset", "paper", PRESETS)?;
        let c = Common::parse(p, ctx, &preset)?;
        let nq = ctx.n_queues;
        let omega = (0..ctx.port_rate_bps.len() * nq).map(|i| c.alpha[i % nq]).collect();
        let n = ctx.port_rate_bps.len() * nq;
        Ok(AbmApprox { c, omega, np: vec![0.0; nq], cong: vec![false; n] })
    }

    #[inline]
    fn threshold(&self, st: &BufferState, q: QueueRef) -> f64 {
        super::dt::threshold_for(st, self.omega[st.idx(q)])
    }
}

impl BufferManager for AbmApprox {
    fn name(&self) -> &'static str {
        "abm_approx"
    }

    #[inline]
    fn admit(&mut self, st: &BufferState, q: QueueRef, pkt: &Packet, _now: Time) -> Admission {
        super::dt::admit_for(st, q, pkt.size_bytes, self.omega[st.idx(q)])
    }

    fn threshold_bytes(&self, st: &BufferState, q: QueueRef, _pkt: &Packet, _now: Time) -> Option<f64> {
        Some(self.threshold(st, q))
    }

    fn tick_interval_ps(&self) -> Option<Time> {
        Some(self.c.interval_ps)
    }

    /// The control-plane reconfiguration.
    fn on_tick(&mut self, st: &BufferState, _now: Time) {
        if self.c.mu_source == MuSource::Measured {
            self.c.measure_mu(st);
        }
        let nq = st.n_queues;
        match self.c.congestion {
            Congestion::Soft { sat_bytes } => {
                self.np.iter_mut().for_each(|x| *x = 0.0);
                for (i, &len) in st.queue_bytes.iter().enumerate() {
                    self.np[i % nq] += (len as f64 / sat_bytes).min(1.0);
                    self.cong[i] = len as f64 >= sat_bytes;
                }
            }
            Congestion::Paper { fraction } => {
                let r = st.remaining_bytes() as f64;
                self.np.iter_mut().for_each(|x| *x = 0.0);
                for (i, &len) in st.queue_bytes.iter().enumerate() {
                    self.cong[i] = len > 0 && len as f64 >= fraction * self.omega[i] * r;
                    if self.cong[i] {
                        self.np[i % nq] += 1.0;
                    }
                }
            }
        }
        for port in 0..st.n_ports {
            for qi in 0..nq {
                let q = QueueRef { port, queue: qi };
                let i = st.idx(q);
                let cong = &self.cong;
                self.omega[i] = self.c.alpha[qi] * self.c.mu_of(st, q, |c| cong[port * nq + c]) / self.np[qi].max(1.0);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bm::testutil::*;
    use serde_json::{json, Value};

    const RTT: Time = 10_000_000;

    /// The context uses the ABM code's own data packet (1,400 B payload + 32 B header), so the
    /// code's byte constants (28,000 B, 21,000 B) keep their values (`BmContext::code_bytes`).
    fn mk(params: Value, nq: usize, ports: usize) -> AbmApprox {
        let params = params.as_object().unwrap().clone();
        let rates = vec![10_000_000_000u64; ports];
        let ctx = BmContext { buffer_bytes: 1_000_000, n_queues: nq, port_rate_bps: &rates, base_rtt_ps: RTT, seed: 1, switch_index: 0, mss_bytes: 1400, header_bytes: 32 };
        AbmApprox::new(&Params::new("switch.bm", &params), &ctx).unwrap()
    }

    fn q(port: usize, queue: usize) -> QueueRef {
        QueueRef { port, queue }
    }

    #[test]
    fn dt_until_reconfigured_then_abm_alpha_with_live_free_pool() {
        let mut bm = mk(json!({"alpha": 1.0}), 1, 4);
        let mut st = state(1_000_000, 4, 1);
        for p in 0..3 {
            st.on_enqueue(q(p, 0), 200_000);
        }
        // Before the first interval: DT, T = α·(B − Q) = 400 000.
        assert_eq!(bm.threshold_bytes(&st, q(3, 0), &pkt(1, 0), 0), Some(400_000.0));
        assert_eq!(bm.tick_interval_ps(), Some(RTT));
        // Reconfiguration: the 3 queues hold 200 000 ≥ 0.9·400 000? No (360 000): n = max(1, 0) = 1.
        bm.on_tick(&st, RTT);
        assert_eq!(bm.omega, vec![1.0; 4]);
        // Grow each to 250 000:
        for p in 0..3 {
            st.on_enqueue(q(p, 0), 50_000);
        }
        // R = 250 000; each queue (250 000) ≥ 0.9·1·250 000 → n = 3; µ = scheduler share = 1.
        bm.on_tick(&st, 2 * RTT);
        for p in 0..4 {
            assert!((bm.omega[p] - 1.0 / 3.0).abs() < 1e-12);
        }
        // Between reconfigurations the free pool is live, as DT: T = α_i · (B − Q(t)).
        st.on_dequeue(q(0, 0), 100_000, true);
        let t = bm.threshold_bytes(&st, q(3, 0), &pkt(1, 0), 0).unwrap();
        assert!((t - 350_000.0 / 3.0).abs() < 1e-6, "{t}");
        assert_eq!(bm.admit(&st, q(3, 0), &pkt(1_500, 0), 0), Admission::Accept);
        assert_eq!(bm.admit(&st, q(1, 0), &pkt(1, 0), 0), Admission::Drop);
    }

    #[test]
    fn code_preset_soft_count_and_measured_mu() {
        let mut bm = mk(json!({"preset": "code", "alpha": [1.0, 0.5]}), 2, 2);
        let mut st = state(1_000_000, 2, 2);
        st.on_enqueue(q(0, 1), 42_000); // soft 1
        st.on_enqueue(q(1, 1), 7_000); // soft 0.25
        let i = st.idx(q(0, 1));
        st.deq_bytes[i] = 7_500; // µ = 0.6 over 12 500 B of capacity
        bm.on_tick(&st, RTT);
        assert!((bm.omega[st.idx(q(0, 1))] - 0.5 * 0.6 / 1.25).abs() < 1e-12);
        // port 1 queue 1: µ = 0 < 1/2 → 1 (code rule).
        assert!((bm.omega[st.idx(q(1, 1))] - 0.5 / 1.25).abs() < 1e-12);
        // priority 0: no queue → n = 1, µ → 1.
        assert_eq!(bm.omega[st.idx(q(0, 0))], 1.0);
        let r = 1_000_000.0 - 49_000.0;
        assert!((bm.threshold_bytes(&st, q(0, 1), &pkt(1, 1), 0).unwrap() - 0.24 * r).abs() < 1e-6);
    }

    /// ABM Fig. 12's scenario shape: one congested queue (an incast on priority 1) and light
    /// queues elsewhere. n_1 = 1 and the incast queue is the only congested queue of its port
    /// (µ = 1), so α·µ/n_p is DT's α on every queue: §3.4's approximation is exactly DT here.
    #[test]
    fn single_congested_queue_per_priority_keeps_dt_alpha() {
        let mut bm = mk(json!({"alpha": 0.5}), 8, 4);
        let mut st = state(1_000_000, 4, 8);
        st.on_enqueue(q(0, 1), 300_000); // the incast queue: 300 000 ≥ 0.9·0.5·(B − Q)
        for p in 1..4 {
            st.on_enqueue(q(p, 1 + p), 5_000); // web-search queues far below their threshold
        }
        bm.on_tick(&st, RTT);
        assert_eq!(bm.omega, vec![0.5; 32]);
        // A second congested priority-1 queue on another port halves both (n_1 = 2).
        st.on_enqueue(q(2, 1), 300_000);
        bm.on_tick(&st, 2 * RTT);
        assert_eq!(bm.omega[st.idx(q(0, 1))], 0.25);
        assert_eq!(bm.omega[st.idx(q(2, 1))], 0.25);
        assert_eq!(bm.omega[st.idx(q(1, 2))], 0.5);
    }

    #[test]
    fn rejects_abm_only_keys() {
        let params = json!({"alpha_unscheduled": 64}).as_object().unwrap().clone();
        let ctx = BmContext { buffer_bytes: 1, n_queues: 1, port_rate_bps: &[1], base_rtt_ps: RTT, seed: 1, switch_index: 0, mss_bytes: 1448, header_bytes: 54 };
        let e = build(&Params::new("switch.bm", &params), &ctx).err().unwrap();
        assert!(e.contains("unknown parameter for 'abm_approx'"), "{e}");
    }
}

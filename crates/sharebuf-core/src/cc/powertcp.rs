//! PowerTCP (Addanki et al., NSDI 2022): INT-based. Per hop i, against the previous ACK's
//! INT records: λ_i = Δtx·8/Δt + Δq·8/Δt (the queue's arrival rate: drain plus growth) and
//! normalized power Γ_i = λ_i·(B_i·τ + 8·q_i) / (B_i²·τ). The bottleneck's Γ is smoothed over
//! a base RTT, Γ̄ ← (Γ̄·(τ − Δt) + Γ·Δt)/τ, and every ACK sets (fast reaction)
//!   W ← γ·(W_ref/(Γ̄/η) + β) + (1 − γ)·W,   rate = W/τ (paced),
//! while the reference window W_ref is updated once per RTT. η = target utilization.
//! λ is floored at B/2 (the reference code's rule) so a draining queue keeps Γ up. The first
//! measurement seeds Γ̄ (reference code), so a new flow does not ignore congestion for a τ.

use super::rate::{max_over_hops, mbps, RateCtl};
use super::{AckInfo, CongestionControl, PathInfo, Window};
use crate::config::Params;
use crate::engine::Time;
use crate::packet::IntStack;

#[derive(Clone)]
pub struct PowerTcp {
    eta: f64,
    gamma: f64,
    ai_bps: f64,
    ctl: RateCtl,
    prev: Option<IntStack>,
    power: f64,
    /// Γ̄ holds a measurement.
    seeded: bool,
    w: f64,
    w_ref: f64,
}

pub fn build(p: &Params) -> Result<Box<dyn CongestionControl>, String> {
    p.allow_only("powertcp", &["eta", "gamma", "ai_mbps", "min_rate_mbps"])?;
    let eta = p.f64_or("eta", 0.95)?;
    let gamma = p.f64_or("gamma", 0.9)?;
    for (k, v) in [("eta", eta), ("gamma", gamma)] {
        if !(0.0 < v && v <= 1.0) {
            return Err(format!("transport.cc_params.{k} = {v}: must lie in (0, 1]"));
        }
    }
    Ok(Box::new(PowerTcp { eta, gamma, ai_bps: mbps(p, "ai_mbps", 100.0)?, ctl: RateCtl::new(mbps(p, "min_rate_mbps", 100.0)?, true), prev: None, power: 0.0, seeded: false, w: 0.0, w_ref: 0.0 }))
}

/// Normalized power of the bottleneck hop and that hop's Δt (seconds), from two INT stacks.
pub fn bottleneck_power(cur: &IntStack, prev: &IntStack, tau_s: f64) -> Option<(f64, f64)> {
    max_over_hops(cur, prev, |h, p, dt, tx| {
        let b = h.rate_bps as f64;
        let qdot = (h.qlen_bytes as f64 - p.qlen_bytes as f64) * 8.0 / dt;
        // Floor the arrival rate at half the link rate, as the PowerTCP reference code does
        // (when a queue drains at line rate, λ → 0 and Γ would vanish, letting windows jump
        // back to line rate while the queue is still long).
        let lambda = (tx + qdot).max(0.5 * b);
        lambda * (b * tau_s + 8.0 * h.qlen_bytes as f64) / (b * b * tau_s)
    })
}

impl CongestionControl for PowerTcp {
    fn name(&self) -> &'static str {
        "powertcp"
    }
    fn clone_box(&self) -> Box<dyn CongestionControl> {
        Box::new(self.clone())
    }
    fn partial_window(&self) -> bool {
        true
    }
    fn wants_int(&self) -> bool {
        true
    }
    fn on_start(&mut self, w: &mut Window, _now: Time, path: &PathInfo) {
        self.ctl.start(w, path);
        self.w = self.ctl.window_bytes();
        self.w_ref = self.w;
    }
    fn on_ack(&mut self, w: &mut Window, a: &AckInfo) {
        let Some(int) = a.int else { return };
        if int.n == 0 {
            return;
        }
        let tau = self.ctl.tau_s();
        let update_ref = self.ctl.once_per_rtt(a);
        if let Some(prev) = self.prev.replace(*int) {
            if let Some((g, dt)) = bottleneck_power(int, &prev, tau) {
                let dt = dt.min(tau);
                // The first measurement seeds Γ̄ (the reference code's first ACK, against zeroed
                // records, has Δt clamped to τ, so Γ̄ = Γ): a new flow reacts at once.
                self.power = if self.seeded { (self.power * (tau - dt) + g * dt) / tau } else { g };
                self.seeded = true;
                if self.power > 0.0 {
                    let target = self.w_ref / (self.power / self.eta) + self.ai_bps * tau / 8.0;
                    self.w = self.gamma * target + (1.0 - self.gamma) * self.w;
                    self.ctl.set_window(w, self.w);
                    self.w = self.ctl.window_bytes();
                }
            }
        }
        if update_ref {
            self.w_ref = self.w;
        }
    }
    fn ssthresh_after_loss(&mut self, w: &Window, _in_flight: u64) -> u64 {
        w.cwnd_bytes
    }
    fn on_timeout(&mut self, w: &mut Window, _now: Time, _snd_max: u64) {
        // Resume at the current rate once the go-back-N retransmission is acknowledged.
        w.pacing_rate_bps = self.ctl.rate_bps as u64;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testutil::one_hop_int as stack;


    /// A new flow meets a standing 100 KB queue on a 10 Gbps hop, τ = 10 µs. The first two
    /// ACKs, 1 µs apart, show the port sending at line rate: λ = B, Γ = (Bτ + 8q)/(Bτ) = 9.
    /// Seeded, Γ̄ = 9 and W = 0.9·(12500/(9/0.95) + 125) + 0.1·12500 = 2550 B. (A Γ̄ ramped
    /// from 0 would be 0.9 and leave the window at line rate.)
    #[test]
    fn first_measurement_seeds_the_smoothed_power() {
        let p = serde_json::Map::new();
        let mut cc = build(&Params::new("t", &p)).unwrap();
        let path = PathInfo { base_rtt_ps: 10_000_000, tau_ps: 10_000_000, line_rate_bps: 10_000_000_000 };
        let mut w = Window { cwnd_bytes: 0, ssthresh_bytes: u64::MAX, mss_bytes: 1000, pacing_rate_bps: 0 };
        cc.on_start(&mut w, 0, &path);
        assert_eq!(w.cwnd_bytes, 12_500);
        let (s1, s2) = (stack(1_000_000, 0, 100_000), stack(2_000_000, 1_250, 100_000));
        let ack = |now, int| AckInfo { now, acked_bytes: 1000, ece: false, rtt_ps: None, srtt_ps: None, echo_ts_ps: 0, int: Some(int), in_recovery: false, snd_una: 1000, snd_nxt: 100_000, path: &path };
        cc.on_ack(&mut w, &ack(20_000_000, &s1));
        cc.on_ack(&mut w, &ack(21_000_000, &s2));
        let expect = 0.9 * (12_500.0 / (9.0 / 0.95) + 125.0) + 0.1 * 12_500.0;
        assert!((w.cwnd_bytes as f64 - expect).abs() <= 1.0, "{} vs {expect}", w.cwnd_bytes);
    }
}

//! PowerTCP (Addanki et al., NSDI 2022): INT-based. Per hop i, against the previous ACK's
//! INT records: λ_i = Δtx·8/Δt + Δq·8/Δt (the queue's arrival rate: drain plus growth) and
//! normalized power Γ_i = λ_i·(B_i·τ + 8·q_i) / (B_i²·τ). The bottleneck's Γ is smoothed over
//! a base RTT, Γ̄ ← (Γ̄·(τ − Δt) + Γ·Δt)/τ, and every ACK sets (fast reaction)
//!   W ← γ·(W_ref/(Γ̄/η) + β) + (1 − γ)·W,   rate = W/τ (paced),
//! while the reference window W_ref is updated once per RTT. η = target utilization.
//! λ is floored at B/2 (the reference code's rule) so a draining queue keeps Γ up.

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
    Ok(Box::new(PowerTcp { eta, gamma, ai_bps: mbps(p, "ai_mbps", 100.0)?, ctl: RateCtl::new(mbps(p, "min_rate_mbps", 100.0)?, true), prev: None, power: 0.0, w: 0.0, w_ref: 0.0 }))
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
                self.power = (self.power * (tau - dt) + g * dt) / tau;
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

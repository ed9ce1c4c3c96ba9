//! θ-PowerTCP (Addanki et al., NSDI 2022, §4.3): PowerTCP without INT. Power is estimated
//! from the RTT θ and its gradient: Γ = (dθ/dt + 1)·θ/τ (the first factor ≈ λ/B, the
//! second ≈ (q + B·τ)/(B·τ)). Once per RTT: Γ̄ is smoothed over τ and
//!   W ← γ·(W_ref/Γ̄ + β) + (1 − γ)·W,  W_ref ← W,  rate = W/τ (paced).
//! Unlike INT-based PowerTCP there is no target-utilization divisor: with empty queues the
//! RTT equals τ whatever the rate, so Γ = 1 at any utilization and only β (additive
//! increase) moves the window up; a divisor η < 1 would shrink the window forever (the
//! ABM code also leaves it out for θ-PowerTCP).
//! The gradient term is floored at 0.5 (as the ABM code) so one noisy sample cannot blow
//! the window up.

use super::rate::{RATE_KEYS, RateCtl, mbps};
use super::{AckInfo, CongestionControl, PathInfo, Window};
use crate::config::Params;
use crate::engine::{Time, PS_PER_S};

#[derive(Clone)]
pub struct ThetaPowerTcp {
    gamma: f64,
    ai_bps: f64,
    ctl: RateCtl,
    prev_rtt_s: Option<f64>,
    last_update: Time,
    power: f64,
    seeded: bool,
    w: f64,
}

pub fn build(p: &Params) -> Result<Box<dyn CongestionControl>, String> {
    p.allow_only("theta_powertcp", &[&["gamma", "ai_mbps", "min_rate_mbps"][..], &RATE_KEYS[..]].concat())?;
    let gamma = p.f64_or("gamma", 0.9)?;
    if !(0.0 < gamma && gamma <= 1.0) {
        return Err(format!("transport.cc_params.gamma = {gamma}: must lie in (0, 1]"));
    }
    Ok(Box::new(ThetaPowerTcp { gamma, ai_bps: mbps(p, "ai_mbps", 100.0)?, ctl: RateCtl::new(mbps(p, "min_rate_mbps", 100.0)?, true).with_opts(p)?, prev_rtt_s: None, last_update: 0, power: 0.0, seeded: false, w: 0.0 }))
}

impl CongestionControl for ThetaPowerTcp {
    fn name(&self) -> &'static str {
        "theta_powertcp"
    }
    fn clone_box(&self) -> Box<dyn CongestionControl> {
        Box::new(self.clone())
    }
    fn partial_window(&self) -> bool {
        true
    }
    fn on_start(&mut self, w: &mut Window, now: Time, path: &PathInfo) {
        self.ctl.start(w, path);
        self.w = self.ctl.window_bytes();
        self.last_update = now;
    }
    fn on_ack(&mut self, w: &mut Window, a: &AckInfo) {
        let Some(rtt) = a.stamp_rtt_ps() else { return };
        if !self.ctl.once_per_rtt(a) {
            return;
        }
        let tau = self.ctl.tau_s();
        let rtt = rtt as f64 / PS_PER_S as f64;
        // The gradient uses the real interval; the smoothing weight is capped at τ (the
        // ABM code divides by the capped value, which overstates the gradient when the
        // update interval exceeds τ).
        let interval = (a.now - self.last_update) as f64 / PS_PER_S as f64;
        let dt = interval.min(tau);
        self.last_update = a.now;
        let Some(prev) = self.prev_rtt_s.replace(rtt) else { return };
        if dt <= 0.0 {
            return;
        }
        let grad = ((rtt - prev) / interval + 1.0).max(0.5);
        let g = grad * rtt / tau;
        // The first measurement seeds Γ̄ (reference code: its first update has Δt clamped to τ).
        self.power = if self.seeded { (self.power * (tau - dt) + g * dt) / tau } else { g };
        self.seeded = true;
        if self.power > 0.0 {
            let target = self.w / self.power + self.ai_bps * tau / 8.0;
            self.w = self.gamma * target + (1.0 - self.gamma) * self.w;
            self.ctl.set_window(w, self.w);
            self.w = self.ctl.window_bytes();
        }
    }
    fn ssthresh_after_loss(&mut self, w: &Window, _in_flight: u64) -> u64 {
        self.ctl.opts.loss_ssthresh(w)
    }
    fn ssthresh_after_timeout(&mut self, w: &Window, in_flight_bytes: u64) -> u64 {
        self.ctl.opts.timeout_ssthresh(w, in_flight_bytes)
    }
    fn window_set(&self) -> (u64, u64) {
        self.ctl.window_set()
    }
    fn on_timeout(&mut self, w: &mut Window, _now: Time, _snd_max: u64) {
        w.pacing_rate_bps = self.ctl.rate_bps as u64;
    }
}

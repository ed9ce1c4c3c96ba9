//! HPCC (Li et al., SIGCOMM 2019, Algorithm 1): INT-based window control. Per ACK, the
//! bottleneck utilization U = max_i (min(q_i, q'_i)·8/(B_i·τ) + txRate_i/B_i) is smoothed,
//! U ← (1 − Δt/τ)·U + (Δt/τ)·U_new, and the window is
//!   W = W_c/(U/η) + W_AI   if U ≥ η or the additive-increase stage reached max_stage,
//!   W = W_c + W_AI         otherwise,
//! with the reference W_c (and the stage) updated once per RTT; the rate is W/τ, paced.
//! U starts at 1, as in the reference code (`hp.u = 1`, rdma-queue-pair.cc of HPCC and of the
//! ABM authors' ns-3), not 0: a new flow does not ignore congestion for a τ.

use super::rate::{RATE_KEYS, RateCtl, max_over_hops, mbps};
use super::{AckInfo, CongestionControl, PathInfo, Window};
use crate::config::Params;
use crate::engine::Time;
use crate::packet::IntStack;

#[derive(Clone)]
pub struct Hpcc {
    eta: f64,
    max_stage: u32,
    ai_bps: f64,
    ctl: RateCtl,
    prev: Option<IntStack>,
    u: f64,
    w_c: f64,
    inc_stage: u32,
}

pub fn build(p: &Params) -> Result<Box<dyn CongestionControl>, String> {
    p.allow_only("hpcc", &[&["eta", "max_stage", "ai_mbps", "min_rate_mbps"][..], &RATE_KEYS[..]].concat())?;
    let eta = p.f64_or("eta", 0.95)?;
    if !(0.0 < eta && eta <= 1.0) {
        return Err(format!("transport.cc_params.eta = {eta}: must lie in (0, 1]"));
    }
    let max_stage = p.f64_or("max_stage", 5.0)?.max(0.0) as u32;
    Ok(Box::new(Hpcc { eta, max_stage, ai_bps: mbps(p, "ai_mbps", 100.0)?, ctl: RateCtl::new(mbps(p, "min_rate_mbps", 100.0)?, true).with_opts(p)?, prev: None, u: 1.0, w_c: 0.0, inc_stage: 0 }))
}

/// Bottleneck utilization and its Δt (seconds) between two INT stacks.
pub fn bottleneck_utilization(cur: &IntStack, prev: &IntStack, tau_s: f64) -> Option<(f64, f64)> {
    max_over_hops(cur, prev, |h, p, _dt, tx| {
        let b = h.rate_bps as f64;
        (h.qlen_bytes.min(p.qlen_bytes) as f64) * 8.0 / (b * tau_s) + tx / b
    })
}

impl CongestionControl for Hpcc {
    fn name(&self) -> &'static str {
        "hpcc"
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
        self.w_c = self.ctl.window_bytes();
    }
    fn on_ack(&mut self, w: &mut Window, a: &AckInfo) {
        let Some(int) = a.int else { return };
        if int.n == 0 {
            return;
        }
        let tau = self.ctl.tau_s();
        let update = self.ctl.once_per_rtt(a);
        let Some(prev) = self.prev.replace(*int) else { return };
        let Some((u_new, dt)) = bottleneck_utilization(int, &prev, tau) else { return };
        let f = dt.min(tau) / tau;
        self.u = (1.0 - f) * self.u + f * u_new;
        let w_ai = self.ai_bps * tau / 8.0;
        let win = if self.u >= self.eta || self.inc_stage >= self.max_stage {
            if update {
                self.inc_stage = 0;
            }
            self.w_c / (self.u / self.eta).max(1e-9) + w_ai
        } else {
            if update {
                self.inc_stage += 1;
            }
            self.w_c + w_ai
        };
        self.ctl.set_window(w, win);
        if update {
            self.w_c = self.ctl.window_bytes();
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testutil::one_hop_int as stack;


    /// A new flow meets a one-BDP queue (12.5 KB at 10 Gbps, τ = 10 µs) on a port sending at
    /// line rate: U_new = q·8/(Bτ) + tx/B = 2. From U = 1, one ACK 1 µs later gives U = 0.9 + 0.2
    /// = 1.1 ≥ η and W = 12500/(1.1/0.95) + 125 = 10920 B. (From U = 0, U = 0.2 < η: additive
    /// increase, the window stays at line rate.)
    #[test]
    fn utilization_starts_at_one() {
        let p = serde_json::Map::new();
        let mut cc = build(&Params::new("t", &p)).unwrap();
        let path = PathInfo { base_rtt_ps: 10_000_000, tau_ps: 10_000_000, line_rate_bps: 10_000_000_000 };
        let mut w = Window { cwnd_bytes: 0, ssthresh_bytes: u64::MAX, mss_bytes: 1000, pacing_rate_bps: 0 };
        cc.on_start(&mut w, 0, &path);
        let (s1, s2) = (stack(1_000_000, 0, 12_500), stack(2_000_000, 1_250, 12_500));
        let ack = |now, int| AckInfo { now, acked_bytes: 1000, ece: false, rtt_ps: None, srtt_ps: None, echo_ts_ps: 0, int: Some(int), in_recovery: false, snd_una: 1000, snd_nxt: 100_000, next_tx: 100_000, path: &path };
        cc.on_ack(&mut w, &ack(20_000_000, &s1));
        cc.on_ack(&mut w, &ack(21_000_000, &s2));
        let expect = 12_500.0 / (1.1 / 0.95) + 125.0;
        assert!((w.cwnd_bytes as f64 - expect).abs() <= 1.0, "{} vs {expect}", w.cwnd_bytes);
    }
}

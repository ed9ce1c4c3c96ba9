//! TIMELY (Mittal et al., SIGCOMM 2015, Algorithm 1): rate-based with pacing, driven by the
//! RTT gradient. Once per RTT, with rtt the latest sample and
//! rtt_diff ← (1 − α)·rtt_diff + α·(rtt − prev_rtt), g = rtt_diff / min_rtt:
//!   rtt < T_low → R += δ;  rtt > T_high → R ← R·(1 − β(1 − T_high/rtt));
//!   g ≤ 0 → R += N·δ (N = 5 after 5 consecutive such updates: hyper-active increase);
//!   else R ← R·(1 − β·g).
//! The gradient is signed (the ABM code keeps it in an unsigned integer, a bug we do not copy).

use super::rate::{mbps, RateCtl};
use super::{AckInfo, CongestionControl, PathInfo, Window};
use crate::config::Params;
use crate::engine::{Time, PS_PER_US};

#[derive(Clone)]
pub struct Timely {
    t_low_ps: f64,
    t_high_ps: f64,
    alpha: f64,
    beta: f64,
    delta_bps: f64,
    hai_n: u32,
    ctl: RateCtl,
    prev_rtt_ps: Option<f64>,
    rtt_diff_ps: f64,
    neg_count: u32,
    min_rtt_ps: f64,
    /// Update every this many acknowledged bytes (the paper's completion events); 0: once per RTT.
    seg_bytes: u64,
    acked_since: u64,
}

pub fn build(p: &Params) -> Result<Box<dyn CongestionControl>, String> {
    p.allow_only("timely", &["t_low_us", "t_high_us", "alpha", "beta", "ai_mbps", "hai_after", "min_rate_mbps", "segment_bytes"])?;
    let t_low = p.f64_or("t_low_us", 50.0)?;
    let t_high = p.f64_or("t_high_us", 500.0)?;
    if !(0.0 <= t_low && t_low < t_high) {
        return Err(format!("transport.cc_params: t_low_us = {t_low} and t_high_us = {t_high}: need 0 <= t_low_us < t_high_us"));
    }
    let alpha = p.f64_or("alpha", 0.875)?;
    let beta = p.f64_or("beta", 0.8)?;
    for (k, v) in [("alpha", alpha), ("beta", beta)] {
        if !(0.0 < v && v <= 1.0) {
            return Err(format!("transport.cc_params.{k} = {v}: must lie in (0, 1]"));
        }
    }
    let hai = p.f64_or("hai_after", 5.0)?;
    Ok(Box::new(Timely {
        t_low_ps: t_low * PS_PER_US as f64,
        t_high_ps: t_high * PS_PER_US as f64,
        alpha,
        beta,
        delta_bps: mbps(p, "ai_mbps", 10.0)?,
        hai_n: hai.max(1.0) as u32,
        ctl: RateCtl::new(mbps(p, "min_rate_mbps", 100.0)?, false),
        prev_rtt_ps: None,
        rtt_diff_ps: 0.0,
        neg_count: 0,
        min_rtt_ps: 0.0,
        seg_bytes: p.f64_or("segment_bytes", 64_000.0)?.max(0.0) as u64,
        acked_since: 0,
    }))
}

impl CongestionControl for Timely {
    fn name(&self) -> &'static str {
        "timely"
    }
    fn clone_box(&self) -> Box<dyn CongestionControl> {
        Box::new(self.clone())
    }
    fn on_start(&mut self, w: &mut Window, _now: Time, path: &PathInfo) {
        self.min_rtt_ps = path.tau_ps as f64;
        self.ctl.start(w, path);
    }
    fn on_ack(&mut self, w: &mut Window, a: &AckInfo) {
        let Some(rtt) = a.rtt_ps else { return };
        self.acked_since += a.acked_bytes;
        // Completion events: every segment_bytes acknowledged, or once per RTT, whichever
        // comes first (so a slow flow still updates, and a fast one does not wait for an RTT
        // inflated by the very queue it should react to).
        let seg_due = self.seg_bytes > 0 && self.acked_since >= self.seg_bytes;
        if !(self.ctl.once_per_rtt(a) || seg_due) {
            return;
        }
        self.acked_since = 0;
        let rtt = rtt as f64;
        let Some(prev) = self.prev_rtt_ps.replace(rtt) else { return };
        self.rtt_diff_ps = (1.0 - self.alpha) * self.rtt_diff_ps + self.alpha * (rtt - prev);
        let g = self.rtt_diff_ps / self.min_rtt_ps;
        let r = self.ctl.rate_bps;
        let new = if rtt < self.t_low_ps {
            self.neg_count = 0;
            r + self.delta_bps
        } else if rtt > self.t_high_ps {
            self.neg_count = 0;
            r * (1.0 - self.beta * (1.0 - self.t_high_ps / rtt))
        } else if g <= 0.0 {
            self.neg_count += 1;
            let n = if self.neg_count >= self.hai_n { self.hai_n as f64 } else { 1.0 };
            r + n * self.delta_bps
        } else {
            self.neg_count = 0;
            r * (1.0 - self.beta * g).max(0.0)
        };
        self.ctl.set(w, new);
    }
    fn ssthresh_after_loss(&mut self, w: &Window, _in_flight: u64) -> u64 {
        w.cwnd_bytes // rate-based: loss does not cut the rate (as the ABM code)
    }
}

//! Shared machinery of the rate-based algorithms (TIMELY, PowerTCP, θ-PowerTCP, HPCC):
//! a paced rate clamped to [min, line rate], the window that goes with it, and the
//! "once per RTT" update trigger (an ACK beyond the sequence sent at the last update).

use super::{AckInfo, PathInfo, Window};
use crate::engine::{Time, PS_PER_S};
use crate::packet::{IntHop, IntStack};

#[derive(Clone, Debug)]
pub struct RateCtl {
    pub rate_bps: f64,
    pub min_bps: f64,
    pub max_bps: f64,
    last_update_seq: u64,
    last_update_ps: Time,
    /// Window = rate × τ (PowerTCP, HPCC) or unlimited (TIMELY).
    window_from_rate: bool,
    tau_s: f64,
}

impl RateCtl {
    pub fn new(min_bps: f64, window_from_rate: bool) -> Self {
        RateCtl { rate_bps: 0.0, min_bps, max_bps: f64::MAX, last_update_seq: 0, last_update_ps: 0, window_from_rate, tau_s: 0.0 }
    }

    /// Start at line rate (as the ABM code and the papers do).
    pub fn start(&mut self, w: &mut Window, path: &PathInfo) {
        self.max_bps = path.line_rate_bps as f64;
        self.tau_s = path.tau_ps as f64 / PS_PER_S as f64;
        self.set(w, self.max_bps);
    }

    /// Set the rate (clamped) and the matching window; returns the clamped rate.
    pub fn set(&mut self, w: &mut Window, rate_bps: f64) -> f64 {
        let r = if rate_bps.is_finite() { rate_bps.clamp(self.min_bps, self.max_bps) } else { self.max_bps };
        self.rate_bps = r;
        w.pacing_rate_bps = r as u64;
        w.cwnd_bytes = if self.window_from_rate { ((r * self.tau_s / 8.0) as u64).max(w.mss_bytes) } else { u64::MAX / 4 };
        r
    }

    /// Set a window in bytes (window-based algorithms) and pace at window / τ.
    pub fn set_window(&mut self, w: &mut Window, window_bytes: f64) -> f64 {
        self.set(w, window_bytes * 8.0 / self.tau_s)
    }

    pub fn window_bytes(&self) -> f64 {
        self.rate_bps * self.tau_s / 8.0
    }

    pub fn tau_s(&self) -> f64 {
        self.tau_s
    }

    /// True once per RTT: for the first ACK beyond what was sent at the previous update, or
    /// (when losses stall the cumulative ACK) for any ACK an RTT after the previous update,
    /// so a rate-based sender keeps reacting while it recovers.
    pub fn once_per_rtt(&mut self, a: &AckInfo) -> bool {
        let rtt = a.stamp_rtt_ps().unwrap_or(a.path.tau_ps).max(a.path.tau_ps);
        if a.snd_una > self.last_update_seq || a.now >= self.last_update_ps + rtt {
            self.last_update_seq = a.snd_nxt;
            self.last_update_ps = a.now;
            true
        } else {
            false
        }
    }
}

/// Read a rate parameter given in Mbps.
pub fn mbps(p: &crate::config::Params, key: &str, default: f64) -> Result<f64, String> {
    let v = p.f64_or(key, default)?;
    crate::config::check_positive("transport.cc_params", key, &[v])?;
    Ok(v * 1e6)
}

/// The hop maximizing `metric(hop, previous record, Δt seconds, tx rate bits/s)` between two
/// INT stacks of the same path, with that hop's Δt (PowerTCP's power, HPCC's utilization).
pub fn max_over_hops(cur: &IntStack, prev: &IntStack, metric: impl Fn(&IntHop, &IntHop, f64, f64) -> f64) -> Option<(f64, f64)> {
    let mut best: Option<(f64, f64)> = None;
    for i in 0..(cur.n.min(prev.n) as usize) {
        let (h, p) = (&cur.hops[i], &prev.hops[i]);
        if h.ts_ps <= p.ts_ps {
            continue;
        }
        let dt = (h.ts_ps - p.ts_ps) as f64 / PS_PER_S as f64;
        let tx_bps = h.tx_bytes.saturating_sub(p.tx_bytes) as f64 * 8.0 / dt;
        let v = metric(h, p, dt, tx_bps);
        if best.map_or(true, |(bv, _)| v > bv) {
            best = Some((v, dt));
        }
    }
    best
}

//! DCTCP (Alizadeh et al., SIGCOMM 2010; RFC 8257), as ns-3's TcpDctcp on Reno growth:
//! α ← (1 − g)·α + g·F once per window of data (F = fraction of acked bytes that echoed CE),
//! initial α = 1, g = 1/16; on an ECN echo, at most once per window, cwnd ← cwnd·(1 − α/2).
//! Loss halves the window like standard TCP (RFC 8257 §3.5, Linux); ns-3's TcpDctcp uses
//! (1 − α/2) for losses too, which without ECN marks (α → 0) hardly backs off at all.

use super::{AckInfo, CongestionControl, FlowCc, RenoGrowth, Window};
use crate::config::{check_positive, Params};

#[derive(Clone)]
pub struct Dctcp {
    g: f64,
    alpha: f64,
    initial_alpha: f64,
    growth: RenoGrowth,
    acked_in_window: u64,
    marked_in_window: u64,
    /// α is updated when snd_una passes this sequence.
    window_end: u64,
    /// No further ECN cut until snd_una passes this sequence.
    cwr_end: u64,
    started: bool,
}

pub fn build(p: &Params) -> Result<Box<dyn CongestionControl>, String> {
    p.allow_only("dctcp", &["g", "initial_alpha"])?;
    let g = p.f64_or("g", 1.0 / 16.0)?;
    let a0 = p.f64_or("initial_alpha", 1.0)?;
    check_positive("transport.cc_params", "g", &[g])?;
    if g > 1.0 || !(0.0..=1.0).contains(&a0) {
        return Err(format!("transport.cc_params: g = {g} and initial_alpha = {a0} must lie in (0, 1] and [0, 1]"));
    }
    Ok(Box::new(Dctcp::new(g, a0)))
}

impl Dctcp {
    pub fn new(g: f64, initial_alpha: f64) -> Self {
        Dctcp { g, alpha: initial_alpha, initial_alpha, growth: RenoGrowth::default(), acked_in_window: 0, marked_in_window: 0, window_end: 0, cwr_end: 0, started: false }
    }

    /// A fresh per-flow instance with the same parameters.
    fn fresh(&self) -> Self {
        Dctcp::new(self.g, self.initial_alpha)
    }

    pub fn alpha(&self) -> f64 {
        self.alpha
    }
}

impl CongestionControl for Dctcp {
    fn name(&self) -> &'static str {
        "dctcp"
    }
    fn clone_box(&self) -> Box<dyn CongestionControl> {
        Box::new(self.fresh())
    }
    fn clone_flow(&self) -> FlowCc {
        FlowCc::Dctcp(Box::new(self.fresh()))
    }
    fn ecn_capable(&self) -> bool {
        true
    }
    // Inlined into `FlowCc::on_ack`, itself inlined into the TCP fast ACK path.
    #[inline(always)]
    fn on_ack(&mut self, w: &mut Window, a: &AckInfo) {
        if !self.started {
            self.started = true;
            self.window_end = a.snd_nxt;
        }
        self.acked_in_window += a.acked_bytes;
        if a.ece {
            self.marked_in_window += a.acked_bytes;
        }
        if a.snd_una >= self.window_end && self.acked_in_window > 0 {
            let f = self.marked_in_window as f64 / self.acked_in_window as f64;
            self.alpha = (1.0 - self.g) * self.alpha + self.g * f;
            self.acked_in_window = 0;
            self.marked_in_window = 0;
            self.window_end = a.snd_nxt;
        }
        if a.in_recovery {
            return;
        }
        if a.ece && a.snd_una >= self.cwr_end {
            let cut = ((w.cwnd_bytes as f64) * (1.0 - self.alpha / 2.0)) as u64;
            w.cwnd_bytes = cut.max(w.mss_bytes);
            w.ssthresh_bytes = w.cwnd_bytes.max(2 * w.mss_bytes);
            self.cwr_end = a.snd_nxt;
        } else if a.acked_bytes > 0 {
            self.growth.grow(w, a.acked_bytes);
        }
    }
    fn ssthresh_after_loss(&mut self, w: &Window, _in_flight: u64) -> u64 {
        (w.cwnd_bytes / 2).max(2 * w.mss_bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(acked: u64, ece: bool, una: u64, nxt: u64) -> AckInfo<'static> {
        AckInfo { now: 0, acked_bytes: acked, ece, rtt_ps: None, srtt_ps: None, echo_ts_ps: 0, int: None, in_recovery: false, snd_una: una, snd_nxt: nxt, path: &crate::cc::PathInfo { base_rtt_ps: 0, tau_ps: 0, line_rate_bps: 1 } }
    }

    #[test]
    fn alpha_ewma_and_single_cut_per_window() {
        let mut cc = Dctcp::new(1.0 / 16.0, 1.0);
        let mut w = Window { cwnd_bytes: 10_000, ssthresh_bytes: u64::MAX, mss_bytes: 1000, pacing_rate_bps: 0 };
        // First ECN echo: alpha = 1, cwnd halves once.
        cc.on_ack(&mut w, &ack(1000, true, 1000, 10_000));
        assert_eq!(w.cwnd_bytes, 5000);
        cc.on_ack(&mut w, &ack(1000, true, 2000, 10_000));
        assert_eq!(w.cwnd_bytes, 5000, "second echo within the same window must not cut again");
        // Finish the window with no marks: 2 of 10 KB marked -> alpha = 15/16 + 1/16*0.2.
        for i in 3..=10 {
            cc.on_ack(&mut w, &ack(1000, false, i * 1000, 15_000));
        }
        let expect = 15.0 / 16.0 + 0.2 / 16.0;
        assert!((cc.alpha() - expect).abs() < 1e-12, "alpha {}", cc.alpha());
    }
}

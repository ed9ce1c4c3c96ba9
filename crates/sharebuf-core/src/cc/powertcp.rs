//! PowerTCP (Addanki et al., NSDI 2022): INT-based. Per hop i, against the previous ACK's
//! INT records: λ_i = Δtx·8/Δt + Δq·8/Δt (the queue's arrival rate: drain plus growth) and
//! normalized power Γ_i = λ_i·(B_i·τ + 8·q_i) / (B_i²·τ). The bottleneck's Γ is smoothed over
//! a base RTT, Γ̄ ← (Γ̄·(τ − Δt) + Γ·Δt)/τ, and every ACK sets (fast reaction)
//!   W ← γ·(W_ref/(Γ̄/η) + β) + (1 − γ)·W,   rate = W/τ (paced),
//! while the reference window W_ref is updated once per RTT. η = target utilization.
//! λ is floored at B/2 (the reference code's rule) so a draining queue keeps Γ up. The first
//! measurement seeds Γ̄ (reference code), so a new flow does not ignore congestion for a τ.
//!
//! ns3dc's TCP PowerTCP (`TcpAdvanced::UpdateRatePowertcp`, per ACK and once per RTT alike)
//! differs in five named parameters (docs/transports/powertcp.md): `smoothing_base =
//! "reference"` (the (1 − γ) term takes W_ref, not the current W), `unsmoothed_below = 0.5`
//! (at Γ̄/η ≤ 0.5, W = W_ref/(Γ̄/η) + β with no smoothing), `power_start = "zero"` (Γ̄ starts
//! at 0 and the first ACK only keeps its records) and `tau_base = "propagation"` (τ is the
//! configured propagation RTT, 80 µs, not the unloaded RTT with serialization), and
//! `window_check = "segment"` (a segment goes only if it fits in the window, ns-3's
//! `SendPendingData`, not while the bytes in flight are below it).

use super::rate::{RATE_KEYS, RateCtl, max_over_hops, mbps};
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
    /// The (1 − γ) term takes W_ref (`smoothing_base = "reference"`) instead of the current W.
    smooth_ref: bool,
    /// Γ̄/η at or below which W = W_ref/(Γ̄/η) + β, unsmoothed (0: never).
    unsmoothed_below: f64,
    /// Γ̄ starts at 0 and ramps (`power_start = "zero"`) instead of being seeded.
    start_zero: bool,
    /// τ is the path's propagation RTT (`tau_base = "propagation"`) instead of its unloaded RTT.
    tau_propagation: bool,
    /// A segment goes only if it fits in the window (`window_check = "segment"`, ns-3's
    /// `SendPendingData`) instead of while the bytes in flight are below it.
    segment_window: bool,
}

pub fn build(p: &Params) -> Result<Box<dyn CongestionControl>, String> {
    Ok(Box::new(new(p)?))
}

fn new(p: &Params) -> Result<PowerTcp, String> {
    p.allow_only("powertcp", &[&["eta", "gamma", "ai_mbps", "min_rate_mbps", "smoothing_base", "unsmoothed_below", "power_start", "tau_base", "window_check"][..], &RATE_KEYS[..]].concat())?;
    let eta = p.f64_or("eta", 0.95)?;
    let gamma = p.f64_or("gamma", 0.9)?;
    for (k, v) in [("eta", eta), ("gamma", gamma)] {
        if !(0.0 < v && v <= 1.0) {
            return Err(format!("transport.cc_params.{k} = {v}: must lie in (0, 1]"));
        }
    }
    let unsmoothed_below = p.f64_or("unsmoothed_below", 0.0)?;
    if !(unsmoothed_below >= 0.0 && unsmoothed_below.is_finite()) {
        return Err(format!("transport.cc_params.unsmoothed_below = {unsmoothed_below}: must be a finite number >= 0 (0: always smoothed)"));
    }
    Ok(PowerTcp {
        eta,
        gamma,
        ai_bps: mbps(p, "ai_mbps", 100.0)?,
        ctl: RateCtl::new(mbps(p, "min_rate_mbps", 100.0)?, true).with_opts(p)?,
        prev: None,
        power: 0.0,
        seeded: false,
        w: 0.0,
        w_ref: 0.0,
        smooth_ref: p.str_or("smoothing_base", "current", &["current", "reference"])? == "reference",
        unsmoothed_below,
        start_zero: p.str_or("power_start", "first", &["first", "zero"])? == "zero",
        tau_propagation: p.str_or("tau_base", "unloaded", &["unloaded", "propagation"])? == "propagation",
        segment_window: p.str_or("window_check", "in_flight", &["in_flight", "segment"])? == "segment",
    })
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
        !self.segment_window
    }
    fn wants_int(&self) -> bool {
        true
    }
    fn on_start(&mut self, w: &mut Window, _now: Time, path: &PathInfo) {
        if self.tau_propagation {
            self.ctl.start(w, &PathInfo { tau_ps: path.base_rtt_ps, ..*path });
        } else {
            self.ctl.start(w, path);
        }
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
                // (`power_start = "zero"`: Γ̄ ramps from 0, as ns3dc's TcpAdvanced, whose first
                // ACK only keeps its records.)
                self.power = if self.seeded || self.start_zero { (self.power * (tau - dt) + g * dt) / tau } else { g };
                self.seeded = true;
                if self.power > 0.0 {
                    let c = self.power / self.eta;
                    let target = self.w_ref / c + self.ai_bps * tau / 8.0;
                    self.w = if c <= self.unsmoothed_below {
                        target
                    } else {
                        self.gamma * target + (1.0 - self.gamma) * if self.smooth_ref { self.w_ref } else { self.w }
                    };
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
        self.ctl.opts.loss_ssthresh(w)
    }
    fn ssthresh_after_timeout(&mut self, w: &Window, in_flight_bytes: u64) -> u64 {
        self.ctl.opts.timeout_ssthresh(w, in_flight_bytes)
    }
    fn window_set(&self) -> (u64, u64) {
        self.ctl.window_set()
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
        let ack = |now, int| AckInfo { now, acked_bytes: 1000, ece: false, rtt_ps: None, srtt_ps: None, echo_ts_ps: 0, int: Some(int), in_recovery: false, snd_una: 1000, snd_nxt: 100_000, next_tx: 100_000, path: &path };
        cc.on_ack(&mut w, &ack(20_000_000, &s1));
        cc.on_ack(&mut w, &ack(21_000_000, &s2));
        let expect = 0.9 * (12_500.0 / (9.0 / 0.95) + 125.0) + 0.1 * 12_500.0;
        assert!((w.cwnd_bytes as f64 - expect).abs() <= 1.0, "{} vs {expect}", w.cwnd_bytes);
    }

    fn with(kv: &[(&str, serde_json::Value)]) -> PowerTcp {
        let p: serde_json::Map<String, serde_json::Value> = kv.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
        new(&Params::new("transport.cc_params", &p)).unwrap()
    }

    /// 10 Gbps, τ = 10 µs (a 12,500 B line-rate window); the first ACK (INT at 1 µs) keeps its
    /// records and sets W_ref = W = 12,500 B. Returns the algorithm and the window.
    fn started(mut cc: PowerTcp, path: &PathInfo) -> (PowerTcp, Window) {
        let mut w = Window { cwnd_bytes: 0, ssthresh_bytes: u64::MAX, mss_bytes: 1000, pacing_rate_bps: 0 };
        cc.on_start(&mut w, 0, path);
        let int = stack(1_000_000, 0, 25_000);
        let a = AckInfo { now: 20_000_000, acked_bytes: 1000, ece: false, rtt_ps: None, srtt_ps: None, echo_ts_ps: 0, int: Some(&int), in_recovery: false, snd_una: 1000, snd_nxt: 100_000, next_tx: 100_000, path };
        cc.on_ack(&mut w, &a);
        (cc, w)
    }

    /// The next ACK, 1 µs of INT later: the hop sent 1250 B (line rate) and its queue stays at
    /// 25,000 B, so λ = B and Γ = (Bτ + 8q)/(Bτ) = (12,500 + 25,000)/12,500 = 3. It comes 2 µs
    /// after the first, within the RTT: no once-per-RTT update (W_ref stays).
    fn next_ack(cc: &mut PowerTcp, w: &mut Window, path: &PathInfo) {
        let int = stack(2_000_000, 1_250, 25_000);
        let a = AckInfo { now: 22_000_000, acked_bytes: 1000, ece: false, rtt_ps: None, srtt_ps: None, echo_ts_ps: 0, int: Some(&int), in_recovery: false, snd_una: 1000, snd_nxt: 100_000, next_tx: 100_000, path };
        cc.on_ack(w, &a);
    }

    const PATH: PathInfo = PathInfo { base_rtt_ps: 10_000_000, tau_ps: 10_000_000, line_rate_bps: 10_000_000_000 };

    /// Smoothing toward the current window (the paper) or toward W_ref (ns3dc's TcpAdvanced
    /// and the reference code: `0.1·CCRateAgg`). State before the ACK: Γ̄ = 2, W_ref = 5000 B,
    /// W = 3000 B. Γ̄ ← (2·9 + 3·1)/10 = 2.1, Γ̄/η = 2.1/0.95, target = 5000/(2.1/0.95) + 125
    /// = 2386.905 B; current: 0.9·2386.905 + 0.1·3000 = 2448.214 B; reference: + 0.1·5000 =
    /// 2648.214 B (ns3dc's rate = 0.9·(R_ref/c + AI) + 0.1·R_ref, ×τ/8).
    #[test]
    fn smoothing_base_current_or_reference() {
        for (base, expect, smooth_to) in [("current", 2448.214_f64, 3000.0), ("reference", 2648.214, 5000.0)] {
            let exact: f64 = 0.9 * (5000.0 / (2.1 / 0.95) + 125.0) + 0.1 * smooth_to;
            assert!((exact - expect).abs() < 1e-3);
            let (mut cc, mut w) = started(with(&[("smoothing_base", base.into())]), &PATH);
            (cc.power, cc.seeded, cc.w_ref, cc.w) = (2.0, true, 5000.0, 3000.0);
            cc.ctl.set_window(&mut w, 3000.0);
            next_ack(&mut cc, &mut w, &PATH);
            assert!((cc.w - expect).abs() < 1e-3, "{base}: {} vs {expect}", cc.w);
            assert!((w.pacing_rate_bps as f64 - exact * 8.0 / 10e-6).abs() <= 1.0, "{base}: {} bps", w.pacing_rate_bps);
        }
    }

    /// ns3dc's start: Γ̄ = 0 after the first ACK (which only keeps its records), so the second
    /// one gives Γ̄ = (0·9 + 3·1)/10 = 0.3, c = 0.3/0.95 = 0.315789; with W_ref = W = 1000 B the
    /// target is 1000/c + 125 = 3291.667 B. At c ≤ 0.5 (`unsmoothed_below = 0.5`) W is the
    /// target; smoothed, 0.9·3291.667 + 0.1·1000 = 3062.5 B. Seeded (the default), Γ̄ = 3:
    /// 0.9·(1000/(3/0.95) + 125) + 100 = 497.5 B.
    #[test]
    fn power_start_zero_and_unsmoothed_below() {
        let cases = [
            (vec![("power_start", "zero".into()), ("unsmoothed_below", 0.5.into())], 3291.667),
            (vec![("power_start", "zero".into())], 3062.5),
            (vec![("unsmoothed_below", 0.5.into())], 497.5),
        ];
        for (kv, expect) in cases {
            let (mut cc, mut w) = started(with(&kv), &PATH);
            assert_eq!(cc.power, 0.0);
            (cc.w_ref, cc.w) = (1000.0, 1000.0);
            next_ack(&mut cc, &mut w, &PATH);
            assert!((cc.w - expect).abs() < 1e-3, "{kv:?}: {} vs {expect}", cc.w);
        }
    }

    /// `tau_base = "propagation"`: τ is the path's propagation RTT (ns3dc's configured 80 µs base
    /// RTT), here 8 µs against an unloaded 10 µs: the line-rate window is 10 Gbps·8 µs/8 = 10,000 B
    /// (12,500 B by default), and β = 100 Mbps·8 µs/8 = 100 B.
    #[test]
    fn tau_base_propagation() {
        let path = PathInfo { base_rtt_ps: 8_000_000, ..PATH };
        let (cc, w) = started(with(&[]), &path);
        assert_eq!((w.cwnd_bytes, cc.ctl.tau_s()), (12_500, 10e-6));
        let (cc, w) = started(with(&[("tau_base", "propagation".into())]), &path);
        assert_eq!((w.cwnd_bytes, cc.ctl.tau_s()), (10_000, 8e-6));
    }

    #[test]
    fn bad_values_name_the_parameter() {
        let bad = |k: &str, v: serde_json::Value| {
            let p: serde_json::Map<String, serde_json::Value> = [(k.to_string(), v)].into_iter().collect();
            new(&Params::new("transport.cc_params", &p)).err().unwrap()
        };
        assert!(bad("smoothing_base", "window".into()).contains("smoothing_base = 'window': not allowed; allowed: current, reference"));
        assert!(bad("power_start", "seed".into()).contains("allowed: first, zero"));
        assert!(bad("tau_base", "tau".into()).contains("allowed: unloaded, propagation"));
        assert!(bad("unsmoothed_below", (-1.0).into()).contains("unsmoothed_below = -1"));
        assert!(bad("window_check", "bytes".into()).contains("allowed: in_flight, segment"));
    }
}

//! TIMELY (Mittal et al., SIGCOMM 2015, Algorithm 1): rate-based with pacing, driven by the
//! RTT gradient. Once per RTT, with rtt the latest sample and
//! rtt_diff ← (1 − α)·rtt_diff + α·(rtt − prev_rtt), g = rtt_diff / min_rtt:
//!   rtt < T_low → R += δ;  rtt > T_high → R ← R·(1 − β(1 − T_high/rtt));
//!   g ≤ 0 → R += N·δ (N = 5 after 5 consecutive such updates: hyper-active increase);
//!   else R ← R·(1 − β·g).
//! The gradient is signed by default (the ABM code keeps rtt_diff in an unsigned integer: `rtt_diff_wraps`).
//! `hai_mbps` gives ns3dc's variant (ns-3.39 `TcpAdvanced::UpdateRateTimely`): every increase —
//! T_low or gradient branch — adds δ, and once `hai_after` increases came in a row it adds
//! `hai_mbps` instead; any decrease restarts the count.
//!
//! More of ns3dc's details, off by default:
//! * `keep_initial_window = true`: the transport's initial window holds until the first rate
//!   update (ns3dc's TcpSocketBase sets cwnd = InitialCwnd segments at the SYN-ACK, after
//!   TcpAdvanced::Init made it unlimited; only SetCCRate, at the second once-per-RTT trigger,
//!   lifts it). The default starts unlimited, pacing alone.
//! * `gradient_base = "propagation"`: g = rtt_diff / the path's propagation RTT (ns3dc divides
//!   by its configured base RTT, 8 link delays = 80 µs here, whose serialization term is lost to
//!   a unit slip); the default "tau" divides by τ, which includes serialization at every hop.
//! * `rtt_diff_wraps = true`: ns3dc stores rtt_diff between updates in a `uint64_t`
//!   (`lastRTTdiff`, integer ns): a positive difference is truncated to whole ns, a negative one
//!   becomes 2⁶⁴ + it (x86-64's conversion), so the next update's rtt_diff is ≈ 2⁶¹ ns and, if
//!   that RTT lies between T_low and T_high, the rate drops to its floor; the stored value
//!   decays by 1 − α per update (16 updates back below 100 µs).

use super::rate::{RATE_KEYS, RateCtl, mbps};
use super::{AckInfo, CongestionControl, PathInfo, Window};
use crate::config::Params;
use crate::engine::{Time, PS_PER_NS, PS_PER_US};

#[derive(Clone)]
pub struct Timely {
    t_low_ps: f64,
    t_high_ps: f64,
    alpha: f64,
    beta: f64,
    delta_bps: f64,
    hai_n: u32,
    /// ns3dc's high additive increase (bits/s), counted over increases of either branch; None: the paper's N·δ.
    hai_step_bps: Option<f64>,
    /// Increases in a row (for `hai_step_bps`).
    inc_count: u32,
    ctl: RateCtl,
    prev_rtt_ps: Option<f64>,
    rtt_diff_ps: f64,
    neg_count: u32,
    min_rtt_ps: f64,
    /// Update every this many acknowledged bytes (the paper's completion events); 0: once per RTT.
    seg_bytes: u64,
    acked_since: u64,
    /// Gradient normalized by the path's propagation RTT instead of τ.
    grad_by_propagation: bool,
    /// rtt_diff kept between updates as ns3dc's uint64 ns.
    rtt_diff_wraps: bool,
    /// The transport's initial window holds until the first rate update.
    keep_initial_window: bool,
}

/// 2⁶⁴ (ns): a negative rtt_diff stored in ns3dc's `uint64_t lastRTTdiff`.
const TWO_64: f64 = 18_446_744_073_709_551_616.0;

/// rtt_diff (ps) as ns3dc keeps it between updates: `uint64_t` ns, truncated toward zero; a
/// negative value wraps to 2⁶⁴ + it (x86-64: cvttsd2si, then the bits read unsigned).
pub fn ns3dc_stored_rtt_diff_ps(d_ps: f64) -> f64 {
    let ns = (d_ps / PS_PER_NS as f64).trunc();
    (if ns < 0.0 { TWO_64 + ns } else { ns }) * PS_PER_NS as f64
}

pub fn build(p: &Params) -> Result<Box<dyn CongestionControl>, String> {
    p.allow_only("timely", &[&["t_low_us", "t_high_us", "alpha", "beta", "ai_mbps", "hai_after", "hai_mbps", "min_rate_mbps", "segment_bytes", "gradient_base", "rtt_diff_wraps", "keep_initial_window"][..], &RATE_KEYS[..]].concat())?;
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
        hai_step_bps: if p.raw("hai_mbps").is_some() { Some(mbps(p, "hai_mbps", 0.0)?) } else { None },
        inc_count: 0,
        ctl: RateCtl::new(mbps(p, "min_rate_mbps", 100.0)?, false).with_opts(p)?,
        prev_rtt_ps: None,
        rtt_diff_ps: 0.0,
        neg_count: 0,
        min_rtt_ps: 0.0,
        seg_bytes: p.f64_or("segment_bytes", 64_000.0)?.max(0.0) as u64,
        acked_since: 0,
        grad_by_propagation: p.str_or("gradient_base", "tau", &["tau", "propagation"])? == "propagation",
        rtt_diff_wraps: p.bool_or("rtt_diff_wraps", false)?,
        keep_initial_window: p.bool_or("keep_initial_window", false)?,
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
        self.min_rtt_ps = if self.grad_by_propagation { path.base_rtt_ps } else { path.tau_ps } as f64;
        let iw = w.cwnd_bytes;
        self.ctl.start(w, path);
        if self.keep_initial_window {
            w.cwnd_bytes = iw;
        }
    }
    fn on_ack(&mut self, w: &mut Window, a: &AckInfo) {
        let Some(rtt) = a.stamp_rtt_ps() else { return };
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
        let rtt_diff = (1.0 - self.alpha) * self.rtt_diff_ps + self.alpha * (rtt - prev);
        self.rtt_diff_ps = if self.rtt_diff_wraps { ns3dc_stored_rtt_diff_ps(rtt_diff) } else { rtt_diff };
        let g = rtt_diff / self.min_rtt_ps;
        let r = self.ctl.rate_bps;
        if let Some(hai) = self.hai_step_bps {
            let inc = rtt < self.t_low_ps || (rtt <= self.t_high_ps && g <= 0.0);
            let new = if inc {
                let step = if self.inc_count < self.hai_n { self.delta_bps } else { hai };
                self.inc_count += 1;
                r + step
            } else {
                self.inc_count = 0;
                let c = if rtt > self.t_high_ps { 1.0 - self.beta * (1.0 - self.t_high_ps / rtt) } else { 1.0 - self.beta * g };
                r * c.max(0.0)
            };
            self.ctl.set(w, new);
            return;
        }
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
        self.ctl.opts.loss_ssthresh(w)
    }
    fn ssthresh_after_timeout(&mut self, w: &Window, in_flight_bytes: u64) -> u64 {
        self.ctl.opts.timeout_ssthresh(w, in_flight_bytes)
    }
    fn window_set(&self) -> (u64, u64) {
        self.ctl.window_set()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::PathInfo;
    use serde_json::json;

    const US: u64 = PS_PER_US;

    /// One update per call: each ACK acknowledges past what was sent at the previous update.
    fn feed(cc: &mut Box<dyn CongestionControl>, w: &mut Window, path: &PathInfo, rtts_us: &[u64], k0: u64) -> Vec<f64> {
        let mut out = vec![];
        for (i, &r) in rtts_us.iter().enumerate() {
            let k = k0 + i as u64 + 1;
            let a = AckInfo { now: k * 1000 * US, acked_bytes: 1000, ece: false, rtt_ps: Some(r * US), srtt_ps: None, echo_ts_ps: k * 1000 * US - r * US, int: None, in_recovery: false, snd_una: k * 1000, snd_nxt: k * 1000 + 500, next_tx: k * 1000 + 500, path };
            cc.on_ack(w, &a);
            out.push(w.pacing_rate_bps as f64 / 1e6);
        }
        out
    }

    #[test]
    fn ns3dc_high_ai_counts_increases_of_either_branch() {
        // ns3dc's TIMELY: T_low 200 us, AI 100 Mbps, HighAI 150 Mbps after 5 increases in a row,
        // once per RTT. Start at 10 Gbps (line rate); τ = 80 us.
        let path = PathInfo { base_rtt_ps: 80 * US, tau_ps: 80 * US, line_rate_bps: 10_000_000_000 };
        let params = json!({"t_low_us": 200, "ai_mbps": 100, "hai_mbps": 150, "segment_bytes": 0});
        let map = params.as_object().unwrap();
        let mut cc = build(&Params::new("transport.cc_params", map)).unwrap();
        let mut w = Window { cwnd_bytes: 0, ssthresh_bytes: u64::MAX, mss_bytes: 1400, pacing_rate_bps: 0 };
        cc.on_start(&mut w, 0, &path);
        // 1st sample only seeds prev_rtt. 2nd: rtt 300 us, diff 0.875 * 200 = 175 us, g = 175/80 = 2.1875
        // -> c = 1 - 0.8 g < 0 -> the 100 Mbps floor. Then 6 samples of 150 us (< T_low): +100 five
        // times (100 -> 600 Mbps), then +150 (750). A gradient decrease resets the count:
        // rtt 300 after 150: diff = 0.125 * diff_prev + 0.875 * 150; the rate only falls.
        let r = feed(&mut cc, &mut w, &path, &[100, 300, 150, 150, 150, 150, 150, 150], 0);
        let want = [10_000.0, 100.0, 200.0, 300.0, 400.0, 500.0, 600.0, 750.0];
        for (g, e) in r.iter().zip(want) {
            assert!((g - e).abs() < 1e-6, "{r:?}");
        }
        // rtt 400 after 150: rtt_diff > 0.875 * 250, g > 2.7: the floor again; the count restarts, so the
        // next increase adds 100, not 150.
        let r2 = feed(&mut cc, &mut w, &path, &[400, 150], 8);
        assert!(r2[0] < 750.0 && (r2[1] - r2[0] - 100.0).abs() < 1e-6, "{r2:?}");
        // The paper's rule without hai_mbps: the T_low branch never counts toward N (+10 Mbps each time).
        let plain = json!({"t_low_us": 200, "segment_bytes": 0});
        let mut p = build(&Params::new("transport.cc_params", plain.as_object().unwrap())).unwrap();
        let mut w2 = Window { cwnd_bytes: 0, ssthresh_bytes: u64::MAX, mss_bytes: 1400, pacing_rate_bps: 0 };
        p.on_start(&mut w2, 0, &path);
        let r3 = feed(&mut p, &mut w2, &path, &[100, 300, 150, 150, 150, 150, 150, 150], 0);
        assert!((r3[7] - 160.0).abs() < 1e-6, "{r3:?}");
    }

    fn ns3dc_cc(extra: serde_json::Value) -> Box<dyn CongestionControl> {
        let mut params = json!({"t_low_us": 200, "ai_mbps": 100, "hai_mbps": 150, "segment_bytes": 0});
        for (k, v) in extra.as_object().unwrap() {
            params[k] = v.clone();
        }
        build(&Params::new("transport.cc_params", params.as_object().unwrap())).unwrap()
    }

    #[test]
    fn ns3dc_rtt_diff_wraps_as_uint64_and_collapses_the_next_band_update() {
        // Stored as ns3dc's uint64 ns: truncated toward zero; negative -> 2^64 + it.
        assert_eq!(ns3dc_stored_rtt_diff_ps(96_250_700.0), 96_250_000.0);
        assert_eq!(ns3dc_stored_rtt_diff_ps(-40_468_750.0), (TWO_64 - 40_468.0) * 1000.0);
        // τ = base = 80 us. rtt 100 (seed), 210 (band: diff 0.875*110 = 96.25 us, g = 1.203125,
        // c = 1 - 0.8 g = 0.0375: 375 Mbps), 150 (< T_low: +100 = 475; diff = 0.125*96.25 - 0.875*60
        // = -40.46875 us), 210 (band). Signed: diff = 0.125*(-40.46875) + 0.875*60 = 47.44140625 us,
        // g = 0.59301758, c = 0.52558594: 249.653 Mbps. Wrapped: diff = 0.125*(2^64 - 40468) ns
        // + 52.5 us, g ~ 2.9e13, c < 0: the 100 Mbps floor.
        let path = PathInfo { base_rtt_ps: 80 * US, tau_ps: 80 * US, line_rate_bps: 10_000_000_000 };
        for (wraps, last) in [(false, 249.653_320_3), (true, 100.0)] {
            let mut cc = ns3dc_cc(json!({"rtt_diff_wraps": wraps}));
            let mut w = Window { cwnd_bytes: 0, ssthresh_bytes: u64::MAX, mss_bytes: 1400, pacing_rate_bps: 0 };
            cc.on_start(&mut w, 0, &path);
            let r = feed(&mut cc, &mut w, &path, &[100, 210, 150, 210], 0);
            assert!((r[1] - 375.0).abs() < 1e-6 && (r[2] - 475.0).abs() < 1e-6, "{r:?}");
            assert!((r[3] - last).abs() < 1e-3, "wraps {wraps}: {r:?}");
        }
        // The wrapped value decays by 1/8 per update: at a steady 210 us it is 2^61 ns, then
        // 2^58, ...; g stays above 1.25 (c = 0) while it exceeds 100 us = 1e5 ns: 2^61 / 8^k > 1e5
        // for k <= 14, so 15 updates after the wrap the rate is still at the floor and not yet after 16
        // (2^61 / 8^15 = 65,536 ns: g = 0.8192, c = 0.34464; 100 Mbps * c is below the floor too,
        // so an rtt under T_low then shows the floor was left by exactly one AI step).
        let mut cc = ns3dc_cc(json!({"rtt_diff_wraps": true}));
        let mut w = Window { cwnd_bytes: 0, ssthresh_bytes: u64::MAX, mss_bytes: 1400, pacing_rate_bps: 0 };
        cc.on_start(&mut w, 0, &path);
        let mut rtts = vec![100, 210, 150];
        rtts.extend(std::iter::repeat(210).take(17));
        rtts.push(150);
        let r = feed(&mut cc, &mut w, &path, &rtts, 0);
        assert!(r[3..20].iter().all(|&x| (x - 100.0).abs() < 1e-6), "{r:?}");
        assert!((r[20] - 200.0).abs() < 1e-6, "{r:?}");
    }

    #[test]
    fn ns3dc_gradient_normalized_by_the_propagation_rtt() {
        // rtt 100 then 210 us: diff 96.25 us. τ = 85 us: g = 1.132353, c = 0.094118 -> 941.18 Mbps;
        // by the 80 us propagation RTT: g = 1.203125, c = 0.0375 -> 375 Mbps.
        let path = PathInfo { base_rtt_ps: 80 * US, tau_ps: 85 * US, line_rate_bps: 10_000_000_000 };
        for (base, want) in [("tau", 10_000.0 * (1.0 - 0.8 * 96.25 / 85.0)), ("propagation", 375.0)] {
            let mut cc = ns3dc_cc(json!({"gradient_base": base}));
            let mut w = Window { cwnd_bytes: 0, ssthresh_bytes: u64::MAX, mss_bytes: 1400, pacing_rate_bps: 0 };
            cc.on_start(&mut w, 0, &path);
            let r = feed(&mut cc, &mut w, &path, &[100, 210], 0);
            assert!((r[1] - want).abs() < 1e-3, "{base}: {r:?}");
        }
        assert!(build(&Params::new("transport.cc_params", json!({"gradient_base": "rtt"}).as_object().unwrap())).is_err());
    }
}

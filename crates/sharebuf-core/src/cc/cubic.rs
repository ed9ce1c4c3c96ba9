//! CUBIC (RFC 9438), as Linux and ns-3's TcpCubic: after a loss the window follows
//! W_cubic(t) = C·(t − K)³ + W_max with K = ∛(W_max·(1 − β)/C) (segments, seconds), in a
//! Reno-friendly region it follows W_est, and fast convergence lowers W_max when losses come
//! before the window regained its previous maximum. After a retransmission timeout (RFC 9438
//! §4.8) ssthresh = β·cwnd and the next congestion-avoidance stage restarts the curve with
//! K = 0 and W_max = W_est = cwnd at its start.
//!
//! Slow start may be left early by HyStart: `classic` (the default, as ns-3's TcpCubic and
//! Linux: ack-train and delay-increase detectors, Ha & Rhee 2011) or `rfc9406` (HyStart++,
//! delay increase only).

use super::{AckInfo, CongestionControl, FlowCc, Window};
use crate::config::{check_positive, Params};
use crate::engine::{Time, PS_PER_MS, PS_PER_S};
use serde_json::Value;

/// Slow-start exit rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HyStart {
    /// Ack-train + delay-increase detectors of ns-3's TcpCubic and Linux (on by default there).
    Classic,
    /// HyStart++ (RFC 9406 §4.2) delay-increase exit.
    Rfc9406,
    Off,
}

/// Constants of classic HyStart (ns-3 TcpCubic attributes; Linux tcp_cubic.c module parameters).
#[derive(Clone, Copy, Debug)]
pub struct HyStartCfg {
    /// HyStartLowWindow: no detection below this window (segments).
    pub low_window_segments: u64,
    /// HyStartAckDelta: ACKs closer than this belong to one train.
    pub ack_delta_ps: Time,
    /// HyStartDelayMin / HyStartDelayMax: the delay-increase threshold is minRTT clamped to these.
    pub delay_min_ps: Time,
    pub delay_max_ps: Time,
    /// HyStartMinSamples: RTT samples per round before the delay detector may fire.
    pub min_samples: u32,
    /// CubicDelta: delay samples are ignored this long after a congestion-avoidance epoch starts.
    pub cubic_delta_ps: Time,
}

impl Default for HyStartCfg {
    fn default() -> Self {
        HyStartCfg { low_window_segments: 16, ack_delta_ps: 2 * PS_PER_MS, delay_min_ps: 4 * PS_PER_MS, delay_max_ps: 1000 * PS_PER_MS, min_samples: 8, cubic_delta_ps: 10 * PS_PER_MS }
    }
}

/// State of classic HyStart (per flow).
#[derive(Clone, Copy, Debug, Default)]
struct ClassicState {
    found: bool,
    /// Minimum of the RTT estimates seen (ns-3's m_delayMin).
    delay_min: Option<Time>,
    round_start: Option<Time>,
    last_ack: Option<Time>,
    /// The round ends when the cumulative ACK passes this sequence (snd_max at its start).
    end_seq: u64,
    /// Minimum RTT of the first `min_samples` samples of the round.
    curr_rtt: Option<Time>,
    sample_cnt: u32,
}

/// ns-3.39 `TcpCubic`'s state in whole segments: the window grows by one segment once `cnt`
/// acknowledged segments are counted (`m_cWndCnt`), cnt = ⌊W / (target − W)⌋ from integer W,
/// target and ∆ = ⌊C·(t − K)³⌋; W_max (`m_lastMaxCwnd`) and ssthresh are whole segments.
#[derive(Clone, Copy, Debug, Default)]
struct SegmentArith {
    /// m_cWndCnt: segments acknowledged towards the next increase.
    cnt: u64,
    /// m_lastMaxCwnd, segments (0: none).
    last_max: u64,
    /// m_bicOriginPoint, segments.
    origin: u64,
    /// m_bicK, seconds.
    k_s: f64,
    /// Bytes acknowledged short of a whole segment (TcpSocketBase's m_bytesAckedNotProcessed).
    carry: u64,
}

#[derive(Clone)]
pub struct Cubic {
    c: f64,
    beta: f64,
    fast_convergence: bool,
    hystart: HyStart,
    hs_cfg: HyStartCfg,
    /// RFC 9438 §4.3 Reno-friendly region (W_est); ns-3.39's TcpCubic has none.
    reno_friendly: bool,
    /// Until the first loss (and again after a timeout), congestion avoidance adds at least one
    /// segment per this many ACKed segments (Linux / ns-3 `CntClamp` 20: 5 % per RTT); 0: off.
    cnt_clamp: u32,
    /// Slow start stops at ssthresh (RFC 5681, Linux's `tcp_slow_start`); false: ns-3.39's
    /// `TcpCubic::IncreaseWindow` adds every acknowledged segment, one ACK can take cwnd past
    /// ssthresh (after a timeout, a cumulative ACK over SACKed data: by all of it).
    ss_cap: bool,
    /// A loss set W_max since the start or the last timeout (ns-3 / Linux `last_max_cwnd != 0`).
    lost: bool,
    /// `window_unit = "segments"`: ns-3.39's `TcpCubic` (Linux bictcp) arithmetic, Some; None:
    /// RFC 9438's continuous window in bytes.
    seg: Option<SegmentArith>,
    /// W_max in bytes (0: none, the next epoch starts its curve at the current window).
    w_max: f64,
    /// Start of the current congestion-avoidance epoch (None: not started).
    epoch_start: Option<Time>,
    k_s: f64,
    /// Reno-friendly estimate, bytes.
    w_est: f64,
    /// Fractional window, bytes.
    cwnd_f: f64,
    last_rtt_ps: Time,
    // Classic HyStart.
    hs: ClassicState,
    // HyStart++ round tracking.
    round_end: u64,
    round_min_rtt: Time,
    last_round_min_rtt: Time,
    round_samples: u32,
}

pub fn build(p: &Params) -> Result<Box<dyn CongestionControl>, String> {
    p.allow_only("cubic", &["c", "beta", "fast_convergence", "hystart", "hystart_low_window_segments", "reno_friendly", "cnt_clamp_segments", "slow_start_cap", "window_unit"])?;
    let c = p.f64_or("c", 0.4)?;
    let beta = p.f64_or("beta", 0.7)?;
    check_positive("transport.cc_params", "c", &[c])?;
    if !(0.0 < beta && beta < 1.0) {
        return Err(format!("transport.cc_params.beta = {beta}: must lie in (0, 1)"));
    }
    let fc = p.f64_or("fast_convergence", 1.0)? != 0.0;
    let hs = parse_hystart(p)?;
    let mut hs_cfg = HyStartCfg::default();
    let low = p.f64_or("hystart_low_window_segments", hs_cfg.low_window_segments as f64)?;
    if !(low >= 0.0 && low.fract() == 0.0) {
        return Err(format!("transport.cc_params.hystart_low_window_segments = {low}: must be a whole number >= 0"));
    }
    hs_cfg.low_window_segments = low as u64;
    let reno_friendly = p.bool_or("reno_friendly", true)?;
    let clamp = p.f64_or("cnt_clamp_segments", 0.0)?;
    if !(clamp >= 0.0 && clamp.fract() == 0.0 && clamp <= 255.0) {
        return Err(format!("transport.cc_params.cnt_clamp_segments = {clamp}: must be a whole number in 0..=255 (0: off; ns-3 and Linux: 20)"));
    }
    let ss_cap = p.str_or("slow_start_cap", "ssthresh", &["ssthresh", "none"])? == "ssthresh";
    let segments = p.str_or("window_unit", "bytes", &["bytes", "segments"])? == "segments";
    if segments && reno_friendly {
        return Err("transport.cc_params.window_unit = 'segments': ns-3.39's TcpCubic arithmetic has no Reno-friendly region; set reno_friendly = false, or window_unit = 'bytes'".into());
    }
    Ok(Box::new(Cubic::with_hystart(c, beta, fc, hs, hs_cfg).with_ca(reno_friendly, clamp as u32).with_slow_start_cap(ss_cap).with_segment_arithmetic(segments)))
}

/// `hystart = "classic" | "rfc9406" | "off"`; the former numeric 0 / 1 still mean off / HyStart++.
fn parse_hystart(p: &Params) -> Result<HyStart, String> {
    const ALLOWED: &[&str] = &["classic", "rfc9406", "off"];
    if let Some(v) = p.raw("hystart") {
        if let Value::Number(n) = v {
            return match n.as_f64() {
                Some(x) if x == 0.0 => Ok(HyStart::Off),
                Some(x) if x == 1.0 => Ok(HyStart::Rfc9406),
                _ => Err(format!("transport.cc_params.hystart = {n}: not allowed; allowed: {} (or the former 0 = off, 1 = rfc9406)", ALLOWED.join(", "))),
            };
        }
    }
    Ok(match p.str_or("hystart", "classic", ALLOWED)?.as_str() {
        "classic" => HyStart::Classic,
        "rfc9406" => HyStart::Rfc9406,
        _ => HyStart::Off,
    })
}

impl Cubic {
    /// CUBIC with HyStart off or HyStart++ (`hystart = true`), for unit tests of the curve.
    pub fn new(c: f64, beta: f64, fast_convergence: bool, hystart: bool) -> Self {
        Self::with_hystart(c, beta, fast_convergence, if hystart { HyStart::Rfc9406 } else { HyStart::Off }, HyStartCfg::default())
    }

    pub fn with_hystart(c: f64, beta: f64, fast_convergence: bool, hystart: HyStart, hs_cfg: HyStartCfg) -> Self {
        Cubic { c, beta, fast_convergence, hystart, hs_cfg, reno_friendly: true, cnt_clamp: 0, ss_cap: true, lost: false, seg: None, w_max: 0.0, epoch_start: None, k_s: 0.0, w_est: 0.0, cwnd_f: 0.0, last_rtt_ps: 0, hs: ClassicState::default(), round_end: 0, round_min_rtt: Time::MAX, last_round_min_rtt: Time::MAX, round_samples: 0 }
    }

    /// Congestion-avoidance flavour: `reno_friendly` (RFC 9438 §4.3, Linux; not ns-3.39) and
    /// the no-loss `cnt_clamp` (Linux, ns-3: 20; 0 = off).
    pub fn with_ca(mut self, reno_friendly: bool, cnt_clamp: u32) -> Self {
        self.reno_friendly = reno_friendly;
        self.cnt_clamp = cnt_clamp;
        self
    }

    /// `slow_start_cap`: "ssthresh" (true) or "none" (ns-3.39's `TcpCubic`).
    pub fn with_slow_start_cap(mut self, cap: bool) -> Self {
        self.ss_cap = cap;
        self
    }

    /// `window_unit`: "segments" (true, ns-3.39's `TcpCubic`) or "bytes".
    pub fn with_segment_arithmetic(mut self, segments: bool) -> Self {
        self.seg = if segments { Some(SegmentArith::default()) } else { None };
        self
    }

    /// ns-3.39 `TcpCubic::IncreaseWindow` (after `TcpSocketBase::ProcessAck` turned the bytes
    /// acknowledged into whole segments): slow start adds them all, congestion avoidance counts
    /// them towards `cnt` (`Update`) and adds one segment when the count reaches it.
    fn segments_on_ack(&mut self, w: &mut Window, a: &AckInfo) {
        let mss = w.mss_bytes;
        let Some(mut sa) = self.seg else { return };
        let segs = super::whole_segments(a.acked_bytes, &mut sa.carry, mss);
        if segs == 0 {
            self.seg = Some(sa);
            return;
        }
        if w.cwnd_bytes < w.ssthresh_bytes {
            if self.hystart == HyStart::Classic && a.snd_una > self.hs.end_seq {
                self.classic_round_reset(a.now, a.snd_nxt);
            }
            w.cwnd_bytes += if self.ss_cap { (segs * mss).min(w.ssthresh_bytes - w.cwnd_bytes) } else { segs * mss };
            self.seg = Some(sa);
            return;
        }
        sa.cnt += segs;
        let w_seg = w.cwnd_bytes / mss;
        if self.epoch_start.is_none() {
            self.epoch_start = Some(a.now);
            if sa.last_max <= w_seg {
                sa.k_s = 0.0;
                sa.origin = w_seg;
            } else {
                sa.k_s = ((sa.last_max - w_seg) as f64 / self.c).cbrt();
                sa.origin = sa.last_max;
            }
        }
        // t = now + m_delayMin − epoch start (ns-3: the smallest RTT estimate PktsAcked saw)
        let delay_min = self.hs.delay_min.unwrap_or(0);
        let t = (a.now + delay_min - self.epoch_start.unwrap()) as f64 / PS_PER_S as f64;
        let offs = if t < sa.k_s { sa.k_s - t } else { t - sa.k_s };
        let delta = (self.c * offs.powi(3)) as u32 as u64;
        // uint32_t arithmetic: below the origin the target wraps when ∆ exceeds it
        let target = if t < sa.k_s { (sa.origin as u32).wrapping_sub(delta as u32) as u64 } else { (sa.origin as u32).wrapping_add(delta as u32) as u64 };
        let mut cnt = if target > w_seg { w_seg / (target - w_seg) } else { 100 * w_seg };
        if sa.last_max == 0 && self.cnt_clamp > 0 && cnt > self.cnt_clamp as u64 {
            cnt = self.cnt_clamp as u64;
        }
        let cnt = cnt.max(2);
        if sa.cnt >= cnt {
            w.cwnd_bytes += mss;
            sa.cnt -= cnt;
        }
        self.seg = Some(sa);
    }

    /// W_cubic(t) in bytes, t seconds since the epoch start.
    pub fn w_cubic(&self, t_s: f64, mss: f64) -> f64 {
        self.c * (t_s - self.k_s).powi(3) * mss + self.w_max
    }

    pub fn k_s(&self) -> f64 {
        self.k_s
    }

    pub fn w_max_bytes(&self) -> f64 {
        self.w_max
    }

    /// W_max, K and fast convergence at a loss (RFC 9438 §4.6, §4.7); returns ssthresh.
    fn reduce(&mut self, w: &Window) -> u64 {
        if let Some(sa) = self.seg.as_mut() {
            // ns-3.39 TcpCubic::GetSsThresh: W_max and ssthresh from the window in whole segments
            let w_seg = w.cwnd_bytes / w.mss_bytes;
            sa.last_max = if w_seg < sa.last_max && self.fast_convergence { (w_seg as f64 * (1.0 + self.beta) / 2.0) as u64 } else { w_seg };
            self.epoch_start = None;
            self.lost = true;
            return ((w_seg as f64 * self.beta) as u64).max(2) * w.mss_bytes;
        }
        let cwnd = w.cwnd_bytes as f64;
        self.w_max = if self.fast_convergence && cwnd < self.w_max { cwnd * (1.0 + self.beta) / 2.0 } else { cwnd };
        self.epoch_start = None;
        self.lost = true;
        ((cwnd * self.beta) as u64).max(2 * w.mss_bytes)
    }

    /// Classic HyStart, per ACK before the window grows (ns-3 TcpCubic::PktsAcked and
    /// HystartUpdate; Linux bictcp_acked / hystart_update). `delay` is the RTT estimate ns-3
    /// passes (the smoothed RTT).
    fn classic_pkts_acked(&mut self, w: &mut Window, now: Time, delay: Time) {
        if let Some(e) = self.epoch_start {
            if now - e < self.hs_cfg.cubic_delta_ps {
                return; // delay samples right after fast recovery are discarded
            }
        }
        let dmin = match self.hs.delay_min {
            Some(d) if d <= delay => d,
            _ => {
                self.hs.delay_min = Some(delay);
                delay
            }
        };
        if !(w.cwnd_bytes <= w.ssthresh_bytes && w.cwnd_bytes >= self.hs_cfg.low_window_segments * w.mss_bytes) || self.hs.found {
            return;
        }
        // Ack train: ACKs keep coming within ack_delta, and the train since the round
        // started has lasted longer than the minimum RTT.
        if let (Some(la), Some(rs)) = (self.hs.last_ack, self.hs.round_start) {
            if now - la <= self.hs_cfg.ack_delta_ps {
                self.hs.last_ack = Some(now);
                if now - rs > dmin {
                    self.hs.found = true;
                }
            }
        }
        // Delay increase: the minimum of the round's first samples exceeds minRTT by
        // minRTT clamped to [delay_min, delay_max].
        if self.hs.sample_cnt < self.hs_cfg.min_samples {
            self.hs.curr_rtt = Some(self.hs.curr_rtt.map_or(delay, |c| c.min(delay)));
            self.hs.sample_cnt += 1;
        } else if self.hs.curr_rtt.is_some_and(|c| c > dmin + dmin.clamp(self.hs_cfg.delay_min_ps, self.hs_cfg.delay_max_ps)) {
            self.hs.found = true;
        }
        if self.hs.found {
            w.ssthresh_bytes = w.cwnd_bytes;
        }
    }

    fn classic_round_reset(&mut self, now: Time, snd_max: u64) {
        self.hs.round_start = Some(now);
        self.hs.last_ack = Some(now);
        self.hs.end_seq = snd_max;
        self.hs.curr_rtt = None;
        self.hs.sample_cnt = 0;
    }

    fn hystart_check(&mut self, w: &mut Window, a: &AckInfo) {
        // RFC 9406 §4.2: per round, if the minimum RTT grew by more than
        // clamp(lastRoundMinRTT / 8, 4 ms, 16 ms) after 8 samples, leave slow start.
        if let Some(r) = a.rtt_ps {
            self.round_min_rtt = self.round_min_rtt.min(r);
            self.round_samples += 1;
        }
        if self.round_samples >= 8 && self.last_round_min_rtt != Time::MAX && self.round_min_rtt != Time::MAX {
            let eta = (self.last_round_min_rtt / 8).clamp(4 * PS_PER_MS, 16 * PS_PER_MS);
            if self.round_min_rtt >= self.last_round_min_rtt + eta {
                w.ssthresh_bytes = w.cwnd_bytes;
            }
        }
        if a.snd_una >= self.round_end {
            self.last_round_min_rtt = self.round_min_rtt;
            self.round_min_rtt = Time::MAX;
            self.round_samples = 0;
            self.round_end = a.snd_nxt;
        }
    }
}

impl Cubic {
    /// A fresh per-flow instance with the same parameters.
    fn fresh(&self) -> Self {
        Cubic::with_hystart(self.c, self.beta, self.fast_convergence, self.hystart, self.hs_cfg).with_ca(self.reno_friendly, self.cnt_clamp).with_slow_start_cap(self.ss_cap).with_segment_arithmetic(self.seg.is_some())
    }
}

impl CongestionControl for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }
    fn clone_box(&self) -> Box<dyn CongestionControl> {
        Box::new(self.fresh())
    }
    fn clone_flow(&self) -> FlowCc {
        FlowCc::Cubic(Box::new(self.fresh()))
    }
    fn on_ack(&mut self, w: &mut Window, a: &AckInfo) {
        if let Some(r) = a.rtt_ps {
            self.last_rtt_ps = r;
        }
        if self.hystart == HyStart::Classic {
            if let Some(srtt) = a.srtt_ps {
                self.classic_pkts_acked(w, a.now, srtt);
            }
        }
        if a.in_recovery || a.acked_bytes == 0 {
            return;
        }
        if self.seg.is_some() {
            self.segments_on_ack(w, a);
            return;
        }
        let mss = w.mss_bytes as f64;
        if w.cwnd_bytes < w.ssthresh_bytes {
            if self.hystart == HyStart::Classic && a.snd_una > self.hs.end_seq {
                self.classic_round_reset(a.now, a.snd_nxt);
            }
            w.cwnd_bytes += if self.ss_cap { a.acked_bytes.min(w.ssthresh_bytes - w.cwnd_bytes) } else { a.acked_bytes };
            if self.hystart == HyStart::Rfc9406 {
                self.hystart_check(w, a);
            }
            return;
        }
        if self.epoch_start.is_none() || (self.cwnd_f as u64) != w.cwnd_bytes {
            // A new epoch (or the transport changed cwnd, e.g. after recovery).
            if self.epoch_start.is_none() {
                self.epoch_start = Some(a.now);
                let cwnd = w.cwnd_bytes as f64;
                if cwnd < self.w_max {
                    self.k_s = ((self.w_max - cwnd) / (self.c * mss)).cbrt();
                } else {
                    // No previous maximum above the window (also the first stage after a
                    // timeout, RFC 9438 §4.8): K = 0, W_max = cwnd.
                    self.k_s = 0.0;
                    self.w_max = cwnd;
                }
                self.w_est = cwnd;
            }
            self.cwnd_f = w.cwnd_bytes as f64;
        }
        let t = (a.now - self.epoch_start.unwrap()) as f64 / PS_PER_S as f64;
        let rtt = self.last_rtt_ps as f64 / PS_PER_S as f64;
        let cwnd = self.cwnd_f;
        let alpha_cubic = 3.0 * (1.0 - self.beta) / (1.0 + self.beta);
        self.w_est += alpha_cubic * mss * a.acked_bytes as f64 / cwnd;
        let wc = self.w_cubic(t, mss);
        if self.reno_friendly && wc < self.w_est {
            self.cwnd_f = self.w_est.max(cwnd);
        } else {
            let target = self.w_cubic(t + rtt, mss).clamp(cwnd, 1.5 * cwnd);
            self.cwnd_f = cwnd + (target - cwnd) * a.acked_bytes as f64 / cwnd;
        }
        if self.cnt_clamp > 0 && !self.lost {
            // Linux bictcp_update / ns-3 TcpCubic::Update: with no loss yet, cnt <= clamp,
            // i.e. at least one segment per `cnt_clamp` ACKed segments.
            self.cwnd_f = self.cwnd_f.max(cwnd + a.acked_bytes as f64 / self.cnt_clamp as f64);
        }
        w.cwnd_bytes = (self.cwnd_f as u64).max(w.mss_bytes);
    }
    fn ssthresh_after_loss(&mut self, w: &Window, _in_flight: u64) -> u64 {
        self.reduce(w)
    }
    /// RFC 9438 §4.8: ssthresh = β·cwnd (cwnd when the timer fired, as Linux and ns-3).
    fn ssthresh_after_timeout(&mut self, w: &Window, _in_flight: u64) -> u64 {
        self.reduce(w)
    }
    /// RFC 9438 §4.8, Linux bictcp_state(TCP_CA_Loss), ns-3 CubicReset + HystartReset: forget
    /// W_max so the next congestion-avoidance stage starts with K = 0 and W_max = W_est = cwnd;
    /// HyStart starts over (new minimum RTT, detectors re-armed, round ending at snd_max).
    fn on_timeout(&mut self, _w: &mut Window, now: Time, snd_max: u64) {
        if let Some(sa) = self.seg.as_mut() {
            // CubicReset: m_lastMaxCwnd = m_bicOriginPoint = 0, m_bicK = 0
            sa.last_max = 0;
            sa.origin = 0;
            sa.k_s = 0.0;
        }
        self.w_max = 0.0;
        self.lost = false;
        self.k_s = 0.0;
        self.epoch_start = None;
        self.hs.delay_min = None;
        self.hs.found = false;
        self.classic_round_reset(now, snd_max);
        self.round_end = snd_max;
        self.round_min_rtt = Time::MAX;
        self.last_round_min_rtt = Time::MAX;
        self.round_samples = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Drive the window with ACK clocking at a fixed RTT (one ACK per segment, spread over
    /// the round) after a loss at W_max, and compare with W(t) = C(t − K)³ + W_max.
    #[test]
    fn window_follows_the_cubic_curve_between_losses() {
        let mss = 1000u64;
        let rtt: Time = 100 * PS_PER_MS;
        let mut cc = Cubic::new(0.4, 0.7, true, false);
        let mut w = Window { cwnd_bytes: 1_000_000, ssthresh_bytes: u64::MAX, mss_bytes: mss, pacing_rate_bps: 0 };
        // Loss at W_max = 1000 segments.
        w.ssthresh_bytes = cc.ssthresh_after_loss(&w, w.cwnd_bytes);
        w.cwnd_bytes = w.ssthresh_bytes;
        assert_eq!(w.cwnd_bytes, 700_000);
        let k_expect = (1000.0f64 * 0.3 / 0.4).cbrt();
        let mut now: Time = 0;
        let (mut una, mut worst) = (0u64, 0.0f64);
        for _round in 0..150 {
            let n = w.cwnd_bytes / mss;
            for i in 0..n {
                let t = now + rtt * i / n;
                una += mss;
                let a = AckInfo { now: t, acked_bytes: mss, ece: false, rtt_ps: Some(rtt), srtt_ps: Some(rtt), echo_ts_ps: 0, int: None, in_recovery: false, snd_una: una, snd_nxt: una + w.cwnd_bytes, next_tx: una + w.cwnd_bytes, path: &crate::cc::PathInfo { base_rtt_ps: rtt, tau_ps: rtt, line_rate_bps: 1 } };
                cc.on_ack(&mut w, &a);
            }
            now += rtt;
            let t_s = now as f64 / PS_PER_S as f64;
            // Measured from the epoch (first ACK at t = 0); the window tracks W(t + RTT)
            // with one round of lag, i.e. W(t).
            let expect = 0.4 * (t_s - k_expect).powi(3) * mss as f64 + 1_000_000.0;
            let err = (w.cwnd_bytes as f64 - expect).abs() / expect;
            worst = worst.max(err);
        }
        assert!((cc.k_s() - k_expect).abs() < 1e-9);
        assert!(worst < 0.03, "worst relative error {worst}");
        // 15 s after the loss (K = 9.1 s) the window is past W_max, in the convex region: C(t-K)^3 = 82 segments.
        assert!(w.cwnd_bytes > 1_070_000 && w.cwnd_bytes < 1_095_000, "{}", w.cwnd_bytes);
    }

    #[test]
    fn fast_convergence_lowers_w_max() {
        let mut cc = Cubic::new(0.4, 0.7, true, false);
        let w = Window { cwnd_bytes: 100_000, ssthresh_bytes: u64::MAX, mss_bytes: 1000, pacing_rate_bps: 0 };
        cc.ssthresh_after_loss(&w, 100_000);
        let w2 = Window { cwnd_bytes: 80_000, ..w };
        assert_eq!(cc.ssthresh_after_loss(&w2, 80_000), 56_000);
        assert!((cc.w_max_bytes() - 80_000.0 * 0.85).abs() < 1e-9);
    }

    /// One ACK per `mss` segment at a fixed RTT, `n` ACKs, starting at `t0`.
    fn ack_n(cc: &mut Cubic, w: &mut Window, una: &mut u64, t0: Time, n: u64) -> Time {
        let rtt: Time = 100 * PS_PER_MS / 1000; // 100 us
        let mut now = t0;
        for _ in 0..n {
            *una += w.mss_bytes;
            let a = AckInfo { now, acked_bytes: w.mss_bytes, ece: false, rtt_ps: Some(rtt), srtt_ps: Some(rtt), echo_ts_ps: 0, int: None, in_recovery: false, snd_una: *una, snd_nxt: *una + w.cwnd_bytes, next_tx: *una + w.cwnd_bytes, path: &crate::cc::PathInfo { base_rtt_ps: rtt, tau_ps: rtt, line_rate_bps: 1 } };
            cc.on_ack(w, &a);
            now += rtt * w.mss_bytes / w.cwnd_bytes.max(1);
        }
        now
    }

    /// ns-3.39 TcpCubic / Linux bictcp_update: with no loss yet (last_max_cwnd = 0) cnt is
    /// clamped to CntClamp = 20, so congestion avoidance adds one segment per 20 ACKed
    /// segments (5 % per RTT); ns-3 has no Reno-friendly region. Hand computation: from
    /// cwnd = 50 segments (HyStart's exit: ssthresh = cwnd), 400 ACKs add 400 / 20 = 20
    /// segments exactly (the cubic term, C (t + RTT)^3 with t < 10 ms, is < 0.001 B and below
    /// the window). After a loss the clamp no longer applies (window flat within one
    /// segment, K = 3.3 s away); after a timeout it applies again.
    /// `window_unit = "segments"` (ns-3.39's TcpCubic) by hand, HyStart off (m_delayMin = 0),
    /// MSS 1000. A loss at cwnd 100.5 segments: ssthresh = ⌊⌊100.5⌋·0.7⌋ = 70 segments, W_max =
    /// 100. The epoch starts on the first ACK in congestion avoidance (t = 0, cwnd 70): K =
    /// ∛((100 − 70)/0.4) = ∛75 = 4.2172 s. At t = 1 s: ∆ = ⌊0.4·(4.2172 − 1)³⌋ = ⌊13.32⌋ = 13,
    /// target 87, cnt = ⌊70/17⌋ = 4: with the first ACK's count the 3rd ACK at 1 s adds a
    /// segment (71), then cnt = ⌊71/16⌋ = 4 and the 7th adds the next (72). A second loss at 80
    /// segments, below W_max: fast convergence W_max = ⌊80·1.7/2⌋ = 68, ssthresh 56 segments.
    /// RFC 9438's byte arithmetic moves the window a little on every ACK instead.
    #[test]
    fn segment_arithmetic_counts_whole_segments_as_ns3() {
        let mss = 1000u64;
        let mut cc = Cubic::with_hystart(0.4, 0.7, true, HyStart::Off, HyStartCfg::default()).with_ca(false, 20).with_segment_arithmetic(true);
        let mut w = Window { cwnd_bytes: 100_500, ssthresh_bytes: u64::MAX, mss_bytes: mss, pacing_rate_bps: 0 };
        w.ssthresh_bytes = cc.ssthresh_after_loss(&w, w.cwnd_bytes);
        assert_eq!(w.ssthresh_bytes, 70_000);
        w.cwnd_bytes = w.ssthresh_bytes;
        let path = crate::cc::PathInfo { base_rtt_ps: 0, tau_ps: 0, line_rate_bps: 1 };
        let ack = |now: Time| AckInfo { now, acked_bytes: mss, ece: false, rtt_ps: None, srtt_ps: None, echo_ts_ps: 0, int: None, in_recovery: false, snd_una: 0, snd_nxt: 0, next_tx: 0, path: &path };
        cc.on_ack(&mut w, &ack(PS_PER_S));
        assert_eq!(w.cwnd_bytes, 70_000);
        let mut grew_at = Vec::new();
        for k in 1..=8 {
            let before = w.cwnd_bytes;
            cc.on_ack(&mut w, &ack(2 * PS_PER_S));
            if w.cwnd_bytes > before {
                assert_eq!(w.cwnd_bytes, before + mss, "whole segments only");
                grew_at.push(k);
            }
        }
        assert_eq!(grew_at, vec![3, 7]);
        assert_eq!(w.cwnd_bytes, 72_000);
        let w2 = Window { cwnd_bytes: 80_000, ..w };
        assert_eq!(cc.ssthresh_after_loss(&w2, 80_000), 56_000);
        assert_eq!(cc.seg.map(|s| s.last_max), Some(68));
        // the byte arithmetic on the same ACKs: a fraction of a segment each
        let mut cc = Cubic::with_hystart(0.4, 0.7, true, HyStart::Off, HyStartCfg::default()).with_ca(false, 20);
        let mut w = Window { cwnd_bytes: 100_500, ssthresh_bytes: u64::MAX, mss_bytes: mss, pacing_rate_bps: 0 };
        w.ssthresh_bytes = cc.ssthresh_after_loss(&w, w.cwnd_bytes);
        assert_eq!(w.ssthresh_bytes, 70_350);
        w.cwnd_bytes = w.ssthresh_bytes;
        cc.on_ack(&mut w, &ack(PS_PER_S));
        cc.on_ack(&mut w, &ack(2 * PS_PER_S));
        assert!(w.cwnd_bytes > 70_350 && w.cwnd_bytes % mss != 0, "{}", w.cwnd_bytes);
        // reno_friendly has no meaning in ns-3's arithmetic: a clear error
        let p = serde_json::json!({"window_unit": "segments"});
        let e = build(&Params::new("transport.cc_params", p.as_object().unwrap())).err().unwrap();
        assert!(e.contains("window_unit = 'segments'") && e.contains("reno_friendly"), "{e}");
    }

    #[test]
    fn no_loss_cnt_clamp_grows_one_segment_per_20_acks() {
        let mss = 1000u64;
        let mk = |friendly: bool, clamp: u32| Cubic::with_hystart(0.4, 0.7, true, HyStart::Off, HyStartCfg::default()).with_ca(friendly, clamp);
        let w0 = Window { cwnd_bytes: 50_000, ssthresh_bytes: 50_000, mss_bytes: mss, pacing_rate_bps: 0 };
        // ns-3 flavour: clamp 20, no Reno-friendly region.
        let (mut cc, mut w, mut una) = (mk(false, 20), w0, 0u64);
        let t = ack_n(&mut cc, &mut w, &mut una, PS_PER_S, 400);
        assert_eq!(w.cwnd_bytes, 70_000);
        // A loss: ssthresh = 0.7 cwnd = 49,000; afterwards no clamp, the window stays flat.
        w.ssthresh_bytes = cc.ssthresh_after_loss(&w, w.cwnd_bytes);
        w.cwnd_bytes = w.ssthresh_bytes;
        assert_eq!(w.cwnd_bytes, 49_000);
        let t = ack_n(&mut cc, &mut w, &mut una, t, 400);
        assert!(w.cwnd_bytes >= 49_000 && w.cwnd_bytes < 49_000 + mss, "{}", w.cwnd_bytes);
        // A timeout forgets the loss (ns-3 CubicReset: m_lastMaxCwnd = 0): the clamp is back.
        w.ssthresh_bytes = cc.ssthresh_after_timeout(&w, w.cwnd_bytes);
        cc.on_timeout(&mut w, t, una);
        w.cwnd_bytes = w.ssthresh_bytes; // as if slow start had reached ssthresh again
        let c0 = w.cwnd_bytes;
        ack_n(&mut cc, &mut w, &mut una, t + PS_PER_MS, 200);
        assert_eq!(w.cwnd_bytes, c0 + 10 * mss);
        // Without the clamp and without the Reno-friendly region the window stays flat.
        let (mut cc, mut w, mut una) = (mk(false, 0), w0, 0u64);
        ack_n(&mut cc, &mut w, &mut una, PS_PER_S, 400);
        assert_eq!(w.cwnd_bytes, 50_000);
        // RFC 9438 (sharebuf's default): W_est grows by 3(1 - b)/(1 + b) = 0.529 segment per
        // window of ACKs: 400 ACKs from 50 segments are about 7.7 windows, so about 4 segments.
        let (mut cc, mut w, mut una) = (mk(true, 0), w0, 0u64);
        ack_n(&mut cc, &mut w, &mut una, PS_PER_S, 400);
        assert!(w.cwnd_bytes > 53_500 && w.cwnd_bytes < 54_500, "{}", w.cwnd_bytes);
    }
}

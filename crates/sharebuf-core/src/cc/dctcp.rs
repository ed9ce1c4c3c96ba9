//! DCTCP (Alizadeh et al., SIGCOMM 2010; RFC 8257), as ns-3's TcpDctcp on Reno growth:
//! α ← (1 − g)·α + g·F once per window of data (F = fraction of acked bytes that echoed CE),
//! initial α = 1, g = 1/16; on an ECN echo, at most once per window, cwnd ← cwnd·(1 − α/2).
//! Loss halves the window like standard TCP (RFC 8257 §3.5, Linux); ns-3's TcpDctcp uses
//! (1 − α/2) for losses too, which without ECN marks (α → 0) hardly backs off at all: that is
//! `loss_ssthresh = "ns3"` (ns-3.39 `TcpDctcp::GetSsThresh`, called by `TcpSocketBase` at a
//! fast retransmit and at a timeout alike, and with no floor: one segment at α = 1 gives half a
//! segment); `"alpha"` is the same rule floored at RFC 5681's 2 segments. `slow_start = false` grows the window by congestion
//! avoidance only, from the first ACK on (ns3dc's `TcpSocketState::m_useSS` false, which its
//! Credence example sets for DCTCP: `TcpLinuxReno::IncreaseWindow` then never slow-starts).

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
    /// ssthresh after a loss or a timeout is cwnd·(1 − α/2) (ns-3.39 `TcpDctcp`), not cwnd/2.
    loss_alpha: bool,
    /// ... floored at 2 segments ("alpha"), or not (ns-3's, "ns3").
    loss_floor: bool,
    /// false: congestion avoidance only (ns3dc's `m_useSS` false).
    slow_start: bool,
}

pub fn build(p: &Params) -> Result<Box<dyn CongestionControl>, String> {
    p.allow_only("dctcp", &["g", "initial_alpha", "loss_ssthresh", "slow_start", "window_unit"])?;
    let g = p.f64_or("g", 1.0 / 16.0)?;
    let a0 = p.f64_or("initial_alpha", 1.0)?;
    check_positive("transport.cc_params", "g", &[g])?;
    if g > 1.0 || !(0.0..=1.0).contains(&a0) {
        return Err(format!("transport.cc_params: g = {g} and initial_alpha = {a0} must lie in (0, 1] and [0, 1]"));
    }
    let rule = p.str_or("loss_ssthresh", "half", &["half", "alpha", "ns3"])?;
    let slow_start = p.bool_or("slow_start", true)?;
    let mut cc = Dctcp::new(g, a0);
    cc.loss_alpha = rule != "half";
    cc.loss_floor = rule == "alpha";
    cc.slow_start = slow_start;
    cc.growth.segments = p.str_or("window_unit", "bytes", &["bytes", "segments"])? == "segments";
    Ok(Box::new(cc))
}

impl Dctcp {
    pub fn new(g: f64, initial_alpha: f64) -> Self {
        Dctcp { g, alpha: initial_alpha, initial_alpha, growth: RenoGrowth::default(), acked_in_window: 0, marked_in_window: 0, window_end: 0, cwr_end: 0, started: false, loss_alpha: false, loss_floor: true, slow_start: true }
    }

    /// A fresh per-flow instance with the same parameters.
    fn fresh(&self) -> Self {
        let mut d = Dctcp { loss_alpha: self.loss_alpha, loss_floor: self.loss_floor, slow_start: self.slow_start, ..Dctcp::new(self.g, self.initial_alpha) };
        d.growth.segments = self.growth.segments;
        d
    }

    /// cwnd·(1 − α/2), truncated to whole bytes: ns-3.39 `TcpDctcp::GetSsThresh` has no floor
    /// (RFC 5681's 2 segments is TcpLinuxReno's, not DCTCP's), so after a timeout, with cwnd at
    /// one segment, it is below one segment; `"alpha"` floors it at 2 segments.
    fn alpha_ssthresh(&self, w: &Window) -> u64 {
        let s = ((w.cwnd_bytes as f64) * (1.0 - self.alpha / 2.0)) as u64;
        if self.loss_floor { s.max(2 * w.mss_bytes) } else { s }
    }

    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// No further ECN cut until snd_una reaches this (the window of the last cut).
    pub fn cwr_end(&self) -> u64 {
        self.cwr_end
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
            self.window_end = a.next_tx;
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
            self.window_end = a.next_tx;
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
            if self.slow_start {
                self.growth.grow(w, a.acked_bytes);
            } else {
                self.growth.grow_ca(w, a.acked_bytes);
            }
        }
    }
    fn ssthresh_after_loss(&mut self, w: &Window, _in_flight: u64) -> u64 {
        if self.loss_alpha {
            return self.alpha_ssthresh(w);
        }
        (w.cwnd_bytes / 2).max(2 * w.mss_bytes)
    }
    fn ssthresh_after_timeout(&mut self, w: &Window, in_flight_bytes: u64) -> u64 {
        if self.loss_alpha {
            return self.alpha_ssthresh(w);
        }
        (in_flight_bytes / 2).max(2 * w.mss_bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(acked: u64, ece: bool, una: u64, nxt: u64) -> AckInfo<'static> {
        AckInfo { now: 0, acked_bytes: acked, ece, rtt_ps: None, srtt_ps: None, echo_ts_ps: 0, int: None, in_recovery: false, snd_una: una, snd_nxt: nxt, next_tx: nxt, path: &crate::cc::PathInfo { base_rtt_ps: 0, tau_ps: 0, line_rate_bps: 1 } }
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

    #[test]
    fn loss_ssthresh_alpha_follows_ns3_and_half_is_rfc8257() {
        let w = Window { cwnd_bytes: 40_000, ssthresh_bytes: u64::MAX, mss_bytes: 1000, pacing_rate_bps: 0 };
        // alpha after one unmarked window from 1: 15/16; ns-3: 40,000 * (1 - 15/32) = 21,250.
        let mut ns3 = Dctcp::new(1.0 / 16.0, 1.0);
        ns3.loss_alpha = true;
        ns3.loss_floor = false;
        let mut w2 = w;
        ns3.on_ack(&mut w2, &ack(1000, false, 1000, 10_000));
        for i in 2..=10 {
            ns3.on_ack(&mut w2, &ack(1000, false, i * 1000, 20_000));
        }
        assert!((ns3.alpha() - 15.0 / 16.0).abs() < 1e-12);
        assert_eq!(ns3.ssthresh_after_loss(&w, 30_000), 21_250);
        assert_eq!(ns3.ssthresh_after_timeout(&w, 30_000), 21_250);
        // alpha near 0 (no marks for long): barely any back-off; no floor: 1500 * 0.995 = 1492.5.
        ns3.alpha = 0.01;
        assert_eq!(ns3.ssthresh_after_loss(&w, 30_000), 39_800);
        let tiny = Window { cwnd_bytes: 1500, ..w };
        assert_eq!(ns3.ssthresh_after_loss(&tiny, 1500), 1492);
        // one segment after a timeout at alpha = 1: ns-3 gives half a segment (the halving rule
        // floors at 2 segments).
        ns3.alpha = 1.0;
        let one = Window { cwnd_bytes: 1000, ..w };
        assert_eq!(ns3.ssthresh_after_loss(&one, 2000), 500);
        assert_eq!(ns3.ssthresh_after_timeout(&one, 2000), 500);
        // RFC 8257 §3.5 (the default): halve on loss; RFC 5681 eq. 4 at a timeout.
        let mut rfc = Dctcp::new(1.0 / 16.0, 1.0);
        rfc.alpha = 0.01;
        assert_eq!(rfc.ssthresh_after_loss(&w, 30_000), 20_000);
        assert_eq!(rfc.ssthresh_after_timeout(&w, 30_000), 15_000);
        assert_eq!(rfc.ssthresh_after_loss(&one, 2000), 2000);
        // "alpha": the same rule floored at 2 segments
        let mut floored = Dctcp { loss_alpha: true, ..Dctcp::new(1.0 / 16.0, 1.0) };
        floored.alpha = 0.01;
        assert_eq!(floored.ssthresh_after_loss(&w, 30_000), 39_800);
        assert_eq!(floored.ssthresh_after_loss(&tiny, 1500), 2000);
        floored.alpha = 1.0;
        assert_eq!(floored.ssthresh_after_timeout(&one, 2000), 2000);
        // the per-flow copy keeps the setting
        assert!(ns3.fresh().loss_alpha && !ns3.fresh().loss_floor && !rfc.fresh().loss_alpha && floored.fresh().loss_floor);
    }

    /// `slow_start = false` (ns3dc's `m_useSS` false): from a 22-segment initial window and an
    /// infinite ssthresh, 22 unmarked ACKs of one 1400 B segment each add one segment (23), the
    /// next 23 one more (24): `TcpLinuxReno::CongestionAvoidance`, +1 segment per w segments
    /// acked. With slow start the same 22 ACKs double the window (44). The per-flow copy keeps it.
    #[test]
    fn no_slow_start_grows_by_congestion_avoidance_from_the_start() {
        let m: serde_json::Map<String, serde_json::Value> = serde_json::from_str(r#"{"slow_start": false}"#).unwrap();
        let mut cc = crate::cc::build("dctcp", &m).unwrap().clone_box();
        let mut ss = Dctcp::new(1.0 / 16.0, 1.0);
        let mss = 1400;
        let mut w = Window { cwnd_bytes: 22 * mss, ssthresh_bytes: u64::MAX, mss_bytes: mss, pacing_rate_bps: 0 };
        let mut w_ss = w;
        for i in 1..=22 {
            cc.on_ack(&mut w, &ack(mss, false, i * mss, 22 * mss));
            ss.on_ack(&mut w_ss, &ack(mss, false, i * mss, 22 * mss));
            if i < 22 {
                assert_eq!(w.cwnd_bytes, 22 * mss, "ACK {i}: no growth before 22 segments are acked");
            }
        }
        assert_eq!(w.cwnd_bytes, 23 * mss);
        assert_eq!(w_ss.cwnd_bytes, 44 * mss);
        assert_eq!(w.ssthresh_bytes, u64::MAX, "ssthresh untouched, as ns-3 (only growth changes)");
        for i in 23..=45 {
            cc.on_ack(&mut w, &ack(mss, false, i * mss, 50 * mss));
        }
        assert_eq!(w.cwnd_bytes, 24 * mss);
        let bad: serde_json::Map<String, serde_json::Value> = serde_json::from_str(r#"{"slow_start": "no"}"#).unwrap();
        let e = crate::cc::build("dctcp", &bad).err().unwrap();
        assert!(e.contains("slow_start"), "{e}");
    }
}

//! A fixed window paced at line rate, with no congestion control at all: what the ABM
//! authors' AEM runs (abm-evaluation-multi.cc) actually execute for their "θ-PowerTCP" class
//! (ns3-datacenter-notes §4, "AEM caveat"). Their per-node `Config::Set` of
//! `useThetaPowerTcp` matches nothing, so those servers run ns-3.39 `TcpAdvanced` with no
//! algorithm flag:
//! - the window is the application's `InitialCwnd` (12,800 segments for the AEM incast),
//!   paced at `CCRate` = `maxCCRate` = 10 Gbps (the line rate), and no rate update ever runs;
//! - `IncreaseWindow`/`ReduceCwnd` are no-ops and `GetSsThresh` returns `UINT32_MAX`, so
//!   neither ECN, RTT nor a loss changes the window; a fast recovery ends with
//!   cwnd = ssthresh = `UINT32_MAX` (`TcpSocketBase`: cwnd ← ssthresh on leaving recovery);
//! - a retransmission timeout sets cwnd = 1 MSS (`TcpSocketBase::ReTxTimeout`) and nothing
//!   raises it again: the rest of the flow goes one segment per RTT.

use super::{AckInfo, CongestionControl, PathInfo, Window};
use crate::config::Params;
use crate::engine::Time;

/// ns-3's `TcpAdvanced::GetSsThresh`: `UINT32_MAX` bytes whatever the loss.
pub const NS3_SSTHRESH_BYTES: u64 = u32::MAX as u64;

#[derive(Clone)]
pub struct FixedWindow {
    /// Window in segments; None keeps transport.init_cwnd_packets.
    window_packets: Option<u64>,
}

pub fn build(p: &Params) -> Result<Box<dyn CongestionControl>, String> {
    p.allow_only("fixed_window", &["window_packets"])?;
    let window_packets = match p.raw("window_packets") {
        None => None,
        Some(v) => match v.as_u64() {
            Some(n) if n >= 1 => Some(n),
            _ => return Err(format!("transport.cc_params.window_packets = {v}: must be an integer >= 1 (segments)")),
        },
    };
    Ok(Box::new(FixedWindow { window_packets }))
}

impl CongestionControl for FixedWindow {
    fn name(&self) -> &'static str {
        "fixed_window"
    }
    fn clone_box(&self) -> Box<dyn CongestionControl> {
        Box::new(self.clone())
    }
    fn on_start(&mut self, w: &mut Window, _now: Time, path: &PathInfo) {
        if let Some(n) = self.window_packets {
            w.cwnd_bytes = n * w.mss_bytes;
        }
        w.pacing_rate_bps = path.line_rate_bps;
    }
    fn on_ack(&mut self, _w: &mut Window, _a: &AckInfo) {}
    fn ssthresh_after_loss(&mut self, _w: &Window, _in_flight: u64) -> u64 {
        NS3_SSTHRESH_BYTES
    }
    fn ssthresh_after_timeout(&mut self, _w: &Window, _in_flight: u64) -> u64 {
        NS3_SSTHRESH_BYTES
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{PS_PER_MS, PS_PER_US};
    use crate::transport::tcp::tests::{cfg, Harness};

    const MSS: u64 = 1000;
    /// 8 Gbps: one 1000 B segment (no header) serializes in exactly 1 µs, the harness's tx_ps.
    const RATE_BPS: u64 = 8_000_000_000;
    const TX: Time = PS_PER_US;
    const ONE_WAY: Time = 50 * PS_PER_US;
    /// A segment's RTT on the harness path: serialization + propagation both ways.
    const R: Time = TX + 2 * ONE_WAY;

    fn fixed(window_packets: u64) -> Box<dyn CongestionControl> {
        let mut m = serde_json::Map::new();
        m.insert("window_packets".into(), window_packets.into());
        crate::cc::build("fixed_window", &m).unwrap()
    }

    fn lone_flow(n_segments: u64, window: u64) -> Harness<'static> {
        let mut h = Harness::with_line_rate(n_segments * MSS, cfg(MSS, true), fixed(window), ONE_WAY, TX, 0, Box::new(|_, _| false), RATE_BPS);
        h.run_until(10 * PS_PER_MS);
        h
    }

    /// No loss. Segment i leaves at ⌊i/W⌋·R + (i mod W)·TX (the window's ACK clock, paced at
    /// line rate; W·TX < R), so the last of N = k·W segments is acknowledged at
    /// FCT = (N/W)·R + (W − 1)·TX. W = 10, N = 30, R = 101 µs: 3·101 + 9 = 312 µs; a window
    /// of the whole flow: N·TX + 2·one-way = 30 + 100 = 130 µs. The window never moves.
    #[test]
    fn lone_flow_fct_is_the_hand_computation() {
        let h = lone_flow(30, 10);
        assert_eq!(h.f.state, crate::transport::tcp::SendState::Done);
        assert_eq!(h.now, 3 * R + 9 * TX, "FCT with W = 10");
        for (i, &(t, seq, rtx)) in h.sent.iter().enumerate() {
            let i = i as u64;
            assert_eq!((t, seq, rtx), ((i / 10) * R + (i % 10) * TX, i * MSS, false), "segment {i}");
        }
        assert!(h.trace.iter().all(|&(_, c, _)| c == 10 * MSS), "the window stays W");
        let h = lone_flow(30, 12_800);
        assert_eq!(h.now, 30 * TX + 2 * ONE_WAY, "FCT with the whole flow in one window");
    }

    /// The whole first window is lost: no ACK comes back, the timer fires at the initial RTO
    /// (1 s in this harness) and sets cwnd = 1 MSS, which nothing raises again (ns-3
    /// TcpAdvanced's IncreaseWindow is a no-op): the 30 segments then go one per RTT, so the
    /// flow ends at exactly 1 s + 30·R. NewReno's slow start would need ⌈log2⌉ rounds instead.
    #[test]
    fn after_a_timeout_one_segment_per_rtt_for_good() {
        let mut h = Harness::with_line_rate(30 * MSS, cfg(MSS, true), fixed(10), ONE_WAY, TX, 0, Box::new(|_, t| t < PS_PER_MS), RATE_BPS);
        h.run_until(2000 * PS_PER_MS);
        let t_rto = 1000 * PS_PER_MS;
        assert_eq!(h.f.timeouts, 1);
        assert_eq!(h.now, t_rto + 30 * R, "one segment per RTT after the timeout");
        let after: Vec<_> = h.sent.iter().filter(|s| s.0 >= t_rto).collect();
        assert_eq!(after.len(), 30);
        for (k, s) in after.iter().enumerate() {
            assert_eq!(s.0, t_rto + k as u64 * R, "send {k} after the timeout");
        }
        assert!(h.trace.iter().filter(|e| e.0 >= t_rto).all(|&(_, c, s)| c == MSS && s == NS3_SSTHRESH_BYTES));
    }

    /// A fast recovery does not cut the window (ssthresh = UINT32_MAX as ns-3's GetSsThresh):
    /// segment 1 lost once out of 30 with W = 10; the flow ends with at most one extra RTT,
    /// R for the retransmission, and cwnd ≥ W throughout.
    #[test]
    fn loss_does_not_cut_the_window() {
        let mut c = cfg(MSS, true);
        c.prr = true;
        let mut dropped = false;
        let drop = move |p: &crate::packet::Packet, _t: Time| {
            let d = p.seq == 0 && !dropped;
            dropped |= d;
            d
        };
        let mut h = Harness::with_line_rate(30 * MSS, c, fixed(10), ONE_WAY, TX, 0, Box::new(drop), RATE_BPS);
        h.run_until(10 * PS_PER_MS);
        assert_eq!((h.f.timeouts, h.f.retransmits), (0, 1));
        // PRR paces the recovery (cwnd = pipe + sndcnt, as ns-3's TcpPrrRecovery); leaving
        // it sets cwnd = ssthresh = UINT32_MAX: the window ends larger, never cut.
        assert_eq!(h.trace.last().unwrap().1, NS3_SSTHRESH_BYTES, "cwnd after the recovery");
        assert!(h.now <= 4 * R + 9 * TX, "FCT {} ≤ one RTT more than lossless", h.now);
        eprintln!("fixed_window one loss: FCT {} ps (lossless {} ps)", h.now, 3 * R + 9 * TX);
    }

    #[test]
    fn bad_window_is_one_clear_error() {
        let mut m = serde_json::Map::new();
        m.insert("window_packets".into(), 0.into());
        let e = crate::cc::build("fixed_window", &m).err().unwrap();
        assert!(e.contains("window_packets = 0") && e.contains(">= 1"), "{e}");
        m.insert("window_packets".into(), 2.5.into());
        assert!(crate::cc::build("fixed_window", &m).is_err());
        m.clear();
        m.insert("windows".into(), 3.into());
        assert!(crate::cc::build("fixed_window", &m).err().unwrap().contains("allowed: window_packets"));
    }
}

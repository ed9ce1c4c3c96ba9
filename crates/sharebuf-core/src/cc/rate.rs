//! Shared machinery of the rate-based algorithms (TIMELY, PowerTCP, θ-PowerTCP, HPCC):
//! a paced rate clamped to [min, line rate], the window that goes with it, and the
//! "once per RTT" update trigger (an ACK beyond the sequence sent at the last update).
//!
//! Two of ns3dc's `TcpAdvanced` details, off by default, are keys of every rate-based
//! algorithm ([`RATE_KEYS`]):
//! * `update_trigger = "new_ack"`: an update only on an ACK beyond the sequence sent at the
//!   previous update, a mark that never moves back (`ProcessDcAck`: `ackNum > lastUpdatedSeq`,
//!   `lastUpdatedSeq` raised only). The default "ack_or_rtt" also updates on any ACK an RTT
//!   after the previous update, so a sender whose cumulative ACK stalls keeps reacting.
//! * `loss_ssthresh = "ns3"`: ssthresh = 2³² − 1 at a loss and at a timeout
//!   (`TcpAdvanced::GetSsThresh`); the default "window" keeps the current window (a loss does
//!   not cut the rate). With ns-3's PRR arithmetic (`transport.prr_arithmetic = "ns3"`) this
//!   leaves no room to send in loss recovery beyond the fast retransmit.

use super::{AckInfo, PathInfo, Window};
use crate::config::Params;
use crate::engine::{Time, PS_PER_S};
use crate::packet::{IntHop, IntStack};

/// The `cc_params` keys every rate-based algorithm reads through [`RateOpts::parse`].
pub const RATE_KEYS: [&str; 2] = ["update_trigger", "loss_ssthresh"];

/// ns-3's ssthresh of a `TcpAdvanced` sender after a loss or a timeout: `UINT32_MAX`.
pub const NS3_ADVANCED_SSTHRESH_BYTES: u64 = u32::MAX as u64;

/// The [`RATE_KEYS`] options of one rate-based algorithm.
#[derive(Clone, Copy, Debug, Default)]
pub struct RateOpts {
    /// Only an ACK beyond the sequence of the previous update triggers one.
    pub new_ack_only: bool,
    /// ssthresh = 2³² − 1 after a loss or a timeout.
    pub ns3_ssthresh: bool,
}

impl RateOpts {
    pub fn parse(p: &Params) -> Result<Self, String> {
        Ok(RateOpts {
            new_ack_only: p.str_or("update_trigger", "ack_or_rtt", &["ack_or_rtt", "new_ack"])? == "new_ack",
            ns3_ssthresh: p.str_or("loss_ssthresh", "window", &["window", "ns3"])? == "ns3",
        })
    }

    /// ssthresh after a loss, with the window `w` at that moment.
    pub fn loss_ssthresh(&self, w: &Window) -> u64 {
        if self.ns3_ssthresh {
            NS3_ADVANCED_SSTHRESH_BYTES
        } else {
            w.cwnd_bytes
        }
    }

    /// ssthresh after a timeout (by default RFC 5681's, as for any algorithm).
    pub fn timeout_ssthresh(&self, w: &Window, in_flight_bytes: u64) -> u64 {
        if self.ns3_ssthresh {
            NS3_ADVANCED_SSTHRESH_BYTES
        } else {
            super::rfc5681_timeout_ssthresh(w, in_flight_bytes)
        }
    }
}

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
    /// Windows set so far and the last one (`CongestionControl::window_set`).
    sets: u64,
    last_window_bytes: u64,
    pub opts: RateOpts,
}

impl RateCtl {
    pub fn new(min_bps: f64, window_from_rate: bool) -> Self {
        RateCtl { rate_bps: 0.0, min_bps, max_bps: f64::MAX, last_update_seq: 0, last_update_ps: 0, window_from_rate, tau_s: 0.0, sets: 0, last_window_bytes: 0, opts: RateOpts::default() }
    }

    /// With the [`RATE_KEYS`] options read from `p`.
    pub fn with_opts(mut self, p: &Params) -> Result<Self, String> {
        self.opts = RateOpts::parse(p)?;
        Ok(self)
    }

    /// How many windows this controller has set (each rate update sets one), and the last.
    pub fn window_set(&self) -> (u64, u64) {
        (self.sets, self.last_window_bytes)
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
        self.sets += 1;
        w.pacing_rate_bps = r as u64;
        w.cwnd_bytes = if self.window_from_rate { ((r * self.tau_s / 8.0) as u64).max(w.mss_bytes) } else { u64::MAX / 4 };
        self.last_window_bytes = w.cwnd_bytes;
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
    /// so a rate-based sender keeps reacting while it recovers. With `update_trigger =
    /// "new_ack"` only the first: the mark is the highest sequence sent at any update, so
    /// after a timeout's go-back-N no update comes until the ACKs pass it again.
    pub fn once_per_rtt(&mut self, a: &AckInfo) -> bool {
        if self.opts.new_ack_only {
            if a.snd_una > self.last_update_seq {
                self.last_update_seq = self.last_update_seq.max(a.next_tx);
                self.last_update_ps = a.now;
                return true;
            }
            return false;
        }
        let rtt = a.stamp_rtt_ps().unwrap_or(a.path.tau_ps).max(a.path.tau_ps);
        if a.snd_una > self.last_update_seq || a.now >= self.last_update_ps + rtt {
            self.last_update_seq = a.next_tx;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(now: Time, snd_una: u64, snd_nxt: u64, path: &PathInfo) -> AckInfo<'_> {
        AckInfo { now, acked_bytes: 0, ece: false, rtt_ps: None, srtt_ps: None, echo_ts_ps: 0, int: None, in_recovery: false, snd_una, snd_nxt, next_tx: snd_nxt, path }
    }

    /// The once-per-RTT trigger, τ = 10 µs. An update at 0 with 50,000 B sent sets the mark.
    /// Then a timeout's go-back-N: ACKs of 20,000 … 22,000 with snd_nxt back at 21,000 …
    /// 23,000, at 11, 12 and 25 µs, and one of 50,001 at 26 µs. "ack_or_rtt" updates at 11 µs
    /// (an RTT passed; the mark moves down to 21,000), not at 12 (within an RTT, below the mark),
    /// at 25 (22,000 > 21,000) and at 26; "new_ack" (ns3dc's `ackNum > lastUpdatedSeq`, the mark
    /// never lowered) only at 26 µs, the first ACK past 50,000.
    #[test]
    fn new_ack_trigger_waits_for_an_ack_past_the_highest_mark() {
        let path = PathInfo { base_rtt_ps: 10_000_000, tau_ps: 10_000_000, line_rate_bps: 10_000_000_000 };
        let us = 1_000_000;
        for (new_ack, want) in [(false, vec![true, true, false, true, true]), (true, vec![true, false, false, false, true])] {
            let mut c = RateCtl::new(1e8, false);
            c.opts.new_ack_only = new_ack;
            let got: Vec<bool> = [ack(0, 1, 50_000, &path), ack(11 * us, 20_000, 21_000, &path), ack(12 * us, 21_000, 22_000, &path),
                                  ack(25 * us, 22_000, 23_000, &path), ack(26 * us, 50_001, 60_000, &path)]
                .iter().map(|a| c.once_per_rtt(a)).collect();
            assert_eq!(got, want, "new_ack = {new_ack}");
        }
    }

    /// `loss_ssthresh`: "window" keeps the current window (and RFC 5681's at a timeout);
    /// "ns3" gives `TcpAdvanced::GetSsThresh`'s 2^32 − 1 at both.
    #[test]
    fn loss_ssthresh_window_or_ns3() {
        let w = Window { cwnd_bytes: 120_000, ssthresh_bytes: u64::MAX, mss_bytes: 1000, pacing_rate_bps: 0 };
        let d = RateOpts::default();
        assert_eq!((d.loss_ssthresh(&w), d.timeout_ssthresh(&w, 80_000)), (120_000, 40_000));
        let n = RateOpts { ns3_ssthresh: true, ..d };
        assert_eq!((n.loss_ssthresh(&w), n.timeout_ssthresh(&w, 80_000)), (4_294_967_295, 4_294_967_295));
    }
}

//! Congestion control: the interface every algorithm implements and the registry by name.
//!
//! The transport ([`crate::transport`]) owns reliability (sequence numbers, duplicate-ACK
//! detection, fast retransmit/recovery, RTO); an algorithm owns the sending window and,
//! for rate-based algorithms, the pacing rate. It sees every ACK with its acked bytes,
//! ECN echo, RTT sample, echoed send timestamp and INT records, and loss/timeout events.

pub mod cubic;
pub mod dcqcn;
pub mod dctcp;
pub mod fixed_window;
pub mod hpcc;
pub mod newreno;
pub mod powertcp;
pub mod rate;
pub mod theta_powertcp;
pub mod timely;

use crate::config::Params;
use crate::engine::Time;
use crate::packet::IntStack;
use serde_json::{Map, Value};

/// The sender's window state, shared between transport and algorithm.
#[derive(Clone, Copy, Debug)]
pub struct Window {
    pub cwnd_bytes: u64,
    pub ssthresh_bytes: u64,
    pub mss_bytes: u64,
    /// Pacing rate in bits per second; 0 means no pacing (window-limited only).
    pub pacing_rate_bps: u64,
}

/// What an algorithm knows about its flow's path.
#[derive(Clone, Copy, Debug, Default)]
pub struct PathInfo {
    /// Round-trip propagation delay (the papers' base RTT).
    pub base_rtt_ps: Time,
    /// Unloaded RTT of a full-size data packet and its ACK: propagation plus serialization
    /// at every hop (τ of PowerTCP/HPCC; the ABM code's formula without its unit slip).
    pub tau_ps: Time,
    /// Line rate of the sender's NIC.
    pub line_rate_bps: u64,
}

/// What an algorithm learns from one ACK.
#[derive(Clone, Copy, Debug)]
pub struct AckInfo<'a> {
    pub now: Time,
    /// Bytes newly acknowledged (0 for a duplicate ACK).
    pub acked_bytes: u64,
    /// The ACK echoes a CE mark.
    pub ece: bool,
    /// RTT sample from the echoed send timestamp.
    pub rtt_ps: Option<Time>,
    /// The transport's smoothed RTT (RFC 6298 SRTT) after this ACK's sample; None before
    /// the first sample.
    pub srtt_ps: Option<Time>,
    /// Send time of the packet this ACK acknowledges.
    pub echo_ts_ps: Time,
    /// INT records the receiver echoed (only when the algorithm wants INT).
    pub int: Option<&'a IntStack>,
    /// The transport is in fast recovery (window growth is suspended).
    pub in_recovery: bool,
    pub snd_una: u64,
    /// The highest sequence sent + 1 (RFC 793's SND.NXT; snd_una after a timeout's go-back).
    pub snd_nxt: u64,
    /// The sequence the window- and RTT-rounds are marked with (DCTCP's α window, the rate
    /// algorithms' once-per-RTT update): snd_nxt, or with `transport.next_tx = "ns3"` ns-3.39's
    /// `m_nextTxSequence` (see `TcpFlow::next_tx`).
    pub next_tx: u64,
    /// The flow's path, by reference (not copied per ACK).
    pub path: &'a PathInfo,
}

impl AckInfo<'_> {
    /// RTT from the echoed send stamp at full resolution: `now − echo_ts_ps`, whenever the
    /// transport took a sample (`rtt_ps` is Some). `rtt_ps` is the TCP estimator's sample,
    /// quantized by `transport.timestamp_tick_us` (ns-3's TCP timestamps count whole ms); the
    /// delay-based rate algorithms (TIMELY, θ-PowerTCP) carry their own send stamp (the paper:
    /// NIC hardware timestamps; ns3dc's TcpAdvanced: a FeedbackTag stamped in ns when
    /// TcpSocketBase::SendDataPacket builds the segment) and read this one. Equal to `rtt_ps`
    /// when the tick is 0.
    #[inline(always)]
    pub fn stamp_rtt_ps(&self) -> Option<Time> {
        match self.rtt_ps {
            Some(_) => Some(self.now - self.echo_ts_ps),
            None => None,
        }
    }
}

/// A congestion-control algorithm, one value per flow.
pub trait CongestionControl: Send {
    fn name(&self) -> &'static str;
    /// A fresh per-flow instance with the same parameters.
    fn clone_box(&self) -> Box<dyn CongestionControl>;
    /// Data packets are sent ECN-capable (ECT).
    fn ecn_capable(&self) -> bool {
        false
    }
    /// The window is a fractional byte count (rate × τ): a packet may leave while the bytes in
    /// flight are below it, as in the HPCC/PowerTCP reference code, instead of TCP's
    /// in-flight + packet ≤ cwnd.
    fn partial_window(&self) -> bool {
        false
    }
    /// Switches must stamp INT records on this flow's data packets.
    fn wants_int(&self) -> bool {
        false
    }
    /// Called once when the connection is ready to send (window already at init_cwnd).
    fn on_start(&mut self, _w: &mut Window, _now: Time, _path: &PathInfo) {}
    /// Called for every ACK that acknowledges new data or echoes ECN.
    fn on_ack(&mut self, w: &mut Window, a: &AckInfo);
    /// Loss detected by three duplicate ACKs: return the new ssthresh (the transport then
    /// runs NewReno fast recovery from it).
    fn ssthresh_after_loss(&mut self, w: &Window, in_flight_bytes: u64) -> u64 {
        (in_flight_bytes / 2).max(2 * w.mss_bytes).max(w.cwnd_bytes.min(in_flight_bytes) / 2)
    }
    /// Retransmission timeout: return the new ssthresh, from the window as it was when the
    /// timer fired. Default RFC 5681 eq. (4): max(FlightSize / 2, 2·SMSS).
    fn ssthresh_after_timeout(&mut self, w: &Window, in_flight_bytes: u64) -> u64 {
        rfc5681_timeout_ssthresh(w, in_flight_bytes)
    }
    /// How many windows the algorithm has set on its own so far (rate-based algorithms: one
    /// per rate update; 0 for the others) and the last one. The transport compares the count
    /// across an ACK to know whether the algorithm set the window on that ACK
    /// (`transport.rate_window_in_recovery`).
    fn window_set(&self) -> (u64, u64) {
        (0, 0)
    }
    /// Retransmission timeout (the transport has already set ssthresh and cwnd = 1 MSS);
    /// `snd_max` is the highest sequence sent.
    fn on_timeout(&mut self, _w: &mut Window, _now: Time, _snd_max: u64) {}
    /// A rate-based sender (the RoCE transport) is about to send at `now`: bring the rate in
    /// `w.pacing_rate_bps` up to date (timers due by now). Default: nothing to do.
    fn on_send(&mut self, _w: &mut Window, _now: Time) {}
    /// A fresh per-flow instance (as `clone_box`) in the form the transport calls: the
    /// built-in algorithms on the hot path override it to be called directly.
    fn clone_flow(&self) -> FlowCc {
        FlowCc::Dyn(self.clone_box())
    }
}

/// A flow's congestion controller as the transport holds it (issue 10: no dynamic dispatch
/// on the per-ACK path). DCTCP and CUBIC, the algorithms of the bundled scenarios, are called
/// directly (a `match`, no virtual call, inlinable); every other algorithm, including ones
/// defined outside this crate, through its trait object. The same trait methods run either way.
pub enum FlowCc {
    Dctcp(Box<dctcp::Dctcp>),
    Cubic(Box<cubic::Cubic>),
    Dyn(Box<dyn CongestionControl>),
}

impl From<Box<dyn CongestionControl>> for FlowCc {
    fn from(c: Box<dyn CongestionControl>) -> Self {
        FlowCc::Dyn(c)
    }
}

/// Call the same `CongestionControl` method on whichever controller a `FlowCc` holds.
macro_rules! each_cc {
    ($cc:expr, $c:ident => $call:expr) => {
        match $cc {
            FlowCc::Dctcp($c) => $call,
            FlowCc::Cubic($c) => $call,
            FlowCc::Dyn($c) => $call,
        }
    };
}

impl FlowCc {
    pub fn name(&self) -> &'static str {
        each_cc!(self, c => c.name())
    }
    pub fn ecn_capable(&self) -> bool {
        each_cc!(self, c => c.ecn_capable())
    }
    pub fn partial_window(&self) -> bool {
        each_cc!(self, c => c.partial_window())
    }
    pub fn on_start(&mut self, w: &mut Window, now: Time, path: &PathInfo) {
        each_cc!(self, c => c.on_start(w, now, path))
    }
    // Always inlined into the TCP fast ACK path (the ACK's `AckInfo` need not be stored for a
    // call); DCTCP's `on_ack` is inlined into it, the others are calls as before.
    #[inline(always)]
    pub fn on_ack(&mut self, w: &mut Window, a: &AckInfo) {
        each_cc!(self, c => c.on_ack(w, a))
    }
    pub fn ssthresh_after_loss(&mut self, w: &Window, in_flight_bytes: u64) -> u64 {
        each_cc!(self, c => c.ssthresh_after_loss(w, in_flight_bytes))
    }
    pub fn ssthresh_after_timeout(&mut self, w: &Window, in_flight_bytes: u64) -> u64 {
        each_cc!(self, c => c.ssthresh_after_timeout(w, in_flight_bytes))
    }
    pub fn on_timeout(&mut self, w: &mut Window, now: Time, snd_max: u64) {
        each_cc!(self, c => c.on_timeout(w, now, snd_max))
    }
    pub fn window_set(&self) -> (u64, u64) {
        each_cc!(self, c => c.window_set())
    }
    /// DCTCP's α and the end of its last ECN cut's window (`Dctcp::cwr_end`), for the TCP
    /// trace; None for other algorithms.
    pub fn dctcp_state(&self) -> Option<(f64, u64)> {
        match self {
            FlowCc::Dctcp(c) => Some((c.alpha(), c.cwr_end())),
            _ => None,
        }
    }
    #[inline]
    pub fn on_send(&mut self, w: &mut Window, now: Time) {
        each_cc!(self, c => c.on_send(w, now))
    }
}

/// RFC 5681 eq. (4), ssthresh after a retransmission timeout: max(FlightSize / 2, 2·SMSS).
pub fn rfc5681_timeout_ssthresh(w: &Window, in_flight_bytes: u64) -> u64 {
    (in_flight_bytes / 2).max(2 * w.mss_bytes)
}

type Builder = fn(&Params) -> Result<Box<dyn CongestionControl>, String>;

/// Registered algorithms: (name, description, builder). Adding one = one module + one line.
pub const ALGORITHMS: &[(&str, &str, Builder)] = &[
    ("newreno", "TCP NewReno (RFC 5681/6582): slow start, AIMD, fast recovery", newreno::build),
    ("dctcp", "DCTCP (Alizadeh et al. 2010): alpha EWMA g=1/16, cut by alpha/2 once per window", dctcp::build),
    ("cubic", "CUBIC (RFC 9438): C=0.4, beta=0.7, fast convergence, Reno-friendly region, HyStart (classic as ns-3/Linux, or RFC 9406)", cubic::build),
    ("timely", "TIMELY (SIGCOMM 2015): RTT-gradient rate control with pacing", timely::build),
    ("powertcp", "PowerTCP (NSDI 2022): INT-based power control, per-ACK reaction", powertcp::build),
    ("theta_powertcp", "theta-PowerTCP (NSDI 2022): RTT-gradient power control, no INT", theta_powertcp::build),
    ("hpcc", "HPCC (SIGCOMM 2019): INT-based window control", hpcc::build),
    ("dcqcn", "DCQCN reaction point as the HPCC/Reverie ns-3 code runs it (docs/lossless.md §3): paced from line rate, alpha g=1/256 every 1 us, decrease check every 4 us, timer-only increase every 900 us (F=1, AI 50, HAI 100 Mb/s), a CNP per ECN-echoing ACK", dcqcn::build),
    ("fixed_window", "no congestion control: a fixed window paced at line rate, 1 MSS for good after a timeout (the ABM code's AEM 'theta-PowerTCP' class: TcpAdvanced with no CC flag)", fixed_window::build),
];

pub fn names() -> Vec<&'static str> {
    ALGORITHMS.iter().map(|a| a.0).collect()
}

/// Build a prototype instance of algorithm `name`; flows get `clone_box()` copies.
pub fn build(name: &str, params: &Map<String, Value>) -> Result<Box<dyn CongestionControl>, String> {
    let b = ALGORITHMS
        .iter()
        .find(|a| a.0 == name)
        .ok_or_else(|| format!("transport.cc = '{name}': unknown congestion control; allowed: {}", names().join(", ")))?;
    (b.2)(&Params::new("transport.cc_params", params))
}

/// ns-3.39's `TcpSocketBase::ProcessAck`: the bytes an ACK acknowledges, with what earlier ACKs
/// left short of a segment (`carry`, m_bytesAckedNotProcessed), as whole segments for the
/// congestion control; the rest stays in `carry`.
pub fn whole_segments(acked: u64, carry: &mut u64, mss: u64) -> u64 {
    let bytes = acked + *carry;
    *carry = bytes % mss;
    bytes / mss
}

/// Standard window growth (RFC 5681 with appropriate byte counting): slow start below
/// ssthresh, then one MSS per window of acknowledged bytes. With `segments` (DCTCP's
/// `window_unit = "segments"`), ns-3.39's `TcpLinuxReno` instead: the bytes acknowledged become
/// whole segments (`TcpSocketBase::ProcessAck`), slow start adds them up to ssthresh and
/// congestion avoidance adds a segment per ⌊cwnd / MSS⌋ of them (`m_cWndCnt`).
#[derive(Clone, Copy, Debug, Default)]
pub struct RenoGrowth {
    ca_acked_bytes: u64,
    pub segments: bool,
    /// m_cWndCnt: segments acknowledged towards the next increase (`segments`).
    cnt: u64,
    /// Bytes acknowledged short of a whole segment (`segments`; m_bytesAckedNotProcessed).
    carry: u64,
}

impl RenoGrowth {
    /// ns-3.39 `TcpLinuxReno::IncreaseWindow` (slow start, or else congestion avoidance, on
    /// the whole segments acknowledged); `ca_only`: congestion avoidance whatever ssthresh.
    fn grow_segments(&mut self, w: &mut Window, acked: u64, ca_only: bool) {
        let mss = w.mss_bytes;
        let segs = whole_segments(acked, &mut self.carry, mss);
        if !ca_only && w.cwnd_bytes < w.ssthresh_bytes {
            if segs >= 1 {
                w.cwnd_bytes = (w.cwnd_bytes + segs * mss).min(w.ssthresh_bytes);
            }
            return;
        }
        let wseg = (w.cwnd_bytes / mss).max(1);
        if self.cnt >= wseg {
            self.cnt = 0;
            w.cwnd_bytes += mss;
        }
        self.cnt += segs;
        if self.cnt >= wseg {
            let d = self.cnt / wseg;
            self.cnt -= d * wseg;
            w.cwnd_bytes += d * mss;
        }
    }

    pub fn grow(&mut self, w: &mut Window, acked: u64) {
        if self.segments {
            return self.grow_segments(w, acked, false);
        }
        let mut acked = acked;
        if w.cwnd_bytes < w.ssthresh_bytes {
            let room = w.ssthresh_bytes - w.cwnd_bytes;
            let ss = acked.min(room);
            w.cwnd_bytes += ss;
            acked -= ss;
            if acked == 0 {
                return;
            }
        }
        self.grow_ca(w, acked);
    }

    /// Congestion avoidance only, whatever ssthresh: +1 MSS per cwnd of acknowledged bytes.
    pub fn grow_ca(&mut self, w: &mut Window, acked: u64) {
        if self.segments {
            return self.grow_segments(w, acked, true);
        }
        self.ca_acked_bytes += acked;
        while self.ca_acked_bytes >= w.cwnd_bytes {
            self.ca_acked_bytes -= w.cwnd_bytes;
            w.cwnd_bytes += w.mss_bytes;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `window_unit = "segments"` for Reno growth (ns-3.39 `TcpLinuxReno`), MSS 1000, cwnd
    /// 50 500 B in congestion avoidance: one segment per ⌊50.5⌋ = 50 acknowledged segments, so the
    /// 50th ACK of a segment makes it 51 500 (byte counting needs 50 500 B: the 51st). An ACK of
    /// 1500 B counts 1 segment and carries 500 B to the next. Slow start below ssthresh adds
    /// whole segments up to it.
    #[test]
    fn reno_growth_in_whole_segments_as_ns3() {
        for (segments, at) in [(true, 50), (false, 51)] {
            let mut g = RenoGrowth { segments, ..Default::default() };
            let mut w = Window { cwnd_bytes: 50_500, ssthresh_bytes: 10_000, mss_bytes: 1000, pacing_rate_bps: 0 };
            let k = (1..=60).find(|_| {
                g.grow(&mut w, 1000);
                w.cwnd_bytes > 50_500
            });
            assert_eq!((k, w.cwnd_bytes), (Some(at), 51_500), "segments = {segments}");
        }
        let mut g = RenoGrowth { segments: true, ..Default::default() };
        let mut w = Window { cwnd_bytes: 8_000, ssthresh_bytes: 10_500, mss_bytes: 1000, pacing_rate_bps: 0 };
        g.grow(&mut w, 1500);
        assert_eq!(w.cwnd_bytes, 9_000);
        g.grow(&mut w, 1500);
        assert_eq!(w.cwnd_bytes, 10_500, "two segments (500 B carried), up to ssthresh");
    }

    /// `clone_flow` gives DCTCP and CUBIC in their directly called form, fresh as `clone_box`,
    /// and every `FlowCc` method reaches the same algorithm code as the trait object: the same
    /// windows over ACKs with ECN echoes, a loss and a timeout. Other algorithms stay trait objects.
    #[test]
    fn flow_cc_calls_the_same_algorithm_as_the_trait_object() {
        let path = PathInfo { base_rtt_ps: 20_000_000, tau_ps: 20_000_000, line_rate_bps: 10_000_000_000 };
        for name in ["dctcp", "cubic"] {
            let proto = build(name, &Map::new()).unwrap();
            let mut direct = proto.clone_flow();
            assert!(matches!((&direct, name), (FlowCc::Dctcp(_), "dctcp") | (FlowCc::Cubic(_), "cubic")), "{name}: not called directly");
            let mut dynamic = FlowCc::Dyn(proto.clone_box());
            assert_eq!((direct.name(), direct.ecn_capable(), direct.partial_window()), (dynamic.name(), dynamic.ecn_capable(), dynamic.partial_window()));
            let mut w = [Window { cwnd_bytes: 10_000, ssthresh_bytes: u64::MAX, mss_bytes: 1000, pacing_rate_bps: 0 }; 2];
            direct.on_start(&mut w[0], 0, &path);
            dynamic.on_start(&mut w[1], 0, &path);
            let mut una = 0;
            for i in 0..3000u64 {
                una += 1000;
                let rtt = 20_000_000 + (i % 13) * 1_000_000;
                for (k, cc) in [&mut direct, &mut dynamic].into_iter().enumerate() {
                    let a = AckInfo { now: i * 2_000_000, acked_bytes: 1000, ece: i % 7 == 0 && i < 1000, rtt_ps: Some(rtt), srtt_ps: Some(rtt), echo_ts_ps: 0, int: None, in_recovery: false, snd_una: una, snd_nxt: una + w[k].cwnd_bytes, next_tx: una + w[k].cwnd_bytes, path: &path };
                    cc.on_ack(&mut w[k], &a);
                    if i == 1500 {
                        w[k].ssthresh_bytes = cc.ssthresh_after_loss(&w[k], w[k].cwnd_bytes);
                        w[k].cwnd_bytes = w[k].ssthresh_bytes;
                    }
                    if i == 2200 {
                        w[k].ssthresh_bytes = cc.ssthresh_after_timeout(&w[k], w[k].cwnd_bytes);
                        w[k].cwnd_bytes = 1000;
                        cc.on_timeout(&mut w[k], a.now, una + 10_000);
                    }
                }
                assert_eq!((w[0].cwnd_bytes, w[0].ssthresh_bytes), (w[1].cwnd_bytes, w[1].ssthresh_bytes), "{name}: ACK {i}");
            }
            assert!(w[0].cwnd_bytes > 10_000, "{name}: the window grew after the timeout");
        }
        assert!(matches!(build("newreno", &Map::new()).unwrap().clone_flow(), FlowCc::Dyn(_)));
    }
}

#[cfg(test)]
pub(crate) mod testutil {
    use crate::engine::Time;
    use crate::packet::{IntHop, IntStack};

    /// An INT record of one 10 Gbps hop: its timestamp, cumulative transmitted bytes and queue.
    pub fn one_hop_int(ts_ps: Time, tx_bytes: u64, qlen_bytes: u32) -> IntStack {
        let mut s = IntStack::default();
        s.n = 1;
        s.hops[0] = IntHop { qlen_bytes, ts_ps, tx_bytes, rate_bps: 10_000_000_000 };
        s
    }
}

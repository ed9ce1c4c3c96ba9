//! The RoCE transport (`transport.kind = "roce"`): the rate-based go-back-N RDMA sender and
//! receiver as the ABM/Reverie authors' ns-3 code runs them (docs/lossless.md §3). Modelled on
//! the reference's behaviour, not its code.
//!
//! Sender (one queue pair per flow):
//! * starts at once (no handshake) at the congestion control's rate, which starts at line rate
//!   (no slow start); **no window**: only the rate limits it;
//! * paced per packet: after a packet of `w` bytes on the wire leaves the sender at `t`, the next
//!   may leave at `t + w / R`, with `R` the rate read at `t` (the congestion control's timers due
//!   by `t` run first, [`crate::cc::CongestionControl::on_send`]); a rate change does not move a
//!   send already booked (the reference's DCQCN sets the rate without `ChangeRate`);
//! * an ACK moves `snd_una` up to its sequence; a **NACK** does too and then rewinds `snd_nxt` to
//!   `snd_una` (go-back-N: every packet from the hole is sent again, at the current rate);
//! * an ACK or NACK with the CNP flag (here `flags::ECE`) is a CNP for the congestion control;
//! * **no retransmission timer**: a lost tail (nothing after it to provoke a NACK) is never
//!   recovered, as in the reference, which assumes a lossless fabric; such a flow stays
//!   unfinished in the results.
//!
//! Receiver:
//! * a packet at the expected sequence advances it and is ACKed at once (one ACK per packet, the
//!   reference's `L2AckInterval` 1), the ACK carrying the new expected sequence;
//! * a packet above it gets a NACK carrying the expected sequence, at most one per
//!   `nack_interval` (500 µs, `NACKGenerationInterval`) for the same expected sequence; the rest
//!   are discarded silently, as are duplicates below it;
//! * an ACK or NACK carries the CNP flag when the packet that caused it was CE-marked (no CNP
//!   coalescing interval: the reference has none).
//!
//! ACKs and NACKs go on the flow's own priority (the reference's `ACK_HIGH_PRIO 0`), with
//! `header_bytes` on the wire. A NACK is an ACK packet whose `sack_lo` is [`NACK`] (RoCE has no
//! SACK, so the field is free). This module is part of `TcpFlow` (its state lives in the same
//! slab slot, so the engine's flow storage, timers and retirement serve both transports).

use super::TcpFlow;
use super::{SendState, TransportCfg};
use crate::cc::{AckInfo, FlowCc};
use crate::engine::{tx_time_ps, Time};
use crate::packet::{flags, IntStack, Packet};

/// `Packet::sack_lo` of a NACK.
pub const NACK: u32 = u32::MAX;

/// Whether a RoCE control packet is a NACK.
#[inline(always)]
pub fn is_nack(p: &Packet) -> bool {
    p.sack_lo == NACK
}

impl TcpFlow {
    pub(crate) fn roce_start(&mut self, now: Time, mut cc: FlowCc, cfg: &TransportCfg, out: &mut Vec<Packet>) {
        self.ecn = cc.ecn_capable();
        cc.on_start(&mut self.win, now, &self.path);
        self.cc = Some(cc);
        self.rcv_open = true;
        self.state = SendState::Established;
        self.next_send_ps = now;
        if self.size_bytes == 0 {
            self.state = SendState::Done;
            return;
        }
        self.roce_send(now, cfg, out);
    }

    /// Send what the pacing allows now (at most one packet unless the rate is unbounded), and
    /// arm the pacing timer for the next.
    pub(crate) fn roce_send(&mut self, now: Time, cfg: &TransportCfg, out: &mut Vec<Packet>) {
        if self.state != SendState::Established {
            return;
        }
        while self.snd_nxt < self.size_bytes {
            if now < self.next_send_ps {
                self.pace.arm(self.next_send_ps);
                return;
            }
            let cc = self.cc.as_mut().expect("a started RoCE flow has a congestion control");
            cc.on_send(&mut self.win, now);
            let rate = if self.win.pacing_rate_bps == 0 { self.path.line_rate_bps } else { self.win.pacing_rate_bps };
            let len = cfg.mss_bytes.min(self.size_bytes - self.snd_nxt);
            if self.snd_nxt < self.snd_max {
                self.retransmits += 1;
            }
            let p = self.data(self.snd_nxt, len, now, cfg);
            self.next_send_ps = now + tx_time_ps(p.size_bytes as u64, rate.max(1));
            out.push(p);
            self.snd_nxt += len;
            self.snd_max = self.snd_max.max(self.snd_nxt);
        }
    }

    /// Sender: an ACK or a NACK arrived.
    pub(crate) fn roce_on_ack(&mut self, pkt: &Packet, int: Option<&IntStack>, now: Time, cfg: &TransportCfg, out: &mut Vec<Packet>) {
        if self.state != SendState::Established {
            return;
        }
        let ack = pkt.seq;
        let acked = ack.saturating_sub(self.snd_una);
        if ack > self.snd_una {
            self.snd_una = ack;
        }
        if is_nack(pkt) {
            self.snd_nxt = self.snd_una;
        } else if self.snd_nxt < self.snd_una {
            self.snd_nxt = self.snd_una;
        }
        let info = AckInfo { now, acked_bytes: acked, ece: pkt.has(flags::ECE), rtt_ps: None, srtt_ps: None, echo_ts_ps: pkt.ts_ps, int, in_recovery: false, snd_una: self.snd_una, snd_nxt: self.snd_nxt, next_tx: self.snd_nxt, path: &self.path };
        self.cc.as_mut().expect("a started RoCE flow has a congestion control").on_ack(&mut self.win, &info);
        if self.snd_una >= self.size_bytes {
            self.state = SendState::Done;
            self.pace.disarm();
            return;
        }
        // Idle (everything sent) and rewound by a NACK: send again; else the pacing timer runs.
        if !self.pace.armed() {
            self.roce_send(now, cfg, out);
        }
    }

    /// Receiver: a data packet arrived. True when it completed the flow.
    pub(crate) fn roce_on_receive(&mut self, pkt: &Packet, now: Time, cfg: &TransportCfg, out: &mut Vec<Packet>) -> bool {
        if !pkt.has(flags::DATA) {
            return false;
        }
        let ce = pkt.has(flags::CE);
        let s = pkt.seq;
        if s == self.rcv_nxt {
            self.rcv_nxt = s + pkt.payload_bytes as u64;
            out.push(self.roce_control(false, ce, pkt.ts_ps, now, cfg));
            if self.end_ps.is_none() && self.rcv_nxt >= self.size_bytes {
                self.end_ps = Some(now);
                return true;
            }
        } else if s > self.rcv_nxt && (now >= self.roce_nack_until || self.roce_last_nack != self.rcv_nxt) {
            self.roce_nack_until = now + cfg.nack_interval_ps;
            self.roce_last_nack = self.rcv_nxt;
            out.push(self.roce_control(true, ce, pkt.ts_ps, now, cfg));
        }
        false
    }

    fn roce_control(&self, nack: bool, cnp: bool, echo_ts: Time, _now: Time, cfg: &TransportCfg) -> Packet {
        let unsched = if cfg.unscheduled_acks { flags::UNSCHED } else { 0 };
        let f = flags::ACK | unsched | if cnp { flags::ECE } else { 0 };
        Packet { seq: self.rcv_nxt, ts_ps: echo_ts, enq_ps: 0, from_port: 0, flow: self.id, size_bytes: cfg.header_bytes as u32, payload_bytes: 0, dst: self.src, prio: self.prio, flags: f, hops: 0, sack_lo: if nack { NACK } else { 0 }, sack_hi: 0 }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{cfg, Harness};
    use super::*;
    use crate::cc;
    use crate::engine::PS_PER_US;

    const US: Time = PS_PER_US;

    /// A RoCE flow of `n` packets of 1 000 B (no headers) at 8 Gbps (1 µs per packet on the
    /// wire and at the pacing rate), `one_way` each way; `drop` discards data packets.
    fn run(n: u64, one_way: Time, drop: Box<dyn FnMut(&Packet, Time) -> bool>) -> Harness<'static> {
        let mut c = cfg(1000, false);
        c.roce = true;
        let dcqcn = cc::build("dcqcn", &serde_json::Map::new()).unwrap();
        let mut h = Harness::with_line_rate(n * 1000, c, dcqcn, one_way, US, 0, drop, 8_000_000_000);
        h.run_until(10_000 * US);
        h
    }

    /// No loss: packet k leaves at k µs (paced back to back at line rate) and arrives at
    /// k + 1 + one_way; the flow ends when the last arrives, one ACK per packet, no NACK.
    #[test]
    fn lossless_flow_is_paced_at_line_rate() {
        let h = run(50, 10_250_000, Box::new(|_, _| false));
        assert_eq!(h.f.end_ps, Some(49 * US + US + 10_250_000));
        assert_eq!(h.sent.len(), 50);
        assert!(h.sent.iter().enumerate().all(|(k, &(t, seq, rtx))| t == k as Time * US && seq == k as u64 * 1000 && !rtx));
        assert_eq!(h.acks.len(), 50);
        assert!(h.acks.iter().all(|a| !is_nack(a) && a.prio == h.f.prio));
        assert_eq!(h.f.retransmits, 0);
    }

    /// One drop, by hand (1 µs per packet, one way 10.25 µs, 50 packets): packet 5 (sent at
    /// 5 µs) is lost; packet 6 arrives at 6 + 1 + 10.25 = 17.25 µs, out of order: one NACK for
    /// 5 000, at the sender at 27.5 µs, when it has sent packets 0..27 (27 at 27 µs; the next
    /// send is booked at 28 µs). Packets 7..27 arrive out of order within 500 µs of the NACK
    /// for the same expected sequence: no further NACK, no ACK. The sender goes back to 5 000:
    /// packets 5..49 leave at 28..72 µs, the last arrives at 72 + 1 + 10.25 = 83.25 µs. Without
    /// the loss the flow ends at 49 + 11.25 = 60.25 µs: the FCT grows by 23 µs, the time of the
    /// 23 packets 5..27 sent twice (23 retransmissions; 28..49 leave once, after the rewind).
    #[test]
    fn one_drop_gives_one_nack_and_a_go_back_n_resend() {
        let mut dropped = false;
        let h = run(
            50,
            10_250_000,
            Box::new(move |p, _| {
                if p.seq == 5000 && !dropped {
                    dropped = true;
                    return true;
                }
                false
            }),
        );
        let nacks: Vec<&Packet> = h.acks.iter().filter(|a| is_nack(a)).collect();
        assert_eq!(nacks.len(), 1, "exactly one NACK");
        assert_eq!(nacks[0].seq, 5000);
        assert_eq!(h.f.end_ps, Some(83 * US + 250_000), "FCT 83.25 µs = 60.25 + 23");
        // Sends: 0..27 at 0..27 µs, then 5..49 at 28..72 µs.
        let want: Vec<(Time, u64, bool)> = (0..28u64).map(|k| (k * US, k * 1000, false)).chain((5..50u64).map(|k| ((23 + k) * US, k * 1000, k < 28))).collect();
        assert_eq!(h.sent, want);
        assert_eq!(h.f.retransmits, 23);
        // One ACK per in-order packet: 0..4 first, then 5..49 after the resend.
        assert_eq!(h.acks.len(), 1 + 50);
    }

    /// A lost last packet has nothing after it to provoke a NACK and no timer: the flow never
    /// finishes (the reference's behaviour on a lossless fabric).
    #[test]
    fn a_lost_tail_is_never_recovered() {
        let h = run(10, 10 * US, Box::new(|p, _| p.seq == 9000));
        assert_eq!(h.f.end_ps, None);
        assert_eq!(h.f.rcv_nxt, 9000);
        assert!(!h.f.rto.armed() && !h.f.pace.armed());
        assert_eq!(h.acks.iter().filter(|a| is_nack(a)).count(), 0);
    }

    /// A NACK for the same hole again only after the suppression interval. By hand, with a
    /// 20 µs interval and packet 5 lost twice (the first and the resent copy): NACK 1 at
    /// 17.25 µs (packet 6); packet 26 arrives at 37.25 µs, 20 µs later: NACK 2 (27 at 38.25 µs is
    /// suppressed). The sender rewinds at 27.5 µs (resends 5, 6, … from 28 µs; 5 is lost again)
    /// and at 47.5 µs (5 again at 48 µs). Resent packet k (sent at 23 + k µs) arrives at
    /// 34.25 + k µs, out of order: packet 23 at 57.25 µs, 20 µs after NACK 2, gives NACK 3. The
    /// third copy of 5 arrives at 59.25 µs in order; from then on everything is in order or a
    /// duplicate (discarded silently): three NACKs, all for 5 000, and the flow finishes.
    #[test]
    fn nack_suppression_interval() {
        let mut n5 = 0;
        let mut c = cfg(1000, false);
        c.roce = true;
        c.nack_interval_ps = 20 * US;
        let dcqcn = cc::build("dcqcn", &serde_json::Map::new()).unwrap();
        let drop = Box::new(move |p: &Packet, _| {
            if p.seq == 5000 && n5 < 2 {
                n5 += 1;
                return true;
            }
            false
        });
        let mut h = Harness::with_line_rate(50_000, c, dcqcn, 10_250_000, US, 0, drop, 8_000_000_000);
        h.run_until(10_000 * US);
        let nacks: Vec<&Packet> = h.acks.iter().filter(|a| is_nack(a)).collect();
        assert_eq!(nacks.len(), 3, "NACKs: {:?}", nacks.iter().map(|p| p.seq).collect::<Vec<_>>());
        assert!(nacks.iter().all(|p| p.seq == 5000));
        assert!(h.f.end_ps.is_some());
    }

    /// DCQCN read at send time, against its formula (docs/lossless.md §3, the reference's
    /// parameters): 100 packets of 1 000 B at 8 Gbps (1 µs each), one way 10 µs, only packet 3
    /// CE-marked. Its ACK carries the CNP flag and reaches the sender at t0 = 3 + 1 + 10 + 10 =
    /// 24 µs: α := 1 and the rate stays 8 Gbps (rate_on_first_cnp = 1); α decays at 25, 26, 27,
    /// 28 µs with no further CNP: α = (255/256)⁴; the decrease check at t0 + 4.001 µs sets
    /// R = 8 Gbps · (1 − α/2). Packet 28 leaves at 28 µs, before it: the next is booked at line
    /// rate, 29 µs; from packet 29 on the gap is 1 000 B / R (rounded up to the picosecond).
    #[test]
    fn first_dcqcn_decrease_paces_the_next_packets_at_the_formula_rate() {
        let mut c = cfg(1000, false);
        c.roce = true;
        let dcqcn = cc::build("dcqcn", &serde_json::Map::new()).unwrap();
        let mut h = Harness::with_line_rate(100_000, c, dcqcn, 10 * US, US, 0, Box::new(|_, _| false), 8_000_000_000);
        h.ce_mark = Some(Box::new(|p: &Packet| p.seq == 3000));
        h.run_until(10_000 * US);
        assert_eq!(h.acks.iter().filter(|a| a.has(flags::ECE)).count(), 1, "one CNP");
        let alpha = (255.0f64 / 256.0).powi(4);
        let r = 8e9 * (1.0 - alpha / 2.0);
        assert!((r - 4.062134e9).abs() < 1e3, "{r}");
        let gap = tx_time_ps(1000, r as u64);
        for (k, &(t, seq, rtx)) in h.sent.iter().enumerate() {
            let k = k as u64;
            let want = if k <= 29 { k * US } else { 29 * US + (k - 29) * gap };
            assert_eq!((t, seq, rtx), (want, k * 1000, false), "packet {k}");
        }
        assert_eq!(h.sent.len(), 100);
    }
}

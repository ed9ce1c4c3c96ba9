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
        let info = AckInfo { now, acked_bytes: acked, ece: pkt.has(flags::ECE), rtt_ps: None, srtt_ps: None, echo_ts_ps: pkt.ts_ps, int, in_recovery: false, snd_una: self.snd_una, snd_nxt: self.snd_nxt, path: &self.path };
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

//! Unresponsive constant-rate senders (UDP-like), as in FB's testbed: fixed-size packets
//! at a fixed rate from `start` to `stop`, no ACKs, no reaction to loss.

use crate::config::CbrSpec;
use crate::engine::{Time, PS_PER_S};
use crate::packet::{flags, Packet};

pub struct CbrFlow {
    pub id: u32,
    pub src: u32,
    pub dst: u32,
    pub rate_bps: u64,
    pub start_ps: Time,
    pub stop_ps: Time,
    pub prio: u8,
    pub packet_bytes: u32,
    pub sent_pkts: u64,
    pub sent_bytes: u64,
    pub delivered_bytes: u64,
    pub workload: u16,
}

impl CbrFlow {
    pub fn new(id: u32, s: &CbrSpec, workload: u16) -> Self {
        CbrFlow { id, src: s.src, dst: s.dst, rate_bps: s.rate_bps, start_ps: s.start_ps, stop_ps: s.stop_ps, prio: s.priority, packet_bytes: s.packet_bytes, sent_pkts: 0, sent_bytes: 0, delivered_bytes: 0, workload }
    }

    /// Emission time of packet k, exact (no accumulated rounding).
    pub fn time_of(&self, k: u64) -> Time {
        self.start_ps + ((k as u128 * self.packet_bytes as u128 * 8 * PS_PER_S as u128) / self.rate_bps as u128) as Time
    }

    /// Emit the next packet; returns it and the time of the following one (None: stopped).
    pub fn emit(&mut self, now: Time) -> (Packet, Option<Time>) {
        let p = Packet { seq: self.sent_bytes, ts_ps: now, enq_ps: 0, from_port: 0, flow: self.id, size_bytes: self.packet_bytes, payload_bytes: self.packet_bytes, dst: self.dst, prio: self.prio, flags: flags::CBR | flags::DATA, hops: 0, sack_lo: 0, sack_hi: 0 };
        self.sent_pkts += 1;
        self.sent_bytes += self.packet_bytes as u64;
        let next = self.time_of(self.sent_pkts);
        (p, (next < self.stop_ps).then_some(next))
    }
}

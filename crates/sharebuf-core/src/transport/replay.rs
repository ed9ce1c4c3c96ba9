//! One TCP sender driven by a recorded ACK stream: another simulator's ACKs (ns-3's, with their
//! SACK blocks and timestamp echoes) fed to sharebuf's sender at the times they arrived there,
//! and what the sender does in reply. The network plays no part, so where the two senders first
//! send differently on the same ACKs, their rules differ (`sharebuf-tcp-replay`,
//! bench/ns3dc/tcp_diag.py `replay`).

use super::tcp::{SendState, TcpFlow};
use super::TransportCfg;
use crate::cc::{FlowCc, PathInfo};
use crate::engine::Time;
use crate::metrics::TcpTraceRecord;
use crate::packet::{flags, Packet};

/// One recorded ACK: when it reached the sender, its cumulative ack number, its flags
/// (`packet::flags`: SYN for the SYN-ACK, ECE), the send time it echoes and its SACK blocks
/// (absolute sequence numbers, the block of the segment that triggered it first, as RFC 2018).
#[derive(Clone, Debug, Default)]
pub struct RecordedAck {
    pub t_ps: Time,
    pub ack: u64,
    pub flags: u8,
    pub echo_ps: Time,
    pub sack: Vec<(u64, u64)>,
}

/// One flow to replay: its size and start, whether it opens with a handshake, its path (for the
/// algorithms that read it) and the ACKs it received.
#[derive(Clone, Debug, Default)]
pub struct RecordedFlow {
    pub id: u32,
    pub size_bytes: u64,
    pub start_ps: Time,
    pub handshake: bool,
    pub path: PathInfo,
    pub acks: Vec<RecordedAck>,
}

/// The sender's trace rows (`[output] tcp_trace`: sends, ACKs, timeouts, the SYN-ACK) over the
/// replay; its timers fire where they fall between the recorded ACKs. The first SACK block goes
/// in the ACK itself (it carries one); the others are put on the scoreboard just before it, so
/// they count as news only if this ACK was the first to carry them.
pub fn replay(flow: &RecordedFlow, cfg: &TransportCfg, cc: FlowCc) -> Vec<TcpTraceRecord> {
    let mut f = TcpFlow::new(flow.id, 0, 1, flow.size_bytes, flow.start_ps, 0, flow.handshake, flow.path, cfg);
    f.trace = Some(Box::default());
    let mut out = Vec::new();
    f.start(flow.start_ps, cc, cfg, &mut out);
    for a in &flow.acks {
        fire_timers(&mut f, a.t_ps, cfg, &mut out);
        if f.state == SendState::Done {
            break;
        }
        for &(lo, hi) in a.sack.iter().skip(1) {
            f.sack_insert(lo, hi);
        }
        let (lo, hi) = a.sack.first().map_or((0, 0), |&(lo, hi)| (lo.saturating_sub(a.ack), hi.saturating_sub(a.ack)));
        let pkt = Packet { seq: a.ack, ts_ps: a.echo_ps, enq_ps: 0, from_port: 0, flow: flow.id, size_bytes: 0, payload_bytes: 0, dst: 0, prio: 0, flags: a.flags | flags::ACK, hops: 0, sack_lo: lo as u32, sack_hi: hi as u32 };
        f.on_ack(&pkt, None, a.t_ps, cfg, &mut out);
        out.clear();
    }
    f.trace.take().map(|t| t.rows).unwrap_or_default()
}

/// Fire the sender's retransmission and pacing timers due before `t`, in time order.
fn fire_timers(f: &mut TcpFlow, t: Time, cfg: &TransportCfg, out: &mut Vec<Packet>) {
    loop {
        let rto = if f.rto.armed() { f.rto.deadline } else { Time::MAX };
        let pace = if f.pace.armed() { f.pace.deadline } else { Time::MAX };
        let next = rto.min(pace);
        if next >= t {
            return;
        }
        if rto <= pace {
            f.on_rto(rto, cfg, out);
        } else {
            f.on_pace(pace, cfg, out);
        }
        out.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc;
    use crate::engine::{PS_PER_MS, PS_PER_US};
    use crate::metrics::{TRACE_ACK, TRACE_SEND, TRACE_TIMEOUT};
    use crate::transport::tcp::tests::cfg;

    fn newreno() -> FlowCc {
        cc::build("newreno", &Default::default()).unwrap().clone_flow()
    }

    /// Ten segments of 1000 B, IW 10, no handshake; the ACKs of segments 1–9 arrive at 100 µs
    /// + k µs, each SACKing one more segment above the lost first one (0), then nothing: the
    /// third duplicate ACK starts recovery and resends 0 at once (RFC 6675, sharebuf's
    /// defaults, which restart the timer there), and the resent segment's ACK never comes, so
    /// the timer fires one minimum RTO (200 ms; the RTT samples are µs) later, at 200.103 ms,
    /// before the recorded ACK of 300 ms, which ends the flow.
    #[test]
    fn replay_sends_what_the_recorded_acks_ask_and_fires_the_timer_between_them() {
        let c = cfg(1000, true);
        let acks = (1..10u64)
            .map(|k| RecordedAck { t_ps: 100 * PS_PER_US + k * PS_PER_US, ack: 0, flags: 0, echo_ps: k * PS_PER_US, sack: vec![(1000, 1000 * (k + 1))] })
            .chain(std::iter::once(RecordedAck { t_ps: 300 * PS_PER_MS, ack: 10_000, flags: 0, echo_ps: 0, sack: vec![] }))
            .collect();
        let flow = RecordedFlow { id: 7, size_bytes: 10_000, start_ps: 0, handshake: false, path: PathInfo::default(), acks };
        let rows = replay(&flow, &c, newreno());
        let sends: Vec<(Time, u64, bool)> = rows.iter().filter(|r| r.event == TRACE_SEND).map(|r| (r.time_ps, r.seq, r.retx)).collect();
        assert_eq!(sends.len(), 12, "{sends:?}");
        assert!(sends[..10].iter().enumerate().all(|(k, s)| *s == (0, 1000 * k as u64, false)));
        assert_eq!(sends[10], (103 * PS_PER_US, 0, true), "the fast retransmit at the third duplicate ACK");
        assert_eq!(sends[11], (200 * PS_PER_MS + 103 * PS_PER_US, 0, true), "resent again by the timer");
        let timeouts: Vec<Time> = rows.iter().filter(|r| r.event == TRACE_TIMEOUT).map(|r| r.time_ps).collect();
        assert_eq!(timeouts, vec![200 * PS_PER_MS + 103 * PS_PER_US]);
        assert_eq!(rows.iter().filter(|r| r.event == TRACE_ACK).count(), 10);
        assert_eq!(rows.last().map(|r| (r.event, r.seq)), Some((TRACE_ACK, 10_000)));
    }

    /// The SACK blocks after the first reach the scoreboard: one ACK carrying [3000, 4000) first
    /// and [1000, 2000), [5000, 6000) after it leaves 3 segments SACKed above the lost 0, so the
    /// sender (SACK, RFC 6675's IsLost) starts recovery on this single ACK.
    #[test]
    fn replay_puts_every_sack_block_on_the_scoreboard() {
        let c = cfg(1000, true);
        let acks = vec![RecordedAck { t_ps: 100 * PS_PER_US, ack: 0, flags: 0, echo_ps: 0, sack: vec![(3000, 4000), (1000, 2000), (5000, 6000)] }];
        let flow = RecordedFlow { id: 1, size_bytes: 10_000, start_ps: 0, handshake: false, path: PathInfo::default(), acks };
        let rows = replay(&flow, &c, newreno());
        let rtx: Vec<u64> = rows.iter().filter(|r| r.event == TRACE_SEND && r.retx).map(|r| r.seq).collect();
        assert_eq!(rtx, vec![0]);
    }
}

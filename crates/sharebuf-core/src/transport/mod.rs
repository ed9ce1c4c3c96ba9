//! Host transports, chosen by name (`transport.kind`): `tcp` is the reliable byte-stream
//! transport every congestion-control algorithm plugs into; `roce` (`roce.rs`) is the rate-based
//! go-back-N RDMA sender of docs/lossless.md §3, run in a `TcpFlow`'s slot; `cbr` is the
//! unresponsive constant-rate sender.
//!
//! Transport logic is pure: it reads a packet or a timer and writes the packets it wants
//! sent into a reusable output buffer, and its timer deadlines into its own fields. The
//! simulator (`crate::sim`) moves packets and schedules timers.

pub mod cbr;
pub mod flows;
pub mod replay;
pub mod sack;
pub mod tcp;

pub use tcp::roce;

use crate::config::TransportSpec;
use crate::engine::Time;

/// Transport settings shared by all TCP flows of a scenario.
#[derive(Clone, Debug)]
pub struct TransportCfg {
    pub mss_bytes: u64,
    pub header_bytes: u64,
    pub init_cwnd_packets: u64,
    pub min_rto_ps: Time,
    pub initial_rto_ps: Time,
    pub max_rto_ps: Time,
    pub handshake: bool,
    pub delayed_ack_packets: u32,
    pub delayed_ack_timeout_ps: Time,
    pub ack_priority: u8,
    pub unscheduled_bytes: u64,
    pub unscheduled_acks: bool,
    /// Selective acknowledgments (RFC 2018) with RFC 6675 loss recovery.
    pub sack: bool,
    /// Clock granularity G of RFC 6298 (ns-3: 10 ns).
    pub clock_granularity_ps: Time,
    /// RTT measured with RFC 7323 timestamps on a clock of this tick (0: exact send times;
    /// ns-3 with timestamps on: 1 ms, a zero difference counting as 1 µs).
    pub timestamp_tick_ps: Time,
    /// Proportional Rate Reduction (RFC 6937, slow-start reduction bound) sets the window
    /// during SACK recovery instead of RFC 6675's cwnd = ssthresh.
    pub prr: bool,
    /// A flow on a pre-opened connection starts with a window of size / MSS + 1 segments
    /// (ns3dc's incast applications set `InitialCwnd` so); else `init_cwnd_packets`.
    pub preopened_cwnd_fit: bool,
    /// A lost retransmission is left to the retransmission timer (ns-3.39), not detected from
    /// SACKs of later data.
    pub lost_rtx_rto_only: bool,
    /// In SACK recovery, once no hole below the highest SACKed byte is left and no new data,
    /// retransmit the un-SACKed data above it in order (ns-3.39's `TcpTxBuffer::NextSeg` rule 3,
    /// without RFC 6675's criterion (1.b)); else that tail waits for the retransmission timer.
    pub recovery_tail_resend: bool,
    /// While an ECN-capable sender is in CWR (ns-3.39's CA_CWR), duplicate ACKs start no loss
    /// recovery: the holes with three SACKed segments above them are resent as the window allows
    /// (`TcpTxBuffer::NextSeg` rule 1), without a second window cut; a recovery under way ends
    /// when CWR begins (`TcpSocketBase::EnterCwr`).
    pub cwr_no_recovery: bool,
    /// DCTCP in CWR: ssthresh from the loss rule at the ECN-Echo, cwnd brought down by PRR on
    /// ACKs of new data (with `prr`; else cwnd = ssthresh at once, as ns-3's
    /// `TcpClassicRecovery`), cwnd = ssthresh when CWR ends (ns-3.39's `EnterCwr`); the congestion
    /// control neither cuts nor grows cwnd meanwhile.
    pub cwr_window_prr: bool,
    /// The receiver echoes a segment's CE only when the segment lies above the highest one whose
    /// CE it echoed so far (ns-3.39's `m_ecnCESeq`); any other segment's ACK carries no ECN-Echo.
    pub ce_echo_ns3: bool,
    /// A partial ACK in SACK recovery sends one segment at once, whatever the window, unless the
    /// new first unacknowledged segment was retransmitted already (ns-3.39's `DoRetransmit` in
    /// `ProcessAck`): that segment if presumed lost, else new data, else that segment.
    pub partial_ack_rtx: bool,
    /// SACK recovery presumes a segment lost only with 3 SACKed segments above it (ns-3.39's
    /// `TcpTxBuffer::UpdateLostCount`, `loss_marking = "ns3"`), not every hole below the highest
    /// SACKed byte.
    pub loss_marking_ns3: bool,
    /// The retransmission timer is not restarted when recovery begins, and of the partial ACKs
    /// in recovery only the first since the last full ACK or timeout restarts it (ns-3.39's
    /// `NewAck(ack, m_isFirstPartialAck)`).
    pub recovery_timer_ns3: bool,
    /// PRR's slow-start reduction bound only on an ACK that cumulatively acknowledges a
    /// retransmitted, un-SACKed segment in recovery, else DeliveredData (ns-3.39's
    /// `TcpPrrRecovery::DoRecovery` with `m_isRetransDataAcked`).
    pub prr_ssrb_rtx_acked: bool,
    /// PRR in ns-3.39's 32-bit unsigned arithmetic (`prr_arithmetic = "ns3"`):
    /// prr_delivered · ssthresh modulo 2^32, and prr_delivered − prr_out modulo 2^32.
    pub prr_wrap32: bool,
    /// In loss recovery, an ACK on which a rate-based algorithm set its window leaves that
    /// window, not PRR's (`rate_window_in_recovery = "rate"`: ns3dc runs `ProcessDcAck`
    /// after `ProcessAck`).
    pub rate_window_after_prr: bool,
    /// ECN-capable flows, after a timeout until the cumulative ACK reaches what had been sent
    /// when it fired: only the data resent since counts in PRR's pipe (ns-3.39's
    /// `SetSentListLost`), so an ECN-Echo meanwhile (`EnterCwr` from `CA_LOSS`) runs PRR over
    /// it; and always, a window below one segment sends nothing unless the rest of the data
    /// fits (`SendPendingData`'s silly-window check).
    pub loss_cwr_ns3: bool,
    /// ns-3.39's `SendPendingData` silly-window check for every flow (`silly_window = "ns3"`):
    /// nothing goes while the window left (cwnd − in flight) is below the segment, also with
    /// nothing in flight, and also for congestion controls whose window is a fractional rate × τ.
    pub silly_window_ns3: bool,
    /// Limited Transmit (RFC 3042; with SACK, RFC 6675 §5 step 3 as ns-3.39's `AvailableWindow`
    /// in CA_DISORDER): before recovery, with SACKed data held or duplicate ACKs counted, new
    /// data goes while the pipe (outstanding less SACKed; without SACK, less one segment per
    /// duplicate ACK, at most two) leaves room in cwnd.
    pub limited_transmit: bool,
    /// The ACK that ends the loss state after a timeout (reaches what had been sent when the
    /// timer fired) counts only the whole segments above that point for the congestion control
    /// (`loss_exit_acked = "ns3"`: ns-3.39's `ProcessAck` leaving CA_LOSS); ACKs before it count
    /// all they acknowledge either way.
    pub loss_exit_ns3: bool,
    /// The ACK that ends a fast recovery grows the window by the whole segments it acknowledges,
    /// from cwnd = ssthresh (`recovery_exit_acked = "ns3"`: ns-3.39's `ProcessAck` leaving
    /// CA_RECOVERY calls `IncreaseWindow`); otherwise it grows nothing (RFC 6675, RFC 6937).
    pub recovery_exit_ns3: bool,
    /// RTT samples only from an ACK that covers the oldest segment sent once since the last
    /// timeout, or the SYN-ACK of a SYN sent once (`rtt_samples = "ns3"`: ns-3.39's
    /// `EstimateRtt` over its `m_history`); none from duplicate ACKs or ACKs of retransmitted data.
    pub rtt_samples_ns3: bool,
    /// Pacing books the payload only (ns3dc), not payload + header_bytes.
    pub pace_payload_only: bool,
    /// `pacing_rate_change = "rescale"`: a rate change moves a pending pacing gap (ns3dc).
    pub pace_rescale: bool,
    /// `pacing_gap = "ns3"`: a pacing gap is truncated to whole ns (ns-3's integer `Time`).
    pub pace_gap_ns3: bool,
    /// `pacing_resends = "ns3"`: a resend outside the send loop starts a pacing gap if none runs.
    pub pace_resends_ns3: bool,
    /// `next_tx = "ns3"`: the controller's rounds are marked with ns-3's `m_nextTxSequence`.
    pub next_tx_ns3: bool,
    /// Bytes a TCP sender may have in flight until the receiver's first ACK (the SYN-ACK's
    /// window; u64::MAX: no limit).
    pub syn_ack_window_bytes: u64,
    /// `kind = "roce"`: flows run the RoCE sender and receiver (`roce.rs`) instead of TCP.
    pub roce: bool,
    /// RoCE receiver: NACK suppression interval for the same expected sequence.
    pub nack_interval_ps: Time,
}

/// Transport kinds by name (`transport.kind`).
pub const KINDS: [&str; 2] = ["tcp", "roce"];

/// Congestion controls the RoCE sender runs (the rate is read at each send; no window).
pub const ROCE_CCS: [&str; 1] = ["dcqcn"];

/// A transport switch with two allowed values: `off` gives false, `on` true; anything else is a
/// clear error naming `transport.<key>`.
fn two_way(key: &str, value: &str, off: &str, on: &str) -> Result<bool, String> {
    match value {
        v if v == off => Ok(false),
        v if v == on => Ok(true),
        other => Err(format!("transport.{key} = '{other}': not allowed; allowed: {off}, {on}")),
    }
}

impl TransportCfg {
    pub fn from_spec(t: &TransportSpec) -> Result<Self, String> {
        if t.mss_bytes == 0 || t.mss_bytes > 65_000 {
            return Err(format!("transport.mss_bytes = {}: must be in 1..=65000", t.mss_bytes));
        }
        if t.init_cwnd_packets == 0 {
            return Err("transport.init_cwnd_packets = 0: must be >= 1".into());
        }
        if t.delayed_ack_packets == 0 {
            return Err("transport.delayed_ack_packets = 0: must be >= 1".into());
        }
        if t.min_rto_ps == 0 {
            return Err("transport.min_rto_us = 0: must be > 0".into());
        }
        let prr = two_way("recovery", &t.recovery, "rfc6675", "prr")?;
        let preopened_cwnd_fit = two_way("preopened_init_cwnd", &t.preopened_init_cwnd, "transport", "fit")?;
        let lost_rtx_rto_only = two_way("lost_retransmission", &t.lost_retransmission, "detect", "rto")?;
        let recovery_tail_resend = two_way("recovery_tail", &t.recovery_tail, "rto", "resend")?;
        let cwr_no_recovery = two_way("cwr_dupacks", &t.cwr_dupacks, "recover", "ns3")?;
        let cwr_window_prr = two_way("cwr_window", &t.cwr_window, "cc", "recovery")?;
        let ce_echo_ns3 = two_way("ce_echo", &t.ce_echo, "packet", "ns3")?;
        let partial_ack_rtx = two_way("partial_ack", &t.partial_ack, "window", "ns3")?;
        let recovery_timer_ns3 = two_way("recovery_timer", &t.recovery_timer, "restart", "ns3")?;
        let prr_ssrb_rtx_acked = two_way("prr_reduction_bound", &t.prr_reduction_bound, "ssrb", "ns3")?;
        let prr_wrap32 = two_way("prr_arithmetic", &t.prr_arithmetic, "exact", "ns3")?;
        let rate_window_after_prr = two_way("rate_window_in_recovery", &t.rate_window_in_recovery, "prr", "rate")?;
        let loss_cwr_ns3 = two_way("loss_cwr", &t.loss_cwr, "flight", "ns3")?;
        let silly_window_ns3 = two_way("silly_window", &t.silly_window, "one_segment", "ns3")?;
        let loss_marking_ns3 = two_way("loss_marking", &t.loss_marking, "highest_sack", "ns3")?;
        if loss_marking_ns3 && !t.sack {
            return Err("transport.loss_marking = 'ns3': needs sack = true (it decides which holes of the SACK scoreboard are presumed lost)".into());
        }
        if partial_ack_rtx && !t.sack {
            return Err("transport.partial_ack = 'ns3': needs sack = true (without SACK every partial ACK already resends the next hole, RFC 6582)".into());
        }
        let pace_payload_only = two_way("pacing_size", &t.pacing_size, "packet", "payload")?;
        let pace_rescale = two_way("pacing_rate_change", &t.pacing_rate_change, "keep", "rescale")?;
        let pace_gap_ns3 = two_way("pacing_gap", &t.pacing_gap, "exact", "ns3")?;
        let pace_resends_ns3 = two_way("pacing_resends", &t.pacing_resends, "exempt", "ns3")?;
        let next_tx_ns3 = two_way("next_tx", &t.next_tx, "highest", "ns3")?;
        let roce = match t.kind.as_str() {
            "tcp" => false,
            "roce" => true,
            other => return Err(format!("transport.kind = '{other}': not allowed; allowed: {}", KINDS.join(", "))),
        };
        if roce {
            if t.handshake {
                return Err("transport.handshake = true: not allowed with kind = 'roce' (a RoCE queue pair sends at once); allowed: false".into());
            }
            if !ROCE_CCS.contains(&t.cc.as_str()) {
                return Err(format!("transport.cc = '{}': not allowed with kind = 'roce'; allowed: {}", t.cc, ROCE_CCS.join(", ")));
            }
            if t.nack_interval_ps == 0 {
                return Err("transport.nack_interval_us = 0: must be > 0".into());
            }
        }
        if cwr_no_recovery && !t.sack {
            return Err("transport.cwr_dupacks = 'ns3': needs sack = true (ns-3's CWR resends the holes its SACK scoreboard presumes lost)".into());
        }
        if prr && !t.sack {
            return Err("transport.recovery = 'prr': needs sack = true (PRR runs on the SACK scoreboard)".into());
        }
        Ok(TransportCfg {
            mss_bytes: t.mss_bytes as u64,
            header_bytes: t.header_bytes as u64,
            init_cwnd_packets: t.init_cwnd_packets as u64,
            min_rto_ps: t.min_rto_ps,
            initial_rto_ps: t.initial_rto_ps.max(t.min_rto_ps),
            max_rto_ps: t.max_rto_ps.max(t.min_rto_ps),
            handshake: t.handshake,
            delayed_ack_packets: t.delayed_ack_packets,
            delayed_ack_timeout_ps: t.delayed_ack_timeout_ps,
            ack_priority: t.ack_priority,
            unscheduled_bytes: t.unscheduled_bytes,
            unscheduled_acks: t.unscheduled_acks,
            sack: t.sack,
            clock_granularity_ps: 10_000,
            timestamp_tick_ps: t.timestamp_tick_ps,
            preopened_cwnd_fit,
            lost_rtx_rto_only,
            recovery_tail_resend,
            cwr_no_recovery,
            cwr_window_prr,
            ce_echo_ns3,
            partial_ack_rtx,
            loss_marking_ns3,
            recovery_timer_ns3,
            prr_ssrb_rtx_acked,
            prr_wrap32,
            rate_window_after_prr,
            loss_cwr_ns3,
            silly_window_ns3,
            limited_transmit: t.limited_transmit,
            loss_exit_ns3: two_way("loss_exit_acked", &t.loss_exit_acked, "all", "ns3")?,
            recovery_exit_ns3: two_way("recovery_exit_acked", &t.recovery_exit_acked, "none", "ns3")?,
            rtt_samples_ns3: two_way("rtt_samples", &t.rtt_samples, "every_ack", "ns3")?,
            pace_payload_only,
            pace_rescale,
            pace_gap_ns3,
            pace_resends_ns3,
            next_tx_ns3,
            syn_ack_window_bytes: if t.syn_ack_window_bytes == 0 { u64::MAX } else { t.syn_ack_window_bytes },
            prr,
            roce,
            nack_interval_ps: t.nack_interval_ps,
        })
    }
}

/// A one-shot timer kept in the flow: `deadline == 0` means disarmed. The simulator keeps
/// one live event per timer (`event_at`) and re-arms it lazily when the deadline moved
/// later; when a deadline moves earlier it schedules a new event and the old one goes stale.
#[derive(Clone, Copy, Debug, Default)]
pub struct Timer {
    pub deadline: Time,
    /// Time of the live event in the simulator's queue (0: none).
    pub event_at: Time,
}

impl Timer {
    #[inline]
    pub fn arm(&mut self, at: Time) {
        self.deadline = at.max(1);
    }
    #[inline]
    pub fn disarm(&mut self) {
        self.deadline = 0;
    }
    #[inline]
    pub fn armed(&self) -> bool {
        self.deadline != 0
    }
    /// An event must be scheduled at `deadline` (none is pending, or the pending one is too late).
    #[inline]
    pub fn needs_event(&self) -> bool {
        self.deadline != 0 && (self.event_at == 0 || self.deadline < self.event_at)
    }
}

//! A reliable TCP-like transport: byte sequence numbers, optional 3-way handshake, an ACK
//! per data packet (delayed ACK optional), selective acknowledgments with RFC 6675 loss
//! recovery (or NewReno fast retransmit/recovery, RFC 6582, with `sack = false`) on three
//! duplicate ACKs, RTO per RFC 6298 with a configurable minimum, optional pacing for
//! rate-based algorithms. Window and rate decisions belong to the flow's
//! congestion-control algorithm (`crate::cc`).

#[path = "roce.rs"]
pub mod roce;

use super::sack::Scoreboard;
use super::{Timer, TransportCfg};
use crate::cc::{AckInfo, FlowCc, PathInfo, Window};
use crate::engine::{tx_time_ps, Time, PS_PER_NS};
use crate::metrics::{self, TcpTraceRecord};
use crate::packet::{flags, IntStack, Packet};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendState {
    /// Not started yet.
    Idle,
    /// SYN sent, waiting for SYN-ACK.
    SynSent,
    Established,
    /// Every byte acknowledged.
    Done,
}

const NO_RECOVER: u64 = u64::MAX;
/// `TcpFlow::ce_seq` before any CE was echoed.
const NO_CE: u64 = u64::MAX;

/// `[output] tcp_trace_*`: a traced flow's sender events, and what its state column needs
/// beyond the sender's own variables. Only traced flows have one.
#[derive(Default)]
pub struct FlowTrace {
    pub rows: Vec<TcpTraceRecord>,
}

/// One TCP connection: sender state at `src`, receiver state at `dst`.
pub struct TcpFlow {
    pub id: u32,
    pub src: u32,
    pub dst: u32,
    pub size_bytes: u64,
    pub start_ps: Time,
    pub prio: u8,
    pub handshake: bool,
    pub path: PathInfo,

    // --- sender ---
    pub state: SendState,
    pub snd_una: u64,
    pub snd_nxt: u64,
    pub snd_max: u64,
    recover: u64,
    dupacks: u32,
    pub in_recovery: bool,
    pub win: Window,
    /// The receive window the sender knows: the SYN-ACK's (`syn_ack_window_bytes`) until the
    /// receiver's first ACK, then unlimited (u64::MAX).
    rwnd_bytes: u64,
    pub cc: Option<FlowCc>,
    srtt_ps: f64,
    rttvar_ps: f64,
    has_rtt: bool,
    pub rto_ps: Time,
    pub rto: Timer,
    pub pace: Timer,
    next_send_ps: Time,
    /// Bytes the last paced packet booked (its gap ends at `next_send_ps`).
    pace_booked: u64,
    /// Data bytes sent so far, retransmissions included (unscheduled tagging).
    bytes_sent: u64,
    ecn: bool,
    partial_window: bool,
    /// `cwr_window = "recovery"` acts on this flow (its congestion control is DCTCP).
    cwr_prr: bool,
    /// `loss_cwr = "ns3"` acts on this flow (its congestion control is ECN-capable).
    loss_cwr: bool,
    /// SACK scoreboard and the retransmission frontier of the current recovery.
    sb: Scoreboard,
    rexmit_next: u64,
    /// Retransmissions of this recovery: (sequence, snd_max when sent). Data sent after a
    /// retransmission being SACKed by 3 segments while it is still missing means it was lost.
    rtx_marks: Vec<(u64, u64)>,
    /// ns-3.39's `m_nextTxSequence` (what the congestion control reads with `next_tx = "ns3"`):
    /// the end of the last segment the send loop sent (`SendPendingData`, new or resent), the
    /// start of the last one resent out of it (`DoRetransmit`: the fast retransmit, a partial
    /// ACK's, a timeout's), raised to every new cumulative ACK (`NewAck`).
    next_tx: u64,
    /// Time of the last window cut for a lost retransmission.
    last_cut_ps: Time,
    /// The retransmission timer fired and no ACK has advanced snd_una since.
    rto_backed_off: bool,
    /// `rtt_samples = "ns3"`: the end of the highest segment ever resent, and snd_max when the
    /// last timeout fired (ns-3.39 clears its RTT history then; resent data never enters it).
    rtx_end: u64,
    rtt_hist_from: u64,
    /// After a timeout, until an ACK reaches `recover` (what had been sent when it fired), as
    /// Linux's and ns-3's CA_LOSS. Its ACKs take the general path, which ends it.
    in_loss: bool,
    /// `recovery_timer = "ns3"`: the next partial ACK in recovery restarts the timer (ns-3.39's
    /// `m_isFirstPartialAck`: set by a full ACK that ends a recovery and by a timeout).
    first_partial: bool,
    /// ns-3.39's CA_CWR (`recovery_tail = "resend"` or `cwr_dupacks = "ns3"`, ECN-capable flows):
    /// entered on an ECN-Echo in an ACK of new data, left when the cumulative ACK passes this
    /// (snd_max then); while in it NextSeg's rule 3 is off, so the window's tail is not resent,
    /// and with `cwr_dupacks = "ns3"` duplicate ACKs start no recovery. NO_RECOVER: not in CWR.
    cwr_recover: u64,
    /// PRR (RFC 6937): bytes delivered and sent since recovery began, and the flight then.
    prr_delivered: u64,
    prr_out: u64,
    recover_fs: u64,
    /// `loss_marking = "ns3"`: the end of the segment at snd.una when the recovery began, which
    /// ns-3.39's `EnterRecovery` marks lost (`MarkHeadAsLost`) with fewer than three SACKed
    /// segments above it.
    head_lost_end: u64,

    // --- receiver ---
    pub rcv_nxt: u64,
    ooo: Vec<(u64, u64)>,
    rcv_open: bool,
    delack_count: u32,
    last_ce: bool,
    /// `ce_echo = "ns3"`: the sequence of the highest segment whose CE was echoed (NO_CE: none).
    ce_seq: u64,
    last_echo_ts: Time,
    sack_block: Option<(u64, u64)>,
    pub delack: Timer,
    /// RoCE receiver (`roce.rs`): no NACK for the same expected sequence before this time.
    roce_nack_until: Time,
    /// RoCE receiver: the expected sequence of the last NACK (u64::MAX: none yet).
    roce_last_nack: u64,

    // --- results ---
    pub end_ps: Option<Time>,
    pub retransmits: u32,
    pub timeouts: u32,
    /// `[output] tcp_trace_*`: Some for a traced flow (set before it starts), None otherwise:
    /// the per-event cost of the trace when off is this one test.
    pub trace: Option<Box<FlowTrace>>,
    /// Tests: take the general `on_ack`/`on_receive` paths only (the fast paths must match them).
    #[cfg(test)]
    pub(crate) general_only: bool,
}

impl TcpFlow {
    #[allow(clippy::too_many_arguments)]
    pub fn new(id: u32, src: u32, dst: u32, size_bytes: u64, start_ps: Time, prio: u8, handshake: bool, path: PathInfo, cfg: &TransportCfg) -> Self {
        /// `init_cwnd_packets`, or for a pre-opened connection with `preopened_cwnd_fit`
        /// size / MSS + 1 segments (integer division, as ns3dc's `flowSize / PACKET_SIZE + 1`).
        fn init_cwnd_bytes(size: u64, handshake: bool, cfg: &TransportCfg) -> u64 {
            if cfg.preopened_cwnd_fit && !handshake {
                (size / cfg.mss_bytes + 1) * cfg.mss_bytes
            } else {
                cfg.init_cwnd_packets * cfg.mss_bytes
            }
        }
        TcpFlow {
            id,
            src,
            dst,
            size_bytes,
            start_ps,
            prio,
            handshake,
            path,
            state: SendState::Idle,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            recover: NO_RECOVER,
            dupacks: 0,
            in_recovery: false,
            win: Window { cwnd_bytes: init_cwnd_bytes(size_bytes, handshake, cfg), ssthresh_bytes: u64::MAX, mss_bytes: cfg.mss_bytes, pacing_rate_bps: 0 },
            rwnd_bytes: cfg.syn_ack_window_bytes,
            cc: None,
            srtt_ps: 0.0,
            rttvar_ps: 0.0,
            has_rtt: false,
            rto_ps: cfg.initial_rto_ps,
            rto: Timer::default(),
            pace: Timer::default(),
            pace_booked: 0,
            next_send_ps: 0,
            bytes_sent: 0,
            ecn: false,
            cwr_prr: false,
            loss_cwr: false,
            partial_window: false,
            sb: Scoreboard::default(),
            rexmit_next: 0,
            rtx_marks: Vec::new(),
            next_tx: 0,
            last_cut_ps: 0,
            rto_backed_off: false,
            rtx_end: 0,
            rtt_hist_from: 0,
            in_loss: false,
            first_partial: true,
            cwr_recover: NO_RECOVER,
            prr_delivered: 0,
            prr_out: 0,
            recover_fs: 0,
            head_lost_end: 0,
            rcv_nxt: 0,
            ooo: Vec::new(),
            rcv_open: !handshake,
            delack_count: 0,
            last_ce: false,
            ce_seq: NO_CE,
            last_echo_ts: 0,
            sack_block: None,
            delack: Timer::default(),
            roce_nack_until: 0,
            roce_last_nack: u64::MAX,
            end_ps: None,
            retransmits: 0,
            timeouts: 0,
            trace: None,
            #[cfg(test)]
            general_only: false,
        }
    }

    /// Put [lo, hi) on the SACK scoreboard, as a SACK block besides the one an ACK carries
    /// (`replay`: another simulator's ACKs carry up to four).
    pub fn sack_insert(&mut self, lo: u64, hi: u64) {
        if hi > lo && hi > self.snd_una {
            self.sb.insert(lo.max(self.snd_una), hi);
        }
    }

    pub fn finished(&self) -> bool {
        self.end_ps.is_some()
    }

    /// The per-packet fast paths may run (always, except in the test that compares them
    /// with the general paths).
    #[inline(always)]
    fn fast_paths(&self) -> bool {
        #[cfg(test)]
        return !self.general_only;
        #[cfg(not(test))]
        true
    }

    fn control(&self, cfg: &TransportCfg, f: u8, seq: u64, to: u32, now: Time) -> Packet {
        let unsched = if cfg.unscheduled_acks { flags::UNSCHED } else { 0 };
        Packet { seq, ts_ps: now, enq_ps: 0, from_port: 0, flow: self.id, size_bytes: cfg.header_bytes as u32, payload_bytes: 0, dst: to, prio: cfg.ack_priority, flags: f | unsched, hops: 0, sack_lo: 0, sack_hi: 0 }
    }

    /// Start the flow: send a SYN, or data at once on a pre-established connection.
    pub fn start(&mut self, now: Time, cc: FlowCc, cfg: &TransportCfg, out: &mut Vec<Packet>) {
        if cfg.roce {
            self.roce_start(now, cc, cfg, out);
            return;
        }
        self.ecn = cc.ecn_capable();
        self.partial_window = cc.partial_window();
        self.cwr_prr = cfg.cwr_window_prr && cc.name() == "dctcp";
        self.loss_cwr = cfg.loss_cwr_ns3 && self.ecn;
        self.cc = Some(cc);
        if self.handshake {
            self.state = SendState::SynSent;
            out.push(self.control(cfg, flags::SYN, 0, self.dst, now));
            self.rto.arm(now + self.rto_ps);
        } else {
            self.establish(now, cfg, out);
        }
    }

    fn establish(&mut self, now: Time, cfg: &TransportCfg, out: &mut Vec<Packet>) {
        self.state = SendState::Established;
        self.rto.disarm();
        if let Some(cc) = self.cc.as_mut() {
            cc.on_start(&mut self.win, now, &self.path);
        }
        if self.size_bytes == 0 {
            self.state = SendState::Done;
            return;
        }
        if self.handshake && self.trace.is_some() {
            self.trace_row(metrics::TRACE_SYN_ACK, now, self.snd_una, false, false, cfg);
        }
        self.try_send(now, cfg, out);
    }

    /// `[output] tcp_trace_*`: record a send of the segment at `seq` (after the sender booked
    /// it), if the flow is traced. `retx`: the segment was sent before.
    #[inline(always)]
    fn trace_send(&mut self, now: Time, seq: u64, retx: bool, cfg: &TransportCfg) {
        if self.trace.is_some() {
            self.trace_row(metrics::TRACE_SEND, now, seq, retx, false, cfg);
        }
    }

    /// Rows of the trace so far (0 untraced): where `on_ack_general` puts its ACK's row, ahead
    /// of the retransmissions the ACK sent while it was handled.
    #[inline]
    fn trace_mark(&self) -> usize {
        self.trace.as_ref().map_or(0, |t| t.rows.len())
    }

    /// Record an event of a traced flow with the sender's variables as they are now; the row
    /// goes at index `at` (None: last).
    #[cold]
    #[inline(never)]
    fn trace_row_at(&mut self, at: Option<usize>, event: u8, now: Time, seq: u64, retx: bool, ece: bool, cfg: &TransportCfg) {
        let in_flight = if self.state == SendState::Established && cfg.sack && (self.in_recovery || self.cwr_resends(cfg)) {
            self.pipe(cfg)
        } else if self.state == SendState::Established && cfg.limited_transmit {
            self.snd_nxt.saturating_sub(self.snd_una).saturating_sub(self.limited_transmit_credit(cfg))
        } else {
            self.snd_nxt.saturating_sub(self.snd_una)
        };
        let (alpha, ecn_cut_end) = self.cc.as_ref().and_then(|c| c.dctcp_state()).unwrap_or((f64::NAN, 0));
        let Some(t) = self.trace.as_mut() else { return };
        let state = if self.state == SendState::SynSent {
            metrics::STATE_SYN_SENT
        } else if self.in_recovery {
            metrics::STATE_RECOVERY
        } else if self.in_loss {
            metrics::STATE_LOSS
        } else if self.cwr_recover != NO_RECOVER || self.snd_una < ecn_cut_end {
            metrics::STATE_CWR
        } else if self.dupacks > 0 || !self.sb.is_empty() {
            metrics::STATE_DISORDER
        } else {
            metrics::STATE_OPEN
        };
        let r = TcpTraceRecord {
            time_ps: now,
            seq,
            cwnd_bytes: self.win.cwnd_bytes,
            ssthresh_bytes: self.win.ssthresh_bytes,
            in_flight_bytes: in_flight,
            snd_una: self.snd_una,
            snd_nxt: self.snd_nxt,
            alpha,
            flow: self.id,
            event,
            state,
            retx,
            ece,
        };
        match at {
            Some(i) if i < t.rows.len() => {
                t.rows.insert(i, r);
                // The rows after it are the retransmissions this ACK sent while `on_ack_general`
                // held the controller (`cc` taken): DCTCP's α and ECN-cut window are the ones
                // now (the controller ran before them and not since).
                if !alpha.is_nan() {
                    for x in &mut t.rows[i + 1..] {
                        x.alpha = alpha;
                        if x.snd_una < ecn_cut_end && matches!(x.state, metrics::STATE_OPEN | metrics::STATE_DISORDER) {
                            x.state = metrics::STATE_CWR;
                        }
                    }
                }
            }
            _ => t.rows.push(r),
        }
    }

    #[inline(always)]
    fn trace_row(&mut self, event: u8, now: Time, seq: u64, retx: bool, ece: bool, cfg: &TransportCfg) {
        self.trace_row_at(None, event, now, seq, retx, ece, cfg);
    }

    fn data(&mut self, seq: u64, len: u64, now: Time, cfg: &TransportCfg) -> Packet {
        let mut f = flags::DATA;
        if self.ecn {
            f |= flags::ECT;
        }
        if self.bytes_sent < cfg.unscheduled_bytes {
            f |= flags::UNSCHED;
        }
        self.bytes_sent += len;
        if seq < self.snd_max && seq + len > self.rtx_end {
            self.rtx_end = seq + len;
        }
        if self.in_recovery || self.cwr_prr && self.cwr_recover != NO_RECOVER {
            self.prr_out += len;
        }
        // `pacing_resends = "ns3"`: a segment sent outside the send loop (which booked its own
        // gap) starts a gap if none is running (ns-3's SendDataPacket and CC_pacingTimer).
        if cfg.pace_resends_ns3 && self.win.pacing_rate_bps != 0 && now >= self.next_send_ps {
            self.book_pace(len, now, cfg);
        }
        Packet { seq, ts_ps: now, enq_ps: 0, from_port: 0, flow: self.id, size_bytes: (len + cfg.header_bytes) as u32, payload_bytes: len as u32, dst: self.dst, prio: self.prio, flags: f, hops: 0, sack_lo: 0, sack_hi: 0 }
    }

    /// Send as much new data as the window (and pacing) allow.
    pub fn try_send(&mut self, now: Time, cfg: &TransportCfg, out: &mut Vec<Packet>) {
        if self.state != SendState::Established {
            return;
        }
        if cfg.sack && (self.in_recovery || self.cwr_resends(cfg)) {
            self.sack_recovery_send(now, cfg, out);
            return;
        }
        self.send_new_data(now, cfg, out);
    }

    /// `cwr_dupacks = "ns3"`: in CWR with data on the scoreboard (and not going back after a
    /// timeout), the send loop resends the holes presumed lost before new data, as ns-3.39's
    /// `SendPendingData` does in any state through `TcpTxBuffer::NextSeg` rule 1.
    #[inline]
    fn cwr_resends(&self, cfg: &TransportCfg) -> bool {
        cfg.cwr_no_recovery && self.cwr_recover != NO_RECOVER && !self.sb.is_empty() && self.snd_nxt == self.snd_max
    }

    /// The sequence below which the un-SACKed data is presumed lost: the highest SACKed byte in
    /// recovery (RFC 6675 as sharebuf runs it); with `loss_marking = "ns3"`, and out of recovery
    /// with `cwr_dupacks = "ns3"` (in CWR), ns-3.39's IsLost: below the third SACKed segment from
    /// the top.
    #[inline]
    fn lost_limit(&self, cfg: &TransportCfg) -> u64 {
        if cfg.loss_marking_ns3 && self.in_recovery {
            self.sb.lost_below(3, cfg.mss_bytes).max(self.head_lost_end)
        } else if cfg.loss_marking_ns3 || cfg.cwr_no_recovery && !self.in_recovery {
            self.sb.lost_below(3, cfg.mss_bytes)
        } else {
            self.sb.highest()
        }
    }

    /// `try_send`'s loop out of SACK recovery: new data (skipping what the scoreboard holds)
    /// while the window and pacing allow. Inlined into the fast ACK path.
    #[inline(always)]
    fn send_new_data(&mut self, now: Time, cfg: &TransportCfg, out: &mut Vec<Packet>) {
        // The scoreboard does not change while sending (it is usually empty).
        let sb_empty = self.sb.is_empty();
        // The window test counts from here: snd_una, or with Limited Transmit above what the
        // receiver holds (at most what is outstanding, so snd_nxt − floor never wraps).
        let floor = if cfg.limited_transmit { self.snd_una + self.limited_transmit_credit(cfg).min(self.snd_nxt - self.snd_una) } else { self.snd_una };
        while self.snd_nxt < self.size_bytes {
            if !sb_empty {
                if let Some(end) = self.sb.covering(self.snd_nxt) {
                    // The receiver already holds this (go-back-N after a timeout skips it).
                    self.snd_nxt = end.min(self.size_bytes);
                    continue;
                }
            }
            let len = cfg.mss_bytes.min(self.size_bytes - self.snd_nxt);
            if !self.window_allows(self.snd_nxt - floor, len, cfg) {
                break;
            }
            if !self.pace_ok(len, now, cfg) {
                break;
            }
            let seq = self.snd_nxt;
            let p = self.data(seq, len, now, cfg);
            out.push(p);
            self.snd_nxt += len;
            self.next_tx = seq + len;
            if self.trace.is_some() {
                // Below snd_max (not yet moved): resent, going back after a timeout. Out of
                // SACK recovery the row reads no snd_max.
                self.trace_row(metrics::TRACE_SEND, now, seq, seq < self.snd_max, false, cfg);
            }
            self.snd_max = self.snd_max.max(self.snd_nxt);
            if !self.rto.armed() {
                self.rto.arm(now + self.rto_ps);
            }
        }
    }

    /// `limited_transmit`: the bytes the window test leaves out of the data outstanding before
    /// recovery (not going back after a timeout): with SACK, what the receiver holds above the
    /// cumulative ACK (the pipe, RFC 6675 §5 step 3, as ns-3.39's `AvailableWindow` in
    /// CA_DISORDER), without it one segment per duplicate ACK, at most two (RFC 3042).
    #[inline]
    fn limited_transmit_credit(&self, cfg: &TransportCfg) -> u64 {
        if self.in_recovery || self.snd_nxt < self.snd_max {
            0
        } else if cfg.sack {
            self.sb.sacked_bytes()
        } else {
            self.dupacks.min(2) as u64 * cfg.mss_bytes
        }
    }

    /// Whether the window lets `len` more bytes go with `in_flight` outstanding: the TCP rule
    /// in_flight + len ≤ cwnd (RFC 5681), or, for algorithms whose window is a fractional
    /// rate × τ (PowerTCP, HPCC), in_flight < cwnd as the HPCC/PowerTCP reference code does;
    /// and in_flight + len ≤ the receive window (`syn_ack_window_bytes` until the first ACK: as
    /// ns-3's `AvailableWindow` = min(rWnd, cWnd) − in flight, with `SendPendingData` holding a
    /// segment that does not fit back unless it is the last of the data). A window below one
    /// segment lets one go when nothing is in flight, except with `silly_window = "ns3"` (every
    /// flow, the fractional windows too) or `loss_cwr = "ns3"` (ECN-capable flows):
    /// `SendPendingData`'s silly-window check, nothing goes until the window grows or the timer
    /// fires.
    #[inline]
    fn window_allows(&self, in_flight: u64, len: u64, cfg: &TransportCfg) -> bool {
        if in_flight + len > self.rwnd_bytes {
            return false;
        }
        if cfg.silly_window_ns3 || self.loss_cwr && !self.partial_window {
            in_flight + len <= self.win.cwnd_bytes
        } else if self.partial_window {
            in_flight < self.win.cwnd_bytes.max(1)
        } else {
            in_flight + len <= self.win.cwnd_bytes.max(cfg.mss_bytes)
        }
    }

    /// Whether pacing lets a packet of `len` payload bytes go now (and books it if so).
    fn pace_ok(&mut self, len: u64, now: Time, cfg: &TransportCfg) -> bool {
        if self.win.pacing_rate_bps == 0 {
            return true;
        }
        if now < self.next_send_ps {
            self.pace.arm(self.next_send_ps);
            return false;
        }
        self.book_pace(len, now, cfg);
        true
    }

    /// Start a pacing gap for a packet of `len` payload bytes sent at `now`, no gap running.
    #[inline]
    fn book_pace(&mut self, len: u64, now: Time, cfg: &TransportCfg) {
        let booked = if cfg.pace_payload_only { len } else { len + cfg.header_bytes };
        self.next_send_ps = now + pace_gap_ps(booked, self.win.pacing_rate_bps, cfg);
        self.pace_booked = booked;
    }

    /// `pacing_rate_change = "rescale"`, after an ACK moved the pacing rate from `old_bps`: as
    /// ns3dc's `SetCCRate`, a gap still running (it ends after `now`) ends instead at its end +
    /// the last paced packet's time at the new rate − its time at the old rate, if that is
    /// after `now`; otherwise it stands.
    #[inline(never)]
    fn rescale_pacing(&mut self, old_bps: u64, now: Time, cfg: &TransportCfg) {
        let new_bps = self.win.pacing_rate_bps;
        if new_bps == old_bps || old_bps == 0 || new_bps == 0 || self.next_send_ps <= now {
            return;
        }
        let end = self.next_send_ps as i128 + pace_gap_ps(self.pace_booked, new_bps, cfg) as i128 - pace_gap_ps(self.pace_booked, old_bps, cfg) as i128;
        if end > now as i128 {
            self.next_send_ps = end as Time;
            if self.pace.armed() {
                self.pace.arm(self.next_send_ps);
            }
        }
    }

    /// RFC 6675 recovery: while the pipe (bytes in flight, not SACKed, not presumed lost)
    /// leaves room in cwnd, retransmit the next hole below the highest SACKed byte, else
    /// send new data.
    fn sack_recovery_send(&mut self, now: Time, cfg: &TransportCfg, out: &mut Vec<Packet>) {
        loop {
            let frontier = self.rexmit_next.max(self.snd_una);
            let pipe = self.pipe(cfg);
            let limit = self.lost_limit(cfg);
            let (seq, len, rtx) = match self.sb.next_hole(frontier).filter(|h| h.0 < limit) {
                Some((a, b)) => (a, cfg.mss_bytes.min(b.min(limit) - a), true),
                None if self.snd_nxt < self.size_bytes => (self.snd_nxt, cfg.mss_bytes.min(self.size_bytes - self.snd_nxt), false),
                // ns-3.39's NextSeg rule 3 without (1.b): the first un-SACKed byte not yet
                // retransmitted, above the highest SACKed one too (the tail of the window); with
                // `loss_marking = "ns3"` a hole not presumed lost comes first.
                None if cfg.recovery_tail_resend && self.cwr_recover == NO_RECOVER => {
                    let unmarked_hole = if cfg.loss_marking_ns3 { self.sb.next_hole(frontier) } else { None };
                    match unmarked_hole {
                        Some((a, b)) => (a, cfg.mss_bytes.min(b - a), true),
                        None if frontier.max(self.sb.highest()) < self.snd_max => {
                            let a = frontier.max(self.sb.highest());
                            (a, cfg.mss_bytes.min(self.snd_max - a), true)
                        }
                        None => break,
                    }
                }
                None => break,
            };
            if !self.window_allows(pipe, len, cfg) {
                break;
            }
            if !self.pace_ok(len, now, cfg) {
                break;
            }
            let p = self.data(seq, len, now, cfg);
            out.push(p);
            self.next_tx = seq + len;
            let retx = rtx || seq < self.snd_max;
            if rtx {
                self.rexmit_next = seq + len;
                self.retransmits += 1;
                self.rtx_marks.push((seq, self.snd_max));
            } else {
                self.snd_nxt += len;
                self.snd_max = self.snd_max.max(self.snd_nxt);
            }
            if !self.rto.armed() {
                self.rto.arm(now + self.rto_ps);
            }
            self.trace_send(now, seq, retx, cfg);
        }
    }

    /// RFC 6675 pipe: bytes outstanding, less those SACKed and the holes below the highest
    /// SACKed byte (in ns-3's CWR: below `lost_limit`) not yet retransmitted (presumed lost);
    /// with `recovery_tail = "resend"`, plus
    /// the data retransmitted above the highest SACKed byte (not presumed lost, so its original
    /// and its retransmission both count, as RFC 6675's SetPipe and ns-3.39's BytesInFlight).
    /// With `loss_cwr = "ns3"`, while the sender goes back after a timeout (snd_nxt < snd_max),
    /// the data not resent since is presumed lost (ns-3.39's `SetSentListLost`): the pipe is what
    /// was resent, snd_nxt − snd_una, as the go-back-N send loop counts its flight.
    fn pipe(&self, cfg: &TransportCfg) -> u64 {
        if self.loss_cwr && self.snd_nxt < self.snd_max {
            return self.snd_nxt - self.snd_una;
        }
        let frontier = self.rexmit_next.max(self.snd_una);
        let limit = self.lost_limit(cfg);
        let tail_rtx = if cfg.loss_marking_ns3 {
            // resent data not presumed lost: its original is in flight too (ns-3.39's
            // BytesInFlight counts a retransmission whether or not the original was marked lost)
            self.sb.hole_bytes_between(limit.max(self.snd_una), frontier)
        } else if cfg.recovery_tail_resend {
            frontier.saturating_sub(self.sb.highest().max(self.snd_una))
        } else {
            0
        };
        (self.snd_max - self.snd_una).saturating_sub(self.sb.sacked_bytes() + self.sb.hole_bytes_between(frontier, limit)) + tail_rtx
    }

    /// ns-3.39's CA_CWR on an ACK that advanced snd_una to `ack` (`recovery_tail = "resend"` or
    /// `cwr_dupacks = "ns3"` only): CWR ends once the ACK passes the point set when it began;
    /// then an ECN-Echo enters it again (TcpSocketBase::ReceivedAck: from Open, Disorder or
    /// Recovery alike). With `cwr_dupacks = "ns3"`, entering CWR ends a recovery under way
    /// (`EnterCwr` sets CA_CWR over CA_RECOVERY); its holes are then resent from CWR.
    /// Returns whether CWR ended and whether it began on this ACK.
    #[inline(always)]
    fn track_cwr(&mut self, ack: u64, ece: bool, cfg: &TransportCfg) -> (bool, bool) {
        let (mut exited, mut entered) = (false, false);
        if (cfg.recovery_tail_resend || cfg.cwr_no_recovery || self.cwr_prr) && self.ecn {
            if self.cwr_recover != NO_RECOVER && ack > self.cwr_recover {
                self.cwr_recover = NO_RECOVER;
                exited = true;
            }
            if ece && self.cwr_recover == NO_RECOVER {
                self.cwr_recover = self.snd_max;
                entered = true;
                if cfg.cwr_no_recovery {
                    self.in_recovery = false;
                }
            }
        }
        (exited, entered)
    }

    /// DeliveredData (RFC 6937 §3) of the ACK being handled: Δsnd.una + ΔSACKed since
    /// (`una_before`, `sacked_before`), taken before it.
    #[inline]
    fn delivered_since(&self, una_before: u64, sacked_before: u64) -> u64 {
        (self.snd_una - una_before + self.sb.sacked_bytes()).saturating_sub(sacked_before)
    }

    /// PRR (RFC 6937 §3, slow-start reduction bound) on an ACK in recovery that delivered
    /// `delivered` bytes: cwnd = pipe + sndcnt. As Linux and ns-3, the first ACK of the
    /// recovery may always send one segment (the fast retransmit). With
    /// `prr_reduction_bound = "ns3"` the slow-start bound applies only when `rtx_acked` (the
    /// ACK cumulatively acknowledged a retransmitted segment not SACKed before), else the
    /// bound is DeliveredData: ns-3.39's `TcpPrrRecovery::DoRecovery`.
    fn prr_update(&mut self, delivered: u64, rtx_acked: bool, cfg: &TransportCfg) {
        self.prr_delivered += delivered;
        let pipe = self.pipe(cfg);
        let ssthresh = self.win.ssthresh_bytes;
        let sndcnt = if pipe > ssthresh {
            prr_proportional(self.prr_delivered, ssthresh, self.recover_fs, self.prr_out, cfg.prr_wrap32)
        } else {
            // Slow-start reduction bound.
            let limit = if cfg.prr_ssrb_rtx_acked && !rtx_acked {
                delivered
            } else if cfg.prr_wrap32 && self.prr_out > self.prr_delivered {
                // ns-3.39: the uint32_t m_prrDelivered − m_prrOut wraps near 2^32, wins the max, and
                // the sum with one segment, read as an int, is MSS − (prr_out − prr_delivered)
                cfg.mss_bytes.saturating_sub(self.prr_out - self.prr_delivered)
            } else {
                (self.prr_delivered.saturating_sub(self.prr_out)).max(delivered) + cfg.mss_bytes
            };
            if cfg.prr_wrap32 && ns3_headroom(ssthresh, pipe) < 0 {
                // ns-3.39: static_cast<int>(m_ssThresh − m_bytesInFlight) of two uint32_t is
                // negative once the difference passes 2^31 (a TcpAdvanced sender's ssthresh is
                // 2^32 − 1): it wins the min, and only the fast retransmit goes
                0
            } else {
                (ssthresh - pipe).min(limit)
            }
        };
        let sndcnt = if self.prr_out == 0 { sndcnt.max(cfg.mss_bytes) } else { sndcnt };
        self.win.cwnd_bytes = pipe + sndcnt;
    }

    fn retransmit_head(&mut self, now: Time, cfg: &TransportCfg, out: &mut Vec<Packet>) {
        let len = cfg.mss_bytes.min(self.size_bytes - self.snd_una);
        let p = self.data(self.snd_una, len, now, cfg);
        out.push(p);
        self.next_tx = self.snd_una;
        self.retransmits += 1;
        self.trace_send(now, self.snd_una, true, cfg);
    }

    /// Whether an ACK to `ack` (snd_una not yet moved) gives an RTT sample: every one by
    /// default; with `rtt_samples = "ns3"`, as ns-3.39's `EstimateRtt`, only if it covers the
    /// oldest segment of `m_history` (the segments sent as new data since the last timeout,
    /// whose history it cleared) and that segment was never resent. Duplicate ACKs give none;
    /// neither do the ACKs that fill a recovery's holes (the segment at snd_una is then a resent
    /// one: holes are resent in order from snd_una, so a resent segment at or above it means the
    /// one at it was resent too).
    #[inline(always)]
    fn gives_rtt_sample(&self, ack: u64, cfg: &TransportCfg) -> bool {
        if !cfg.rtt_samples_ns3 {
            return true;
        }
        let oldest = self.snd_una.max(self.rtt_hist_from);
        ack > self.snd_una && oldest >= self.rtx_end && oldest < self.size_bytes && ack >= oldest + cfg.mss_bytes.min(self.size_bytes - oldest)
    }

    #[inline(always)]
    fn rtt_sample(&mut self, r: Time, cfg: &TransportCfg) {
        let r = r as f64;
        if !self.has_rtt {
            self.srtt_ps = r;
            self.rttvar_ps = r / 2.0;
            self.has_rtt = true;
        } else {
            self.rttvar_ps = 0.75 * self.rttvar_ps + 0.25 * (self.srtt_ps - r).abs();
            self.srtt_ps = 0.875 * self.srtt_ps + 0.125 * r;
        }
        self.rto_ps = self.rto_estimate(cfg);
    }

    /// The RTO from the estimator, without backoff (RFC 6298 §2.2-2.4): SRTT + max(G, 4·RTTVAR)
    /// within [min, max].
    #[inline(always)]
    fn rto_estimate(&self, cfg: &TransportCfg) -> Time {
        // max(G, 4·RTTVAR) (RFC 6298 §2) as a plain comparison: both are finite and
        // non-negative, where `f64::max` would add a NaN test per ACK.
        let (k_var, g) = (4.0 * self.rttvar_ps, cfg.clock_granularity_ps as f64);
        let rto = self.srtt_ps + if k_var > g { k_var } else { g };
        // clamp(min, max) without `Ord::clamp`'s min ≤ max assertion (an out-of-line call per
        // ACK): `TransportCfg::from_spec` makes max_rto_ps ≥ min_rto_ps.
        debug_assert!(cfg.min_rto_ps <= cfg.max_rto_ps);
        whole_ps(rto).max(cfg.min_rto_ps).min(cfg.max_rto_ps)
    }

    /// `rtt_samples = "ns3"`: an ACK of new data that restarts the timer sets the RTO from the
    /// estimator, dropping a timeout's backoff without a new sample (ns-3.39's `NewAck`).
    #[inline(always)]
    fn ns3_rto_on_new_ack(&mut self, cfg: &TransportCfg) {
        if cfg.rtt_samples_ns3 {
            self.rto_ps = if self.has_rtt { self.rto_estimate(cfg) } else { cfg.initial_rto_ps };
        }
    }

    /// Sender side: a SYN-ACK or ACK arrived.
    #[inline]
    pub fn on_ack(&mut self, pkt: &Packet, int: Option<&IntStack>, now: Time, cfg: &TransportCfg, out: &mut Vec<Packet>) {
        if cfg.roce {
            self.roce_on_ack(pkt, int, now, cfg, out);
            return;
        }
        // Any ACK after the SYN-ACK carries the receiver's scaled window (ns-3's
        // UpdateWindowSize: larger than the SYN-ACK's, so it is taken even from a duplicate ACK).
        if pkt.flags & flags::SYN == 0 {
            self.rwnd_bytes = u64::MAX;
        }
        // The common case first: an established sender out of recovery and of the loss state
        // after a timeout, nothing on the SACK scoreboard, a plain ACK (no SYN, no SACK block) of new data. These are exactly
        // `on_ack_general`'s steps for that case, without the ones it skips there (scoreboard
        // insert/trim, recovery and PRR bookkeeping, the controller's take and restore).
        if self.state == SendState::Established && !self.in_recovery && !self.in_loss && !self.cwr_prr && pkt.seq > self.snd_una && pkt.flags & flags::SYN == 0 && pkt.sack_hi <= pkt.sack_lo && self.sb.is_empty() && self.fast_paths() {
            let ack = pkt.seq;
            let rtt = measured_rtt(pkt.ts_ps, now, cfg);
            if let (Some(r), true) = (rtt, self.gives_rtt_sample(ack, cfg)) {
                self.rtt_sample(r, cfg);
            }
            let srtt = if self.has_rtt { Some(whole_ps(self.srtt_ps)) } else { None };
            let acked = ack - self.snd_una;
            self.snd_una = ack;
            self.rto_backed_off = false;
            self.track_cwr(ack, pkt.has(flags::ECE), cfg);
            if self.snd_nxt < ack {
                self.snd_nxt = ack;
            }
            self.next_tx = self.next_tx.max(ack);
            self.dupacks = 0;
            let info = AckInfo { now, acked_bytes: acked, ece: pkt.has(flags::ECE), rtt_ps: rtt, srtt_ps: srtt, echo_ts_ps: pkt.ts_ps, int, in_recovery: false, snd_una: ack, snd_nxt: self.snd_nxt, next_tx: self.cc_next_tx(cfg), path: &self.path };
            let rate0 = self.win.pacing_rate_bps;
            self.cc.as_mut().expect("established flow has a congestion controller").on_ack(&mut self.win, &info);
            if cfg.pace_rescale {
                self.rescale_pacing(rate0, now, cfg);
            }
            if ack >= self.size_bytes {
                self.state = SendState::Done;
                self.rto.disarm();
                self.pace.disarm();
                if self.trace.is_some() {
                    self.trace_row(metrics::TRACE_ACK, now, ack, false, pkt.has(flags::ECE), cfg);
                }
                return;
            }
            self.ns3_rto_on_new_ack(cfg);
            self.rto.arm(now + self.rto_ps);
            if self.trace.is_some() {
                self.trace_row(metrics::TRACE_ACK, now, ack, false, pkt.has(flags::ECE), cfg);
            }
            // try_send's own tests pass here: established, and out of recovery.
            self.send_new_data(now, cfg, out);
            return;
        }
        self.on_ack_general(pkt, int, now, cfg, out);
    }

    /// `on_ack` for every case: handshake, duplicate ACKs, SACK, recovery.
    #[inline(never)]
    fn on_ack_general(&mut self, pkt: &Packet, int: Option<&IntStack>, now: Time, cfg: &TransportCfg, out: &mut Vec<Packet>) {
        match self.state {
            SendState::SynSent => {
                if pkt.has(flags::SYN) {
                    // The handshake's RTT. With `rtt_samples = "ns3"` only when the SYN was not
                    // resent: ns-3.39 puts the first SYN in its RTT history (a zero-length entry,
                    // which the SYN-ACK covers) and marks a resent one, which gives no sample.
                    if let Some(r) = measured_rtt(pkt.ts_ps, now, cfg) {
                        if !cfg.rtt_samples_ns3 || self.timeouts == 0 {
                            self.rtt_sample(r, cfg);
                        }
                    }
                    // The handshake's final ACK, then data (as ns-3's TcpSocketBase does).
                    out.push(self.control(cfg, flags::ACK, 0, self.dst, now));
                    self.establish(now, cfg, out);
                }
                return;
            }
            SendState::Established => {}
            _ => return,
        }
        if pkt.has(flags::SYN) {
            return; // duplicate SYN-ACK
        }
        let ack = pkt.seq;
        // The ACK's row goes before the retransmissions it sends while handled (traced flows).
        let mark = self.trace_mark();
        // Every ACK echoes the send time of the segment it answers (a time of 0 included).
        let rtt = measured_rtt(pkt.ts_ps, now, cfg);
        if let (Some(r), true) = (rtt, self.gives_rtt_sample(ack, cfg)) {
            self.rtt_sample(r, cfg);
        }
        let srtt = if self.has_rtt { Some(whole_ps(self.srtt_ps)) } else { None };
        let ece = pkt.has(flags::ECE);
        let (una_before, sacked_before) = (self.snd_una, self.sb.sacked_bytes());
        if cfg.sack && pkt.sack_hi > pkt.sack_lo {
            self.sb.insert(ack + pkt.sack_lo as u64, ack + pkt.sack_hi as u64);
        }
        let mut cc = self.cc.take().expect("established flow has a congestion controller");
        let rate0 = self.win.pacing_rate_bps;
        let windows0 = if cfg.rate_window_after_prr { cc.window_set().0 } else { 0 };
        let mut partial_rtx = false;
        // PRR already ran for this ACK (the one that starts a recovery).
        let mut prr_done = false;
        // This ACK of new data is a partial ACK in recovery.
        let mut partial = false;
        // ns-3.39's m_isRetransDataAcked (prr_reduction_bound = "ns3"): a partial ACK in
        // recovery whose cumulative acknowledgment covers a segment retransmitted in this
        // recovery and not SACKed before (ReceivedAck, before DiscardUpTo).
        let rtx_acked = cfg.prr_ssrb_rtx_acked && self.in_recovery && ack > self.snd_una && ack < self.recover && {
            let (una, sb, marks) = (self.snd_una, &self.sb, &self.rtx_marks);
            marks.iter().any(|&(seq, _)| seq >= una && seq < ack && sb.covering(seq).is_none())
        };
        if ack > self.snd_una {
            let acked = ack - self.snd_una;
            self.snd_una = ack;
            self.rto_backed_off = false;
            let (cwr_exited, cwr_entered) = self.track_cwr(ack, ece, cfg);
            self.sb.trim_below(ack);
            if self.cwr_prr {
                // ns-3.39: cwnd = ssthresh when CWR ends (ReceivedAck); EnterCwr: ssthresh =
                // GetSsThresh (the loss rule), PRR from the unacknowledged data, DoRecovery once
                // for this ACK here and once more below when it acknowledged a segment.
                if cwr_exited {
                    self.win.cwnd_bytes = self.win.ssthresh_bytes;
                }
                if cwr_entered {
                    let flight = self.snd_max - self.snd_una;
                    self.win.ssthresh_bytes = cc.ssthresh_after_loss(&self.win, flight);
                    if cfg.prr {
                        self.prr_delivered = 0;
                        self.prr_out = 0;
                        self.recover_fs = flight;
                        let delivered = self.delivered_since(una_before, sacked_before);
                        // ns-3.39 sets m_isRetransDataAcked in CA_RECOVERY only, never in CWR.
                        self.prr_update(delivered, false, cfg);
                    } else {
                        // ns-3's TcpClassicRecovery::EnterRecovery: cwnd = ssthresh.
                        self.win.cwnd_bytes = self.win.ssthresh_bytes;
                    }
                }
            }
            if self.snd_nxt < self.snd_una {
                self.snd_nxt = self.snd_una;
            }
            self.next_tx = self.next_tx.max(self.snd_una);
            // A copy: `self` changes (retransmissions) while `info` lives, on this rare path.
            let path = self.path;
            // In ns-3's CWR (cwr_window = "recovery") the congestion control only counts (DCTCP: α).
            let cc_hold = self.in_recovery || self.cwr_prr && self.cwr_recover != NO_RECOVER;
            let mut info = AckInfo { now, acked_bytes: acked, ece, rtt_ps: rtt, srtt_ps: srtt, echo_ts_ps: pkt.ts_ps, int, in_recovery: cc_hold, snd_una: self.snd_una, snd_nxt: self.snd_nxt, next_tx: self.cc_next_tx(cfg), path: &path };
            if self.in_recovery {
                if ack >= self.recover {
                    // Full acknowledgment: leave fast recovery (RFC 6582 §3.2 step 3, option 1;
                    // PRR: cwnd = ssthresh, RFC 6937 §3).
                    self.in_recovery = false;
                    self.first_partial = true;
                    let flight = self.snd_nxt - self.snd_una;
                    self.win.cwnd_bytes = if cfg.prr { self.win.ssthresh_bytes } else { self.win.ssthresh_bytes.min(flight.max(cfg.mss_bytes) + cfg.mss_bytes) };
                    self.dupacks = 0;
                    if cfg.recovery_exit_ns3 {
                        // ns-3.39's ProcessAck leaving CA_RECOVERY: IncreaseWindow with segsAcked =
                        // (ack − snd.una before it) / MSS, from cwnd = ssthresh
                        // (in ns-3's CWR, cwr_window = "recovery", the controller still only counts)
                        info.acked_bytes = acked / cfg.mss_bytes * cfg.mss_bytes;
                        info.in_recovery = self.cwr_prr && self.cwr_recover != NO_RECOVER;
                    } else {
                        info.in_recovery = true;
                    }
                    cc.on_ack(&mut self.win, &info);
                } else if cfg.sack {
                    partial = true;
                    // Partial acknowledgment under SACK: the scoreboard drives retransmissions
                    // (with `partial_ack = "ns3"` one more goes at once, below).
                    partial_rtx = cfg.partial_ack_rtx && self.snd_una >= self.rexmit_next;
                    if partial_rtx && cfg.next_tx_ns3 {
                        // ns-3 resends (DoRetransmit) before the controller reads m_nextTxSequence
                        info.next_tx = self.do_retransmit_pick(cfg).0;
                    }
                    cc.on_ack(&mut self.win, &info);
                } else {
                    partial = true;
                    // Partial acknowledgment: retransmit the next hole, deflate.
                    self.retransmit_head(now, cfg, out);
                    self.win.cwnd_bytes = self.win.cwnd_bytes.saturating_sub(acked).max(cfg.mss_bytes);
                    if acked >= cfg.mss_bytes {
                        self.win.cwnd_bytes += cfg.mss_bytes;
                    }
                    cc.on_ack(&mut self.win, &info);
                }
            } else {
                self.dupacks = 0;
                if self.in_loss && ack >= self.recover {
                    self.in_loss = false;
                    if cfg.loss_exit_ns3 {
                        // ns-3.39's ProcessAck leaving CA_LOSS: segsAcked = (ack − m_recover) / MSS.
                        info.acked_bytes = (ack - self.recover) / cfg.mss_bytes * cfg.mss_bytes;
                    }
                }
                cc.on_ack(&mut self.win, &info);
            }
            if self.snd_una >= self.size_bytes {
                self.state = SendState::Done;
                self.rto.disarm();
                self.pace.disarm();
                self.cc = Some(cc);
                if self.trace.is_some() {
                    self.trace_row_at(Some(mark), metrics::TRACE_ACK, now, ack, false, ece, cfg);
                }
                return;
            }
            if !(cfg.recovery_timer_ns3 && partial) || self.first_partial {
                self.ns3_rto_on_new_ack(cfg);
                self.rto.arm(now + self.rto_ps);
            }
            if partial {
                self.first_partial = false;
            }
        } else if ack == self.snd_una && self.snd_max > self.snd_una && pkt.payload_bytes == 0 {
            self.dupacks += 1;
            // ns-3 enters CWR only on an ACK of new data: with cwr_window = "recovery" an echo
            // on a duplicate ACK cuts nothing.
            let info = AckInfo { now, acked_bytes: 0, ece, rtt_ps: rtt, srtt_ps: srtt, echo_ts_ps: pkt.ts_ps, int, in_recovery: self.in_recovery || self.cwr_prr, snd_una: self.snd_una, snd_nxt: self.snd_nxt, next_tx: self.cc_next_tx(cfg), path: &self.path };
            cc.on_ack(&mut self.win, &info);
            let loss = self.dupacks >= 3 || (cfg.sack && self.sb.sacked_bytes() >= 3 * cfg.mss_bytes);
            // A new recovery only for losses of data sent after the previous one began
            // (RFC 6582 §3.2 for NewReno: ack > recover; with SACK the holes above the
            // recovery point are such losses as soon as the point is acknowledged).
            let new_window = self.recover == NO_RECOVER || self.snd_una > self.recover || (cfg.sack && self.snd_una >= self.recover);
            // ns-3.39 (`cwr_dupacks = "ns3"`): DupAck counts the duplicate in CA_CWR but moves
            // to recovery only from CA_DISORDER, so none starts until CWR ends.
            let in_ns3_cwr = cfg.cwr_no_recovery && self.cwr_recover != NO_RECOVER;
            if !self.in_recovery && loss && new_window && !in_ns3_cwr {
                let flight = self.snd_max - self.snd_una;
                self.win.ssthresh_bytes = cc.ssthresh_after_loss(&self.win, flight);
                self.recover = self.snd_max;
                self.in_recovery = true;
                // ns-3.39 (`recovery_timer = "ns3"`): the fast retransmit leaves a running timer.
                if !cfg.recovery_timer_ns3 || !self.rto.armed() {
                    self.rto.arm(now + self.rto_ps);
                }
                if cfg.sack {
                    // RFC 6675: cwnd = ssthresh; the send loop retransmits the holes.
                    self.win.cwnd_bytes = self.win.ssthresh_bytes;
                    if cfg.lost_rtx_rto_only {
                        // ns-3.39: a segment keeps its m_retrans flag until it is acknowledged or
                        // the timer fires, so what an earlier recovery resent stays resent (the
                        // marks of what was acknowledged since go)
                        self.rexmit_next = self.rexmit_next.max(self.snd_una);
                        let una = self.snd_una;
                        self.rtx_marks.retain(|&(seq, _)| seq >= una);
                    } else {
                        self.rexmit_next = self.snd_una;
                        self.rtx_marks.clear();
                    }
                    // PRR: RecoverFS = snd.nxt − snd.una at the start of recovery.
                    self.prr_delivered = 0;
                    self.prr_out = 0;
                    self.recover_fs = self.snd_max - self.snd_una;
                    let una = self.snd_una;
                    let len = cfg.mss_bytes.min(self.size_bytes - una);
                    if cfg.loss_marking_ns3 {
                        // ns-3.39's EnterRecovery: MarkHeadAsLost when IsLost(head) is false
                        self.head_lost_end = una + len;
                    }
                    if cfg.prr {
                        // RFC 6937 (and ns-3.39's EnterRecovery, Linux): this ACK's PRR share,
                        // at least one segment, is computed before the fast retransmit, which
                        // is part of it
                        let delivered = self.delivered_since(una_before, sacked_before);
                        self.prr_update(delivered, false, cfg);
                        prr_done = true;
                    }
                    // RFC 6675 §5 step (4.3): retransmit the first segment presumed lost at
                    // once, whatever cwnd and pipe (the fast retransmit); if an earlier
                    // recovery resent it, ns-3.39's DoRetransmit picks as on a partial ACK
                    if una < self.rexmit_next {
                        self.do_retransmit(now, cfg, out);
                    } else {
                        self.resend(una, len, now, cfg, out);
                        self.trace_send(now, una, true, cfg);
                    }
                } else {
                    self.retransmit_head(now, cfg, out);
                    self.win.cwnd_bytes = self.win.ssthresh_bytes + 3 * cfg.mss_bytes;
                }
            } else if self.in_recovery && !cfg.sack {
                self.win.cwnd_bytes += cfg.mss_bytes;
            }
        }
        if cfg.sack && self.in_recovery && !cfg.lost_rtx_rto_only {
            let una = self.snd_una;
            self.rtx_marks.retain(|&(seq, _)| seq >= una);
            if let Some(&(_, mark)) = self.rtx_marks.iter().find(|&&(seq, _)| seq == una) {
                if self.sb.highest() >= mark + 3 * cfg.mss_bytes {
                    // Data sent after the head's retransmission arrived and it did not: the
                    // retransmission was lost too (a RACK-style rule); send it again, alone.
                    // A lost retransmission is a new congestion signal (RFC 8985 §9.3): cut
                    // the window again, at most once per RTT.
                    let srtt = self.srtt_ps.max(self.path.tau_ps as f64) as Time;
                    if now >= self.last_cut_ps + srtt {
                        let pipe = (self.snd_max - self.snd_una).saturating_sub(self.sb.sacked_bytes());
                        self.win.ssthresh_bytes = cc.ssthresh_after_loss(&self.win, pipe);
                        self.win.cwnd_bytes = self.win.ssthresh_bytes;
                        self.last_cut_ps = now;
                    }
                    self.rtx_marks.retain(|&(seq, _)| seq != una);
                    let len = cfg.mss_bytes.min(self.size_bytes - una);
                    let p = self.data(una, len, now, cfg);
                    out.push(p);
                    self.next_tx = una;
                    self.retransmits += 1;
                    self.rtx_marks.push((una, self.snd_max));
                    self.trace_send(now, una, true, cfg);
                }
            }
        }
        self.cc = Some(cc);
        if cfg.pace_rescale {
            self.rescale_pacing(rate0, now, cfg);
        }
        // DeliveredData = Δsnd.una + ΔSACKed (RFC 6937 §3). In ns-3's CWR, PRR runs only on an
        // ACK that acknowledged a whole segment (ProcessAck's CA_CWR branch).
        let cwr_prr_now = cfg.prr && self.cwr_prr && !self.in_recovery && self.cwr_recover != NO_RECOVER && self.snd_una >= una_before + cfg.mss_bytes;
        if cfg.prr && self.in_recovery && !prr_done || cwr_prr_now {
            let delivered = self.delivered_since(una_before, sacked_before);
            self.prr_update(delivered, rtx_acked && !cwr_prr_now, cfg);
        }
        if cfg.rate_window_after_prr {
            // ns3dc: ProcessDcAck (the rate update and SetCCRate's window) runs after
            // ProcessAck (recovery, PRR); the algorithm's window stands until the next ACK.
            if let Some((n, w)) = self.cc.as_ref().map(|c| c.window_set()) {
                if n != windows0 {
                    self.win.cwnd_bytes = w;
                }
            }
        }
        if self.trace.is_some() {
            self.trace_row_at(Some(mark), metrics::TRACE_ACK, now, ack, false, ece, cfg);
        }
        if partial_rtx && self.in_recovery {
            self.do_retransmit(now, cfg, out);
        }
        self.try_send(now, cfg, out);
    }

    /// Resend [seq, seq + len) (not traced here): a retransmission, the retransmitted point
    /// moved past it, marked resent.
    fn resend(&mut self, seq: u64, len: u64, now: Time, cfg: &TransportCfg, out: &mut Vec<Packet>) {
        let p = self.data(seq, len, now, cfg);
        out.push(p);
        self.next_tx = seq;
        self.retransmits += 1;
        self.rexmit_next = self.rexmit_next.max(seq + len);
        self.rtx_marks.push((seq, self.snd_max));
    }

    /// ns-3.39's `DoRetransmit`: `partial_ack = "ns3"`, on a partial ACK in SACK recovery whose
    /// new first unacknowledged segment was not retransmitted yet (`ProcessAck` calls it after
    /// PRR, `DoRecovery`, and before `SendPendingData`), and at the start of a recovery whose
    /// head an earlier recovery resent (`lost_retransmission = "rto"`). It sends one segment
    /// whatever the window (`NextSeg` without rule 3): the first segment presumed lost and not
    /// yet resent; else new data; else the head again.
    fn do_retransmit(&mut self, now: Time, cfg: &TransportCfg, out: &mut Vec<Packet>) {
        let (seq, len, new_data) = self.do_retransmit_pick(cfg);
        let retx = if new_data {
            let p = self.data(seq, len, now, cfg);
            out.push(p);
            self.next_tx = seq;
            self.snd_nxt += len;
            let retx = seq < self.snd_max;
            self.snd_max = self.snd_max.max(self.snd_nxt);
            retx
        } else {
            self.resend(seq, len, now, cfg, out);
            true
        };
        if !self.rto.armed() {
            self.rto.arm(now + self.rto_ps);
        }
        self.trace_send(now, seq, retx, cfg);
    }

    /// What `do_retransmit` sends: (sequence, length, whether it is new data rather than a
    /// resend: a hole presumed lost, or the head again).
    fn do_retransmit_pick(&self, cfg: &TransportCfg) -> (u64, u64, bool) {
        let una = self.snd_una;
        let limit = self.lost_limit(cfg);
        if let Some((a, b)) = self.sb.next_hole(self.rexmit_next.max(una)).filter(|h| h.0 < limit) {
            (a, cfg.mss_bytes.min(b.min(limit) - a), false)
        } else if self.snd_nxt < self.size_bytes {
            (self.snd_nxt, cfg.mss_bytes.min(self.size_bytes - self.snd_nxt), true)
        } else {
            (una, cfg.mss_bytes.min(self.size_bytes - una), false)
        }
    }

    /// The sequence the congestion control marks its rounds with (`AckInfo::next_tx`).
    #[inline]
    fn cc_next_tx(&self, cfg: &TransportCfg) -> u64 {
        if cfg.next_tx_ns3 {
            self.next_tx
        } else {
            self.snd_nxt
        }
    }

    /// The retransmission timer fired.
    pub fn on_rto(&mut self, now: Time, cfg: &TransportCfg, out: &mut Vec<Packet>) {
        self.rto.disarm();
        match self.state {
            SendState::SynSent => {
                self.timeouts += 1;
                self.rto_ps = (self.rto_ps * 2).min(cfg.max_rto_ps);
                out.push(self.control(cfg, flags::SYN, 0, self.dst, now));
                self.rto.arm(now + self.rto_ps);
                if self.trace.is_some() {
                    self.trace_row(metrics::TRACE_TIMEOUT, now, 0, false, false, cfg);
                }
            }
            SendState::Established if self.snd_una < self.size_bytes => {
                self.timeouts += 1;
                self.first_partial = true;
                // ns-3.39: the timeout's CA_LOSS replaces CA_CWR.
                self.cwr_recover = NO_RECOVER;
                let flight = self.snd_max - self.snd_una;
                // ssthresh from the window as the timer fired (RFC 5681 eq. 4, or the
                // algorithm's rule, e.g. RFC 9438 §4.8), only for a segment not yet resent by
                // the timer: repeated timeouts of the same segment keep it (RFC 5681 §3.1, Linux).
                if !self.rto_backed_off {
                    if let Some(cc) = self.cc.as_mut() {
                        self.win.ssthresh_bytes = cc.ssthresh_after_timeout(&self.win, flight);
                    }
                }
                self.rto_backed_off = true;
                self.rtt_hist_from = self.snd_max;
                self.in_loss = true;
                self.win.cwnd_bytes = cfg.mss_bytes;
                self.snd_nxt = self.snd_una;
                self.next_tx = self.snd_una;
                self.recover = self.snd_max;
                self.in_recovery = false;
                self.rexmit_next = self.snd_una;
                self.rtx_marks.clear();
                self.dupacks = 0;
                self.next_send_ps = now;
                self.rto_ps = (self.rto_ps * 2).min(cfg.max_rto_ps);
                if let Some(cc) = self.cc.as_mut() {
                    cc.on_timeout(&mut self.win, now, self.snd_max);
                }
                self.retransmits += 1;
                if self.trace.is_some() {
                    self.trace_row(metrics::TRACE_TIMEOUT, now, self.snd_una, false, false, cfg);
                }
                self.try_send(now, cfg, out);
                if !self.rto.armed() {
                    self.rto.arm(now + self.rto_ps);
                }
            }
            _ => {}
        }
    }

    /// The pacing timer fired.
    pub fn on_pace(&mut self, now: Time, cfg: &TransportCfg, out: &mut Vec<Packet>) {
        self.pace.disarm();
        if cfg.roce {
            self.roce_send(now, cfg, out);
            return;
        }
        self.try_send(now, cfg, out);
    }

    /// Receiver side: a SYN, the handshake ACK, or data arrived. Returns true when this
    /// packet completed the flow (all bytes received in order).
    #[inline]
    pub fn on_receive(&mut self, pkt: &Packet, now: Time, cfg: &TransportCfg, out: &mut Vec<Packet>) -> bool {
        if cfg.roce {
            return self.roce_on_receive(pkt, now, cfg, out);
        }
        // The common case first: an ACK per segment, a data segment in order, nothing held out
        // of order. The general path's steps for that case: no hole filled, no SACK block,
        // the ACK goes at once, and no ACK is pending (`delack_count` grows only with delayed
        // ACKs), so none for earlier segments goes first.
        if cfg.delayed_ack_packets <= 1 && pkt.flags & (flags::SYN | flags::DATA) == flags::DATA && pkt.seq == self.rcv_nxt && self.ooo.is_empty() && self.fast_paths() {
            debug_assert_eq!(self.delack_count, 0);
            self.rcv_open = true;
            let e = pkt.seq + pkt.payload_bytes as u64;
            self.rcv_nxt = e;
            let ce = self.echoed_ce(pkt, cfg);
            self.last_echo_ts = pkt.ts_ps;
            self.sack_block = None;
            self.last_ce = ce;
            self.delack.disarm();
            let mut a = self.control(cfg, flags::ACK | if ce { flags::ECE } else { 0 }, e, self.src, now);
            a.ts_ps = pkt.ts_ps;
            out.push(a);
            if self.end_ps.is_none() && e >= self.size_bytes {
                self.end_ps = Some(now);
                return true;
            }
            return false;
        }
        self.on_receive_general(pkt, now, cfg, out)
    }

    /// `on_receive` for every case: handshake, out-of-order data, delayed ACKs.
    #[inline(never)]
    fn on_receive_general(&mut self, pkt: &Packet, now: Time, cfg: &TransportCfg, out: &mut Vec<Packet>) -> bool {
        if pkt.has(flags::SYN) {
            self.rcv_open = true;
            let mut sa = self.control(cfg, flags::SYN | flags::ACK, 0, self.src, now);
            sa.ts_ps = pkt.ts_ps;
            out.push(sa);
            return false;
        }
        if !pkt.has(flags::DATA) {
            return false; // handshake ACK
        }
        self.rcv_open = true;
        let (prior_rcv_nxt, prior_echo) = (self.rcv_nxt, self.last_echo_ts);
        let (s, e) = (pkt.seq, pkt.seq + pkt.payload_bytes as u64);
        let in_order = s == self.rcv_nxt;
        let mut filled_hole = false;
        if in_order {
            self.rcv_nxt = e;
            while let Some(&(a, b)) = self.ooo.first() {
                if a > self.rcv_nxt {
                    break;
                }
                self.rcv_nxt = self.rcv_nxt.max(b);
                self.ooo.remove(0);
                filled_hole = true;
            }
        } else if s > self.rcv_nxt {
            insert_interval(&mut self.ooo, s, e);
        }
        let ce = self.echoed_ce(pkt, cfg);
        self.last_echo_ts = pkt.ts_ps;
        // SACK block: the out-of-order range holding this segment, else the lowest one.
        self.sack_block = self.ooo.iter().find(|&&(a, b)| a <= s && s < b).or(self.ooo.first()).copied();
        let immediate = cfg.delayed_ack_packets <= 1 || !in_order || filled_hole || ce != self.last_ce || !self.ooo.is_empty() || self.rcv_nxt >= self.size_bytes;
        if ce != self.last_ce && self.delack_count > 0 {
            // RFC 8257 §3.2 (Linux dctcp_ece_ack_update): the CE state changed with an ACK
            // pending; ACK the segments received before this one with the old ECE first.
            let mut a = self.control(cfg, flags::ACK | if self.last_ce { flags::ECE } else { 0 }, prior_rcv_nxt, self.src, now);
            a.ts_ps = prior_echo;
            out.push(a);
        }
        self.last_ce = ce;
        if immediate {
            self.delack_count = 0;
            self.delack.disarm();
            out.push(self.ack_packet(ce, pkt.ts_ps, now, cfg));
        } else {
            self.delack_count += 1;
            if self.delack_count >= cfg.delayed_ack_packets {
                self.delack_count = 0;
                self.delack.disarm();
                out.push(self.ack_packet(ce, pkt.ts_ps, now, cfg));
            } else if !self.delack.armed() {
                self.delack.arm(now + cfg.delayed_ack_timeout_ps);
            }
        }
        if self.end_ps.is_none() && self.rcv_nxt >= self.size_bytes {
            self.end_ps = Some(now);
            return true;
        }
        false
    }

    /// The CE mark the ACK of data segment `pkt` echoes: its own (`ce_echo = "packet"`), or with
    /// `ce_echo = "ns3"` only on a segment above the highest one whose CE was echoed so far
    /// (ns-3.39's `TcpSocketBase::ForwardUp`: CE counts when `m_ecnCESeq < seq`; any other
    /// ECN-capable segment raises `CA_EVENT_ECN_NO_CE`, and DCTCP's `CeState1to0` clears the
    /// echo). A retransmission filling a hole below later marked data is then acknowledged
    /// without ECN-Echo, so its ACK of new data does not put the sender in CWR.
    #[inline(always)]
    fn echoed_ce(&mut self, pkt: &Packet, cfg: &TransportCfg) -> bool {
        let ce = pkt.has(flags::CE);
        if !cfg.ce_echo_ns3 {
            return ce;
        }
        if ce && (self.ce_seq == NO_CE || pkt.seq > self.ce_seq) {
            self.ce_seq = pkt.seq;
            true
        } else {
            false
        }
    }

    /// The delayed-ACK timer fired.
    pub fn on_delack(&mut self, now: Time, cfg: &TransportCfg, out: &mut Vec<Packet>) {
        self.delack.disarm();
        if self.delack_count > 0 {
            self.delack_count = 0;
            out.push(self.ack_packet(self.last_ce, self.last_echo_ts, now, cfg));
        }
    }

    fn ack_packet(&self, ece: bool, echo_ts: Time, now: Time, cfg: &TransportCfg) -> Packet {
        let mut a = self.control(cfg, flags::ACK | if ece { flags::ECE } else { 0 }, self.rcv_nxt, self.src, now);
        a.ts_ps = echo_ts;
        if cfg.sack {
            if let Some((lo, hi)) = self.sack_block.filter(|&(_, hi)| hi > self.rcv_nxt) {
                let lo = lo.max(self.rcv_nxt);
                a.sack_lo = (lo - self.rcv_nxt).min(u32::MAX as u64) as u32;
                a.sack_hi = (hi - self.rcv_nxt).min(u32::MAX as u64) as u32;
            }
        }
        a
    }
}

/// The gap a paced packet of `bytes` books at `rate_bps`: to the ps, rounded up, or with
/// `pacing_gap = "ns3"` truncated to whole ns, as ns-3's `DataRate::CalculateBytesTxTime`
/// (`Seconds (bytes * 8) / bps`: an integer division of a ns count).
#[inline]
fn pace_gap_ps(bytes: u64, rate_bps: u64, cfg: &TransportCfg) -> Time {
    if cfg.pace_gap_ns3 {
        (bytes as u128 * 8 * 1_000_000_000 / rate_bps as u128) as Time * PS_PER_NS
    } else {
        tx_time_ps(bytes, rate_bps)
    }
}

/// RTT measured from an echoed send time: exact, or (with `timestamp_tick_ps`, RFC 7323
/// timestamps on a clock of that tick, ns-3: 1 ms) the difference of the tick counts, a
/// difference of zero taken as 1 µs as ns-3's TcpSocketBase::EstimateRtt does.
#[inline]
pub fn measured_rtt(echo_ps: Time, now: Time, cfg: &TransportCfg) -> Option<Time> {
    if now < echo_ps {
        return None;
    }
    let tick = cfg.timestamp_tick_ps;
    if tick == 0 {
        return Some(now - echo_ps);
    }
    let d = (now / tick - echo_ps / tick) * tick;
    Some(if d == 0 { crate::engine::PS_PER_US } else { d })
}

/// ns-3.39's `static_cast<int>(tcb->m_ssThresh - tcb->m_bytesInFlight)` in PRR's slow-start
/// bound: both `uint32_t` (a larger ssthresh is held as 2^32 − 1), the difference modulo 2^32
/// read as a signed 32-bit integer.
fn ns3_headroom(ssthresh: u64, pipe: u64) -> i32 {
    (ssthresh.min(u32::MAX as u64) as u32).wrapping_sub(pipe as u32) as i32
}

/// PRR's proportional send count (RFC 6937 §3, while the pipe exceeds ssthresh):
/// ceil(prr_delivered · ssthresh / RecoverFS) − prr_out, at least 0. With `wrap32` the product is
/// ns-3.39's `m_prrDelivered * tcb->m_ssThresh` of two `uint32_t`, taken modulo 2^32 before the
/// division (`TcpPrrRecovery::DoRecovery`): once it passes 2^32 (a 100 KB ssthresh after 43 KB
/// delivered) the target falls back and the sender sends nothing until it climbs past prr_out.
fn prr_proportional(prr_delivered: u64, ssthresh: u64, recover_fs: u64, prr_out: u64, wrap32: bool) -> u64 {
    let product = if wrap32 {
        (prr_delivered as u32).wrapping_mul(ssthresh as u32) as u128
    } else {
        prr_delivered as u128 * ssthresh as u128
    };
    (product.div_ceil(recover_fs.max(1) as u128) as u64).saturating_sub(prr_out)
}

/// `x as Time` for an RTT estimate `x` (non-negative, finite), through `i64`: x86-64
/// converts to a signed integer in one instruction (`as u64` needs a second path for
/// 2^63 and above). The same value for every `x` below 2^63 ps (106 days); above, it
/// saturates at 2^63 − 1 instead of 2^64 − 1.
#[inline(always)]
fn whole_ps(x: f64) -> Time {
    x as i64 as Time
}

/// Insert [s, e) into a sorted list of disjoint intervals, merging overlaps.
fn insert_interval(v: &mut Vec<(u64, u64)>, s: u64, e: u64) {
    let i = v.partition_point(|&(a, _)| a < s);
    v.insert(i, (s, e));
    // merge around i
    let mut j = i.saturating_sub(1);
    while j + 1 < v.len() {
        if v[j].1 >= v[j + 1].0 {
            v[j].1 = v[j].1.max(v[j + 1].1);
            v.remove(j + 1);
        } else if j + 1 > i {
            break;
        } else {
            j += 1;
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::cc::cubic::{Cubic, HyStart, HyStartCfg};
    use crate::cc::CongestionControl;
    use crate::engine::{PS_PER_MS, PS_PER_US};

    pub fn cfg(mss: u64, sack: bool) -> TransportCfg {
        TransportCfg { mss_bytes: mss, header_bytes: 0, init_cwnd_packets: 10, min_rto_ps: 200 * PS_PER_MS, initial_rto_ps: 1000 * PS_PER_MS, max_rto_ps: 60_000 * PS_PER_MS, handshake: false, delayed_ack_packets: 1, delayed_ack_timeout_ps: PS_PER_MS, ack_priority: 0, unscheduled_bytes: 0, unscheduled_acks: false, sack, clock_granularity_ps: 10_000, timestamp_tick_ps: 0, prr: false, preopened_cwnd_fit: false, lost_rtx_rto_only: false, recovery_tail_resend: false, cwr_no_recovery: false, cwr_window_prr: false, ce_echo_ns3: false, partial_ack_rtx: false, loss_marking_ns3: false, recovery_exit_ns3: false, recovery_timer_ns3: false, prr_ssrb_rtx_acked: false, prr_wrap32: false, rate_window_after_prr: false, loss_cwr_ns3: false, silly_window_ns3: false, loss_exit_ns3: false, rtt_samples_ns3: false, limited_transmit: false, pace_payload_only: false, pace_rescale: false, pace_gap_ns3: false, pace_resends_ns3: false, next_tx_ns3: false, syn_ack_window_bytes: u64::MAX, roce: false, nack_interval_ps: 500 * PS_PER_US }
    }

    /// One flow on a hand-made path: data serialized at `tx_ps` per packet (no queue limit),
    /// `one_way_ps` each way, ACKs not serialized; `drop(packet, now)` discards a data packet.
    pub struct Harness<'d> {
        pub f: TcpFlow,
        pub cfg: TransportCfg,
        pub now: Time,
        one_way_ps: Time,
        tx_ps: Time,
        data_free: Time,
        ev: Vec<(Time, u64, Packet)>,
        n: u64,
        out: Vec<Packet>,
        drop: Box<dyn FnMut(&Packet, Time) -> bool + 'd>,
        /// Marks a data packet CE when it returns true (none: no marking).
        pub ce_mark: Option<Box<dyn FnMut(&Packet) -> bool + 'd>>,
        /// (time, cwnd, ssthresh) after every event.
        pub trace: Vec<(Time, u64, u64)>,
        /// Data packets sent: (time, seq, retransmission).
        pub sent: Vec<(Time, u64, bool)>,
        pub acks: Vec<Packet>,
        max_seq_sent: u64,
        /// Per ACK the sender processed: (time, data packets sent so far, in recovery after it).
        pub ack_log: Vec<(Time, usize, bool)>,
        /// After every event: (snd_una, snd_nxt, RTO deadline, RTO, receiver's rcv_nxt).
        pub state_log: Vec<(u64, u64, Time, Time, u64)>,
    }

    impl<'d> Harness<'d> {
        pub fn new(size: u64, cfg: TransportCfg, cc: Box<dyn CongestionControl>, one_way_ps: Time, tx_ps: Time, start_ps: Time, drop: Box<dyn FnMut(&Packet, Time) -> bool + 'd>) -> Self {
            Self::with_line_rate(size, cfg, cc, one_way_ps, tx_ps, start_ps, drop, 1)
        }

        /// As `new`, with the sender's NIC line rate in the path (algorithms that pace at it).
        #[allow(clippy::too_many_arguments)]
        pub fn with_line_rate(size: u64, cfg: TransportCfg, cc: Box<dyn CongestionControl>, one_way_ps: Time, tx_ps: Time, start_ps: Time, drop: Box<dyn FnMut(&Packet, Time) -> bool + 'd>, line_rate_bps: u64) -> Self {
            let path = PathInfo { base_rtt_ps: 2 * one_way_ps, tau_ps: 2 * one_way_ps, line_rate_bps };
            let f = TcpFlow::new(0, 0, 1, size, start_ps, 0, cfg.handshake, path, &cfg);
            Self::started(Harness { f, cfg, now: start_ps, one_way_ps, tx_ps, data_free: 0, ev: Vec::new(), n: 0, out: Vec::new(), drop, ce_mark: None, trace: Vec::new(), sent: Vec::new(), acks: Vec::new(), max_seq_sent: 0, ack_log: Vec::new(), state_log: Vec::new() }, cc)
        }

        /// As `new`, with data packets marked CE where `mark` returns true.
        #[allow(clippy::too_many_arguments)]
        pub fn with_ce_mark(size: u64, cfg: TransportCfg, cc: Box<dyn CongestionControl>, one_way_ps: Time, tx_ps: Time, start_ps: Time, drop: Box<dyn FnMut(&Packet, Time) -> bool + 'd>, mark: Box<dyn FnMut(&Packet) -> bool + 'd>) -> Self {
            let path = PathInfo { base_rtt_ps: 2 * one_way_ps, tau_ps: 2 * one_way_ps, line_rate_bps: 1 };
            let f = TcpFlow::new(0, 0, 1, size, start_ps, 0, cfg.handshake, path, &cfg);
            Self::started(Harness { f, cfg, now: start_ps, one_way_ps, tx_ps, data_free: 0, ev: Vec::new(), n: 0, out: Vec::new(), drop, ce_mark: Some(mark), trace: Vec::new(), sent: Vec::new(), acks: Vec::new(), max_seq_sent: 0, ack_log: Vec::new(), state_log: Vec::new() }, cc)
        }

        /// As `new`, the flow traced (`[output] tcp_trace_*`) from its start.
        pub fn traced(size: u64, cfg: TransportCfg, cc: Box<dyn CongestionControl>, one_way_ps: Time, tx_ps: Time, start_ps: Time, drop: Box<dyn FnMut(&Packet, Time) -> bool + 'd>) -> Self {
            let path = PathInfo { base_rtt_ps: 2 * one_way_ps, tau_ps: 2 * one_way_ps, line_rate_bps: 1 };
            let mut f = TcpFlow::new(0, 0, 1, size, start_ps, 0, cfg.handshake, path, &cfg);
            f.trace = Some(Box::default());
            Self::started(Harness { f, cfg, now: start_ps, one_way_ps, tx_ps, data_free: 0, ev: Vec::new(), n: 0, out: Vec::new(), drop, ce_mark: None, trace: Vec::new(), sent: Vec::new(), acks: Vec::new(), max_seq_sent: 0, ack_log: Vec::new(), state_log: Vec::new() }, cc)
        }

        fn started(mut h: Self, cc: Box<dyn CongestionControl>) -> Self {
            let mut out = std::mem::take(&mut h.out);
            let start_ps = h.now;
            h.f.start(start_ps, cc.into(), &h.cfg, &mut out);
            h.route(out);
            h
        }

        fn route(&mut self, mut out: Vec<Packet>) {
            for mut p in out.drain(..) {
                self.n += 1;
                if p.dst == self.f.dst {
                    if p.has(flags::DATA) {
                        let rtx = p.seq < self.max_seq_sent;
                        self.max_seq_sent = self.max_seq_sent.max(p.seq + p.payload_bytes as u64);
                        self.sent.push((self.now, p.seq, rtx));
                        if (self.drop)(&p, self.now) {
                            continue;
                        }
                        if self.ce_mark.as_mut().is_some_and(|m| m(&p)) {
                            p.flags |= flags::CE;
                        }
                    }
                    let start = self.now.max(self.data_free);
                    self.data_free = start + self.tx_ps;
                    self.ev.push((start + self.tx_ps + self.one_way_ps, self.n, p));
                } else {
                    self.acks.push(p);
                    self.ev.push((self.now + self.one_way_ps, self.n, p));
                }
            }
            self.out = out;
        }

        /// Process events until `until` or until the flow is done.
        pub fn run_until(&mut self, until: Time) {
            loop {
                let i = self.ev.iter().enumerate().min_by_key(|(_, e)| (e.0, e.1)).map(|(i, e)| (i, e.0));
                let mut t = i.map_or(Time::MAX, |x| x.1);
                for tm in [self.f.rto, self.f.delack, self.f.pace] {
                    if tm.armed() {
                        t = t.min(tm.deadline);
                    }
                }
                if t == Time::MAX || t > until || self.f.state == SendState::Done && self.ev.is_empty() {
                    break;
                }
                self.now = t;
                let mut out = std::mem::take(&mut self.out);
                let mut was_ack = false;
                if let Some((k, et)) = i.filter(|x| x.1 == t) {
                    let (_, _, p) = self.ev.swap_remove(k);
                    let _ = et;
                    if p.dst == self.f.dst {
                        self.f.on_receive(&p, t, &self.cfg, &mut out);
                    } else {
                        self.f.on_ack(&p, None, t, &self.cfg, &mut out);
                        was_ack = true;
                    }
                } else if self.f.rto.armed() && self.f.rto.deadline == t {
                    self.f.on_rto(t, &self.cfg, &mut out);
                } else if self.f.delack.armed() && self.f.delack.deadline == t {
                    self.f.on_delack(t, &self.cfg, &mut out);
                } else {
                    self.f.on_pace(t, &self.cfg, &mut out);
                }
                self.route(out);
                self.trace.push((t, self.f.win.cwnd_bytes, self.f.win.ssthresh_bytes));
                self.state_log.push((self.f.snd_una, self.f.snd_nxt, self.f.rto.deadline, self.f.rto_ps, self.f.rcv_nxt));
                if was_ack {
                    self.ack_log.push((t, self.sent.len(), self.f.in_recovery));
                }
            }
        }
    }

    /// RFC 9438 §4.8 on a hand-made loss. Slow start (HyStart off) from 10 segments at a
    /// 100 ms RTT reaches 160 segments after four rounds; every packet sent from then until
    /// the timer fires is lost. At the timeout ssthresh = β·cwnd = 0.7·160 = 112 segments
    /// (RFC 5681's FlightSize/2 would give 80); slow start regrows to exactly 112; then the
    /// first congestion-avoidance stage runs on a curve with K = 0 and W_max = W_est = 112:
    /// cwnd(t) = max(W_cubic(t), W_est(t)), W_cubic(t) = 112 + 0.4·t³ and W_est(t) = 112 +
    /// α·t/RTT, α = 3(1 − β)/(1 + β) = 0.529 (segments, t in s since the stage began).
    #[test]
    fn cubic_after_a_timeout_follows_rfc9438_4_8() {
        let mss = 1000u64;
        let rtt = 100 * PS_PER_MS;
        let tx = PS_PER_MS / 10; // 0.1 ms per packet: 1000 packets per RTT, no queueing below that
        let cc = Box::new(Cubic::with_hystart(0.4, 0.7, true, HyStart::Off, HyStartCfg::default()));
        // Rounds start at 0, 100.x, 200.x, 300.x ms; the fifth flight (160 packets) leaves from ~400 ms.
        // The timer (min RTO 200 ms) fires after the last ACK at ~408 ms, after the blackout.
        let blackout = (390 * PS_PER_MS, 600 * PS_PER_MS);
        let mut h = Harness::new(100_000_000, cfg(mss, true), cc, rtt / 2, tx, 0, Box::new(move |_p, t| t >= blackout.0 && t < blackout.1));
        h.run_until(1000 * PS_PER_MS);
        assert_eq!(h.f.timeouts, 1, "one timeout");
        let i_rto = h.trace.iter().position(|&(_, c, _)| c == mss).expect("cwnd = 1 MSS after the timeout");
        let cwnd_at_rto = h.trace[i_rto - 1].1;
        assert_eq!(cwnd_at_rto, 160 * mss, "four rounds of slow start from 10 segments");
        assert_eq!(h.trace[i_rto].2, 112 * mss, "ssthresh = beta * cwnd at the timeout");
        h.run_until(1000 * PS_PER_MS + 80 * rtt);
        // Slow start after the timeout ends at exactly ssthresh.
        let tr = &h.trace[i_rto..];
        let j = tr.iter().position(|&(_, c, s)| c >= s).unwrap();
        assert_eq!(tr[j].1, 112 * mss);
        let t0 = tr[j].0;
        let alpha = 3.0 * 0.3 / 1.7;
        let mut worst = 0.0f64;
        let mut checked = 0;
        for &(t, c, _) in &tr[j..] {
            let ts = (t - t0) as f64 / 1e12;
            if ts > 7.0 {
                break;
            }
            let w_cubic = 112.0 + 0.4 * ts.powi(3);
            let w_est = 112.0 + alpha * ts / 0.1;
            let expect = w_cubic.max(w_est) * mss as f64;
            worst = worst.max((c as f64 - expect).abs() / expect);
            checked += 1;
        }
        assert!(checked > 1000);
        // Hand values: t = 2 s: W_est = 122.6 > W_cubic = 115.2; t = 6 s: W_cubic = 198.4.
        assert!(worst < 0.03, "worst relative error {worst}");
    }

    /// A segment sent at t = 0 gives an RTT sample (its echoed send time 0 is a time, not
    /// "absent"): after the first ACK, r = 2·50 ms + 0.1 ms serialization and RFC 6298 gives
    /// RTO = r + 4·r/2 = 3r; with a handshake from t = 0 the SYN-ACK gives the same sample.
    #[test]
    fn segment_sent_at_time_zero_gives_an_rtt_sample() {
        let r = 100 * PS_PER_MS + PS_PER_MS / 10;
        for handshake in [false, true] {
            let mut c = cfg(1000, true);
            c.handshake = handshake;
            let cc = Box::new(Cubic::with_hystart(0.4, 0.7, true, HyStart::Off, HyStartCfg::default()));
            let mut h = Harness::new(1_000_000, c, cc, 50 * PS_PER_MS, PS_PER_MS / 10, 0, Box::new(|_, _| false));
            h.run_until(r);
            assert_eq!(h.f.rto_ps, 3 * r, "handshake = {handshake}");
        }
    }

    /// NewReno with SACK, IW 20 segments of 1000 B, 50 ms RTT, 0.1 ms per segment: segment 1
    /// (seq 0) is lost once; recovery by PRR (RFC 6937) or RFC 6675.
    fn first_segment_lost(prr: bool) -> Harness<'static> {
        let mut c = cfg(1000, true);
        c.init_cwnd_packets = 20;
        c.prr = prr;
        let mut dropped = false;
        let drop = move |p: &Packet, _t: Time| {
            if p.seq == 0 && !dropped {
                dropped = true;
                return true;
            }
            false
        };
        let cc = crate::cc::build("newreno", &serde_json::Map::new()).unwrap();
        Harness::new(1_000_000, c, cc, 50 * PS_PER_MS, PS_PER_MS / 10, 0, Box::new(drop))
    }

    /// A rate-paced sender (TIMELY at its initial 10 Gbps) books each packet's wire size
    /// (1400 B + 54 B of headers: 1,163,200 ps apart) or, as ns3dc's CC pacing timer, its payload
    /// (1400 B: 1,120,000 ps, 3.9 % faster than the wire drains it). The first 10 packets leave
    /// before the first ACK (20 us).
    #[test]
    fn pacing_books_the_packet_or_the_payload() {
        for (payload_only, gap) in [(false, 1_163_200), (true, 1_120_000)] {
            let mut c = cfg(1400, true);
            c.header_bytes = 54;
            c.pace_payload_only = payload_only;
            let cc = crate::cc::build("timely", &serde_json::Map::new()).unwrap();
            let mut h = Harness::with_line_rate(14_000, c, cc, 10 * PS_PER_US, 1, 0, Box::new(|_, _| false), 10_000_000_000);
            h.run_until(15 * PS_PER_US);
            let t: Vec<Time> = h.sent.iter().map(|s| s.0).collect();
            assert_eq!(t, (0..10).map(|k| k * gap).collect::<Vec<_>>(), "payload_only = {payload_only}");
        }
    }

    /// PowerTCP's window is rate × τ: 10 Gbps × 10 us = 12,500 B, 1000 B segments paced 0.8 us
    /// apart, the first ACK back after 10 us. "in_flight" (the reference code) sends while the
    /// bytes in flight are below the window: 13 segments (the 13th at 9.6 us, 12,000 B out);
    /// "segment" (ns-3's `SendPendingData`) only a segment that fits: 12 (11,000 + 1000 ≤ 12,500).
    #[test]
    fn powertcp_window_check_in_flight_or_segment() {
        for (check, n) in [("in_flight", 13), ("segment", 12)] {
            let mut p = serde_json::Map::new();
            p.insert("window_check".into(), check.into());
            let cc = crate::cc::build("powertcp", &p).unwrap();
            let mut h = Harness::with_line_rate(100_000, cfg(1000, true), cc, 5 * PS_PER_US, 1, 0, Box::new(|_, _| false), 10_000_000_000);
            h.run_until(9_900_000);
            assert_eq!(h.sent.len(), n, "{check}");
        }
    }

    /// `pacing_rate_change = "rescale"` (ns3dc's `SetCCRate`): a 1400 B segment paced at 10 Gbps
    /// at 0 books 1.12 us (its gap ends at 1,120,000 ps). At 0.5 us the rate changes: to 5 Gbps
    /// the gap ends at 1.12 + 2.24 − 1.12 = 2.24 us; to 20 Gbps at 1.12 + 0.56 − 1.12 = 0.56 us;
    /// to 100 Gbps 1.12 + 0.112 − 1.12 = 0.112 us is before now, so the gap stands at 1.12 us.
    #[test]
    fn a_rate_change_rescales_the_pending_pacing_gap() {
        let cc = crate::cc::build("timely", &serde_json::Map::new()).unwrap();
        let mut h = Harness::with_line_rate(14_000, cfg(1400, true), cc, 10 * PS_PER_US, 1, 0, Box::new(|_, _| false), 10_000_000_000);
        for (new_bps, end) in [(5_000_000_000, 2_240_000), (20_000_000_000, 560_000), (100_000_000_000, 1_120_000)] {
            let f = &mut h.f;
            (f.next_send_ps, f.pace_booked) = (1_120_000, 1400);
            f.win.pacing_rate_bps = new_bps;
            f.rescale_pacing(10_000_000_000, 500_000, &cfg(1400, true));
            assert_eq!(f.next_send_ps, end, "{new_bps} bps");
        }
    }

    /// `pacing_gap = "ns3"`: TIMELY paced at 600 Mbps books 1400 B for 18,666.67 ns; ns-3 waits
    /// 18,666 ns (11,200,000,000,000 ns·bit / 600,000,000 bit/s, an integer division), so its
    /// k-th segment leaves at k·18,666 ns, sharebuf's exact gaps (rounded up to the ps,
    /// 18,666,667 ps) at k·18,666,667 ps: three segments in, 2 ns apart.
    #[test]
    fn ns3_pacing_gaps_are_whole_ns() {
        for (ns3, gap) in [(false, 18_666_667), (true, 18_666_000)] {
            let mut c = cfg(1400, true);
            c.pace_gap_ns3 = ns3;
            assert_eq!(pace_gap_ps(1400, 600_000_000, &c), gap, "ns3 = {ns3}");
            let path = PathInfo { base_rtt_ps: 0, tau_ps: 0, line_rate_bps: 10_000_000_000 };
            let mut f = TcpFlow::new(0, 0, 1, 14_000, 0, 0, false, path, &c);
            f.win.pacing_rate_bps = 600_000_000;
            for k in 0..3u64 {
                assert!(f.pace_ok(1400, k * gap, &c), "segment {k}, ns3 = {ns3}");
                assert_eq!(f.next_send_ps, (k + 1) * gap);
            }
            assert!(!f.pace_ok(1400, 3 * gap - 1, &c), "a ps early, ns3 = {ns3}");
        }
    }

    /// TIMELY at 10 Gbps, 1400 B segments without headers (1.12 us apart), a 10-segment initial
    /// window, 10 us each way, no serialization: with `keep_initial_window` the 11th segment
    /// waits for the first ACK (sent at 0, back at 20 us + 1 ps), else it leaves at 11.2 us; the
    /// second rate update (the first ACK beyond what was sent at the first, segment 11's, back at
    /// 40 us) lifts the window.
    #[test]
    fn timely_keeps_the_initial_window_until_its_first_update() {
        for (keep, t11) in [(false, 10 * 1_120_000), (true, 20 * PS_PER_US + 1)] {
            let mut c = cfg(1400, true);
            c.init_cwnd_packets = 10;
            let mut p = serde_json::Map::new();
            p.insert("keep_initial_window".into(), serde_json::Value::Bool(keep));
            let cc = crate::cc::build("timely", &p).unwrap();
            let mut h = Harness::with_line_rate(1_400_000, c, cc, 10 * PS_PER_US, 1, 0, Box::new(|_, _| false), 10_000_000_000);
            h.run_until(30 * PS_PER_US);
            assert_eq!(h.sent[10].0, t11, "keep = {keep}");
            assert_eq!(h.f.win.cwnd_bytes, if keep { 14_000 } else { u64::MAX / 4 });
            h.run_until(45 * PS_PER_US);
            assert_eq!(h.f.win.cwnd_bytes, u64::MAX / 4, "keep = {keep}");
        }
    }

    #[test]
    fn preopened_init_cwnd_fit_is_size_over_mss_plus_one() {
        // ns3dc's incast applications: InitialCwnd = flowSize / PACKET_SIZE + 1. 92,160 B at 1400 B
        // -> 66 segments; 15,360 B -> 11; a flow with a handshake keeps init_cwnd_packets (10).
        let mut c = cfg(1400, true);
        c.preopened_cwnd_fit = true;
        let path = PathInfo { base_rtt_ps: 0, tau_ps: 0, line_rate_bps: 1 };
        let cw = |size: u64, hs: bool, c: &TransportCfg| TcpFlow::new(0, 0, 1, size, 0, 0, hs, path, c).win.cwnd_bytes;
        assert_eq!(cw(92_160, false, &c), 66 * 1400);
        assert_eq!(cw(15_360, false, &c), 11 * 1400);
        assert_eq!(cw(92_160, true, &c), 10 * 1400);
        c.preopened_cwnd_fit = false;
        assert_eq!(cw(92_160, false, &c), 10 * 1400);
    }

/// `syn_ack_window_bytes`: ns-3's sender keeps the SYN-ACK's unscaled window (65,535 B) as its
    /// receive window until the receiver's first ACK. A pre-opened 92,160 B response with the
    /// "fit" window (66 segments of 1400 B, the last 1160 B): 46 segments (64,400 B; a 47th would
    /// make 65,800 > 65,535) at t = 0, the other 20 when the ACK of seq 0 arrives, at
    /// tx + 2 x one way = 0.1 + 100 ms (ACKs not serialized; slow start: cwnd 67 segments then,
    /// 45 in flight). Without the limit all 66 go at t = 0. With a handshake and the initial
    /// window 55 (web-search flows in ns3dc), the first flight is 46 too: at the SYN-ACK (the SYN
    /// serialized as data: 100.1 ms), the 47th when seq 0's ACK is back, 2 x 0.1 ms (the
    /// handshake's final ACK, then seq 0, serialized) + 100 ms later.
    #[test]
    fn syn_ack_window_holds_the_first_flight_until_the_first_ack() {
        let one_way = 50 * PS_PER_MS;
        let tx = PS_PER_MS / 10;
        for limit in [u64::MAX, 65_535] {
            let mut c = cfg(1400, true);
            c.preopened_cwnd_fit = true;
            c.syn_ack_window_bytes = limit;
            let cc = crate::cc::build("newreno", &serde_json::Map::new()).unwrap();
            let mut h = Harness::new(92_160, c, cc, one_way, tx, 0, Box::new(|_: &Packet, _| false));
            h.run_until(1_000 * PS_PER_MS);
            let at0 = h.sent.iter().filter(|s| s.0 == 0).count();
            assert!(h.sent.iter().all(|s| !s.2), "no retransmission");
            assert_eq!(h.sent.len(), 66);
            if limit == u64::MAX {
                assert_eq!(at0, 66);
            } else {
                assert_eq!(at0, 46);
                let later: Vec<(Time, u64)> = h.sent[46..].iter().map(|s| (s.0, s.1)).collect();
                assert_eq!(later, (46..66).map(|k| (tx + 2 * one_way, k * 1400)).collect::<Vec<_>>());
            }
        }
        let mut c = cfg(1400, true);
        c.handshake = true;
        c.init_cwnd_packets = 55;
        c.syn_ack_window_bytes = 65_535;
        let cc = crate::cc::build("newreno", &serde_json::Map::new()).unwrap();
        let mut h = Harness::new(200_000, c, cc, one_way, tx, 0, Box::new(|_: &Packet, _| false));
        h.run_until(1_000 * PS_PER_MS);
        let t1 = h.sent[0].0;
        assert_eq!(t1, tx + 2 * one_way, "data after the SYN-ACK");
        assert_eq!(h.sent.iter().filter(|s| s.0 == t1).count(), 46);
        assert_eq!(h.sent[46].0, t1 + 2 * tx + 2 * one_way);
    }

    /// Segment 1 (seq 0) lost twice: its first transmission and its fast retransmission (IW 20
    /// of 1000 B, 50 ms one way, RFC 6675). With `lost_retransmission = "detect"` the second loss
    /// is found when data sent after the retransmission is SACKed, and seq 0 is sent a third time
    /// within the recovery, before any timeout; with "rto" (ns-3.39) only the timer resends it, the
    /// RTO after the retransmission (initial RTO 1 s, no RTT sample yet before the recovery).
    #[test]
    fn lost_retransmission_detected_or_left_to_the_timer() {
        for rto_only in [false, true] {
            let mut c = cfg(1000, true);
            c.init_cwnd_packets = 20;
            c.lost_rtx_rto_only = rto_only;
            let mut drops = 0;
            let drop = move |p: &Packet, _t: Time| {
                if p.seq == 0 && drops < 2 {
                    drops += 1;
                    return true;
                }
                false
            };
            let cc = crate::cc::build("newreno", &serde_json::Map::new()).unwrap();
            let mut h = Harness::new(1_000_000, c, cc, 50 * PS_PER_MS, PS_PER_MS / 10, 0, Box::new(drop));
            h.run_until(5_000 * PS_PER_MS);
            let sends: Vec<Time> = h.sent.iter().filter(|s| s.1 == 0).map(|s| s.0).collect();
            assert_eq!(sends.len(), 3, "rto_only = {rto_only}: {sends:?}");
            let (first_rtx, second_rtx) = (sends[1], sends[2]);
            if rto_only {
                // the timer: armed at the fast retransmit, the RTO then in force
                assert!(second_rtx >= first_rtx + 200 * PS_PER_MS, "{sends:?}");
            } else {
                // one round trip after the retransmission (its SACKed successors come back)
                assert!(second_rtx < first_rtx + 200 * PS_PER_MS && second_rtx > first_rtx + 100 * PS_PER_MS, "{sends:?}");
            }
        }
    }

    /// A window's tail lost (`recovery_tail`). NewReno with SACK and PRR, 20 segments of 1000 B
    /// sent at once (IW 20), 50 ms one way, 0.1 ms per segment; the first transmissions of
    /// segment 1 (seq 0) and of the last two (seq 18 000, 19 000) are lost. Segments 2..18 come
    /// back as 17 duplicate ACKs; the 3rd starts recovery (ssthresh 10 000, RecoverFS 20 000) and
    /// resends seq 0. With "rto" nothing else is sent: no hole lies below the highest SACKed
    /// byte and no new data is left, so the tail waits for the timer. With "resend" (ns-3.39's
    /// NextSeg rule 3) each segment PRR allows is the first un-SACKed one not yet resent, above
    /// the highest SACKed byte H. On the j-th recovery ACK (j = 1..15) SACKed = (j + 2)·1000,
    /// H = (j + 3)·1000, prr_delivered = 1000·j and pipe = 20 000 − SACKed + (frontier − H)⁺ (a
    /// resent tail segment counts twice until SACKed). By hand:
    ///   j = 1: the fast retransmit (seq 0), prr_out 1000;
    ///   j = 2, 3: pipe 16 000, 15 000 > ssthresh, ceil(1000·j/2) − prr_out < 1000: nothing;
    ///   j = 4: H 7000, pipe 14 000, 2000 − 1000 = 1000: seq 7000 (still in flight), frontier 8000;
    ///   j = 5: 2500 − 2000: nothing; j = 6: H 9000, pipe 12 000, 1000: seq 9000, frontier 10 000;
    ///   j = 7: pipe 11 000, 3500 − 3000: nothing;
    ///   j = 8: H 11 000, pipe 10 000 = ssthresh: slow-start bound, ssthresh − pipe = 0: nothing;
    ///   j = 9: H 12 000, pipe 9000: min(1000, 6000 + 1000): seq 12 000, frontier 13 000;
    ///   j = 10: pipe 8000: 2000: seqs 13 000, 14 000; j = 11: H 14 000, pipe 7000 + 1000: 15 000,
    ///   16 000; j = 12: pipe 6000 + 2000: 17 000, 18 000; j = 13: pipe 5000 + 3000: 19 000, then
    ///   the tail is all resent; j = 14, 15: nothing left.
    /// The receiver then holds everything once the resent seq 0 (sent at 100.3 ms) and the resent
    /// tail (the last at 101.5 ms) arrive, 1.5 round trips after the start: no timeout.
    #[test]
    fn recovery_tail_resent_in_recovery_or_left_to_the_timer() {
        for resend in [false, true] {
            let mut c = cfg(1000, true);
            c.init_cwnd_packets = 20;
            c.prr = true;
            c.lost_rtx_rto_only = true;
            c.recovery_tail_resend = resend;
            let mut first = std::collections::HashSet::new();
            let drop = move |p: &Packet, _t: Time| matches!(p.seq, 0 | 18_000 | 19_000) && first.insert(p.seq);
            let cc = crate::cc::build("newreno", &serde_json::Map::new()).unwrap();
            let mut h = Harness::new(20_000, c, cc, 50 * PS_PER_MS, PS_PER_MS / 10, 0, Box::new(drop));
            h.run_until(5_000 * PS_PER_MS);
            let rtx: Vec<u64> = h.sent.iter().filter(|s| s.2).map(|s| s.1).collect();
            let log = &h.ack_log;
            let j1 = log.iter().position(|a| a.2).expect("recovery");
            assert_eq!(j1, 2, "the third duplicate ACK starts recovery");
            let sent_per_ack: Vec<usize> = (j1..j1 + 15).map(|k| log[k].1 - log[k - 1].1).collect();
            let t_rcv = h.f.end_ps.expect("the receiver holds everything");
            if resend {
                assert_eq!(sent_per_ack, vec![1, 0, 0, 1, 0, 1, 0, 0, 1, 2, 2, 2, 1, 0, 0]);
                assert_eq!(rtx, vec![0, 7_000, 9_000, 12_000, 13_000, 14_000, 15_000, 16_000, 17_000, 18_000, 19_000]);
                assert_eq!(h.f.timeouts, 0);
                assert!(t_rcv > 150 * PS_PER_MS && t_rcv < 152 * PS_PER_MS, "{t_rcv}");
            } else {
                assert_eq!(sent_per_ack, vec![1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
                assert_eq!(h.f.timeouts, 1);
                assert_eq!(rtx[..2], [0, 18_000]);
                assert!(t_rcv > 400 * PS_PER_MS, "{t_rcv}");
            }
        }
    }

    /// ns-3.39 runs NextSeg's rule 3 only in CA_RECOVERY, not in CA_CWR: an ECN-capable sender
    /// (DCTCP) that took an ECN-Echo on an ACK of new data stays in CWR until the cumulative ACK
    /// passes everything sent then, and its lost tail waits for the timer even with
    /// `recovery_tail = "resend"`. 20 segments of 1000 B at once, seq 5000 and the last two lost:
    /// unmarked, the tail is resent in the recovery and nothing times out; with seq 0 marked CE
    /// (its ACK carries ECE and advances snd_una: CWR until the ACK passes 20 000), the hole at
    /// 5000 is resent and the tail only after the RTO, once.
    #[test]
    fn recovery_tail_not_resent_in_ns3_cwr() {
        for mark in [false, true] {
            let c = sack_prr_iw20();
            let mut first = std::collections::HashSet::new();
            let drop = move |p: &Packet, _t: Time| matches!(p.seq, 5_000 | 18_000 | 19_000) && first.insert(p.seq);
            let cc = crate::cc::build("dctcp", &serde_json::Map::new()).unwrap();
            let mut h = Harness::with_ce_mark(20_000, c, cc, 50 * PS_PER_MS, PS_PER_MS / 10, 0, Box::new(drop), Box::new(move |p: &Packet| mark && p.seq == 0));
            h.run_until(5_000 * PS_PER_MS);
            let rtx: Vec<(Time, u64)> = h.sent.iter().filter(|s| s.2).map(|s| (s.0, s.1)).collect();
            let t_hole = rtx.iter().find(|r| r.1 == 5_000).expect("the hole is resent").0;
            let t_tail = rtx.iter().find(|r| r.1 == 18_000).expect("the tail is resent").0;
            assert!(t_hole < 102 * PS_PER_MS, "mark = {mark}: {rtx:?}");
            if mark {
                assert_eq!(h.f.timeouts, 1);
                assert!(t_tail > 300 * PS_PER_MS, "{rtx:?}");
            } else {
                assert_eq!(h.f.timeouts, 0);
                assert!(t_tail < 102 * PS_PER_MS, "{rtx:?}");
            }
        }
    }

    /// Duplicate ACKs in CWR (`cwr_dupacks`). DCTCP (α = 1) with SACK, PRR, ns3dc's
    /// `recovery_tail = "resend"` and lost retransmissions left to the timer; 20 segments of
    /// 1000 B sent at once (IW 20), 50 ms one way, 0.1 ms per segment on the link. The first
    /// transmissions of seq 5000 and seq 17 000 are lost before the link (they take no slot), so
    /// segment i's ACK returns at 100 + 0.1·(i + 1) ms for i < 5, 100 + 0.1·i ms for 6 ≤ i ≤ 16
    /// and 100 + 0.1·(i − 1) ms for i ≥ 18. Segment 0 is marked CE: its ACK (100.1 ms, ECE, new
    /// data) puts the sender in CWR until the cumulative ACK passes 20 000 and DCTCP cuts cwnd to
    /// 20 000·(1 − 1/2) = ssthresh = 10 000 (the next 4 ACKs add 4000 < cwnd acked bytes: no
    /// growth).
    ///   "recover" (RFC 6675 / Linux: CWR → Recovery): the 3rd duplicate ACK (segment 8, 100.8 ms)
    ///   starts recovery (ssthresh 10 000 / 2 = 5000) and resends 5000 at once; the SACK of
    ///   18 000 (101.7 ms) puts the hole at 17 000 below the highest SACKed byte and PRR lets it
    ///   go (pipe 2000 < ssthresh); the receiver holds all at 151.8 ms, no timeout.
    ///   "ns3" (ns-3.39: DupAck starts no recovery in CA_CWR; NextSeg rule 1 resends what
    ///   UpdateLostCount marked lost): 5000 is presumed lost once 3 segments above it are SACKed
    ///   (100.8 ms), but cwnd stays 10 000 and pipe = 15 000 outstanding − 3000 SACKed − 1000
    ///   lost = 11 000; each later SACK takes 1000 off, so 5000 goes when pipe + 1000 ≤ 10 000,
    ///   at segment 10's ACK (101.0 ms). Only 2 segments (18 000, 19 000) are ever SACKed above
    ///   17 000, so it is never presumed lost, and rule 3 is off in CWR: it waits for the timer.
    ///   That is re-armed by the last ACK of new data, ack 17 000 for the resent 5000 (sent
    ///   101.0 ms, back at 201.1 ms), with the 200 ms minimum RTO: 17 000 goes at 401.1 ms, one
    ///   timeout, and arrives at 451.2 ms. ssthresh stays 10 000 until then (no second cut).
    #[test]
    fn cwr_dupacks_start_recovery_or_wait_as_ns3() {
        let ms = |x: f64| (x * PS_PER_MS as f64).round() as Time;
        for ns3 in [false, true] {
            let mut c = sack_prr_iw20();
            c.cwr_no_recovery = ns3;
            let mut first = std::collections::HashSet::new();
            let drop = move |p: &Packet, _t: Time| matches!(p.seq, 5_000 | 17_000) && first.insert(p.seq);
            let cc = crate::cc::build("dctcp", &serde_json::Map::new()).unwrap();
            let mut h = Harness::with_ce_mark(20_000, c, cc, 50 * PS_PER_MS, PS_PER_MS / 10, 0, Box::new(drop), Box::new(|p: &Packet| p.seq == 0));
            h.run_until(5_000 * PS_PER_MS);
            let rtx: Vec<(Time, u64)> = h.sent.iter().filter(|s| s.2).map(|s| (s.0, s.1)).collect();
            let recovered = h.ack_log.iter().any(|a| a.2);
            let t_rcv = h.f.end_ps.expect("the receiver holds everything");
            let ssthresh_at = |t: Time| h.trace.iter().rev().find(|x| x.0 <= t).unwrap().2;
            assert_eq!(ssthresh_at(ms(100.5)), 10_000, "ns3 = {ns3}: the ECN cut");
            if ns3 {
                assert!(!recovered, "no recovery in CWR");
                assert_eq!(rtx, vec![(ms(101.0), 5_000), (ms(401.1), 17_000)]);
                assert_eq!(h.f.timeouts, 1);
                assert_eq!(ssthresh_at(ms(401.0)), 10_000, "no second cut");
                assert_eq!(t_rcv, ms(451.2));
            } else {
                assert!(recovered);
                assert_eq!(rtx, vec![(ms(100.8), 5_000), (ms(101.7), 17_000)]);
                assert_eq!(h.f.timeouts, 0);
                assert_eq!(ssthresh_at(ms(100.8)), 5_000, "the loss halves (loss_ssthresh = half)");
                assert_eq!(t_rcv, ms(151.8));
            }
        }
    }

    /// DCTCP's window in CWR (`cwr_window`), on the loss of `cwr_dupacks_start_recovery_or_wait_as_ns3`
    /// with `cwr_dupacks = "ns3"`. "cc": DCTCP cuts cwnd to 10 000 at the echo (100.1 ms), and 5000
    /// waits until pipe + 1000 ≤ 10 000 (101.0 ms). "recovery" (ns-3.39's `EnterCwr` with PRR):
    /// at the echo ssthresh = 10 000 (α = 1), RecoverFS = 19 000 unacknowledged bytes, and PRR runs
    /// twice on that ACK (EnterCwr, then ProcessAck's CA_CWR branch), 1000 B delivered each:
    /// sndcnt = max(ceil(1000·10 000/19 000) − 0, 1000) = 1000, then max(ceil(2000·10 000/19 000), 1000)
    /// = 1053, so cwnd = pipe 19 000 + 1053 = 20 053. On the ACKs of 2000..5000 (pipe 18 000 ..
    /// 15 000, prr_delivered 3000 .. 6000, nothing sent): cwnd = 18 000 + 1579, 17 000 + 2106,
    /// 16 000 + 2632, 15 000 + 3158 = 18 158. Duplicate ACKs leave it; at segment 8's (100.8 ms) 5000
    /// is presumed lost, pipe = 11 000 and 5000 goes at once. 17 000 still waits for the timer
    /// (re-armed by ack 17 000 at 200.9 ms: resent at 400.9 ms). "recovery" without PRR (ns-3's
    /// `TcpClassicRecovery`: cwnd = ssthresh at once) sends as the cut does.
    #[test]
    fn cwr_window_cut_by_dctcp_or_brought_down_by_prr() {
        let ms = |x: f64| (x * PS_PER_MS as f64).round() as Time;
        for (prr_cwr, prr) in [(false, true), (true, true), (true, false)] {
            let mut c = cfg(1000, true);
            c.init_cwnd_packets = 20;
            c.prr = prr;
            c.lost_rtx_rto_only = true;
            c.recovery_tail_resend = true;
            c.cwr_no_recovery = true;
            c.cwr_window_prr = prr_cwr;
            let mut first = std::collections::HashSet::new();
            let drop = move |p: &Packet, _t: Time| matches!(p.seq, 5_000 | 17_000) && first.insert(p.seq);
            let cc = crate::cc::build("dctcp", &serde_json::Map::new()).unwrap();
            let mut h = Harness::with_ce_mark(20_000, c, cc, 50 * PS_PER_MS, PS_PER_MS / 10, 0, Box::new(drop), Box::new(|p: &Packet| p.seq == 0));
            h.run_until(5_000 * PS_PER_MS);
            let rtx: Vec<(Time, u64)> = h.sent.iter().filter(|s| s.2).map(|s| (s.0, s.1)).collect();
            let at = |t: Time| *h.trace.iter().rev().find(|x| x.0 <= t).unwrap();
            assert!(!h.ack_log.iter().any(|a| a.2), "no recovery in CWR");
            assert_eq!(h.f.timeouts, 1);
            if prr_cwr && prr {
                assert_eq!(at(ms(100.1)), (ms(100.1), 20_053, 10_000));
                let cw: Vec<u64> = [100.2, 100.3, 100.4, 100.5, 100.7].iter().map(|&t| at(ms(t)).1).collect();
                assert_eq!(cw, vec![19_579, 19_106, 18_632, 18_158, 18_158]);
                assert_eq!(rtx, vec![(ms(100.8), 5_000), (ms(400.9), 17_000)]);
            } else {
                assert_eq!(at(ms(100.1)), (ms(100.1), 10_000, 10_000));
                assert_eq!(rtx, vec![(ms(101.0), 5_000), (ms(401.1), 17_000)]);
            }
        }
    }

    /// `prr_arithmetic = "ns3"` on ns3dc's own numbers: a web-search flow (seed 2 of the grid's
    /// `buf3.44-dctcp`, DT) enters CWR with ssthresh 557,318 B and RecoverFS 946,400 B; PRR runs
    /// twice on the echo (2800 B delivered), then once per ACK of 1400 B. ns-3's traced cwnd minus
    /// bytes in flight gave the send counts 1649, 1074, 1898, 1323, 0, 0, 0, 82, 907, 1731 over its
    /// first ten ACKs (prr_out 0, 1400, 1400, 2800, then 2800): ceil(((prr_delivered · 557,318) mod
    /// 2^32) / 946,400) − prr_out, the product wrapping from the fifth ACK on (8400 · 557,318 =
    /// 4,681,471,200). Exact arithmetic gives 4947 − 2800 = 2147 there.
    #[test]
    fn prr_proportional_wraps_as_ns3_on_ns3dc_numbers() {
        let outs = [0u64, 1400, 1400, 2800, 2800, 2800, 2800, 2800, 2800, 2800];
        let got: Vec<u64> = (0..10).map(|k| prr_proportional(2800 + 1400 * k as u64, 557_318, 946_400, outs[k], true)).collect();
        // the echo's count is raised to one segment by the caller (prr_out = 0): 1649 already is
        assert_eq!(got, vec![1649, 1074, 1898, 1323, 0, 0, 0, 82, 907, 1731]);
        assert_eq!(prr_proportional(8400, 557_318, 946_400, 2800, false), 2147);
        assert_eq!(prr_proportional(4200, 557_318, 946_400, 1400, false), 1074, "no wrap below 2^32: the same");
    }

    /// The same through the sender (`prr_arithmetic`): DCTCP, 200 segments of 1000 B in flight,
    /// the first CE-marked. Its echo enters CWR: ssthresh 100,000 (α = 1), RecoverFS 199,000, and
    /// after ACK j prr_delivered = 1000 (j + 1). Exact: the cumulative send count is
    /// floor(ceil(prr_delivered · 100,000 / 199,000) / 1000): 21 segments by ACK 41, 60 by ACK 120
    /// (ceil(121,000 · 100,000 / 199,000) = 60,805). "ns3": the same 21 by ACK 41; from ACK 42 the
    /// product passes 2^32 (43,000 · 100,000) and the target cycles through [0, 21,583] (2^32 /
    /// 199,000), never a segment above prr_out = 21,000: nothing more is sent while the pipe
    /// (221,000 − 1000 j) exceeds ssthresh, up to ACK 120.
    #[test]
    fn prr_arithmetic_ns3_stops_sending_in_cwr_once_the_product_wraps() {
        let mut by_ack = Vec::new();
        for wrap in [false, true] {
            let mut c = cfg(1000, true);
            c.init_cwnd_packets = 200;
            c.prr = true;
            c.lost_rtx_rto_only = true;
            c.recovery_tail_resend = true;
            c.cwr_no_recovery = true;
            c.cwr_window_prr = true;
            c.prr_wrap32 = wrap;
            let cc = crate::cc::build("dctcp", &serde_json::Map::new()).unwrap();
            let mut h = Harness::with_ce_mark(1_000_000, c, cc, 50 * PS_PER_MS, PS_PER_MS / 10, 0, Box::new(|_: &Packet, _| false), Box::new(|p: &Packet| p.seq == 0));
            h.run_until(200 * PS_PER_MS);
            assert_eq!(h.trace.iter().find(|x| x.2 < u64::MAX / 2).map(|x| x.2), Some(100_000), "ssthresh at the echo");
            let sent_after = |j: usize| h.ack_log[j - 1].1 - 200;
            by_ack.push((sent_after(41), sent_after(120)));
        }
        assert_eq!(by_ack, vec![(21, 60), (21, 21)]);
    }

    /// ns-3.39's `static_cast<int>(m_ssThresh - m_bytesInFlight)`: a `TcpAdvanced` sender's
    /// ssthresh 2^32 − 1 (or sharebuf's unlimited window, held by ns-3 as 2^32 − 1) less a pipe
    /// of 100,000 B is −100,001; an ordinary ssthresh leaves the plain difference.
    #[test]
    fn ns3_headroom_is_the_uint32_difference_read_as_int() {
        assert_eq!(ns3_headroom(u32::MAX as u64, 100_000), -100_001);
        assert_eq!(ns3_headroom(u64::MAX / 4, 100_000), -100_001);
        assert_eq!(ns3_headroom(200_000, 100_000), 100_000);
        assert_eq!(ns3_headroom((1 << 31) + 99_999, 100_000), i32::MAX);
    }

    /// `pacing_resends = "ns3"`: a segment resent out of the send loop at 1 µs while no gap runs
    /// starts one (1400 B at 10 Gbps: 1.12 µs), so a new segment 1 ps later waits until 2.12 µs;
    /// with "exempt" the resend books nothing and the new segment goes. A resend while a gap
    /// runs leaves it as it is.
    #[test]
    fn ns3_resends_start_a_pacing_gap_when_none_runs() {
        for ns3 in [false, true] {
            let mut c = cfg(1400, true);
            c.pace_resends_ns3 = ns3;
            let path = PathInfo { base_rtt_ps: 0, tau_ps: 0, line_rate_bps: 10_000_000_000 };
            let mut f = TcpFlow::new(0, 0, 1, 14_000, 0, 0, false, path, &c);
            f.win.pacing_rate_bps = 10_000_000_000;
            let mut out = Vec::new();
            f.resend(0, 1400, PS_PER_US, &c, &mut out);
            assert_eq!(f.next_send_ps, if ns3 { PS_PER_US + 1_120_000 } else { 0 }, "ns3 = {ns3}");
            assert_eq!(f.pace_ok(1400, PS_PER_US + 1, &c), !ns3, "ns3 = {ns3}");
            let gap_end = f.next_send_ps;
            f.resend(1400, 1400, PS_PER_US + 2, &c, &mut out);
            assert_eq!(f.next_send_ps, gap_end, "ns3 = {ns3}");
        }
    }

    /// `next_tx = "ns3"` (ns-3.39's `m_nextTxSequence`): 10 segments of 1000 B (IW 10, SACK,
    /// `partial_ack = "ns3"`), 0 and 5,000 lost. The first flight leaves it at 10,000. Three ACKs
    /// of 0 SACK up to 2,000, 3,000, 4,000: the third starts recovery, whose fast retransmit
    /// (`DoRetransmit`) moves it back to 0. The ACK of that retransmission, 5,000 SACKing
    /// 6,000–10,000, is partial: `DoRetransmit` resends 5,000 and leaves it there, and that is
    /// what the controller reads on this ACK. The full ACK raises it to 10,000. With "highest"
    /// the controller reads snd.nxt, 10,000, throughout.
    #[test]
    fn next_tx_ns3_falls_back_to_the_resent_hole() {
        for ns3 in [false, true] {
            let mut c = cfg(1000, true);
            c.partial_ack_rtx = true;
            c.next_tx_ns3 = ns3;
            let path = PathInfo { base_rtt_ps: 0, tau_ps: 0, line_rate_bps: 10_000_000_000 };
            let mut f = TcpFlow::new(0, 0, 1, 10_000, 0, 0, false, path, &c);
            let mut out = Vec::new();
            f.start(0, crate::cc::build("newreno", &Default::default()).unwrap().clone_flow(), &c, &mut out);
            assert_eq!((out.len(), f.next_tx), (10, 10_000));
            let ack = |seq: u64, lo: u64, hi: u64| Packet { seq, ts_ps: 0, enq_ps: 0, from_port: 0, flow: 0, size_bytes: 0, payload_bytes: 0, dst: 0, prio: 0, flags: flags::ACK, hops: 0, sack_lo: (lo - seq) as u32, sack_hi: (hi - seq) as u32 };
            for (k, hi) in [2_000, 3_000, 4_000].into_iter().enumerate() {
                out.clear();
                f.on_ack(&ack(0, 1_000, hi), None, (10 + k as u64) * PS_PER_US, &c, &mut out);
            }
            assert!(f.in_recovery);
            assert_eq!(out.iter().map(|p| p.seq).collect::<Vec<_>>(), vec![0], "the fast retransmit");
            assert_eq!((f.next_tx, f.cc_next_tx(&c)), (0, if ns3 { 0 } else { 10_000 }));
            out.clear();
            f.on_ack(&ack(5_000, 6_000, 10_000), None, 30 * PS_PER_US, &c, &mut out);
            assert_eq!(out.iter().map(|p| p.seq).collect::<Vec<_>>(), vec![5_000], "the partial ACK's resend");
            assert_eq!((f.next_tx, f.cc_next_tx(&c)), (5_000, if ns3 { 5_000 } else { 10_000 }));
            out.clear();
            f.on_ack(&ack(10_000, 10_000, 10_000), None, 40 * PS_PER_US, &c, &mut out);
            assert_eq!(f.next_tx, 10_000);
        }
    }

    /// TIMELY (`params`) in SACK recovery with PRR (ns-3's reduction bound and partial-ACK
    /// retransmission on top of `c`): 100 segments of 1000 B paced at 10 Gbps through a
    /// bottleneck of the same rate, 10 µs each way, the first transmissions of 10,000 and 15,000
    /// lost; run for 60 µs.
    fn timely_two_losses(mut c: TransportCfg, params: &[(&str, &str)]) -> Harness<'static> {
        c.init_cwnd_packets = 100;
        c.prr = true;
        c.partial_ack_rtx = true;
        c.prr_ssrb_rtx_acked = true;
        let params: serde_json::Map<String, serde_json::Value> = params.iter().map(|&(k, v)| (k.to_string(), v.into())).collect();
        let cc = crate::cc::build("timely", &params).unwrap();
        let mut first = std::collections::HashSet::new();
        let drop = move |p: &Packet, _t: Time| (p.seq == 10_000 || p.seq == 15_000) && first.insert(p.seq);
        let mut h = Harness::with_line_rate(100_000, c, cc, 10 * PS_PER_US, 800_000, 0, Box::new(drop), 10_000_000_000);
        h.run_until(60 * PS_PER_US);
        h
    }

    /// TIMELY with ns3dc's loss response (`loss_ssthresh = "ns3"`: ssthresh = 2^32 − 1) in SACK
    /// recovery with PRR: 100 segments of 1000 B paced at 10 Gbps, 0.8 µs apart through a
    /// bottleneck of the same rate, 10 µs each way: segment k's ACK comes back at 20.8 + 0.8·k/1000
    /// µs. The first transmissions of 10,000 and 15,000 are lost. The third duplicate ACK (of
    /// 13,000, at 31.2 µs) starts recovery with the fast retransmit of 10,000, whose ACK, the
    /// partial ACK, comes at 52.0 µs. In between, duplicate ACKs arrive every 0.8 µs (but at
    /// 32.8 µs, where 15,000's would be), each delivering one SACKed segment, the pipe well below
    /// ssthresh:
    /// * `prr_arithmetic = "ns3"`: the slow-start bound's headroom int(2^32 − 1 − pipe) is
    ///   negative and wins the min: cwnd = pipe, nothing but the fast retransmit goes (1 segment);
    /// * "exact": min(2^32 − 1 − pipe, limit) = limit = DeliveredData (`prr_reduction_bound =
    ///   "ns3"`: no retransmission acknowledged yet), one segment per duplicate ACK: on the
    ///   first, the fast retransmit (its share, computed before it as RFC 6937 and ns-3.39's
    ///   EnterRecovery do), then one new segment on each of the 24 others up to 51.2 µs.
    #[test]
    fn prr_arithmetic_ns3_stalls_a_rate_sender_whose_ssthresh_is_uint32_max() {
        let mut sent_in_recovery = Vec::new();
        for wrap in [false, true] {
            let mut c = cfg(1000, true);
            c.lost_rtx_rto_only = true;
            c.recovery_tail_resend = true;
            c.recovery_timer_ns3 = true;
            c.prr_wrap32 = wrap;
            let h = timely_two_losses(c, &[("loss_ssthresh", "ns3"), ("update_trigger", "new_ack")]);
            let start = h.ack_log.iter().position(|a| a.2).expect("recovery begins");
            let before = h.ack_log[start - 1].1;
            // the ACK of the fast retransmit: the first ACK in recovery that moved snd_una
            let partial = h.ack_log.iter().skip(start + 1).position(|a| a.0 >= 52 * PS_PER_US).map(|k| k + start + 1).expect("partial ACK");
            sent_in_recovery.push(h.ack_log[partial - 1].1 - before);
            assert_eq!(h.trace.iter().map(|t| t.2).filter(|&x| x < u64::MAX / 8).min(), Some(u32::MAX as u64), "ssthresh at the loss");
        }
        assert_eq!(sent_in_recovery, vec![25, 1]);
    }

    /// `rate_window_in_recovery`: TIMELY (updates once per RTT or an RTT after the last, the
    /// default trigger) in the recovery above, with ns-3's PRR arithmetic. "prr": PRR sets the
    /// window after the algorithm on every ACK, so cwnd stays the pipe throughout the recovery.
    /// "rate" (ns3dc's `ProcessDcAck` after `ProcessAck`): an ACK on which TIMELY updated leaves
    /// its unlimited window, and the pacer sends on it.
    #[test]
    fn rate_window_in_recovery_leaves_the_algorithms_window_on_an_update() {
        let mut unlimited_in_recovery = Vec::new();
        for rate_first in [false, true] {
            let mut c = cfg(1000, true);
            c.prr_wrap32 = true;
            c.rate_window_after_prr = rate_first;
            let h = timely_two_losses(c, &[("loss_ssthresh", "ns3")]);
            let n = h.ack_log.iter().zip(h.trace.iter()).filter(|(a, _)| a.2).count();
            let unlimited = h.ack_log.iter().filter(|a| a.2).filter_map(|a| h.trace.iter().find(|t| t.0 == a.0)).filter(|t| t.1 == u64::MAX / 4).count();
            assert!(n > 0);
            unlimited_in_recovery.push(unlimited);
        }
        assert_eq!(unlimited_in_recovery[0], 0, "PRR's window on every ACK in recovery");
        assert!(unlimited_in_recovery[1] >= 1, "TIMELY's window left on its update: {unlimited_in_recovery:?}");
    }

    /// An ECN-Echo after a timeout (`loss_cwr`), DCTCP with ns-3's loss rule (`loss_ssthresh =
    /// "ns3"`, α = 1 throughout: no window of data is acknowledged before the end) and the
    /// profile's CWR settings. 10 segments of 1000 B, RTT 10.1 ms, the 200 ms minimum RTO; the
    /// first transmissions of 7000, 8000, 9000 are lost (no SACK above them). Slow start takes
    /// cwnd to 17 000 on the 7 ACKs (10.1–10.7 ms); the timer fires at 210.7 ms: ssthresh =
    /// 17 000·(1 − 1/2) = 8500, cwnd 1000, 7000 resent, marked CE. Its ACK (220.8 ms, ECN-Echo)
    /// enters CWR (ns-3's `EnterCwr` from `CA_LOSS`): ssthresh = 1000·(1 − 1/2) = 500, RecoverFS
    /// = 2000 unacknowledged, PRR twice with 1000 delivered each.
    /// * "ns3": the pipe is what was resent since the timeout (snd_nxt − snd_una = 0 ≤ 500):
    ///   sndcnt = min(500 − 0, limit) = 500, raised to 1000 while nothing went (prr_out = 0), so
    ///   cwnd = 1000: 8000 goes. Its ACK (230.9 ms, no echo): prr_delivered 3000, prr_out 1000,
    ///   sndcnt = min(500, …) = 500, cwnd = 0 + 500, below one segment: nothing goes
    ///   (`SendPendingData`'s silly-window check). The timer, restarted by that ACK with the RTO
    ///   back at 200 ms, fires at 430.9 ms: ssthresh = 500·(1 − 1/2) = 250, 9000 resent, in at
    ///   436.0 ms. Two timeouts, 10 ms apart in the traced ns3dc responses (its minimum RTO).
    /// * "flight": the pipe counts the 2000 B outstanding (> 500): sndcnt = max(⌈2000·500/2000⌉
    ///   − 0, 1000) = 1000, cwnd = 2000 + 1000 = 3000 against the send loop's flight of 0:
    ///   8000 and 9000 go at once (220.8, 220.9 ms), in at 226.0 ms. One timeout.
    #[test]
    fn loss_cwr_echo_after_a_timeout_stalls_as_ns3_or_sends_the_flight() {
        let ms = |x: f64| (x * PS_PER_MS as f64).round() as Time;
        for ns3 in [false, true] {
            let mut c = cfg(1000, true);
            c.prr = true;
            c.lost_rtx_rto_only = true;
            c.recovery_tail_resend = true;
            c.cwr_no_recovery = true;
            c.cwr_window_prr = true;
            c.ce_echo_ns3 = true;
            c.partial_ack_rtx = true;
            c.recovery_timer_ns3 = true;
            c.loss_cwr_ns3 = ns3;
            let mut first = std::collections::HashSet::new();
            let drop = move |p: &Packet, _t: Time| p.seq >= 7_000 && first.insert(p.seq);
            // The first 7000 is dropped before it could be marked: the mark hits its retransmission.
            let mark = |p: &Packet| p.seq == 7_000;
            let mut params = serde_json::Map::new();
            params.insert("loss_ssthresh".into(), "ns3".into());
            let cc = crate::cc::build("dctcp", &params).unwrap();
            let mut h = Harness::with_ce_mark(10_000, c, cc, 5 * PS_PER_MS, PS_PER_MS / 10, 0, Box::new(drop), Box::new(mark));
            h.run_until(5_000 * PS_PER_MS);
            let rtx: Vec<(Time, u64)> = h.sent.iter().filter(|s| s.2).map(|s| (s.0, s.1)).collect();
            let at = |t: Time| *h.trace.iter().rev().find(|x| x.0 <= t).unwrap();
            let t_rcv = h.f.end_ps.expect("the receiver holds everything");
            assert_eq!(at(ms(210.7)), (ms(210.7), 1_000, 8_500), "ns3 = {ns3}: the first timeout");
            if ns3 {
                assert_eq!(at(ms(220.8)), (ms(220.8), 1_000, 500));
                assert_eq!(at(ms(230.9)), (ms(230.9), 500, 500));
                assert_eq!(rtx, vec![(ms(210.7), 7_000), (ms(220.8), 8_000), (ms(430.9), 9_000)]);
                assert_eq!(at(ms(430.9)), (ms(430.9), 1_000, 250));
                assert_eq!(h.f.timeouts, 2);
                assert_eq!(t_rcv, ms(436.0));
            } else {
                assert_eq!(at(ms(220.8)), (ms(220.8), 3_000, 500));
                assert_eq!(rtx, vec![(ms(210.7), 7_000), (ms(220.8), 8_000), (ms(220.8), 9_000)]);
                assert_eq!(h.f.timeouts, 1);
                assert_eq!(t_rcv, ms(226.0));
            }
        }
    }

    /// `silly_window`: 5 segments of 1000 B, a fixed window of 5 (ssthresh 2^32 − 1 at a loss, as
    /// ns3dc's TcpAdvanced), PRR with ns-3's arithmetic, 1 µs per segment, 10 µs each way. Segments
    /// 0 and 1000 are lost; 2000, 3000, 4000 arrive, their duplicate ACKs are back at 23, 24,
    /// 25 µs and the third starts recovery with the fast retransmit of 0 (cwnd 0 + one segment,
    /// the pipe then 1000: the hole 1000 waits). 0 arrives at 36 µs; its ACK (1000, partial) at
    /// 46 µs leaves a pipe of 4000 outstanding − 3000 SACKed − 1000 presumed lost = 0, and PRR's
    /// sndcnt is 0 (int(ssthresh − pipe) < 0 in ns-3): cwnd = 0.
    /// * "one_segment": nothing in flight, so one segment goes anyway: 1000 at 46 µs, in at 57 µs.
    /// * "ns3" (`SendPendingData`: the window left, 0, is below a segment): nothing goes until the
    ///   timer, restarted by that ACK, fires 200 ms later: 1000 at 200.046 ms, in at 200.057 ms.
    /// (Under the profile `DoRetransmit` would resend the head on this partial ACK whatever the
    /// window, `partial_ack = "ns3"`; the stall it shows comes on a duplicate ACK that leaves
    /// nothing in flight, with `loss_marking = "ns3"` after new data went first.)
    #[test]
    fn silly_window_waits_for_the_timer_with_an_empty_window_as_ns3() {
        let us = |x: u64| x * PS_PER_US;
        for ns3 in [false, true] {
            let mut c = cfg(1000, true);
            c.prr = true;
            c.prr_wrap32 = true;
            c.silly_window_ns3 = ns3;
            let mut first = std::collections::HashSet::new();
            let drop = move |p: &Packet, _t: Time| (p.seq == 0 || p.seq == 1000) && first.insert(p.seq);
            let mut params = serde_json::Map::new();
            params.insert("window_packets".into(), 5.into());
            let cc = crate::cc::build("fixed_window", &params).unwrap();
            let mut h = Harness::with_line_rate(5_000, c, cc, us(10), us(1), 0, Box::new(drop), 8_000_000_000);
            h.run_until(2_000 * PS_PER_MS);
            let first5: Vec<(Time, u64, bool)> = (0..5).map(|k| (us(k), 1000 * k, false)).collect();
            assert_eq!(h.sent[..6], [&first5[..], &[(us(25), 0, true)]].concat()[..], "ns3 = {ns3}");
            let at = |t: Time| *h.trace.iter().rev().find(|x| x.0 <= t).unwrap();
            assert_eq!((at(us(25)).1, at(us(46)).1), (1_000, 0), "ns3 = {ns3}: cwnd after the fast retransmit, after the partial ACK");
            if ns3 {
                assert_eq!(h.sent[6], (200 * PS_PER_MS + us(46), 1000, true));
                assert_eq!((h.f.end_ps, h.f.timeouts), (Some(200 * PS_PER_MS + us(57)), 1));
            } else {
                assert_eq!(h.sent[6], (us(46), 1000, true));
                assert_eq!((h.f.end_ps, h.f.timeouts), (Some(us(57)), 0));
            }
        }
    }

    /// `limited_transmit` (RFC 3042; RFC 6675 §5 step 3 with SACK): 20 segments of 1000 B,
    /// initial window 10 (10 000 B), 1 µs per segment on the wire, 10 µs each way; the first
    /// transmission of 0 is lost (it takes no wire time), so segment i = 1..9 arrives at
    /// i + 10 µs and its ACK is back at i + 20 µs: the duplicates of 0 come at 21, 22, 23 … µs.
    /// With it, the first duplicate (SACK: 1000 held, pipe 10 000 − 1000 = 9000; without SACK
    /// one segment less) lets 10 000 go at 21 µs, the second 11 000 at 22 µs; the third starts
    /// recovery at 23 µs with the fast retransmit of 0. Without it nothing goes between the first window and 0's
    /// retransmission. With SACK and without.
    #[test]
    fn limited_transmit_sends_a_new_segment_on_each_of_the_first_two_duplicates() {
        for sack in [true, false] {
            for lt in [false, true] {
                let mut c = cfg(1000, sack);
                c.limited_transmit = lt;
                let mut first = true;
                let drop = move |p: &Packet, _t: Time| p.seq == 0 && std::mem::replace(&mut first, false);
                let cc = crate::cc::build("newreno", &serde_json::Map::new()).unwrap();
                let mut h = Harness::new(20_000, c, cc, 10 * PS_PER_US, PS_PER_US, 0, Box::new(drop));
                h.run_until(PS_PER_MS);
                let rtx_at = h.sent.iter().find(|s| s.2).map(|s| s.0).expect("a fast retransmit");
                assert_eq!(rtx_at, 23 * PS_PER_US, "sack {sack}, limited transmit {lt}: the third duplicate");
                let between: Vec<(Time, u64)> = h.sent.iter().skip(10).take_while(|s| !s.2).map(|s| (s.0, s.1)).collect();
                if lt {
                    assert_eq!(between, vec![(21 * PS_PER_US, 10_000), (22 * PS_PER_US, 11_000)], "sack {sack}");
                } else {
                    assert_eq!(between, vec![], "sack {sack}");
                }
                assert!(h.f.end_ps.is_some(), "sack {sack}, limited transmit {lt}: the flow completes");
            }
        }
    }

    /// `recovery_exit_acked`: NewReno, SACK and PRR, 20 segments of 1000 B in the initial window, the
    /// first transmission of 0 lost, 50 ms each way. The third duplicate ACK starts recovery:
    /// ssthresh = 20 000 / 2 = 10 000, the fast retransmit of 0; its ACK (20 000, at about
    /// 200 ms) acknowledges all 20 segments and ends the recovery with cwnd = ssthresh = 10 000.
    /// "none" (RFC 6675 / 6937): that ACK grows nothing; "ns3" (ns-3.39's ProcessAck leaving
    /// CA_RECOVERY): congestion avoidance is handed all 20 segments, one segment per window of
    /// bytes acknowledged: 10 000 → 11 000 (the other 10 000 bytes stay counted, below 11 000).
    #[test]
    fn recovery_exit_acked_grows_the_window_on_the_ack_that_ends_recovery_as_ns3() {
        for (ns3, want) in [(false, 10_000), (true, 11_000)] {
            let mut c = cfg(1000, true);
            c.init_cwnd_packets = 20;
            c.prr = true;
            c.recovery_exit_ns3 = ns3;
            let mut first = true;
            let drop = move |p: &Packet, _t: Time| p.seq == 0 && std::mem::replace(&mut first, false);
            let cc = crate::cc::build("newreno", &serde_json::Map::new()).unwrap();
            let mut h = Harness::new(20_000, c, cc, 50 * PS_PER_MS, PS_PER_MS / 10, 0, Box::new(drop));
            h.run_until(300 * PS_PER_MS);
            let exit = h.ack_log.iter().position(|a| a.0 > 150 * PS_PER_MS && !a.2).expect("the recovery ends");
            let t_exit = h.ack_log[exit].0;
            assert!(h.ack_log[exit - 1].2, "in recovery just before");
            let (_, cwnd, ssthresh) = *h.trace.iter().find(|x| x.0 == t_exit).unwrap();
            assert_eq!((cwnd, ssthresh), (want, 10_000), "ns3 = {ns3}");
        }
    }

    /// After a timeout, the ACK that ends the loss state (`loss_exit_acked`) and Cubic's
    /// `slow_start_cap`. 40 segments of 1000 B, initial window 10, SACK, Cubic with β = 0.1
    /// (HyStart off), 60 ms each way, 1 µs per segment, a lost retransmission left to the timer;
    /// 0 and its fast retransmission are lost. Segment i's duplicate ACK comes at 120 ms + i µs;
    /// the third (120.003 ms) starts recovery, ssthresh = cwnd = max(0.1 · 10 000, 2000) = 2000,
    /// and arms the timer at 2.125 RTT (SRTT = R = 120.002 ms, RTTVAR = R/2 · (3/4)² after three
    /// equal samples): it fires at 375.0 ms. The pipe (10 000 − SACKed, the resent 0 counted)
    /// first leaves room at the ninth duplicate: 10 000 goes at 120 ms, its duplicate lets
    /// 11 000 go at 240 ms, and 12 000 at 360 ms (k = 3 new segments). At the timeout ssthresh
    /// stays 2000, cwnd = 1000, 0 is resent; its ACK (495.0 ms) jumps from 0 to 13 000, the
    /// point the loss state runs to:
    /// * "all", cap "ssthresh": cwnd = 1000 + min(13 000, 2000 − 1000) = 2000: 2 segments go;
    /// * "all", cap "none" (ns-3.39's `TcpCubic` slow start): 1000 + 13 000: 14 segments;
    /// * "ns3" (ns-3.39's `ProcessAck` leaving CA_LOSS: (13 000 − 13 000) / 1000 = 0 segments
    ///   counted): cwnd stays 1000, 1 segment, either cap.
    #[test]
    fn loss_exit_acked_and_cubic_slow_start_cap_after_a_timeout() {
        let mut got = Vec::new();
        for (exit_ns3, cap) in [(false, "ssthresh"), (false, "none"), (true, "ssthresh"), (true, "none")] {
            let mut c = cfg(1000, true);
            c.lost_rtx_rto_only = true;
            c.loss_exit_ns3 = exit_ns3;
            let mut zeros = 0;
            let drop = move |p: &Packet, _t: Time| p.seq == 0 && { zeros += 1; zeros <= 2 };
            let mut params = serde_json::Map::new();
            params.insert("beta".into(), 0.1.into());
            params.insert("hystart".into(), "off".into());
            params.insert("slow_start_cap".into(), cap.into());
            let cc = crate::cc::build("cubic", &params).unwrap();
            let mut h = Harness::new(40_000, c, cc, 60 * PS_PER_MS, PS_PER_US, 0, Box::new(drop));
            h.run_until(5_000 * PS_PER_MS);
            assert_eq!(h.f.timeouts, 1, "exit {exit_ns3}, cap {cap}");
            assert_eq!(h.f.retransmits, 2);
            let third = h.sent.iter().filter(|s| s.1 == 0).nth(2).expect("0 resent by the timer").0;
            assert_eq!(third / PS_PER_US, 375_008, "the timeout");
            let before = h.sent.iter().filter(|s| s.0 <= third).count();
            let k = h.sent[..before].iter().filter(|s| s.1 >= 10_000).count();
            // The ACK of the resent 0, an RTT after the timeout (the duplicates before it are of
            // the segments sent in the recovery), and what it let go.
            let exit = h.ack_log.iter().find(|a| a.0 >= third + 120 * PS_PER_MS).expect("the ACK of the resent 0");
            got.push((k, exit.1 - before));
            assert!(h.f.end_ps.is_some());
        }
        assert_eq!(got, vec![(3, 2), (3, 14), (3, 1), (3, 1)]);
    }

    /// The receiver's ECN-Echo (`ce_echo`), segment by segment (1000 B each, ACK per segment):
    /// 1000 (CE), 2000 (CE), 3000 (not CE), 0 (CE, fills the hole), 4000 (CE), 2000 again (CE).
    /// "packet" echoes each one's own mark. "ns3" (ns-3.39's `m_ecnCESeq`): 1000 and 2000 count
    /// (each above the highest CE so far), 3000 has none, 0 and the duplicate 2000 lie below
    /// 2000 and 4000, so their ACKs carry no ECE; 4000 counts. The cumulative ACKs: 0, 0, 0,
    /// 4000, 5000, 5000 either way.
    #[test]
    fn ce_echo_per_packet_or_above_the_highest_as_ns3() {
        for ns3 in [false, true] {
            let mut c = cfg(1000, true);
            c.ce_echo_ns3 = ns3;
            let path = PathInfo { base_rtt_ps: PS_PER_MS, tau_ps: PS_PER_MS, line_rate_bps: 1 };
            let mut f = TcpFlow::new(0, 0, 1, 10_000, 0, 0, false, path, &c);
            let mut acks = Vec::new();
            for (i, &(seq, ce)) in [(1000u64, true), (2000, true), (3000, false), (0, true), (4000, true), (2000, true)].iter().enumerate() {
                let fl = flags::DATA | flags::ECT | if ce { flags::CE } else { 0 };
                let p = Packet { seq, ts_ps: 0, enq_ps: 0, from_port: 0, flow: 0, size_bytes: 1000, payload_bytes: 1000, dst: 1, prio: 0, flags: fl, hops: 0, sack_lo: 0, sack_hi: 0 };
                let mut out = Vec::new();
                f.on_receive(&p, (i as Time + 1) * PS_PER_US, &c, &mut out);
                assert_eq!(out.len(), 1);
                acks.push((out[0].seq, out[0].has(flags::ECE)));
            }
            let ece: Vec<bool> = acks.iter().map(|a| a.1).collect();
            let cum: Vec<u64> = acks.iter().map(|a| a.0).collect();
            assert_eq!(cum, vec![0, 0, 0, 4000, 5000, 5000]);
            if ns3 {
                assert_eq!(ece, vec![true, true, false, false, true, false]);
            } else {
                assert_eq!(ece, vec![true, true, false, true, true, true]);
            }
        }
    }

    /// SACK with PRR, an initial window of 20 segments of 1000 B, lost retransmissions left to the
    /// timer and the window's tail resent as ns-3 (the recovery tests' common setting).
    fn sack_prr_iw20() -> TransportCfg {
        let mut c = cfg(1000, true);
        c.init_cwnd_packets = 20;
        c.prr = true;
        c.lost_rtx_rto_only = true;
        c.recovery_tail_resend = true;
        c
    }

    /// The loss of `partial_ack_resends_the_head_and_times_as_ns3` and `rtt_samples_every_ack_or_as_ns3`,
    /// run for 20 s: NewReno with SACK and PRR, IW 20 segments of 1000 B, 50 ms one way, 0.1 ms
    /// per segment, lost retransmissions left to the timer, the window's tail resent as ns-3;
    /// the first transmissions of 0 and of everything from 4000 on are lost. `set` adjusts the
    /// configuration.
    fn head_and_tail_lost(set: impl FnOnce(&mut TransportCfg)) -> Harness<'static> {
        let mut c = sack_prr_iw20();
        set(&mut c);
        let mut first = std::collections::HashSet::new();
        let drop = move |p: &Packet, _t: Time| (p.seq == 0 || p.seq >= 4000) && first.insert(p.seq);
        let cc = crate::cc::build("newreno", &serde_json::Map::new()).unwrap();
        let mut h = Harness::new(20_000, c, cc, 50 * PS_PER_MS, PS_PER_MS / 10, 0, Box::new(drop));
        h.run_until(20_000 * PS_PER_MS);
        h
    }

    /// A partial ACK in SACK recovery (`partial_ack`, `recovery_timer`). NewReno with SACK and
    /// PRR, IW 20 segments of 1000 B, 50 ms one way, 0.1 ms per segment, min RTO 200 ms; the
    /// first transmissions of 0 and of everything from 4000 on are lost. Segments 1000..3000
    /// come back as duplicate ACKs at 100.1, 100.2, 100.3 ms (RTT samples 100.1, 100.2, 100.3:
    /// RTO 300.3, 250.3625, 213.0109375 ms by RFC 6298); the third starts recovery
    /// (ssthresh 10 000, RecoverFS 20 000) and resends 0, whose ACK (4000, 200.4 ms, RTT 100.1 ms:
    /// RTO 200 ms) is partial, and PRR allows nothing more (ceil(2000·10 000/20 000) − 1000 = 0).
    ///   "window", "restart": the timer, restarted at 100.3 ms (313.3 ms) and at 200.4 ms, fires at
    ///   400.4 ms and resends 4000 (one timeout).
    ///   partial_ack "ns3" (ns-3.39's `DoRetransmit` on a partial ACK): 4000 goes at 200.4 ms, and
    ///   each partial ACK sends the next head, one RTT apart: 5000 at 300.5, 6000 at 400.6 ms. With
    ///   "restart" every partial ACK restarts the timer: no timeout. With recovery_timer "ns3"
    ///   recovery leaves the timer of the first send (1000 ms), only the first partial ACK restarts
    ///   it (400.4 ms), and it fires there: 5000, resent at 300.5 ms, goes again (one timeout).
    #[test]
    fn partial_ack_resends_the_head_and_times_as_ns3() {
        let ms = |x: f64| (x * PS_PER_MS as f64).round() as Time;
        for (prtx, timer) in [(false, false), (true, false), (true, true)] {
            let h = head_and_tail_lost(|c| {
                c.partial_ack_rtx = prtx;
                c.recovery_timer_ns3 = timer;
            });
            let rtx: Vec<(Time, u64)> = h.sent.iter().filter(|s| s.2).map(|s| (s.0, s.1)).take(4).collect();
            // (RTO deadline, RTO) after the third duplicate ACK (the sixth event).
            let at_recovery = (h.state_log[5].2, h.state_log[5].3);
            assert_eq!(at_recovery.1, ms(213.0109375));
            assert!(h.f.finished());
            match (prtx, timer) {
                (false, false) => {
                    assert_eq!(at_recovery.0, ms(100.3) + ms(213.0109375));
                    assert_eq!(&rtx[..2], &[(ms(100.3), 0), (ms(400.4), 4000)]);
                    assert_eq!(h.f.timeouts, 1);
                }
                (true, false) => {
                    assert_eq!(rtx, vec![(ms(100.3), 0), (ms(200.4), 4000), (ms(300.5), 5000), (ms(400.6), 6000)]);
                    assert_eq!(h.f.timeouts, 0);
                }
                _ => {
                    assert_eq!(at_recovery.0, ms(1000.0), "the timer of the first send runs on");
                    assert_eq!(rtx, vec![(ms(100.3), 0), (ms(200.4), 4000), (ms(300.5), 5000), (ms(400.4), 5000)]);
                    assert_eq!(h.f.timeouts, 1);
                }
            }
        }
    }

    /// Which holes SACK recovery presumes lost (`loss_marking`). NewReno with SACK and PRR, IW 20
    /// segments of 1000 B, 40 000 B to send, 50 ms one way, 0.1 ms per segment, partial ACKs and
    /// the window's tail as ns-3; the first transmissions of 0 and 19 000 (the last of the IW) are
    /// lost. Segments 1000..18 000 return as duplicate ACKs at 100.1..101.8 ms; the third starts
    /// recovery (ssthresh 10 000, RecoverFS 20 000) and resends 0 at 100.3 ms. PRR lets a new
    /// segment go when ceil(delivered · 10 000 / 20 000) − out reaches 1000 (100.6, 100.8, 101.0,
    /// 101.2 ms), then, once the pipe is at ssthresh, one per ACK (101.5..101.8): 20 000..27 000.
    /// Both rules agree so far: 19 000 lies at the highest SACKed byte, so it is no hole. The ACK of
    /// 0's retransmission (200.4 ms) is partial, its new head 19 000 not presumed lost: 28 000 goes
    /// (`partial_ack`). Then the SACKs of 20 000, 21 000, 22 000 arrive at 200.7, 200.9, 201.1 ms.
    ///   "highest_sack": at 200.7 ms 19 000 lies below the highest SACKed byte, presumed lost and
    ///   out of the pipe (8000 B: room for two), so 19 000 and 29 000 go at once.
    ///   "ns3" (ns-3.39's `UpdateLostCount`): 19 000 is lost only with three SACKed segments above
    ///   it; until then it stays in the pipe (9000 B: room for one) and new data goes, 29 000 at
    ///   200.7 and 30 000 at 200.9 ms; the third SACK (201.1 ms) marks it and NextSeg's rule 1
    ///   resends it before 31 000.
    #[test]
    fn loss_marking_highest_sack_or_three_sacked_segments_as_ns3() {
        let ms = |x: f64| (x * PS_PER_MS as f64).round() as Time;
        for ns3 in [false, true] {
            let mut c = sack_prr_iw20();
            c.partial_ack_rtx = true;
            c.loss_marking_ns3 = ns3;
            let mut first = std::collections::HashSet::new();
            let drop = move |p: &Packet, _t: Time| (p.seq == 0 || p.seq == 19_000) && first.insert(p.seq);
            let cc = crate::cc::build("newreno", &serde_json::Map::new()).unwrap();
            let mut h = Harness::new(40_000, c, cc, 50 * PS_PER_MS, PS_PER_MS / 10, 0, Box::new(drop));
            h.run_until(2_000 * PS_PER_MS);
            assert!(h.f.finished());
            assert_eq!(h.f.timeouts, 0);
            let sent: Vec<(Time, u64, bool)> = h.sent.iter().copied().filter(|s| s.0 > ms(100.0)).collect();
            let recovery: Vec<(Time, u64)> = sent.iter().take(9).map(|s| (s.0, s.1)).collect();
            let t = [100.3, 100.6, 100.8, 101.0, 101.2, 101.5, 101.6, 101.7, 101.8];
            assert_eq!(recovery, t.iter().zip([0, 20_000, 21_000, 22_000, 23_000, 24_000, 25_000, 26_000, 27_000]).map(|(&x, q)| (ms(x), q)).collect::<Vec<_>>());
            let after: Vec<(Time, u64, bool)> = sent[9..14].to_vec();
            if ns3 {
                assert_eq!(after, vec![(ms(200.4), 28_000, false), (ms(200.7), 29_000, false), (ms(200.9), 30_000, false),
                                       (ms(201.1), 19_000, true), (ms(201.1), 31_000, false)]);
            } else {
                assert_eq!(after, vec![(ms(200.4), 28_000, false), (ms(200.7), 19_000, true), (ms(200.7), 29_000, false),
                                       (ms(200.9), 30_000, false), (ms(201.1), 31_000, false)]);
            }
        }
    }

    /// Which ACKs give an RTT sample (`rtt_samples`), on `partial_ack_resends_the_head_and_times_as_ns3`'s
    /// loss: IW 20 segments of 1000 B, no handshake (RTO 1000 ms until a sample), 50 ms one way,
    /// 0.1 ms per segment; the first transmissions of 0 and of everything from 4000 on are lost.
    ///   "every_ack": the three duplicate ACKs (100.1, 100.2, 100.3 ms) give samples, RTO 213.0109375 ms
    ///   at the recovery; the timer, restarted by the partial ACK at 200.4 ms, fires at 400.4 ms.
    ///   "ns3" (ns-3.39's `EstimateRtt`): duplicate ACKs give none, nor does the partial ACK of the
    ///   resent 0 (the oldest segment was resent): RTO 1000 ms at the recovery, the timer fires at
    ///   1200.4 ms, RTO doubles to 2000 ms; everything after is resent data (below what had been
    ///   sent at the timeout), so no sample ever comes, and the next ACK of new data sets the RTO
    ///   from the estimator again (`NewAck`): the initial 1000 ms, the backoff gone.
    /// The SYN-ACK's RTT sample (`rtt_samples`), with ns-3's 1 ms timestamps: a handshake from
    /// 0.5 ms, 0.4 ms one way, so the SYN-ACK echoes tick 0 and arrives in tick 1: a sample of
    /// 1000 µs with either rule (ns-3.39 puts the first SYN in `m_history`, a zero-length entry
    /// the SYN-ACK covers), SRTT 1000 µs and RTO max(1000 + 4 · 500, 10 000) µs. With the SYN lost
    /// and resent at the initial RTO (1000 ms), "every_ack" still samples the echo (tick 1000.5 →
    /// 1001: 1000 µs); "ns3" takes none (the resent SYN's entry is marked) and the RTO stays the
    /// SYN's doubled 2000 ms.
    #[test]
    fn syn_ack_gives_an_rtt_sample_unless_the_syn_was_resent_as_ns3() {
        let us = |x: u64| x * PS_PER_US;
        for ns3 in [false, true] {
            for syn_lost in [false, true] {
                let mut c = cfg(1000, true);
                c.handshake = true;
                c.timestamp_tick_ps = PS_PER_MS;
                c.min_rto_ps = 10 * PS_PER_MS;
                c.rtt_samples_ns3 = ns3;
                let cc = crate::cc::build("newreno", &serde_json::Map::new()).unwrap();
                let mut h = Harness::new(10_000, c, cc, us(400), us(1), us(500), Box::new(|_: &Packet, _| false));
                let syn_at = if syn_lost {
                    h.ev.clear(); // the SYN is lost
                    us(500) + 1000 * PS_PER_MS
                } else {
                    us(500)
                };
                // The SYN-ACK arrives 0.8 ms after the SYN; stop before the first data ACK.
                h.run_until(syn_at + us(900));
                assert_eq!(h.f.state, SendState::Established, "ns3 {ns3}, SYN lost {syn_lost}");
                assert!(h.sent.is_empty() || h.sent[0].0 >= syn_at + us(800));
                if syn_lost && ns3 {
                    assert!(!h.f.has_rtt, "a resent SYN gives no sample");
                    assert_eq!(h.f.rto_ps, 2000 * PS_PER_MS, "the SYN's timeout doubled it (ns-3: cnTimeout << 1)");
                } else {
                    assert!(h.f.has_rtt, "ns3 {ns3}, SYN lost {syn_lost}");
                    assert_eq!(h.f.srtt_ps, 1000.0 * PS_PER_US as f64);
                    assert_eq!(h.f.rto_ps, 10 * PS_PER_MS, "max(SRTT + 4 RTTVAR = 3 ms, the 10 ms minimum)");
                }
            }
        }
    }

    #[test]
    fn rtt_samples_every_ack_or_as_ns3() {
        let ms = |x: f64| (x * PS_PER_MS as f64).round() as Time;
        for ns3 in [false, true] {
            let h = head_and_tail_lost(|c| c.rtt_samples_ns3 = ns3);
            assert!(h.f.finished());
            assert_eq!(h.f.timeouts, 1, "ns3 {ns3}");
            let rto_at_recovery = h.state_log[5].3;
            let second_rtx = h.sent.iter().filter(|s| s.2).nth(1).expect("a second retransmission");
            if ns3 {
                assert_eq!(rto_at_recovery, ms(1000.0));
                assert_eq!((second_rtx.0, second_rtx.1), (ms(1200.4), 4000));
                assert!(!h.f.has_rtt, "no sample at all");
                assert_eq!(h.f.rto_ps, ms(1000.0), "the backoff dropped by an ACK of new data");
            } else {
                assert_eq!(rto_at_recovery, ms(213.0109375));
                assert_eq!((second_rtx.0, second_rtx.1), (ms(400.4), 4000));
                assert!(h.f.rto_ps < ms(400.0), "samples after the timeout bring the RTO back down");
            }
        }
    }

        /// PRR (RFC 6937) on a hand-made loss. IW 20 segments of 1000 B (NewReno, no handshake),
    /// segment 1 lost once. Segments 2..20 come back as 19 duplicate ACKs with SACK; the 3rd
    /// starts recovery: ssthresh = 10 000, RecoverFS = 20 000. On the j-th ACK of the recovery
    /// (j = 1..17), DeliveredData = 1000, prr_delivered = 1000·j, SACKed = j + 2 segments and
    /// pipe = 20 + (new segments sent) − (j + 2) − (1 while segment 1 is not yet resent).
    ///   pipe > ssthresh: sndcnt = ceil(prr_delivered·10 000/20 000) − prr_out, the first ACK
    ///     sending at least one segment (the fast retransmit);
    ///   else: sndcnt = min(ssthresh − pipe, max(prr_delivered − prr_out, DeliveredData) + MSS).
    /// By hand: j = 1: pipe 16, sndcnt 500 → 1 segment (retransmission of 1), prr_out 1000;
    /// j = 2, 3: 0; j = 4: 2000 − 1000 → one new segment; then one every second ACK (j = 6, 8,
    /// 10, pipe 13, 12, 11); j = 11: 0; j = 12: pipe = 10 = ssthresh, SSRB, ssthresh − pipe = 0;
    /// j = 13..17: pipe 9, one segment each. When segment 1's retransmission is acknowledged,
    /// recovery ends with cwnd = ssthresh = 10 000.
    #[test]
    fn prr_sends_as_rfc6937_on_a_hand_made_loss() {
        let mut h = first_segment_lost(true);
        h.run_until(150 * PS_PER_MS);
        let log = &h.ack_log;
        let first = log.iter().position(|a| a.2).expect("recovery");
        assert_eq!(first, 2, "the third duplicate ACK starts recovery");
        let sent_per_ack: Vec<usize> = (first..first + 17).map(|k| log[k].1 - log[k - 1].1).collect();
        assert_eq!(sent_per_ack, vec![1, 0, 0, 1, 0, 1, 0, 1, 0, 1, 0, 0, 1, 1, 1, 1, 1]);
        assert_eq!(h.f.win.ssthresh_bytes, 10_000);
        // The segment sent on the first recovery ACK is the retransmission of segment 1.
        let rtx: Vec<_> = h.sent.iter().filter(|s| s.2).collect();
        assert_eq!(rtx.len(), 1);
        assert_eq!(rtx[0].1, 0);
        let t_first = log[first].0;
        assert_eq!(rtx[0].0, t_first);
        h.run_until(260 * PS_PER_MS);
        let exit = h.ack_log.iter().position(|a| !a.2 && a.0 > t_first).expect("recovery ends");
        let t_exit = h.ack_log[exit].0;
        let cw = h.trace.iter().find(|x| x.0 == t_exit).unwrap().1;
        assert_eq!(cw, 10_000, "cwnd = ssthresh at the end of recovery");
    }

    /// PRR's slow-start reduction bound on every ACK ("ssrb", RFC 6937) or, as ns-3.39's
    /// `TcpPrrRecovery::DoRecovery`, only on an ACK that cumulatively acknowledges a
    /// retransmission ("ns3"; else DeliveredData). IW 20 segments of 1000 B (NewReno, SACK, no
    /// handshake), the first transmissions of segments 0..9 lost. Segments 10..19 come back as
    /// duplicate ACKs; the 3rd (SACK of 10..12) starts recovery: ssthresh 10 000, RecoverFS
    /// 20 000. On the j-th recovery ACK (j = 1..8, SACK of segment 11 + j), DeliveredData = 1000,
    /// prr_delivered = 1000·j, SACKed j + 2 segments, pipe = 20 − (j + 2) − (holes not yet
    /// resent), below ssthresh from the start. The first one's share (RFC 6937, ns-3.39's
    /// EnterRecovery) is computed before the fast retransmit of 0, which is part of it:
    ///   "ssrb", j = 1: prr_out 0, pipe 20 − 3 − 10 = 7, limit max(1000, 1000) + 1000 = 2000,
    ///     ssthresh − pipe = 3000: 0 and 1 (2 sent); j = 2: pipe 20 − 4 − 8 = 8, limit
    ///     max(2000 − 2000, 1000) + 1000 = 2000 = ssthresh − pipe: 2 and 3; j ≥ 3: pipe 9,
    ///     ssthresh − pipe = 1000: one each (4..9, the last hole at j = 8);
    ///   "ns3", no ACK of a retransmission: limit = DeliveredData = 1000: one each (0 alone at
    ///     j = 1, then 1..7).
    /// The 9th recovery ACK (ack 1000) acknowledges the retransmitted 0: prr_delivered 9000;
    ///   "ssrb": prr_out 10 000, pipe 19 − 10 = 9: min(1000, 2000): one new segment (20);
    ///   "ns3": prr_out 8000, pipe 19 − 10 − 2 (8 and 9 not resent) = 7, the bound
    ///     max(1000, 1000) + 1000 = 2000 < ssthresh − pipe = 3000: segments 8 and 9 (2 sent).
    #[test]
    fn prr_reduction_bound_on_every_ack_or_on_acks_of_retransmissions() {
        for (ns3, want) in [(false, vec![2, 2, 1, 1, 1, 1, 1, 1, 1]), (true, vec![1, 1, 1, 1, 1, 1, 1, 1, 2])] {
            let mut c = cfg(1000, true);
            c.init_cwnd_packets = 20;
            c.prr = true;
            c.prr_ssrb_rtx_acked = ns3;
            let mut first_tx = std::collections::HashSet::new();
            let drop = move |p: &Packet, _t: Time| p.seq < 10_000 && first_tx.insert(p.seq);
            let cc = crate::cc::build("newreno", &serde_json::Map::new()).unwrap();
            let mut h = Harness::new(1_000_000, c, cc, 50 * PS_PER_MS, PS_PER_MS / 10, 0, Box::new(drop));
            h.run_until(210 * PS_PER_MS);
            let log = &h.ack_log;
            let first = log.iter().position(|a| a.2).expect("recovery");
            assert_eq!(first, 2, "the third duplicate ACK starts recovery");
            let sent_per_ack: Vec<usize> = (first..first + 9).map(|k| log[k].1 - log[k - 1].1).collect();
            assert_eq!(sent_per_ack, want, "ns3 = {ns3}");
            assert_eq!(h.f.win.ssthresh_bytes, 10_000);
            // What each sent: the holes in order, then new data from 20 000.
            let seqs: Vec<u64> = h.sent.iter().skip(20).take(11).map(|s| s.1 / 1000).collect();
            assert_eq!(seqs, vec![0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 20], "ns3 = {ns3}");
            let rtx = h.sent.iter().filter(|s| s.2).count();
            assert_eq!(rtx, 10);
        }
    }

    /// RFC 6675 recovery on the same loss as the PRR test: the fast retransmit of segment 1
    /// goes on the first recovery ACK (§5 step 4.3) although pipe (16) exceeds cwnd = ssthresh
    /// = 10 segments; afterwards a segment goes whenever cwnd − pipe ≥ 1 SMSS, pipe = 20 +
    /// (new segments) − (j + 2): from j = 9 on, one per ACK.
    #[test]
    fn rfc6675_fast_retransmit_goes_at_once() {
        let mut h = first_segment_lost(false);
        h.run_until(150 * PS_PER_MS);
        let log = &h.ack_log;
        let first = log.iter().position(|a| a.2).expect("recovery");
        let sent_per_ack: Vec<usize> = (first..first + 17).map(|k| log[k].1 - log[k - 1].1).collect();
        assert_eq!(sent_per_ack, vec![1, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1]);
        let rtx: Vec<_> = h.sent.iter().filter(|s| s.2).collect();
        assert_eq!((rtx.len(), rtx[0].1, rtx[0].0), (1, 0, log[first].0));
    }

    fn data_pkt(seq: u64, len: u64, ce: bool, ts: Time) -> Packet {
        Packet { seq, ts_ps: ts, flow: 0, size_bytes: len as u32, payload_bytes: len as u32, dst: 1, flags: flags::DATA | flags::ECT | if ce { flags::CE } else { 0 }, ..Default::default() }
    }

    /// RFC 8257 §3.2 with delayed ACKs (m = 2): segment 1 unmarked (ACK delayed), segment 2
    /// CE-marked: the receiver first ACKs segment 1 (ack 1000) without ECE, echoing segment
    /// 1's send time, then segment 2 (ack 2000) with ECE; segment 3 marked too and segment 4
    /// unmarked: one ACK of 3 with ECE, then 4 without.
    #[test]
    fn ce_change_acks_earlier_segments_with_the_old_ece() {
        let mut c = cfg(1000, true);
        c.delayed_ack_packets = 2;
        let path = PathInfo::default();
        let mut f = TcpFlow::new(0, 0, 1, 10_000, 0, 0, false, path, &c);
        let mut out = Vec::new();
        assert!(!f.on_receive(&data_pkt(0, 1000, false, 11), 100, &c, &mut out));
        assert!(out.is_empty() && f.delack.armed());
        f.on_receive(&data_pkt(1000, 1000, true, 22), 200, &c, &mut out);
        let got: Vec<_> = out.iter().map(|a| (a.seq, a.has(flags::ECE), a.ts_ps)).collect();
        assert_eq!(got, vec![(1000, false, 11), (2000, true, 22)]);
        out.clear();
        f.on_receive(&data_pkt(2000, 1000, true, 33), 300, &c, &mut out);
        assert!(out.is_empty(), "same CE state: delayed");
        f.on_receive(&data_pkt(3000, 1000, false, 44), 400, &c, &mut out);
        let got: Vec<_> = out.iter().map(|a| (a.seq, a.has(flags::ECE), a.ts_ps)).collect();
        assert_eq!(got, vec![(3000, true, 33), (4000, false, 44)]);
    }

    /// What a run on the harness path did: every data packet sent, every ACK, the window after
    /// every event, and the flow's results.
    type RunRecord = (Vec<(Time, u64, bool)>, Vec<(u64, Time, u8, u32, u32)>, Vec<(Time, u64, u64)>, Option<Time>, u32, u32, Vec<(u64, u64, Time, Time, u64)>);

    fn lossy_run(cc_name: &str, sack: bool, prr: bool, handshake: bool, delack: u32, general_only: bool) -> RunRecord {
        lossy_run_traced(cc_name, sack, prr, handshake, delack, general_only, false, false).0
    }

    /// `lossy_run`, the flow traced if `traced`, with ns-3's sending on duplicate ACKs and after
    /// a timeout if `ns3_loss` (`limited_transmit`, `loss_exit_acked = "ns3"`, Cubic's
    /// `slow_start_cap = "none"`, `rtt_samples = "ns3"`): the record and the trace's rows.
    #[allow(clippy::too_many_arguments)]
    fn lossy_run_traced(cc_name: &str, sack: bool, prr: bool, handshake: bool, delack: u32, general_only: bool, traced: bool, ns3_loss: bool) -> (RunRecord, Vec<TcpTraceRecord>) {
        let mut c = cfg(1000, sack);
        c.limited_transmit = ns3_loss;
        c.loss_exit_ns3 = ns3_loss;
        c.rtt_samples_ns3 = ns3_loss;
        c.loss_marking_ns3 = ns3_loss && sack;
        c.prr = prr;
        c.handshake = handshake;
        c.delayed_ack_packets = delack;
        // Segments 5 and 34..37 are lost once (one recovery each), everything sent in a 10 ms
        // blackout at 60 ms (a timeout armed by a new ACK), and from 400 ms on each segment whose
        // index is 5 mod 29 once; 10 ms each way, 10 µs per segment.
        let mut lost_once = std::collections::HashSet::new();
        let drop = move |p: &Packet, t: Time| {
            let k = p.seq / 1000;
            let pick = k == 5 || (34..38).contains(&k) || (t >= 400 * PS_PER_MS && k % 29 == 5);
            (t >= 60 * PS_PER_MS && t < 70 * PS_PER_MS) || (pick && lost_once.insert(p.seq))
        };
        let mut params = serde_json::Map::new();
        if ns3_loss && cc_name == "cubic" {
            params.insert("slow_start_cap".into(), "none".into());
        }
        let cc = crate::cc::build(cc_name, &params).unwrap();
        let (size, one_way, tx) = (3_000_000, 10 * PS_PER_MS, 10 * crate::engine::PS_PER_US);
        let mut h = if traced { Harness::traced(size, c, cc, one_way, tx, 0, Box::new(drop)) } else { Harness::new(size, c, cc, one_way, tx, 0, Box::new(drop)) };
        h.f.general_only = general_only;
        h.run_until(60_000 * PS_PER_MS);
        let acks = h.acks.iter().map(|a| (a.seq, a.ts_ps, a.flags, a.sack_lo, a.sack_hi)).collect();
        let rows = h.f.trace.take().map(|t| t.rows).unwrap_or_default();
        ((h.sent, acks, h.trace, h.f.end_ps, h.f.retransmits, h.f.timeouts, h.state_log), rows)
    }

    /// `[output] tcp_trace_*` on the lossy runs: the trace changes nothing; its send rows are
    /// exactly the data packets that left (time, first byte, and a retransmission when it
    /// starts below the highest byte sent before); a timeout row per timeout; the fast paths
    /// record what the general paths record.
    #[test]
    fn trace_rows_are_the_packets_sent_on_both_paths() {
        use crate::metrics::{TRACE_ACK, TRACE_SEND, TRACE_SYN_ACK, TRACE_TIMEOUT};
        for (cc_name, sack, prr, handshake, delack) in [("dctcp", true, false, false, 1), ("cubic", true, true, true, 1), ("newreno", false, false, false, 1), ("newreno", true, false, true, 2)] {
            let what = format!("{cc_name} sack={sack} prr={prr} handshake={handshake} delack={delack}");
            let plain = lossy_run(cc_name, sack, prr, handshake, delack, false);
            let (fast, rows) = lossy_run_traced(cc_name, sack, prr, handshake, delack, false, true, false);
            let (general, rows_general) = lossy_run_traced(cc_name, sack, prr, handshake, delack, true, true, false);
            assert!(plain == fast && fast == general, "{what}: tracing changed the run");
            assert_eq!(format!("{rows:?}"), format!("{rows_general:?}"), "{what}: fast and general paths trace differently");
            let sends: Vec<(Time, u64, bool)> = rows.iter().filter(|r| r.event == TRACE_SEND).map(|r| (r.time_ps, r.seq, r.retx)).collect();
            assert_eq!(sends, fast.0, "{what}: send rows");
            assert_eq!(rows.iter().filter(|r| r.event == TRACE_TIMEOUT).count() as u32, fast.5, "{what}: timeout rows");
            assert_eq!(rows.iter().filter(|r| r.event == TRACE_SYN_ACK).count(), handshake as usize, "{what}");
            assert!(rows.windows(2).all(|w| w[0].time_ps <= w[1].time_ps), "{what}: time order");
            assert!(rows.iter().any(|r| r.state == crate::metrics::STATE_RECOVERY) && rows.iter().any(|r| r.state == crate::metrics::STATE_LOSS), "{what}: recovery and loss seen");
            let last = rows.last().unwrap();
            assert_eq!((last.event, last.seq, last.snd_una), (TRACE_ACK, 3_000_000, 3_000_000), "{what}");
        }
    }

    /// The fast paths of `on_ack` (new ACK out of recovery) and `on_receive` (in-order segment,
    /// an ACK per segment) do exactly what the general paths do: the same packets at the same
    /// times, the same window after every event, on runs with single losses, a timeout,
    /// SACK and NewReno recovery, PRR, a handshake and delayed ACKs, and ns-3's sending on
    /// duplicate ACKs and after a timeout (`ns3_loss`: the ACKs of the go-back after the
    /// blackout's timeout carry no SACK block, so they reach the fast path's tests in the loss
    /// state).
    #[test]
    fn fast_paths_match_the_general_paths() {
        for (cc_name, sack, prr, handshake, delack, ns3_loss) in [("dctcp", true, false, false, 1, false), ("cubic", true, true, true, 1, false), ("newreno", false, false, false, 1, false), ("newreno", true, false, true, 2, false), ("cubic", false, false, false, 2, false),
                                                                 ("cubic", true, true, true, 1, true), ("newreno", false, false, false, 1, true)] {
            let fast = lossy_run_traced(cc_name, sack, prr, handshake, delack, false, false, ns3_loss).0;
            let general = lossy_run_traced(cc_name, sack, prr, handshake, delack, true, false, ns3_loss).0;
            let what = format!("{cc_name} sack={sack} prr={prr} handshake={handshake} delack={delack} ns3_loss={ns3_loss}");
            assert!(fast.3.is_some() && fast.4 > 50 && fast.5 >= 1, "{what}: the run must finish after losses and a timeout: {:?} {} {}", fast.3, fast.4, fast.5);
            assert_eq!(fast.0.len(), general.0.len(), "{what}: data packets sent");
            assert!(fast.0 == general.0, "{what}: data packets differ");
            assert!(fast.1 == general.1, "{what}: ACKs differ");
            assert!(fast.2 == general.2, "{what}: window traces differ");
            assert!(fast.6 == general.6, "{what}: sequence/timer state differs");
            assert_eq!((fast.3, fast.4, fast.5), (general.3, general.4, general.5), "{what}: results");
        }
    }

    #[test]
    fn whole_ps_equals_the_unsigned_cast_below_2_pow_63() {
        // Every RTT estimate the transport converts: fractions, exact integers, the largest
        // integers f64 holds exactly, and the last values below 2^63.
        let mut xs = vec![0.0, 0.25, 0.999_999, 1.0, 1.5, 12_345.678, 1e9 + 0.5, 2f64.powi(52) + 0.5, 2f64.powi(53), 2f64.powi(53) + 2.0];
        xs.extend((0..64).map(|k| 2f64.powi(k) * 1.337));
        let below = f64::from_bits((2f64.powi(63)).to_bits() - 1); // largest f64 below 2^63
        xs.push(below);
        for x in xs.into_iter().filter(|&x| x < 2f64.powi(63)) {
            assert_eq!(whole_ps(x), x as u64, "x = {x}");
        }
        assert_eq!(whole_ps(below), 9_223_372_036_854_774_784);
    }

    #[test]
    fn intervals_merge() {
        let mut v = Vec::new();
        insert_interval(&mut v, 10, 20);
        insert_interval(&mut v, 30, 40);
        insert_interval(&mut v, 20, 30);
        assert_eq!(v, vec![(10, 40)]);
        insert_interval(&mut v, 50, 60);
        insert_interval(&mut v, 5, 8);
        assert_eq!(v, vec![(5, 8), (10, 40), (50, 60)]);
        insert_interval(&mut v, 7, 55);
        assert_eq!(v, vec![(5, 60)]);
    }
}

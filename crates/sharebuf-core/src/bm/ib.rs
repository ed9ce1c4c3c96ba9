//! Cisco Intelligent Buffer (IB) as on Nexus 9000 switches (FB.md §6.2, ABM.md §4.1,
//! FAB.md §2; ns3-datacenter notes §2 for the ABM authors' variant).
//!
//! Admission = Dynamic Thresholds (T = α_q·(B − Q(t)), Choudhury & Hahne) followed by
//! Approximate Fair Drop (AFD): an elephant that passed DT is dropped with probability
//!
//!   p = max(0, 1 − min(k·M, M_fair) / (k·M))        (k = `afd_scale`)
//!
//! where M is its arrivals in the previous AFD window and M_fair the queue's fair share,
//! updated every window by the PI law M_fair ← max(0, M_fair − a·(Q_now − Q_ref) + b·(Q_old − Q_ref)),
//! and only while the queue holds more than `afd_min_queue_bytes`. Two modes:
//!
//! - `mode = "nexus"` (default): AFD per *flow*; only flows the elephant trap has caught
//!   (more than `etrap_bytes` since the flow last went idle for `flow_idle_us`) are subject
//!   to AFD; M in bytes; M_fair starts at (and is capped by) the port's line rate per window;
//!   Dynamic Packet Prioritization (DPP) on; mice get `headroom_bytes` above their DT threshold.
//! - `mode = "abm_code"`: the ABM authors' ns-3 variant (notes §2): AFD per *queue* (all packets
//!   of the queue share one counter, no elephant trap), M in packets, k = 15, M_fair₀ = 4e6,
//!   no cap, AFD only above 150 KiB, DPP off, no headroom.
//!
//! DPP: `classify` moves a packet among the first `dpp_packets` of its flow to the priority
//! queue `dpp_queue` (the fast lane); there it is admitted against that queue's α, is exempt
//! from AFD and (nexus) may use the short-flow headroom. `dpp_requeue = false` leaves it in its
//! own queue with only the priority queue's α.

use super::{check_positive, Admission, BmContext, BufferManager, BufferState, Params, QueueRef, Scheme};
use crate::engine::{Time, PS_PER_US};
use crate::packet::Packet;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::collections::HashMap;

#[derive(Clone, Copy, Default)]
struct FlowState {
    /// Bytes since the flow (re)started (elephant trap).
    bytes: u64,
    /// Packets since the flow (re)started (DPP).
    pkts: u32,
    last_seen: Time,
    /// AFD arrivals in the window `win` and in the window before it.
    m_cur: f64,
    m_last: f64,
    win: u64,
}

pub struct IntelligentBuffer {
    alpha: Vec<f64>,
    afd: bool,
    afd_per_flow: bool,
    count_packets: bool,
    window_ps: Time,
    gain_a: f64,
    gain_b: f64,
    qref: f64,
    scale: f64,
    mfair_max: Vec<f64>,
    min_q: u64,
    /// Per (port, queue): fair share, queue length at the last update, arrivals this/last window.
    mfair: Vec<f64>,
    q_old: Vec<f64>,
    m_cur: Vec<f64>,
    m_last: Vec<f64>,
    need_flows: bool,
    flows: HashMap<u64, FlowState>,
    etrap_bytes: u64,
    idle_ps: Time,
    dpp: bool,
    dpp_packets: u32,
    dpp_queue: usize,
    /// DPP moves the packet to `dpp_queue` (true) or only gives it that queue's α (false).
    dpp_requeue: bool,
    headroom: f64,
    ticks: u64,
    rng: Xoshiro256PlusPlus,
}

/// Headroom above the DT threshold for mice/DPP packets in `nexus` mode (FB §6.2 "IB uses
/// headroom for short flows"; value ours: one BDP of the papers' 10G/10 µs fabric). ABM's
/// headroom "similar to IB" (ABM §4.1) uses the same value.
pub const HEADROOM_BYTES: f64 = 100_000.0;

pub fn build(p: &Params, ctx: &BmContext) -> Result<Scheme, String> {
    Ok(build_ib(p, ctx)?.into())
}

fn build_ib(p: &Params, ctx: &BmContext) -> Result<IntelligentBuffer, String> {
    p.allow_only(
        "ib",
        &[
            "mode", "alpha", "afd", "afd_per", "afd_count", "afd_window_us", "afd_gain_a", "afd_gain_b", "afd_qref_bytes",
            "afd_mfair0", "afd_mfair_max", "afd_scale", "afd_min_queue_bytes", "etrap_bytes", "flow_idle_us", "dpp",
            "dpp_packets", "dpp_queue", "dpp_requeue", "headroom_bytes",
        ],
    )?;
    let code = p.str_or("mode", "nexus", &["nexus", "abm_code"])? == "abm_code";
    let nq = ctx.n_queues;
    let alpha = p.per_queue("alpha", nq, Some(0.5))?;
    check_positive("alpha", &alpha)?;
    let afd = p.bool_or("afd", true)?;
    let afd_per_flow = p.str_or("afd_per", if code { "queue" } else { "flow" }, &["flow", "queue"])? == "flow";
    let count_packets = p.str_or("afd_count", if code { "packets" } else { "bytes" }, &["packets", "bytes"])? == "packets";
    let window_us = p.f64_or("afd_window_us", 50.0)?;
    // The ABM code's gains act on M in packets ×15; with M in bytes they make the loop a
    // bang-bang oscillator, so the nexus mode scales them by 1/16 (stable for < 9 elephants).
    let g = if code { 1.0 } else { 1.0 / 16.0 };
    let gain_a = p.f64_or("afd_gain_a", 1.8 * g)?;
    let gain_b = p.f64_or("afd_gain_b", 1.7 * g)?;
    // The code's RTTBytes (100,000 B) and 150 KiB were counted on 1,432-byte packets: keep the
    // same number of this scenario's full packets (issue #9 item 6, BmContext::code_bytes).
    let qref = p.f64_or("afd_qref_bytes", ctx.code_bytes(100_000.0))?;
    let scale = p.f64_or("afd_scale", if code { 15.0 } else { 1.0 })?;
    check_positive("afd_window_us", &[window_us])?;
    check_positive("afd_gain_a", &[gain_a])?;
    check_positive("afd_gain_b", &[gain_b])?;
    check_positive("afd_qref_bytes", &[qref])?;
    check_positive("afd_scale", &[scale])?;
    let window_ps = ((window_us * PS_PER_US as f64).round() as Time).max(1);
    // Line-rate arrivals per window, in the unit M is counted in (1500 B packets if packets).
    let line_per_window = |rate: u64| {
        let bytes = rate as f64 / 8.0 * window_ps as f64 / 1e12;
        if count_packets { bytes / 1500.0 } else { bytes }
    };
    let mut mfair0: Vec<f64> = ctx.port_rate_bps.iter().flat_map(|&r| std::iter::repeat(if code { 4e6 } else { line_per_window(r) }).take(nq)).collect();
    let v = p.f64_or("afd_mfair0", f64::NAN)?;
    if !v.is_nan() {
        check_positive("afd_mfair0", &[v])?;
        mfair0.iter_mut().for_each(|m| *m = v);
    }
    let mut mfair_max: Vec<f64> = ctx.port_rate_bps.iter().flat_map(|&r| std::iter::repeat(if code { f64::INFINITY } else { line_per_window(r) }).take(nq)).collect();
    let v = p.f64_or("afd_mfair_max", f64::NAN)?;
    if !v.is_nan() {
        check_positive("afd_mfair_max", &[v])?;
        mfair_max.iter_mut().for_each(|m| *m = v);
    }
    for (m, x) in mfair0.iter_mut().zip(&mfair_max) {
        *m = m.min(*x);
    }
    let min_q = p.f64_or("afd_min_queue_bytes", if code { ctx.code_bytes(150.0 * 1024.0) } else { 0.0 })?;
    let etrap_bytes = p.f64_or("etrap_bytes", 1_048_576.0)?;
    let idle_us = p.f64_or("flow_idle_us", 5000.0)?;
    check_positive("flow_idle_us", &[idle_us])?;
    let dpp = p.bool_or("dpp", !code)?;
    let dpp_packets = p.f64_or("dpp_packets", 72.0)?;
    let dpp_queue = p.f64_or("dpp_queue", 0.0)?;
    let headroom = p.f64_or("headroom_bytes", if code { 0.0 } else { HEADROOM_BYTES })?;
    for (k, v) in [("afd_min_queue_bytes", min_q), ("etrap_bytes", etrap_bytes), ("dpp_packets", dpp_packets), ("headroom_bytes", headroom)] {
        if !(v.is_finite() && v >= 0.0) {
            return Err(format!("switch.bm.{k} = {v}: must be a finite number >= 0"));
        }
    }
    if dpp_queue < 0.0 || dpp_queue.fract() != 0.0 || dpp_queue as usize >= nq {
        return Err(format!("switch.bm.dpp_queue = {dpp_queue}: must be a queue index in 0..{}", nq.saturating_sub(1)));
    }
    let n = ctx.port_rate_bps.len() * nq;
    Ok(IntelligentBuffer {
        alpha,
        afd,
        afd_per_flow,
        count_packets,
        window_ps,
        gain_a,
        gain_b,
        qref,
        scale,
        mfair_max,
        min_q: min_q as u64,
        mfair: mfair0,
        q_old: vec![0.0; n],
        m_cur: vec![0.0; n],
        m_last: vec![0.0; n],
        need_flows: dpp || (afd && afd_per_flow) || headroom > 0.0,
        flows: HashMap::new(),
        etrap_bytes: etrap_bytes as u64,
        idle_ps: ((idle_us * PS_PER_US as f64) as Time).max(1),
        dpp,
        dpp_packets: dpp_packets as u32,
        dpp_queue: dpp_queue as usize,
        dpp_requeue: p.bool_or("dpp_requeue", true)?,
        headroom,
        ticks: 0,
        rng: Xoshiro256PlusPlus::seed_from_u64(ctx.seed),
    })
}

impl IntelligentBuffer {
    /// AFD drop probability for arrivals `m` (previous window) against fair share `mfair`.
    #[inline]
    fn drop_prob(&self, m: f64, mfair: f64) -> f64 {
        let km = self.scale * m.max(1.0);
        (1.0 - km.min(mfair) / km).max(0.0)
    }

    /// Current AFD drop probability of the queue's shared counter (per-queue mode) — for tests
    /// and inspection.
    pub fn queue_drop_prob(&self, st: &BufferState, q: QueueRef) -> f64 {
        let i = st.idx(q);
        self.drop_prob(self.m_last[i], self.mfair[i])
    }
}

impl BufferManager for IntelligentBuffer {
    fn name(&self) -> &'static str {
        "ib"
    }

    fn classifies(&self) -> bool {
        self.dpp && self.dpp_requeue
    }

    /// DPP: a packet among the first `dpp_packets` of its flow (counting this one; the flow
    /// restarts after `flow_idle_us` idle) goes to the priority queue `dpp_queue`.
    fn classify(&mut self, _st: &BufferState, _port: usize, pkt: &Packet, default_queue: usize, now: Time) -> usize {
        let young = match self.flows.get(&pkt.flow_key()) {
            None => true,
            Some(f) => f.pkts < self.dpp_packets || now.saturating_sub(f.last_seen) > self.idle_ps,
        };
        if young {
            self.dpp_queue
        } else {
            default_queue
        }
    }

    fn admit(&mut self, st: &BufferState, q: QueueRef, pkt: &Packet, now: Time) -> Admission {
        let i = st.idx(q);
        let size = pkt.size_bytes as u64;
        let unit = if self.count_packets { 1.0 } else { size as f64 };
        let win = now / self.window_ps;
        // Classify the packet (per-flow state: elephant trap, DPP counter, AFD arrivals).
        let (mut is_dpp, mut is_elephant, mut flow_m) = (false, true, 0.0);
        if self.need_flows {
            let f = self.flows.entry(pkt.flow_key()).or_default();
            if f.pkts > 0 && now.saturating_sub(f.last_seen) > self.idle_ps {
                *f = FlowState::default();
            }
            if f.win != win {
                f.m_last = if f.win + 1 == win { f.m_cur } else { 0.0 };
                f.m_cur = 0.0;
                f.win = win;
            }
            f.last_seen = now;
            f.pkts = f.pkts.saturating_add(1);
            f.bytes += size;
            f.m_cur += unit;
            is_dpp = self.dpp && f.pkts <= self.dpp_packets;
            is_elephant = f.bytes > self.etrap_bytes;
            flow_m = f.m_last;
        }
        self.m_cur[i] += unit;

        // Dynamic Thresholds, with the priority queue's α for DPP packets and headroom for mice.
        let a = if is_dpp { self.alpha[self.dpp_queue] } else { self.alpha[q.queue] };
        let mut t = a * st.remaining_bytes() as f64;
        if !is_elephant || is_dpp {
            t += self.headroom;
        }
        let qlen = st.qbytes(q);
        if (qlen + size) as f64 > t {
            return Admission::Drop;
        }
        // Approximate Fair Drop.
        if !self.afd || is_dpp || qlen <= self.min_q {
            return Admission::Accept;
        }
        let p = if self.afd_per_flow {
            if !is_elephant {
                return Admission::Accept;
            }
            self.drop_prob(flow_m, self.mfair[i])
        } else {
            self.drop_prob(self.m_last[i], self.mfair[i])
        };
        if p > 0.0 && self.rng.gen::<f64>() < p {
            Admission::Drop
        } else {
            Admission::Accept
        }
    }

    fn threshold_bytes(&self, st: &BufferState, q: QueueRef, _pkt: &Packet, _now: Time) -> Option<f64> {
        Some(self.alpha[q.queue] * st.remaining_bytes() as f64)
    }

    fn tick_interval_ps(&self) -> Option<Time> {
        if self.afd {
            Some(self.window_ps)
        } else if self.need_flows {
            Some(self.idle_ps)
        } else {
            None
        }
    }

    fn on_tick(&mut self, st: &BufferState, now: Time) {
        if self.afd {
            for i in 0..self.mfair.len() {
                let qn = st.queue_bytes[i] as f64;
                let m = self.mfair[i] - self.gain_a * (qn - self.qref) + self.gain_b * (self.q_old[i] - self.qref);
                self.mfair[i] = m.clamp(0.0, self.mfair_max[i]);
                self.q_old[i] = qn;
                self.m_last[i] = self.m_cur[i];
                self.m_cur[i] = 0.0;
            }
        }
        // Forget idle flows now and then (bounded memory).
        self.ticks += 1;
        let every = if self.afd { (self.idle_ps / self.window_ps).max(1) } else { 1 };
        if self.need_flows && self.ticks % every == 0 {
            let idle = self.idle_ps;
            self.flows.retain(|_, f| now.saturating_sub(f.last_seen) <= idle);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bm::testutil::*;
    use serde_json::json;

    fn mk(params: serde_json::Value, nq: usize, ports: usize, buffer: u64) -> IntelligentBuffer {
        let params = params.as_object().unwrap().clone();
        let rates = vec![10_000_000_000u64; ports];
        // The ABM code's own data packet (1,400 + 32 B), so its byte constants keep their values.
        let ctx = BmContext { buffer_bytes: buffer, n_queues: nq, port_rate_bps: &rates, base_rtt_ps: 8 * PS_PER_US, seed: 7, switch_index: 0, mss_bytes: 1400, header_bytes: 32 };
        build_ib(&Params::new("switch.bm", &params), &ctx).unwrap()
    }

    fn flow_pkt(flow: u32, size: u32, prio: u8) -> Packet {
        Packet { flow, size_bytes: size, prio, ..Default::default() }
    }

    #[test]
    fn dt_threshold_and_dpp_alpha() {
        let mut bm = mk(json!({"alpha": [1.0, 0.25], "headroom_bytes": 0, "dpp_packets": 2}), 2, 2, 100_000);
        let mut st = state(100_000, 2, 2);
        let q = QueueRef { port: 0, queue: 1 };
        st.on_enqueue(q, 19_000);
        st.on_enqueue(QueueRef { port: 1, queue: 0 }, 1_000);
        // DT: T = 0.25 · 80,000 = 20,000.
        assert_eq!(bm.threshold_bytes(&st, q, &pkt(1_000, 1), 0), Some(20_000.0));
        // The first 2 packets of flow 9 are DPP: α_0 = 1 -> T = 80,000, admitted.
        assert_eq!(bm.admit(&st, q, &flow_pkt(9, 1_500, 1), 0), Admission::Accept);
        assert_eq!(bm.admit(&st, q, &flow_pkt(9, 1_500, 1), 1), Admission::Accept);
        // The third is judged with α_1: 19,000 + 1,500 > 20,000.
        assert_eq!(bm.admit(&st, q, &flow_pkt(9, 1_500, 1), 2), Admission::Drop);
        assert_eq!(bm.admit(&st, q, &flow_pkt(9, 1_000, 1), 3), Admission::Accept);
        // After 5 ms idle the flow starts over as DPP.
        assert_eq!(bm.admit(&st, q, &flow_pkt(9, 1_500, 1), 3 + 5_001 * PS_PER_US), Admission::Accept);
    }

    #[test]
    fn dpp_moves_the_first_packets_of_a_flow_to_the_priority_queue() {
        let mut bm = mk(json!({"alpha": [1.0, 0.25], "headroom_bytes": 0, "dpp_packets": 2}), 2, 2, 100_000);
        assert!(bm.classifies());
        let st = state(100_000, 2, 2);
        let mut send = |t: Time| {
            let p = flow_pkt(9, 1_500, 1);
            let q = bm.classify(&st, 0, &p, 1, t);
            bm.admit(&st, QueueRef { port: 0, queue: q }, &p, t);
            q
        };
        // Packets 1 and 2 go to queue 0 (DPP), the third to its own queue 1.
        assert_eq!((send(0), send(1), send(2)), (0, 0, 1));
        // After the 5 ms idle gap the flow is young again.
        assert_eq!(send(2 + 5_001 * PS_PER_US), 0);
        // With dpp_requeue = false the queue is left alone (only the alpha changes).
        let bm2 = mk(json!({"dpp_requeue": false}), 2, 2, 100_000);
        assert!(!bm2.classifies());
        // In the ABM code's mode DPP is off.
        let bm3 = mk(json!({"mode": "abm_code"}), 2, 2, 100_000);
        assert!(!bm3.classifies());
    }

    #[test]
    fn headroom_for_mice_not_for_elephants() {
        let mut bm = mk(json!({"alpha": 0.25, "headroom_bytes": 5_000, "dpp": false, "etrap_bytes": 3_000, "afd": false}), 1, 1, 100_000);
        let mut st = state(100_000, 1, 1);
        let q = QueueRef { port: 0, queue: 0 };
        st.on_enqueue(q, 20_000);
        // T = 0.25 · 80,000 = 20,000; a mouse may use 5,000 of headroom.
        assert_eq!(bm.admit(&st, q, &flow_pkt(1, 1_500, 0), 0), Admission::Accept);
        assert_eq!(bm.admit(&st, q, &flow_pkt(1, 1_500, 0), 0), Admission::Accept);
        // Flow 1 has now sent 4,500 > 3,000 B: an elephant, no headroom.
        assert_eq!(bm.admit(&st, q, &flow_pkt(1, 1_500, 0), 0), Admission::Drop);
        // 20,000 + 5,001 > 25,000 even for a mouse.
        assert_eq!(bm.admit(&st, q, &flow_pkt(2, 5_001, 0), 0), Admission::Drop);
    }

    #[test]
    fn abm_code_mode_per_queue_afd_probability() {
        // ABM-code AFD with M_fair0 chosen so that one update lands mid-range.
        let mut bm = mk(json!({"mode": "abm_code", "alpha": 1.0, "afd_qref_bytes": 200_000, "afd_mfair0": 370_000}), 2, 2, 10_000_000);
        assert_eq!(bm.tick_interval_ps(), Some(50 * PS_PER_US));
        assert!(!bm.dpp && !bm.afd_per_flow && bm.count_packets && bm.scale == 15.0 && bm.min_q == 153_600);
        let mut st = state(10_000_000, 2, 2);
        let q = QueueRef { port: 0, queue: 1 };
        st.on_enqueue(q, 200_000);
        // Window 0: M_last = 0 (forced to 1): p = 1 − min(15, 370,000)/15 = 0 -> all 4,000 accepted.
        for k in 0..4_000u32 {
            assert_eq!(bm.admit(&st, q, &flow_pkt(k, 1_000, 1), 0), Admission::Accept);
        }
        // Update: M_fair = 370,000 − 1.8·(200,000 − 200,000) + 1.7·(0 − 200,000) = 30,000; M_last = 4,000.
        bm.on_tick(&st, 50 * PS_PER_US);
        assert!((bm.mfair[st.idx(q)] - 30_000.0).abs() < 1e-6);
        // p = 1 − 30,000/(15·4,000) = 0.5.
        assert!((bm.queue_drop_prob(&st, q) - 0.5).abs() < 1e-12);
        let n = 20_000;
        let acc = (0..n).filter(|&k| bm.admit(&st, q, &flow_pkt(k, 1_000, 1), 60 * PS_PER_US) == Admission::Accept).count();
        let frac = acc as f64 / n as f64;
        assert!((frac - 0.5).abs() < 0.015, "{frac}"); // 4.3 σ
        // Same queue counter but queue ≤ 150 KiB: no AFD drop.
        let mut st2 = st.clone();
        st2.on_dequeue(q, 200_000 - 153_600, false);
        assert!((0..1000).all(|k| bm.admit(&st2, q, &flow_pkt(k, 1_000, 1), 60 * PS_PER_US) == Admission::Accept));
        // A queue without arrivals (M_last forced to 1): 15 < M_fair -> p = 0.
        let other = QueueRef { port: 1, queue: 1 };
        assert_eq!(bm.queue_drop_prob(&st, other), 0.0);
        // M_fair clamps at 0 -> p = 1: everything above 150 KiB goes.
        st.on_enqueue(q, 300_000);
        bm.on_tick(&st, 100 * PS_PER_US); // 30,000 − 1.8·300,000 + 1.7·0 < 0
        assert_eq!(bm.mfair[st.idx(q)], 0.0);
        assert_eq!(bm.queue_drop_prob(&st, q), 1.0);
        assert!((0..100).all(|k| bm.admit(&st, q, &flow_pkt(k, 1_000, 1), 110 * PS_PER_US) == Admission::Drop));
    }

    #[test]
    fn nexus_mode_afd_targets_elephants_only() {
        // The PI controller driven by the queue, with the nexus defaults: a = 1.8/16, b = 1.7/16,
        // Q_ref = 100,000 B, M_fair0 = cap = 10 Gb/s · 50 µs = 62,500 B, M in bytes per flow.
        let mut bm = mk(json!({"alpha": 1.0, "etrap_bytes": 10_000, "dpp": false, "headroom_bytes": 0}), 1, 1, 10_000_000);
        assert!(bm.afd_per_flow && !bm.count_packets && bm.scale == 1.0 && bm.min_q == 0);
        assert_eq!(bm.mfair_max[0], 62_500.0);
        assert_eq!(bm.mfair[0], 62_500.0);
        let (a, b) = (1.8 / 16.0, 1.7 / 16.0);
        let mut st = state(10_000_000, 1, 1);
        let q = QueueRef { port: 0, queue: 0 };
        st.on_enqueue(q, 200_000);
        // Window 1 (t = 50 µs): Q_now = 200,000, Q_old = 0:
        // M_fair = 62,500 − a·100,000 + b·(−100,000) = 40,625.
        bm.on_tick(&st, 50 * PS_PER_US);
        let m1 = 62_500.0 - a * 100_000.0 - b * 100_000.0;
        assert!((bm.mfair[0] - m1).abs() < 1e-6 && (m1 - 40_625.0).abs() < 1e-9);
        // Window 2 (t = 100 µs): Q_now = Q_old = 200,000: M_fair = 40,625 − a·100,000 + b·100,000 = 40,000.
        bm.on_tick(&st, 100 * PS_PER_US);
        assert!((bm.mfair[0] - 40_000.0).abs() < 1e-6, "{}", bm.mfair[0]);
        // In window 2 (100–150 µs) the elephant sends 80 × 1,000 B and the mouse 5 × 1,000 B. Their
        // previous window was empty (M forced to 1 ≤ M_fair): nothing is AFD-dropped yet.
        for k in 0..80 {
            assert_eq!(bm.admit(&st, q, &flow_pkt(1, 1_000, 0), 100 * PS_PER_US + k), Admission::Accept);
        }
        for k in 0..5 {
            assert_eq!(bm.admit(&st, q, &flow_pkt(2, 1_000, 0), 100 * PS_PER_US + k), Admission::Accept);
        }
        // Window 3: the elephant's M = 80,000 B -> p = 1 − 40,000/80,000 = 0.5.
        let n = 8_000;
        let acc = (0..n).filter(|_| bm.admit(&st, q, &flow_pkt(1, 1_000, 0), 160 * PS_PER_US) == Admission::Accept).count();
        assert!((acc as f64 / n as f64 - 0.5).abs() < 0.025, "{acc}"); // > 4.4 σ
        // The mouse (5,000 B < etrap) is never AFD-dropped.
        assert!((0..5).all(|_| bm.admit(&st, q, &flow_pkt(2, 1_000, 0), 160 * PS_PER_US) == Admission::Accept));
        // The queue back at Q_ref for two windows: M_fair rises by b·(200,000 − 100,000) then holds.
        st.on_dequeue(q, 100_000, true);
        bm.on_tick(&st, 200 * PS_PER_US);
        assert!((bm.mfair[0] - (40_000.0 + b * 100_000.0)).abs() < 1e-6);
        bm.on_tick(&st, 250 * PS_PER_US);
        assert!((bm.mfair[0] - (40_000.0 + b * 100_000.0)).abs() < 1e-6);
    }

    /// Issue #9 item 6: the code's byte constants (RTTBytes 100,000 B, 150 KiB) keep their
    /// number of full packets: ×1,502/1,432 with 1,448 + 54 B wire packets.
    #[test]
    fn code_constants_scale_with_the_packet_size() {
        let rates = [10_000_000_000u64; 2];
        let ctx = BmContext { buffer_bytes: 1_000_000, n_queues: 1, port_rate_bps: &rates, base_rtt_ps: 0, seed: 1, switch_index: 0, mss_bytes: 1448, header_bytes: 54 };
        let bm = build_ib(&Params::new("switch.bm", json!({"mode": "abm_code"}).as_object().unwrap()), &ctx).unwrap();
        assert_eq!(bm.min_q, (153_600.0_f64 / 1_432.0 * 1_502.0) as u64);
        assert_eq!(bm.min_q, 161_108);
        assert!((bm.qref - 100_000.0 / 1_432.0 * 1_502.0).abs() < 1e-6);
    }

    #[test]
    fn bad_params() {
        let ctx = BmContext { buffer_bytes: 1, n_queues: 2, port_rate_bps: &[1], base_rtt_ps: 0, seed: 1, switch_index: 0, mss_bytes: 1448, header_bytes: 54 };
        for (p, want) in [
            (json!({"mode": "cisco"}), "nexus, abm_code"),
            (json!({"dpp_queue": 2}), "dpp_queue"),
            (json!({"afd_gain_a": 0}), "afd_gain_a"),
            (json!({"etrap": 1}), "etrap_bytes"),
        ] {
            let e = build(&Params::new("switch.bm", p.as_object().unwrap()), &ctx).err().unwrap();
            assert!(e.contains(want), "{e}");
        }
    }
}

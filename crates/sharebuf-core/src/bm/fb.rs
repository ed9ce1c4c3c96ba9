//! FB (Apostolaki, Ghobadi, Addanki, Vanbever): FB.md §4.1 Eq. 3 (App. A Eq. 8–9).
//!
//! ```text
//!     T_c^i(t) = α_c · (1/N_p(t)) · γ_c^i(t) · (B − Q(t)),   admit iff q + size ≤ T
//! ```
//!
//! α_c per traffic class (= queue), N_p the number of congested queues of the class's
//! priority p (high or low, FB §2.1), γ the queue's normalized dequeue rate on its port.
//! Steady state (Eq. 12–14): with ω = α·γ/N_p, Q = B·Σω/(1+Σω), T = B·ω/(1+Σω), so a
//! priority holds at most B·α_p/(1+α_p) however many of its queues are congested (§4.1).
//!
//! Two deployments (FB §4.1, §6.2):
//! * `mode = "multi"`: classes are queues; `high` marks the high-priority queues; α per queue.
//! * `mode = "single"`: a classifier in the switch marks packets of short flows high (the
//!   first `short_flow_bytes` of a flow seen at this switch, or the sender's UNSCHED flag);
//!   packets of one queue then face different thresholds, N is the count of *all*
//!   congested queues of the buffer and γ is 1 with one queue per port.
//!
//! The congested-queue definition (`congested`), how N_p counts (`np_count`) and γ (`gamma`)
//! are parameters; see docs/schemes/fb.md. [`FbCore`] is shared with FBA (fba.rs); FB on a
//! programmable switch (fb_pisa.rs, FB §5.1) wraps [`Fb`] and reuses its admission pieces.

use std::collections::HashMap;

use super::{check_positive, Admission, BmContext, BufferManager, BufferState, Params, QueueRef, Scheme};
use crate::engine::{Time, PS_PER_US};
use crate::packet::{flags, Packet};

/// FB §6 configuration: α_L = 0.5, α_H = 20.
pub const ALPHA_LOW: f64 = 0.5;
pub const ALPHA_HIGH: f64 = 20.0;
/// Default `congested_fraction`: a queue counts as congested for N_p and γ once it holds half of
/// its own threshold. Value ours (FB gives none: "queues above a threshold", §5.1), measured:
/// 0.9 (ABM's value) makes N_p flap in transients (test_fb_absorbs_bursts: FB's burst loss
/// 11.9% → 14%, the low priority holds 218 KB instead of 146 KB during the burst); 0.1 counts the
/// ACK queue of a round-robin port under reverse traffic (its own threshold is small, it holds
/// ~11 KB; Must-show B: FB's data queue 137 KB instead of DT's 271 KB); 0.5 passes both.
pub const CONGESTED_FRACTION: f64 = 0.5;

/// Which queues count as congested for N_p.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Congested {
    /// Queue holds at least this many bytes ("nonempty" is `Bytes(1)`).
    Bytes(u64),
    /// ABM code's soft count: Σ min(1, q / sat), N_p = max(1, Σ).
    Soft(f64),
    /// Queue holds at least this fraction of its own threshold T (FB App. A.3: the congested
    /// queues are those "controlled by a threshold"). Flags are
    /// re-evaluated at the queue's own arrivals and departures (FB) or at each update (FBA).
    Threshold(f64),
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum NpCount {
    /// Congested queues of the priority (FB Eq. 3).
    Queues,
    /// Ports with at least one congested queue of the priority (reproduces FB §3 Fig. 5b).
    Ports,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Gamma {
    /// Share of the port under the scheduler given the current backlog (`sched_share`).
    Scheduler,
    /// Measured dequeue rate over the last interval, normalized to the port rate.
    Measured,
    /// γ = 1 (ablation: no dequeue-rate factor).
    One,
}

/// The parts of FB's threshold shared by FB and FBA: ω(q) = α · γ(q) / N_p(q).
pub struct FbCore {
    pub n_ports: usize,
    pub n_queues: usize,
    /// Priority group per queue used to count N_p (multi: 0..n_groups; `high`: 1 = high, 0 = low;
    /// single: all 0).
    pub group: Vec<usize>,
    /// Number of priority groups (FB §2.1: high and low; App. A.5: n priorities).
    n_groups: usize,
    pub congested: Congested,
    pub np: NpCount,
    pub gamma: Gamma,
    /// Measured γ below this falls back to the scheduler share.
    pub gamma_min: f64,
    /// Measured γ per (port, queue); NaN = not measured / below gamma_min.
    meas: Vec<f64>,
    last_deq: Vec<u64>,
    last_meas_ps: Time,
    // Incremental congested counts (Bytes mode, used by FB per packet).
    cong_q: Vec<usize>,      // per group: congested queues
    port_cnt: Vec<u32>,      // per (port, group): congested queues
    cong_p: Vec<usize>,      // per group: ports with ≥ 1 congested queue
    flag: Vec<bool>,         // per queue: congested (Threshold mode)
}

impl FbCore {
    /// Parse the parameters common to FB and FBA.
    ///
    /// Default congested-queue definition (`congested = "threshold"`): a queue holding at least
    /// `congested_fraction` (0.5, [`CONGESTED_FRACTION`]) of its own threshold. FB §5.1 counts "queues above a
    /// threshold" both for N_p and for the per-port count that gives γ, and App. A.3's steady
    /// state counts the queues "controlled by a threshold". A queue of ACKs or SYNs sits far
    /// below its threshold, so control traffic does not shrink data thresholds (a per-packet
    /// round robin does keep an ACK queue backlogged: ~11 KB in the Must-show B scenario, so a
    /// byte floor such as one full packet would still count it).
    pub fn from_params(p: &Params, ctx: &BmContext, group: Vec<usize>) -> Result<FbCore, String> {
        let (n_ports, n_queues) = (ctx.port_rate_bps.len(), ctx.n_queues);
        let kind = p.str_or("congested", "threshold", &["threshold", "nonempty", "bytes", "soft"])?;
        if kind != "threshold" && p.f64_list("congested_fraction")?.is_some() {
            return Err("switch.bm.congested_fraction: only used with congested = \"threshold\"".into());
        }
        let congested = match kind.as_str() {
            "threshold" => {
                let f = p.f64_or("congested_fraction", CONGESTED_FRACTION)?;
                if !(f > 0.0 && f <= 1.0) {
                    return Err(format!("switch.bm.congested_fraction = {f}: not allowed; must be in (0, 1]"));
                }
                Congested::Threshold(f)
            }
            "nonempty" => Congested::Bytes(1),
            "bytes" => {
                let b = p.f64_or("congested_bytes", ctx.full_packet_bytes())?;
                check_positive("congested_bytes", &[b])?;
                Congested::Bytes(b.ceil() as u64)
            }
            _ => {
                let s = p.f64_or("congested_sat_bytes", ctx.code_bytes(28_000.0))?;
                check_positive("congested_sat_bytes", &[s])?;
                Congested::Soft(s)
            }
        };
        let np = match p.str_or("np_count", "queues", &["queues", "ports"])?.as_str() {
            "queues" => NpCount::Queues,
            _ => NpCount::Ports,
        };
        let gamma = match p.str_or("gamma", "scheduler", &["scheduler", "measured", "one"])?.as_str() {
            "scheduler" => Gamma::Scheduler,
            "measured" => Gamma::Measured,
            _ => Gamma::One,
        };
        let gamma_min = p.f64_or("gamma_min", 0.01)?;
        if !(0.0..=1.0).contains(&gamma_min) {
            return Err(format!("switch.bm.gamma_min = {gamma_min}: must be in [0, 1]"));
        }
        let nqt = n_ports * n_queues;
        let n_groups = group.iter().copied().max().unwrap_or(0) + 1;
        Ok(FbCore {
            n_ports,
            n_queues,
            group,
            n_groups,
            congested,
            np,
            gamma,
            gamma_min,
            meas: vec![f64::NAN; nqt],
            last_deq: vec![0; nqt],
            last_meas_ps: 0,
            cong_q: vec![0; n_groups],
            port_cnt: vec![0; n_ports * n_groups],
            cong_p: vec![0; n_groups],
            flag: vec![false; nqt],
        })
    }

    /// Record queue `q` becoming (`is`) or ceasing to be congested in the incremental counts.
    #[inline]
    fn count(&mut self, q: QueueRef, is: bool) {
        let g = self.group[q.queue];
        let pc = &mut self.port_cnt[q.port * self.n_groups + g];
        if is {
            self.cong_q[g] += 1;
            *pc += 1;
            if *pc == 1 {
                self.cong_p[g] += 1;
            }
        } else {
            self.cong_q[g] -= 1;
            *pc -= 1;
            if *pc == 0 {
                self.cong_p[g] -= 1;
            }
        }
    }

    /// Threshold mode: re-evaluate whether `q` is congested (q ≥ fraction · α·γ/N_p·(B − Q)).
    #[inline]
    pub fn refresh(&mut self, st: &BufferState, q: QueueRef, alpha: f64) {
        let Congested::Threshold(f) = self.congested else { return };
        let i = st.idx(q);
        let len = st.queue_bytes[i];
        let is = len > 0 && len as f64 >= f * self.omega(st, q, alpha) * st.remaining_bytes() as f64;
        if is != self.flag[i] {
            self.flag[i] = is;
            self.count(q, is);
        }
    }

    /// Threshold mode, FBA: classify every queue against the DT threshold α_dt·(B − Q) in force.
    pub fn refresh_all_dt(&mut self, st: &BufferState, alpha_dt: &[f64]) {
        let Congested::Threshold(f) = self.congested else { return };
        let r = st.remaining_bytes() as f64;
        for i in 0..self.flag.len() {
            let len = st.queue_bytes[i];
            let is = len > 0 && len as f64 >= f * alpha_dt[i] * r;
            if is != self.flag[i] {
                self.flag[i] = is;
                self.count(QueueRef { port: i / self.n_queues, queue: i % self.n_queues }, is);
            }
        }
    }

    /// Keep the incremental counts in step with a queue going from `old` to `new` bytes.
    #[inline]
    pub fn on_change(&mut self, q: QueueRef, old: u64, new: u64) {
        let Congested::Bytes(x) = self.congested else { return };
        let (was, is) = (old >= x, new >= x);
        if was != is {
            self.count(q, is);
        }
    }

    /// Recompute the congested flags and counts from the state `st` (FB on PISA, fb_pisa.rs: the
    /// SYNC packets rewrite the ingress counters from the synced queue lengths, one queue index
    /// per pass, in index order). `alpha(queue)` is the α whose threshold decides congestion.
    pub fn resync(&mut self, st: &BufferState, alpha: impl Fn(usize) -> f64) {
        match self.congested {
            Congested::Threshold(_) => {
                for i in 0..self.flag.len() {
                    let q = QueueRef { port: i / self.n_queues, queue: i % self.n_queues };
                    self.refresh(st, q, alpha(q.queue));
                }
            }
            Congested::Bytes(x) => {
                self.cong_q.iter_mut().for_each(|v| *v = 0);
                self.port_cnt.iter_mut().for_each(|v| *v = 0);
                self.cong_p.iter_mut().for_each(|v| *v = 0);
                for i in 0..self.flag.len() {
                    if st.queue_bytes[i] >= x {
                        self.count(QueueRef { port: i / self.n_queues, queue: i % self.n_queues }, true);
                    }
                }
            }
            Congested::Soft(_) => {}
        }
    }

    /// N_p seen by queue `q`, from the incremental counts (Bytes mode) or a scan (Soft).
    /// The queue itself always counts (as `sched_share` does): N_p ≥ 1.
    #[inline]
    pub fn n_p(&self, st: &BufferState, q: QueueRef) -> f64 {
        match self.congested {
            Congested::Bytes(x) => {
                let g = self.group[q.queue];
                match self.np {
                    NpCount::Queues => (self.cong_q[g] + (st.qbytes(q) < x) as usize) as f64,
                    NpCount::Ports => (self.cong_p[g] + (self.port_cnt[q.port * self.n_groups + g] == 0) as usize) as f64,
                }
            }
            Congested::Threshold(_) => {
                let g = self.group[q.queue];
                let me = self.flag[st.idx(q)];
                match self.np {
                    NpCount::Queues => (self.cong_q[g] + !me as usize) as f64,
                    NpCount::Ports => (self.cong_p[g] + (self.port_cnt[q.port * self.n_groups + g] == 0) as usize) as f64,
                }
            }
            Congested::Soft(_) => self.n_p_scan(st, q),
        }
    }

    /// N_p from a full scan of the buffer state (FBA's controller; also checks `n_p`).
    pub fn n_p_scan(&self, st: &BufferState, q: QueueRef) -> f64 {
        let g = self.group[q.queue];
        let nq = self.n_queues;
        let in_g = |c: usize| self.group[c] == g;
        match self.congested {
            Congested::Bytes(x) => {
                let cong = |p: usize, c: usize| in_g(c) && st.queue_bytes[p * nq + c] >= x;
                let n = match self.np {
                    NpCount::Queues => (0..self.n_ports).map(|p| (0..nq).filter(|&c| cong(p, c)).count()).sum::<usize>() + (st.qbytes(q) < x) as usize,
                    NpCount::Ports => {
                        (0..self.n_ports).filter(|&p| (0..nq).any(|c| cong(p, c))).count() + !(0..nq).any(|c| cong(q.port, c)) as usize
                    }
                };
                n as f64
            }
            Congested::Threshold(_) => {
                let cong = |p: usize, c: usize| in_g(c) && self.flag[p * nq + c];
                let n = match self.np {
                    NpCount::Queues => (0..self.n_ports).map(|p| (0..nq).filter(|&c| cong(p, c)).count()).sum::<usize>() + !self.flag[st.idx(q)] as usize,
                    NpCount::Ports => {
                        (0..self.n_ports).filter(|&p| (0..nq).any(|c| cong(p, c))).count() + !(0..nq).any(|c| cong(q.port, c)) as usize
                    }
                };
                n as f64
            }
            Congested::Soft(sat) => {
                let s: f64 = match self.np {
                    NpCount::Queues => (0..self.n_ports)
                        .map(|p| (0..nq).filter(|&c| in_g(c)).map(|c| (st.queue_bytes[p * nq + c] as f64 / sat).min(1.0)).sum::<f64>())
                        .sum(),
                    NpCount::Ports => (0..self.n_ports)
                        .map(|p| ((0..nq).filter(|&c| in_g(c)).map(|c| st.queue_bytes[p * nq + c]).sum::<u64>() as f64 / sat).min(1.0))
                        .sum(),
                };
                s.max(1.0)
            }
        }
    }

    /// Whether queue (port, c) is congested under the congested-queue definition (soft: saturated).
    #[inline]
    fn is_congested(&self, st: &BufferState, port: usize, c: usize) -> bool {
        let len = st.queue_bytes[port * self.n_queues + c];
        match self.congested {
            Congested::Bytes(x) => len >= x,
            Congested::Soft(sat) => len as f64 >= sat,
            Congested::Threshold(_) => self.flag[port * self.n_queues + c],
        }
    }

    /// The scheduler share of `q` among the congested queues of its port (FB §5.1: the SYNC
    /// packets count "the queues above a threshold" per port, "equivalent to the normalized
    /// dequeue rate per queue given the scheduling algorithm").
    #[inline]
    fn sched_gamma(&self, st: &BufferState, q: QueueRef) -> f64 {
        st.sched_share_among(q, |c| self.is_congested(st, q.port, c))
    }

    /// γ of queue `q`.
    #[inline]
    pub fn gamma(&self, st: &BufferState, q: QueueRef) -> f64 {
        match self.gamma {
            Gamma::One => 1.0,
            Gamma::Scheduler => self.sched_gamma(st, q),
            Gamma::Measured => {
                let m = self.meas[st.idx(q)];
                if m.is_nan() {
                    self.sched_gamma(st, q)
                } else {
                    m
                }
            }
        }
    }

    /// Refresh measured γ from the dequeue counters (no-op unless `gamma = "measured"`).
    pub fn measure(&mut self, st: &BufferState, now: Time) {
        if self.gamma != Gamma::Measured {
            return;
        }
        let dt = now.saturating_sub(self.last_meas_ps);
        for i in 0..self.meas.len() {
            let d = st.deq_bytes[i] - self.last_deq[i];
            self.last_deq[i] = st.deq_bytes[i];
            let rate = st.port_rate_bps[i / self.n_queues] as f64;
            let g = if dt == 0 { f64::NAN } else { d as f64 * 8.0 / (rate * dt as f64 * 1e-12) };
            self.meas[i] = if g.is_nan() || g < self.gamma_min || g <= 0.0 { f64::NAN } else { g.min(1.0) };
        }
        self.last_meas_ps = now;
    }

    /// ω = α · γ / N_p for queue `q` (T = ω · (B − Q)).
    #[inline]
    pub fn omega(&self, st: &BufferState, q: QueueRef, alpha: f64) -> f64 {
        alpha * self.gamma(st, q) / self.n_p(st, q)
    }
}

/// Per-queue α and priority of the multi-queue deployment (shared with FBA).
///
/// Priorities: `high` (FB §2.1: 1 = high, 0 = low) or `priority` (FB App. A.5, n priorities: one
/// integer 0..n−1 per queue; N_p is counted per priority). `high = [0, 1]` ≡ `priority = [0, 1]`.
/// Default α: α_H for the queues of the highest priority (when there are two or more), α_L else.
pub fn multi_queue_alphas(p: &Params, n_queues: usize) -> Result<(Vec<f64>, Vec<usize>), String> {
    let mut group = Vec::with_capacity(n_queues);
    if p.f64_list("priority")?.is_some() {
        if p.f64_list("high")?.is_some() {
            return Err("switch.bm.priority: give either `high` (two priorities) or `priority` (n priorities), not both".into());
        }
        for &v in &p.per_queue("priority", n_queues, None)? {
            if !(v >= 0.0 && v.fract() == 0.0 && v < n_queues as f64) {
                return Err(format!("switch.bm.priority: {v} is not allowed; one integer per queue in 0..{} (FB App. A.5)", n_queues - 1));
            }
            group.push(v as usize);
        }
    } else {
        for &h in &p.per_queue("high", n_queues, Some(0.0))? {
            if h != 0.0 && h != 1.0 {
                return Err(format!("switch.bm.high: {h} is not allowed; one value per queue, 1 = high priority, 0 = low"));
            }
            group.push(h as usize);
        }
    }
    let top = group.iter().copied().max().unwrap_or(0);
    let a_low = p.f64_or("alpha_low", ALPHA_LOW)?;
    let a_high = p.f64_or("alpha_high", ALPHA_HIGH)?;
    check_positive("alpha_low", &[a_low])?;
    check_positive("alpha_high", &[a_high])?;
    let alpha = match p.f64_list("alpha")? {
        None => group.iter().map(|&g| if top > 0 && g == top { a_high } else { a_low }).collect(),
        Some(_) => p.per_queue("alpha", n_queues, None)?,
    };
    check_positive("alpha", &alpha)?;
    Ok((alpha, group))
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum ClassKind {
    FlowBytes,
    Unsched,
}

/// Single-queue classifier: short flows (first `short_bytes` seen at this switch) are high.
struct Classifier {
    kind: ClassKind,
    short_bytes: u64,
    idle_ps: Time,
    /// flow key -> (bytes seen, last arrival)
    flows: HashMap<u64, (u64, Time)>,
    last_purge: Time,
}

impl Classifier {
    /// Bytes of the flow seen before this packet (0 after an idle gap longer than idle_ps).
    #[inline]
    fn seen(&self, pkt: &Packet, now: Time) -> u64 {
        match self.flows.get(&pkt.flow_key()) {
            Some(&(b, t)) if now.saturating_sub(t) <= self.idle_ps => b,
            _ => 0,
        }
    }
    #[inline]
    fn is_high(&self, pkt: &Packet, now: Time) -> bool {
        match self.kind {
            ClassKind::Unsched => pkt.has(flags::UNSCHED),
            ClassKind::FlowBytes => self.seen(pkt, now) < self.short_bytes,
        }
    }
    /// Classify and count the packet (every arriving packet counts, admitted or not).
    #[inline]
    fn classify(&mut self, pkt: &Packet, now: Time) -> bool {
        if self.kind == ClassKind::Unsched {
            return pkt.has(flags::UNSCHED);
        }
        let idle = self.idle_ps;
        let e = self.flows.entry(pkt.flow_key()).or_insert((0, now));
        if now.saturating_sub(e.1) > idle {
            e.0 = 0;
        }
        let high = e.0 < self.short_bytes;
        e.0 += pkt.size_bytes as u64;
        e.1 = now;
        high
    }
    fn purge(&mut self, now: Time) {
        let idle = self.idle_ps;
        self.flows.retain(|_, e| now.saturating_sub(e.1) <= idle);
        self.last_purge = now;
    }
}

pub struct Fb {
    pub(super) core: FbCore,
    /// Multi mode: α per queue. Single mode: unused.
    alpha: Vec<f64>,
    /// Single mode: α of short-flow (high) and long-flow (low) packets, and the classifier.
    alpha_high: f64,
    alpha_low: f64,
    classifier: Option<Classifier>,
    tick: Option<Time>,
}

const COMMON_KEYS: &[&str] = &["mode", "alpha_low", "alpha_high", "congested", "congested_bytes", "congested_sat_bytes", "congested_fraction", "np_count", "gamma", "gamma_min", "gamma_interval_us"];

pub fn build(p: &Params, ctx: &BmContext) -> Result<Scheme, String> {
    Ok(Fb::new(p, ctx)?.into())
}

impl Fb {
    pub fn new(p: &Params, ctx: &BmContext) -> Result<Fb, String> {
        Fb::new_with_keys(p, ctx, "fb", &[])
    }

    /// FB's parameters for scheme `scheme`, which also takes the keys `extra` (FB on PISA,
    /// fb_pisa.rs, parses its own keys from the same table).
    pub(super) fn new_with_keys(p: &Params, ctx: &BmContext, scheme: &str, extra: &[&str]) -> Result<Fb, String> {
        let nq = ctx.n_queues;
        let default_mode = if nq == 1 { "single" } else { "multi" };
        let mode = p.str_or("mode", default_mode, &["multi", "single"])?;
        let mut keys: Vec<&str> = COMMON_KEYS.to_vec();
        keys.extend(extra);
        if mode == "multi" {
            keys.extend(["alpha", "high", "priority"]);
        } else {
            keys.extend(["classifier", "short_flow_bytes", "flow_idle_us"]);
        }
        p.allow_only(scheme, &keys).map_err(|e| format!("{e} (mode = '{mode}')"))?;
        let a_low = p.f64_or("alpha_low", ALPHA_LOW)?;
        let a_high = p.f64_or("alpha_high", ALPHA_HIGH)?;
        check_positive("alpha_low", &[a_low])?;
        check_positive("alpha_high", &[a_high])?;
        let (alpha, group, classifier) = if mode == "multi" {
            let (a, g) = multi_queue_alphas(p, nq)?;
            (a, g, None)
        } else {
            let kind = match p.str_or("classifier", "flow_bytes", &["flow_bytes", "unsched"])?.as_str() {
                "flow_bytes" => ClassKind::FlowBytes,
                _ => ClassKind::Unsched,
            };
            // The ABM code's FAB limit (15 × 1,400 B) as the same number of full packets (item 6).
            let short = p.f64_or("short_flow_bytes", ctx.code_bytes(21_000.0))?;
            let idle_us = p.f64_or("flow_idle_us", 5_000.0)?;
            check_positive("short_flow_bytes", &[short])?;
            check_positive("flow_idle_us", &[idle_us])?;
            let c = Classifier { kind, short_bytes: short.ceil() as u64, idle_ps: (idle_us * PS_PER_US as f64) as Time, flows: HashMap::new(), last_purge: 0 };
            (vec![a_low; nq], vec![0; nq], Some(c))
        };
        let core = FbCore::from_params(p, ctx, group)?;
        let gi = p.f64_or("gamma_interval_us", if ctx.base_rtt_ps > 0 { ctx.base_rtt_ps as f64 / PS_PER_US as f64 } else { 10.0 })?;
        check_positive("gamma_interval_us", &[gi])?;
        let gi_ps = ((gi * PS_PER_US as f64) as Time).max(1);
        let tick = if core.gamma == Gamma::Measured {
            Some(gi_ps)
        } else {
            classifier.as_ref().filter(|c| c.kind == ClassKind::FlowBytes).map(|c| c.idle_ps.max(1))
        };
        Ok(Fb { core, alpha, alpha_high: a_high, alpha_low: a_low, classifier, tick })
    }

    /// The α whose threshold decides whether queue `q` is congested: its class's α (multi), the
    /// long-flow α_L (single: the threshold that controls a standing queue).
    #[inline]
    pub(super) fn flag_alpha(&self, q: QueueRef) -> f64 {
        if self.classifier.is_some() {
            self.alpha_low
        } else {
            self.alpha[q.queue]
        }
    }

    #[inline]
    pub(super) fn alpha_of(&self, q: QueueRef, pkt: &Packet, now: Time) -> f64 {
        match &self.classifier {
            None => self.alpha[q.queue],
            Some(c) => {
                if c.is_high(pkt, now) {
                    self.alpha_high
                } else {
                    self.alpha_low
                }
            }
        }
    }

    /// The α of an arriving packet; the single-queue classifier counts the packet.
    #[inline]
    pub(super) fn classify_alpha(&mut self, q: QueueRef, pkt: &Packet, now: Time) -> f64 {
        match &mut self.classifier {
            None => self.alpha[q.queue],
            Some(c) => {
                if c.classify(pkt, now) {
                    self.alpha_high
                } else {
                    self.alpha_low
                }
            }
        }
    }

    /// First half of FB's admission: re-evaluate whether `q` is congested, then classify the
    /// packet; returns its α.
    #[inline]
    pub(super) fn admit_alpha(&mut self, st: &BufferState, q: QueueRef, pkt: &Packet, now: Time) -> f64 {
        let a_ref = self.flag_alpha(q);
        self.core.refresh(st, q, a_ref);
        self.classify_alpha(q, pkt, now)
    }
}

impl BufferManager for Fb {
    fn name(&self) -> &'static str {
        "fb"
    }

    #[inline]
    fn admit(&mut self, st: &BufferState, q: QueueRef, pkt: &Packet, now: Time) -> Admission {
        let alpha = self.admit_alpha(st, q, pkt, now);
        let t = self.core.omega(st, q, alpha) * st.remaining_bytes() as f64;
        if (st.qbytes(q) + pkt.size_bytes as u64) as f64 <= t {
            Admission::Accept
        } else {
            Admission::Drop
        }
    }

    fn threshold_bytes(&self, st: &BufferState, q: QueueRef, pkt: &Packet, now: Time) -> Option<f64> {
        Some(self.core.omega(st, q, self.alpha_of(q, pkt, now)) * st.remaining_bytes() as f64)
    }

    #[inline]
    fn on_enqueue(&mut self, st: &BufferState, q: QueueRef, pkt: &Packet, _now: Time) {
        let new = st.qbytes(q);
        self.core.on_change(q, new - pkt.size_bytes as u64, new);
        let a = self.flag_alpha(q);
        self.core.refresh(st, q, a);
    }

    #[inline]
    fn on_dequeue(&mut self, st: &BufferState, q: QueueRef, pkt: &Packet, _now: Time) -> bool {
        let new = st.qbytes(q);
        self.core.on_change(q, new + pkt.size_bytes as u64, new);
        let a = self.flag_alpha(q);
        self.core.refresh(st, q, a);
        true
    }

    fn tick_interval_ps(&self) -> Option<Time> {
        self.tick
    }

    fn on_tick(&mut self, st: &BufferState, now: Time) {
        self.core.measure(st, now);
        if let Some(c) = &mut self.classifier {
            if now.saturating_sub(c.last_purge) >= c.idle_ps {
                c.purge(now);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bm::testutil::*;
    use crate::bm::SchedKind;
    use serde_json::{json, Value};

    const B: u64 = 1_000_000;

    /// The context uses the ABM code's own data packet (1,400 B payload + 32 B header), so the
    /// code's byte constants (28,000 B, 21,000 B) keep their values (`BmContext::code_bytes`).
    fn mk(params: Value, nq: usize, ports: usize) -> Fb {
        let m = params.as_object().unwrap().clone();
        let rates = vec![10_000_000_000u64; ports];
        let ctx = BmContext { buffer_bytes: B, n_queues: nq, port_rate_bps: &rates, base_rtt_ps: 8 * PS_PER_US, seed: 1, switch_index: 0, mss_bytes: 1400, header_bytes: 32 };
        Fb::new(&Params::new("switch.bm", &m), &ctx).unwrap()
    }

    fn build_err(params: Value, nq: usize) -> String {
        let m = params.as_object().unwrap().clone();
        let ctx = BmContext { buffer_bytes: B, n_queues: nq, port_rate_bps: &[1; 4], base_rtt_ps: 0, seed: 1, switch_index: 0, mss_bytes: 1448, header_bytes: 54 };
        build(&Params::new("switch.bm", &m), &ctx).err().unwrap()
    }

    /// Enqueue through the BufferState and the scheme's hook, as the switch does.
    fn enq(fb: &mut Fb, st: &mut BufferState, q: QueueRef, bytes: u32) {
        st.on_enqueue(q, bytes as u64);
        fb.on_enqueue(st, q, &pkt(bytes, q.queue as u8), 0);
    }
    fn deq(fb: &mut Fb, st: &mut BufferState, q: QueueRef, bytes: u32) {
        st.on_dequeue(q, bytes as u64, true);
        assert!(fb.on_dequeue(st, q, &pkt(bytes, q.queue as u8), 0));
    }
    fn thr(fb: &Fb, st: &BufferState, q: QueueRef) -> f64 {
        fb.threshold_bytes(st, q, &pkt(1500, q.queue as u8), 0).unwrap()
    }
    fn qr(port: usize, queue: usize) -> QueueRef {
        QueueRef { port, queue }
    }

    #[test]
    fn threshold_is_eq3_multi_queue() {
        // 4 ports × 2 queues; queue 1 high (α_H = 20), queue 0 low (α_L = 0.5); round robin.
        // Eq. 3 with N_p counting non-empty queues (FB §4.2), to check the formula itself.
        let mut fb = mk(json!({"high": [0, 1], "congested": "nonempty"}), 2, 4);
        let mut st = state(B, 4, 2);
        enq(&mut fb, &mut st, qr(0, 0), 100_000); // low, port 0
        enq(&mut fb, &mut st, qr(1, 0), 50_000); // low, port 1
        enq(&mut fb, &mut st, qr(1, 1), 30_000); // high, port 1 (shares port 1 with a low queue)
        enq(&mut fb, &mut st, qr(2, 0), 20_000); // low, port 2
        let r = (B - 200_000) as f64;
        // Low queue on port 0: N_low = 3, γ = 1 (alone on its port).
        assert!((thr(&fb, &st, qr(0, 0)) - 0.5 / 3.0 * 1.0 * r).abs() < 1e-6);
        // Low queue on port 1: N_low = 3, γ = 1/2 (RR with the high queue).
        assert!((thr(&fb, &st, qr(1, 0)) - 0.5 / 3.0 * 0.5 * r).abs() < 1e-6);
        // High queue on port 1: N_high = 1, γ = 1/2.
        assert!((thr(&fb, &st, qr(1, 1)) - 20.0 * 0.5 * r).abs() < 1e-6);
        // Empty low queue on port 3 counts itself: N_low = 4, γ = 1.
        assert!((thr(&fb, &st, qr(3, 0)) - 0.5 / 4.0 * r).abs() < 1e-6);
        // Empty high queue on port 0 counts itself (N_high = 2) and shares port 0 (γ = 1/2).
        assert!((thr(&fb, &st, qr(0, 1)) - 20.0 / 2.0 * 0.5 * r).abs() < 1e-6);
        // Admission compares q + size with T: port 2's low queue has T = 0.5/3 · 800 kB = 133 kB.
        assert_eq!(fb.admit(&st, qr(2, 0), &pkt(1500, 0), 0), Admission::Accept);
        // Port 1 low: T = 66.7 kB, q = 50 kB: 16,000 B does not fit, 16,600 does.
        assert_eq!(fb.admit(&st, qr(1, 0), &pkt(16_600, 0), 0), Admission::Accept);
        assert_eq!(fb.admit(&st, qr(1, 0), &pkt(16_700, 0), 0), Admission::Drop);
        // Draining a queue to empty removes it from N_low (incremental counts = scan).
        deq(&mut fb, &mut st, qr(2, 0), 20_000);
        assert!((thr(&fb, &st, qr(0, 0)) - 0.5 / 2.0 * (B - 180_000) as f64).abs() < 1e-6);
        for p in 0..4 {
            for c in 0..2 {
                assert_eq!(fb.core.n_p(&st, qr(p, c)), fb.core.n_p_scan(&st, qr(p, c)));
            }
        }
    }

    #[test]
    fn threshold_is_eq3_drr_and_strict_priority() {
        // Both queues of port 0 low priority, DRR 1:3: γ = 1/4 and 3/4, N_low = 2.
        let mut fb = mk(json!({"alpha": [0.5, 2.0], "congested": "nonempty"}), 2, 2);
        let mut st = BufferState::new(B, vec![10_000_000_000; 2], 2, SchedKind::Drr(vec![1, 3]));
        enq(&mut fb, &mut st, qr(0, 0), 10_000);
        enq(&mut fb, &mut st, qr(0, 1), 40_000);
        let r = (B - 50_000) as f64;
        assert!((thr(&fb, &st, qr(0, 0)) - 0.5 / 2.0 * 0.25 * r).abs() < 1e-6);
        assert!((thr(&fb, &st, qr(0, 1)) - 2.0 / 2.0 * 0.75 * r).abs() < 1e-6);
        // Strict priority: queue 1 gets nothing while queue 0 is backlogged.
        st.sched = SchedKind::StrictPriority;
        assert_eq!(thr(&fb, &st, qr(0, 1)), 0.0);
        assert!((thr(&fb, &st, qr(0, 0)) - 0.5 / 2.0 * r).abs() < 1e-6);
    }

    #[test]
    fn paper_examples_fig5() {
        // FB §3 Fig. 5a: 60-packet buffer, a high queue (α 2) and three low queues (α 1), one
        // per port: steady state 30 high, 5 per low queue, 15 remaining (Eq. 14).
        // Lengths are in packets here, so a queue is congested when non-empty.
        let mut fb = mk(json!({"alpha": [1.0, 2.0], "high": [0, 1], "congested": "nonempty"}), 2, 4);
        let mut st = state(60, 4, 2);
        enq(&mut fb, &mut st, qr(0, 1), 30);
        for p in 1..4 {
            enq(&mut fb, &mut st, qr(p, 0), 5);
        }
        assert!((thr(&fb, &st, qr(0, 1)) - 30.0).abs() < 1e-9);
        assert!((thr(&fb, &st, qr(1, 0)) - 5.0).abs() < 1e-9);
        // Fig. 5b: five low queues (α 1) on one port: 6 packets each with N counted per port
        // (np_count = "ports", γ = 1/5); per queue (Eq. 3 literally) it is 2.
        for (np, want) in [("ports", 6.0), ("queues", 2.0)] {
            let mut fb = mk(json!({"alpha": 1.0, "np_count": np, "congested": "nonempty"}), 5, 2);
            let mut st = state(60, 2, 5);
            for c in 0..5 {
                enq(&mut fb, &mut st, qr(0, c), want as u32);
            }
            for c in 0..5 {
                assert!((thr(&fb, &st, qr(0, c)) - want).abs() < 1e-9, "{np}");
                assert_eq!(fb.core.n_p(&st, qr(0, c)), fb.core.n_p_scan(&st, qr(0, c)));
            }
            assert_eq!(fb.core.n_p(&st, qr(1, 0)), fb.core.n_p_scan(&st, qr(1, 0)));
        }
    }

    /// FB App. A.5: n priorities. N_p counts the congested queues of each priority separately
    /// (Eq. 8: β_p = 1/N_p), so a third priority neither shrinks nor is shrunk by the others' counts.
    #[test]
    fn n_priorities_count_n_p_per_priority() {
        // 3 ports × 4 queues, priorities [0, 1, 2, 2], α [0.5, 1, 2, 4], round robin, non-empty = congested.
        let mut fb = mk(json!({"priority": [0, 1, 2, 2], "alpha": [0.5, 1.0, 2.0, 4.0], "congested": "nonempty"}), 4, 3);
        let mut st = state(B, 3, 4);
        enq(&mut fb, &mut st, qr(0, 0), 10_000); // prio 0
        enq(&mut fb, &mut st, qr(1, 0), 10_000); // prio 0
        enq(&mut fb, &mut st, qr(0, 1), 10_000); // prio 1 (shares port 0 with a prio-0 queue)
        enq(&mut fb, &mut st, qr(2, 2), 10_000); // prio 2
        enq(&mut fb, &mut st, qr(2, 3), 10_000); // prio 2 (same port: γ = 1/2, N_2 = 2)
        let r = (B - 50_000) as f64;
        assert!((thr(&fb, &st, qr(0, 0)) - 0.5 / 2.0 * 0.5 * r).abs() < 1e-6); // N_0 = 2, γ = 1/2
        assert!((thr(&fb, &st, qr(1, 0)) - 0.5 / 2.0 * 1.0 * r).abs() < 1e-6); // N_0 = 2, γ = 1
        assert!((thr(&fb, &st, qr(0, 1)) - 1.0 / 1.0 * 0.5 * r).abs() < 1e-6); // N_1 = 1
        assert!((thr(&fb, &st, qr(2, 2)) - 2.0 / 2.0 * 0.5 * r).abs() < 1e-6); // N_2 = 2
        assert!((thr(&fb, &st, qr(2, 3)) - 4.0 / 2.0 * 0.5 * r).abs() < 1e-6);
        // An empty prio-1 queue on port 1 counts itself: N_1 = 2, γ = 1/2 (port 1 holds a prio-0 queue).
        assert!((thr(&fb, &st, qr(1, 1)) - 1.0 / 2.0 * 0.5 * r).abs() < 1e-6);
        for p in 0..3 {
            for c in 0..4 {
                assert_eq!(fb.core.n_p(&st, qr(p, c)), fb.core.n_p_scan(&st, qr(p, c)));
            }
        }
        // `high = [0, 1]` and `priority = [0, 1]` are the same scheme; default α is α_H for the top priority.
        let a = mk(json!({"high": [0, 1]}), 2, 2);
        let b = mk(json!({"priority": [0, 1]}), 2, 2);
        assert_eq!(a.alpha, b.alpha);
        assert_eq!(a.alpha, vec![ALPHA_LOW, ALPHA_HIGH]);
        assert_eq!(a.core.group, b.core.group);
        let c = mk(json!({"priority": [0, 1, 2]}), 3, 2);
        assert_eq!(c.alpha, vec![ALPHA_LOW, ALPHA_LOW, ALPHA_HIGH]);
    }

    #[test]
    fn congested_definitions() {
        // bytes: a 1,000-byte queue does not count when congested_bytes = 1500.
        let mut fb = mk(json!({"congested": "bytes", "congested_bytes": 1500}), 2, 3);
        let mut st = state(B, 3, 2);
        enq(&mut fb, &mut st, qr(0, 0), 1000);
        enq(&mut fb, &mut st, qr(1, 0), 3000);
        enq(&mut fb, &mut st, qr(2, 0), 5000);
        let r = (B - 9000) as f64;
        // Port 2: N = 2 (ports 1, 2); port 0 counts itself: N = 3.
        assert!((thr(&fb, &st, qr(2, 0)) - 0.5 / 2.0 * r).abs() < 1e-6);
        assert!((thr(&fb, &st, qr(0, 0)) - 0.5 / 3.0 * r).abs() < 1e-6);
        deq(&mut fb, &mut st, qr(1, 0), 2000); // 1,000 left: no longer congested
        assert_eq!(fb.core.n_p(&st, qr(2, 0)), 1.0);
        assert_eq!(fb.core.n_p_scan(&st, qr(2, 0)), 1.0);
        // soft: Σ min(1, q/28,000) with 14,000 + 28,000 + 56,000 -> 2.5.
        let mut fb = mk(json!({"congested": "soft"}), 1, 3);
        let mut st = state(B, 3, 1);
        for (p, b) in [(0, 14_000), (1, 28_000), (2, 56_000)] {
            enq(&mut fb, &mut st, qr(p, 0), b);
        }
        assert!((fb.core.n_p(&st, qr(0, 0)) - 2.5).abs() < 1e-12);
    }

    #[test]
    fn single_queue_classifier() {
        // One queue per port: the first 21,000 B of a flow get α_H = 20, later packets α_L = 0.5;
        // N counts all congested queues of the buffer, γ = 1.
        let mut fb = mk(json!({"congested": "nonempty"}), 1, 3);
        let mut st = state(B, 3, 1);
        enq(&mut fb, &mut st, qr(1, 0), 10_000);
        enq(&mut fb, &mut st, qr(2, 0), 10_000);
        let r = (B - 20_000) as f64;
        let q = qr(0, 0);
        let mut p = pkt(1500, 0);
        p.flow = 7;
        // 14 packets (21,000 B) are short, the 15th is long.
        for i in 0..15 {
            let t = fb.threshold_bytes(&st, q, &p, 0).unwrap();
            let want = if i < 14 { 20.0 } else { 0.5 } / 3.0 * r;
            assert!((t - want).abs() < 1e-6, "packet {i}: {t} vs {want}");
            fb.admit(&st, q, &p, 0);
        }
        // Another flow in the same queue is still short.
        let mut p2 = p;
        p2.flow = 8;
        assert!((fb.threshold_bytes(&st, q, &p2, 0).unwrap() - 20.0 / 3.0 * r).abs() < 1e-6);
        // Admission follows the class: with 161,000 B queued (R = 819,000, N = 3) flow 7's next
        // packet faces 0.5/3·R = 136,500 and is dropped; flow 8's faces 20/3·R and is admitted.
        // (Two enqueues, as two packets leave below: packet counts stay consistent.)
        enq(&mut fb, &mut st, q, 26_000);
        enq(&mut fb, &mut st, q, 135_000);
        assert_eq!(fb.admit(&st, q, &p, 0), Admission::Drop);
        assert_eq!(fb.admit(&st, q, &p2, 0), Admission::Accept);
        // 161,000 B queued: 1,500 more fit under the long-flow threshold only below 136,500 — a
        // queue of 135,000 admits flow 7 again (the threshold, not the classifier, decides).
        deq(&mut fb, &mut st, q, 26_000);
        let r2 = (B - 155_000) as f64;
        assert!(135_000.0 + 1_500.0 <= 0.5 / 3.0 * r2);
        assert_eq!(fb.admit(&st, q, &p, 0), Admission::Accept);
        deq(&mut fb, &mut st, q, 135_000);
        let r = (B - 20_000) as f64;
        // After 5 ms idle the flow counts as new again; the tick purges idle flows.
        let later = 6_000 * PS_PER_US;
        assert!((fb.threshold_bytes(&st, q, &p, later).unwrap() - 20.0 / 3.0 * r).abs() < 1e-6);
        assert_eq!(fb.tick_interval_ps(), Some(5_000 * PS_PER_US));
        fb.on_tick(&st, later);
        assert!(fb.classifier.as_ref().unwrap().flows.is_empty());
        // UNSCHED-flag classifier.
        // UNSCHED-flag classifier (same buffer state, fed through this scheme's hooks: N = 3).
        let mut fb = mk(json!({"classifier": "unsched", "congested": "nonempty"}), 1, 3);
        let mut st = state(B, 3, 1);
        enq(&mut fb, &mut st, qr(1, 0), 10_000);
        enq(&mut fb, &mut st, qr(2, 0), 10_000);
        let mut u = pkt(1500, 0);
        u.flags = flags::UNSCHED;
        assert!((fb.threshold_bytes(&st, q, &u, 0).unwrap() - 20.0 / 3.0 * r).abs() < 1e-6);
        assert!((fb.threshold_bytes(&st, q, &pkt(1500, 0), 0).unwrap() - 0.5 / 3.0 * r).abs() < 1e-6);
    }

    /// Issue #9 item 4: a queue of ACKs is not congested (it sits far below its threshold): it
    /// neither adds to N_low nor halves γ of the data queue on its port (FB §5.1 counts queues
    /// above a threshold, App. A.3 the queues controlled by one). Before the fix (congested =
    /// non-empty) T fell 4x: N 1 → 2, γ 1 → 1/2.
    #[test]
    fn ack_queue_does_not_shrink_data_thresholds() {
        // Two low-priority queues per port (ACKs in queue 0, data in queue 1), round robin, α 0.5.
        let mut fb = mk(json!({"alpha": 0.5}), 2, 2);
        let mut st = state(B, 2, 2);
        // The data queue at its steady state B·α/(1+α) = 333,333 B (≥ 0.5 T: congested).
        enq(&mut fb, &mut st, qr(0, 1), 333_000);
        // 11,000 B of ACKs (a round robin keeps that many backlogged under reverse traffic). The ACK
        // queue's own threshold is 0.5·(1/2)/2·(B − 344,000) = 82,000 (it would share the port and
        // N_low with the data queue): 11,000 < 0.5 · 82,000, so it is not congested.
        for _ in 0..200 {
            enq(&mut fb, &mut st, qr(0, 0), 55);
        }
        let r = (B - 344_000) as f64;
        let t = thr(&fb, &st, qr(0, 1));
        assert!((t - 0.5 * r).abs() < 1e-6, "{t} vs {}", 0.5 * r);
        assert_eq!(fb.core.n_p(&st, qr(0, 1)), 1.0);
        assert_eq!(fb.core.n_p_scan(&st, qr(0, 1)), 1.0);
        // The same state with N_p counting non-empty queues (FB §4.2 read literally): α/4.
        let mut lit = mk(json!({"alpha": 0.5, "congested": "nonempty"}), 2, 2);
        let mut st2 = state(B, 2, 2);
        enq(&mut lit, &mut st2, qr(0, 1), 333_000);
        enq(&mut lit, &mut st2, qr(0, 0), 11_000);
        assert!((thr(&lit, &st2, qr(0, 1)) - 0.5 / 2.0 * 0.5 * r).abs() < 1e-6);
        // A second data queue above its threshold does share the port and the buffer: two queues
        // of 300,000 B (R = 400,000) exceed 0.5 T whether or not the other counts (T ≤ 0.5·R =
        // 200,000), so both are congested: N = 2, γ = 1/2.
        let mut fb = mk(json!({"alpha": 0.5}), 2, 2);
        let mut st = state(B, 2, 2);
        enq(&mut fb, &mut st, qr(0, 1), 300_000);
        enq(&mut fb, &mut st, qr(0, 0), 300_000);
        enq(&mut fb, &mut st, qr(0, 1), 1); // re-evaluates queue 1 now that queue 0 counts
        let r = (B - 600_001) as f64;
        assert!((thr(&fb, &st, qr(0, 1)) - 0.5 / 2.0 * 0.5 * r).abs() < 1e-6);
        assert_eq!(fb.core.n_p(&st, qr(0, 1)), fb.core.n_p_scan(&st, qr(0, 1)));
    }

    #[test]
    fn measured_gamma() {
        let mut fb = mk(json!({"gamma": "measured", "gamma_interval_us": 10, "congested": "nonempty"}), 2, 2);
        assert_eq!(fb.tick_interval_ps(), Some(10 * PS_PER_US));
        let mut st = state(B, 2, 2);
        enq(&mut fb, &mut st, qr(0, 0), 50_000);
        enq(&mut fb, &mut st, qr(0, 1), 50_000);
        // Over 10 µs at 10 Gb/s the port sends 12,500 B: 3,125 from queue 0 (γ = 1/4).
        deq(&mut fb, &mut st, qr(0, 0), 3_125);
        deq(&mut fb, &mut st, qr(0, 1), 9_375);
        fb.on_tick(&st, 10 * PS_PER_US);
        let r = st.remaining_bytes() as f64;
        assert!((thr(&fb, &st, qr(0, 0)) - 0.5 / 2.0 * 0.25 * r).abs() < 1e-6);
        assert!((thr(&fb, &st, qr(0, 1)) - 0.5 / 2.0 * 0.75 * r).abs() < 1e-6);
        // No dequeues in the next interval: falls back to the scheduler share (RR: 1/2).
        fb.on_tick(&st, 20 * PS_PER_US);
        assert!((thr(&fb, &st, qr(0, 0)) - 0.5 / 2.0 * 0.5 * r).abs() < 1e-6);
    }

    #[test]
    fn bad_params_name_the_key() {
        assert!(build_err(json!({"classifier": "unsched"}), 2).contains("switch.bm.classifier"));
        assert!(build_err(json!({"high": [0, 2]}), 2).contains("switch.bm.high"));
        assert!(build_err(json!({"alpha": [1, 2, 3]}), 2).contains("expected 2"));
        assert!(build_err(json!({"congested": "half"}), 2).contains("nonempty, bytes, soft"));
        assert!(build_err(json!({"alpha_low": 0}), 2).contains("> 0"));
        assert!(build_err(json!({"alpha": 1.0}), 1).contains("mode = 'single'"));
        assert!(build_err(json!({"gamma_min": 2}), 2).contains("gamma_min"));
        assert!(build_err(json!({"priority": [0, 1.5]}), 2).contains("switch.bm.priority: 1.5"));
        assert!(build_err(json!({"priority": [0, 2]}), 2).contains("in 0..1"));
        assert!(build_err(json!({"priority": [0, 1], "high": [0, 1]}), 2).contains("not both"));
    }
}

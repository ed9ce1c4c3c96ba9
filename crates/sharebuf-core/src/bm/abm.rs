//! Active Buffer Management (ABM), Addanki et al., SIGCOMM'22; ABM.md §3.1 Eq. 9, §3.3.
//!
//! T_p^i(t) = α_p · (1/n_p) · (µ_p^i / b) · (B − Q(t)); a packet is admitted iff q + size ≤ T.
//!
//! n_p = congested queues of priority p (floored at 1), µ/b = the queue's normalized drain rate,
//! B − Q(t) = free pool (as DT). Packets flagged unscheduled by the sender (`flags::UNSCHED`,
//! first BDP of a flow) use `alpha_unscheduled` instead of α_p (§3.3), still divided by n_p and
//! multiplied by µ (as the ABM code does). Every choice the paper leaves open is a parameter,
//! and `preset = "paper" | "code"` picks the paper's or the ABM authors' ns-3 code's
//! (ns3-datacenter-notes §2 "ABM", §9.1–2) defaults; see docs/schemes/abm.md.
//!
//! The machinery here (n_p counting, µ measurement) is shared with `abm_approx`.

use super::{check_positive, Admission, BmContext, BufferManager, BufferState, Params, QueueRef, Scheme};
use crate::engine::Time;
use crate::packet::{flags, Packet};

/// The ABM code's alpha file (`examples/ABM/alphas`), queues 0..7 (notes §2 DT).
pub const CODE_ALPHAS: [f64; 8] = [1.0, 0.5, 0.5, 0.5, 0.125, 0.0625, 0.03125, 0.015625];

/// How n_p counts congested queues.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Congestion {
    /// Paper §3.1: a queue is congested iff q ≥ `fraction` · its threshold (0.9 in the paper).
    Paper { fraction: f64 },
    /// Code: n_p = Σ_ports min(1, q / sat_bytes) (fractional).
    Soft { sat_bytes: f64 },
}

/// How a raw normalized drain rate becomes the µ/b used in the threshold.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum MuRule {
    /// The ABM code: µ < 1/n_queues or µ > 1 is replaced by 1.
    Code,
    /// µ clamped to [mu_min, 1].
    Clamp(f64),
}

/// What b (the bandwidth µ is normalized by) is.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum MuNorm {
    /// ABM.md §3.1 footnote 2: with ports of different speeds, b is the bandwidth of the
    /// fastest port of the switch, so a queue on a port of rate r drains at most r/b_max.
    Fastest,
    /// b = the queue's own port (the ABM code; all its links have one speed).
    Port,
}

/// Where µ/b comes from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum MuSource {
    /// The scheduler share of the queue among the *congested* queues of its port (ABM §3.3:
    /// "depends on the port's bandwidth, the scheduling algorithm, and the number of congested
    /// queues mapped to the same port"), as in the paper's analysis (§3.1 "each of four queues
    /// ... 0.25 under round robin", §3.4). A queue holding a few ACKs does not take a share.
    Scheduler,
    /// Measured: dequeued bytes over the last update interval / (interval · port rate), as the code.
    Measured,
}

/// Parameters and µ measurement shared by `abm` and `abm_approx`.
pub(crate) struct Common {
    pub alpha: Vec<f64>,
    pub congestion: Congestion,
    pub mu_source: MuSource,
    pub mu_rule: MuRule,
    /// Per port: r_port / b, the factor that turns a share of the port into µ/b (1 with
    /// `MuNorm::Port`, r/r_max with `MuNorm::Fastest`).
    pub port_scale: Vec<f64>,
    /// Headroom (bytes) above the threshold for unscheduled packets (ABM §4.1 "uses headroom
    /// similar to IB"); 0 = none.
    pub headroom_bytes: f64,
    pub interval_ps: Time,
    pub n_queues: usize,
    /// Measured µ/b per queue index (after the rule), refreshed every interval; starts at 1.
    pub mu: Vec<f64>,
    last_deq: Vec<u64>,
}

/// `paper`: the model of §3 (n_p and µ/b instantaneous); `eval`: the paper's evaluation (§4.1:
/// n_p and measured µ updated once per RTT, α_unscheduled = 64, headroom as IB); `code`: the
/// ABM authors' ns-3 code (notes §2). Reproductions of the paper's figures use `eval`.
pub(crate) const PRESETS: &[&str] = &["paper", "eval", "code"];

/// Keys understood by `Common::parse`.
pub(crate) const COMMON_KEYS: &[&str] =
    &["preset", "alpha", "congestion", "congested_fraction", "sat_bytes", "mu_source", "mu_rule", "mu_min", "mu_norm", "headroom_bytes", "update_interval_us"];

impl Common {
    pub(crate) fn parse(p: &Params, ctx: &BmContext, preset: &str) -> Result<Common, String> {
        let code = preset == "code";
        let eval = preset == "eval";
        let nq = ctx.n_queues;
        let alpha = p.per_queue("alpha", nq, Some(0.5))?;
        check_positive("alpha", &alpha)?;
        let congestion = match p.str_or("congestion", if code { "soft" } else { "paper" }, &["paper", "soft"])?.as_str() {
            "paper" => {
                if p.f64_list("sat_bytes")?.is_some() {
                    return Err("switch.bm.sat_bytes: only used with congestion = \"soft\"".into());
                }
                let fraction = p.f64_or("congested_fraction", 0.9)?;
                if !(fraction > 0.0 && fraction <= 1.0) {
                    return Err(format!("switch.bm.congested_fraction: {fraction} is not allowed; must be in (0, 1]"));
                }
                Congestion::Paper { fraction }
            }
            _ => {
                if p.f64_list("congested_fraction")?.is_some() {
                    return Err("switch.bm.congested_fraction: only used with congestion = \"paper\"".into());
                }
                // The code's 20 × 1,400 B, kept as the same number of full packets (item 6).
                let sat = p.f64_or("sat_bytes", ctx.code_bytes(28_000.0))?;
                check_positive("sat_bytes", &[sat])?;
                Congestion::Soft { sat_bytes: sat }
            }
        };
        let mu_source = match p.str_or("mu_source", if code || eval { "measured" } else { "scheduler" }, &["scheduler", "measured"])?.as_str() {
            "scheduler" => MuSource::Scheduler,
            _ => MuSource::Measured,
        };
        let mu_rule = match p.str_or("mu_rule", if code || eval { "code" } else { "clamp" }, &["code", "clamp"])?.as_str() {
            "code" => {
                if p.f64_list("mu_min")?.is_some() {
                    return Err("switch.bm.mu_min: only used with mu_rule = \"clamp\"".into());
                }
                MuRule::Code
            }
            _ => {
                let m = p.f64_or("mu_min", 1.0 / nq as f64)?;
                if !(m > 0.0 && m <= 1.0) {
                    return Err(format!("switch.bm.mu_min: {m} is not allowed; must be in (0, 1]"));
                }
                MuRule::Clamp(m)
            }
        };
        let mu_norm = match p.str_or("mu_norm", if code { "port" } else { "fastest" }, &["fastest", "port"])?.as_str() {
            "fastest" => MuNorm::Fastest,
            _ => MuNorm::Port,
        };
        let fastest = ctx.port_rate_bps.iter().copied().max().unwrap_or(1).max(1) as f64;
        let port_scale: Vec<f64> = ctx
            .port_rate_bps
            .iter()
            .map(|&r| match mu_norm {
                MuNorm::Fastest => r as f64 / fastest,
                MuNorm::Port => 1.0,
            })
            .collect();
        let headroom_bytes = p.f64_or("headroom_bytes", if code { 0.0 } else { super::ib::HEADROOM_BYTES })?;
        if !(headroom_bytes.is_finite() && headroom_bytes >= 0.0) {
            return Err(format!("switch.bm.headroom_bytes = {headroom_bytes}: must be a finite number >= 0"));
        }
        let interval_ps = match p.f64_list("update_interval_us")? {
            Some(v) => {
                if v.len() != 1 || !(v[0].is_finite() && v[0] > 0.0) {
                    return Err("switch.bm.update_interval_us: must be one finite number > 0".into());
                }
                ((v[0] * 1e6).round() as Time).max(1)
            }
            None if ctx.base_rtt_ps > 0 => ctx.base_rtt_ps,
            None => return Err("switch.bm.update_interval_us: required (the network has no base RTT to default to)".into()),
        };
        let n = ctx.port_rate_bps.len() * nq;
        let mu = (0..n).map(|i| port_scale[i / nq]).collect();
        Ok(Common { alpha, congestion, mu_source, mu_rule, port_scale, headroom_bytes, interval_ps, n_queues: nq, mu, last_deq: vec![0; n] })
    }

    #[inline]
    pub(crate) fn apply_rule(&self, mu: f64) -> f64 {
        match self.mu_rule {
            MuRule::Code => {
                if mu < 1.0 / self.n_queues as f64 || mu > 1.0 {
                    1.0
                } else {
                    mu
                }
            }
            MuRule::Clamp(m) => mu.clamp(m, 1.0),
        }
    }

    /// µ/b of queue `q` in force now; `congested(queue index)` tells which queues of q's port
    /// are congested (they share the port with it under the scheduler source). The rule
    /// (floor/ceiling) applies to the share of the own port, then r_port/b scales it.
    #[inline]
    pub(crate) fn mu_of(&self, st: &BufferState, q: QueueRef, congested: impl Fn(usize) -> bool) -> f64 {
        match self.mu_source {
            MuSource::Scheduler => self.apply_rule(st.sched_share_among(q, congested)) * self.port_scale[q.port],
            MuSource::Measured => self.mu[st.idx(q)],
        }
    }

    /// Refresh the measured µ of every queue from the dequeue counters (one update interval).
    pub(crate) fn measure_mu(&mut self, st: &BufferState) {
        let secs = self.interval_ps as f64 * 1e-12;
        for port in 0..st.n_ports {
            let cap = secs * st.port_rate_bps[port] as f64 / 8.0;
            for qi in 0..st.n_queues {
                let i = port * st.n_queues + qi;
                let d = st.deq_bytes[i] - self.last_deq[i];
                self.last_deq[i] = st.deq_bytes[i];
                self.mu[i] = self.apply_rule(d as f64 / cap) * self.port_scale[port];
            }
        }
    }
}

pub struct Abm {
    c: Common,
    alpha_unsched: Vec<f64>,
    /// n_p snapshotted every interval (code) instead of counted at each packet (paper).
    np_interval: bool,
    /// n_p in force in interval mode, per priority.
    np_snap: Vec<f64>,
    /// Soft count: per-queue min(1, q/sat), refreshed at arrivals (before the packet), and the
    /// per-priority sum.
    soft_val: Vec<f64>,
    soft_sum: Vec<f64>,
    /// Paper count: per-queue congested flag and per-priority count.
    flag: Vec<bool>,
    count: Vec<u32>,
    /// Bytes credited to a queue's dequeue count per scheduler visit that finds it empty
    /// (`empty_poll_credit_bytes`; 0: none).
    poll_credit: u64,
}

pub fn build(p: &Params, ctx: &BmContext) -> Result<Scheme, String> {
    Ok(Abm::new(p, ctx)?.into())
}

impl Abm {
    pub(crate) fn new(p: &Params, ctx: &BmContext) -> Result<Abm, String> {
        let mut keys = COMMON_KEYS.to_vec();
        keys.extend_from_slice(&["alpha_unscheduled", "np_update", "empty_poll_credit_bytes"]);
        p.allow_only("abm", &keys)?;
        let preset = p.str_or("preset", "paper", PRESETS)?;
        let code = preset == "code";
        let c = Common::parse(p, ctx, &preset)?;
        let alpha_unsched = p.per_queue("alpha_unscheduled", ctx.n_queues, Some(if code { 1024.0 } else { 64.0 }))?;
        check_positive("alpha_unscheduled", &alpha_unsched)?;
        let np_default = if preset == "paper" { "instant" } else { "interval" };
        let np_interval = p.str_or("np_update", np_default, &["instant", "interval"])? == "interval";
        // The code adds 1,472 B to a queue's dequeue count each time round robin finds it empty
        // (notes §2 ABM step 3); only the measured µ reads it.
        let credit = p.f64_or("empty_poll_credit_bytes", 0.0)?;
        if !(credit.is_finite() && credit >= 0.0 && credit.fract() == 0.0) {
            return Err(format!("switch.bm.empty_poll_credit_bytes = {credit}: must be a whole number of bytes >= 0"));
        }
        if credit > u32::MAX as f64 {
            return Err(format!("switch.bm.empty_poll_credit_bytes = {credit}: at most {} bytes (a packet's worth: the code's is 1472)", u32::MAX));
        }
        if credit > 0.0 && c.mu_source != MuSource::Measured {
            return Err("switch.bm.empty_poll_credit_bytes: only used with mu_source = \"measured\" (preset \"code\" or \"eval\")".into());
        }
        let n = ctx.port_rate_bps.len() * ctx.n_queues;
        let nq = ctx.n_queues;
        Ok(Abm { c, alpha_unsched, np_interval, np_snap: vec![1.0; nq], soft_val: vec![0.0; n], soft_sum: vec![0.0; nq], flag: vec![false; n], count: vec![0; nq], poll_credit: credit as u64 })
    }

    #[inline]
    fn np_live(&self, prio: usize) -> f64 {
        match self.c.congestion {
            Congestion::Paper { .. } => self.count[prio] as f64,
            Congestion::Soft { .. } => self.soft_sum[prio],
        }
    }

    /// n_p in force, floored at 1 (the code's `GetNofP = max(1, N)`).
    #[inline]
    fn np(&self, prio: usize) -> f64 {
        (if self.np_interval { self.np_snap[prio] } else { self.np_live(prio) }).max(1.0)
    }

    /// Whether queue `queue` of `port` is congested (paper count: its flag, q ≥ fraction·T;
    /// soft count: saturated, q ≥ sat_bytes).
    #[inline]
    fn is_congested(&self, port: usize, queue: usize) -> bool {
        let i = port * self.c.n_queues + queue;
        match self.c.congestion {
            Congestion::Paper { .. } => self.flag[i],
            Congestion::Soft { .. } => self.soft_val[i] >= 1.0,
        }
    }

    /// `admit`, with µ/b given (`Some`: the queue disc's own drain rate where the pool is another
    /// switch's, `spine_buffer = "leaf_aliased"`) or this switch's own (`None`).
    pub(crate) fn admit_mu(&mut self, st: &BufferState, q: QueueRef, pkt: &Packet, mu: Option<f64>) -> Admission {
        let i = st.idx(q);
        match self.c.congestion {
            // The code refreshes a queue's soft value at every arrival (dropped or not), from the
            // queue before the packet, and never on dequeue (notes §2 ABM step 2).
            Congestion::Soft { sat_bytes } => {
                let v = (st.queue_bytes[i] as f64 / sat_bytes).min(1.0);
                self.soft_sum[q.queue] += v - self.soft_val[i];
                self.soft_val[i] = v;
            }
            Congestion::Paper { .. } => {
                if !self.np_interval {
                    self.refresh_flag(st, q);
                }
            }
        }
        let t = match mu {
            Some(mu) => self.threshold_for_pkt_mu(st, q, pkt, mu),
            None => self.threshold_for_pkt(st, q, pkt),
        };
        if (st.queue_bytes[i] + pkt.size_bytes as u64) as f64 <= t {
            Admission::Accept
        } else {
            Admission::Drop
        }
    }

    /// The µ/b queue `q` of this switch has now (measured, or its scheduler share).
    #[inline]
    pub(crate) fn own_mu(&self, st: &BufferState, q: QueueRef) -> f64 {
        self.c.mu_of(st, q, |i| self.is_congested(q.port, i))
    }

    /// ABM Eq. 9 with the given α.
    #[inline]
    fn threshold_with(&self, st: &BufferState, q: QueueRef, alpha: f64) -> f64 {
        self.threshold_mu(st, q, alpha, self.own_mu(st, q))
    }

    /// ABM Eq. 9 with the given α and µ/b.
    #[inline]
    fn threshold_mu(&self, st: &BufferState, q: QueueRef, alpha: f64, mu: f64) -> f64 {
        alpha / self.np(q.queue) * mu * st.remaining_bytes() as f64
    }

    /// The threshold `pkt` faces: Eq. 9 with α_unscheduled plus the headroom for unscheduled
    /// packets, Eq. 9 with α_p for the others.
    #[inline]
    fn threshold_for_pkt(&self, st: &BufferState, q: QueueRef, pkt: &Packet) -> f64 {
        self.threshold_for_pkt_mu(st, q, pkt, self.own_mu(st, q))
    }

    #[inline]
    fn threshold_for_pkt_mu(&self, st: &BufferState, q: QueueRef, pkt: &Packet, mu: f64) -> f64 {
        if pkt.has(flags::UNSCHED) {
            self.threshold_mu(st, q, self.alpha_unsched[q.queue], mu) + self.c.headroom_bytes
        } else {
            self.threshold_mu(st, q, self.c.alpha[q.queue], mu)
        }
    }

    /// Paper count: re-evaluate whether queue `q` is congested (q ≥ fraction · its scheduled threshold).
    #[inline]
    fn refresh_flag(&mut self, st: &BufferState, q: QueueRef) {
        if let Congestion::Paper { fraction } = self.c.congestion {
            let i = st.idx(q);
            let len = st.queue_bytes[i];
            let now = len > 0 && len as f64 >= fraction * self.threshold_with(st, q, self.c.alpha[q.queue]);
            if now != self.flag[i] {
                self.flag[i] = now;
                if now {
                    self.count[q.queue] += 1;
                } else {
                    self.count[q.queue] -= 1;
                }
            }
        }
    }
}

impl BufferManager for Abm {
    fn name(&self) -> &'static str {
        "abm"
    }

    fn admit(&mut self, st: &BufferState, q: QueueRef, pkt: &Packet, _now: Time) -> Admission {
        self.admit_mu(st, q, pkt, None)
    }

    fn threshold_bytes(&self, st: &BufferState, q: QueueRef, pkt: &Packet, _now: Time) -> Option<f64> {
        Some(self.threshold_for_pkt(st, q, pkt))
    }

    fn on_enqueue(&mut self, st: &BufferState, q: QueueRef, _pkt: &Packet, _now: Time) {
        if !self.np_interval {
            self.refresh_flag(st, q);
        }
    }

    fn on_dequeue(&mut self, st: &BufferState, q: QueueRef, _pkt: &Packet, _now: Time) -> bool {
        if !self.np_interval {
            self.refresh_flag(st, q);
        }
        true
    }

    fn empty_poll_credit_bytes(&self) -> u64 {
        self.poll_credit
    }

    fn tick_interval_ps(&self) -> Option<Time> {
        (self.np_interval || self.c.mu_source == MuSource::Measured).then_some(self.c.interval_ps)
    }

    fn on_tick(&mut self, st: &BufferState, _now: Time) {
        if self.c.mu_source == MuSource::Measured {
            self.c.measure_mu(st);
        }
        if !self.np_interval {
            return;
        }
        match self.c.congestion {
            Congestion::Soft { .. } => {
                // Re-sum to avoid drift of the incremental updates, then snapshot.
                for p in 0..st.n_queues {
                    let s: f64 = (0..st.n_ports).map(|port| self.soft_val[port * st.n_queues + p]).sum();
                    self.soft_sum[p] = s;
                    self.np_snap[p] = s;
                }
            }
            Congestion::Paper { .. } => {
                // Classify every queue against the threshold in force, then snapshot the counts.
                for port in 0..st.n_ports {
                    for qi in 0..st.n_queues {
                        self.refresh_flag(st, QueueRef { port, queue: qi });
                    }
                }
                for p in 0..st.n_queues {
                    self.np_snap[p] = self.count[p] as f64;
                }
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

    const RTT: Time = 10_000_000; // 10 µs

    /// The context uses the ABM code's own data packet (1,400 B payload + 32 B header), so the
    /// code's byte constants (28,000 B, 21,000 B) keep their values (`BmContext::code_bytes`).
    fn mk(params: Value, nq: usize, ports: usize) -> Abm {
        let params = params.as_object().unwrap().clone();
        let rates = vec![10_000_000_000u64; ports];
        let ctx = BmContext { buffer_bytes: 1_000_000, n_queues: nq, port_rate_bps: &rates, base_rtt_ps: RTT, seed: 1, switch_index: 0, mss_bytes: 1400, header_bytes: 32 };
        Abm::new(&Params::new("switch.bm", &params), &ctx).unwrap()
    }

    fn build_err(params: Value) -> String {
        let params = params.as_object().unwrap().clone();
        let ctx = BmContext { buffer_bytes: 1, n_queues: 2, port_rate_bps: &[1; 2], base_rtt_ps: RTT, seed: 1, switch_index: 0, mss_bytes: 1448, header_bytes: 54 };
        build(&Params::new("switch.bm", &params), &ctx).err().unwrap()
    }

    fn q(port: usize, queue: usize) -> QueueRef {
        QueueRef { port, queue }
    }

    /// Paper preset: n_p counted per packet (q ≥ 0.9 T), µ = scheduler share, α_unsched = 64.
    #[test]
    fn paper_threshold_equals_eq9() {
        let mut bm = mk(json!({"alpha": [1.0, 0.5]}), 2, 4);
        let mut st = state(1_000_000, 4, 2); // round robin
        // Priority 1: queues on ports 0, 1, 2. Priority 0: port 1.
        for (p, b) in [(0, 100_000u64), (1, 100_000), (2, 1_000)] {
            st.on_enqueue(q(p, 1), b);
            bm.on_enqueue(&st, q(p, 1), &pkt(1, 1), 0);
        }
        st.on_enqueue(q(1, 0), 50_000);
        bm.on_enqueue(&st, q(1, 0), &pkt(1, 0), 0);
        // Re-classify everything now that the pool is filled (as packets of every queue would).
        for port in 0..4 {
            for qi in 0..2 {
                bm.refresh_flag(&st, q(port, qi));
            }
        }
        let r = 1_000_000.0 - 251_000.0;
        // No queue reaches 0.9 of its threshold (port 0: 100 000 < 0.9·0.5·R = 337 050), so n = max(1, 0) = 1.
        assert_eq!(bm.count[1], 0);
        let t0 = bm.threshold_bytes(&st, q(0, 1), &pkt(1_500, 1), 0).unwrap();
        assert!((t0 - 0.5 * 1.0 * r).abs() < 1e-6, "{t0}");
        // Port 1 carries priorities 0 and 1 under round robin, but neither is congested (q < 0.9 T):
        // µ/b counts the port's congested queues only (§3.3), so queue 1 keeps the whole port.
        let t1 = bm.threshold_bytes(&st, q(1, 1), &pkt(1_500, 1), 0).unwrap();
        assert!((t1 - 0.5 * 1.0 * r).abs() < 1e-6, "{t1}");
        // Unscheduled packets use α = 64 and IB's headroom (100,000 B) on top (§3.3, §4.1).
        let mut u = pkt(1_500, 1);
        u.flags = flags::UNSCHED;
        assert!((bm.threshold_bytes(&st, q(1, 1), &u, 0).unwrap() - (64.0 * r + 100_000.0)).abs() < 1e-6);
        // Priority 0 (α = 1) on port 1.
        assert!((bm.threshold_bytes(&st, q(1, 0), &pkt(64, 0), 0).unwrap() - r).abs() < 1e-6);
        // Priority 0 on port 1 grows to 700,000 B: R = 99,000. Fixed point of the flags: (1,0) has
        // T = 1·(1/2)·R = 49,500 and is congested; (0,1) and (1,1) (100,000 B ≥ 0.9·0.5/2·R) too;
        // (2,1) (1,000 B) not. So n_1 = 2, n_0 = 1, and both queues of port 1 drain at b/2.
        st.on_enqueue(q(1, 0), 650_000);
        for _ in 0..2 {
            for port in 0..4 {
                for qi in 0..2 {
                    bm.refresh_flag(&st, q(port, qi));
                }
            }
        }
        assert_eq!((bm.count[0], bm.count[1]), (1, 2));
        let r = 99_000.0;
        let t = |bm: &Abm, port, qi| bm.threshold_bytes(&st, q(port, qi), &pkt(1_500, qi as u8), 0).unwrap();
        assert!((t(&bm, 1, 1) - 0.5 / 2.0 * 0.5 * r).abs() < 1e-6);
        assert!((t(&bm, 0, 1) - 0.5 / 2.0 * 1.0 * r).abs() < 1e-6);
        assert!((t(&bm, 1, 0) - 1.0 * 0.5 * r).abs() < 1e-6);
    }

    /// Issue #9 items 1–2: µ/b is normalized by the fastest port (ABM.md §3.1 footnote 2), and a
    /// queue holding a few ACKs does not share the port (§3.3 counts congested queues).
    #[test]
    fn fastest_port_normalizes_and_acks_do_not_share_the_port() {
        // Ports 0–1 at 10 Gb/s, port 2 at 40 Gb/s; two queues per port, round robin.
        let params = json!({"alpha": 0.5}).as_object().unwrap().clone();
        let rates = [10_000_000_000u64, 10_000_000_000, 40_000_000_000];
        let ctx = BmContext { buffer_bytes: 1_000_000, n_queues: 2, port_rate_bps: &rates, base_rtt_ps: RTT, seed: 1, switch_index: 0, mss_bytes: 1448, header_bytes: 54 };
        let mut bm = Abm::new(&Params::new("switch.bm", &params), &ctx).unwrap();
        let mut st = BufferState::new(1_000_000, rates.to_vec(), 2, SchedKind::RoundRobin);
        // One 54-B ACK in queue 0 of port 0, 10,000 B of data in queue 1.
        for (qq, b) in [(q(0, 0), 54u64), (q(0, 1), 10_000)] {
            st.on_enqueue(qq, b);
            bm.on_enqueue(&st, qq, &pkt(b as u32, qq.queue as u8), 0);
        }
        let r = (1_000_000 - 10_054) as f64;
        // 10G port: µ/b = 10/40 = 1/4, not halved by the ACK (before the fix: 1/2 · 1 = 1/2).
        let t = bm.threshold_bytes(&st, q(0, 1), &pkt(1_502, 1), 0).unwrap();
        assert!((t - 0.5 * 0.25 * r).abs() < 1e-6, "{t}");
        // 40G port: µ/b = 1.
        let t = bm.threshold_bytes(&st, q(2, 1), &pkt(1_502, 1), 0).unwrap();
        assert!((t - 0.5 * r).abs() < 1e-6, "{t}");
        // The code preset keeps its per-port rule: µ/b = 1 on the 10G port.
        let params = json!({"alpha": 0.5, "preset": "code"}).as_object().unwrap().clone();
        let bm = Abm::new(&Params::new("switch.bm", &params), &ctx).unwrap();
        assert!((bm.threshold_bytes(&st, q(0, 1), &pkt(1_502, 1), 0).unwrap() - 0.5 * r).abs() < 1e-6);
        // Measured µ is normalized the same way: 12,500 B drained in 10 µs on the 10G port is the
        // port's full rate, µ/b = 1/4 (paper norm) or 1 (code).
        let params = json!({"alpha": 0.5, "preset": "eval"}).as_object().unwrap().clone();
        let mut bm = Abm::new(&Params::new("switch.bm", &params), &ctx).unwrap();
        assert_eq!(bm.tick_interval_ps(), Some(RTT));
        assert_eq!(bm.c.mu_source, MuSource::Measured);
        assert!(bm.np_interval);
        let i = st.idx(q(0, 1));
        st.deq_bytes[i] = 12_500;
        bm.on_tick(&st, RTT);
        assert!((bm.c.mu[i] - 0.25).abs() < 1e-12, "{}", bm.c.mu[i]);
        // eval: unscheduled packets get α = 64 and the 100,000 B headroom.
        let mut u = pkt(1_502, 1);
        u.flags = flags::UNSCHED;
        assert!((bm.threshold_bytes(&st, q(0, 1), &u, 0).unwrap() - (64.0 * 0.25 * r + 100_000.0)).abs() < 1e-6);
    }

    #[test]
    fn paper_count_divides_threshold() {
        // Three ports of priority 0 each at 300 KB: n = 3 → T = α·R/3 = 0.5·100 000/3 = 16 667:
        // all three are ≥ 0.9 T, so they all count.
        let mut bm = mk(json!({}), 1, 4);
        let mut st = state(1_000_000, 4, 1);
        for p in 0..3 {
            st.on_enqueue(q(p, 0), 300_000);
        }
        for _ in 0..3 {
            for p in 0..4 {
                bm.refresh_flag(&st, q(p, 0));
            }
        }
        assert_eq!(bm.count[0], 3);
        let r = 100_000.0;
        let t = bm.threshold_bytes(&st, q(3, 0), &pkt(1_500, 0), 0).unwrap();
        assert!((t - 0.5 * r / 3.0).abs() < 1e-6, "{t}");
        st.on_enqueue(q(3, 0), 14_000);
        bm.on_enqueue(&st, q(3, 0), &pkt(1, 0), 0);
        // R = 86 000: 0.9·0.5·86 000/3 = 12 900 ≤ 14 000 → congested, n = 4.
        assert_eq!(bm.count[0], 4);
        // Draining it to empty un-counts it.
        st.on_dequeue(q(3, 0), 14_000, true);
        bm.on_dequeue(&st, q(3, 0), &pkt(1, 0), 0);
        assert_eq!(bm.count[0], 3);
        // Admission: q + size ≤ T = 16 666.7.
        assert_eq!(bm.admit(&st, q(3, 0), &pkt(16_666, 0), 0), Admission::Accept);
        assert_eq!(bm.admit(&st, q(3, 0), &pkt(16_667, 0), 0), Admission::Drop);
    }

    /// Code preset: soft count Σ min(1, q/28 000) refreshed at arrivals and snapshotted each
    /// interval with the measured µ (code rule), α_unsched = 1024.
    #[test]
    fn code_preset_snapshots_soft_count_and_measured_mu() {
        let mut bm = mk(json!({"preset": "code", "alpha": 0.5}), 2, 3);
        let mut st = state(1_000_000, 3, 2);
        assert_eq!(bm.tick_interval_ps(), Some(RTT));
        // Arrivals at queues (port, prio 1) of 56 000, 14 000 and 0 B.
        st.on_enqueue(q(0, 1), 56_000);
        st.on_enqueue(q(1, 1), 14_000);
        for p in 0..3 {
            bm.admit(&st, q(p, 1), &pkt(1_500, 1), 0);
        }
        assert!((bm.soft_sum[1] - 1.5).abs() < 1e-12);
        // Before the first snapshot n = 1 and µ = 1: T = α·R (DT).
        let r = 1_000_000.0 - 70_000.0;
        assert!((bm.threshold_bytes(&st, q(2, 1), &pkt(1_500, 1), 0).unwrap() - 0.5 * r).abs() < 1e-6);
        // One interval (10 µs at 10 Gb/s = 12 500 B of capacity): port 0 drained 10 000 B (µ = 0.8),
        // port 1 drained 2 500 B (µ = 0.2 < 1/2 → 1), port 2 nothing (→ 1).
        let i = st.idx(q(0, 1));
        st.deq_bytes[i] = 10_000;
        let i = st.idx(q(1, 1));
        st.deq_bytes[i] = 2_500;
        bm.on_tick(&st, RTT);
        assert_eq!(bm.np_snap[1], 1.5);
        let t0 = bm.threshold_bytes(&st, q(0, 1), &pkt(1_500, 1), 0).unwrap();
        assert!((t0 - 0.5 / 1.5 * 0.8 * r).abs() < 1e-6, "{t0}");
        let t1 = bm.threshold_bytes(&st, q(1, 1), &pkt(1_500, 1), 0).unwrap();
        assert!((t1 - 0.5 / 1.5 * 1.0 * r).abs() < 1e-6, "{t1}");
        let mut u = pkt(1_500, 1);
        u.flags = flags::UNSCHED;
        assert!((bm.threshold_bytes(&st, q(0, 1), &u, 0).unwrap() - 1024.0 / 1.5 * 0.8 * r).abs() < 1e-6);
        // The snapshot holds while the live count changes: port 2 fills, n stays 1.5 until the next tick.
        st.on_enqueue(q(2, 1), 28_000);
        bm.admit(&st, q(2, 1), &pkt(1_500, 1), 0);
        assert!((bm.soft_sum[1] - 2.5).abs() < 1e-12);
        assert_eq!(bm.np_snap[1], 1.5);
        // Dequeues do not refresh the soft count (code); the next tick snapshots 2.5. µ over the
        // second interval: port 0 drained 56 000 B (µ = 4.48 > 1 → 1).
        st.on_dequeue(q(0, 1), 56_000, true);
        bm.on_dequeue(&st, q(0, 1), &pkt(1, 1), 0);
        bm.on_tick(&st, 2 * RTT);
        assert_eq!(bm.np_snap[1], 2.5);
        assert_eq!(bm.c.mu[st.idx(q(0, 1))], 1.0);
    }

    /// `admit_mu` (`spine_buffer = "leaf_aliased"`): the pool's scheme admits with the µ given
    /// (the spine queue disc's own) instead of its own queue's. Code preset, α 0.5, R = 1 MB −
    /// 56,000 B; port 0's queue drained 10,000 B of 12,500 in the interval (its µ 0.8), n = 1
    /// (the snapshot: min(1, 56,000 / 28,000)). T = 0.5 · µ · 944,000: 377,600 B with its own
    /// µ, 472,000 B with µ = 1: a packet that brings the queue to 400,000 B is dropped with the
    /// first and admitted with the second.
    #[test]
    fn admit_mu_uses_the_given_drain_rate() {
        let mut bm = mk(json!({"preset": "code", "alpha": 0.5}), 2, 2);
        let mut st = state(1_000_000, 2, 2);
        st.on_enqueue(q(0, 1), 56_000);
        let i = st.idx(q(0, 1));
        st.deq_bytes[i] = 10_000;
        bm.admit(&st, q(0, 1), &pkt(1_500, 1), 0);
        bm.on_tick(&st, RTT);
        assert_eq!(bm.np_snap[1], 1.0);
        assert!((bm.own_mu(&st, q(0, 1)) - 0.8).abs() < 1e-12);
        let big = pkt(400_000 - 56_000, 1);
        assert_eq!(bm.admit_mu(&st, q(0, 1), &big, None), Admission::Drop);
        assert_eq!(bm.admit_mu(&st, q(0, 1), &big, Some(1.0)), Admission::Accept);
        let t = bm.threshold_for_pkt_mu(&st, q(0, 1), &big, 1.0);
        assert!((t - 0.5 * 944_000.0).abs() < 1e-6, "{t}");
    }

    #[test]
    fn clamp_rule_and_strict_priority_share() {
        let mut bm = mk(json!({"mu_source": "measured", "mu_min": 0.1, "update_interval_us": 10.0}), 2, 2);
        let mut st = state(1_000_000, 2, 2);
        let i = st.idx(q(0, 1));
        st.deq_bytes[i] = 2_500; // µ = 0.2
        let i = st.idx(q(1, 1));
        st.deq_bytes[i] = 500; // µ = 0.04 → 0.1
        bm.on_tick(&st, RTT);
        assert!((bm.c.mu[st.idx(q(0, 1))] - 0.2).abs() < 1e-12);
        assert!((bm.c.mu[st.idx(q(1, 1))] - 0.1).abs() < 1e-12);
        assert_eq!(bm.c.mu[st.idx(q(0, 0))], 0.1);
        // Scheduler source under strict priority: a queue 0 holding 1,000 B is not congested
        // (< 0.9·T) and leaves queue 1 the port; once congested it leaves queue 1 a share of 0 → mu_min.
        let mut bm = mk(json!({"mu_min": 0.25}), 2, 2);
        st.sched = SchedKind::StrictPriority;
        st.on_enqueue(q(0, 0), 1_000);
        bm.on_enqueue(&st, q(0, 0), &pkt(1_000, 0), 0);
        let r = 999_000.0;
        assert!((bm.threshold_bytes(&st, q(0, 1), &pkt(1, 1), 0).unwrap() - 0.5 * r).abs() < 1e-6);
        // 400,000 B: R = 600,000, T = 0.5·R = 300,000 ≤ q/0.9 → congested.
        st.on_enqueue(q(0, 0), 399_000);
        bm.on_enqueue(&st, q(0, 0), &pkt(1_000, 0), 0);
        let r = 600_000.0;
        assert!((bm.threshold_bytes(&st, q(0, 1), &pkt(1, 1), 0).unwrap() - 0.5 * 0.25 * r).abs() < 1e-6);
        assert!((bm.threshold_bytes(&st, q(1, 1), &pkt(1, 1), 0).unwrap() - 0.5 * r).abs() < 1e-6);
    }

    #[test]
    fn bad_params_name_the_key() {
        assert!(build_err(json!({"preset": "ns3"})).contains("switch.bm.preset"));
        assert!(build_err(json!({"congestion": "hard"})).contains("allowed: paper, soft"));
        assert!(build_err(json!({"sat_bytes": 1000})).contains("congestion = \"soft\""));
        assert!(build_err(json!({"preset": "code", "congested_fraction": 0.5})).contains("congested_fraction"));
        assert!(build_err(json!({"congested_fraction": 1.5})).contains("(0, 1]"));
        assert!(build_err(json!({"alpha_unscheduled": 0})).contains("> 0"));
        assert!(build_err(json!({"update_interval_us": -1})).contains("update_interval_us"));
        assert!(build_err(json!({"mu_rule": "code", "mu_min": 0.5})).contains("mu_min"));
        assert!(build_err(json!({"beta": 1})).contains("unknown parameter for 'abm'"));
        assert!(build_err(json!({"np_update": 3})).contains("expected a string"));
        assert!(build_err(json!({"mu_norm": "slowest"})).contains("switch.bm.mu_norm"));
        assert!(build_err(json!({"headroom_bytes": -1})).contains("switch.bm.headroom_bytes"));
        assert!(build_err(json!({"preset": "code", "empty_poll_credit_bytes": -1})).contains("switch.bm.empty_poll_credit_bytes = -1: must be a whole number of bytes >= 0"));
        assert!(build_err(json!({"preset": "code", "empty_poll_credit_bytes": 1.5})).contains("whole number"));
        assert!(build_err(json!({"preset": "code", "empty_poll_credit_bytes": 1e30})).contains("at most 4294967295 bytes"));
        assert!(build_err(json!({"preset": "code", "empty_poll_credit_bytes": "1472"})).contains("empty_poll_credit_bytes"));
        assert!(build_err(json!({"empty_poll_credit_bytes": 1472})).contains("only used with mu_source = \"measured\""));
    }
}

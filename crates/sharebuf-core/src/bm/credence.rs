//! Credence (Addanki, Pacut & Schmid, NSDI 2024): a drop-tail scheme that follows LQD with
//! predictions. docs/schemes/credence.md; the rule as the authors' ns-3 code runs it is §1.2:
//!
//! 1. at every arrival of s bytes for queue i, thresholds of a virtual LQD: while ΣT + s > B,
//!    cut min(cut, T_j) off the largest subject threshold T_j (ties: lowest index); then
//!    T_i = min(T_i + s, B), ΣT = min(ΣT + s, B);
//! 2. gate: an arrival for a queue not subject to the rule, or while the longest subject queue
//!    is ≤ B/N (N = the switch's ports), is accepted (Complete Sharing);
//! 3. threshold: q_i + s > T_i → drop;
//! 4. prediction φ ∈ {0, 1} (1 = "LQD drops it": pushed out later or refused), optionally
//!    flipped with probability `flip`; φ = 1 → drop;
//! 5. accept; the switch drops it if the pool lacks room (drop-tail).
//!
//! At a departure the EWMAs of the predictor's features move (§2.1), and T_i follows the real
//! queue: reset to 0 when the queue empties, else reduced by the departure's bytes.
//!
//! Prediction sources (`prediction`): `oracle` (the fates of an `lqd` run of the same scenario:
//! `oracle_drops`, which the Python front builds from `oracle_trace`), `noisy` (the oracle with
//! false-positive / false-negative rates), `model` (a random forest as flat arrays, walked here
//! per packet: `Forest`), `none` ("drop nothing": φ ≡ 0, §5.4).

use super::{Admission, BmContext, BufferManager, BufferState, Params, QueueRef, Scheme};
use crate::engine::Time;
use crate::packet::Packet;
use crate::engine::tx_time_ps;
use crate::switch::{PickKind, SchedState};
use super::SchedKind;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use serde_json::Value;
use std::collections::{HashMap, VecDeque};

/// The EWMAs of Credence's predictor features (credence.md §2.1): q̄ per queue and Q̄ per switch,
/// updated only at departures (and push-outs), with the value just after it:
/// γ = min(Δt, τ)/τ, x̄ ← γ·x + (1 − γ)·x̄ (τ = 0: x̄ = x).
pub struct Features {
    tau_ps: Time,
    q_avg: Vec<f64>,
    q_last: Vec<Time>,
    occ_avg: f64,
    occ_last: Time,
}

impl Features {
    pub fn new(n_queues_total: usize, tau_ps: Time) -> Self {
        Features { tau_ps, q_avg: vec![0.0; n_queues_total], q_last: vec![0; n_queues_total], occ_avg: 0.0, occ_last: 0 }
    }

    #[inline]
    fn ewma(tau_ps: Time, avg: &mut f64, last: &mut Time, x: f64, now: Time) {
        let g = if tau_ps == 0 { 1.0 } else { (now - *last).min(tau_ps) as f64 / tau_ps as f64 };
        *avg = g * x + (1.0 - g) * *avg;
        *last = now;
    }

    /// A packet left queue index `i` (state already updated).
    #[inline]
    pub fn on_departure(&mut self, st: &BufferState, i: usize, now: Time) {
        Self::ewma(self.tau_ps, &mut self.q_avg[i], &mut self.q_last[i], st.queue_bytes[i] as f64, now);
        Self::ewma(self.tau_ps, &mut self.occ_avg, &mut self.occ_last, st.occupied_bytes as f64, now);
    }

    #[inline]
    pub fn q_avg(&self, i: usize) -> f64 {
        self.q_avg[i]
    }

    #[inline]
    pub fn occ_avg(&self) -> f64 {
        self.occ_avg
    }
}

/// One decision tree as scikit-learn stores it: node k is a leaf iff `feature[k] < 0`; else
/// `x[feature[k]] <= threshold[k]` goes to `left[k]`, otherwise `right[k]`. `value[k]` is the
/// leaf's class fractions (accept, drop).
struct Tree {
    feature: Vec<i32>,
    threshold: Vec<f64>,
    left: Vec<u32>,
    right: Vec<u32>,
    value: Vec<[f64; 2]>,
}

/// A random forest exported by `sharebuf train-predictor` (JSON, format `sharebuf-forest-1`),
/// evaluated as scikit-learn's `RandomForestClassifier.predict`: features cast to f32 as sklearn
/// does, each tree's leaf fractions summed in tree order and divided by the number of trees,
/// drop iff mean P(drop) > mean P(accept) (a tie is "accept": argmax picks class 0).
pub struct Forest {
    trees: Vec<Tree>,
    pub n_features: usize,
}

fn arr<'a>(t: &'a Value, key: &str, k: usize) -> Result<&'a Vec<Value>, String> {
    t.get(key).and_then(|v| v.as_array()).ok_or_else(|| format!("model: trees[{k}].{key}: missing or not a list"))
}

impl Forest {
    pub fn from_json(text: &str) -> Result<Forest, String> {
        let v: Value = serde_json::from_str(text).map_err(|e| format!("model: not valid JSON: {e}"))?;
        match v.get("format").and_then(|f| f.as_str()) {
            Some("sharebuf-forest-1") => {}
            other => return Err(format!("model: format = {other:?}; expected \"sharebuf-forest-1\" (written by `sharebuf train-predictor`)")),
        }
        let n_features = v.get("n_features").and_then(|x| x.as_u64()).ok_or("model: n_features: missing or not an integer")? as usize;
        let trees_v = v.get("trees").and_then(|x| x.as_array()).ok_or("model: trees: missing or not a list")?;
        if trees_v.is_empty() {
            return Err("model: trees: empty; at least one tree is needed".into());
        }
        let mut trees = Vec::with_capacity(trees_v.len());
        for (k, t) in trees_v.iter().enumerate() {
            let feature = arr(t, "feature", k)?.iter().map(|x| x.as_i64().map(|f| f as i32)).collect::<Option<Vec<_>>>().ok_or(format!("model: trees[{k}].feature: integers expected"))?;
            let n = feature.len();
            let threshold = arr(t, "threshold", k)?.iter().map(|x| x.as_f64()).collect::<Option<Vec<_>>>().ok_or(format!("model: trees[{k}].threshold: numbers expected"))?;
            let child = |key: &str| -> Result<Vec<i64>, String> { arr(t, key, k)?.iter().map(|x| x.as_i64()).collect::<Option<Vec<_>>>().ok_or(format!("model: trees[{k}].{key}: integers expected")) };
            let (left, right) = (child("left")?, child("right")?);
            let value = arr(t, "value", k)?
                .iter()
                .map(|x| x.as_array().filter(|a| a.len() == 2).and_then(|a| Some([a[0].as_f64()?, a[1].as_f64()?])))
                .collect::<Option<Vec<_>>>()
                .ok_or(format!("model: trees[{k}].value: pairs [p_accept, p_drop] expected"))?;
            if n == 0 || threshold.len() != n || left.len() != n || right.len() != n || value.len() != n {
                return Err(format!("model: trees[{k}]: feature, threshold, left, right, value must have the same non-zero length"));
            }
            for i in 0..n {
                if feature[i] >= 0 {
                    if feature[i] as usize >= n_features {
                        return Err(format!("model: trees[{k}].feature[{i}] = {}: must be < n_features = {n_features}", feature[i]));
                    }
                    // Children after their parent (sklearn's depth-first order): every walk ends.
                    for (name, c) in [("left", left[i]), ("right", right[i])] {
                        if c <= i as i64 || c >= n as i64 {
                            return Err(format!("model: trees[{k}].{name}[{i}] = {c}: must be a later node ({} .. {})", i + 1, n - 1));
                        }
                    }
                }
            }
            trees.push(Tree {
                feature,
                threshold,
                left: left.iter().map(|&c| c.max(0) as u32).collect(),
                right: right.iter().map(|&c| c.max(0) as u32).collect(),
                value,
            });
        }
        Ok(Forest { trees, n_features })
    }

    /// The forest's mean P(accept), P(drop) for feature row `x`.
    pub fn proba(&self, x: &[f64]) -> [f64; 2] {
        let mut s = [0.0f64; 2];
        for t in &self.trees {
            let mut k = 0usize;
            while t.feature[k] >= 0 {
                // sklearn compares the f32 feature with the f64 threshold.
                let xv = x[t.feature[k] as usize] as f32 as f64;
                k = if xv <= t.threshold[k] { t.left[k] } else { t.right[k] } as usize;
            }
            s[0] += t.value[k][0];
            s[1] += t.value[k][1];
        }
        let n = self.trees.len() as f64;
        [s[0] / n, s[1] / n]
    }

    #[inline]
    pub fn predict(&self, x: &[f64]) -> bool {
        let p = self.proba(x);
        p[1] > p[0]
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Source {
    None,
    Oracle,
    Noisy { fp: f64, fnr: f64 },
    Model,
}

/// The LQD fates of one (flow key, seq) at this switch: arrivals seen so far, and which
/// occurrences LQD dropped (sorted).
struct OracleEntry {
    seen: u32,
    drops: Vec<u32>,
}

/// `thresholds = "shadow"`: an exact virtual LQD fed every arrival of the switch and served at
/// each port's line rate, independently of the real queues (credence.md §5.1). Its queue bytes
/// are the thresholds. Virtual packets are kept as their sizes (a queue's FIFO holds sizes, so
/// the switch's own scheduler picks among them with the sizes as ids). Advanced lazily to the
/// time of each arrival; a packet leaves the virtual buffer when its transmission starts, as in
/// the switch. Push-out follows `lqd`'s rule exactly (enqueue, then trim the longest queue's
/// tail; the arrival's own queue loses ties; else the lowest index).
///
/// Under `buffer_accounting = "ip_payload"` a virtual packet is kept as its accounted bytes
/// (what the buffer, B and LQD count) and served as the real port serves it: for the
/// transmission time of its wire bytes (accounted + [`BufferState::acct_overhead_bytes`]),
/// with DRR deficits charged in wire bytes (credence.md §5.8).
pub struct Shadow {
    nq: usize,
    b: u64,
    rates: Vec<u64>,
    fifo: Vec<VecDeque<u32>>,
    bytes: Vec<u64>,
    occ: u64,
    /// Per port: when its current virtual transmission ends.
    free_at: Vec<Time>,
    sched: Vec<SchedState>,
    kind: Option<(SchedKind, PickKind)>,
    quantum: u64,
    /// Wire bytes minus accounted bytes of every packet (`BufferState::acct_overhead_bytes`).
    ovh: u64,
}

impl Shadow {
    pub fn new(rates: &[u64], nq: usize, b: u64, quantum: u64) -> Self {
        let n = rates.len() * nq;
        Shadow { nq, b, rates: rates.to_vec(), fifo: vec![VecDeque::new(); n], bytes: vec![0; n], occ: 0, free_at: vec![0; rates.len()], sched: vec![SchedState::default(); rates.len()], kind: None, quantum, ovh: 0 }
    }

    /// Serve every port up to `now`: each starts its next packet when the previous one ends.
    fn advance(&mut self, sched: &SchedKind, ovh: u64, now: Time) {
        let nq = self.nq;
        self.ovh = ovh;
        if self.kind.is_none() {
            self.kind = Some((sched.clone(), PickKind::of(sched, nq)));
        }
        for p in 0..self.rates.len() {
            // Strictly before `now`: a transmission ending exactly at an arrival's time is
            // taken as ending after it (the engine runs an arrival scheduled earlier first).
            while self.free_at[p] < now && self.serve_one(p) {}
        }
    }

    /// Port `p` starts its next virtual packet at `free_at[p]`, picked by the switch's
    /// scheduler (round-robin pointer, DRR deficits move as in the switch). False: nothing queued.
    fn serve_one(&mut self, p: usize) -> bool {
        let nq = self.nq;
        let Some((kind, pick)) = &self.kind else { return false };
        let qs = &self.fifo[p * nq..(p + 1) * nq];
        let Some(qi) = self.sched[p].pick(qs, *pick, kind, self.quantum, |sz| sz as u64 + self.ovh) else { return false };
        let i = p * nq + qi;
        let sz = self.fifo[i].pop_front().unwrap() as u64;
        self.bytes[i] -= sz;
        self.occ -= sz;
        self.free_at[p] += tx_time_ps(sz + self.ovh, self.rates[p]);
        true
    }

    /// An arrival of `s` bytes for queue index `i` at `now` (after `advance(now)`): LQD's
    /// enqueue-then-trim (the switch asks for room even for a packet an idle port sends at
    /// once). Returns the threshold for it: the virtual queue's bytes with it if the virtual
    /// LQD kept it, without it if not.
    fn arrive(&mut self, i: usize, s: u64, now: Time) -> u64 {
        while self.occ + s > self.b {
            // lqd::victim on the virtual queues.
            let (mut best, mut best_bytes) = (i, self.bytes[i] + s);
            for (k, &b) in self.bytes.iter().enumerate() {
                if b > best_bytes {
                    (best, best_bytes) = (k, b);
                }
            }
            if best == i {
                return self.bytes[i]; // refused
            }
            let sz = self.fifo[best].pop_back().unwrap() as u64;
            self.bytes[best] -= sz;
            self.occ -= sz;
        }
        let p = i / self.nq;
        let idle = self.free_at[p] <= now && self.fifo[p * self.nq..(p + 1) * self.nq].iter().all(|q| q.is_empty());
        self.fifo[i].push_back(s as u32);
        self.bytes[i] += s;
        self.occ += s;
        let t = self.bytes[i];
        if idle {
            // An idle port starts it at once (the switch's pass-through, or its `kick`), through
            // the scheduler, whose state moves as in the switch.
            self.free_at[p] = now;
            self.serve_one(p);
        }
        t
    }

    /// The virtual LQD's bytes per queue index.
    pub fn queue_bytes(&self) -> &[u64] {
        &self.bytes
    }
}

pub struct Credence {
    b: u64,
    n_ports: u64,
    nq: usize,
    /// Per queue class: subject to steps 2–4.
    subject: Vec<bool>,
    gate: bool,
    code_thresholds: bool,
    shadow: Option<Box<Shadow>>,
    cut_bytes: u64,
    t: Vec<u64>,
    sum_t: u64,
    feat: Features,
    source: Source,
    forest: Option<Forest>,
    oracle: HashMap<(u64, u64), OracleEntry>,
    flip: f64,
    start_ps: Time,
    rng: Xoshiro256PlusPlus,
    // counters
    n_gate_accepts: u64,
    n_threshold_drops: u64,
    n_predictions: u64,
    n_predicted_drops: u64,
    n_oracle_drops: u64,
}

const KEYS: &[&str] = &["prediction", "thresholds", "gate", "queues", "fp_rate", "fn_rate", "flip", "model", "oracle_drops", "oracle_trace", "ewma_rtts", "start_us", "cut_bytes"];

fn rate(p: &Params, key: &str) -> Result<f64, String> {
    let x = p.f64_or(key, 0.0)?;
    if !(0.0..=1.0).contains(&x) {
        return Err(format!("switch.bm.{key} = {x}: not allowed; a probability in [0, 1]"));
    }
    Ok(x)
}

/// `oracle_drops` = {switch, flow_key, seq, occurrence}: four equally long lists of integers,
/// the arrivals an `lqd` run dropped (pushed out or refused); the rows of this switch only.
fn oracle_map(v: &Value, switch: usize) -> Result<HashMap<(u64, u64), OracleEntry>, String> {
    let col = |k: &str| -> Result<Vec<u64>, String> {
        v.get(k)
            .and_then(|x| x.as_array())
            .ok_or(format!("switch.bm.oracle_drops.{k}: missing or not a list (expected lists switch, flow_key, seq, occurrence)"))?
            .iter()
            .map(|x| x.as_u64().ok_or(format!("switch.bm.oracle_drops.{k}: {x} is not a non-negative integer")))
            .collect()
    };
    let (sw, key, seq, occ) = (col("switch")?, col("flow_key")?, col("seq")?, col("occurrence")?);
    if key.len() != sw.len() || seq.len() != sw.len() || occ.len() != sw.len() {
        return Err("switch.bm.oracle_drops: switch, flow_key, seq, occurrence must have the same length".into());
    }
    let mut m: HashMap<(u64, u64), OracleEntry> = HashMap::new();
    for i in 0..sw.len() {
        if sw[i] as usize == switch {
            m.entry((key[i], seq[i])).or_insert(OracleEntry { seen: 0, drops: Vec::new() }).drops.push(occ[i] as u32);
        }
    }
    for e in m.values_mut() {
        e.drops.sort_unstable();
    }
    Ok(m)
}

pub fn build(p: &Params, ctx: &BmContext) -> Result<Scheme, String> {
    p.allow_only("credence", KEYS)?;
    let prediction = p.str_or("prediction", "model", &["oracle", "noisy", "model", "none"])?;
    let thresholds = p.str_or("thresholds", "shadow", &["shadow", "code", "none"])?;
    let gate = p.str_or("gate", "b_over_n", &["b_over_n", "none"])? == "b_over_n";
    let nq = ctx.n_queues;
    let subject = match p.f64_list("queues")? {
        None => vec![true; nq],
        Some(list) => {
            let mut s = vec![false; nq];
            for x in list {
                if x.fract() != 0.0 || x < 0.0 || x >= nq as f64 {
                    return Err(format!("switch.bm.queues: {x} is not allowed; queue indices 0..{} (queues_per_port = {nq})", nq - 1));
                }
                s[x as usize] = true;
            }
            s
        }
    };
    let (fp, fnr) = (rate(p, "fp_rate")?, rate(p, "fn_rate")?);
    if prediction != "noisy" {
        for k in ["fp_rate", "fn_rate"] {
            if p.raw(k).is_some() {
                return Err(format!("switch.bm.{k}: only used with prediction = 'noisy' (prediction = '{prediction}')"));
            }
        }
    }
    let flip = rate(p, "flip")?;
    let ewma_rtts = p.f64_or("ewma_rtts", 1.0)?;
    if !(ewma_rtts.is_finite() && ewma_rtts >= 0.0) {
        return Err(format!("switch.bm.ewma_rtts = {ewma_rtts}: not allowed; must be finite and >= 0 (the EWMA time constant in base RTTs)"));
    }
    let start_us = p.f64_or("start_us", 0.0)?;
    if !(start_us.is_finite() && start_us >= 0.0) {
        return Err(format!("switch.bm.start_us = {start_us}: not allowed; must be finite and >= 0"));
    }
    let cut_bytes = p.f64_or("cut_bytes", ctx.code_bytes(1_500.0).round())?;
    if !(cut_bytes.is_finite() && cut_bytes >= 1.0) {
        return Err(format!("switch.bm.cut_bytes = {cut_bytes}: not allowed; must be >= 1 (bytes cut off the longest threshold per step)"));
    }
    if p.raw("oracle_trace").is_some() {
        return Err("switch.bm.oracle_trace: read by the Python front (sharebuf.run), which passes the engine oracle_drops; run the scenario through sharebuf".into());
    }
    let needs_oracle = prediction == "oracle" || prediction == "noisy";
    let oracle = match (needs_oracle, p.raw("oracle_drops")) {
        (true, Some(v)) => oracle_map(v, ctx.switch_index)?,
        (true, None) => return Err(format!("switch.bm.oracle_trace: required with prediction = '{prediction}' (the lqd_trace.parquet of an lqd run of the same scenario with trace = true)")),
        (false, Some(_)) => return Err(format!("switch.bm.oracle_trace: only used with prediction = 'oracle' or 'noisy' (prediction = '{prediction}')")),
        (false, None) => HashMap::new(),
    };
    let forest = match (prediction == "model", p.raw("model")) {
        (true, Some(Value::String(path))) => {
            let text = std::fs::read_to_string(path).map_err(|e| format!("switch.bm.model = '{path}': cannot read: {e}"))?;
            let f = Forest::from_json(&text).map_err(|e| format!("switch.bm.model = '{path}': {e}"))?;
            if f.n_features != 4 {
                return Err(format!("switch.bm.model = '{path}': n_features = {}; Credence's predictor reads 4 (q_bytes, q_avg_bytes, occ_bytes, occ_avg_bytes)", f.n_features));
            }
            Some(f)
        }
        (true, Some(v)) => return Err(format!("switch.bm.model = {v}: expected a path (string) to a forest written by `sharebuf train-predictor`")),
        (true, None) => return Err("switch.bm.model: required with prediction = 'model' (a forest written by `sharebuf train-predictor`)".into()),
        (false, Some(_)) => return Err(format!("switch.bm.model: only used with prediction = 'model' (prediction = '{prediction}')")),
        (false, None) => None,
    };
    let source = match prediction.as_str() {
        "oracle" => Source::Oracle,
        "noisy" => Source::Noisy { fp, fnr },
        "model" => Source::Model,
        _ => Source::None,
    };
    let n = ctx.port_rate_bps.len() * nq;
    Ok(Credence {
        b: ctx.buffer_bytes,
        n_ports: ctx.port_rate_bps.len() as u64,
        nq,
        subject,
        gate,
        code_thresholds: thresholds == "code",
        shadow: (thresholds == "shadow").then(|| Box::new(Shadow::new(ctx.port_rate_bps, nq, ctx.buffer_bytes, 1_500))),
        cut_bytes: cut_bytes as u64,
        t: vec![0; n],
        sum_t: 0,
        feat: Features::new(n, (ewma_rtts * ctx.base_rtt_ps as f64).round() as Time),
        source,
        forest,
        oracle,
        flip,
        start_ps: (start_us * 1e6).round() as Time,
        rng: Xoshiro256PlusPlus::seed_from_u64(ctx.seed),
        n_gate_accepts: 0,
        n_threshold_drops: 0,
        n_predictions: 0,
        n_predicted_drops: 0,
        n_oracle_drops: 0,
    }
    .into())
}

impl Credence {
    /// Step 1: the virtual LQD's thresholds take an arrival of `s` bytes for queue index `i`.
    fn update_thresholds(&mut self, i: usize, s: u64) {
        while self.sum_t + s > self.b {
            let (mut j, mut best) = (usize::MAX, 0u64);
            for (k, &t) in self.t.iter().enumerate() {
                if t > best && self.subject[k % self.nq] {
                    (j, best) = (k, t);
                }
            }
            if j == usize::MAX {
                break; // no subject threshold left to cut (only non-subject ones fill ΣT)
            }
            let cut = self.cut_bytes.min(best);
            self.t[j] -= cut;
            self.sum_t = self.sum_t.saturating_sub(cut);
        }
        self.t[i] = (self.t[i] + s).min(self.b);
        self.sum_t = (self.sum_t + s).min(self.b);
    }

    /// Whether LQD dropped this arrival (counts the arrival: call once per arrival).
    #[inline]
    fn oracle_truth(&mut self, pkt: &Packet) -> bool {
        if self.oracle.is_empty() {
            return false;
        }
        match self.oracle.get_mut(&(pkt.flow_key(), pkt.seq)) {
            None => false,
            Some(e) => {
                let occ = e.seen;
                e.seen += 1;
                e.drops.binary_search(&occ).is_ok()
            }
        }
    }

    /// The thresholds (bytes) of the virtual LQD per queue index and their tracked sum.
    pub fn thresholds(&self) -> (&[u64], u64) {
        (&self.t, self.sum_t)
    }
}

impl BufferManager for Credence {
    fn name(&self) -> &'static str {
        "credence"
    }
    fn admit(&mut self, st: &BufferState, q: QueueRef, pkt: &Packet, now: Time) -> Admission {
        let s = pkt.size_bytes as u64;
        let i = st.idx(q);
        if self.code_thresholds {
            self.update_thresholds(i, s);
        }
        let shadow_t = match &mut self.shadow {
            Some(sh) => {
                sh.advance(&st.sched, st.acct_overhead_bytes, now);
                sh.arrive(i, s, now)
            }
            None => 0,
        };
        let truth = self.oracle_truth(pkt);
        if !self.subject[q.queue] {
            return Admission::Accept;
        }
        if self.gate {
            let mut longest = 0;
            for (k, &b) in st.queue_bytes.iter().enumerate() {
                if b > longest && self.subject[k % self.nq] {
                    longest = b;
                }
            }
            // L ≤ B/N, in integers.
            if longest * self.n_ports <= self.b {
                self.n_gate_accepts += 1;
                return Admission::Accept;
            }
        }
        let t_i = match &self.shadow {
            Some(_) => shadow_t,
            None if self.code_thresholds => self.t[i],
            None => u64::MAX,
        };
        if st.queue_bytes[i] + s > t_i {
            self.n_threshold_drops += 1;
            return Admission::Drop;
        }
        if now < self.start_ps {
            return Admission::Accept;
        }
        let mut phi = match self.source {
            Source::None => false,
            Source::Oracle => truth,
            Source::Noisy { fp, fnr } => {
                if truth {
                    !(fnr > 0.0 && self.rng.gen::<f64>() < fnr)
                } else {
                    fp > 0.0 && self.rng.gen::<f64>() < fp
                }
            }
            Source::Model => {
                let x = [st.queue_bytes[i] as f64, self.feat.q_avg(i), st.occupied_bytes as f64, self.feat.occ_avg()];
                self.forest.as_ref().map_or(false, |f| f.predict(&x))
            }
        };
        if self.flip > 0.0 && self.rng.gen::<f64>() < self.flip {
            phi = !phi;
        }
        self.n_predictions += 1;
        self.n_oracle_drops += truth as u64;
        if phi {
            self.n_predicted_drops += 1;
            Admission::Drop
        } else {
            Admission::Accept
        }
    }
    fn threshold_bytes(&self, st: &BufferState, q: QueueRef, pkt: &Packet, _now: Time) -> Option<f64> {
        match &self.shadow {
            // What it would be if the shadow keeps the packet.
            Some(sh) => Some((sh.bytes[st.idx(q)] + pkt.size_bytes as u64) as f64),
            None => self.code_thresholds.then(|| self.t[st.idx(q)] as f64),
        }
    }
    fn on_dequeue(&mut self, st: &BufferState, q: QueueRef, pkt: &Packet, now: Time) -> bool {
        let i = st.idx(q);
        self.feat.on_departure(st, i, now);
        if self.code_thresholds {
            if st.queue_bytes[i] == 0 {
                self.sum_t = self.sum_t.saturating_sub(self.t[i]);
                self.t[i] = 0;
            } else {
                let c = (pkt.size_bytes as u64).min(self.t[i]);
                self.t[i] -= c;
                self.sum_t = self.sum_t.saturating_sub(c);
            }
        }
        true
    }
    fn stats(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("credence_gate_accepts", self.n_gate_accepts),
            ("credence_threshold_drops", self.n_threshold_drops),
            ("credence_predictions", self.n_predictions),
            ("credence_predicted_drops", self.n_predicted_drops),
            ("credence_oracle_drops_at_prediction", self.n_oracle_drops),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bm::testutil::*;
    use serde_json::json;

    /// A Credence on a bare switch of `ports` ports × `nq` queues, B bytes; full packets of
    /// 1,432 B (mss 1,400 + header 32) so the code's 1,500-B cut is 1,500 B here.
    fn credence(b: u64, ports: usize, nq: usize, params: Value) -> Credence {
        let params = params.as_object().unwrap().clone();
        let rates = vec![10_000_000_000u64; ports];
        let ctx = BmContext { buffer_bytes: b, n_queues: nq, port_rate_bps: &rates, base_rtt_ps: 0, seed: 7, switch_index: 0, mss_bytes: 1400, header_bytes: 32 };
        match build(&Params::new("switch.bm", &params), &ctx) {
            Ok(Scheme::Credence(c)) => c,
            Ok(_) => panic!("credence builds Scheme::Credence"),
            Err(e) => panic!("{e}"),
        }
    }

    fn q(port: usize, queue: usize) -> QueueRef {
        QueueRef { port, queue }
    }

    #[test]
    fn code_thresholds_hand_computed() {
        // credence.md §1.2 step 1 (ns3dc `UpdateThreshold`) and the departure rule, by hand.
        // B = 10,000 B, 3 ports × 2 queues (index = 2·port + queue), data = queue 1 only.
        let mut c = credence(10_000, 3, 2, json!({"prediction": "none", "gate": "none", "queues": [1], "thresholds": "code"}));
        assert_eq!(c.cut_bytes, 1_500);
        let mut st = state(10_000, 3, 2);
        let arrive = |c: &mut Credence, st: &BufferState, qr: QueueRef, s: u32| {
            c.admit(st, qr, &pkt(s, qr.queue as u8), 0);
            (c.t.clone(), c.sum_t)
        };
        // a1: 4,000 B to (0,1): ΣT + s = 4,000 ≤ B, no cut.
        assert_eq!(arrive(&mut c, &st, q(0, 1), 4_000), (vec![0, 4_000, 0, 0, 0, 0], 4_000));
        // a2: 4,000 B to (1,1).
        assert_eq!(arrive(&mut c, &st, q(1, 1), 4_000), (vec![0, 4_000, 0, 4_000, 0, 0], 8_000));
        // a3: an ACK of 1,000 B to (0,0): 9,000 ≤ B.
        assert_eq!(arrive(&mut c, &st, q(0, 0), 1_000), (vec![1_000, 4_000, 0, 4_000, 0, 0], 9_000));
        // a4: 3,000 B to (2,1): 12,000 > B → T1 = T3 = 4,000 tie, lowest index 1 loses 1,500
        // (Σ 7,500); 10,500 > B → T3 (4,000) loses 1,500 (Σ 6,000); 9,000 ≤ B → T5 = 3,000, Σ 9,000.
        assert_eq!(arrive(&mut c, &st, q(2, 1), 3_000), (vec![1_000, 2_500, 0, 2_500, 0, 3_000], 9_000));
        // a5: ACK 2,000 B to (0,0): 11,000 > B → largest data threshold T5 = 3,000 → 1,500
        // (Σ 7,500); 9,500 ≤ B → T0 = 3,000, Σ 9,500. ACK thresholds are never cut.
        assert_eq!(arrive(&mut c, &st, q(0, 0), 2_000), (vec![3_000, 2_500, 0, 2_500, 0, 1_500], 9_500));
        // Departure of 1,000 B from (1,1) whose real queue still holds bytes: T3 −= 1,000.
        st.on_enqueue(q(1, 1), 3_000);
        st.on_dequeue(q(1, 1), 1_000, true);
        c.on_dequeue(&st, q(1, 1), &pkt(1_000, 1), 0);
        assert_eq!((c.t.clone(), c.sum_t), (vec![3_000, 2_500, 0, 1_500, 0, 1_500], 8_500));
        // Departure emptying (2,1): Σ −= T5 = 1,500, T5 = 0.
        st.on_enqueue(q(2, 1), 1_000);
        st.on_dequeue(q(2, 1), 1_000, true);
        c.on_dequeue(&st, q(2, 1), &pkt(1_000, 1), 0);
        assert_eq!((c.t.clone(), c.sum_t), (vec![3_000, 2_500, 0, 1_500, 0, 0], 7_000));
        // a6: 4,000 B to (1,1): 11,000 > B → T1 = 2,500 (largest) → 1,000 (Σ 5,500); 9,500 ≤ B
        // → T3 = 5,500, Σ 9,500.
        assert_eq!(arrive(&mut c, &st, q(1, 1), 4_000), (vec![3_000, 1_000, 0, 5_500, 0, 0], 9_500));
        // a7: 5,000 B to (2,1): 14,500 → T3 5,500 → 4,000 (Σ 8,000); 13,000 → T3 → 2,500 (Σ 6,500);
        // 11,500 → T3 2,500 > T1 1,000 → 1,000 (Σ 5,000); 10,000 ≤ B → T5 = 5,000, Σ 10,000.
        assert_eq!(arrive(&mut c, &st, q(2, 1), 5_000), (vec![3_000, 1_000, 0, 1_000, 0, 5_000], 10_000));
        // a8: ACK 9,000 B to (0,0): 19,000 → T5 5,000 → 3,500 (Σ 8,500); 17,500 → T5 → 2,000
        // (7,000); 16,000 → T5 → 500 (5,500); 14,500 → T1 = T3 = 1,000 tie → T1 loses its whole
        // 1,000 (a partial cut, 4,500); 13,500 → T3 → 0 (3,500); 12,500 → T5 500 → 0 (3,000);
        // 12,000 > B with no data threshold left: stop. T0 = min(3,000 + 9,000, B) = 10,000, Σ = 10,000.
        assert_eq!(arrive(&mut c, &st, q(0, 0), 9_000), (vec![10_000, 0, 0, 0, 0, 0], 10_000));
    }

    #[test]
    fn shadow_thresholds_hand_computed() {
        // B = 3,000 B, 2 ports × 1 queue at 8 Gb/s (1,000 ps per byte), round robin.
        let mut sh = Shadow::new(&[8_000_000_000, 8_000_000_000], 1, 3_000, 1_500);
        let rr = SchedKind::RoundRobin;
        let go = |sh: &mut Shadow, i: usize, s: u64, now: Time| {
            sh.advance(&rr, 0, now);
            let t = sh.arrive(i, s, now);
            (t, sh.queue_bytes().to_vec())
        };
        // t = 0: 1,000 B to the idle port 0 goes straight out (busy until 1 µs): T = 1,000.
        assert_eq!(go(&mut sh, 0, 1_000, 0), (1_000, vec![0, 0]));
        // t = 0: three more wait: the pool fills to B.
        assert_eq!(go(&mut sh, 0, 1_000, 0), (1_000, vec![1_000, 0]));
        assert_eq!(go(&mut sh, 0, 1_000, 0), (2_000, vec![2_000, 0]));
        assert_eq!(go(&mut sh, 0, 1_000, 0), (3_000, vec![3_000, 0]));
        // t = 0: 500 B to the idle port 1: no room; port 0 (3,000) is longer than 0 + 500, so
        // its tail goes; then the packet goes straight out (port 1 busy until 0.5 µs).
        assert_eq!(go(&mut sh, 1, 500, 0), (500, vec![2_000, 0]));
        // t = 1.5 µs: port 0 started its second packet at 1 µs (busy until 2 µs): 1,000 left; a
        // new 1,000 B waits behind it.
        assert_eq!(go(&mut sh, 0, 1_000, 1_500_000), (2_000, vec![2_000, 0]));
        // t = 2 µs exactly: port 0's transmission ending now counts as ending after this arrival
        // (still 2,000 B); 3,000 B to port 1: 2,000 + 3,000 > B and port 1 with the arrival
        // (3,000) is the longest: refused, T = port 1's 0 B.
        assert_eq!(go(&mut sh, 1, 3_000, 2_000_000), (0, vec![2_000, 0]));
        // 1 ps later port 0 has started its next (1,000 left); 1,000 B to the idle port 1 goes out.
        assert_eq!(go(&mut sh, 1, 1_000, 2_000_001), (1_000, vec![1_000, 0]));
        // Through the scheme (no gate, no prediction): T is the shadow's queue with the arrival.
        let mut c = credence(3_000, 2, 1, json!({"prediction": "none", "gate": "none"}));
        let mut st = BufferState::new(3_000, vec![8_000_000_000; 2], 1, SchedKind::RoundRobin);
        assert_eq!(c.admit(&st, q(0, 0), &pkt(1_500, 0), 0), Admission::Accept); // straight out in the shadow
        st.on_enqueue(q(0, 0), 1_500); // the real port 0 holds it (say, its link is slower)
        assert_eq!(c.admit(&st, q(1, 0), &pkt(1_000, 0), 0), Admission::Accept); // T1 = 1,000
        // The real port 1 holds 1,500 B; the shadow's port 1 is busy, its queue takes 1,000 B:
        // T1 = 1,000 < 1,500 + 1,000: refused.
        st.on_enqueue(q(1, 0), 1_500);
        assert_eq!(c.admit(&st, q(1, 0), &pkt(1_000, 0), 0), Admission::Drop);
        // Port 0: shadow 0 + 500 = 500 < real 1,500 + 500: refused.
        assert_eq!(c.admit(&st, q(0, 0), &pkt(500, 0), 0), Admission::Drop);
        assert_eq!(c.threshold_bytes(&st, q(0, 0), &pkt(1, 0), 0), Some(501.0));
        assert_eq!(c.n_threshold_drops, 2);
    }

    #[test]
    fn shadow_serves_wire_time_under_ip_payload() {
        // ip_payload: 978 accounted bytes, 1,000 on the wire (overhead 22). At 8 Gb/s (1,000 ps
        // per byte) a virtual packet holds its port for 1 µs, not the 0.978 µs of 978 B.
        let mut sh = Shadow::new(&[8_000_000_000, 8_000_000_000], 1, 3_000, 1_500);
        let rr = SchedKind::RoundRobin;
        let go = |sh: &mut Shadow, i: usize, s: u64, now: Time| {
            sh.advance(&rr, 22, now);
            let t = sh.arrive(i, s, now);
            (t, sh.queue_bytes().to_vec())
        };
        // t = 0: the first goes straight out (busy until 1 µs); three wait: 2,934 B ≤ B.
        assert_eq!(go(&mut sh, 0, 978, 0), (978, vec![0, 0]));
        assert_eq!(go(&mut sh, 0, 978, 0), (978, vec![978, 0]));
        assert_eq!(go(&mut sh, 0, 978, 0), (1_956, vec![1_956, 0]));
        assert_eq!(go(&mut sh, 0, 978, 0), (2_934, vec![2_934, 0]));
        // The waiting three start at 1, 2 and 3 µs (at 978 B's time: 0.978, 1.956, 2.934 µs,
        // and the queue would be empty at 2.95 µs). At 2.95 µs one waits; a new one joins it.
        assert_eq!(go(&mut sh, 0, 978, 2_950_000), (1_956, vec![1_956, 0]));
        // At 4 µs + 1 ps both have started (3 and 4 µs; busy until 5 µs): the next waits alone.
        assert_eq!(go(&mut sh, 0, 978, 4_000_001), (978, vec![978, 0]));
        // Through the scheme (`credence()` builds 10 Gb/s ports, 800 ps per byte: starts at 0.8,
        // 1.6, 2.4 µs; at 978 B's time 0.7824, 1.5648, 2.3472 µs), the overhead coming from the
        // switch's BufferState: at 2.39 µs one waits, the arrival joins it.
        let mut c = credence(3_000, 2, 1, json!({"prediction": "none", "gate": "none"}));
        let st = BufferState { acct_overhead_bytes: 22, ..BufferState::new(3_000, vec![8_000_000_000; 2], 1, SchedKind::RoundRobin) };
        for _ in 0..4 {
            assert_eq!(c.admit(&st, q(0, 0), &pkt(978, 0), 0), Admission::Accept);
        }
        assert_eq!(c.admit(&st, q(0, 0), &pkt(978, 0), 2_390_000), Admission::Accept);
        assert_eq!(c.threshold_bytes(&st, q(0, 0), &pkt(1, 0), 2_390_000), Some(1_957.0));
        // With overhead 0 (wire accounting) all three have started by 2.39 µs: 979.
        let mut c = credence(3_000, 2, 1, json!({"prediction": "none", "gate": "none"}));
        let st = BufferState::new(3_000, vec![8_000_000_000; 2], 1, SchedKind::RoundRobin);
        for now in [0, 0, 0, 0, 2_390_000] {
            assert_eq!(c.admit(&st, q(0, 0), &pkt(978, 0), now), Admission::Accept);
        }
        assert_eq!(c.threshold_bytes(&st, q(0, 0), &pkt(1, 0), 2_390_000), Some(979.0));
    }

    #[test]
    fn feature_ewmas_hand_computed() {
        // §2.1: γ = min(Δt, τ)/τ, x̄ ← γ·x + (1 − γ)·x̄, at departures only; τ = 10,000 ps.
        let mut f = Features::new(2, 10_000);
        let mut st = state(100_000, 2, 1);
        st.on_enqueue(q(0, 0), 1_000);
        f.on_departure(&st, 0, 5_000); // γ = 0.5: q̄0 = 500, Q̄ = 500
        assert_eq!((f.q_avg(0), f.occ_avg()), (500.0, 500.0));
        st.on_enqueue(q(0, 0), 2_000);
        st.on_enqueue(q(1, 0), 1_000);
        f.on_departure(&st, 0, 25_000); // Δt = 20,000 > τ: γ = 1: q̄0 = 3,000, Q̄ = 4,000
        assert_eq!((f.q_avg(0), f.occ_avg()), (3_000.0, 4_000.0));
        st.on_dequeue(q(0, 0), 1_000, true);
        f.on_departure(&st, 0, 27_500); // γ = 0.25: q̄0 = 500 + 2,250, Q̄ = 750 + 3,000
        assert_eq!((f.q_avg(0), f.occ_avg()), (2_750.0, 3_750.0));
        st.on_dequeue(q(1, 0), 500, true);
        f.on_departure(&st, 1, 27_500); // q̄1: Δt = 27,500 → 500; Q̄: Δt = 0, γ = 0: unchanged
        assert_eq!((f.q_avg(1), f.occ_avg()), (500.0, 3_750.0));
        let mut g = Features::new(1, 0); // τ = 0: the last value
        g.on_departure(&st, 0, 1);
        assert_eq!(g.q_avg(0), 2_000.0);
    }

    #[test]
    fn fallback_is_complete_sharing_below_b_over_n() {
        // φ ≡ 1 (no prediction, flipped always): with every data queue ≤ B/N = 30,000 / 3 = 10,000
        // B every arrival is accepted (the switch then checks the pool); once the longest queue
        // passes B/N, the threshold and φ = 1 drop.
        let mut c = credence(30_000, 3, 1, json!({"prediction": "none", "flip": 1.0}));
        let mut st = state(30_000, 3, 1);
        st.on_enqueue(q(0, 0), 10_000);
        st.on_enqueue(q(1, 0), 9_000);
        st.on_enqueue(q(2, 0), 9_000);
        for p in 0..3 {
            assert_eq!(c.admit(&st, q(p, 0), &pkt(1_000, 0), 0), Admission::Accept, "port {p}");
        }
        st.on_enqueue(q(1, 0), 1_001); // longest 10,001 > B/N
        assert_eq!(c.admit(&st, q(1, 0), &pkt(1, 0), 0), Admission::Drop);
        assert_eq!(c.n_gate_accepts, 3);
    }

    #[test]
    fn drop_nothing_is_the_threshold_rule() {
        // φ ≡ 0, no gate: admit iff q + s ≤ T (T after this arrival's step 1).
        let mut c = credence(10_000, 2, 1, json!({"prediction": "none", "gate": "none", "thresholds": "code"}));
        let mut st = state(10_000, 2, 1);
        // Virtual LQD: 6,000 B to port 0 (T0 = 6,000), then 6,000 B to port 1: 12,000 > B → T0
        // 6,000 → 4,500 (Σ 4,500); 10,500 > B → T0 → 3,000 (Σ 3,000); 9,000 ≤ B → T1 = 6,000.
        assert_eq!(c.admit(&st, q(0, 0), &pkt(6_000, 0), 0), Admission::Accept);
        st.on_enqueue(q(0, 0), 6_000);
        assert_eq!(c.admit(&st, q(1, 0), &pkt(6_000, 0), 0), Admission::Accept);
        assert_eq!(c.t, vec![3_000, 6_000]);
        // Port 0 holds 6,000 > T0 = 3,000: its next arrival is refused even though the real
        // pool has 4,000 B free; T0 grows by the arrival first (ΣT 9,000 + 100 ≤ B).
        assert_eq!(c.admit(&st, q(0, 0), &pkt(100, 0), 0), Admission::Drop);
        assert_eq!(c.t, vec![3_100, 6_000]);
        // Port 1 is empty: 1,000 B ≤ T1: accepted (ΣT 9,100 + 1,000 > B → T1 6,000 → 4,500 first).
        assert_eq!(c.admit(&st, q(1, 0), &pkt(1_000, 0), 0), Admission::Accept);
        assert_eq!(c.t, vec![3_100, 5_500]);
        assert_eq!(c.n_threshold_drops, 1);
    }

    #[test]
    fn oracle_and_noisy_rates() {
        // Oracle: LQD dropped occurrence 1 of (key, seq = 5) and occurrence 0 of seq 6.
        let p = pkt(100, 0);
        let key = p.flow_key();
        let drops = json!({"switch": [0, 0, 1], "flow_key": [key, key, key], "seq": [5, 6, 7], "occurrence": [1, 0, 0]});
        let mut c = credence(1_000_000, 2, 1, json!({"prediction": "oracle", "gate": "none", "thresholds": "none", "oracle_drops": drops}));
        let st = state(1_000_000, 2, 1);
        let mk = |seq| Packet { seq, ..pkt(100, 0) };
        let got: Vec<Admission> = [5, 5, 5, 6, 6, 7].iter().map(|&s| c.admit(&st, q(0, 0), &mk(s), 0)).collect();
        use Admission::*;
        assert_eq!(got, vec![Accept, Drop, Accept, Drop, Accept, Accept]); // seq 7's drop is switch 1's
        // Noisy: half the arrivals are LQD drops; fp = 0.1, fn = 0.3 measured over 20,000 each.
        let n = 20_000u64;
        let drops = json!({"switch": vec![0; n as usize], "flow_key": vec![key; n as usize], "seq": (0..n).map(|i| 2 * i).collect::<Vec<_>>(), "occurrence": vec![0; n as usize]});
        let mut c = credence(1_000_000, 2, 1, json!({"prediction": "noisy", "fp_rate": 0.1, "fn_rate": 0.3, "gate": "none", "thresholds": "none", "oracle_drops": drops}));
        let (mut fp, mut fnn) = (0u64, 0u64);
        for i in 0..2 * n {
            let d = c.admit(&st, q(0, 0), &mk(i), 0) == Drop;
            if i % 2 == 1 && d {
                fp += 1;
            }
            if i % 2 == 0 && !d {
                fnn += 1;
            }
        }
        // 99 % binomial intervals: n·p ± 2.576·sqrt(n·p·(1 − p)): fp 2,000 ± 109, fn 6,000 ± 167.
        assert!((fp as f64 - 2_000.0).abs() < 109.0, "false positives {fp}");
        assert!((fnn as f64 - 6_000.0).abs() < 167.0, "false negatives {fnn}");
    }

    #[test]
    fn forest_arrays_match_a_hand_tree() {
        // Tree A: x0 <= 10 → leaf P(drop) 0.2, else (x2 <= 5.5 → 0.6, else 1.0).
        // Tree B: x1 <= 3 → 0.8, else 0.0.
        let m = json!({"format": "sharebuf-forest-1", "n_features": 4, "trees": [
            {"feature": [0, -2, 2, -2, -2], "threshold": [10.0, -2.0, 5.5, -2.0, -2.0], "left": [1, -1, 3, -1, -1], "right": [2, -1, 4, -1, -1],
             "value": [[0.5, 0.5], [0.8, 0.2], [0.5, 0.5], [0.4, 0.6], [0.0, 1.0]]},
            {"feature": [1, -2, -2], "threshold": [3.0, -2.0, -2.0], "left": [1, -1, -1], "right": [2, -1, -1],
             "value": [[0.5, 0.5], [0.2, 0.8], [1.0, 0.0]]}]});
        let f = Forest::from_json(&m.to_string()).unwrap();
        // x0 = 10 (≤ 10: 0.2) and x1 = 3 (0.8): mean 0.5 = P(accept) 0.5: a tie → accept.
        assert_eq!(f.proba(&[10.0, 3.0, 0.0, 0.0]), [0.5, 0.5]);
        assert!(!f.predict(&[10.0, 3.0, 0.0, 0.0]));
        // x0 = 11, x2 = 5.5 (0.6) with x1 = 3 (0.8): 0.7 → drop.
        assert!((f.proba(&[11.0, 3.0, 5.5, 0.0])[1] - 0.7).abs() < 1e-15);
        assert!(f.predict(&[11.0, 3.0, 5.5, 0.0]));
        // x0 = 11, x2 = 6 (1.0) with x1 = 4 (0.0): 0.5 → accept (tie); x1 = 3.0000001 > 3.
        assert!(!f.predict(&[11.0, 4.0, 6.0, 0.0]));
        assert!(!f.predict(&[0.0, 3.000_001, 0.0, 0.0]));
        // A child pointing backwards is refused with the tree, key and index.
        let mut bad = m.clone();
        bad["trees"][1]["left"][0] = json!(0);
        let e = Forest::from_json(&bad.to_string()).err().unwrap();
        assert!(e.contains("trees[1].left[0] = 0"), "{e}");
    }

    #[test]
    fn bad_parameters_name_the_key() {
        let rates = [1u64; 2];
        let ctx = BmContext { buffer_bytes: 1_000, n_queues: 2, port_rate_bps: &rates, base_rtt_ps: 0, seed: 1, switch_index: 0, mss_bytes: 1400, header_bytes: 32 };
        let err = |v: Value| build(&Params::new("switch.bm", v.as_object().unwrap()), &ctx).err().unwrap();
        assert!(err(json!({})).contains("switch.bm.model: required"));
        assert!(err(json!({"prediction": "magic"})).contains("switch.bm.prediction = 'magic'"));
        assert!(err(json!({"prediction": "oracle"})).contains("switch.bm.oracle_trace: required"));
        assert!(err(json!({"prediction": "none", "fp_rate": 0.1})).contains("only used with prediction = 'noisy'"));
        assert!(err(json!({"prediction": "noisy", "fp_rate": 1.5, "oracle_drops": {}})).contains("switch.bm.fp_rate = 1.5"));
        assert!(err(json!({"prediction": "none", "queues": [2]})).contains("switch.bm.queues: 2"));
        assert!(err(json!({"prediction": "none", "thresholds": "lqd"})).contains("switch.bm.thresholds = 'lqd': not allowed; allowed: shadow, code, none"));
        assert!(err(json!({"prediction": "model", "model": "/nonexistent/m.json"})).contains("cannot read"));
    }
}

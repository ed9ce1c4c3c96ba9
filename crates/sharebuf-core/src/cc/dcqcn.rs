//! DCQCN's reaction point (Zhu et al., SIGCOMM 2015) as the HPCC/ABM/Reverie ns-3 code runs it
//! ("Mellanox version", `RdmaHw::*Mlx`; docs/lossless.md §3): a paced rate starting at line
//! rate, no slow start, no window, no byte counter, no CNP coalescing.
//!
//! State per flow: current rate R_C, target R_T, α (1 at the first CNP), the increase stage s and
//! two flags, "CNP since the last α update" and "CNP since the last decrease check".
//! * First CNP at t0: α := 1, R_C := R_T := rate_on_first_cnp · R_C, the α flag stays clear, the
//!   decrease flag is set; α updates run every τ_α from t0 (first at t0 + τ_α), decrease checks
//!   every τ_dec from t0 + τ_dec + 1 ns.
//! * Later CNPs set both flags.
//! * α update: α := (1 − g)·α + g if the α flag is set, else (1 − g)·α; the flag is cleared.
//! * Decrease check, when its flag is set: R_T := R_C if s > 0 or `clamp_target_rate`;
//!   R_C := max(R_min, R_C·(1 − α/2)); s := 0; flag cleared; the increase timer restarts
//!   (next increase at the check's time + T, then every T).
//! * Increase (timer): s < F: R_C := (R_C + R_T)/2; s = F: R_T := min(line, R_T + R_AI), then
//!   the same average; s > F: R_T := min(line, R_T + R_HAI), then the average; s := s + 1.
//!
//! Here a CNP is an ACK that echoes ECN (`AckInfo::ece`): sharebuf's receiver echoes the CE state
//! of each data packet (one ACK per packet without delayed ACKs), which is the reference's "every
//! marked packet yields a CNP". The timers are not events: α, the decrease grid and the increase
//! timer are deterministic between CNPs, so [`DcqcnState::advance`] replays every timer instant up
//! to the current time, in the order ns-3 runs them (at one instant the timer with the longer
//! period was scheduled first and runs first), with silent α periods in closed form
//! ((1 − g)^k). The engine calls it at every ACK, so a timer's new rate takes effect at the first
//! ACK after its instant (a flow that sends receives one ACK per packet).
//!
//! Loss recovery stays the transport's (this module never touches the window, which is unlimited,
//! nor ssthresh beyond leaving it unlimited). Under `transport.kind = "roce"` (`transport/roce.rs`)
//! a CNP is an ACK or NACK with the CNP flag, and the sender also replays the timers at each send
//! ([`CongestionControl::on_send`]), so a timer's rate applies from the first packet after it.

use super::rate::mbps;
use super::{AckInfo, CongestionControl, PathInfo, Window};
use crate::config::Params;
use crate::engine::{Time, PS_PER_NS, PS_PER_US};

/// The reaction point's parameters (docs/lossless.md §3, defaults as the Reverie runs set them).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DcqcnParams {
    /// α gain g.
    pub g: f64,
    pub alpha_interval_ps: Time,
    pub decrease_interval_ps: Time,
    /// Rate-increase timer T.
    pub rp_timer_ps: Time,
    /// Fast-recovery stages F.
    pub fast_recovery_times: u32,
    pub ai_bps: f64,
    pub hai_bps: f64,
    pub min_bps: f64,
    pub clamp_target_rate: bool,
    pub rate_on_first_cnp: f64,
}

impl Default for DcqcnParams {
    fn default() -> Self {
        DcqcnParams {
            g: 1.0 / 256.0,
            alpha_interval_ps: PS_PER_US,
            decrease_interval_ps: 4 * PS_PER_US,
            rp_timer_ps: 900 * PS_PER_US,
            fast_recovery_times: 1,
            ai_bps: 50e6,
            hai_bps: 100e6,
            min_bps: 100e6,
            clamp_target_rate: false,
            rate_on_first_cnp: 1.0,
        }
    }
}

/// The per-flow state machine, independent of the transport (unit-tested with injected CNPs).
#[derive(Clone, Debug)]
pub struct DcqcnState {
    pub p: DcqcnParams,
    pub line_bps: f64,
    pub rc_bps: f64,
    pub rt_bps: f64,
    pub alpha: f64,
    pub stage: u32,
    /// Time of the first CNP (None: no CNP yet, the flow runs at line rate).
    t0: Option<Time>,
    /// α updates applied so far (the k-th is at t0 + k·τ_α).
    alpha_done: u64,
    alpha_flag: bool,
    /// Next decrease check index (the k-th is at t0 + τ_dec + 1 ns + k·τ_dec).
    dec_next: u64,
    dec_flag: bool,
    /// Next increase instant, if the timer runs.
    inc_next: Option<Time>,
    /// Rate decreases and increases applied (for tests and reports).
    pub decreases: u64,
    pub increases: u64,
}

impl DcqcnState {
    pub fn new(p: DcqcnParams, line_bps: f64) -> Self {
        DcqcnState { p, line_bps, rc_bps: line_bps, rt_bps: line_bps, alpha: 1.0, stage: 0, t0: None, alpha_done: 0, alpha_flag: false, dec_next: 0, dec_flag: false, inc_next: None, decreases: 0, increases: 0 }
    }

    fn dec_time(&self, t0: Time, k: u64) -> Time {
        t0 + self.p.decrease_interval_ps + PS_PER_NS + k * self.p.decrease_interval_ps
    }

    /// Apply every α update at or before `t`.
    fn alpha_to(&mut self, t0: Time, t: Time) {
        let due = (t - t0) / self.p.alpha_interval_ps;
        if due <= self.alpha_done {
            return;
        }
        let mut n = due - self.alpha_done;
        self.alpha_done = due;
        if self.alpha_flag {
            self.alpha = (1.0 - self.p.g) * self.alpha + self.p.g;
            self.alpha_flag = false;
            n -= 1;
        }
        if n > 0 {
            self.alpha *= (1.0 - self.p.g).powf(n as f64);
        }
    }

    fn decrease(&mut self, t: Time) {
        if self.stage > 0 || self.p.clamp_target_rate {
            self.rt_bps = self.rc_bps;
        }
        self.rc_bps = (self.rc_bps * (1.0 - self.alpha / 2.0)).max(self.p.min_bps);
        self.stage = 0;
        self.dec_flag = false;
        self.inc_next = Some(t + self.p.rp_timer_ps);
        self.decreases += 1;
    }

    fn increase(&mut self) {
        let f = self.p.fast_recovery_times;
        if self.stage == f {
            self.rt_bps = (self.rt_bps + self.p.ai_bps).min(self.line_bps);
        } else if self.stage > f {
            self.rt_bps = (self.rt_bps + self.p.hai_bps).min(self.line_bps);
        }
        self.rc_bps = (self.rc_bps + self.rt_bps) / 2.0;
        self.stage = self.stage.saturating_add(1);
        self.increases += 1;
    }

    /// Run every timer instant up to and including `now`.
    pub fn advance(&mut self, now: Time) {
        let Some(t0) = self.t0 else { return };
        loop {
            // Only a decrease check with its flag set changes anything; skip to it.
            let td = if self.dec_flag { Some(self.dec_time(t0, self.dec_next)) } else { None };
            let ti = self.inc_next;
            let inc_first = match (ti, td) {
                (Some(i), Some(d)) => i < d || (i == d && self.p.rp_timer_ps >= self.p.decrease_interval_ps),
                (Some(_), None) => true,
                (None, _) => false,
            };
            if inc_first {
                let i = ti.unwrap();
                if i > now {
                    break;
                }
                self.increase();
                self.inc_next = Some(i + self.p.rp_timer_ps);
            } else if let Some(d) = td {
                if d > now {
                    break;
                }
                self.alpha_to(t0, d);
                self.dec_next += 1;
                self.decrease(d);
            } else {
                break;
            }
        }
        self.alpha_to(t0, now);
        // Decrease checks up to now without a flag did nothing: move the grid past them.
        let first = self.dec_time(t0, 0);
        if now >= first {
            let k = (now - first) / self.p.decrease_interval_ps + 1;
            self.dec_next = self.dec_next.max(k);
        }
    }

    /// A CNP arrives at `now` (after the timers of `now` ran).
    pub fn on_cnp(&mut self, now: Time) {
        self.advance(now);
        if self.t0.is_none() {
            self.t0 = Some(now);
            self.alpha = 1.0;
            self.alpha_flag = false;
            self.dec_flag = true;
            self.rc_bps *= self.p.rate_on_first_cnp;
            self.rt_bps = self.rc_bps;
        } else {
            self.alpha_flag = true;
            self.dec_flag = true;
        }
    }
}

#[derive(Clone)]
pub struct Dcqcn {
    p: DcqcnParams,
    st: Option<DcqcnState>,
}

pub fn build(p: &Params) -> Result<Box<dyn CongestionControl>, String> {
    p.allow_only("dcqcn", &["g", "alpha_interval_us", "decrease_interval_us", "rp_timer_us", "fast_recovery_times", "ai_mbps", "hai_mbps", "min_rate_mbps", "clamp_target_rate", "rate_on_first_cnp"])?;
    let d = DcqcnParams::default();
    let g = p.f64_or("g", d.g)?;
    if !(g > 0.0 && g < 1.0) {
        return Err(format!("transport.cc_params.g = {g}: must lie in (0, 1)"));
    }
    let us = |key: &str, def: Time| -> Result<Time, String> {
        let v = p.f64_or(key, def as f64 / PS_PER_US as f64)?;
        let ps = (v * PS_PER_US as f64).round();
        if !(v.is_finite() && ps >= PS_PER_NS as f64) {
            return Err(format!("transport.cc_params.{key} = {v}: must be at least 0.001 (µs)"));
        }
        Ok(ps as Time)
    };
    let f = p.f64_or("fast_recovery_times", d.fast_recovery_times as f64)?;
    if !(f >= 0.0 && f.fract() == 0.0 && f <= 1000.0) {
        return Err(format!("transport.cc_params.fast_recovery_times = {f}: must be a whole number in [0, 1000]"));
    }
    let first = p.f64_or("rate_on_first_cnp", d.rate_on_first_cnp)?;
    if !(first > 0.0 && first <= 1.0) {
        return Err(format!("transport.cc_params.rate_on_first_cnp = {first}: must lie in (0, 1]"));
    }
    let params = DcqcnParams {
        g,
        alpha_interval_ps: us("alpha_interval_us", d.alpha_interval_ps)?,
        decrease_interval_ps: us("decrease_interval_us", d.decrease_interval_ps)?,
        rp_timer_ps: us("rp_timer_us", d.rp_timer_ps)?,
        fast_recovery_times: f as u32,
        ai_bps: mbps(p, "ai_mbps", 50.0)?,
        hai_bps: mbps(p, "hai_mbps", 100.0)?,
        min_bps: mbps(p, "min_rate_mbps", 100.0)?,
        clamp_target_rate: p.bool_or("clamp_target_rate", d.clamp_target_rate)?,
        rate_on_first_cnp: first,
    };
    Ok(Box::new(Dcqcn { p: params, st: None }))
}

impl Dcqcn {
    fn apply(&self, w: &mut Window) {
        if let Some(s) = &self.st {
            w.pacing_rate_bps = s.rc_bps as u64;
        }
    }
}

impl CongestionControl for Dcqcn {
    fn name(&self) -> &'static str {
        "dcqcn"
    }
    fn clone_box(&self) -> Box<dyn CongestionControl> {
        Box::new(Dcqcn { p: self.p, st: None })
    }
    fn ecn_capable(&self) -> bool {
        true
    }
    fn on_start(&mut self, w: &mut Window, _now: Time, path: &PathInfo) {
        let line = path.line_rate_bps as f64;
        self.st = Some(DcqcnState::new(self.p, line));
        w.cwnd_bytes = u64::MAX / 4;
        w.ssthresh_bytes = u64::MAX / 4;
        self.apply(w);
    }
    fn on_ack(&mut self, w: &mut Window, a: &AckInfo) {
        let Some(s) = self.st.as_mut() else { return };
        if a.ece {
            s.on_cnp(a.now);
        } else {
            s.advance(a.now);
        }
        w.cwnd_bytes = u64::MAX / 4;
        self.apply(w);
    }
    /// No window to cut: the rate alone reacts (to CNPs); loss recovery is the transport's.
    fn ssthresh_after_loss(&mut self, _w: &Window, _in_flight_bytes: u64) -> u64 {
        u64::MAX / 4
    }
    fn ssthresh_after_timeout(&mut self, _w: &Window, _in_flight_bytes: u64) -> u64 {
        u64::MAX / 4
    }
    fn on_timeout(&mut self, w: &mut Window, _now: Time, _snd_max: u64) {
        w.cwnd_bytes = u64::MAX / 4;
        self.apply(w);
    }
    /// The RoCE sender reads the rate at each send: the timers due by now run first, so a
    /// timer's new rate paces the gap after the first packet sent at or after its instant (as
    /// the reference, where the timer sets the queue pair's rate and the next gap uses it).
    fn on_send(&mut self, w: &mut Window, now: Time) {
        if let Some(s) = self.st.as_mut() {
            s.advance(now);
        }
        self.apply(w);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const G: f64 = 1e9;

    fn close(got: f64, want: f64, what: &str) {
        assert!(((got - want) / want).abs() <= 1e-9, "{what}: got {got}, want {want}");
    }

    /// docs/lossless.md §3's two-flow table, 25 Gbps line, the reference's parameters, CNPs
    /// injected: A at 0; B at 0 and 2.5 µs. By hand: α_A(4 µs) = (255/256)^4 = 0.98446631,
    /// α_B(4 µs) = ((255/256)^3 + 1/256)·255/256 = 0.98835731 (the CNP at 2.5 µs counts at the
    /// 3 µs update); at 4.001 µs R_C = 25·(1 − α/2) = 12.694171 / 12.645534 Gbps (R_T stays 25:
    /// s = 0, clamp off); then every 900 µs R_C := (R_C + 25)/2 (fast recovery at s = 0; active
    /// and hyper increase leave R_T capped at 25): 18.847086 / 18.822767, 21.923543 / 21.911384,
    /// 23.461771 / 23.455692, 24.230886 / 24.227846.
    #[test]
    fn two_flow_trace_matches_the_hand_computation() {
        let line = 25.0 * G;
        let mut a = DcqcnState::new(DcqcnParams::default(), line);
        let mut b = DcqcnState::new(DcqcnParams::default(), line);
        a.on_cnp(0);
        b.on_cnp(0);
        b.on_cnp(2_500_000);
        assert_eq!((a.rc_bps, a.rt_bps, a.alpha), (line, line, 1.0));
        let k = 255.0f64 / 256.0;
        for s in [&mut a, &mut b] {
            s.advance(4 * PS_PER_US);
            assert_eq!(s.decreases, 0, "the check is at 4 µs + 1 ns");
            assert_eq!(s.rc_bps, line);
        }
        close(a.alpha, k.powi(4), "α_A(4 µs)");
        close(b.alpha, (k.powi(3) + 1.0 / 256.0) * k, "α_B(4 µs)");
        // The table's 7 digits.
        assert!((a.alpha - 0.9844663).abs() < 1e-7 && (b.alpha - 0.9883573).abs() < 1e-7, "α table: {} {}", a.alpha, b.alpha);
        let t_dec = 4 * PS_PER_US + PS_PER_NS;
        let (ra, rb) = (line * (1.0 - k.powi(4) / 2.0), line * (1.0 - (k.powi(3) + 1.0 / 256.0) * k / 2.0));
        for (s, r, name) in [(&mut a, ra, "A"), (&mut b, rb, "B")] {
            s.advance(t_dec - 1);
            assert_eq!(s.decreases, 0);
            s.advance(t_dec);
            assert_eq!(s.decreases, 1, "{name}: one decrease");
            close(s.rc_bps, r, name);
            assert_eq!(s.rt_bps, line, "{name}: R_T unclamped");
        }
        assert!((a.rc_bps - 12.694171e9).abs() < 1e3 && (b.rc_bps - 12.645534e9).abs() < 1e3, "table 4.001 µs: {} {}", a.rc_bps, b.rc_bps);
        let table = [(18.847086e9, 18.822767e9), (21.923543e9, 21.911384e9), (23.461771e9, 23.455692e9), (24.230886e9, 24.227846e9)];
        let (mut ea, mut eb) = (ra, rb);
        for (n, (ta, tb)) in table.iter().enumerate() {
            let t = t_dec + (n as Time + 1) * 900 * PS_PER_US;
            for s in [&mut a, &mut b] {
                s.advance(t - 1);
                assert_eq!(s.increases, n as u64, "no increase before {t} ps");
                s.advance(t);
                assert_eq!(s.increases, n as u64 + 1);
                assert_eq!(s.decreases, 1, "no further decrease: no CNP");
            }
            ea = (ea + line) / 2.0;
            eb = (eb + line) / 2.0;
            close(a.rc_bps, ea, "A exact");
            close(b.rc_bps, eb, "B exact");
            assert!((a.rc_bps - ta).abs() < 1e3 && (b.rc_bps - tb).abs() < 1e3, "table row {n}: {} {}", a.rc_bps, b.rc_bps);
            assert_eq!(a.rt_bps, line);
        }
        assert_eq!(a.stage, 4);
    }

    /// Lazy replay equals stepping every timer: advancing in one jump to 5 ms gives the same
    /// state as advancing in 1 µs steps, with a later CNP (α flag set at an update) and a
    /// second decrease that clamps R_T (s > 0 by then).
    #[test]
    fn lazy_replay_equals_stepwise() {
        let line = 25.0 * G;
        let mut jump = DcqcnState::new(DcqcnParams::default(), line);
        let mut step = DcqcnState::new(DcqcnParams::default(), line);
        let cnps = [0, 2_500_000, 1_500 * PS_PER_US + 300_000];
        for s in [&mut jump, &mut step] {
            s.on_cnp(cnps[0]);
            s.on_cnp(cnps[1]);
        }
        let mut t = cnps[1];
        while t < cnps[2] {
            t += PS_PER_US / 2;
            step.advance(t.min(cnps[2]));
        }
        jump.advance(cnps[2] - 1);
        for s in [&mut jump, &mut step] {
            s.on_cnp(cnps[2]);
        }
        let end = 5_000 * PS_PER_US;
        while t < end {
            t += PS_PER_US / 2;
            step.advance(t);
        }
        jump.advance(end);
        assert_eq!((jump.decreases, jump.increases, jump.stage), (step.decreases, step.increases, step.stage));
        assert_eq!(jump.decreases, 2);
        close(jump.alpha, step.alpha, "α");
        close(jump.rc_bps, step.rc_bps, "R_C");
        close(jump.rt_bps, step.rt_bps, "R_T");
        // The second decrease (at 1 500.301 µs + ..., with s = 1 after one fast recovery at
        // 904.001 µs) clamped R_T to the R_C it found: below line rate.
        assert!(jump.rt_bps < line);
    }

    #[test]
    fn bad_parameters_name_the_key() {
        let mut m = serde_json::Map::new();
        m.insert("g".into(), serde_json::json!(1.5));
        let e = build(&Params::new("transport.cc_params", &m)).err().unwrap();
        assert!(e.contains("g = 1.5") && e.contains("(0, 1)"), "{e}");
        let mut m = serde_json::Map::new();
        m.insert("byte_counter".into(), serde_json::json!(1));
        let e = build(&Params::new("transport.cc_params", &m)).err().unwrap();
        assert!(e.contains("byte_counter") && e.contains("allowed"), "{e}");
    }
}

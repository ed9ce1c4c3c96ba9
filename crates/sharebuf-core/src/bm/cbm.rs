//! CBM: delay-based buffer sharing (Agarwal, Addanki, Mostafaei, CoNEXT-SW'24; CBM.md §2).
//!
//! Admission is Complete Sharing (the switch drops only when the pool is full). At dequeue
//! a packet of priority p leaving port i is dropped when its sojourn time reaches the target
//! delay (CBM Eq. 1, same form as BSHARE Eq. 1)
//!
//!   θ_p^i(t) = α_p · (B − Q(t)) / (n_p · b)
//!
//! unless its queue (after removing it) holds less than `min_bytes`. b is the port rate,
//! n_p the number of congested queues of priority p, refreshed every `update_interval_us`
//! (default: one base RTT). CBM counts a queue as congested when it holds at least 90% of
//! its own threshold (here the length-equivalent θ·b = α_p·(B − Q)/n_p). Packets of a
//! flow's first RTT (`flags::UNSCHED`) use `alpha_unscheduled` instead of α_p.
//!
//! `threshold_bytes` returns the length-equivalent threshold θ·b = α·(B − Q)/n_p
//! (BSHARE Eq. 10): the queue length a packet arriving now may wait behind if the queue
//! drains at the port rate. BSHARE ([`super::bshare`]) shares this implementation and
//! differs in its congested-queue definition.

use super::{check_positive, Admission, BmContext, BufferManager, BufferState, Params, QueueRef, Scheme};
use crate::engine::{Time, PS_PER_US};
use crate::packet::Packet;

/// What counts as a congested queue when n_p / c_p is refreshed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Congested {
    /// q ≥ f · (length-equivalent threshold α_p·(B − Q)/n_p, using the current n_p): CBM §2.
    OfThreshold(f64),
    /// q ≥ f · B (the whole shared buffer): BSHARE §III-A, read literally.
    OfBuffer(f64),
}

/// The CBM/BSHARE mechanism (one value per switch).
pub struct SojournBm {
    name: &'static str,
    alpha: Vec<f64>,
    alpha_unsched: Vec<f64>,
    min_bytes: u64,
    update_ps: Time,
    congested: Congested,
    /// n_p (c_p) per priority, ≥ 1, as of the last refresh.
    n_cong: Vec<f64>,
    /// Safeguard (BSHARE §III "Safeguard"): an arriving packet is dropped when the pool
    /// occupancy after it would exceed this many bytes (`safeguard_fraction` · B).
    safeguard_bytes: u64,
}

/// Defaults that differ between the two schemes.
pub(crate) struct Defaults {
    pub congested: Congested,
    /// Safeguard fill fraction of B (1 = none: admit while the pool has room).
    pub safeguard_fraction: f64,
}

pub(crate) fn build_sojourn(name: &'static str, d: Defaults, p: &Params, ctx: &BmContext) -> Result<Scheme, String> {
    p.allow_only(name, &["alpha", "alpha_unscheduled", "min_bytes", "update_interval_us", "congested", "congested_fraction", "safeguard_fraction"])?;
    let alpha = p.per_queue("alpha", ctx.n_queues, Some(0.5))?;
    check_positive("alpha", &alpha)?;
    let alpha_unsched = p.per_queue("alpha_unscheduled", ctx.n_queues, Some(1024.0))?;
    check_positive("alpha_unscheduled", &alpha_unsched)?;
    let min_bytes = p.f64_or("min_bytes", 1500.0)?;
    if !(min_bytes.is_finite() && min_bytes >= 0.0) {
        return Err(format!("switch.bm.min_bytes = {min_bytes}: must be a finite number >= 0"));
    }
    let default_us = if ctx.base_rtt_ps > 0 { ctx.base_rtt_ps as f64 / PS_PER_US as f64 } else { 80.0 };
    let upd_us = p.f64_or("update_interval_us", default_us)?;
    check_positive("update_interval_us", &[upd_us])?;
    let (dkind, dfrac) = match d.congested {
        Congested::OfThreshold(f) => ("threshold", f),
        Congested::OfBuffer(f) => ("buffer", f),
    };
    let kind = p.str_or("congested", dkind, &["threshold", "buffer"])?;
    let frac = p.f64_or("congested_fraction", dfrac)?;
    check_positive("congested_fraction", &[frac])?;
    let congested = if kind == "threshold" { Congested::OfThreshold(frac) } else { Congested::OfBuffer(frac) };
    let sg = p.f64_or("safeguard_fraction", d.safeguard_fraction)?;
    if !(sg > 0.0 && sg <= 1.0) {
        return Err(format!("switch.bm.safeguard_fraction = {sg}: not allowed; must be in (0, 1] (1 = no safeguard)"));
    }
    Ok(SojournBm {
        name,
        alpha,
        alpha_unsched,
        min_bytes: min_bytes as u64,
        update_ps: ((upd_us * PS_PER_US as f64).round() as Time).max(1),
        congested,
        n_cong: vec![1.0; ctx.n_queues],
        // 1 = no safeguard: the switch's own pool-full drop (counted as buffer_full) applies.
        safeguard_bytes: if sg >= 1.0 { u64::MAX } else { (sg * ctx.buffer_bytes as f64).floor() as u64 },
    }
    .into())
}

pub fn build(p: &Params, ctx: &BmContext) -> Result<Scheme, String> {
    build_sojourn("cbm", Defaults { congested: Congested::OfThreshold(0.9), safeguard_fraction: 1.0 }, p, ctx)
}

impl SojournBm {
    #[inline]
    fn alpha_for(&self, q: QueueRef, pkt: &Packet) -> f64 {
        super::alpha_of(&self.alpha, &self.alpha_unsched, q, pkt)
    }

    /// Length-equivalent threshold θ·C = α·(B − Q)/n_p, bytes.
    #[inline]
    pub fn threshold_len(&self, st: &BufferState, q: QueueRef, pkt: &Packet) -> f64 {
        self.alpha_for(q, pkt) * st.remaining_bytes() as f64 / self.n_cong[q.queue]
    }

    /// Target delay θ = α·(B − Q)/(n_p · C), picoseconds (CBM Eq. 1, BSHARE Eq. 1).
    #[inline]
    pub fn target_delay_ps(&self, st: &BufferState, q: QueueRef, pkt: &Packet) -> f64 {
        let bytes_per_ps = st.port_rate_bps[q.port] as f64 / 8.0 / 1e12;
        self.threshold_len(st, q, pkt) / bytes_per_ps
    }

    /// The current n_p (c_p) of a priority.
    pub fn congested_count(&self, prio: usize) -> f64 {
        self.n_cong[prio]
    }
}

impl BufferManager for SojournBm {
    fn name(&self) -> &'static str {
        self.name
    }
    #[inline]
    fn admit(&mut self, st: &BufferState, _q: QueueRef, pkt: &Packet, _now: Time) -> Admission {
        // Complete sharing (the switch itself drops when the pool has no room), with BSHARE's
        // safeguard drop once the pool is nearly full.
        if st.occupied_bytes + pkt.size_bytes as u64 > self.safeguard_bytes {
            Admission::Drop
        } else {
            Admission::Accept
        }
    }
    fn threshold_bytes(&self, st: &BufferState, q: QueueRef, pkt: &Packet, _now: Time) -> Option<f64> {
        Some(self.threshold_len(st, q, pkt))
    }
    #[inline]
    fn on_dequeue(&mut self, st: &BufferState, q: QueueRef, pkt: &Packet, now: Time) -> bool {
        // Algorithm 1 line 8: transmit if sojourn < target or QueueLength < MinBytes
        // (the queue length after this packet left it, as the algorithm dequeues first).
        if st.qbytes(q) < self.min_bytes {
            return true;
        }
        let sojourn = now.saturating_sub(pkt.enq_ps) as f64;
        sojourn < self.target_delay_ps(st, q, pkt)
    }
    fn tick_interval_ps(&self) -> Option<Time> {
        Some(self.update_ps)
    }
    fn on_tick(&mut self, st: &BufferState, _now: Time) {
        let r = st.remaining_bytes() as f64;
        for p in 0..self.n_cong.len() {
            let cut = match self.congested {
                Congested::OfThreshold(f) => f * self.alpha[p] * r / self.n_cong[p],
                Congested::OfBuffer(f) => f * st.total_bytes as f64,
            };
            self.n_cong[p] = st.congested_queues(p, cut.ceil() as u64).max(1) as f64;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bm::testutil::*;
    use crate::packet::flags;
    use serde_json::json;

    fn mk(params: serde_json::Value, nq: usize, ports: usize) -> Scheme {
        let params = params.as_object().unwrap().clone();
        let rates = vec![10_000_000_000u64; ports];
        let ctx = BmContext { buffer_bytes: 1_000_000, n_queues: nq, port_rate_bps: &rates, base_rtt_ps: 8 * PS_PER_US, seed: 1, switch_index: 0, mss_bytes: 1448, header_bytes: 54 };
        build(&Params::new("switch.bm", &params), &ctx).unwrap()
    }

    #[test]
    fn theta_equals_eq1_and_drops_stale_packets() {
        let mut bm = mk(json!({"alpha": [1.0, 0.5], "alpha_unscheduled": 8.0, "min_bytes": 3000}), 2, 4);
        assert_eq!(bm.tick_interval_ps(), Some(8 * PS_PER_US));
        let mut st = state(1_000_000, 4, 2);
        let q = QueueRef { port: 1, queue: 1 };
        st.on_enqueue(q, 200_000);
        st.on_enqueue(QueueRef { port: 2, queue: 1 }, 200_000);
        // n_p = 1 before any refresh: θ·C = 0.5 · 600,000 / 1 = 300,000 B -> 240 µs at 10 Gb/s.
        let data = pkt(1_500, 1);
        assert_eq!(bm.threshold_bytes(&st, q, &data, 0), Some(300_000.0));
        // Refresh: both queues hold 200,000 >= 0.9 · 300,000 = 270,000? No -> n_p stays 1.
        bm.on_tick(&st, 0);
        assert_eq!(bm.threshold_bytes(&st, q, &data, 0), Some(300_000.0));
        st.on_enqueue(q, 100_000);
        st.on_enqueue(QueueRef { port: 2, queue: 1 }, 100_000);
        // Now 300,000 each, R = 400,000: cut = 0.9·0.5·400,000 = 180,000 -> n_p = 2.
        bm.on_tick(&st, 0);
        // θ·C = 0.5 · 400,000 / 2 = 100,000 B; θ = 100,000·8/1e10 s = 80 µs.
        assert_eq!(bm.threshold_bytes(&st, q, &data, 0), Some(100_000.0));
        let theta = 80 * PS_PER_US;
        let mut p = data;
        p.enq_ps = 1_000;
        assert!(bm.on_dequeue(&st, q, &p, 1_000 + theta - 1));
        assert!(!bm.on_dequeue(&st, q, &p, 1_000 + theta + 1));
        // Unscheduled packets: α = 8 -> θ·C = 8 · 400,000 / 2 = 1.6 MB.
        let mut u = p;
        u.flags |= flags::UNSCHED;
        assert_eq!(bm.threshold_bytes(&st, q, &u, 0), Some(1_600_000.0));
        assert!(bm.on_dequeue(&st, q, &u, 1_000 + 10 * theta));
        // Below MinBytes nothing is dropped, whatever the sojourn time.
        let small = QueueRef { port: 3, queue: 1 };
        st.on_enqueue(small, 2_999);
        assert!(bm.on_dequeue(&st, small, &p, 1_000 + 100 * theta));
        st.on_enqueue(small, 1);
        assert!(!bm.on_dequeue(&st, small, &p, 1_000 + 100 * theta));
        // Priority 0 has no congested queue: n_0 = 1, α_0 = 1.
        let q0 = QueueRef { port: 0, queue: 0 };
        assert_eq!(bm.threshold_bytes(&st, q0, &pkt(64, 0), 0), Some(397_000.0));
        // Admission is complete sharing.
        assert_eq!(bm.admit(&st, q, &data, 0), Admission::Accept);
    }

    #[test]
    fn congested_definition_and_port_rate() {
        // 'buffer' definition: only queues with >= 0.5·B count.
        let mut bm = mk(json!({"congested": "buffer", "congested_fraction": 0.5, "update_interval_us": 3.5}), 1, 3);
        assert_eq!(bm.tick_interval_ps(), Some(3_500_000));
        let mut st = BufferState::new(1_000_000, vec![10_000_000_000, 40_000_000_000, 10_000_000_000], 1, crate::bm::SchedKind::RoundRobin);
        st.on_enqueue(QueueRef { port: 0, queue: 0 }, 400_000);
        st.on_enqueue(QueueRef { port: 1, queue: 0 }, 400_000);
        bm.on_tick(&st, 0);
        // 400,000 < 500,000: n_p = 1; θ·C = 0.5 · 200,000 = 100,000 B.
        let q1 = QueueRef { port: 1, queue: 0 };
        assert_eq!(bm.threshold_bytes(&st, q1, &pkt(1500, 0), 0), Some(100_000.0));
        // The 40 Gb/s port: θ = 100,000 B / 5 B/ns = 20 µs.
        let mut p = pkt(1500, 0);
        p.enq_ps = 0;
        assert!(bm.on_dequeue(&st, q1, &p, 20 * PS_PER_US - 1));
        assert!(!bm.on_dequeue(&st, q1, &p, 20 * PS_PER_US));
        // The 10 Gb/s port: θ = 80 µs.
        assert!(bm.on_dequeue(&st, QueueRef { port: 0, queue: 0 }, &p, 79 * PS_PER_US));
        // Bad keys are rejected with the section and the allowed values.
        let ctx = BmContext { buffer_bytes: 1, n_queues: 1, port_rate_bps: &[1], base_rtt_ps: 0, seed: 1, switch_index: 0, mss_bytes: 1448, header_bytes: 54 };
        let e = build(&Params::new("switch.bm", json!({"beta": 1}).as_object().unwrap()), &ctx).err().unwrap();
        assert!(e.contains("switch.bm.beta") && e.contains("alpha_unscheduled"), "{e}");
        // ABM's and Reverie's name; the short name is refused, the message naming the allowed ones.
        let e = build(&Params::new("switch.bm", json!({"alpha_unsched": 8}).as_object().unwrap()), &ctx).err().unwrap();
        assert!(e.contains("switch.bm.alpha_unsched: unknown parameter") && e.contains("alpha_unscheduled"), "{e}");
        let e = build(&Params::new("switch.bm", json!({"congested": "ports"}).as_object().unwrap()), &ctx).err().unwrap();
        assert!(e.contains("threshold") && e.contains("buffer"), "{e}");
        // Without a base RTT the refresh interval falls back to 80 µs.
        let bm = build(&Params::new("switch.bm", json!({}).as_object().unwrap()), &ctx).unwrap();
        assert_eq!(bm.tick_interval_ps(), Some(80 * PS_PER_US));
    }
}

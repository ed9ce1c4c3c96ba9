//! BSHARE: packet queuing delay-driven buffer sharing (Agarwal, Maulana, Addanki, Mostafaei;
//! BSHARE.md §III, Eq. 1, Algorithm 1). The full version of CBM ([`super::cbm`]).
//!
//! Admission is Complete Sharing; at dequeue a packet is dropped when its sojourn time is not
//! below θ_p^i(t) = α_p · (B − Q(t)) / (c_p · C) (Eq. 1) unless its queue holds less than
//! MinBytes (Algorithm 1, line 8). c_p is refreshed once per RTT (§III-B, "Threshold update").
//!
//! Differences from CBM:
//! * the safeguard (§III "Safeguard"): an arriving packet is dropped when the pool would fill
//!   beyond `safeguard_fraction` · B (default 0.95, value ours: the paper gives none).
//! * the congested-queue definition. §III-A's text says "when its length reaches at least 90% of
//!   the overall buffer space" (q ≥ 0.9·B, `congested = "buffer"`); with it c_p is almost
//!   always 1 (two queues can never both hold 90% of B) and the 1/c_p isolation of the paper's
//!   own steady-state analysis (§IV, Eq. 3–8) never happens. The default is therefore
//!   `congested = "threshold"` (q ≥ 0.9 of the queue's own length-equivalent threshold, as CBM),
//!   the definition that gives §IV's 1/c_p split; `"buffer"` keeps the literal text.

use super::cbm::{build_sojourn, Congested, Defaults};
use super::{BmContext, Params, Scheme};

/// BSHARE's safeguard fill fraction (value ours; §III names the mechanism, not the value).
pub const SAFEGUARD_FRACTION: f64 = 0.95;

pub fn build(p: &Params, ctx: &BmContext) -> Result<Scheme, String> {
    build_sojourn("bshare", Defaults { congested: Congested::OfThreshold(0.9), safeguard_fraction: SAFEGUARD_FRACTION }, p, ctx)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bm::testutil::*;
    use crate::bm::{BufferManager, QueueRef};
    use crate::engine::PS_PER_US;
    use serde_json::json;

    #[test]
    fn literal_congestion_rule_counts_queues_above_90_percent_of_buffer() {
        let params = json!({"alpha": 0.5, "congested": "buffer"}).as_object().unwrap().clone();
        let ctx = BmContext { buffer_bytes: 1_000_000, n_queues: 1, port_rate_bps: &[10_000_000_000; 3], base_rtt_ps: 10 * PS_PER_US, seed: 1, switch_index: 0, mss_bytes: 1448, header_bytes: 54 };
        let mut bm = build(&Params::new("switch.bm", &params), &ctx).unwrap();
        assert_eq!(bm.name(), "bshare");
        let mut st = state(1_000_000, 3, 1);
        let (a, b) = (QueueRef { port: 0, queue: 0 }, QueueRef { port: 1, queue: 0 });
        st.on_enqueue(a, 300_000);
        st.on_enqueue(b, 300_000);
        bm.on_tick(&st, 0);
        // Neither queue holds 900,000 B: c_p = 1 -> θ·C = 0.5 · 400,000 = 200,000 B (θ = 160 µs).
        let p = pkt(1_500, 0);
        assert_eq!(bm.threshold_bytes(&st, a, &p, 0), Some(200_000.0));
        assert!(bm.on_dequeue(&st, a, &p, 160 * PS_PER_US - 1));
        assert!(!bm.on_dequeue(&st, a, &p, 160 * PS_PER_US));
        // The same state under CBM's rule (q ≥ 0.9 · 200,000): c_p = 2 -> 100,000 B.
        let params = json!({"alpha": 0.5, "congested": "threshold"}).as_object().unwrap().clone();
        let mut bm2 = build(&Params::new("switch.bm", &params), &ctx).unwrap();
        bm2.on_tick(&st, 0);
        assert_eq!(bm2.threshold_bytes(&st, a, &p, 0), Some(100_000.0));
        // The buffer rule with a smaller fraction: q ≥ 0.3·B = 300,000 counts both -> c_p = 2.
        let params = json!({"alpha": 0.5, "congested": "buffer", "congested_fraction": 0.3}).as_object().unwrap().clone();
        let mut bm3 = build(&Params::new("switch.bm", &params), &ctx).unwrap();
        bm3.on_tick(&st, 0);
        assert_eq!(bm3.threshold_bytes(&st, b, &p, 0), Some(100_000.0));
        st.on_dequeue(b, 1, false);
        bm3.on_tick(&st, 0);
        // 299,999 < 300,000: c_p = 1, θ·C = 0.5 · 400,001.
        assert_eq!(bm3.threshold_bytes(&st, b, &p, 0), Some(200_000.5));
    }

    #[test]
    fn default_gives_the_1_over_cp_split_and_the_safeguard_drops_near_full() {
        // Default (§IV): congested = q ≥ 0.9 of the queue's threshold, so two queues at 300,000 B
        // (threshold α(B − Q) = 200,000 with c_p = 1) both count: c_p = 2, θ·C = 100,000 B.
        let params = json!({"alpha": 0.5}).as_object().unwrap().clone();
        let ctx = BmContext { buffer_bytes: 1_000_000, n_queues: 1, port_rate_bps: &[10_000_000_000; 3], base_rtt_ps: 10 * PS_PER_US, seed: 1, switch_index: 0, mss_bytes: 1448, header_bytes: 54 };
        let mut bm = build(&Params::new("switch.bm", &params), &ctx).unwrap();
        let mut st = state(1_000_000, 3, 1);
        let (a, b) = (QueueRef { port: 0, queue: 0 }, QueueRef { port: 1, queue: 0 });
        st.on_enqueue(a, 300_000);
        st.on_enqueue(b, 300_000);
        bm.on_tick(&st, 0);
        let p = pkt(1_500, 0);
        assert_eq!(bm.threshold_bytes(&st, a, &p, 0), Some(100_000.0));
        // Safeguard at 0.95 · B = 950,000 B: admit while Q + size ≤ 950,000.
        st.on_enqueue(b, 348_500); // Q = 948,500
        assert_eq!(bm.admit(&st, a, &pkt(1_500, 0), 0), crate::bm::Admission::Accept);
        assert_eq!(bm.admit(&st, a, &pkt(1_501, 0), 0), crate::bm::Admission::Drop);
        // CBM has no safeguard: it admits up to the full pool.
        let cbm = crate::bm::cbm::build(&Params::new("switch.bm", &json!({}).as_object().unwrap().clone()), &ctx);
        assert_eq!(cbm.unwrap().admit(&st, a, &pkt(51_500, 0), 0), crate::bm::Admission::Accept);
    }
}

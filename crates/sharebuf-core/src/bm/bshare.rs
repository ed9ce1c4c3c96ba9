//! BSHARE: packet queuing delay-driven buffer sharing (Agarwal, Maulana, Addanki, Mostafaei;
//! BSHARE.md §III, Eq. 1, Algorithm 1). The full version of CBM ([`super::cbm`]).
//!
//! Admission is Complete Sharing; at dequeue a packet is dropped when its sojourn time is not
//! below θ_p^i(t) = α_p · (B − Q(t)) / (c_p · C) (Eq. 1) unless its queue holds less than
//! MinBytes (Algorithm 1, line 8). c_p is refreshed once per RTT (§III-B, "Threshold update").
//!
//! The one difference from CBM: BSHARE §III-A classifies a queue as congested "when its length
//! reaches at least 90% of the overall buffer space" (q ≥ 0.9·B), whereas CBM uses 90% of the
//! queue's own threshold. We follow each paper literally by default (`congested = "buffer"`
//! here, `"threshold"` for CBM); either scheme accepts both. With the literal BSHARE rule c_p
//! is almost always 1 (two queues can never both hold 90% of B), so every congested queue gets
//! θ = α_p(B − Q)/C, DT-like; `congested = "threshold"` gives the 1/c_p split of the paper's
//! steady-state analysis (§IV, Eq. 3–8).

use super::cbm::{build_sojourn, Congested, Defaults};
use super::{BmContext, BufferManager, Params};

pub fn build(p: &Params, ctx: &BmContext) -> Result<Box<dyn BufferManager>, String> {
    build_sojourn("bshare", Defaults { congested: Congested::OfBuffer(0.9) }, p, ctx)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bm::testutil::*;
    use crate::bm::QueueRef;
    use crate::engine::PS_PER_US;
    use serde_json::json;

    #[test]
    fn literal_congestion_rule_counts_queues_above_90_percent_of_buffer() {
        let params = json!({"alpha": 0.5}).as_object().unwrap().clone();
        let ctx = BmContext { buffer_bytes: 1_000_000, n_queues: 1, port_rate_bps: &[10_000_000_000; 3], base_rtt_ps: 10 * PS_PER_US, seed: 1, switch_index: 0 };
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
        let params = json!({"alpha": 0.5, "congested_fraction": 0.3}).as_object().unwrap().clone();
        let mut bm3 = build(&Params::new("switch.bm", &params), &ctx).unwrap();
        bm3.on_tick(&st, 0);
        assert_eq!(bm3.threshold_bytes(&st, b, &p, 0), Some(100_000.0));
        st.on_dequeue(b, 1, false);
        bm3.on_tick(&st, 0);
        // 299,999 < 300,000: c_p = 1, θ·C = 0.5 · 400,001.
        assert_eq!(bm3.threshold_bytes(&st, b, &p, 0), Some(200_000.5));
    }
}

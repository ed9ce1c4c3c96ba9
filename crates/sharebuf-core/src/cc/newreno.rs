//! TCP NewReno window control (RFC 5681, RFC 6582): slow start, congestion avoidance,
//! halve on loss. Fast recovery itself lives in the transport.

use super::{AckInfo, CongestionControl, RenoGrowth, Window};
use crate::config::Params;

#[derive(Clone, Default)]
pub struct NewReno {
    growth: RenoGrowth,
}

pub fn build(p: &Params) -> Result<Box<dyn CongestionControl>, String> {
    p.allow_only("newreno", &[])?;
    Ok(Box::new(NewReno::default()))
}

impl CongestionControl for NewReno {
    fn name(&self) -> &'static str {
        "newreno"
    }
    fn clone_box(&self) -> Box<dyn CongestionControl> {
        Box::new(NewReno::default())
    }
    fn on_ack(&mut self, w: &mut Window, a: &AckInfo) {
        if !a.in_recovery && a.acked_bytes > 0 {
            self.growth.grow(w, a.acked_bytes);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slow_start_then_linear() {
        let mut cc = NewReno::default();
        let mut w = Window { cwnd_bytes: 1000, ssthresh_bytes: 4000, mss_bytes: 1000, pacing_rate_bps: 0 };
        let ack = |n| AckInfo { now: 0, acked_bytes: n, ece: false, rtt_ps: None, srtt_ps: None, echo_ts_ps: 0, int: None, in_recovery: false, snd_una: 0, snd_nxt: 0, next_tx: 0, path: &crate::cc::PathInfo { base_rtt_ps: 0, tau_ps: 0, line_rate_bps: 1 } };
        for _ in 0..3 {
            cc.on_ack(&mut w, &ack(1000));
        }
        assert_eq!(w.cwnd_bytes, 4000);
        // Congestion avoidance: +1 MSS per cwnd of acked bytes.
        for _ in 0..4 {
            cc.on_ack(&mut w, &ack(1000));
        }
        assert_eq!(w.cwnd_bytes, 5000);
        for _ in 0..4 {
            cc.on_ack(&mut w, &ack(1000));
        }
        assert_eq!(w.cwnd_bytes, 5000);
        cc.on_ack(&mut w, &ack(1000));
        assert_eq!(w.cwnd_bytes, 6000);
    }
}

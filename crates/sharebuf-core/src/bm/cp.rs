//! Complete Partitioning (CP): every (port, queue) owns a static equal share
//! B / (ports × queues) and never uses more.

use super::{Admission, BmContext, BufferManager, BufferState, Params, QueueRef, Scheme};
use crate::engine::Time;
use crate::packet::Packet;

pub struct CompletePartitioning {
    share_bytes: u64,
}

pub fn build(p: &Params, ctx: &BmContext) -> Result<Scheme, String> {
    p.allow_only("cp", &[])?;
    let n = (ctx.port_rate_bps.len() * ctx.n_queues) as u64;
    Ok(CompletePartitioning { share_bytes: ctx.buffer_bytes / n.max(1) }.into())
}

impl BufferManager for CompletePartitioning {
    fn name(&self) -> &'static str {
        "cp"
    }
    fn uses_queue_hooks(&self) -> bool {
        false
    }
    fn admit(&mut self, st: &BufferState, q: QueueRef, pkt: &Packet, _now: Time) -> Admission {
        if st.qbytes(q) + pkt.size_bytes as u64 <= self.share_bytes {
            Admission::Accept
        } else {
            Admission::Drop
        }
    }
    fn threshold_bytes(&self, _st: &BufferState, _q: QueueRef, _pkt: &Packet, _now: Time) -> Option<f64> {
        Some(self.share_bytes as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bm::testutil::*;

    #[test]
    fn static_share() {
        let ctx = BmContext { buffer_bytes: 12_000, n_queues: 2, port_rate_bps: &[1; 3], base_rtt_ps: 0, seed: 1, switch_index: 0, mss_bytes: 1448, header_bytes: 54 };
        let mut bm = build(&Params::new("switch.bm", &Default::default()), &ctx).unwrap();
        let mut st = state(12_000, 3, 2);
        let q = QueueRef { port: 1, queue: 1 };
        st.on_enqueue(q, 1_500);
        assert_eq!(bm.threshold_bytes(&st, q, &pkt(500, 1), 0), Some(2_000.0));
        assert_eq!(bm.admit(&st, q, &pkt(500, 1), 0), Admission::Accept);
        assert_eq!(bm.admit(&st, q, &pkt(501, 1), 0), Admission::Drop);
    }
}

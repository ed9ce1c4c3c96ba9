//! Complete Sharing (CS): any queue may take the whole pool. The switch drops a packet
//! only when the pool has no room for it.

use super::{Admission, BmContext, BufferManager, BufferState, Params, QueueRef, Scheme};
use crate::engine::Time;
use crate::packet::Packet;

pub struct CompleteSharing;

pub fn build(p: &Params, _ctx: &BmContext) -> Result<Scheme, String> {
    p.allow_only("cs", &[])?;
    Ok(CompleteSharing.into())
}

impl BufferManager for CompleteSharing {
    fn name(&self) -> &'static str {
        "cs"
    }
    fn uses_queue_hooks(&self) -> bool {
        false
    }
    fn admit(&mut self, _st: &BufferState, _q: QueueRef, _pkt: &Packet, _now: Time) -> Admission {
        Admission::Accept
    }
    fn threshold_bytes(&self, st: &BufferState, q: QueueRef, _pkt: &Packet, _now: Time) -> Option<f64> {
        Some((st.qbytes(q) + st.remaining_bytes()) as f64)
    }
}

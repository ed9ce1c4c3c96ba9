//! Lossless priorities and Priority Flow Control (docs/lossless.md §1–2, §6), off unless
//! `[switch] lossless_priorities` names a priority.
//!
//! Per switch, the ingress view over the same shared memory: bytes per (ingress port,
//! priority) still buffered (`in`), the part of them in headroom (`hdrm`), the headroom limit per
//! port (`xoff`) and the "I am pausing my peer" bit per (port, priority). The PFC threshold of a
//! lossless (i, p) is DT on the ingress shared pool, as the reference's SONiC model computes it:
//!
//! ```text
//!   X = Σ xoff over lossless (i, p)            (the headroom pool, carved out of B)
//!   T_in = α_in · max(0, B − X − shared_used)   shared_used = used − hdrm_used
//! ```
//!
//! An arriving lossless packet of `s` bytes goes to headroom if (i, p) is already in headroom or
//! `in + s > T_in` (the first packet above the threshold is counted in headroom); a pause is sent
//! when `hdrm > 0` and (i, p) is not pausing. Departures drain headroom first; a resume is sent
//! when pausing, `hdrm = 0` and (`in < xon` or `in + xon_offset ≤ T_in`). Lossless packets are
//! never refused by the scheme; lossy ones additionally need room outside the unused headroom.

use crate::bm::BufferManager;
use crate::engine::Time;

/// The headroom (bytes) a lossless (port, priority) needs so that nothing is lost between the
/// XOFF decision and the moment the upstream port stops (docs/lossless.md §6, invariant 4): the
/// packet that crossed the threshold, the packet this port is serializing when the frame wants to
/// leave, the 64 B frame, the flight of the frame and of the data already on the link
/// (`2·r·d/8`), the packet the upstream port is serializing and its device FIFO.
pub fn headroom_bound_bytes(rate_bps: u64, delay_ps: Time, mtu_wire_bytes: u64, upstream_dev_cap: u32) -> u64 {
    let flight = (2 * rate_bps as u128 * delay_ps as u128).div_ceil(8 * crate::engine::PS_PER_S as u128) as u64;
    flight + (3 + upstream_dev_cap as u64) * mtu_wire_bytes + PFC_FRAME_BYTES
}

/// Wire size of a PFC frame (a minimum Ethernet frame).
pub const PFC_FRAME_BYTES: u64 = 64;

/// The ingress view and PFC state of one switch.
#[derive(Clone, Debug)]
pub struct PfcSwitch {
    /// Bit p set: priority p is lossless.
    pub lossless: u8,
    n_ports: usize,
    /// Per (port, priority), index `port * 8 + prio`.
    in_bytes: Vec<u64>,
    hdrm_bytes: Vec<u64>,
    /// Highest `hdrm` seen per (port, priority).
    pub max_hdrm_bytes: Vec<u64>,
    /// Headroom limit per port (the same for each lossless priority of the port).
    pub xoff_bytes: Vec<u64>,
    /// Per port, bit p: this switch is pausing its peer on priority p.
    pausing: Vec<u8>,
    pub hdrm_used: u64,
    /// X: the headroom pool.
    pub headroom_pool: u64,
    pub buffer_bytes: u64,
    pub xon_bytes: u64,
    pub xon_offset_bytes: u64,
    pub alpha_ingress: f64,
    /// Per port: pauses and resumes this switch sent through it.
    pub pauses_sent: Vec<u64>,
    pub resumes_sent: Vec<u64>,
    /// Lossless packets that found their headroom full (counted, not dropped: a configuration
    /// failure the tests assert never happens).
    pub headroom_overflows: u64,
    /// The switch's scheme decides headroom entry and XON (`BufferManager::decides_ingress`,
    /// Reverie) instead of DT on the ingress pool.
    pub scheme_ingress: bool,
}

/// What an arrival or departure asks the simulator to send upstream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PfcAction {
    None,
    Pause,
    Resume,
}

impl PfcSwitch {
    pub fn new(lossless: u8, buffer_bytes: u64, xoff_bytes: Vec<u64>, xon_bytes: u64, xon_offset_bytes: u64, alpha_ingress: f64) -> Self {
        let n = xoff_bytes.len();
        let headroom_pool = xoff_bytes.iter().sum::<u64>() * lossless.count_ones() as u64;
        PfcSwitch {
            lossless,
            n_ports: n,
            in_bytes: vec![0; n * 8],
            hdrm_bytes: vec![0; n * 8],
            max_hdrm_bytes: vec![0; n * 8],
            xoff_bytes,
            pausing: vec![0; n],
            hdrm_used: 0,
            headroom_pool,
            buffer_bytes,
            xon_bytes,
            xon_offset_bytes,
            alpha_ingress,
            pauses_sent: vec![0; n],
            resumes_sent: vec![0; n],
            headroom_overflows: 0,
            scheme_ingress: false,
        }
    }

    #[inline]
    pub fn is_lossless(&self, prio: u8) -> bool {
        prio < 8 && self.lossless & (1 << prio) != 0
    }

    /// The PFC (ingress) threshold with `used` bytes in the switch.
    #[inline]
    pub fn threshold(&self, used: u64) -> f64 {
        let shared_used = used - self.hdrm_used;
        let free = (self.buffer_bytes.saturating_sub(self.headroom_pool)).saturating_sub(shared_used);
        self.alpha_ingress * free as f64
    }

    /// Bytes a lossy packet must leave free: the headroom not in use.
    #[inline]
    pub fn reserved_headroom(&self) -> u64 {
        self.headroom_pool - self.hdrm_used
    }

    pub fn in_bytes(&self, port: usize, prio: u8) -> u64 {
        self.in_bytes[port * 8 + prio as usize]
    }

    pub fn hdrm(&self, port: usize, prio: u8) -> u64 {
        self.hdrm_bytes[port * 8 + prio as usize]
    }

    pub fn is_pausing(&self, port: usize, prio: u8) -> bool {
        self.pausing[port] & (1 << prio) != 0
    }

    /// S − S_used with `used` bytes in the switch: the shared pool B − X less the bytes outside
    /// headroom (0 if full).
    #[inline]
    pub fn free_shared(&self, used: u64) -> u64 {
        self.buffer_bytes.saturating_sub(self.headroom_pool).saturating_sub(used - self.hdrm_used)
    }

    /// A lossless packet of `s` bytes from ingress `port` is admitted, with `used` bytes in the
    /// switch before it (the simulator counts it in the buffer after this call); PFC threshold:
    /// DT on the ingress pool.
    pub fn on_arrive(&mut self, port: usize, prio: u8, s: u64, used: u64) -> PfcAction {
        self.arrive::<crate::bm::Scheme>(port, prio, s, used, None)
    }

    /// `on_arrive` with the scheme deciding headroom entry (`scheme_ingress`): the packet is
    /// counted first, then the scheme compares its view with the threshold on S − S_used with
    /// the packet in the shared pool (the reference's `UpdateIngressAdmission`). A packet the
    /// shared pool cannot hold goes to headroom whatever the scheme says, so that a lossless
    /// packet never takes the headroom other queues may need.
    pub fn on_arrive_scheme<B: BufferManager + ?Sized>(&mut self, port: usize, prio: u8, s: u64, used: u64, bm: &mut B) -> PfcAction {
        self.arrive(port, prio, s, used, Some(bm))
    }

    fn arrive<B: BufferManager + ?Sized>(&mut self, port: usize, prio: u8, s: u64, used: u64, bm: Option<&mut B>) -> PfcAction {
        let k = port * 8 + prio as usize;
        let to_hdrm = match bm {
            None => self.hdrm_bytes[k] > 0 || (self.in_bytes[k] + s) as f64 > self.threshold(used),
            Some(b) => {
                let shared_used = used + s - self.hdrm_used;
                let pool = self.buffer_bytes.saturating_sub(self.headroom_pool);
                let over = b.ingress_over(port, prio, self.in_bytes[k] + s, pool.saturating_sub(shared_used));
                self.hdrm_bytes[k] > 0 || over || shared_used > pool
            }
        };
        self.in_bytes[k] += s;
        if to_hdrm {
            if self.hdrm_bytes[k] + s > self.xoff_bytes[port] {
                self.headroom_overflows += 1;
            }
            self.hdrm_bytes[k] += s;
            self.hdrm_used += s;
            self.max_hdrm_bytes[k] = self.max_hdrm_bytes[k].max(self.hdrm_bytes[k]);
        }
        if self.hdrm_bytes[k] > 0 && self.pausing[port] & (1 << prio) == 0 {
            self.pausing[port] |= 1 << prio;
            self.pauses_sent[port] += 1;
            return PfcAction::Pause;
        }
        PfcAction::None
    }

    /// A lossless packet of `s` bytes that arrived by `port` leaves the buffer; `used` is the
    /// switch's occupancy after it left. XON: DT on the ingress pool.
    pub fn on_leave(&mut self, port: usize, prio: u8, s: u64, used: u64) -> PfcAction {
        self.leave::<crate::bm::Scheme>(port, prio, s, used, None)
    }

    /// `on_leave` with the scheme seeing the departure (its filter) and deciding XON.
    pub fn on_leave_scheme<B: BufferManager + ?Sized>(&mut self, port: usize, prio: u8, s: u64, used: u64, bm: &mut B) -> PfcAction {
        self.leave(port, prio, s, used, Some(bm))
    }

    fn leave<B: BufferManager + ?Sized>(&mut self, port: usize, prio: u8, s: u64, used: u64, mut bm: Option<&mut B>) -> PfcAction {
        let k = port * 8 + prio as usize;
        self.in_bytes[k] -= s;
        let d = self.hdrm_bytes[k].min(s);
        self.hdrm_bytes[k] -= d;
        self.hdrm_used -= d;
        if let Some(b) = bm.as_deref_mut() {
            b.on_ingress_leave(port, prio, self.in_bytes[k]);
        }
        if self.pausing[port] & (1 << prio) != 0 && self.hdrm_bytes[k] == 0 {
            let inb = self.in_bytes[k];
            let resume = match bm {
                None => inb < self.xon_bytes || (inb + self.xon_offset_bytes) as f64 <= self.threshold(used),
                Some(b) => b.ingress_resume(port, prio, inb, self.free_shared(used), self.xon_bytes, self.xon_offset_bytes),
            };
            if resume {
                self.pausing[port] &= !(1 << prio);
                self.resumes_sent[port] += 1;
                return PfcAction::Resume;
            }
        }
        PfcAction::None
    }

    pub fn n_ports(&self) -> usize {
        self.n_ports
    }

    /// Σ in over all (port, priority): the lossless bytes in the switch.
    pub fn total_in(&self) -> u64 {
        self.in_bytes.iter().sum()
    }
}

/// Pause state of one port (switch egress port or host NIC) as the receiver of PFC frames.
#[derive(Clone, Debug, Default)]
pub struct PortPause {
    pub pauses_received: u64,
    pub resumes_received: u64,
    /// Total time any priority of this port was paused (per priority, summed).
    pub paused_ps: Time,
    /// When each priority's current pause began.
    since: [Time; 8],
}

impl PortPause {
    pub fn pause(&mut self, prio: u8, now: Time) {
        self.pauses_received += 1;
        self.since[prio as usize] = now;
    }
    pub fn resume(&mut self, prio: u8, now: Time) {
        self.resumes_received += 1;
        self.paused_ps += now - self.since[prio as usize];
    }
    /// At the end of a run: a priority still paused counts until `now`.
    pub fn close(&mut self, paused: u8, now: Time) {
        for p in 0..8 {
            if paused & (1 << p) != 0 {
                self.paused_ps += now - self.since[p];
                self.since[p] = now;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bound of docs/lossless.md §6 at 25 Gbps, 2 µs, M = 1 048 B, no device FIFO:
    /// 12 500 + 3·1 048 + 64 = 15 708 B; at 10 and 100 Gbps: 5 000 + 3 208 = 8 208 B and
    /// 50 000 + 3 208 = 53 208 B.
    #[test]
    fn headroom_bound_by_hand() {
        assert_eq!(headroom_bound_bytes(25_000_000_000, 2_000_000, 1048, 0), 15_708);
        assert_eq!(headroom_bound_bytes(10_000_000_000, 2_000_000, 1048, 0), 8_208);
        assert_eq!(headroom_bound_bytes(100_000_000_000, 2_000_000, 1048, 0), 53_208);
        assert_eq!(headroom_bound_bytes(25_000_000_000, 2_000_000, 1048, 2), 15_708 + 2 * 1048);
    }

    /// B = 100 000, two ports with xoff 10 000, lossless priority 3: X = 20 000, T_in = 80 000 −
    /// shared_used. One port fills: 1 000 B packets go to shared until in + s > T; with only this
    /// port's bytes in the switch, T = 80 000 − in, so the 41st packet (in + s = 41 000 > 39 000)
    /// is the first in headroom and triggers the one pause; its departures drain headroom first
    /// and the resume comes when hdrm = 0 and in + 2 496 ≤ T.
    #[test]
    fn xoff_and_xon_by_hand() {
        let mut p = PfcSwitch::new(1 << 3, 100_000, vec![10_000, 10_000], 1_248, 2_496, 1.0);
        assert_eq!(p.headroom_pool, 20_000);
        let mut used = 0;
        let mut first_pause = None;
        for i in 0..45 {
            let a = p.on_arrive(0, 3, 1_000, used);
            used += 1_000;
            if a == PfcAction::Pause {
                assert!(first_pause.is_none(), "one pause");
                first_pause = Some(i);
            }
        }
        // Packet i (0-based) sees in = 1 000·i before it: to headroom once 1 000·(i+1) > 80 000 − 1 000·i.
        assert_eq!(first_pause, Some(40));
        assert_eq!(p.hdrm(0, 3), 5_000);
        assert_eq!(p.hdrm_used, 5_000);
        assert_eq!(p.reserved_headroom(), 15_000);
        // Five departures empty the headroom; then resume when in + 2 496 ≤ 80 000 − (used − 0).
        let mut resumed = None;
        for i in 0..45 {
            used -= 1_000;
            if p.on_leave(0, 3, 1_000, used) == PfcAction::Resume {
                resumed = Some(i);
                break;
            }
        }
        // After departure i (0-based): in = used = 44 000 − 1 000·i, hdrm = 0 from i = 4; need
        // in + 2 496 ≤ 80 000 − in → in ≤ 38 752 → i = 6 (in = 38 000).
        assert_eq!(resumed, Some(6));
        assert!(!p.is_pausing(0, 3));
        assert_eq!((p.pauses_sent[0], p.resumes_sent[0], p.headroom_overflows), (1, 1, 0));
    }
}

//! Compact packets and the packet pool (no allocation per packet once warm).

use crate::engine::Time;

/// Packet flag bits.
pub mod flags {
    /// Connection open request.
    pub const SYN: u8 = 1;
    /// Carries an acknowledgment (pure ACK, or SYN-ACK with SYN).
    pub const ACK: u8 = 2;
    /// Carries payload (TCP data or an unresponsive constant-rate packet).
    pub const DATA: u8 = 4;
    /// ECN-capable transport.
    pub const ECT: u8 = 8;
    /// Congestion experienced (set by a switch or NIC at enqueue).
    pub const CE: u8 = 16;
    /// ECN echo (receiver to sender).
    pub const ECE: u8 = 32;
    /// Within the first `unscheduled_bytes` of its flow (ABM, CBM/BSHARE read it).
    pub const UNSCHED: u8 = 64;
    /// Unresponsive constant-bit-rate packet (no transport state, no ACK).
    pub const CBR: u8 = 128;
}

/// Maximum number of INT hop records a packet carries: a fat tree's round trip (5 switch hops
/// for the data, 5 more for its ACK with `switch.int_stamp = "all"`), the longest sharebuf builds.
pub const MAX_INT_HOPS: usize = 10;

/// One in-band network telemetry record, stamped at dequeue by a switch port.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IntHop {
    /// Bytes of the packet's queue just after this packet left it.
    pub qlen_bytes: u32,
    /// Link rate of the egress port, bits per second.
    pub rate_bps: u64,
    /// Dequeue time.
    pub ts_ps: Time,
    /// Bytes the port transmitted before this packet.
    pub tx_bytes: u64,
}

/// INT records for one packet (kept beside the pool, only when INT is on).
#[derive(Clone, Copy, Debug, Default)]
pub struct IntStack {
    pub n: u8,
    pub hops: [IntHop; MAX_INT_HOPS],
}

/// A packet in flight. 56 bytes; payload bytes are never materialised.
#[derive(Clone, Copy, Debug, Default)]
pub struct Packet {
    /// Data: first payload byte. Pure ACK: cumulative ack number.
    pub seq: u64,
    /// Data: send time (the TCP timestamp). ACK: echoed send time of the acked packet.
    pub ts_ps: Time,
    /// Time the packet entered its current queue.
    pub enq_ps: Time,
    pub flow: u32,
    /// Bytes on the wire (payload + headers).
    pub size_bytes: u32,
    /// Payload bytes.
    pub payload_bytes: u32,
    /// Destination host.
    pub dst: u32,
    pub prio: u8,
    pub flags: u8,
    /// Switch hops traversed (used for INT slots and loops guard).
    pub hops: u8,
    /// Pure ACK: one SACK block [seq + sack_lo, seq + sack_hi), empty if equal.
    pub sack_lo: u32,
    pub sack_hi: u32,
    /// Global id of the port that last put this packet on the wire (a switch's PFC finds the
    /// ingress port from it; it fits in the struct's padding).
    pub from_port: u32,
}

impl Packet {
    #[inline]
    pub fn has(&self, f: u8) -> bool {
        self.flags & f != 0
    }

    /// A key unique to this packet's flow and direction (TCP data vs its ACKs, and CBR
    /// flows, which have their own id space), for per-flow state in switches (FAB, IB, FB).
    #[inline]
    pub fn flow_key(&self) -> u64 {
        (self.flow as u64) | ((self.has(flags::CBR) as u64) << 32) | ((self.dst as u64) << 33)
    }

    /// Pure control packet (ACK, SYN, SYN-ACK): no payload.
    #[inline]
    pub fn is_control(&self) -> bool {
        self.payload_bytes == 0
    }
}

/// A free-list pool of packets; ids are `u32` indices.
///
/// Crate-private, and the simulator's own: every id it is given back (`free`, `get`, `get_mut`)
/// was handed out by its own `alloc`, and `pkts` never shrinks, so an id is always below
/// `pkts.len()`. That is what makes the unchecked reads of `get`/`get_mut` sound.
pub(crate) struct PacketPool {
    pkts: Vec<Packet>,
    free: Vec<u32>,
    int: Vec<IntStack>,
    int_enabled: bool,
}

impl PacketPool {
    pub fn new(int_enabled: bool) -> Self {
        PacketPool { pkts: Vec::with_capacity(1 << 14), free: Vec::with_capacity(1 << 14), int: Vec::new(), int_enabled }
    }

    #[inline]
    pub fn alloc(&mut self, p: Packet) -> u32 {
        if let Some(id) = self.free.pop() {
            debug_assert!((id as usize) < self.pkts.len());
            // SAFETY: a freed id was handed out by `alloc` (type doc).
            unsafe { *self.pkts.get_unchecked_mut(id as usize) = p };
            if self.int_enabled {
                self.int[id as usize].n = 0;
            }
            id
        } else {
            let id = self.pkts.len() as u32;
            self.pkts.push(p);
            if self.int_enabled {
                self.int.push(IntStack::default());
            }
            id
        }
    }

    #[inline]
    pub fn free(&mut self, id: u32) {
        self.free.push(id);
    }

    #[inline]
    pub fn get(&self, id: u32) -> &Packet {
        debug_assert!((id as usize) < self.pkts.len(), "packet id {id} never allocated");
        // SAFETY: ids come only from this pool's `alloc` and `pkts` never shrinks (type doc).
        unsafe { self.pkts.get_unchecked(id as usize) }
    }

    #[inline]
    pub fn get_mut(&mut self, id: u32) -> &mut Packet {
        debug_assert!((id as usize) < self.pkts.len(), "packet id {id} never allocated");
        // SAFETY: as `get`.
        unsafe { self.pkts.get_unchecked_mut(id as usize) }
    }

    pub fn int_enabled(&self) -> bool {
        self.int_enabled
    }

    #[inline]
    pub fn int(&self, id: u32) -> Option<&IntStack> {
        if self.int_enabled {
            Some(&self.int[id as usize])
        } else {
            None
        }
    }

    #[inline]
    pub fn int_mut(&mut self, id: u32) -> Option<&mut IntStack> {
        if self.int_enabled {
            Some(&mut self.int[id as usize])
        } else {
            None
        }
    }

    /// Packets currently allocated (in queues or on wires).
    pub fn in_use(&self) -> usize {
        // Every id ever handed out is either allocated or on the free list (no count kept
        // per packet).
        self.pkts.len() - self.free.len()
    }

    /// Total wire bytes of the packets currently allocated.
    pub fn in_use_bytes(&self) -> u64 {
        let mut is_free = vec![false; self.pkts.len()];
        for &f in &self.free {
            is_free[f as usize] = true;
        }
        self.pkts.iter().zip(is_free).filter(|(_, f)| !f).map(|(p, _)| p.size_bytes as u64).sum()
    }

    /// Ids on the free list (invariant checks).
    pub fn free_ids(&self) -> &[u32] {
        &self.free
    }

    /// Pool capacity ever reached (packets).
    pub fn capacity(&self) -> usize {
        self.pkts.len()
    }
}

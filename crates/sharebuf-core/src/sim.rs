//! The simulator: builds the network from a spec and runs the event loop.

use crate::bm::{self, Admission, BmContext, BufferManager, BufferState, QueueRef, SchedKind, Scheme};
use crate::cc::{self, CongestionControl};
use crate::config::{SimSpec, TopologySpec};
use crate::engine::{EventQueue, Kind, Stop, Time};
use crate::metrics::{min_fct_ps, paper_ideal_fct_ps, Counters, DropRecord, Hop, QueueSample, RunOutput};
use crate::nic::FqCodel;
use crate::packet::{flags, IntHop, IntStack, Packet, PacketPool, MAX_INT_HOPS};
use crate::pfc::{headroom_bound_bytes, PfcAction, PfcSwitch, PortPause, PFC_FRAME_BYTES};
use crate::switch::{DropCause, PickKind, Port, SchedState, Switch, IP_PAYLOAD_OVERHEAD_BYTES};
use crate::topology::{ecmp_hash, Topology};
use crate::transport::cbr::CbrFlow;
use crate::transport::flows::{FlowTable, Slot};
use crate::transport::tcp::TcpFlow;
use crate::transport::{Timer, TransportCfg};
use crate::workload::{self, QueryDesc};
use std::collections::VecDeque;

#[path = "invariants.rs"]
mod invariants;
use invariants::Invariants;

pub struct Simulator {
    pub topo: Topology,
    /// `ecmp_hash = "flow"`: per flow (its destination, data hash, reverse hash); else empty.
    ecmp_given: Vec<(u32, u32, u32)>,
    cfg: TransportCfg,
    max_ps: Time,
    buffer_sample_ps: Time,
    queue_sample_ps: Time,
    ev: EventQueue,
    pool: PacketPool,
    /// Built once from the topology and never resized: the per-packet path indexes ports
    /// without bounds checks (crate-private, so no code outside can break that).
    pub(crate) ports: Vec<Port>,
    /// Likewise built once and never resized (switch look-ups are unchecked too); replace a
    /// switch's scheme with [`Simulator::set_bm`].
    pub(crate) switches: Vec<Switch>,
    /// TCP flows: cold descriptors, active `TcpFlow`s in a slab, results of retired ones.
    pub flows: FlowTable,
    queries: Vec<QueryDesc>,
    cbrs: Vec<CbrFlow>,
    workload_names: Vec<String>,
    /// Congestion-control prototypes: [0] is `[transport].cc`, then workload overrides.
    cc_protos: Vec<Box<dyn CongestionControl>>,
    /// Prototype index per workload.
    workload_cc: Vec<usize>,
    /// Per workload: its flows run the other transport kind (`cfg_alt`), by its own `transport`.
    workload_alt: Vec<bool>,
    /// Some workload runs the other kind (else every flow takes `cfg`: no per-packet look-up).
    any_alt: bool,
    /// `cfg` with the other kind: TCP ↔ RoCE.
    cfg_alt: TransportCfg,
    nic_ecn_k_bytes: u64,
    /// fq_codel state per host NIC (empty: FIFO NICs).
    nic_fq: Vec<FqCodel>,
    /// Scratch list of packets a NIC queue discipline dropped (id, wire bytes).
    nic_dropped: Vec<(u32, u32)>,
    /// Host NICs are plain FIFOs (no fq_codel, no device FIFO): a packet's departure is fixed
    /// when it is enqueued, so its arrival at the switch is scheduled then and the NIC needs no
    /// TxDone events.
    nic_direct: bool,
    /// Per host NIC when `nic_direct`: (transmission start, wire bytes) of the packets waiting
    /// behind the one on the wire, oldest first; they leave `nic_bytes` when their start passes.
    nic_pending: Vec<VecDeque<(Time, u32)>>,
    counters: Counters,
    out: Vec<Packet>,
    /// TCP flows not yet finished + constant-rate flows not yet stopped.
    outstanding: u64,
    buf_time_ps: Vec<u64>,
    buf_switch: Vec<u16>,
    buf_bytes: Vec<u64>,
    queue_samples: Vec<QueueSample>,
    /// `[output] drop_log`: one record per dropped packet, pushed only when on.
    drop_log_on: bool,
    drop_log: Vec<DropRecord>,
    /// `[output] tcp_trace_flows` (sorted, deduplicated) and `tcp_trace_min_size_bytes` (0:
    /// off): which TCP flows get a `FlowTrace` when they start; `tcp_trace_on`: either selects.
    tcp_trace_flows: Vec<u32>,
    tcp_trace_min_size_bytes: u64,
    tcp_trace_on: bool,
    events_by_kind: [u64; 11],
    /// PFC (lossless priorities) is on: `reverse` and `pause_rx` are filled.
    pfc_on: bool,
    /// Per global port, the port of the same link in the other direction (PFC only).
    reverse: Vec<u32>,
    /// Per global port, the PFC frames it received and its paused time (PFC only).
    pause_rx: Vec<PortPause>,
    /// Lossless packets dropped (buffer full, or by a scheme's push-out or dequeue drop).
    lossless_drops: u64,
    /// Per active-flow slot, the INT records of the last data packet its receiver got, for
    /// the ACK the delayed-ACK timer sends (kept only if `delack_int_on`: INT and delayed ACKs).
    delack_int: Vec<IntStack>,
    delack_int_on: bool,
    inv: Invariants,
}

/// Builds the buffer-management scheme of one switch from its context (see
/// [`Simulator::with_bm_factory`]).
pub type BmFactory<'f> = dyn FnMut(&BmContext) -> Result<Box<dyn bm::BufferManager>, String> + 'f;

impl Simulator {
    pub fn new(spec: &SimSpec) -> Result<Simulator, String> {
        Self::build(spec, &mut |ctx| bm::build(&spec.switch.bm.scheme, &spec.switch.bm.params, ctx))
    }

    /// As [`Simulator::new`], with each switch's scheme built by `make_bm` (called once per
    /// switch, in switch order) instead of the registry: schemes defined outside the core
    /// crate, e.g. written in Python (crates/sharebuf-py).
    pub fn with_bm_factory(spec: &SimSpec, make_bm: &mut BmFactory<'_>) -> Result<Simulator, String> {
        Self::build(spec, &mut |ctx| make_bm(ctx).map(Scheme::Dyn))
    }

    fn build(spec: &SimSpec, make_bm: &mut dyn FnMut(&BmContext) -> Result<Scheme, String>) -> Result<Simulator, String> {
        let topo = Topology::build(&spec.topology)?;
        let cfg = TransportCfg::from_spec(&spec.transport)?;
        // The other kind, for workloads that name their own `transport`: RoCE without handshake,
        // or TCP with `[transport].handshake`.
        let cfg_alt = TransportCfg { roce: !cfg.roce, handshake: if cfg.roce { spec.transport.handshake } else { false }, ..cfg.clone() };
        let mut cc_protos = vec![cc::build(&spec.transport.cc, &spec.transport.cc_params)?];
        let mut workload_cc = Vec::with_capacity(spec.workloads.len());
        // Per workload: its flows run the other transport kind than `[transport].kind` (a
        // workload's own `transport`), so they take `cfg_alt`.
        let mut workload_alt = Vec::with_capacity(spec.workloads.len());
        for (i, w) in spec.workloads.iter().enumerate() {
            let roce = match w.transport() {
                None => cfg.roce,
                Some("tcp") => false,
                Some("roce") => true,
                Some(o) => return Err(format!("workload[{i}].transport = '{o}': not allowed; allowed: {}", crate::transport::KINDS.join(", "))),
            };
            if roce && !cfg.roce {
                let cc = w.cc().map_or(spec.transport.cc.as_str(), |o| o.name.as_str());
                if !crate::transport::ROCE_CCS.contains(&cc) {
                    return Err(format!(
                        "workload[{i}].transport = 'roce' with cc = '{cc}' ({}): not allowed; allowed: {}",
                        if w.cc().is_some() { "the workload's cc" } else { "transport.cc" },
                        crate::transport::ROCE_CCS.join(", ")
                    ));
                }
                if spec.transport.nack_interval_ps == 0 {
                    return Err("transport.nack_interval_us = 0: must be > 0".into());
                }
            }
            workload_alt.push(roce != cfg.roce);
            match w.cc() {
                Some(o) if roce && cfg.roce && !crate::transport::ROCE_CCS.contains(&o.name.as_str()) => {
                    return Err(format!("workload[{i}].cc = '{}': not allowed with transport.kind = 'roce'; allowed: {}", o.name, crate::transport::ROCE_CCS.join(", ")));
                }
                Some(o) => {
                    cc_protos.push(cc::build(&o.name, &o.params).map_err(|e| e.replace("transport.cc", &format!("workload[{i}].cc")))?);
                    workload_cc.push(cc_protos.len() - 1);
                }
                None => workload_cc.push(0),
            }
        }
        let sw = &spec.switch;
        let nq = sw.queues_per_port as usize;
        if nq == 0 || nq > 8 {
            return Err(format!("switch.queues_per_port = {nq}: allowed 1..=8"));
        }
        let sched = match sw.scheduler.as_str() {
            "sp" => SchedKind::StrictPriority,
            "rr" => SchedKind::RoundRobin,
            "rr_strict0" => SchedKind::RoundRobinStrict0,
            "drr" => {
                let w = if sw.drr_weights.is_empty() { vec![1; nq] } else { sw.drr_weights.clone() };
                if w.len() != nq || w.contains(&0) {
                    return Err(format!("switch.drr_weights = {:?}: need {nq} weights (one per queue), each >= 1", sw.drr_weights));
                }
                SchedKind::Drr(w)
            }
            s => return Err(format!("switch.scheduler = '{s}': allowed: sp, rr, rr_strict0, drr")),
        };
        if let Some(r) = &sw.red {
            if !(r.pmax > 0.0 && r.pmax <= 1.0) {
                return Err(format!("switch.red_pmax = {}: must lie in (0, 1]", r.pmax));
            }
            if r.kmin_bytes > r.kmax_bytes {
                return Err(format!("switch.red_kmin_bytes = {} above switch.red_kmax_bytes = {}: need kmin <= kmax", r.kmin_bytes, r.kmax_bytes));
            }
            if !sw.ecn_k_bytes.is_empty() {
                return Err("switch.red_kmin_bytes with switch.ecn_k_bytes: choose one ECN marking (red_* at dequeue, or ecn_k_bytes at enqueue)".into());
            }
        }
        let ecn_k: Vec<u64> = match sw.ecn_k_bytes.len() {
            0 => vec![u64::MAX; nq],
            1 => vec![sw.ecn_k_bytes[0]; nq],
            n if n == nq => sw.ecn_k_bytes.clone(),
            n => return Err(format!("switch.ecn_k_bytes: {n} values given; give one, or one per queue ({nq})")),
        };
        if sw.buffer_bytes == 0 {
            return Err("switch.buffer_bytes = 0: must be > 0".into());
        }
        let nic_fq: Vec<FqCodel> = match spec.host.nic_qdisc.as_str() {
            "fifo" => Vec::new(),
            "fq_codel" => (0..topo.n_hosts).map(|_| FqCodel::default()).collect(),
            s => return Err(format!("host.nic_qdisc = '{s}': allowed: fifo, fq_codel")),
        };
        let acct_overhead_bytes = match sw.buffer_accounting.as_str() {
            "wire" => 0,
            "ip_payload" if spec.transport.header_bytes >= IP_PAYLOAD_OVERHEAD_BYTES => IP_PAYLOAD_OVERHEAD_BYTES,
            "ip_payload" => return Err(format!("switch.buffer_accounting = 'ip_payload': needs transport.header_bytes >= {IP_PAYLOAD_OVERHEAD_BYTES} (point-to-point 2 + IPv4 20), got {}", spec.transport.header_bytes)),
            s => return Err(format!("switch.buffer_accounting = '{s}': allowed: wire, ip_payload")),
        };
        let int_dequeued = match sw.int_tx_bytes.as_str() {
            "transmitted" => false,
            "dequeued" => true,
            s => return Err(format!("switch.int_tx_bytes = '{s}': allowed: transmitted, dequeued")),
        };
        let int_acks = match sw.int_stamp.as_str() {
            "data" => false,
            "all" => true,
            s => return Err(format!("switch.int_stamp = '{s}': allowed: data, all")),
        };
        let alias_links = spine_alias_links(spec)?;
        // Before anything divides by a rate (found by the engine fuzz test).
        for (i, d) in topo.ports.iter().enumerate() {
            if d.rate_bps == 0 {
                return Err(format!("topology: link rate of port {i} is 0; rates must be > 0"));
            }
        }
        let max_rtt = (0..topo.n_hosts).map(|h| topo.base_rtt_ps(0, h)).max().unwrap_or(0);
        let mut ports: Vec<Port> = topo
            .ports
            .iter()
            .enumerate()
            .map(|(i, d)| Port {
                peer: d.peer,
                rate_bps: d.rate_bps,
                delay_ps: d.delay_ps,
                switch: u32::MAX,
                local: 0,
                queues: vec![VecDeque::new(); if (i as u32) < topo.n_hosts { 1 } else { nq }],
                busy_until: 0,
                txdone_at: 0,
                tx_bytes: 0,
                deq_bytes: 0,
                nic_bytes: 0,
                queued_pkts: 0,
                dev: VecDeque::new(),
                dev_bytes: 0,
                wire_start: 0,
                wire_bytes: 0,
                dev_cap: if (i as u32) < topo.n_hosts { spec.host.device_queue_packets } else { sw.device_queue_packets },
                ps_per_byte: if (8 * crate::engine::PS_PER_S) % d.rate_bps == 0 { 8 * crate::engine::PS_PER_S / d.rate_bps } else { 0 },
                sched: SchedState::default(),
                paused: 0,
                paused_q: 0,
            })
            .collect();
        let (lossless_mask, reverse) = match &sw.pfc {
            None => (0u8, Vec::new()),
            Some(pf) => {
                let mut mask = 0u8;
                if pf.lossless_priorities.is_empty() {
                    return Err("switch.lossless_priorities = []: give at least one priority, or omit the PFC keys".into());
                }
                for &p in &pf.lossless_priorities {
                    if p as usize >= nq {
                        return Err(format!("switch.lossless_priorities: priority {p} has no queue of its own; allowed: 0..={} (queues_per_port = {nq})", nq - 1));
                    }
                    if mask & (1 << p) != 0 {
                        return Err(format!("switch.lossless_priorities: priority {p} given twice"));
                    }
                    mask |= 1 << p;
                }
                if !nic_fq.is_empty() {
                    return Err("switch.lossless_priorities with host.nic_qdisc = 'fq_codel': not supported; allowed: host.nic_qdisc = 'fifo'".into());
                }
                if !(pf.alpha_ingress.is_finite() && pf.alpha_ingress > 0.0) {
                    return Err(format!("switch.pfc_alpha_ingress = {}: must be finite and > 0", pf.alpha_ingress));
                }
                (mask, link_reverse(&topo)?)
            }
        };
        let mut switches = Vec::new();
        for (s, gports) in topo.switch_ports.iter().enumerate() {
            let rates: Vec<u64> = gports.iter().map(|&g| topo.ports[g as usize].rate_bps).collect();
            for (l, &g) in gports.iter().enumerate() {
                ports[g as usize].switch = s as u32;
                ports[g as usize].local = l as u16;
            }
            // Switches read their route tables without bounds checks (`switch_receive`).
            topo.routes[s].check(topo.n_hosts, gports.len()).map_err(|e| format!("topology: route table of {}: {e}", topo.switch_names[s]))?;
            let ctx = BmContext { buffer_bytes: sw.buffer_bytes, n_queues: nq, port_rate_bps: &rates, base_rtt_ps: max_rtt, seed: workload::stream_seed(spec.seed, 1_000_000 + s as u64), switch_index: s, mss_bytes: cfg.mss_bytes as u32, header_bytes: cfg.header_bytes as u32 };
            let bmgr = make_bm(&ctx)?;
            let (bm_ingress, bm_name) = (bmgr.decides_ingress(), bmgr.name());
            switches.push(Switch {
                node: topo.switch_node(s as u32),
                ecmp_salt: topo.ecmp_salt(s as u32),
                acct_overhead_bytes,
                int_dequeued,
                int_acks,
                ports: gports.clone(),
                routes: topo.routes[s].clone(),
                ecmp_memo: Default::default(),
                buf: BufferState { acct_overhead_bytes: acct_overhead_bytes as u64, ..BufferState::new(sw.buffer_bytes, rates, nq, sched.clone()) },
                bm_hooks: bmgr.uses_queue_hooks(),
                bm_classify: bmgr.classifies(),
                poll_credit_bytes: bmgr.empty_poll_credit_bytes(),
                bm: bmgr,
                ecn_k_bytes: ecn_k.clone(),
                drr_quantum_bytes: sw.drr_quantum_bytes as u64,
                peak_occupancy_bytes: 0,
                pick_kind: PickKind::of(&sched, nq),
                alias_leaf: match alias_links {
                    Some(links) if s >= topo.n_leaves as usize => (0..gports.len() as u32).map(|p| p / links).collect(),
                    _ => Vec::new(),
                },
                red: sw.red.as_ref().map(|r| {
                    use rand::SeedableRng;
                    Box::new(crate::switch::RedMarker { kmin_bytes: r.kmin_bytes, kmax_bytes: r.kmax_bytes, pmax: r.pmax, rng: rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(workload::stream_seed(spec.seed, 2_000_000 + s as u64)) })
                }),
                pfc: match &sw.pfc {
                    None => None,
                    Some(pf) => {
                        let mtu = cfg.mss_bytes + cfg.header_bytes;
                        let mut xoff = Vec::with_capacity(gports.len());
                        for &g in gports {
                            let (port, up) = (&ports[g as usize], &ports[reverse[g as usize] as usize]);
                            let bound = headroom_bound_bytes(port.rate_bps, port.delay_ps, mtu, up.dev_cap);
                            match pf.headroom_bytes {
                                Some(h) if h < bound => {
                                    return Err(format!(
                                        "switch.pfc_headroom_bytes = {h}: below the headroom port {} of {} needs ({bound} B = 2·rate·delay/8 + (3 + upstream device FIFO {})·{mtu} B + {PFC_FRAME_BYTES} B); allowed: >= {bound}, or omit it for the bound per port",
                                        port.local, topo.switch_names[s], up.dev_cap
                                    ))
                                }
                                Some(h) => xoff.push(h),
                                None => xoff.push(bound),
                            }
                        }
                        let mut p = PfcSwitch::new(lossless_mask, sw.buffer_bytes, xoff, pf.xon_bytes, pf.xon_offset_bytes, pf.alpha_ingress);
                        p.scheme_ingress = bm_ingress;
                        if p.scheme_ingress && pf.alpha_ingress != 1.0 {
                            return Err(format!(
                                "switch.pfc_alpha_ingress = {}: not used by switch.bm.scheme = '{}', which sets the lossless priorities' threshold itself; allowed: omit it and give the lossless priority's switch.bm.alpha",
                                pf.alpha_ingress, bm_name
                            ));
                        }
                        if p.headroom_pool >= sw.buffer_bytes {
                            return Err(format!("switch.lossless_priorities: the headroom pool of {} ({} B) leaves nothing of switch.buffer_bytes = {}; allowed: a larger buffer or fewer lossless priorities", topo.switch_names[s], p.headroom_pool, sw.buffer_bytes));
                        }
                        Some(Box::new(p))
                    }
                },
            });
            // Lossy packets may not take the headroom lossless queues have not used (all of it, at first).
            let last = switches.last_mut().expect("just pushed");
            if let Some(pf) = &last.pfc {
                last.buf.reserved_bytes = pf.reserved_headroom();
            }
        }
        // RoCE queue pairs send at once: no handshake for a RoCE workload's flows.
        let kinds: Vec<(bool, bool)> = workload_alt.iter().map(|&alt| if alt { (cfg_alt.handshake, cfg_alt.roce) } else { (cfg.handshake, cfg.roce) }).collect();
        let gen = workload::generate(spec, &topo, &kinds)?;
        if let Some(i) = gen.flows.size_bytes.iter().position(|&b| b == 0) {
            return Err(format!("flow {i} ({} -> {}): size_bytes = 0; sizes must be >= 1", gen.flows.src[i], gen.flows.dst[i]));
        }
        // The per-packet path indexes per-host tables and route spans without bounds checks:
        // every host id a packet can carry is checked here once (the generators check them too).
        let bad_host = |h: u32| h >= topo.n_hosts;
        if let Some(i) = (0..gen.flows.len()).find(|&i| bad_host(gen.flows.src[i]) || bad_host(gen.flows.dst[i])) {
            return Err(format!("flow {i} ({} -> {}): no such host; hosts are 0..{}", gen.flows.src[i], gen.flows.dst[i], topo.n_hosts - 1));
        }
        if let Some((c, _)) = gen.cbr.iter().find(|(c, _)| bad_host(c.src) || bad_host(c.dst)) {
            return Err(format!("constant-rate flow {} -> {}: no such host; hosts are 0..{}", c.src, c.dst, topo.n_hosts - 1));
        }
        // `ecmp_hash = "flow"`: every TCP flow carries its two hashes (flow files only).
        let ecmp_given: Vec<(u32, u32, u32)> = if topo.ecmp_given {
            let mut e = gen.ecmp.clone();
            e.resize(gen.flows.len(), None);
            if let Some(i) = e.iter().position(|x| x.is_none()) {
                let w = &gen.names[gen.flows.workload[i] as usize];
                return Err(format!("topology.ecmp_hash = 'flow': flow {i} (workload '{w}', {} -> {}) has no ecmp_hash / ecmp_hash_reverse; allowed: flow files giving both columns for every flow, or ecmp_hash = 'same' / 'salted'", gen.flows.src[i], gen.flows.dst[i]));
            }
            e.iter().enumerate().map(|(i, x)| { let (a, b) = x.unwrap(); (gen.flows.dst[i], a, b) }).collect()
        } else {
            Vec::new()
        };
        let mut tcp_trace_flows = spec.output.tcp_trace_flows.clone();
        tcp_trace_flows.sort_unstable();
        tcp_trace_flows.dedup();
        if let Some(&bad) = tcp_trace_flows.iter().find(|&&f| f as usize >= gen.flows.len()) {
            let n = gen.flows.len();
            let allowed = if n == 0 { "none (the run has no TCP flow)".to_string() } else { format!("flow ids 0..={} (the flow_id column of flows.parquet)", n - 1) };
            return Err(format!("output.tcp_trace_flows: {bad} is not a flow of the run; allowed: {allowed}"));
        }
        // Each flow's `TcpFlow` is built when it starts (`flow_start`).
        let flows = FlowTable::new(gen.flows);
        let cbrs: Vec<CbrFlow> = gen.cbr.iter().enumerate().map(|(i, (c, w))| CbrFlow::new(i as u32, c, *w)).collect();
        let int = cc_protos.iter().any(|c| c.wants_int());
        let n_hosts = topo.n_hosts as usize;
        let cfg_delack = cfg.delayed_ack_packets > 1;
        let mut sim = Simulator {
            cfg,
            max_ps: spec.max_ps,
            buffer_sample_ps: spec.output.buffer_sample_ps,
            queue_sample_ps: spec.output.queue_sample_ps,
            ev: EventQueue::new(),
            pool: PacketPool::new(int),
            ports,
            switches,
            queries: gen.queries,
            workload_names: gen.names,
            cc_protos,
            workload_cc,
            any_alt: workload_alt.contains(&true),
            workload_alt,
            cfg_alt,
            nic_ecn_k_bytes: spec.host.nic_ecn_k_bytes.unwrap_or(u64::MAX),
            // A paused NIC must hold its packets: with PFC, NICs queue (same departures otherwise).
            nic_direct: nic_fq.is_empty() && spec.host.device_queue_packets == 0 && sw.pfc.is_none(),
            nic_pending: (0..n_hosts).map(|_| VecDeque::new()).collect(),
            nic_fq,
            nic_dropped: Vec::new(),
            ecmp_given,
            counters: Counters::default(),
            out: Vec::with_capacity(64),
            outstanding: 0,
            buf_time_ps: Vec::new(),
            buf_switch: Vec::new(),
            buf_bytes: Vec::new(),
            queue_samples: Vec::new(),
            drop_log_on: spec.output.drop_log,
            drop_log: Vec::new(),
            tcp_trace_on: !tcp_trace_flows.is_empty() || spec.output.tcp_trace_min_size_bytes > 0,
            tcp_trace_flows,
            tcp_trace_min_size_bytes: spec.output.tcp_trace_min_size_bytes,
            events_by_kind: [0; 11],
            pfc_on: sw.pfc.is_some(),
            pause_rx: if sw.pfc.is_some() { vec![PortPause::default(); reverse.len()] } else { Vec::new() },
            reverse,
            lossless_drops: 0,
            delack_int: Vec::new(),
            delack_int_on: int && cfg_delack,
            inv: Invariants::new(spec.debug.check_invariants, flows.len(), cbrs.len()),
            flows,
            cbrs,
            topo,
        };
        for i in 0..sim.flows.len() {
            sim.ev.at(sim.flows.desc.start_ps[i], Kind::FlowStart, i as u32, 0);
            sim.outstanding += 1;
        }
        for i in 0..sim.cbrs.len() {
            if sim.cbrs[i].start_ps < sim.cbrs[i].stop_ps {
                sim.ev.at(sim.cbrs[i].start_ps, Kind::CbrSend, i as u32, 0);
                sim.outstanding += 1;
            }
        }
        for s in 0..sim.switches.len() {
            if let Some(dt) = sim.switches[s].bm.tick_interval_ps() {
                if dt == 0 {
                    return Err("switch.bm: the scheme's update interval is 0; it must be > 0".into());
                }
                sim.ev.at(dt, Kind::BmTick, s as u32, 0);
            }
        }
        if sim.buffer_sample_ps > 0 {
            sim.ev.at(0, Kind::SampleBuffer, 0, 0);
        }
        if sim.queue_sample_ps > 0 {
            sim.ev.at(0, Kind::SampleQueues, 0, 0);
        }
        Ok(sim)
    }

    /// Replace switch `s`'s buffer-management scheme (tests, embedding).
    pub fn set_bm(&mut self, s: usize, bm: Box<dyn BufferManager>) {
        self.switches[s].set_bm(bm);
    }

    /// Replace congestion-control prototype `i` (0: `[transport].cc`, then workload
    /// overrides in order). For tests and embedding: INT stamping is decided at construction.
    pub fn set_cc_prototype(&mut self, i: usize, cc: Box<dyn CongestionControl>) {
        self.cc_protos[i] = cc;
    }

    /// Run to completion (all flows finished and drained) or to the hard stop.
    /// `progress(now, events)` is called after every 2^18 events (`POLL_EVERY`; at the next
    /// switch of the event queue's 262 ns window, so a few events later); returning false aborts.
    pub fn run(&mut self, progress: &mut dyn FnMut(Time, u64) -> bool) -> RunOutput {
        let wall = std::time::Instant::now();
        let mut hit_max = false;
        let mut aborted = false;
        loop {
            let e = match self.ev.pop_or_poll(self.max_ps) {
                Ok(e) => e,
                Err(Stop::Poll) => {
                    if !progress(self.ev.now, self.ev.processed()) {
                        aborted = true;
                        break;
                    }
                    continue;
                }
                Err(Stop::Later) => {
                    hit_max = self.outstanding > 0;
                    self.ev.now = self.max_ps;
                    break;
                }
                Err(Stop::Empty) => break,
            };
            // The two per-packet kinds first, by their kind bits; Arrive events are counted
            // at the end (every event popped is dispatched: they are the rest).
            if e.is(Kind::Arrive) {
                self.arrive(e.a, e.b);
            } else if e.is(Kind::TxDone) {
                self.events_by_kind[Kind::TxDone as usize] += 1;
                debug_assert!((e.a as usize) < self.ports.len());
                // SAFETY: TxDone events are scheduled only with a port id (`kick`, `start_tx`).
                let port = unsafe { self.ports.get_unchecked_mut(e.a as usize) };
                // Only the port's live TxDone counts; an earlier one went stale when a
                // transmission started at the same instant from an arrival.
                if port.txdone_at == e.time {
                    port.txdone_at = 0;
                    self.wake(e.a as usize);
                }
            } else {
                self.dispatch_other(e.kind(), e.a, e.b);
            }
            #[cfg(debug_assertions)]
            self.debug_check_event();
        }
        let wall_s = wall.elapsed().as_secs_f64();
        self.check_at_end(aborted);
        self.output(wall_s, hit_max || aborted)
    }

    /// Every event kind but the per-packet two (`run` handles those inline).
    #[inline(never)]
    fn dispatch_other(&mut self, k: Kind, a: u32, b: u32) {
        self.events_by_kind[k as usize] += 1;
        match k {
            Kind::Arrive | Kind::TxDone => unreachable!("handled in run"),
            Kind::FlowStart => self.flow_start(a),
            Kind::Rto => self.timer_event(a, TimerKind::Rto),
            Kind::DelAck => self.timer_event(a, TimerKind::DelAck),
            Kind::Pace => self.timer_event(a, TimerKind::Pace),
            Kind::CbrSend => self.cbr_send(a),
            Kind::BmTick => self.bm_tick(a),
            Kind::SampleBuffer => self.sample_buffer(),
            Kind::SampleQueues => self.sample_queues(),
            Kind::Pfc => self.pfc_frame(a, b),
        }
    }

    // ---------------------------------------------------------------- packets

    // Always inlined into the event loop (its one hot caller): as a call of its own it costs
    // about 7 % more instructions per packet (callgrind, abm-eval).
    #[inline(always)]
    fn arrive(&mut self, id: u32, node: u32) {
        if node < self.topo.n_hosts {
            self.host_receive(node, id);
        } else {
            self.switch_receive((node - self.topo.n_hosts) as usize, id);
        }
    }

    /// Drop packet `id` arriving at queue `qr` of switch `s` (its size back to wire bytes).
    /// Out of line: drops are rare, and the admission paths stay small.
    #[cold]
    #[inline(never)]
    fn drop_packet(&mut self, id: u32, cause: DropCause, s: usize, qr: QueueRef) {
        let size = self.pool.get(id).size_bytes as u64;
        self.inv.on_dropped(self.pool.get(id));
        self.counters.drop_pkts[cause as usize] += 1;
        self.counters.drop_bytes[cause as usize] += size;
        if self.drop_log_on {
            self.log_switch_drop(id, cause, s, qr);
        }
        self.pool.free(id);
    }

    /// `[output] drop_log`: record a drop at queue `qr` of switch `s` (the queue's and the
    /// switch's bytes as they are now, the dropped packet not counted).
    #[cold]
    #[inline(never)]
    fn log_switch_drop(&mut self, id: u32, cause: DropCause, s: usize, qr: QueueRef) {
        let buf = &self.switches[s].buf;
        let r = drop_record(self.ev.now, self.pool.get(id), cause, s as u32, false, qr, buf.qbytes_of(qr), buf.occupied_bytes);
        self.drop_log.push(r);
    }

    /// Admission by a scheme other than DT (its `admit`, repeated after each push-out it
    /// asks for). False: the arriving packet `id` was dropped (and freed).
    #[inline(never)]
    fn admit_general(&mut self, s: usize, qr: QueueRef, id: u32, wire_bytes: u32) -> bool {
        let now = self.ev.now;
        let sw = &mut self.switches[s];
        loop {
            let verdict = sw.bm.admit(&sw.buf, qr, self.pool.get(id), now);
            match verdict {
                Admission::Accept => return true,
                Admission::Drop => {
                    self.pool.get_mut(id).size_bytes = wire_bytes;
                    self.drop_packet(id, DropCause::BmThreshold, s, qr);
                    return false;
                }
                Admission::PushOut(victim) => {
                    let vg = sw.ports[victim.port] as usize;
                    // PFC: a lossless packet is never pushed out; the arriving (lossy) one goes.
                    if let (Some(pf), Some(&vid)) = (&sw.pfc, self.ports[vg].queues[victim.queue].back()) {
                        if pf.is_lossless(self.pool.get(vid).prio) {
                            self.pool.get_mut(id).size_bytes = wire_bytes;
                            self.drop_packet(id, DropCause::BmThreshold, s, qr);
                            return false;
                        }
                    }
                    match self.ports[vg].queues[victim.queue].pop_back() {
                        Some(vid) => {
                            self.ports[vg].queued_pkts -= 1;
                            let vp = *self.pool.get(vid);
                            let vsize = vp.size_bytes as u64;
                            sw.buf.on_dequeue(victim, vsize.saturating_sub(sw.acct_overhead_bytes as u64), false);
                            if sw.bm_hooks {
                                sw.bm.on_evict(&sw.buf, victim, &vp, now);
                            }
                            self.inv.on_dropped(&vp);
                            self.counters.drop_pkts[DropCause::PushOut as usize] += 1;
                            self.counters.drop_bytes[DropCause::PushOut as usize] += vsize;
                            if self.drop_log_on {
                                let r = drop_record(now, &vp, DropCause::PushOut, s as u32, false, victim, sw.buf.qbytes_of(victim), sw.buf.occupied_bytes);
                                self.drop_log.push(r);
                            }
                            self.pool.free(vid);
                        }
                        None => {
                            self.pool.get_mut(id).size_bytes = wire_bytes;
                            self.drop_packet(id, DropCause::BmThreshold, s, qr);
                            return false;
                        }
                    }
                }
            }
        }
    }

    /// `spine_buffer = "leaf_aliased"`: packet `id` arrives for queue `qr` of spine `s`; the
    /// scheme of the leaf its port leads to decides, on the leaf's pool and the leaf's queue of
    /// the same (port index, queue), and charges it there (ns3dc's spine queue discs share the
    /// leaf's `SharedMemoryBuffer`, port ids colliding). False: dropped (and freed).
    #[inline(never)]
    fn admit_leaf_aliased(&mut self, s: usize, qr: QueueRef, id: u32, wire_bytes: u32) -> bool {
        let now = self.ev.now;
        let sw = &self.switches[s];
        let leaf = sw.alias_leaf[qr.port] as usize;
        // ABM's drain rate is the spine queue disc's own (each GenQueueDisc measures its dequeues).
        let own_mu = if let Scheme::Abm(a) = &sw.bm { Some(a.own_mu(&sw.buf, qr)) } else { None };
        let lw = &mut self.switches[leaf];
        // The alias is the leaf's queue of the same (port index, queue): every switch has the
        // spec's queues per port, and every leaf at least a spine's ports (checked when built).
        let qa = qr;
        let p = self.pool.get(id);
        let size = p.size_bytes as u64;
        let verdict = match (&mut lw.bm, own_mu) {
            (Scheme::Abm(a), Some(mu)) => a.admit_mu(&lw.buf, qa, p, Some(mu)),
            (bm, _) => bm.admit(&lw.buf, qa, p, now),
        };
        let cause = if verdict != Admission::Accept {
            Some(DropCause::BmThreshold)
        } else if lw.buf.remaining_bytes() < size {
            Some(DropCause::BufferFull)
        } else {
            None
        };
        if let Some(cause) = cause {
            self.pool.get_mut(id).size_bytes = wire_bytes;
            self.drop_packet(id, cause, s, qr);
            return false;
        }
        lw.buf.on_enqueue(qa, size);
        lw.peak_occupancy_bytes = lw.peak_occupancy_bytes.max(lw.buf.occupied_bytes);
        if lw.bm_hooks {
            lw.bm.on_enqueue(&lw.buf, qa, p, now);
        }
        true
    }

    /// `spine_buffer = "leaf_aliased"`: the packet `id` leaves queue `q` of spine `s`'s port
    /// `local`: the leaf's pool and aliased queue give its bytes back (the leaf port's own drain
    /// count does not move: in ns3dc each queue disc counts its own dequeues).
    #[inline(never)]
    fn leave_leaf_aliased(&mut self, s: usize, local: usize, q: usize, id: u32) {
        let now = self.ev.now;
        let leaf = self.switches[s].alias_leaf[local] as usize;
        let lw = &mut self.switches[leaf];
        let qa = QueueRef { port: local, queue: q };
        let p = self.pool.get(id);
        let acct_bytes = p.size_bytes.saturating_sub(lw.acct_overhead_bytes);
        lw.buf.on_dequeue(qa, acct_bytes as u64, false);
        if lw.bm_hooks {
            // The leaf's schemes allowed here never drop at dequeue.
            let _ = lw.bm.on_dequeue(&lw.buf, qa, &Packet { size_bytes: acct_bytes, ..*p }, now);
        }
    }

    fn switch_receive(&mut self, s: usize, id: u32) {
        let now = self.ev.now;
        debug_assert!(s < self.switches.len());
        // SAFETY: `s` is a switch node's index: a packet arrives at the peer of the port it left.
        let sw = unsafe { self.switches.get_unchecked_mut(s) };
        // The buffer manager sees accounted bytes (wire, or IP payload): the pooled packet holds
        // them while the switch decides (no copy of the packet) and gets its wire size back
        // before it is dropped or queued.
        let p = self.pool.get_mut(id);
        let wire_bytes = p.size_bytes;
        p.size_bytes = wire_bytes.saturating_sub(sw.acct_overhead_bytes);
        let size = p.size_bytes as u64;
        let (dst, prio) = (p.dst, p.prio);
        let flow_hash = p.flow | if p.has(flags::CBR) { 1 << 31 } else { 0 };
        debug_assert!(dst < self.topo.n_hosts);
        // SAFETY: a packet's `dst` is a host (workload generation checks every host id), and
        // the route table passed `RouteTable::check` when the switch was built (crate-private
        // since): `local` is one of the switch's ports.
        let local = if self.ecmp_given.is_empty() || p.has(flags::CBR) {
            unsafe { sw.routes.choose_memo(&mut sw.ecmp_memo, flow_hash, dst, sw.ecmp_salt) }
        } else {
            // ns-3 global routing: the given hash of the packet's direction, modulo the candidates.
            let (flow_dst, h_data, h_rev) = self.ecmp_given[p.flow as usize];
            sw.routes.choose(dst, if dst == flow_dst { h_data } else { h_rev } as u64)
        };
        // `qr` is valid for the buffer's unchecked look-ups: `local` < n_ports, queue < n_queues.
        let mut qr = sw.qref(local, prio);
        if sw.bm_classify {
            let q = sw.bm.classify(&sw.buf, local, p, qr.queue, now);
            qr.queue = q.min(sw.buf.n_queues - 1);
        }
        if let Some(pf) = &sw.pfc {
            if pf.is_lossless(prio) {
                self.switch_receive_lossless(s, id, qr, local, wire_bytes);
                return;
            }
        }
        // `spine_buffer = "leaf_aliased"`: a spine's port is admitted by its leaf's pool.
        let aliased = !sw.alias_leaf.is_empty();
        // The packet stays borrowed from the pool through DT's decision (one look-up).
        let (sw, p, qbytes) = if aliased {
            if !self.admit_leaf_aliased(s, qr, id, wire_bytes) {
                return;
            }
            // SAFETY: as above.
            let sw = unsafe { self.switches.get_unchecked_mut(s) };
            let qbytes = sw.buf.qbytes_of(qr);
            (sw, self.pool.get_mut(id), qbytes)
        } else if let Scheme::Dt(dt) = &sw.bm {
            // DT, the default scheme, decided inline (no jump table, the queue's bytes read
            // once, without a bounds check; admitting changes no state).
            let qbytes = sw.buf.qbytes_of(qr);
            if !dt.admits(qr.queue, qbytes, size as u32, sw.buf.remaining_bytes()) {
                p.size_bytes = wire_bytes;
                self.drop_packet(id, DropCause::BmThreshold, s, qr);
                return;
            }
            (sw, p, qbytes)
        } else {
            if !self.admit_general(s, qr, id, wire_bytes) {
                return;
            }
            // SAFETY: as above (`admit_general` borrowed the switch; it is still switch `s`).
            let sw = unsafe { self.switches.get_unchecked_mut(s) };
            // Read after the scheme's push-outs, if any.
            let qbytes = sw.buf.qbytes_of(qr);
            (sw, self.pool.get_mut(id), qbytes)
        };
        // With PFC, a lossy packet may not use the headroom lossless queues have not used.
        let reserve = match &sw.pfc {
            None => 0,
            Some(pf) => pf.reserved_headroom(),
        };
        if !aliased && sw.buf.remaining_bytes() < size + reserve {
            p.size_bytes = wire_bytes;
            self.drop_packet(id, DropCause::BufferFull, s, qr);
            return;
        }
        // SAFETY: `ecn_k_bytes` has one entry per queue (built so; crate-private).
        debug_assert!(qr.queue < sw.ecn_k_bytes.len());
        if p.has(flags::ECT) && qbytes >= unsafe { *sw.ecn_k_bytes.get_unchecked(qr.queue) } {
            p.flags |= flags::CE;
            self.counters.ecn_marks += 1;
        }
        p.enq_ps = now;
        p.hops += 1;
        debug_assert!(local < sw.ports.len());
        // SAFETY: `local` is a checked route-table candidate, below the switch's port count.
        let g = unsafe { *sw.ports.get_unchecked(local) } as usize;
        debug_assert!(g < self.ports.len());
        // SAFETY: `g` is from the switch's port list, built from the topology as `ports` was.
        let port = unsafe { self.ports.get_unchecked_mut(g) };
        let (credit, next_before) = (sw.poll_credit_bytes != 0, port.sched.next);
        // Pass-through fast path: a port with nothing queued that is idle (or whose device FIFO
        // has room) would pick this packet at once; skip the queue and do exactly what `kick`
        // does.
        let fast = if port.dev_cap == 0 { port.busy_until <= now && port.queued_pkts == 0 } else { port.queued_pkts == 0 && port.dev_has_room(now) }
            && port.paused_q == 0
            && match sw.pick_kind {
                PickKind::Stateless => true,
                // Round robin: `pick` finds the one non-empty queue and moves past it.
                PickKind::RoundRobin => {
                    port.sched.next = if qr.queue + 1 == port.queues.len() { 0 } else { qr.queue + 1 };
                    true
                }
                // Queue 0 takes no turn; another queue moves the round robin past it.
                PickKind::RoundRobinStrict0 => {
                    if qr.queue != 0 {
                        port.sched.next = if qr.queue + 1 == port.queues.len() { 0 } else { qr.queue + 1 };
                    }
                    true
                }
                PickKind::Drr => false,
            };
        if fast && !sw.bm_hooks && !aliased {
            // No scheme hook watches: the packet enters its queue and leaves it at once
            // (`on_enqueue`, then `leave_buffer`), so the queue's bytes and packets and the
            // pool's occupancy end where they were; only the drain counter and the peak move.
            sw.buf.on_pass_through(qr, size);
            let occupied = sw.buf.occupied_bytes + size;
            if occupied > sw.peak_occupancy_bytes {
                sw.peak_occupancy_bytes = occupied;
            }
            p.size_bytes = wire_bytes;
            if p.has(flags::DATA) {
                stamp_int(&mut self.pool, id, qbytes, port.rate_bps, port.int_tx_bytes(sw.int_dequeued, now), now);
            } else if sw.int_acks {
                stamp_int_echo(&mut self.pool, id, qbytes, port.rate_bps, port.int_tx_bytes(sw.int_dequeued, now), now);
            }
            port.deq_bytes += size;
            if credit {
                self.credit_empty_polls(g, next_before, Some(qr.queue));
            }
            self.enter_device(g, id);
            if credit {
                self.credit_failed_poll(g);
            }
            return;
        }
        sw.charge_enqueue(qr, p, size, now);
        p.size_bytes = wire_bytes;
        if fast {
            if credit {
                self.credit_empty_polls(g, next_before, Some(qr.queue));
            }
            if self.leave_buffer(g, qr.queue, id) {
                self.enter_device(g, id);
            }
            if credit {
                self.credit_failed_poll(g);
            }
            return;
        }
        // SAFETY: a switch port has `n_queues` queues (built so), and `qr.queue < n_queues`.
        unsafe { port.push_unchecked(qr.queue, id) };
        if port.dev_cap != 0 {
            self.refill_device(g);
            return;
        }
        if port.busy_until > now {
            // What `kick` does for a busy port (it has a queued packet now): make sure its
            // TxDone is scheduled.
            if port.txdone_at != port.busy_until {
                port.txdone_at = port.busy_until;
                self.ev.at(port.busy_until, Kind::TxDone, g as u32, 0);
            }
            return;
        }
        self.kick(g);
    }

    /// Start the next transmission on port `g` (no device FIFO: such a port refills its FIFO
    /// instead, `refill_device`; `wake` picks) if it is idle, or make sure it wakes up.
    #[inline]
    fn kick(&mut self, g: usize) {
        let now = self.ev.now;
        let port = &mut self.ports[g];
        if port.busy_until > now {
            if port.txdone_at != port.busy_until && port.queued_pkts > 0 {
                port.txdone_at = port.busy_until;
                self.ev.at(port.busy_until, Kind::TxDone, g as u32, 0);
            }
            return;
        }
        let Some(id) = self.dequeue(g) else { return };
        self.start_tx(g, id);
    }

    /// Port `g` may send: `kick`, or for a port with a device FIFO, `refill_device`.
    #[inline(always)]
    fn wake(&mut self, g: usize) {
        debug_assert!(g < self.ports.len());
        // SAFETY: callers pass a port id (a TxDone's, or a host's NIC, checked at build).
        if unsafe { self.ports.get_unchecked(g) }.dev_cap == 0 {
            self.kick(g);
        } else {
            self.refill_device(g);
        }
    }

    /// Packet `id` has left port `g`'s buffer-manager queues for the port's device FIFO (which
    /// has room) or, without one, for the idle port. It starts when the port finishes what is
    /// ahead of it (now, at an idle port), and nothing can overtake it (the device FIFO has no
    /// buffer manager), so it goes on the wire now with that start; the device FIFO remembers
    /// (start, bytes) until the start passes.
    #[inline(always)]
    fn enter_device(&mut self, g: usize, id: u32) {
        let now = self.ev.now;
        debug_assert!(g < self.ports.len());
        // SAFETY: callers pass a switch port from its switch's port list or a host's NIC.
        let start = unsafe { self.ports.get_unchecked(g) }.busy_until.max(now);
        self.put_on_wire(g, id, start);
        let bytes = self.pool.get(id).size_bytes;
        let port = unsafe { self.ports.get_unchecked_mut(g) };
        if start > now {
            port.dev.push_back((start, bytes));
            port.dev_bytes += bytes as u64;
        } else {
            port.wire_start = now;
            port.wire_bytes = bytes;
        }
    }

    /// Port `g` (no device FIFO) is idle: put packet `id` on the wire now, and wake the port
    /// when it is done if more packets wait.
    #[inline(always)]
    fn start_tx(&mut self, g: usize, id: u32) {
        let now = self.ev.now;
        let end = self.put_on_wire(g, id, now);
        // SAFETY: `put_on_wire` checked `g` (debug builds); callers pass valid port ids.
        let port = unsafe { self.ports.get_unchecked_mut(g) };
        if port.queued_pkts > 0 {
            port.txdone_at = end;
            self.ev.at(end, Kind::TxDone, g as u32, 0);
        }
    }

    /// Packet `id` starts serializing on port `g` at `start` (now, or later for a direct host
    /// NIC, whose departures are fixed at enqueue): the port is busy until the returned time,
    /// and the packet arrives at the peer one link delay after that.
    #[inline(always)]
    fn put_on_wire(&mut self, g: usize, id: u32, start: Time) -> Time {
        debug_assert!(g < self.ports.len());
        // SAFETY: `g` is a host's NIC (`emit`) or a switch port from its port list.
        let port = unsafe { self.ports.get_unchecked_mut(g) };
        let p = self.pool.get_mut(id);
        // docs/lossless.md §6 invariant 3: a port never commits a packet of a paused priority.
        debug_assert!(p.prio >= 8 || port.paused & (1 << p.prio) == 0, "invariant violated: PFC: port {g} sends a packet of paused priority {} (paused {:#010b})", p.prio, port.paused);
        p.from_port = g as u32;
        let size = p.size_bytes as u64;
        let end = start + port.tx_time_ps(size);
        port.busy_until = end;
        port.tx_bytes += size;
        self.ev.at(end + port.delay_ps, Kind::Arrive, id, port.peer);
        end
    }

    /// Move packets from the buffer manager's queues into the device FIFO while it has room
    /// (ns-3 flow control: the queue disc runs whenever the device queue is not full), then
    /// make sure the port wakes up when the device next has room if packets wait above it.
    #[inline(never)]
    fn refill_device(&mut self, g: usize) {
        let now = self.ev.now;
        // With nothing queued above the device, `dequeue` finds nothing and changes nothing (a
        // scheduler's `pick` over empty queues returns None untouched; a FIFO NIC pops nothing),
        // so it is skipped; fq_codel is not (a dequeue over its empty flows retires them).
        let stateless_when_empty = !self.ports[g].is_host() || self.nic_fq.is_empty();
        self.ports[g].dev_settle(now);
        loop {
            let port = &self.ports[g];
            if port.dev.len() >= port.dev_cap as usize {
                break;
            }
            if stateless_when_empty && port.queued_pkts == 0 {
                // ns-3's queue disc runs until a dequeue finds nothing while the device has
                // room: that dequeue visits every queue (ABM's empty-poll credit).
                if !port.is_host() && self.switches[port.switch as usize].poll_credit_bytes != 0 {
                    self.credit_empty_polls(g, port.sched.next, None);
                }
                break;
            }
            let Some(id) = self.dequeue(g) else { break };
            self.enter_device(g, id);
        }
        // The device has room again when the first packet waiting in it starts (the one on the
        // wire is done). Wake up then if packets wait above it, or if fq_codel has flows that
        // the dequeue at that wake-up retires (as the queue disc runs at every device wake-up).
        let port = &self.ports[g];
        let waits = port.queued_pkts > 0 || (!stateless_when_empty && self.nic_fq[g].has_flows());
        if waits {
            debug_assert!(port.dev.len() == port.dev_cap as usize || port.paused_q != 0, "packets wait above a device FIFO with room");
            if let Some(&(t, _)) = port.dev.front() {
                if port.txdone_at != t {
                    self.ports[g].txdone_at = t;
                    self.ev.at(t, Kind::TxDone, g as u32, 0);
                }
            }
        }
    }

    #[inline(always)]
    fn dequeue(&mut self, g: usize) -> Option<u32> {
        let now = self.ev.now;
        let port = &mut self.ports[g];
        if port.is_host() {
            let id = if self.nic_fq.is_empty() {
                // PFC: the NIC's one FIFO stops while its head packet's priority is paused.
                if port.paused != 0 {
                    let head = *port.queues[0].front()?;
                    let prio = self.pool.get(head).prio;
                    if prio < 8 && port.paused & (1 << prio) != 0 {
                        return None;
                    }
                }
                port.queues[0].pop_front()
            } else {
                let id = self.nic_fq[g].dequeue(now, &mut self.nic_dropped);
                self.nic_drops(g);
                id
            };
            let port = &mut self.ports[g];
            let id = id?;
            port.queued_pkts -= 1;
            port.nic_bytes -= self.pool.get(id).size_bytes as u64;
            return Some(id);
        }
        loop {
            // SAFETY: `g` was indexed (checked) above and is a switch port, whose `switch` is
            // its switch's index (set when the switches are built).
            let port = unsafe { self.ports.get_unchecked(g) };
            if unsafe { self.switches.get_unchecked(port.switch as usize) }.poll_credit_bytes != 0 {
                let next = port.sched.next;
                self.credit_empty_polls(g, next, None);
            }
            // SAFETY: as above.
            let port = unsafe { self.ports.get_unchecked_mut(g) };
            debug_assert!((port.switch as usize) < self.switches.len());
            let sw = unsafe { self.switches.get_unchecked(port.switch as usize) };
            let pool = &self.pool;
            let q = port.sched.pick_unpaused(&port.queues, sw.pick_kind, &sw.buf.sched, sw.drr_quantum_bytes, |id| pool.get(id).size_bytes as u64, port.paused_q)?;
            let id = port.queues[q].pop_front().unwrap();
            port.queued_pkts -= 1;
            if self.leave_buffer(g, q, id) {
                return Some(id);
            }
        }
    }

    /// ABM's empty-poll credit (`BufferManager::empty_poll_credit_bytes`, the ABM authors' code):
    /// the scheduler of switch port `g` looks for a packet now, its round robin's turn at `next`;
    /// each queue it visits and finds empty (`switch::empty_visits`, queue `busy_too` taken as
    /// non-empty) has the credit added to its dequeue count, which the scheme's measured drain
    /// rate reads.
    #[inline(never)]
    fn credit_empty_polls(&mut self, g: usize, next: usize, busy_too: Option<usize>) {
        let port = &self.ports[g];
        let sw = &mut self.switches[port.switch as usize];
        let (credit, pick, base) = (sw.poll_credit_bytes, sw.pick_kind, port.local as usize * sw.buf.n_queues);
        let deq = &mut sw.buf.deq_bytes;
        crate::switch::empty_visits(&port.queues, pick, next, busy_too, |q| deq[base + q] += credit);
    }

    /// After a pass-through packet entered port `g`'s device FIFO: ns-3's queue disc dequeues
    /// again while the device has room, finds every queue empty and credits each
    /// (`credit_empty_polls`); a port without a device FIFO has no such dequeue.
    #[inline(never)]
    fn credit_failed_poll(&mut self, g: usize) {
        let now = self.ev.now;
        let port = &mut self.ports[g];
        if port.dev_cap != 0 && port.queued_pkts == 0 && port.dev_has_room(now) {
            let next = port.sched.next;
            self.credit_empty_polls(g, next, None);
        }
    }

    /// Packet `id`, just taken from queue `q` of switch port `g`, leaves the shared buffer:
    /// accounting, the scheme's dequeue hook (false: it dropped the packet, which is freed),
    /// and the port's INT record on data packets.
    #[inline(always)]
    fn leave_buffer(&mut self, g: usize, q: usize, id: u32) -> bool {
        let now = self.ev.now;
        debug_assert!(g < self.ports.len() && (self.ports[g].switch as usize) < self.switches.len());
        // SAFETY: `g` is a switch port (from its switch's port list or a TxDone event), and a
        // switch port's `switch` is its switch's index (set when the switches are built).
        let port = unsafe { self.ports.get_unchecked(g) };
        if !unsafe { self.switches.get_unchecked(port.switch as usize) }.alias_leaf.is_empty() {
            let (s, local) = (port.switch as usize, port.local as usize);
            self.leave_leaf_aliased(s, local, q, id);
        }
        // SAFETY: as above.
        let port = unsafe { self.ports.get_unchecked(g) };
        let sw = unsafe { self.switches.get_unchecked_mut(port.switch as usize) };
        let qr = QueueRef { port: port.local as usize, queue: q };
        let p = self.pool.get(id);
        let wire_bytes = p.size_bytes;
        let acct_bytes = wire_bytes.saturating_sub(sw.acct_overhead_bytes);
        let is_data = p.has(flags::DATA);
        sw.buf.on_dequeue(qr, acct_bytes as u64, true);
        // PFC: a lossless packet leaves the ingress view too (headroom first); XON check.
        let mut resume = None;
        let mut lossless = false;
        if let Some(pf) = sw.pfc.as_mut() {
            if pf.is_lossless(p.prio) {
                lossless = true;
                let ing = self.reverse[p.from_port as usize] as usize;
                let local = self.ports[ing].local as usize;
                let action = if pf.scheme_ingress {
                    pf.on_leave_scheme(local, p.prio, acct_bytes as u64, sw.buf.occupied_bytes, &mut sw.bm)
                } else {
                    pf.on_leave(local, p.prio, acct_bytes as u64, sw.buf.occupied_bytes)
                };
                sw.buf.reserved_bytes = pf.reserved_headroom();
                if action == PfcAction::Resume {
                    resume = Some((ing, p.prio));
                }
            }
        }
        if sw.bm_hooks {
            // The scheme sees accounted bytes, as at enqueue.
            let pkt = Packet { size_bytes: acct_bytes, ..*p };
            // A scheme's dequeue drop (CBM's, BShare's sojourn rule) does not apply to a lossless
            // packet: the scheme sees the departure, the packet is sent.
            if !sw.bm.on_dequeue(&sw.buf, qr, &pkt, now) && !lossless {
                self.inv.on_dropped(self.pool.get(id));
                self.counters.drop_pkts[DropCause::BmDequeue as usize] += 1;
                self.counters.drop_bytes[DropCause::BmDequeue as usize] += wire_bytes as u64;
                if self.drop_log_on {
                    let r = drop_record(now, self.pool.get(id), DropCause::BmDequeue, port.switch, false, qr, sw.buf.qbytes_of(qr), sw.buf.occupied_bytes);
                    self.drop_log.push(r);
                }
                self.pool.free(id);
                if let Some((ing, prio)) = resume {
                    self.send_pfc(ing, prio, false);
                }
                return false;
            }
        }
        if let Some(red) = sw.red.as_mut() {
            // Dequeue marking on the queue just after the packet left (docs/lossless.md §3).
            let q = sw.buf.qbytes_of(qr);
            let pk = self.pool.get_mut(id);
            if pk.has(flags::ECT) && red.mark(q) {
                pk.flags |= flags::CE;
                self.counters.ecn_marks += 1;
            }
        }
        if is_data {
            stamp_int(&mut self.pool, id, sw.buf.qbytes_of(qr), port.rate_bps, port.int_tx_bytes(sw.int_dequeued, now), now);
        } else if sw.int_acks {
            stamp_int_echo(&mut self.pool, id, sw.buf.qbytes_of(qr), port.rate_bps, port.int_tx_bytes(sw.int_dequeued, now), now);
        }
        // SAFETY: as above.
        unsafe { self.ports.get_unchecked_mut(g) }.deq_bytes += acct_bytes as u64;
        if let Some((ing, prio)) = resume {
            self.send_pfc(ing, prio, false);
        }
        true
    }

    // ---------------------------------------------------------------- PFC

    /// A lossless packet arrived at switch `s` (PFC on): never refused by the scheme; counted at
    /// ingress (headroom once above the PFC threshold) and egress; a pause goes upstream when
    /// its ingress (port, priority) enters headroom. Dropped only if the whole buffer is full
    /// (counted in `lossless_drops`, which the tests require to stay 0).
    #[inline(never)]
    fn switch_receive_lossless(&mut self, s: usize, id: u32, qr: QueueRef, local: usize, wire_bytes: u32) {
        let now = self.ev.now;
        let sw = &mut self.switches[s];
        let p = self.pool.get_mut(id);
        let size = p.size_bytes as u64;
        if sw.buf.remaining_bytes() < size {
            // Invariant 1 (lossless never drops): a buffer too small for its headroom and PFC
            // thresholds. Counted in release builds (summary.json pfc.lossless_drops).
            debug_assert!(false, "invariant violated: lossless packet dropped at switch {s}: buffer full ({} of {} B, headroom used {} of {} B), priority {}", sw.buf.occupied_bytes, sw.buf.total_bytes, sw.pfc.as_ref().map_or(0, |f| f.hdrm_used), sw.pfc.as_ref().map_or(0, |f| f.headroom_pool), p.prio);
            p.size_bytes = wire_bytes;
            self.lossless_drops += 1;
            self.drop_packet(id, DropCause::BufferFull, s, qr);
            return;
        }
        let ing = self.reverse[p.from_port as usize] as usize;
        let in_local = self.ports[ing].local as usize;
        let prio = p.prio;
        let qbytes = sw.buf.qbytes_of(qr);
        if p.has(flags::ECT) && qbytes >= sw.ecn_k_bytes[qr.queue] {
            p.flags |= flags::CE;
            self.counters.ecn_marks += 1;
        }
        p.enq_ps = now;
        p.hops += 1;
        let pf = sw.pfc.as_mut().expect("PFC on");
        let action = if pf.scheme_ingress {
            pf.on_arrive_scheme(in_local, prio, size, sw.buf.occupied_bytes, &mut sw.bm)
        } else {
            pf.on_arrive(in_local, prio, size, sw.buf.occupied_bytes)
        };
        sw.buf.reserved_bytes = pf.reserved_headroom();
        sw.charge_enqueue(qr, p, size, now);
        p.size_bytes = wire_bytes;
        let g = sw.ports[local] as usize;
        self.ports[g].push(qr.queue, id);
        if action == PfcAction::Pause {
            self.send_pfc(ing, prio, true);
        }
        self.wake(g);
    }

    /// Send a PFC frame for `prio` out of switch port `g` (facing the upstream device): it
    /// jumps every queue, waits only for the packet on the wire, serializes (64 B) and crosses
    /// the link. It does not delay the port's packets (their departures may be fixed already).
    fn send_pfc(&mut self, g: usize, prio: u8, pause: bool) {
        let now = self.ev.now;
        let port = &mut self.ports[g];
        port.dev_settle(now);
        let wire_end = match port.dev.front() {
            Some(&(start, _)) => start,
            None => port.busy_until.max(now),
        };
        let t = wire_end + port.tx_time_ps(PFC_FRAME_BYTES) + port.delay_ps;
        let up = self.reverse[g];
        self.ev.at(t, Kind::Pfc, up, prio as u32 | if pause { 0x100 } else { 0 });
    }

    /// A PFC frame reaches port `g`: pause or resume `prio` there.
    fn pfc_frame(&mut self, g: u32, b: u32) {
        let now = self.ev.now;
        let g = g as usize;
        let prio = (b & 0xff) as u8;
        let pause = b & 0x100 != 0;
        let port = &mut self.ports[g];
        if pause {
            debug_assert!(port.paused & (1 << prio) == 0, "a second pause before a resume");
            port.paused |= 1 << prio;
            self.pause_rx[g].pause(prio, now);
        } else {
            debug_assert!(port.paused & (1 << prio) != 0, "a resume without a pause");
            port.paused &= !(1 << prio);
            self.pause_rx[g].resume(prio, now);
        }
        port.paused_q = if port.is_host() {
            port.paused
        } else {
            let nq = port.queues.len();
            (0..8).filter(|p| port.paused & (1 << p) != 0).fold(0u8, |m, p| m | 1 << p.min(nq - 1))
        };
        if !pause {
            self.wake(g);
        }
    }

    /// Put packets produced by host `h`'s transport onto its NIC queue.
    fn emit(&mut self, h: u32, echo_int: Option<&IntStack>) {
        if self.nic_direct {
            self.emit_direct(h, echo_int);
            return;
        }
        let mut out = std::mem::take(&mut self.out);
        for mut p in out.drain(..) {
            self.counters.sent_pkts += 1;
            self.counters.sent_bytes += p.size_bytes as u64;
            self.inv.on_sent(&p);
            let port = &mut self.ports[h as usize];
            if p.has(flags::ECT) && port.nic_bytes >= self.nic_ecn_k_bytes {
                p.flags |= flags::CE;
                self.counters.nic_ecn_marks += 1;
            }
            port.nic_bytes += p.size_bytes as u64;
            p.enq_ps = self.ev.now;
            let is_ack = p.payload_bytes == 0;
            let id = self.pool.alloc(p);
            if is_ack {
                if let (Some(src), Some(dst)) = (echo_int, self.pool.int_mut(id)) {
                    *dst = *src;
                }
            }
            if self.nic_fq.is_empty() {
                self.ports[h as usize].push(0, id);
            } else {
                let fh = ecmp_hash(p.flow | if p.has(flags::CBR) { 1 << 31 } else { 0 }, p.dst, u32::MAX);
                self.nic_fq[h as usize].enqueue(id, p.size_bytes, fh, self.ev.now, &mut self.nic_dropped);
                self.ports[h as usize].queued_pkts += 1;
                self.nic_drops(h as usize);
            }
            self.wake(h as usize);
            let port = &self.ports[h as usize];
            self.counters.nic_peak_pkts = self.counters.nic_peak_pkts.max(port.queued_pkts as u64);
            self.counters.nic_peak_bytes = self.counters.nic_peak_bytes.max(port.nic_bytes);
        }
        self.out = out;
    }

    /// `emit` on a FIFO host NIC (`nic_direct`): each packet's transmission start is fixed
    /// now (when the NIC finishes what is ahead of it), so it goes on the wire at once and only
    /// the NIC's byte/packet counts (ECN marking at the NIC, peak counters) remember it until
    /// its start passes. Same steps in the same order as the queued path, with the host's
    /// port and pending list looked up once per packet.
    #[inline]
    fn emit_direct(&mut self, h: u32, echo_int: Option<&IntStack>) {
        let now = self.ev.now;
        let hu = h as usize;
        // By index: the transport's output buffer stays in place (no take and restore).
        debug_assert!(hu < self.nic_pending.len() && hu < self.ports.len());
        for i in 0..self.out.len() {
            // SAFETY: nothing in this loop changes `out`'s length.
            let mut p = unsafe { *self.out.get_unchecked(i) };
            let size = p.size_bytes as u64;
            self.counters.sent_pkts += 1;
            self.counters.sent_bytes += size;
            self.inv.on_sent(&p);
            // SAFETY: `h` is a host (every flow's and constant-rate source's hosts are checked
            // when the workload is generated); host h's NIC is port h, and `nic_pending` has one
            // list per host. Neither vector is ever resized.
            let port = unsafe { self.ports.get_unchecked_mut(hu) };
            let pend = unsafe { self.nic_pending.get_unchecked_mut(hu) };
            // Packets whose transmission has started by now have left the NIC queue.
            while let Some(&(start, bytes)) = pend.front() {
                if start > now {
                    break;
                }
                pend.pop_front();
                port.nic_bytes -= bytes as u64;
                port.queued_pkts -= 1;
            }
            if p.has(flags::ECT) && port.nic_bytes >= self.nic_ecn_k_bytes {
                p.flags |= flags::CE;
                self.counters.nic_ecn_marks += 1;
            }
            p.enq_ps = now;
            // The packet starts when the NIC finishes what is ahead of it; it waits in the NIC
            // (counted in its bytes and packets) until then.
            let start = port.busy_until.max(now);
            if start > now {
                pend.push_back((start, p.size_bytes));
                port.queued_pkts += 1;
                port.nic_bytes += size;
            }
            self.counters.nic_peak_pkts = self.counters.nic_peak_pkts.max(port.queued_pkts as u64);
            self.counters.nic_peak_bytes = self.counters.nic_peak_bytes.max(port.nic_bytes);
            let is_ack = p.payload_bytes == 0;
            let id = self.pool.alloc(p);
            if is_ack {
                if let (Some(src), Some(dst)) = (echo_int, self.pool.int_mut(id)) {
                    *dst = *src;
                }
            }
            self.put_on_wire(hu, id, start);
        }
        self.out.clear();
    }

    /// Account for and free the packets host NIC `g`'s queue discipline dropped.
    /// Account the packets fq_codel just dropped from host NIC `g` (usually none: checked
    /// inline, the work out of line).
    #[inline(always)]
    fn nic_drops(&mut self, g: usize) {
        if !self.nic_dropped.is_empty() {
            self.nic_drops_account(g);
        }
    }

    #[inline(never)]
    fn nic_drops_account(&mut self, g: usize) {
        for (id, bytes) in self.nic_dropped.drain(..) {
            let port = &mut self.ports[g];
            port.queued_pkts -= 1;
            port.nic_bytes -= bytes as u64;
            self.inv.on_dropped(self.pool.get(id));
            self.counters.drop_pkts[DropCause::NicQdisc as usize] += 1;
            self.counters.drop_bytes[DropCause::NicQdisc as usize] += bytes as u64;
            if self.drop_log_on {
                // Host NIC `g` is host `g`'s port; its queue bytes are the NIC's.
                let qr = QueueRef { port: 0, queue: 0 };
                let r = drop_record(self.ev.now, self.pool.get(id), DropCause::NicQdisc, g as u32, true, qr, self.ports[g].nic_bytes, 0);
                self.drop_log.push(r);
            }
            self.pool.free(id);
        }
    }

    fn host_receive(&mut self, h: u32, id: u32) {
        let now = self.ev.now;
        let int = if self.pool.int_enabled() { self.pool.int(id).copied() } else { None };
        self.pool.free(id);
        // Read in place: freeing only lists the id, and nothing allocates a packet before the
        // transport has handled this one (the next `alloc` is in `emit`, below).
        let p = self.pool.get(id);
        let (size, pflags, fi) = (p.size_bytes as u64, p.flags, p.flow as usize);
        self.counters.delivered_pkts += 1;
        self.counters.delivered_bytes += size;
        self.inv.on_delivered(p);
        let is_data = pflags & flags::DATA != 0;
        if is_data {
            self.counters.delivered_data_pkts += 1;
        }
        if pflags & flags::CBR != 0 {
            self.cbrs[fi].delivered_bytes += size;
            return;
        }
        // A flow retires only with none of its packets left in the network.
        // SAFETY: a TCP packet's `flow` is its `TcpFlow`'s id, the index of a flow of the run
        // (`flow_start`); packets are made only by the transport and CBR sources (handled above).
        let s = unsafe { self.flows.slot_of_unchecked(fi) }.expect("a packet of an active flow");
        let alt = self.any_alt && self.workload_alt[self.flows.desc.workload[fi] as usize];
        let f = self.flows.at_mut(s);
        let cfg = if alt { &self.cfg_alt } else { &self.cfg };
        if h == f.dst {
            if f.on_receive(p, now, cfg, &mut self.out) {
                self.outstanding -= 1;
            }
            if let (Some(st), Some(slot)) = (int, self.delack_int.get_mut(s.index())) {
                if is_data {
                    *slot = st;
                }
            }
            self.emit(h, int.as_ref());
        } else {
            if cfg.roce {
                self.counters.roce_nacks += crate::transport::roce::is_nack(p) as u64;
                self.counters.roce_cnps += p.has(flags::ECE) as u64;
            }
            f.on_ack(p, int.as_ref(), now, cfg, &mut self.out);
            self.emit(h, None);
        }
        self.arm_timers(fi, s);
        self.flows.after_packet(fi, s, &self.pool);
    }

    // ---------------------------------------------------------------- timers & sources

    /// Schedule an event for each timer of flow `fi` (in slab slot `s`) that needs one. The
    /// caller has the slot already: no second id → slot lookup per packet.
    #[inline(always)]
    fn arm_timers(&mut self, fi: usize, s: Slot) {
        let f = self.flows.at_mut(s);
        for (t, k) in [(&mut f.rto, Kind::Rto), (&mut f.pace, Kind::Pace), (&mut f.delack, Kind::DelAck)] {
            if t.needs_event() {
                t.event_at = t.deadline;
                self.ev.at(t.deadline, k, fi as u32, 0);
            }
        }
    }

    fn timer_event(&mut self, fi: u32, which: TimerKind) {
        let now = self.ev.now;
        // A retired flow has no timer armed: its pending events are stale.
        let Some(s) = self.flows.slot_of(fi as usize) else { return };
        let alt = self.any_alt && self.workload_alt[self.flows.desc.workload[fi as usize] as usize];
        let f = self.flows.at_mut(s);
        let t: &mut Timer = match which {
            TimerKind::Rto => &mut f.rto,
            TimerKind::Pace => &mut f.pace,
            TimerKind::DelAck => &mut f.delack,
        };
        if t.event_at != now {
            return; // stale: a newer event for this timer is queued
        }
        t.event_at = 0;
        if !t.armed() {
            return;
        }
        if t.deadline > now {
            self.arm_timers(fi as usize, s);
            return;
        }
        let cfg = if alt { &self.cfg_alt } else { &self.cfg };
        match which {
            TimerKind::Rto => f.on_rto(now, cfg, &mut self.out),
            TimerKind::Pace => f.on_pace(now, cfg, &mut self.out),
            TimerKind::DelAck => f.on_delack(now, cfg, &mut self.out),
        }
        let (h, echo) = if matches!(which, TimerKind::DelAck) { (f.dst, self.delack_int.get(s.index()).copied()) } else { (f.src, None) };
        self.emit(h, echo.as_ref());
        self.arm_timers(fi as usize, s);
    }

    /// Flow `fi` starts: build its `TcpFlow` from its descriptor (cold until now) and a clone of
    /// its congestion-control prototype, in a free slab slot.
    fn flow_start(&mut self, fi: u32) {
        let now = self.ev.now;
        let i = fi as usize;
        let d = &self.flows.desc;
        let (src, dst) = (d.src[i], d.dst[i]);
        let (mss, hdr) = (self.cfg.mss_bytes, self.cfg.header_bytes);
        let path = self.topo.path_info(src, dst, mss + hdr, hdr);
        let cfg = if self.any_alt && self.workload_alt[d.workload[i] as usize] { &self.cfg_alt } else { &self.cfg };
        let mut flow = TcpFlow::new(fi, src, dst, d.size_bytes[i], d.start_ps[i], d.priority[i], d.handshake[i], path, cfg);
        if self.tcp_trace_on && !cfg.roce {
            let by_size = self.tcp_trace_min_size_bytes > 0 && d.size_bytes[i] >= self.tcp_trace_min_size_bytes;
            if by_size || self.tcp_trace_flows.binary_search(&fi).is_ok() {
                flow.trace = Some(Box::default());
            }
        }
        let cc = self.cc_protos[self.workload_cc[d.workload[i] as usize]].clone_flow();
        let s = self.flows.activate(i, flow);
        if self.delack_int_on {
            if s.index() == self.delack_int.len() {
                self.delack_int.push(IntStack::default());
            } else {
                self.delack_int[s.index()] = IntStack::default();
            }
        }
        let alt = self.any_alt && self.workload_alt[self.flows.desc.workload[i] as usize];
        let f = self.flows.at_mut(s);
        f.start(now, cc, if alt { &self.cfg_alt } else { &self.cfg }, &mut self.out);
        self.emit(src, None);
        self.arm_timers(fi as usize, s);
    }

    fn cbr_send(&mut self, i: u32) {
        let now = self.ev.now;
        let c = &mut self.cbrs[i as usize];
        let (p, next) = c.emit(now);
        let src = c.src;
        self.out.push(p);
        self.emit(src, None);
        match next {
            Some(t) => self.ev.at(t, Kind::CbrSend, i, 0),
            None => self.outstanding -= 1,
        }
    }

    fn bm_tick(&mut self, s: u32) {
        let now = self.ev.now;
        let draining = self.draining();
        let sw = &mut self.switches[s as usize];
        sw.bm.on_tick(&sw.buf, now);
        if !draining || sw.buf.occupied_bytes > 0 {
            let dt = sw.bm.tick_interval_ps().unwrap_or(0).max(1);
            self.ev.at(now + dt, Kind::BmTick, s, 0);
        }
    }

    fn sample_buffer(&mut self) {
        let now = self.ev.now;
        for (s, sw) in self.switches.iter().enumerate() {
            self.buf_time_ps.push(now);
            self.buf_switch.push(s as u16);
            self.buf_bytes.push(sw.buf.occupied_bytes);
        }
        self.check_at_sample();
        if self.keep_sampling() {
            self.ev.at(now + self.buffer_sample_ps, Kind::SampleBuffer, 0, 0);
        }
    }

    fn sample_queues(&mut self) {
        let now = self.ev.now;
        for (s, sw) in self.switches.iter().enumerate() {
            for port in 0..sw.buf.n_ports {
                for queue in 0..sw.buf.n_queues {
                    let bytes = sw.buf.queue_bytes[port * sw.buf.n_queues + queue];
                    self.queue_samples.push(QueueSample { time_ps: now, switch: s as u16, port: port as u16, queue: queue as u8, bytes });
                }
            }
        }
        self.check_at_sample();
        if self.keep_sampling() {
            self.ev.at(now + self.queue_sample_ps, Kind::SampleQueues, 0, 0);
        }
    }

    /// Every flow finished before the current event: `outstanding` only falls during a run,
    /// so this is "it was 0 after some earlier event" (the first event never drains), read by
    /// the periodic events, which do not change it. (Derived here, not flagged after every event.)
    #[inline]
    fn draining(&self) -> bool {
        self.outstanding == 0 && self.ev.processed() > 1
    }

    /// Periodic samples go on until every flow is done *and* the buffers are empty: a
    /// constant-rate flow that stopped sending may still have full queues to watch drain.
    fn keep_sampling(&self) -> bool {
        !self.draining() || self.switches.iter().any(|s| s.buf.occupied_bytes > 0)
    }

    // ---------------------------------------------------------------- results

    /// The links from host `src` to host `dst`, in order.
    fn path_hops(&self, src: u32, dst: u32) -> Vec<Hop> {
        self.topo.path_hops(src, dst)
    }

    fn output(&mut self, wall_s: f64, hit_max: bool) -> RunOutput {
        let mut o = RunOutput::default();
        let rate = self.topo.host_rate_bps;
        let n = self.flows.len();
        let d = &self.flows.desc;
        o.flow_ideal_ps = (0..n).map(|i| min_fct_ps(&self.path_hops(d.src[i], d.dst[i]), d.size_bytes[i], self.cfg.mss_bytes, self.cfg.header_bytes, d.handshake[i])).collect();
        o.flow_ideal_paper_ps = (0..n).map(|i| paper_ideal_fct_ps(self.topo.base_rtt_ps(d.src[i], d.dst[i]), d.size_bytes[i], rate)).collect();
        (o.flow_end_ps, o.flow_retransmits, o.flow_timeouts, o.flow_received) = self.flows.take_results();
        // The descriptor columns are the output columns.
        let d = std::mem::take(&mut self.flows.desc);
        (o.flow_src, o.flow_dst, o.flow_size, o.flow_start_ps, o.flow_prio, o.flow_workload, o.flow_query) = (d.src, d.dst, d.size_bytes, d.start_ps, d.priority, d.workload, d.query);
        let mut qend = vec![0u64; self.queries.len()];
        for (&q, &e) in o.flow_query.iter().zip(&o.flow_end_ps) {
            if q >= 0 {
                qend[q as usize] = qend[q as usize].max(e);
            }
        }
        for (q, d) in self.queries.iter().enumerate() {
            o.query_requester.push(d.requester);
            o.query_size.push(d.size_bytes);
            o.query_start_ps.push(d.start_ps);
            o.query_end_ps.push(qend[q]);
            o.query_workload.push(d.workload);
        }
        for c in &self.cbrs {
            o.cbr_src.push(c.src);
            o.cbr_dst.push(c.dst);
            o.cbr_sent_bytes.push(c.sent_bytes);
            o.cbr_delivered_bytes.push(c.delivered_bytes);
            o.cbr_workload.push(c.workload);
        }
        o.buf_time_ps = std::mem::take(&mut self.buf_time_ps);
        o.buf_switch = std::mem::take(&mut self.buf_switch);
        o.buf_bytes = std::mem::take(&mut self.buf_bytes);
        o.queue_samples = std::mem::take(&mut self.queue_samples);
        o.drops = self.drop_log_on.then(|| std::mem::take(&mut self.drop_log));
        o.tcp_trace = self.tcp_trace_on.then(|| self.flows.take_trace());
        o.workload_names = self.workload_names.clone();
        o.switch_names = self.topo.switch_names.clone();
        for (i, sw) in self.switches.iter_mut().enumerate() {
            if let Some(rows) = sw.bm.take_trace() {
                let all = o.lqd_trace.get_or_insert_with(Vec::new);
                all.extend(rows.into_iter().map(|r| bm::TraceRow { switch: i as u16, ..r }));
            }
            for (name, v) in sw.bm.stats() {
                match o.scheme_stats.iter_mut().find(|(n, _)| n == name) {
                    Some(e) => e.1 += v,
                    None => o.scheme_stats.push((name.to_string(), v)),
                }
            }
        }
        for sw in &self.switches {
            o.switch_buffer_bytes.push(sw.buf.total_bytes);
            o.switch_peak_bytes.push(sw.peak_occupancy_bytes);
            o.switch_final_bytes.push(sw.buf.occupied_bytes);
        }
        if self.pfc_on {
            o.pfc = Some(self.pfc_output());
        }
        o.counters = self.counters.clone();
        o.roce = self.cfg.roce || (self.any_alt && self.cfg_alt.roce);
        o.events = self.ev.processed();
        o.events_by_kind = self.events_by_kind;
        // `run` does not count Arrive events one by one: they are every other event popped.
        o.events_by_kind[Kind::Arrive as usize] = self.ev.processed() - self.events_by_kind.iter().sum::<u64>();
        o.end_ps = self.ev.now;
        o.in_flight_pkts = self.pool.in_use() as u64;
        o.in_flight_bytes = self.pool.in_use_bytes();
        o.pool_capacity_pkts = self.pool.capacity() as u64;
        o.wall_s = wall_s;
        o.hit_max_time = hit_max;
        o
    }
}

/// Append a switch port's INT record to data packet `id` as it leaves the port's queue at
/// `now`, if INT is on: `qlen_bytes` is its queue's length just after it left, `tx_bytes` the
/// port's txBytes (`switch.int_tx_bytes`: the bytes whose transmission started before `now`, or
/// those dequeued before this packet).
/// A `[output] drop_log` record of packet `p` dropped at `node` (a switch, or host `node`'s NIC
/// if `at_host`), queue `qr`.
#[allow(clippy::too_many_arguments)]
fn drop_record(now: Time, p: &Packet, cause: DropCause, node: u32, at_host: bool, qr: QueueRef, queue_bytes: u64, occupied_bytes: u64) -> DropRecord {
    DropRecord {
        time_ps: now,
        seq: p.seq,
        queue_bytes,
        occupied_bytes,
        node,
        flow: p.flow,
        size_bytes: p.size_bytes,
        port: qr.port as u16,
        queue: qr.queue as u8,
        flags: p.flags,
        cause: cause as u8,
        at_host,
    }
}

#[inline(always)]
fn stamp_int(pool: &mut PacketPool, id: u32, qlen_bytes: u64, rate_bps: u64, tx_bytes: u64, now: Time) {
    if let Some(st) = pool.int_mut(id) {
        let n = st.n as usize;
        if n < MAX_INT_HOPS {
            st.hops[n] = IntHop { qlen_bytes: qlen_bytes as u32, rate_bps, ts_ps: now, tx_bytes };
            st.n += 1;
        }
    }
}

/// The ABM family's schemes as ns3dc runs them (`GenQueueDisc`: DT, FAB, CS, IB, ABM), which
/// decide a packet at its arrival alone (no push-out, no drop at dequeue): the ones
/// `spine_buffer = "leaf_aliased"` can route to a leaf's pool.
const LEAF_ALIASED_SCHEMES: [&str; 5] = ["dt", "fab", "cs", "ib", "abm"];

/// `switch.spine_buffer`: None ("own"), or for "leaf_aliased" the leaf-spine's links per
/// leaf-spine pair (a spine's local port p leads to leaf p / links; the leaf's own port p is
/// the alias, a port every leaf has since it has at least `leaves · links` ports).
fn spine_alias_links(spec: &SimSpec) -> Result<Option<u32>, String> {
    let sw = &spec.switch;
    match sw.spine_buffer.as_str() {
        "own" => Ok(None),
        "leaf_aliased" => {
            let TopologySpec::LeafSpine { leaves, spines, servers_per_leaf, links_per_leaf_spine, .. } = spec.topology else {
                return Err("switch.spine_buffer = 'leaf_aliased': needs topology.kind = 'leaf_spine' (a spine's downlinks use the leaves' pools); allowed otherwise: 'own'".into());
            };
            if leaves * links_per_leaf_spine > servers_per_leaf + spines * links_per_leaf_spine {
                return Err(format!("switch.spine_buffer = 'leaf_aliased': a spine's {} ports outnumber a leaf's {} (each aliases the leaf's port of its index); allowed: 'own'", leaves * links_per_leaf_spine, servers_per_leaf + spines * links_per_leaf_spine));
            }
            if !LEAF_ALIASED_SCHEMES.contains(&sw.bm.scheme.as_str()) {
                return Err(format!("switch.spine_buffer = 'leaf_aliased': switch.bm.scheme = '{}' is not one of ns3dc's arrival-time schemes; allowed with: {}", sw.bm.scheme, LEAF_ALIASED_SCHEMES.join(", ")));
            }
            if sw.pfc.is_some() {
                return Err("switch.spine_buffer = 'leaf_aliased': not with switch.pfc (ns3dc's TCP fabric is lossy); allowed: 'own'".into());
            }
            Ok(Some(links_per_leaf_spine))
        }
        s => Err(format!("switch.spine_buffer = '{s}': allowed: own, leaf_aliased")),
    }
}

/// `int_stamp = "all"`: a packet that is not data (an ACK) gets this port's record after those
/// it echoes, if it echoes any (ns3dc: only a pure ACK of an INT flow carries a `FeedbackTag`).
#[cold]
#[inline(never)]
fn stamp_int_echo(pool: &mut PacketPool, id: u32, qlen_bytes: u64, rate_bps: u64, tx_bytes: u64, now: Time) {
    if pool.int(id).is_some_and(|st| st.n > 0) {
        stamp_int(pool, id, qlen_bytes, rate_bps, tx_bytes, now);
    }
}

#[derive(Clone, Copy)]
enum TimerKind {
    Rto,
    Pace,
    DelAck,
}

/// Debug fault hook (docs/reliability.md): the environment variable `SHAREBUF_DEBUG_FAULT`,
/// read once per run when the engine is built, makes the engine panic on purpose so that the
/// way a panic reaches the user can be tested on release builds: `panic_at_build` panics
/// right after the simulator is built, `panic_in_run` at the first progress report (after
/// 2^18 events, at the next event-queue window switch; not per packet) or at the end of a shorter run. Unset or any other value: no effect.
pub const FAULT_ENV: &str = "SHAREBUF_DEBUG_FAULT";

/// Parse a JSON spec, build and run it.
pub fn run_json(spec_json: &str, progress: &mut dyn FnMut(Time, u64) -> bool) -> Result<RunOutput, String> {
    let spec = SimSpec::from_json(spec_json)?;
    let mut sim = Simulator::new(&spec)?;
    match std::env::var(FAULT_ENV).as_deref() {
        Ok("panic_at_build") => panic!("{FAULT_ENV}=panic_at_build: deliberate panic after building the engine"),
        Ok("panic_in_run") => {
            let mut faulty = |_: Time, _: u64| -> bool { panic!("{FAULT_ENV}=panic_in_run: deliberate panic during the run") };
            let _ = sim.run(&mut faulty);
            panic!("{FAULT_ENV}=panic_in_run: deliberate panic at the end of a run too short for a progress report");
        }
        _ => {}
    }
    Ok(sim.run(progress))
}

impl Simulator {
    /// The PFC rows: every port that sent or received a frame (pauses still on at the end are
    /// counted as paused until the end).
    fn pfc_output(&mut self) -> crate::metrics::PfcOut {
        let now = self.ev.now;
        let mut out = crate::metrics::PfcOut { lossless_drops: self.lossless_drops, ..Default::default() };
        for (g, port) in self.ports.iter().enumerate() {
            self.pause_rx[g].close(port.paused, now);
            let rx = &self.pause_rx[g];
            let node = if port.is_host() { g as u32 } else { self.topo.switch_node(port.switch) };
            let mut row = crate::metrics::PfcPortRow { port: g as u32, node, local: port.local as u32, pauses_received: rx.pauses_received, resumes_received: rx.resumes_received, paused_ps: rx.paused_ps, ..Default::default() };
            if !port.is_host() {
                let pf = self.switches[port.switch as usize].pfc.as_ref().expect("PFC on");
                let l = port.local as usize;
                row.pauses_sent = pf.pauses_sent[l];
                row.resumes_sent = pf.resumes_sent[l];
                row.max_headroom_bytes = (0..8).map(|p| pf.max_hdrm_bytes[l * 8 + p]).max().unwrap_or(0);
                row.headroom_limit_bytes = pf.xoff_bytes[l];
            }
            if row.pauses_sent + row.pauses_received > 0 {
                out.ports.push(row);
            }
        }
        out.headroom_overflows = self.switches.iter().filter_map(|s| s.pfc.as_ref()).map(|p| p.headroom_overflows).sum();
        out
    }
}

/// For every port, the port of the same link in the other direction (PFC frames go back up
/// the link a packet arrived by). Parallel links between two nodes are paired in order.
fn link_reverse(topo: &Topology) -> Result<Vec<u32>, String> {
    let n = topo.ports.len();
    let mut owner = vec![u32::MAX; n];
    for h in 0..topo.n_hosts {
        owner[h as usize] = h;
    }
    for (s, gports) in topo.switch_ports.iter().enumerate() {
        for &g in gports {
            owner[g as usize] = topo.switch_node(s as u32);
        }
    }
    let mut by_link: std::collections::HashMap<(u32, u32), VecDeque<u32>> = std::collections::HashMap::new();
    for g in 0..n {
        by_link.entry((owner[g], topo.ports[g].peer)).or_default().push_back(g as u32);
    }
    let mut rev = vec![u32::MAX; n];
    for g in 0..n {
        let back = by_link.get_mut(&(topo.ports[g].peer, owner[g])).and_then(|q| q.pop_front());
        match back {
            Some(b) => rev[g] = b,
            None => return Err(format!("topology: port {g} (node {} -> {}) has no port in the other direction; PFC needs both directions of every link", owner[g], topo.ports[g].peer)),
        }
    }
    Ok(rev)
}

#[cfg(test)]
mod ecmp_flow_tests {
    use super::*;

    /// Wire bytes each port of switch `s` sent, in local port order.
    fn tx(sim: &Simulator, s: usize) -> Vec<u64> {
        sim.switches[s].ports.iter().map(|&g| sim.ports[g as usize].tx_bytes).collect()
    }

    /// `topology.ecmp_hash = "flow"`: one flow, host 0 (leaf 0) -> host 2 (leaf 1), on 2 leaves x 2
    /// servers, 2 spines x 4 links (8 uplinks per leaf, spine-major: local ports 2..9), data hash 13,
    /// reverse hash 6. By hand: data 13 % 8 = 5 -> leaf 0's port 2 + 5 = 7 (spine 1, link 1), then
    /// at spine 1 link 13 % 4 = 1 to leaf 1; ACKs 6 % 8 = 6 -> leaf 1's port 8 (spine 1, link 2),
    /// then link 6 % 4 = 2 to leaf 0. No other fabric port sends a byte.
    #[test]
    fn flow_hashes_pick_the_links_by_hand() {
        let v = serde_json::json!({
            "seed": 1, "max_ps": 10_000_000_000u64, "arrivals_until_ps": 10_000_000_000u64,
            "topology": {"kind": "leaf_spine", "leaves": 2, "spines": 2, "servers_per_leaf": 2, "links_per_leaf_spine": 4,
                         "host_link_bps": 10_000_000_000u64, "fabric_link_bps": 10_000_000_000u64, "link_delay_ps": 1_000_000, "ecmp_hash": "flow"},
            "switch": {"buffer_bytes": 1_000_000, "queues_per_port": 1, "scheduler": "rr", "bm": {"scheme": "cs", "params": {}}},
            "transport": {"cc": "dctcp", "mss_bytes": 1000, "header_bytes": 50, "init_cwnd_packets": 10, "min_rto_ps": 1_000_000_000u64,
                          "initial_rto_ps": 1_000_000_000u64, "handshake": false, "delayed_ack_packets": 1, "delayed_ack_timeout_ps": 1_000_000,
                          "ack_priority": 0, "unscheduled_bytes": 0, "unscheduled_acks": false, "max_rto_ps": 10_000_000_000u64},
            "workloads": [{"kind": "flows", "name": "one", "flows": [{"src": 0, "dst": 2, "size_bytes": 5000, "start_ps": 0, "priority": 0,
                                                                      "ecmp_hash": 13, "ecmp_hash_reverse": 6}]}],
            "output": {}
        });
        let spec: SimSpec = serde_json::from_value(v).unwrap();
        let mut sim = Simulator::new(&spec).unwrap();
        let out = sim.run(&mut |_, _| true);
        assert!(out.flow_end_ps[0] != u64::MAX, "the flow finishes");
        let data = 5 * 1050u64;
        let acks = 5 * 50u64;
        let (l0, l1) = (tx(&sim, 0), tx(&sim, 1));
        let mut want0 = vec![0u64; 10];
        want0[2 + 5] = data;
        want0[0] = acks; // ACKs down to host 0
        let mut want1 = vec![0u64; 10];
        want1[2 + 6] = acks;
        want1[0] = data; // data down to host 2 (leaf 1's first server)
        assert_eq!(l0, want0, "leaf 0");
        assert_eq!(l1, want1, "leaf 1");
        // Spine 1 (switch 3): 4 links to leaf 0, then 4 to leaf 1.
        let mut want_s1 = vec![0u64; 8];
        want_s1[4 + 1] = data;
        want_s1[2] = acks;
        assert_eq!(tx(&sim, 3), want_s1, "spine 1");
        assert_eq!(tx(&sim, 2), vec![0u64; 8], "spine 0 unused");
    }

    /// Without the columns the mode refuses the run, naming the flow and what is allowed.
    #[test]
    fn flow_mode_without_hashes_is_an_error() {
        let v = serde_json::json!({
            "seed": 1, "max_ps": 1_000_000_000u64, "arrivals_until_ps": 1_000_000_000u64,
            "topology": {"kind": "leaf_spine", "leaves": 2, "spines": 1, "servers_per_leaf": 2, "links_per_leaf_spine": 2,
                         "host_link_bps": 10_000_000_000u64, "fabric_link_bps": 10_000_000_000u64, "link_delay_ps": 1_000_000, "ecmp_hash": "flow"},
            "switch": {"buffer_bytes": 1_000_000, "queues_per_port": 1, "scheduler": "rr", "bm": {"scheme": "cs", "params": {}}},
            "transport": {"cc": "dctcp", "mss_bytes": 1000, "header_bytes": 50, "init_cwnd_packets": 10, "min_rto_ps": 1_000_000_000u64,
                          "initial_rto_ps": 1_000_000_000u64, "handshake": false, "delayed_ack_packets": 1, "delayed_ack_timeout_ps": 1_000_000,
                          "ack_priority": 0, "unscheduled_bytes": 0, "unscheduled_acks": false, "max_rto_ps": 10_000_000_000u64},
            "workloads": [{"kind": "flows", "name": "one", "flows": [{"src": 0, "dst": 2, "size_bytes": 5000, "start_ps": 0, "priority": 0}]}],
            "output": {}
        });
        let spec: SimSpec = serde_json::from_value(v).unwrap();
        let e = Simulator::new(&spec).err().expect("refused");
        assert!(e.contains("topology.ecmp_hash = 'flow': flow 0 (workload 'one', 0 -> 2) has no ecmp_hash"), "{e}");
    }
}

#[cfg(test)]
mod empty_poll_credit_tests {
    use super::*;

    /// A star switch, 8 round-robin queues, a 100-packet device FIFO, ABM (code preset) with
    /// `empty_poll_credit_bytes` = `credit`; one CBR source, host 1 -> host 0, priority 1, 10
    /// packets of 1,000 B at 5 Gbps (one per 1.6 µs, each serialized in 0.8 µs, so every packet
    /// finds port 0 idle and its device FIFO empty). Returns port 0's dequeue counts per queue.
    fn deq_counts(credit: u64) -> Vec<u64> {
        let v = serde_json::json!({
            "seed": 1, "max_ps": 1_000_000_000u64, "arrivals_until_ps": 1_000_000_000u64,
            "topology": {"kind": "star", "hosts": 2, "link_bps": 10_000_000_000u64, "link_delay_ps": 1_000_000},
            "switch": {"buffer_bytes": 1_000_000, "queues_per_port": 8, "scheduler": "rr", "device_queue_packets": 100,
                       "bm": {"scheme": "abm", "params": {"preset": "code", "alpha": 0.5, "empty_poll_credit_bytes": credit}}},
            "transport": {"cc": "newreno", "mss_bytes": 1448, "header_bytes": 54, "init_cwnd_packets": 10, "min_rto_ps": 1_000_000_000u64,
                          "initial_rto_ps": 1_000_000_000u64, "handshake": false, "delayed_ack_packets": 1, "delayed_ack_timeout_ps": 1_000_000,
                          "ack_priority": 0, "unscheduled_bytes": 0, "unscheduled_acks": false, "max_rto_ps": 10_000_000_000u64},
            "workloads": [{"kind": "cbr", "name": "cbr", "flows": [{"src": 1, "dst": 0, "rate_bps": 5_000_000_000u64, "start_ps": 0,
                                                                    "stop_ps": 16_000_000u64, "priority": 1, "packet_bytes": 1000}]}],
            "output": {}
        });
        let spec: SimSpec = serde_json::from_value(v).unwrap();
        let mut sim = Simulator::new(&spec).unwrap();
        sim.run(&mut |_, _| true);
        let sw = &sim.switches[0];
        let g = sw.ports[0] as usize;
        assert_eq!(sim.ports[g].tx_bytes, 10 * 1000, "10 packets of 1,000 B leave port 0");
        assert_eq!(sw.buf.deq_bytes[8..16], [0; 8], "port 1 (towards the sender) sends nothing");
        sw.buf.deq_bytes[0..8].to_vec()
    }

    /// By hand, as ns3dc's `GenQueueDisc::DoDequeue` under round robin: each arrival is enqueued
    /// and dequeued at once, the scan starting at the round robin's turn and crediting every empty
    /// queue it passes (the first packet: queue 0; each later one: queues 2..7 and 0, the turn
    /// being at 2 after a packet of queue 1); the device FIFO still has room, so the queue disc
    /// dequeues again, finds all 8 queues empty and credits each. With 10 packets and 1,472 B:
    /// queue 1 = 10 × 1,000 + 10 × 1,472; queue 0 = (1 + 10 + 9) × 1,472; queues 2..7 =
    /// (10 + 9) × 1,472. Without the credit only queue 1's own bytes count.
    #[test]
    fn empty_polls_credit_the_queues_ns3dc_scans() {
        let c = 1472u64;
        let mut want = vec![19 * c; 8];
        want[0] = 20 * c;
        want[1] = 10 * 1000 + 10 * c;
        assert_eq!(deq_counts(c), want);
        let mut plain = vec![0u64; 8];
        plain[1] = 10 * 1000;
        assert_eq!(deq_counts(0), plain);
    }
}
